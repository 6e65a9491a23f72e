//! The std-socket driver: blocking reads straight into the session buffer,
//! one write per batch of requests.

use std::io;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::client::cancel::CancelHandle;
use crate::client::config::Config;
use crate::client::deadline::Deadline;
use crate::client::socket::{Socket, Transport};
use crate::client::state::{DriverState, QueuedCopy};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::{CopyResponse, FieldDescription};
use crate::protocol::ops::{self, QueryRequest, RowEvent};
use crate::protocol::{frontend, NoticeHandler, Session};

/// A blocking connection to hyperd over TCP or a Unix domain socket.
#[derive(Debug)]
pub struct Client<T: Transport = Socket> {
    stream: T,
    state: DriverState,
    /// Whether the socket currently has a read timeout set.
    timeout_armed: bool,
    /// Whether the socket currently has a write timeout set.
    write_timeout_armed: bool,
}

impl Client<Socket> {
    /// Connects and authenticates.
    pub fn connect(config: &Config) -> Result<Client> {
        Client::connect_with_notices(config, None)
    }

    /// Connects, sending server notices to `notices` instead of `tracing`.
    pub fn connect_with_notices(config: &Config, notices: Option<NoticeHandler>) -> Result<Client> {
        config.validate()?;
        let socket = crate::client::connect::open(config)?;
        Client::handshake(socket, config, notices)
    }
}

impl<T: Transport> Client<T> {
    /// Runs the startup handshake over an already connected stream.
    pub fn handshake(
        stream: T,
        config: &Config,
        notices: Option<NoticeHandler>,
    ) -> Result<Client<T>> {
        let mut client = Client {
            stream,
            state: DriverState::new(config, notices),
            timeout_armed: false,
            write_timeout_armed: false,
        };
        client.startup(config)?;
        Ok(client)
    }

    request_methods!(;);

    /// The TLS this connection negotiated; `None` for a plain one.
    pub fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        self.stream.tls_info()
    }

    /// Sends everything queued in the send buffer.
    pub fn flush(&mut self) -> Result<()> {
        if self.state.session.write_buf().is_empty() {
            return Ok(());
        }
        // Out of the session while it is written, so the deadline can be
        // handled meanwhile; back in afterwards, empty, its memory kept.
        let mut buf = std::mem::take(self.state.session.write_buf());
        let res = self.write_timed(&buf);
        buf.clear();
        *self.state.session.write_buf() = buf;
        if res.is_ok() {
            self.state.after_write();
        }
        res
    }

    /// Sends what is queued, then `data` straight from the caller's buffer
    /// (complete frames, e.g. a pre-encoded COPY chunk) without copying it.
    pub fn send_raw(&mut self, data: &[u8]) -> Result<()> {
        self.flush()?;
        self.write_timed(data)
    }

    /// Writes all of `data`. Under a deadline (a query's, or the connect
    /// timeout) each write waits at most until it (`SO_SNDTIMEO`): a
    /// server that stops reading gets a cancel request, then a grace
    /// period, then the connection is given up (`deadline.rs`). One
    /// `setsockopt` per write, and none without a deadline.
    fn write_timed(&mut self, mut data: &[u8]) -> Result<()> {
        self.state.before_write();
        let len = data.len() as u64;
        // `data`, then the stream's flush (a no-op but for TLS, which may
        // hold records back), each under the deadline.
        loop {
            let timeout = match &self.state.deadline {
                None => None,
                Some(d) => match d.remaining() {
                    Some(left) => Some(left),
                    None => {
                        self.on_write_deadline()?;
                        continue;
                    }
                },
            };
            if timeout.is_some() || self.write_timeout_armed {
                self.stream
                    .set_write_timeout(timeout)
                    .map_err(|e| Error::io("setting write timeout", e))?;
                self.write_timeout_armed = timeout.is_some();
            }
            let res = if data.is_empty() {
                self.stream.flush().map(|()| None)
            } else {
                self.stream.write(data).map(Some)
            };
            match res {
                Ok(None) => {
                    self.state.bytes_sent += len;
                    return Ok(());
                }
                Ok(Some(0)) => {
                    let e = io::Error::from(io::ErrorKind::WriteZero);
                    return Err(self.broken(Error::connection_lost("writing to the server", e)));
                }
                Ok(Some(n)) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) && self.state.deadline.is_some() => {
                    self.on_write_deadline()?
                }
                Err(e) => {
                    return Err(self.broken(Error::connection_lost("writing to the server", e)))
                }
            }
        }
    }

    /// Reads at least one more byte into the session, honouring the deadline.
    #[inline]
    fn fill(&mut self) -> Result<()> {
        self.fill_until(None).map(drop)
    }

    /// [`fill`](Self::fill), giving up at `until`: `Ok(false)` when
    /// nothing came by then.
    fn fill_until(&mut self, until: Option<Instant>) -> Result<bool> {
        loop {
            let mut timeout = match &self.state.deadline {
                None => None,
                Some(d) => match d.remaining() {
                    Some(left) => Some(left),
                    None => {
                        self.on_deadline()?;
                        continue;
                    }
                },
            };
            if let Some(at) = until {
                // A socket timeout of zero means none: under 1 ms is over.
                let left = at.saturating_duration_since(Instant::now());
                if left < Duration::from_millis(1) {
                    return Ok(false);
                }
                timeout = Some(timeout.map_or(left, |t| t.min(left)));
            }
            if timeout.is_some() || self.timeout_armed {
                self.stream
                    .set_read_timeout(timeout)
                    .map_err(|e| Error::io("setting read timeout", e))?;
                self.timeout_armed = timeout.is_some();
            }
            let limit = self.state.session.prepare_read(self.state.read_window);
            match self.stream.read_into(self.state.session.read_buf(), limit) {
                Ok(0) => return Err(self.broken(Error::closed("server closed the connection"))),
                Ok(_) => return Ok(true),
                Err(e) if is_timeout(&e) && (self.state.deadline.is_some() || until.is_some()) => {
                    continue
                }
                Err(e) => {
                    return Err(self.broken(Error::connection_lost("reading from the server", e)))
                }
            }
        }
    }

    fn on_write_deadline(&mut self) -> Result<()> {
        if self.state.expire_write_deadline()? {
            if let Err(e) = self.state.cancel.cancel() {
                tracing::warn!("query timeout: cancel request failed: {e}");
            }
            // The grace period counts from when the request went out.
            self.state.before_write();
        }
        Ok(())
    }

    /// Cancels the running statement (`begin`, for an abandoned result);
    /// returns once the server has taken the request.
    fn cancel_running(&mut self) {
        if let Err(e) = self.state.cancel.cancel() {
            tracing::warn!("cancelling an abandoned result: {e}");
        }
    }

    fn on_deadline(&mut self) -> Result<()> {
        if self.state.expire_deadline()? {
            if let Err(e) = self.state.cancel.cancel() {
                tracing::warn!("query timeout: cancel request failed: {e}");
            }
        }
        Ok(())
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn client_is_send() {
        fn send<T: Send>() {}
        send::<super::Client>();
    }
}
