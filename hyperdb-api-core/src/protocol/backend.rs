//! Messages from the server, parsed from a `BytesMut` without copying row data.
//!
//! [`parse`] takes one complete message off the front of the buffer, or
//! returns `Ok(None)` when the buffer holds only part of one. Row and COPY
//! payloads keep a [`Bytes`] slice of the receive buffer and decode lazily.
//!
//! A broken or hostile server cannot make the client panic or allocate by a
//! declared length alone: lengths below 4 are rejected, control messages are
//! capped at [`Limits::max_control_message`] and data messages at
//! [`Limits::max_data_message`]; the caller grows its buffer only as bytes
//! arrive.

use bytes::{Buf, Bytes, BytesMut};

use crate::error::{DbError, Error, Result, Severity, SqlState};
use crate::protocol::Limits;

mod row_block;
pub use row_block::{FieldSpan, RowBlock, RowFields};

/// Transaction state reported by `ReadyForQuery`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Not in a transaction block.
    Idle,
    /// In a transaction block.
    InTransaction,
    /// In a failed transaction block; commands are refused until rollback.
    Failed,
}

/// An `Authentication*` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authentication {
    Ok,
    CleartextPassword,
    Md5Password {
        salt: [u8; 4],
    },
    Sasl {
        mechanisms: Vec<String>,
    },
    SaslContinue(Bytes),
    SaslFinal(Bytes),
    /// A method this client does not implement (Kerberos, GSS, SSPI, ...).
    Unsupported(u32),
}

/// One column of a `RowDescription`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDescription {
    pub name: String,
    pub table_oid: u32,
    pub column_id: i16,
    pub type_oid: u32,
    pub type_size: i16,
    pub type_modifier: i32,
    pub format: i16,
}

/// Overall and per-column formats of a COPY response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyResponse {
    pub format: u8,
    pub column_formats: Vec<i16>,
}

/// A message from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    Authentication(Authentication),
    BackendKeyData {
        process_id: i32,
        secret_key: i32,
    },
    ParseComplete,
    BindComplete,
    CloseComplete,
    NoData,
    PortalSuspended,
    EmptyQueryResponse,
    /// The command tag, e.g. `INSERT 0 5`.
    CommandComplete(String),
    CopyInResponse(CopyResponse),
    CopyOutResponse(CopyResponse),
    CopyBothResponse(CopyResponse),
    CopyData(Bytes),
    CopyDone,
    /// Every complete `DataRow` that was at the front of the buffer.
    DataRows(RowBlock),
    // Boxed: DbError is large, and Message moves by value.
    ErrorResponse(Box<DbError>),
    NoticeResponse(Box<DbError>),
    NotificationResponse {
        process_id: i32,
        channel: String,
        payload: String,
    },
    ParameterDescription(Vec<u32>),
    ParameterStatus {
        name: String,
        value: String,
    },
    ReadyForQuery(TransactionStatus),
    RowDescription(Vec<FieldDescription>),
    NegotiateProtocolVersion {
        newest_minor: i32,
        unrecognized: Vec<String>,
    },
}

pub(crate) const HEADER: usize = 5;

/// The tag and total body length of the message at the front of `buf`, if
/// its header is complete. Validates the length against `limits`.
#[inline]
pub fn peek_header(buf: &[u8], limits: &Limits) -> Result<Option<(u8, usize)>> {
    let Some(header) = buf.first_chunk::<HEADER>() else {
        return Ok(None);
    };
    let tag = header[0];
    let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    if len < 4 {
        return Err(Error::protocol(format!(
            "message '{}' declares length {len} (< 4)",
            tag.escape_ascii()
        )));
    }
    let body = len as usize - 4;
    let cap = if is_data_tag(tag) {
        limits.max_data_message
    } else {
        limits.max_control_message
    };
    if body > cap {
        return Err(Error::protocol(format!(
            "message '{}' declares {body} bytes, over the {cap}-byte limit",
            tag.escape_ascii()
        )));
    }
    Ok(Some((tag, body)))
}

fn is_data_tag(tag: u8) -> bool {
    matches!(tag, b'D' | b'd')
}

/// Takes one complete message off the front of `buf`; `Ok(None)` means more
/// bytes are needed. Any error means the stream is unusable.
#[inline]
pub fn parse(buf: &mut BytesMut, limits: &Limits) -> Result<Option<Message>> {
    let Some((tag, len)) = peek_header(buf, limits)? else {
        return Ok(None);
    };
    if buf.len() < HEADER + len {
        return Ok(None);
    }
    // Rows are nearly every message of a result: a block at a time.
    if tag == b'D' {
        return row_block::take(buf, limits).map(|rows| Some(Message::DataRows(rows)));
    }
    buf.advance(HEADER);
    let body = buf.split_to(len).freeze();
    decode(tag, body).map(Some)
}

/// Decodes a message body (not a `DataRow`) whose tag and length were read.
fn decode(tag: u8, body: Bytes) -> Result<Message> {
    let mut r = Reader { buf: body, tag };
    let msg = match tag {
        b'd' => return Ok(Message::CopyData(r.buf)),
        b'R' => Message::Authentication(r.authentication()?),
        b'K' => Message::BackendKeyData {
            process_id: r.i32()?,
            secret_key: r.i32()?,
        },
        b'1' => Message::ParseComplete,
        b'2' => Message::BindComplete,
        b'3' => Message::CloseComplete,
        b'n' => Message::NoData,
        b's' => Message::PortalSuspended,
        b'I' => Message::EmptyQueryResponse,
        b'c' => Message::CopyDone,
        b'C' => Message::CommandComplete(r.cstr()?),
        b'G' => Message::CopyInResponse(r.copy_response()?),
        b'H' => Message::CopyOutResponse(r.copy_response()?),
        b'W' => Message::CopyBothResponse(r.copy_response()?),
        b'E' => Message::ErrorResponse(Box::new(r.error_fields()?)),
        b'N' => Message::NoticeResponse(Box::new(r.error_fields()?)),
        b'A' => Message::NotificationResponse {
            process_id: r.i32()?,
            channel: r.cstr()?,
            payload: r.cstr()?,
        },
        b't' => {
            let n = r.u16()? as usize;
            let mut oids = Vec::with_capacity(n.min(r.buf.len() / 4));
            for _ in 0..n {
                oids.push(r.i32()? as u32);
            }
            Message::ParameterDescription(oids)
        }
        b'S' => Message::ParameterStatus {
            name: r.cstr()?,
            value: r.cstr()?,
        },
        b'Z' => Message::ReadyForQuery(match r.u8()? {
            b'I' => TransactionStatus::Idle,
            b'T' => TransactionStatus::InTransaction,
            b'E' => TransactionStatus::Failed,
            other => {
                return Err(Error::protocol(format!(
                    "ReadyForQuery with unknown status '{}'",
                    other.escape_ascii()
                )))
            }
        }),
        b'T' => Message::RowDescription(r.row_description()?),
        b'v' => {
            let newest_minor = r.i32()?;
            let n = r.i32()?.max(0) as usize;
            let mut unrecognized = Vec::with_capacity(n.min(64));
            for _ in 0..n {
                unrecognized.push(r.cstr()?);
            }
            Message::NegotiateProtocolVersion {
                newest_minor,
                unrecognized,
            }
        }
        other => {
            return Err(Error::protocol(format!(
                "unknown message tag '{}'",
                other.escape_ascii()
            )))
        }
    };
    if !r.buf.is_empty() {
        return Err(Error::protocol(format!(
            "message '{}' has {} trailing bytes",
            tag.escape_ascii(),
            r.buf.len()
        )));
    }
    Ok(msg)
}

/// Bounds-checked reads from a message body.
struct Reader {
    buf: Bytes,
    tag: u8,
}

impl Reader {
    fn truncated(&self) -> Error {
        Error::protocol(format!(
            "message '{}' is truncated",
            self.tag.escape_ascii()
        ))
    }

    fn u8(&mut self) -> Result<u8> {
        if self.buf.is_empty() {
            return Err(self.truncated());
        }
        Ok(self.buf.get_u8())
    }

    fn u16(&mut self) -> Result<u16> {
        if self.buf.len() < 2 {
            return Err(self.truncated());
        }
        Ok(self.buf.get_u16())
    }

    fn i16(&mut self) -> Result<i16> {
        Ok(self.u16()? as i16)
    }

    fn i32(&mut self) -> Result<i32> {
        if self.buf.len() < 4 {
            return Err(self.truncated());
        }
        Ok(self.buf.get_i32())
    }

    fn cstr(&mut self) -> Result<String> {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.truncated())?;
        let s = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        self.buf.advance(end + 1);
        Ok(s)
    }

    fn authentication(&mut self) -> Result<Authentication> {
        Ok(match self.i32()? {
            0 => Authentication::Ok,
            3 => Authentication::CleartextPassword,
            5 => {
                if self.buf.len() < 4 {
                    return Err(self.truncated());
                }
                let mut salt = [0u8; 4];
                self.buf.copy_to_slice(&mut salt);
                Authentication::Md5Password { salt }
            }
            10 => {
                let mut mechanisms = Vec::new();
                loop {
                    let m = self.cstr()?;
                    if m.is_empty() {
                        break;
                    }
                    mechanisms.push(m);
                }
                Authentication::Sasl { mechanisms }
            }
            11 => Authentication::SaslContinue(self.buf.split_off(0)),
            12 => Authentication::SaslFinal(self.buf.split_off(0)),
            other => {
                self.buf.clear();
                Authentication::Unsupported(other as u32)
            }
        })
    }

    fn copy_response(&mut self) -> Result<CopyResponse> {
        let format = self.u8()?;
        let n = self.u16()? as usize;
        let mut column_formats = Vec::with_capacity(n.min(self.buf.len() / 2));
        for _ in 0..n {
            column_formats.push(self.i16()?);
        }
        Ok(CopyResponse {
            format,
            column_formats,
        })
    }

    fn row_description(&mut self) -> Result<Vec<FieldDescription>> {
        let n = self.u16()? as usize;
        // Each field takes at least 19 bytes; never trust n alone.
        let mut fields = Vec::with_capacity(n.min(self.buf.len() / 19));
        for _ in 0..n {
            fields.push(FieldDescription {
                name: self.cstr()?,
                table_oid: self.i32()? as u32,
                column_id: self.i16()?,
                type_oid: self.i32()? as u32,
                type_size: self.i16()?,
                type_modifier: self.i32()?,
                format: self.i16()?,
            });
        }
        Ok(fields)
    }

    fn error_fields(&mut self) -> Result<DbError> {
        let mut e = DbError::new(None, "");
        e.severity = None;
        loop {
            let code = self.u8()?;
            if code == 0 {
                break;
            }
            let value = self.cstr()?;
            match code {
                // 'V' is the non-localized severity; prefer it over 'S'.
                b'V' => e.severity = Severity::parse(&value).or(e.severity),
                b'S' if e.severity.is_none() => e.severity = Severity::parse(&value),
                b'C' => e.code = SqlState::from_code(&value),
                b'M' => e.message = value,
                b'D' => e.detail = Some(value),
                b'H' => e.hint = Some(value),
                b'P' => e.position = value.parse().ok(),
                b'p' => e.internal_position = value.parse().ok(),
                b'q' => e.internal_query = Some(value),
                b'W' => e.context = Some(value),
                b's' => e.schema = Some(value),
                b't' => e.table = Some(value),
                b'c' => e.column = Some(value),
                b'd' => e.data_type = Some(value),
                b'n' => e.constraint = Some(value),
                b'F' => e.file = Some(value),
                b'L' => e.line = value.parse().ok(),
                b'R' => e.routine = Some(value),
                _ => {}
            }
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests;
