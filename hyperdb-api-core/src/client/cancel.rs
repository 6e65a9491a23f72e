//! Cancelling a running query from anywhere: a `CancelRequest` on a new
//! socket, as the protocol requires, with the same TLS as the connection.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;

use crate::client::config::Config;
use crate::client::connect;
use crate::client::socket::Transport;
use crate::error::{Error, Result};
use crate::protocol::frontend;
use crate::protocol::BackendKey;

/// Cancels whatever the connection it came from is running. `Send + Sync`
/// and cheap to clone: hand it to another thread or task.
///
/// The request travels like the connection did: to the same endpoint,
/// with the same `SslMode`, roots and server name (hyperd serves a
/// `CancelRequest` inside TLS as well, measured).
#[derive(Clone, Debug)]
pub struct CancelHandle {
    /// Where and how to connect; its `Debug` redacts the password. Shared:
    /// a shared stream takes a handle per query, which copied the whole
    /// config (strings, parameters, root certificates) each time.
    config: Arc<Config>,
    /// Redacted by `Debug`.
    key: BackendKey,
}

/// `key` as sent by the server; zeros before it has sent one.
fn backend_key(key: Option<(i32, i32)>) -> BackendKey {
    let (process_id, secret_key) = key.unwrap_or((0, 0));
    BackendKey {
        process_id,
        secret_key,
    }
}

impl CancelHandle {
    /// A handle for the connection `config` opened, once its backend key is
    /// known.
    pub(crate) fn for_config(config: &Config, key: Option<(i32, i32)>) -> CancelHandle {
        CancelHandle {
            config: Arc::new(config.clone()),
            key: backend_key(key),
        }
    }

    /// The same connection's handle once the server sent its backend key:
    /// the config is shared, not copied again.
    pub(crate) fn with_key(&self, key: Option<(i32, i32)>) -> CancelHandle {
        CancelHandle {
            config: Arc::clone(&self.config),
            key: backend_key(key),
        }
    }

    fn request(&self) -> BytesMut {
        let mut buf = BytesMut::with_capacity(16);
        frontend::cancel_request(&mut buf, self.key.process_id, self.key.secret_key);
        buf
    }

    /// Asks the server to cancel the running statement, and returns once
    /// the server has taken the request (it closes the socket then), or
    /// after two seconds (`CANCEL_ACK_WAIT`). Waiting matters: a request
    /// still in flight when the statement ends could otherwise land on the
    /// next one. The statement then fails with SQLSTATE 57014; harmless
    /// when nothing runs.
    pub fn cancel(&self) -> Result<()> {
        let mut s = connect::open(&self.config)?;
        s.write_all(&self.request())
            .and_then(|()| s.flush())
            .map_err(|e| Error::io("sending cancel request", e))?;
        // EOF (or a reset, or the wait running out) is the answer; nothing
        // else is ever sent on a cancel socket.
        if s.set_read_timeout(Some(CANCEL_ACK_WAIT)).is_ok() {
            let _ = s.read_into(&mut BytesMut::with_capacity(16), 16);
        }
        Ok(())
    }

    /// [`CancelHandle::cancel`] for async code.
    #[cfg(feature = "tokio")]
    pub async fn cancel_async(&self) -> Result<()> {
        self.cancel_async_answered().await.map(drop)
    }

    /// [`CancelHandle::cancel_async`], telling whether the server answered
    /// the request (closed its socket) within two seconds
    /// (`CANCEL_ACK_WAIT`). A live hyperd answers in milliseconds; `false`
    /// is a server that has stopped, or a network that drops everything,
    /// which will not end the statement either: the caller may then stop
    /// waiting for it.
    #[cfg(feature = "tokio")]
    pub async fn cancel_async_answered(&self) -> Result<bool> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = connect::open_async(&self.config).await?;
        let request = self.request();
        let sent = async {
            s.write_all(&request).await?;
            s.flush().await
        };
        sent.await
            .map_err(|e| Error::io("sending cancel request", e))?;
        // EOF or a reset is the answer; only the wait running out is none.
        let answer = tokio::time::timeout(CANCEL_ACK_WAIT, s.read(&mut [0u8; 1])).await;
        Ok(answer.is_ok())
    }
}

/// How long a cancel request waits for the server to close its socket.
pub const CANCEL_ACK_WAIT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::config::Endpoint;

    #[test]
    fn debug_never_shows_the_cancel_secret() {
        let config = Config::new(Endpoint::tcp("localhost", 1));
        let handle = CancelHandle::for_config(&config, Some((7, 123_456_789)));
        let shown = format!("{handle:?}");
        assert!(!shown.contains("123456789"), "{shown}");
        let mut expected = BytesMut::new();
        frontend::cancel_request(&mut expected, 7, 123_456_789);
        assert_eq!(handle.request(), expected, "the request still carries it");
    }

    #[test]
    fn the_key_arrives_without_copying_the_config() {
        let config = Config::new(Endpoint::tcp("localhost", 1));
        let before = CancelHandle::for_config(&config, None);
        let after = before.with_key(Some((7, 42)));
        assert!(Arc::ptr_eq(&before.config, &after.config));
        let mut expected = BytesMut::new();
        frontend::cancel_request(&mut expected, 7, 42);
        assert_eq!(after.request(), expected);
    }
}
