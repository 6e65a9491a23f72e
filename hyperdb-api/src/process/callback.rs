//! The callback connection: how hyperd tells us where it listens, and how it
//! learns that we are gone.
//!
//! We listen on 127.0.0.1 and pass `--callback-connection tab.tcp://...`.
//! Once hyperd listens it connects back and writes its listen descriptor as
//! one message: a 1-byte length, then that many bytes of ASCII, the last of
//! which is a NUL terminator (measured on hyperd 0.0.26963:
//! `\x1atab.tcp://127.0.0.1:42863\0`, 0x1a = 26 = 25 characters + NUL). With
//! port 0 the descriptor carries the port hyperd actually bound; a Unix
//! descriptor comes back as given (`tab.domain://DIR/domain/NAME`).
//!
//! When `--listen-connection` lists several descriptors, hyperd still sends
//! one message, with one of them (the TCP one, measured with `tcp,domain` and
//! `domain,tcp`), although it listens on all. That is why
//! [`HyperProcess`](super::HyperProcess) starts one PostgreSQL-protocol
//! listener per process; a gRPC listener beside it is never the one
//! reported, and its port is read from hyperd's output (`grpc_listen.rs`).
//!
//! hyperd then keeps the connection open and shuts down as soon as it reads
//! EOF on it (measured: ~15 ms). Because the kernel closes our end when our
//! process dies for any reason, SIGKILL included, this is what guarantees
//! that no orphan server is left behind.

use std::io::{self, Read};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often to check whether hyperd is still alive while waiting for it.
const POLL: Duration = Duration::from_millis(5);

/// Why waiting for the callback failed.
#[derive(Debug)]
pub(super) enum WaitError {
    /// hyperd exited before connecting back.
    Exited(ExitStatus),
    /// hyperd neither connected back nor exited in time.
    TimedOut,
    /// hyperd connected but sent something we could not read.
    Io(io::Error),
}

/// A listener for hyperd's callback, bound before hyperd is spawned so the
/// port is known for its command line.
#[derive(Debug)]
pub(super) struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    pub(super) fn bind() -> io::Result<CallbackListener> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        // Non-blocking so that waiting can also watch the child: a hyperd that
        // dies on a bad setting must fail fast, not after the full timeout.
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(CallbackListener { listener, port })
    }

    /// The value for `--callback-connection`.
    pub(super) fn descriptor(&self) -> String {
        format!("tab.tcp://127.0.0.1:{}", self.port)
    }

    /// Waits for `child` to connect back and report its descriptor. Returns
    /// the open connection (which must stay open for the server's lifetime)
    /// and the descriptor.
    pub(super) fn accept(
        self,
        child: &mut Child,
        timeout: Duration,
    ) -> Result<(TcpStream, String), WaitError> {
        let deadline = Instant::now() + timeout;
        let mut stream = loop {
            match self.listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(WaitError::Io(e)),
            }
            if let Some(status) = child.try_wait().map_err(WaitError::Io)? {
                return Err(WaitError::Exited(status));
            }
            if Instant::now() >= deadline {
                return Err(WaitError::TimedOut);
            }
            std::thread::sleep(POLL);
        };
        stream.set_nonblocking(false).map_err(WaitError::Io)?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        stream
            .set_read_timeout(Some(remaining.max(Duration::from_secs(1))))
            .map_err(WaitError::Io)?;
        let descriptor = read_descriptor(&mut stream).map_err(WaitError::Io)?;
        // Later reads are never made; the timeout must not linger regardless.
        stream.set_read_timeout(None).map_err(WaitError::Io)?;
        Ok((stream, descriptor))
    }
}

/// Reads one length-prefixed descriptor and strips the NUL terminator.
pub(super) fn read_descriptor(r: &mut impl Read) -> io::Result<String> {
    let mut len = [0u8; 1];
    r.read_exact(&mut len)?;
    let mut buf = vec![0u8; usize::from(len[0])];
    r.read_exact(&mut buf)?;
    while buf.last() == Some(&0) {
        buf.pop();
    }
    if buf.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "hyperd sent an empty listen descriptor",
        ));
    }
    String::from_utf8(buf).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "hyperd sent a listen descriptor that is not UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_measured_message() {
        let msg = b"\x1atab.tcp://127.0.0.1:42863\0";
        assert_eq!(
            read_descriptor(&mut &msg[..]).expect("read"),
            "tab.tcp://127.0.0.1:42863"
        );
    }

    #[test]
    fn tolerates_a_missing_terminator() {
        let msg = b"\x05a:123rest";
        assert_eq!(read_descriptor(&mut &msg[..]).expect("read"), "a:123");
    }

    #[test]
    fn short_or_empty_messages_fail() {
        assert_eq!(
            read_descriptor(&mut &b"\x10tab"[..])
                .expect_err("short")
                .kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert_eq!(
            read_descriptor(&mut &b"\x01\0"[..])
                .expect_err("empty")
                .kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(
            read_descriptor(&mut &b""[..]).expect_err("none").kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
