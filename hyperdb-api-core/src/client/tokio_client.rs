//! The tokio driver: the same session and operations as [`crate::client::Client`],
//! with reads and writes awaited instead of blocking.

use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::client::cancel::CancelHandle;
use crate::client::config::Config;
use crate::client::coop::ByteBudget;
use crate::client::deadline::Deadline;
use crate::client::state::{DriverState, QueuedCopy};
use crate::client::tokio_socket::AsyncSocket;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::backend::{CopyResponse, FieldDescription};
use crate::protocol::ops::{self, QueryRequest, RowEvent};
use crate::protocol::{frontend, NoticeHandler, Session};

/// An async connection to hyperd over TCP or a Unix domain socket.
///
/// Cancel-safe at every await point: a dropped future leaves unsent bytes in
/// the send buffer and unread replies owed; the next request flushes and
/// drains them (an abandoned result stream is cancelled first, see
/// `begin`).
///
/// Cooperative: every byte read or written is charged to the task's tokio
/// budget ([`coop`](crate::client::coop)), so a task that reads or writes
/// faster than the socket makes it wait still yields regularly.
#[derive(Debug)]
pub struct AsyncClient<T = AsyncSocket> {
    stream: T,
    state: DriverState,
    budget: ByteBudget,
}

impl AsyncClient<AsyncSocket> {
    /// Connects and authenticates.
    pub async fn connect(config: &Config) -> Result<AsyncClient> {
        AsyncClient::connect_with_notices(config, None).await
    }

    /// Connects, sending server notices to `notices` instead of `tracing`.
    pub async fn connect_with_notices(
        config: &Config,
        notices: Option<NoticeHandler>,
    ) -> Result<AsyncClient> {
        config.validate()?;
        let socket = crate::client::connect::open_async(config).await?;
        AsyncClient::handshake(socket, config, notices).await
    }

    /// The TLS this connection negotiated; `None` for a plain one.
    pub fn tls_info(&self) -> Option<crate::client::TlsInfo> {
        self.stream.tls_info()
    }
}

impl<T> AsyncClient<T> {
    /// When the running request's query timeout expires next (`None`
    /// without a query timeout, or between requests). The driver enforces
    /// it only while it waits on the socket; a writer whose data comes from
    /// elsewhere (a COPY fed by another task) waits for that data no longer
    /// than this.
    pub fn query_deadline(&self) -> Option<std::time::Instant> {
        self.state.deadline.as_ref().map(Deadline::at)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncClient<T> {
    /// Runs the startup handshake over an already connected stream.
    pub async fn handshake(
        stream: T,
        config: &Config,
        notices: Option<NoticeHandler>,
    ) -> Result<AsyncClient<T>> {
        let mut client = AsyncClient {
            stream,
            state: DriverState::new(config, notices),
            budget: ByteBudget::default(),
        };
        client.startup(config).await?;
        Ok(client)
    }

    request_methods!(async; .await);

    /// Sends everything queued in the send buffer. Under a deadline (a
    /// query's, or the connect timeout) a server that stops reading gets a
    /// cancel request, then a grace period, then the connection is given
    /// up (`deadline.rs`).
    pub async fn flush(&mut self) -> Result<()> {
        self.state.before_write();
        let queued = self.state.session.write_buf().len();
        loop {
            let at = self.state.deadline.as_ref().map(Deadline::at);
            // `write_all_buf` advances the buffer as bytes leave, so a
            // dropped future (the caller's, or the deadline's) leaves
            // exactly the unsent rest queued. The stream's flush is a no-op
            // but for TLS, which may hold records back.
            let stream = &mut self.stream;
            let buf = self.state.session.write_buf();
            let write = async {
                stream.write_all_buf(buf).await?;
                stream.flush().await
            };
            let res = match at {
                None => Some(write.await),
                Some(at) => tokio::time::timeout_at(at.into(), write).await.ok(),
            };
            match res {
                Some(Ok(())) => {
                    self.state.bytes_sent += queued as u64;
                    self.state.after_write();
                    // After the write: a yield here leaves nothing unsent.
                    self.budget.charge(queued).await;
                    return Ok(());
                }
                Some(Err(e)) => {
                    return Err(self.broken(Error::connection_lost("writing to the server", e)))
                }
                None => self.on_write_deadline().await?,
            }
        }
    }

    /// Sends what is queued, then `data` (complete frames). `data` is copied
    /// into the send buffer first, which keeps the call cancel-safe.
    pub async fn send_raw(&mut self, data: &[u8]) -> Result<()> {
        self.state.session.write_buf().extend_from_slice(data);
        self.flush().await
    }

    /// Reads at least one more byte into the session, honouring the deadline.
    async fn fill(&mut self) -> Result<()> {
        loop {
            let limit = self.state.session.prepare_read(self.state.read_window);
            let buf = self.state.session.read_buf();
            buf.reserve(limit);
            let mut buf = buf.limit(limit);
            let res = match &self.state.deadline {
                None => self.stream.read_buf(&mut buf).await,
                Some(d) => {
                    let read = self.stream.read_buf(&mut buf);
                    match tokio::time::timeout_at(d.at().into(), read).await {
                        Ok(r) => r,
                        Err(_) => {
                            self.on_deadline().await?;
                            continue;
                        }
                    }
                }
            };
            return match res {
                Ok(0) => Err(self.broken(Error::closed("server closed the connection"))),
                Ok(n) => {
                    // The bytes are in the session: a yield here loses nothing.
                    self.budget.charge(n).await;
                    Ok(())
                }
                Err(e) => Err(self.broken(Error::connection_lost("reading from the server", e))),
            };
        }
    }

    /// [`fill`](Self::fill), giving up at `until`: `Ok(false)` when
    /// nothing came by then. Dropping `fill` midway loses nothing: bytes
    /// read are in the session before it awaits anything else.
    async fn fill_until(&mut self, until: Option<Instant>) -> Result<bool> {
        let Some(at) = until else {
            return self.fill().await.map(|()| true);
        };
        match tokio::time::timeout_at(at.into(), self.fill()).await {
            Ok(filled) => filled.map(|()| true),
            Err(_) => Ok(false),
        }
    }

    async fn on_write_deadline(&mut self) -> Result<()> {
        if self.state.expire_write_deadline()? {
            if let Err(e) = self.state.cancel.cancel_async().await {
                tracing::warn!("query timeout: cancel request failed: {e}");
            }
            // The grace period counts from when the request went out.
            self.state.before_write();
        }
        Ok(())
    }

    /// Cancels the running statement (`begin`, for an abandoned result);
    /// returns once the server has taken the request.
    async fn cancel_running(&mut self) {
        if let Err(e) = self.state.cancel.cancel_async().await {
            tracing::warn!("cancelling an abandoned result: {e}");
        }
    }

    async fn on_deadline(&mut self) -> Result<()> {
        if self.state.expire_deadline()? {
            if let Err(e) = self.state.cancel.cancel_async().await {
                tracing::warn!("query timeout: cancel request failed: {e}");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn client_is_send() {
        fn send<T: Send>() {}
        send::<super::AsyncClient>();
    }
}
