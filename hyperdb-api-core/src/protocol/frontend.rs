//! Messages to the server: free functions that append one message to a
//! caller's buffer, so many messages leave in one write.
//!
//! Every function either appends a complete message or leaves the buffer
//! exactly as it was and returns a typed error: a NUL byte inside a string the
//! protocol NUL-terminates, a message over `i32::MAX` bytes, or a `CopyData`
//! over [`MAX_COPY_DATA`].

use bytes::{BufMut, BytesMut};

use crate::error::{Error, Result};

/// Protocol version 3.0.
pub const PROTOCOL_VERSION: i32 = 196_608;
/// The magic "version" of a CancelRequest.
pub const CANCEL_REQUEST_CODE: i32 = 80_877_102;
/// The "protocol version" that marks an `SSLRequest` (1234.5679).
pub const SSL_REQUEST_CODE: i32 = 80_877_103;

/// The largest `CopyData` payload (the bytes after the length word) hyperd
/// accepts: 150 MiB. Measured on hyperd 0.0.26963: one byte more and it
/// answers SQLSTATE 54000 "packet too large", then reads the rest of that
/// message as new messages, so the session is out of step for good (the
/// next request hangs). Other messages are not limited this way (a
/// 160 MiB `Bind` is read whole). Not a setting of hyperd's, so a constant.
pub const MAX_COPY_DATA: usize = 157_286_400;

/// Tag and length word of a message.
const HEADER: usize = 5;

/// Writes a message: optional tag, length placeholder, body, then patches the
/// length. On error the buffer is truncated back to where it started.
#[inline]
fn message(
    buf: &mut BytesMut,
    tag: Option<u8>,
    body: impl FnOnce(&mut BytesMut) -> Result<()>,
) -> Result<()> {
    let start = buf.len();
    if let Some(tag) = tag {
        buf.put_u8(tag);
    }
    let len_at = buf.len();
    buf.put_i32(0);
    if let Err(e) = body(buf) {
        buf.truncate(start);
        return Err(e);
    }
    let len = buf.len() - len_at;
    let Ok(len) = i32::try_from(len) else {
        buf.truncate(start);
        return Err(Error::invalid_input(format!(
            "message of {len} bytes exceeds the protocol maximum of {} bytes",
            i32::MAX
        )));
    };
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Refuses a string a message cannot carry (it ends at a NUL byte); `what`
/// names it in the error. For callers that wrap a caller's text in more
/// (a `COPY (...)`), so that the offset is the caller's.
pub fn check_cstr(s: &str, what: &str) -> Result<()> {
    match s.bytes().position(|b| b == 0) {
        Some(at) => Err(Error::invalid_input(format!(
            "{what} contains a NUL byte at offset {at}"
        ))),
        None => Ok(()),
    }
}

/// Appends a NUL-terminated string; `what` names it in the error.
fn cstr(buf: &mut BytesMut, s: &str, what: &str) -> Result<()> {
    check_cstr(s, what)?;
    buf.put_slice(s.as_bytes());
    buf.put_u8(0);
    Ok(())
}

fn count_i16(n: usize, what: &str) -> Result<i16> {
    i16::try_from(n).map_err(|_| {
        Error::invalid_input(format!(
            "{n} {what}: the protocol allows at most {}",
            i16::MAX
        ))
    })
}

/// `StartupMessage` with `user`, optional `database`, and extra parameters.
pub fn startup<'a>(
    buf: &mut BytesMut,
    user: &str,
    database: Option<&str>,
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<()> {
    message(buf, None, |buf| {
        buf.put_i32(PROTOCOL_VERSION);
        cstr(buf, "user", "parameter name")?;
        cstr(buf, user, "user name")?;
        if let Some(db) = database {
            cstr(buf, "database", "parameter name")?;
            cstr(buf, db, "database path")?;
        }
        for (k, v) in params {
            cstr(buf, k, "parameter name")?;
            cstr(buf, v, "parameter value")?;
        }
        buf.put_u8(0);
        Ok(())
    })
}

/// `CancelRequest`, sent alone on a fresh connection.
pub fn cancel_request(buf: &mut BytesMut, process_id: i32, secret_key: i32) {
    buf.put_i32(16);
    buf.put_i32(CANCEL_REQUEST_CODE);
    buf.put_i32(process_id);
    buf.put_i32(secret_key);
}

/// `SSLRequest`, the first message of a connection that wants TLS; the
/// server answers with one byte (see [`crate::protocol::ssl`]).
pub fn ssl_request(buf: &mut BytesMut) {
    buf.put_i32(8);
    buf.put_i32(SSL_REQUEST_CODE);
}

/// `PasswordMessage` carrying a cleartext or MD5 password.
pub fn password(buf: &mut BytesMut, password: &str) -> Result<()> {
    message(buf, Some(b'p'), |buf| cstr(buf, password, "password"))
}

/// `SASLInitialResponse`.
pub fn sasl_initial_response(buf: &mut BytesMut, mechanism: &str, data: &[u8]) -> Result<()> {
    message(buf, Some(b'p'), |buf| {
        cstr(buf, mechanism, "SASL mechanism")?;
        let len = i32::try_from(data.len())
            .map_err(|_| Error::invalid_input("SASL response too long"))?;
        buf.put_i32(len);
        buf.put_slice(data);
        Ok(())
    })
}

/// A `PasswordMessage`-framed body the caller already built: an MD5 or
/// cleartext password (with its NUL) or a `SASLResponse`.
pub fn password_message(buf: &mut BytesMut, body: &[u8]) -> Result<()> {
    message(buf, Some(b'p'), |buf| {
        buf.put_slice(body);
        Ok(())
    })
}

/// Simple `Query`.
pub fn query(buf: &mut BytesMut, sql: &str) -> Result<()> {
    message(buf, Some(b'Q'), |buf| cstr(buf, sql, "query text"))
}

/// `Parse`: `name` "" is the unnamed statement; `param_types` 0 lets the server infer.
pub fn parse(buf: &mut BytesMut, name: &str, sql: &str, param_types: &[u32]) -> Result<()> {
    message(buf, Some(b'P'), |buf| {
        cstr(buf, name, "statement name")?;
        cstr(buf, sql, "query text")?;
        buf.put_i16(count_i16(param_types.len(), "parameter types")?);
        for &oid in param_types {
            buf.put_u32(oid);
        }
        Ok(())
    })
}

/// One bound parameter value: already encoded, or NULL.
#[derive(Clone, Copy, Debug)]
pub enum BindParam<'a> {
    Null,
    Value(&'a [u8]),
}

/// `Bind`: `param_formats` / `result_formats` follow the protocol's rules
/// (empty = all text, one entry = applies to all).
pub fn bind<'a>(
    buf: &mut BytesMut,
    portal: &str,
    statement: &str,
    param_formats: &[i16],
    params: impl ExactSizeIterator<Item = BindParam<'a>>,
    result_formats: &[i16],
) -> Result<()> {
    message(buf, Some(b'B'), |buf| {
        cstr(buf, portal, "portal name")?;
        cstr(buf, statement, "statement name")?;
        buf.put_i16(count_i16(param_formats.len(), "parameter formats")?);
        for &f in param_formats {
            buf.put_i16(f);
        }
        buf.put_i16(count_i16(params.len(), "parameters")?);
        for p in params {
            match p {
                BindParam::Null => buf.put_i32(-1),
                BindParam::Value(v) => {
                    let len = i32::try_from(v.len()).map_err(|_| {
                        Error::invalid_input(format!("parameter of {} bytes is too long", v.len()))
                    })?;
                    buf.put_i32(len);
                    buf.put_slice(v);
                }
            }
        }
        buf.put_i16(count_i16(result_formats.len(), "result formats")?);
        for &f in result_formats {
            buf.put_i16(f);
        }
        Ok(())
    })
}

/// What `Describe` and `Close` refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Statement,
    Portal,
}

impl Target {
    fn byte(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }
}

/// `Describe` a statement or portal.
pub fn describe(buf: &mut BytesMut, target: Target, name: &str) -> Result<()> {
    message(buf, Some(b'D'), |buf| {
        buf.put_u8(target.byte());
        cstr(buf, name, "statement or portal name")
    })
}

/// `Execute` a portal; `max_rows` 0 = all rows.
pub fn execute(buf: &mut BytesMut, portal: &str, max_rows: i32) -> Result<()> {
    message(buf, Some(b'E'), |buf| {
        cstr(buf, portal, "portal name")?;
        buf.put_i32(max_rows);
        Ok(())
    })
}

/// `Close` a statement or portal.
pub fn close(buf: &mut BytesMut, target: Target, name: &str) -> Result<()> {
    message(buf, Some(b'C'), |buf| {
        buf.put_u8(target.byte());
        cstr(buf, name, "statement or portal name")
    })
}

/// `Sync`.
pub fn sync(buf: &mut BytesMut) {
    buf.put_slice(&[b'S', 0, 0, 0, 4]);
}

/// `Flush`.
pub fn flush(buf: &mut BytesMut) {
    buf.put_slice(&[b'H', 0, 0, 0, 4]);
}

/// `Terminate`.
pub fn terminate(buf: &mut BytesMut) {
    buf.put_slice(&[b'X', 0, 0, 0, 4]);
}

/// `CopyData` with `data` as payload; more than [`MAX_COPY_DATA`] bytes
/// are refused.
pub fn copy_data(buf: &mut BytesMut, data: &[u8]) -> Result<()> {
    check_copy_data(data.len())?;
    message(buf, Some(b'd'), |buf| {
        buf.put_slice(data);
        Ok(())
    })
}

/// Starts a `CopyData` message whose payload the caller appends directly to
/// `buf` (no intermediate copy); finish it with [`end_copy_data`].
pub fn begin_copy_data(buf: &mut BytesMut) -> usize {
    let start = buf.len();
    buf.put_u8(b'd');
    buf.put_i32(0);
    start
}

/// Patches the length of a `CopyData` begun at `start`. A payload over
/// [`MAX_COPY_DATA`] is refused and the message removed from `buf`.
pub fn end_copy_data(buf: &mut BytesMut, start: usize) -> Result<()> {
    let end = buf.len();
    patch_copy_data(buf, start, end).inspect_err(|_| buf.truncate(start))
}

/// Ends the `CopyData` begun at `start` at offset `at`, and begins a new
/// one there holding what followed `at` (moved up by the 5-byte header);
/// returns the new message's start, to be finished with [`end_copy_data`].
/// For a writer that finds the open message would grow past
/// [`MAX_COPY_DATA`] with what it appended last. On error `buf` is
/// unchanged.
pub fn split_copy_data(buf: &mut BytesMut, start: usize, at: usize) -> Result<usize> {
    let end = buf.len();
    if at < start + HEADER || at > end {
        return Err(Error::invalid_input(format!(
            "cannot split the CopyData at {start}..{end} at offset {at}"
        )));
    }
    patch_copy_data(buf, start, at)?;
    buf.put_bytes(0, HEADER);
    buf.copy_within(at..end, at + HEADER);
    buf[at] = b'd';
    buf[at + 1..at + HEADER].fill(0);
    Ok(at)
}

fn check_copy_data(payload: usize) -> Result<()> {
    if payload > MAX_COPY_DATA {
        return Err(Error::invalid_input(format!(
            "CopyData of {payload} bytes exceeds the {MAX_COPY_DATA} bytes hyperd accepts"
        )));
    }
    Ok(())
}

/// Writes the length word of the `CopyData` at `start..end`.
fn patch_copy_data(buf: &mut BytesMut, start: usize, end: usize) -> Result<()> {
    let payload = end - start - HEADER;
    check_copy_data(payload)?;
    // At most MAX_COPY_DATA + 4: fits.
    let len = (payload + 4) as i32;
    buf[start + 1..start + HEADER].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// `CopyDone`.
pub fn copy_done(buf: &mut BytesMut) {
    buf.put_slice(&[b'c', 0, 0, 0, 4]);
}

/// `CopyFail` with a reason the server puts in its error.
pub fn copy_fail(buf: &mut BytesMut, reason: &str) -> Result<()> {
    message(buf, Some(b'f'), |buf| {
        cstr(buf, reason, "COPY failure reason")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_layout() {
        let mut b = BytesMut::new();
        query(&mut b, "SELECT 1").unwrap();
        assert_eq!(&b[..], b"Q\0\0\0\x0dSELECT 1\0");
    }

    #[test]
    fn nul_is_rejected_and_buffer_untouched() {
        let mut b = BytesMut::new();
        sync(&mut b);
        let e = query(&mut b, "SELECT\0 1").unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("offset 6"), "{e}");
        assert_eq!(&b[..], &[b'S', 0, 0, 0, 4]);
        let e = startup(&mut b, "u", Some("d\0b"), []).unwrap_err();
        assert!(e.to_string().contains("database path"));
        let e = parse(&mut b, "s", "SELECT 1", &[]).and(parse(&mut b, "x\0", "q", &[]));
        assert!(e.is_err());
        assert_eq!(b.len(), 5 + 1 + 4 + 2 + 9 + 2);
    }

    #[test]
    fn ssl_request_layout() {
        let mut b = BytesMut::new();
        ssl_request(&mut b);
        assert_eq!(&b[..], &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
    }

    #[test]
    fn startup_layout() {
        let mut b = BytesMut::new();
        startup(&mut b, "u", Some("/x.hyper"), [("lc_time", "C")]).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&0i32.to_be_bytes());
        want.extend_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        want.extend_from_slice(b"user\0u\0database\0/x.hyper\0lc_time\0C\0\0");
        let len = want.len() as i32;
        want[..4].copy_from_slice(&len.to_be_bytes());
        assert_eq!(&b[..], &want[..]);
    }

    #[test]
    fn bind_layout_with_null() {
        let mut b = BytesMut::new();
        let params = [BindParam::Value(&[0, 0, 0, 7]), BindParam::Null];
        bind(&mut b, "", "", &[1], params.into_iter(), &[2]).unwrap();
        let body =
            b"\0\0\x00\x01\x00\x01\x00\x02\0\0\0\x04\0\0\0\x07\xff\xff\xff\xff\x00\x01\x00\x02";
        assert_eq!(b[0], b'B');
        assert_eq!(
            i32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize,
            body.len() + 4
        );
        assert_eq!(&b[5..], &body[..]);
    }

    #[test]
    fn cancel_request_layout() {
        let mut b = BytesMut::new();
        cancel_request(&mut b, 42, -7);
        assert_eq!(&b[..4], &16i32.to_be_bytes());
        assert_eq!(&b[4..8], &CANCEL_REQUEST_CODE.to_be_bytes());
        assert_eq!(&b[8..12], &42i32.to_be_bytes());
        assert_eq!(&b[12..16], &(-7i32).to_be_bytes());
    }

    #[test]
    fn copy_data_in_place() {
        let mut b = BytesMut::new();
        let at = begin_copy_data(&mut b);
        b.put_slice(b"abc");
        end_copy_data(&mut b, at).unwrap();
        assert_eq!(&b[..], b"d\0\0\0\x07abc");
        let mut c = BytesMut::new();
        copy_data(&mut c, b"abc").unwrap();
        assert_eq!(b, c);
    }

    /// hyperd's limit holds for every way a CopyData is written; a
    /// message refused leaves the buffer as it was (`end_copy_data`
    /// removes the message it was given).
    #[test]
    fn copy_data_over_the_limit_is_refused() {
        let mut b = BytesMut::from(&b"xy"[..]);
        let big = vec![7u8; MAX_COPY_DATA + 1];
        assert_eq!(
            copy_data(&mut b, &big).unwrap_err().kind(),
            crate::error::ErrorKind::InvalidInput
        );
        assert_eq!(&b[..], b"xy");
        copy_data(&mut b, &big[1..]).unwrap();
        assert_eq!(b.len(), 2 + HEADER + MAX_COPY_DATA);
        let mut b = BytesMut::from(&b"xy"[..]);
        let at = begin_copy_data(&mut b);
        b.put_slice(&big);
        assert!(end_copy_data(&mut b, at).is_err());
        assert_eq!(&b[..], b"xy");
    }

    #[test]
    fn copy_data_splits_in_place() {
        let mut b = BytesMut::from(&b"xy"[..]);
        let at = begin_copy_data(&mut b);
        b.put_slice(b"abcde");
        let second = split_copy_data(&mut b, at, at + HEADER + 2).unwrap();
        assert_eq!(second, at + HEADER + 2);
        end_copy_data(&mut b, second).unwrap();
        assert_eq!(&b[..], b"xyd\0\0\0\x06abd\0\0\0\x07cde");
        let len = b.len();
        assert!(split_copy_data(&mut b, second, second + 1).is_err());
        assert!(split_copy_data(&mut b, second, len + 1).is_err());
        assert_eq!(b.len(), len);
    }

    #[test]
    fn fixed_messages() {
        let mut b = BytesMut::new();
        flush(&mut b);
        terminate(&mut b);
        copy_done(&mut b);
        execute(&mut b, "", 0).unwrap();
        describe(&mut b, Target::Portal, "").unwrap();
        close(&mut b, Target::Statement, "s1").unwrap();
        copy_fail(&mut b, "boom").unwrap();
        password(&mut b, "pw").unwrap();
        sasl_initial_response(&mut b, "SCRAM-SHA-256", b"n,,n=,r=x").unwrap();
        password_message(&mut b, b"c=biws").unwrap();
        assert_eq!(&b[..15], b"H\0\0\0\x04X\0\0\0\x04c\0\0\0\x04");
        assert_eq!(&b[15..25], b"E\0\0\0\x09\0\0\0\0\0");
        assert_eq!(&b[25..32], b"D\0\0\0\x06P\0");
    }
}
