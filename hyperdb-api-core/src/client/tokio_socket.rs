//! Tuned tokio sockets; TCP and Unix behind one `AsyncRead + AsyncWrite`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use socket2::SockRef;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpSocket, TcpStream, UnixStream};

use crate::client::config::{Endpoint, SocketOptions};
use crate::client::socket::{apply_buffers, apply_tcp, connect_error, resolve, tcp_socket};
use crate::error::{Error, Result};

/// A connected tokio TCP or Unix domain socket, or TLS over TCP.
#[derive(Debug)]
#[non_exhaustive]
pub enum AsyncSocket {
    Tcp(TcpStream),
    Unix(UnixStream),
    #[cfg(feature = "tls")]
    Tls(Box<crate::client::AsyncTlsStream>),
}

impl AsyncSocket {
    /// Connects to `endpoint` with the same tuning as the sync driver.
    pub async fn connect(
        endpoint: &Endpoint,
        opts: &SocketOptions,
        timeout: Option<Duration>,
    ) -> Result<AsyncSocket> {
        let connect = async {
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    let mut last = None;
                    for addr in resolve(host, *port)? {
                        let attempt = async {
                            let s = tcp_socket(addr, opts)?;
                            s.set_nonblocking(true)?;
                            let s = TcpSocket::from_std_stream(s.into());
                            let stream = s.connect(addr).await?;
                            apply_tcp(&SockRef::from(&stream), opts)?;
                            Ok::<_, io::Error>(stream)
                        };
                        match attempt.await {
                            Ok(s) => return Ok(AsyncSocket::Tcp(s)),
                            Err(e) => last = Some(e),
                        }
                    }
                    Err(connect_error(
                        endpoint,
                        last.unwrap_or_else(|| io::ErrorKind::NotFound.into()),
                    ))
                }
                Endpoint::Unix(path) => {
                    let s = UnixStream::connect(path)
                        .await
                        .map_err(|e| connect_error(endpoint, e))?;
                    apply_buffers(&SockRef::from(&s), opts)
                        .map_err(|e| connect_error(endpoint, e))?;
                    Ok(AsyncSocket::Unix(s))
                }
            }
        };
        within_connect_timeout(endpoint, timeout, connect).await
    }
}

/// `connect` (a connect to `endpoint`, and whatever the caller adds to it,
/// such as TLS) given `timeout` at most, else a timeout error naming both.
pub(crate) async fn within_connect_timeout<T>(
    endpoint: &Endpoint,
    timeout: Option<Duration>,
    connect: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    match timeout {
        Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| {
            Error::timeout(format!("connecting to {endpoint}: timed out after {t:?}"))
        })?,
        None => connect.await,
    }
}

impl AsyncSocket {
    /// The TLS the connection negotiated, if it uses TLS.
    pub fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        match self {
            #[cfg(feature = "tls")]
            AsyncSocket::Tls(s) => Some(s.info()),
            _ => None,
        }
    }
}

impl AsyncRead for AsyncSocket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncSocket::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            AsyncSocket::Unix(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            AsyncSocket::Tls(s) => Pin::new(&mut **s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for AsyncSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncSocket::Tcp(s) => Pin::new(s).poll_write(cx, data),
            AsyncSocket::Unix(s) => Pin::new(s).poll_write(cx, data),
            #[cfg(feature = "tls")]
            AsyncSocket::Tls(s) => Pin::new(&mut **s).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncSocket::Tcp(s) => Pin::new(s).poll_flush(cx),
            AsyncSocket::Unix(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            AsyncSocket::Tls(s) => Pin::new(&mut **s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncSocket::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            AsyncSocket::Unix(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            AsyncSocket::Tls(s) => Pin::new(&mut **s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::socket::tests::keepalive_of;

    #[tokio::test]
    async fn tcp_connects_with_keepalive_as_configured() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = Endpoint::tcp("127.0.0.1", l.local_addr().unwrap().port());
        let s = AsyncSocket::connect(&endpoint, &SocketOptions::default(), None)
            .await
            .unwrap();
        let AsyncSocket::Tcp(s) = s else {
            panic!("TCP endpoint, TCP socket")
        };
        assert_eq!(
            keepalive_of(&SockRef::from(&s)),
            Some((Duration::from_secs(60), Duration::from_secs(10), 3))
        );
        let off = SocketOptions {
            keepalive: None,
            ..SocketOptions::default()
        };
        let AsyncSocket::Tcp(s) = AsyncSocket::connect(&endpoint, &off, None).await.unwrap() else {
            panic!("TCP endpoint, TCP socket")
        };
        assert_eq!(keepalive_of(&SockRef::from(&s)), None);
    }
}
