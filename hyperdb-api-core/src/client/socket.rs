//! Opening tuned sockets, and reading straight into a `BytesMut`'s spare
//! capacity. TCP and Unix domain sockets differ only here.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use bytes::BytesMut;
use socket2::{Domain, SockAddr, SockRef, Socket as RawSocket, TcpKeepalive, Type};

use crate::client::config::{Endpoint, SocketOptions};
use crate::error::{Error, Result};

/// A connected stream the sync driver can run over. Implemented by
/// [`Socket`]; tests implement it for in-process fakes. `Write::flush`
/// is called after every batch of writes, under the same write timeout.
pub trait Transport: Write + Send {
    /// Reads at most `window` bytes, appending them to `buf`; 0 means EOF.
    fn read_into(&mut self, buf: &mut BytesMut, window: usize) -> io::Result<usize>;
    /// Bounds the next reads; `None` blocks indefinitely.
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Bounds each of the next writes: one that can send nothing for this
    /// long fails with `WouldBlock` or `TimedOut`; `None` blocks
    /// indefinitely.
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// The TLS the stream negotiated; `None` for a plain stream.
    fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        None
    }
}

/// A connected TCP or Unix domain socket, or TLS over TCP.
#[derive(Debug)]
#[non_exhaustive]
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
    #[cfg(feature = "tls")]
    Tls(Box<crate::client::TlsStream>),
}

impl Socket {
    /// Connects to `endpoint` and applies `opts`.
    pub fn connect(
        endpoint: &Endpoint,
        opts: &SocketOptions,
        timeout: Option<Duration>,
    ) -> Result<Socket> {
        match endpoint {
            Endpoint::Tcp { host, port } => {
                let addrs = resolve(host, *port)?;
                let mut last = None;
                for addr in addrs {
                    match connect_tcp(addr, opts, timeout) {
                        Ok(s) => return Ok(Socket::Tcp(s)),
                        Err(e) => last = Some(e),
                    }
                }
                Err(connect_error(
                    endpoint,
                    last.unwrap_or_else(|| io::ErrorKind::NotFound.into()),
                ))
            }
            Endpoint::Unix(path) => {
                let sock = RawSocket::new(Domain::UNIX, Type::STREAM, None)
                    .and_then(|s| {
                        apply_buffers(&SockRef::from(&s), opts)?;
                        let addr = SockAddr::unix(path)?;
                        match timeout {
                            Some(t) => s.connect_timeout(&addr, t)?,
                            None => s.connect(&addr)?,
                        }
                        Ok(s)
                    })
                    .map_err(|e| connect_error(endpoint, e))?;
                Ok(Socket::Unix(sock.into()))
            }
        }
    }

    /// The TLS the connection negotiated, if it uses TLS.
    pub fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        match self {
            #[cfg(feature = "tls")]
            Socket::Tls(s) => Some(s.info()),
            _ => None,
        }
    }
}

pub(crate) fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| Error::io(format!("resolving {host}:{port}"), e))?
        .collect();
    if addrs.is_empty() {
        return Err(Error::config(format!(
            "{host}:{port} resolves to no address"
        )));
    }
    Ok(addrs)
}

pub(crate) fn connect_error(endpoint: &Endpoint, e: io::Error) -> Error {
    Error::io(format!("connecting to {endpoint}"), e)
}

/// A TCP socket with its buffers sized before connect, so the kernel can
/// negotiate a window scale that uses them.
pub(crate) fn tcp_socket(addr: SocketAddr, opts: &SocketOptions) -> io::Result<RawSocket> {
    let s = RawSocket::new(
        Domain::for_address(addr),
        Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    apply_buffers(&SockRef::from(&s), opts)?;
    Ok(s)
}

fn connect_tcp(
    addr: SocketAddr,
    opts: &SocketOptions,
    timeout: Option<Duration>,
) -> io::Result<TcpStream> {
    let s = tcp_socket(addr, opts)?;
    match timeout {
        Some(t) => s.connect_timeout(&addr.into(), t)?,
        None => s.connect(&addr.into())?,
    }
    apply_tcp(&SockRef::from(&s), opts)?;
    Ok(s.into())
}

/// `SO_SNDBUF` / `SO_RCVBUF`, for TCP and Unix sockets alike.
pub(crate) fn apply_buffers(s: &SockRef<'_>, opts: &SocketOptions) -> io::Result<()> {
    if let Some(n) = opts.send_buffer {
        s.set_send_buffer_size(n)?;
    }
    if let Some(n) = opts.recv_buffer {
        s.set_recv_buffer_size(n)?;
    }
    Ok(())
}

/// `TCP_NODELAY` and keepalive, after connect.
pub(crate) fn apply_tcp(s: &SockRef<'_>, opts: &SocketOptions) -> io::Result<()> {
    s.set_nodelay(opts.nodelay)?;
    match opts.keepalive {
        Some(idle) => s.set_tcp_keepalive(
            &TcpKeepalive::new()
                .with_time(idle)
                .with_interval(opts.keepalive_interval)
                .with_retries(opts.keepalive_retries),
        ),
        None => s.set_keepalive(false),
    }
}

/// Reads from `fd` into the spare capacity of `buf` without zeroing it first.
pub(crate) fn recv_into(fd: RawFd, buf: &mut BytesMut, window: usize) -> io::Result<usize> {
    buf.reserve(window);
    let spare = buf.spare_capacity_mut();
    let len = spare.len().min(window.max(1));
    loop {
        // SAFETY: `spare` is valid, writable memory owned by `buf` of at least
        // `len` bytes; `recv` writes at most `len` bytes into it and never
        // reads it. No Rust reference observes the uninitialized bytes.
        let n = unsafe { libc::recv(fd, spare.as_mut_ptr().cast(), len, 0) };
        if n >= 0 {
            let n = n as usize;
            // SAFETY: the kernel initialized exactly `n <= len` bytes at the
            // start of the spare capacity.
            unsafe { buf.set_len(buf.len() + n) };
            return Ok(n);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

impl Transport for Socket {
    #[inline]
    fn read_into(&mut self, buf: &mut BytesMut, window: usize) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => recv_into(s.as_raw_fd(), buf, window),
            Socket::Unix(s) => recv_into(s.as_raw_fd(), buf, window),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => s.read_into(buf, window),
        }
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_read_timeout(timeout),
            Socket::Unix(s) => s.set_read_timeout(timeout),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => s.tcp().set_read_timeout(timeout),
        }
    }

    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_write_timeout(timeout),
            Socket::Unix(s) => s.set_write_timeout(timeout),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => s.tcp().set_write_timeout(timeout),
        }
    }

    fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        Socket::tls_info(self)
    }
}

impl Write for Socket {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(data),
            Socket::Unix(s) => s.write(data),
            #[cfg(feature = "tls")]
            Socket::Tls(s) => s.write(data),
        }
    }

    /// A no-op for TCP and Unix sockets, which buffer nothing; TLS sends
    /// the records `write` could not.
    fn flush(&mut self) -> io::Result<()> {
        match self {
            #[cfg(feature = "tls")]
            Socket::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn recv_into_appends_exactly_what_arrived() {
        let (mut a, b) = UnixStream::pair().unwrap();
        a.write_all(b"hello").unwrap();
        let mut buf = BytesMut::from(&b"xy"[..]);
        let n = recv_into(b.as_raw_fd(), &mut buf, 64 * 1024).unwrap();
        assert_eq!(n, 5);
        assert_eq!(&buf[..], b"xyhello");
        drop(a);
        assert_eq!(
            recv_into(b.as_raw_fd(), &mut buf, 64 * 1024).unwrap(),
            0,
            "EOF"
        );
        assert_eq!(&buf[..], b"xyhello");
    }

    #[test]
    fn recv_into_respects_the_window() {
        let (mut a, b) = UnixStream::pair().unwrap();
        a.write_all(&[7u8; 100]).unwrap();
        let mut buf = BytesMut::new();
        assert_eq!(recv_into(b.as_raw_fd(), &mut buf, 10).unwrap(), 10);
        assert_eq!(buf.len(), 10);
    }

    #[test]
    fn recv_into_reports_timeouts() {
        let (_a, b) = UnixStream::pair().unwrap();
        b.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut buf = BytesMut::new();
        let e = recv_into(b.as_raw_fd(), &mut buf, 1024).unwrap_err();
        assert!(matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
        assert!(buf.is_empty());
    }

    /// What `apply_tcp` set on a connected socket: keepalive on or off,
    /// idle, interval and probe count as `SocketOptions` asked.
    pub(crate) fn keepalive_of(s: &SockRef<'_>) -> Option<(Duration, Duration, u32)> {
        if !s.keepalive().unwrap() {
            return None;
        }
        Some((
            s.keepalive_time().unwrap(),
            s.keepalive_interval().unwrap(),
            s.keepalive_retries().unwrap(),
        ))
    }

    #[test]
    fn tcp_connects_with_keepalive_as_configured() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let endpoint = Endpoint::tcp("127.0.0.1", port);
        let Socket::Tcp(s) = Socket::connect(&endpoint, &SocketOptions::default(), None).unwrap()
        else {
            panic!("TCP endpoint, TCP socket")
        };
        assert_eq!(
            keepalive_of(&SockRef::from(&s)),
            Some((Duration::from_secs(60), Duration::from_secs(10), 3)),
            "on by default"
        );
        assert!(s.nodelay().unwrap());
        let custom = SocketOptions {
            keepalive: Some(Duration::from_secs(7)),
            keepalive_interval: Duration::from_secs(2),
            keepalive_retries: 5,
            ..SocketOptions::default()
        };
        let Socket::Tcp(s) = Socket::connect(&endpoint, &custom, None).unwrap() else {
            panic!("TCP endpoint, TCP socket")
        };
        assert_eq!(
            keepalive_of(&SockRef::from(&s)),
            Some((Duration::from_secs(7), Duration::from_secs(2), 5))
        );
        let off = SocketOptions {
            keepalive: None,
            ..SocketOptions::default()
        };
        let Socket::Tcp(s) = Socket::connect(&endpoint, &off, None).unwrap() else {
            panic!("TCP endpoint, TCP socket")
        };
        assert_eq!(keepalive_of(&SockRef::from(&s)), None);
    }

    #[test]
    fn connect_failure_names_the_endpoint() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let e = Socket::connect(
            &Endpoint::tcp("127.0.0.1", port),
            &SocketOptions::default(),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
        let e = Socket::connect(
            &Endpoint::unix("/nonexistent/sock"),
            &SocketOptions::default(),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/sock"), "{e}");
    }
}
