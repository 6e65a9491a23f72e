//! TLS over a tokio TCP socket: [`super::stream`] for the async driver,
//! around the same [`TlsSession`].

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use super::session::{Plaintext, TlsSession};
use crate::client::config::Config;
use crate::client::tokio_socket::AsyncSocket;
use crate::client::TlsInfo;
use crate::error::{Error, Result};
use crate::protocol::frontend;
use crate::protocol::ssl::{SslAnswer, SslMode};

/// A TLS connection over tokio TCP.
#[derive(Debug)]
pub struct AsyncTlsStream {
    tcp: TcpStream,
    session: TlsSession,
}

/// [`super::negotiate`] for tokio; the caller bounds it with the connect
/// timeout.
pub(crate) async fn negotiate_async(
    mut tcp: TcpStream,
    config: &Config,
    mode: SslMode,
) -> Result<AsyncSocket> {
    let endpoint = &config.endpoint;
    let tls = super::client_config(config)?;
    let name = super::server_name(config)?;

    let mut request = BytesMut::with_capacity(8);
    frontend::ssl_request(&mut request);
    tcp.write_all(&request)
        .await
        .map_err(|e| Error::io(format!("sending SSLRequest to {endpoint}"), e))?;
    // Exactly one byte: see `SslAnswer::parse`.
    let answer = tcp
        .read_u8()
        .await
        .map_err(|e| super::answer_error(endpoint, e))?;
    if !mode.on_answer(SslAnswer::parse(answer)?)? {
        return Ok(AsyncSocket::Tcp(tcp));
    }

    let session = TlsSession::new(tls, name, config.socket.read_window)
        .map_err(|e| super::handshake_error(config, mode, e))?;
    let stream = handshake(tcp, session)
        .await
        .map_err(|e| super::handshake_failure(config, mode, e))?;
    Ok(AsyncSocket::Tls(Box::new(stream)))
}

async fn handshake(mut tcp: TcpStream, mut session: TlsSession) -> io::Result<AsyncTlsStream> {
    loop {
        send_pending(&mut tcp, &mut session).await?;
        if session.advance_handshake()? {
            send_pending(&mut tcp, &mut session).await?;
            return Ok(AsyncTlsStream { tcp, session });
        }
        let n = tcp.read(session.recv_buf()).await?;
        session.received(n);
        if n == 0 {
            return Err(super::closed_in_handshake());
        }
    }
}

/// Writes the session's queued handshake bytes.
async fn send_pending(tcp: &mut TcpStream, session: &mut TlsSession) -> io::Result<()> {
    tcp.write_all(session.pending()).await?;
    let n = session.pending().len();
    session.sent(n);
    Ok(())
}

impl AsyncTlsStream {
    pub(crate) fn info(&self) -> TlsInfo {
        self.session.info()
    }

    /// Writes queued ciphertext; `Ready(Ok)` once none is left.
    fn poll_send_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.session.pending().is_empty() {
            let n = ready!(Pin::new(&mut self.tcp).poll_write(cx, self.session.pending()))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.session.sent(n);
        }
        Poll::Ready(Ok(()))
    }
}

/// Decrypts as much as `buf` has room for from one socket read; all
/// state lives in the session, so a dropped read loses nothing.
impl AsyncRead for AsyncTlsStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            let limit = buf.remaining();
            match this.session.read_plaintext(limit, |b| buf.put_slice(b))? {
                Plaintext::Data(_) | Plaintext::Eof => return Poll::Ready(Ok(())),
                Plaintext::NeedInput => {
                    let mut raw = ReadBuf::new(this.session.recv_buf());
                    ready!(Pin::new(&mut this.tcp).poll_read(cx, &mut raw))?;
                    let n = raw.filled().len();
                    this.session.received(n);
                }
            }
        }
    }
}

/// `poll_write` encrypts everything it is given; `poll_flush` sends what
/// the socket did not take yet (the async driver flushes every batch).
impl AsyncWrite for AsyncTlsStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // Earlier records first; pending here has taken none of `data`.
        ready!(this.poll_send_pending(cx))?;
        this.session.encrypt(data)?;
        // A failure now is met again, and reported, by `poll_flush`.
        let _ = this.poll_send_pending(cx);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send_pending(cx))?;
        Pin::new(&mut this.tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // No close_notify: the protocol's own Terminate ends the session.
        let this = self.get_mut();
        ready!(this.poll_send_pending(cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }
}
