//! TLS over a std TCP socket: the `SSLRequest` exchange, the handshake,
//! and the stream the sync driver reads and writes.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use super::session::{Plaintext, TlsSession};
use crate::client::config::Config;
use crate::client::socket::Socket;
use crate::client::TlsInfo;
use crate::error::{Error, Result};
use crate::protocol::frontend;
use crate::protocol::ssl::{SslAnswer, SslMode};

/// A TLS connection over TCP.
#[derive(Debug)]
pub struct TlsStream {
    tcp: TcpStream,
    session: TlsSession,
}

/// Sends `SSLRequest` on `tcp` and, if the server agrees, runs the TLS
/// handshake `mode` calls for, all before `deadline`. A server without
/// TLS leaves a plain socket under `Prefer` and an error otherwise.
pub(crate) fn negotiate(
    mut tcp: TcpStream,
    config: &Config,
    mode: SslMode,
    deadline: Option<Instant>,
) -> Result<Socket> {
    let endpoint = &config.endpoint;
    let tls = super::client_config(config)?;
    let name = super::server_name(config)?;
    let timeout = deadline.map(|d| {
        d.saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    });
    let set_timeouts = |tcp: &TcpStream, t: Option<Duration>| {
        tcp.set_read_timeout(t)
            .and_then(|()| tcp.set_write_timeout(t))
            .map_err(|e| Error::io(format!("setting timeouts on {endpoint}"), e))
    };
    set_timeouts(&tcp, timeout)?;

    let mut request = BytesMut::with_capacity(8);
    frontend::ssl_request(&mut request);
    tcp.write_all(&request)
        .map_err(|e| Error::io(format!("sending SSLRequest to {endpoint}"), e))?;
    // Exactly one byte: see `SslAnswer::parse`.
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer)
        .map_err(|e| super::answer_error(endpoint, e))?;
    if !mode.on_answer(SslAnswer::parse(answer[0])?)? {
        set_timeouts(&tcp, None)?;
        return Ok(Socket::Tcp(tcp));
    }

    let session = TlsSession::new(tls, name, config.socket.read_window)
        .map_err(|e| super::handshake_error(config, mode, e))?;
    let stream = handshake(tcp, session).map_err(|e| super::handshake_failure(config, mode, e))?;
    set_timeouts(&stream.tcp, None)?;
    Ok(Socket::Tls(Box::new(stream)))
}

fn handshake(mut tcp: TcpStream, mut session: TlsSession) -> io::Result<TlsStream> {
    loop {
        send_pending(&mut tcp, &mut session)?;
        if session.advance_handshake()? {
            send_pending(&mut tcp, &mut session)?;
            return Ok(TlsStream { tcp, session });
        }
        let n = read_retrying(&mut tcp, session.recv_buf())?;
        session.received(n);
        if n == 0 {
            return Err(super::closed_in_handshake());
        }
    }
}

fn read_retrying(tcp: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match tcp.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            res => return res,
        }
    }
}

/// Writes the session's queued ciphertext; on error what is left stays
/// queued for the next call.
fn send_pending(tcp: &mut TcpStream, session: &mut TlsSession) -> io::Result<()> {
    while !session.pending().is_empty() {
        match tcp.write(session.pending()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => session.sent(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl TlsStream {
    /// Appends at most `window` decrypted bytes to `buf`; 0 means EOF.
    pub(crate) fn read_into(&mut self, buf: &mut BytesMut, window: usize) -> io::Result<usize> {
        loop {
            match self
                .session
                .read_plaintext(window, |b| buf.extend_from_slice(b))?
            {
                Plaintext::Data(n) => return Ok(n),
                Plaintext::Eof => return Ok(0),
                Plaintext::NeedInput => {
                    let n = read_retrying(&mut self.tcp, self.session.recv_buf())?;
                    self.session.received(n);
                }
            }
        }
    }

    pub(crate) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    pub(crate) fn info(&self) -> TlsInfo {
        self.session.info()
    }
}

/// `write` encrypts everything it is given and sends what the socket
/// takes; `flush` sends the rest (the sync driver flushes after every
/// batch, under its write deadline).
impl Write for TlsStream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        // Earlier records first; a timeout here has taken none of `data`.
        send_pending(&mut self.tcp, &mut self.session)?;
        self.session.encrypt(data)?;
        // A failure now is met again, and reported, by `flush`.
        let _ = send_pending(&mut self.tcp, &mut self.session);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        send_pending(&mut self.tcp, &mut self.session)
    }
}
