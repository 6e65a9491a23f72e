//! A fake hyperd for the benches and the tests that need a server to
//! misbehave or to cost nothing: it speaks just enough of the protocol.
//! Included with `#[path]` by `benches/hot_paths.rs`, `src/rows` and
//! `tests/fake_server.rs`, over a Unix socket or TCP.

#![allow(dead_code)]

use std::io::{self, Read, Write};

use bytes::{BufMut, BytesMut};

/// The backend key [`serve_session`] hands out.
pub const BACKEND_KEY: (i32, i32) = (1, 2);

/// Appends one backend message.
pub fn message(out: &mut BytesMut, tag: u8, body: &[u8]) {
    out.put_u8(tag);
    out.put_i32(body.len() as i32 + 4);
    out.put_slice(body);
}

/// Appends `CopyInResponse` for a table of `columns` columns: text
/// format overall and per column, as hyperd answers a COPY naming no
/// columns (an inserter compares the count with its definition's).
pub fn copy_in_response(out: &mut BytesMut, columns: u16) {
    let mut body = vec![0u8];
    body.extend_from_slice(&columns.to_be_bytes());
    body.resize(body.len() + 2 * usize::from(columns), 0);
    message(out, b'G', &body);
}

/// Appends `CommandComplete(tag)` and `ReadyForQuery` (idle).
pub fn complete_and_ready(out: &mut BytesMut, tag: &str) {
    message(out, b'C', format!("{tag}\0").as_bytes());
    message(out, b'Z', b"I");
}

/// Appends what ends a startup: `AuthenticationOk`, `BackendKeyData`
/// with `key`, and `ReadyForQuery` (idle).
pub fn accept_login(out: &mut BytesMut, key: (i32, i32)) {
    message(out, b'R', &0i32.to_be_bytes());
    let mut body = key.0.to_be_bytes().to_vec();
    body.extend_from_slice(&key.1.to_be_bytes());
    message(out, b'K', &body);
    message(out, b'Z', b"I");
}

/// Reads the startup message (a length word, then the rest). An
/// `SSLRequest` before it (a client whose `SslMode` asks, e.g. `Prefer` on
/// an endpoint off the loopback) is answered `N`, as a server without TLS
/// does.
pub fn read_startup(s: &mut (impl Read + Write)) -> io::Result<Vec<u8>> {
    loop {
        let mut len = [0u8; 4];
        s.read_exact(&mut len)?;
        let mut startup = vec![0; i32::from_be_bytes(len) as usize - 4];
        s.read_exact(&mut startup)?;
        if startup == SSL_REQUEST_CODE.to_be_bytes() {
            s.write_all(b"N")?;
            continue;
        }
        return Ok(startup);
    }
}

/// The protocol code of `SSLRequest` (1234 << 16 | 5679).
const SSL_REQUEST_CODE: i32 = 80_877_103;

/// Reads one frontend message as (tag, body); `None` when the client
/// closed the connection instead.
pub fn read_message(s: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut header = [0u8; 5];
    match s.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    let mut body = vec![0; len as usize - 4];
    s.read_exact(&mut body)?;
    Ok(Some((header[0], body)))
}

/// Serves one connection: trusts it, then hands each frontend message
/// (tag, body) to `answer`, writing what it appends, until `Terminate`.
pub fn serve_session(
    s: impl Read + Write,
    answer: impl FnMut(u8, &[u8], &mut BytesMut),
) -> io::Result<()> {
    serve_session_with_key(s, BACKEND_KEY, answer)
}

/// [`serve_session`], handing out `key` as the backend key.
pub fn serve_session_with_key(
    mut s: impl Read + Write,
    key: (i32, i32),
    answer: impl FnMut(u8, &[u8], &mut BytesMut),
) -> io::Result<()> {
    read_startup(&mut s)?;
    let mut out = BytesMut::new();
    accept_login(&mut out, key);
    s.write_all(&out)?;
    serve_requests(s, answer)
}

/// Hands each frontend message to `answer`, writing what it appends,
/// until `Terminate` (or the client closes).
pub fn serve_requests(
    mut s: impl Read + Write,
    mut answer: impl FnMut(u8, &[u8], &mut BytesMut),
) -> io::Result<()> {
    let mut out = BytesMut::new();
    while let Some((tag, body)) = read_message(&mut s)? {
        if tag == b'X' {
            return Ok(());
        }
        out.clear();
        answer(tag, &body, &mut out);
        s.write_all(&out)?;
    }
    Ok(())
}

/// Appends a RowDescription of `fields` (name, type OID, type length),
/// every column in HyperBinary (format 2), as hyperd describes them.
pub fn row_description(out: &mut BytesMut, fields: &[(&str, u32, i16)]) {
    let mut desc = BytesMut::new();
    desc.put_i16(i16::try_from(fields.len()).expect("column count"));
    for &(name, oid, len) in fields {
        desc.put_slice(name.as_bytes());
        desc.put_u8(0);
        desc.put_i32(0);
        desc.put_i16(0);
        desc.put_u32(oid);
        desc.put_i16(len);
        desc.put_i32(-1);
        desc.put_i16(2);
    }
    message(out, b'T', &desc);
}

/// Whether a query is the lookup an inserter checks its definition with
/// (the Arrow schema of `SELECT * FROM t LIMIT 0`).
pub fn is_catalog_query(body: &[u8]) -> bool {
    // The COPY puts its closing parenthesis on a line of its own.
    const LOOKUP: &[u8] = b"LIMIT 0\n) TO STDOUT";
    body.windows(LOOKUP.len()).any(|w| w == LOOKUP)
}
