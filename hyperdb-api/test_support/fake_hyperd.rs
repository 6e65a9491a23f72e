//! A fake hyperd for the benches and the unit tests that need a server to
//! misbehave or to cost nothing: it speaks just enough of the protocol.
//! Included with `#[path]` by `benches/hot_paths.rs` and `src/rows`.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use bytes::{BufMut, BytesMut};

/// Appends one backend message.
pub fn message(out: &mut BytesMut, tag: u8, body: &[u8]) {
    out.put_u8(tag);
    out.put_i32(body.len() as i32 + 4);
    out.put_slice(body);
}

/// Appends `CommandComplete(tag)` and `ReadyForQuery` (idle).
pub fn complete_and_ready(out: &mut BytesMut, tag: &str) {
    message(out, b'C', format!("{tag}\0").as_bytes());
    message(out, b'Z', b"I");
}

/// Serves one connection: trusts it, then hands each frontend message
/// (tag, body) to `answer`, writing what it appends, until `Terminate`.
pub fn serve_session(
    mut s: UnixStream,
    mut answer: impl FnMut(u8, &[u8], &mut BytesMut),
) -> std::io::Result<()> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let mut startup = vec![0; i32::from_be_bytes(len) as usize - 4];
    s.read_exact(&mut startup)?;
    let mut out = BytesMut::new();
    message(&mut out, b'R', &0i32.to_be_bytes());
    message(&mut out, b'K', &[0, 0, 0, 1, 0, 0, 0, 2]);
    message(&mut out, b'Z', b"I");
    s.write_all(&out)?;
    let mut header = [0u8; 5];
    loop {
        s.read_exact(&mut header)?;
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        let mut body = vec![0; len as usize - 4];
        s.read_exact(&mut body)?;
        if header[0] == b'X' {
            return Ok(());
        }
        out.clear();
        answer(header[0], &body, &mut out);
        s.write_all(&out)?;
    }
}
