//! Opening a connection's transport: the socket, then TLS as the config's
//! `SslMode` asks. A connection and its cancel requests open theirs here
//! alike (libpq negotiates TLS on the cancel connection too).

use std::time::Instant;

use crate::client::config::Config;
use crate::client::socket::Socket;
#[cfg(feature = "tokio")]
use crate::client::tokio_socket::AsyncSocket;
use crate::error::Result;

/// Connects to `config`'s endpoint and negotiates TLS, all within its
/// connect timeout.
pub(crate) fn open(config: &Config) -> Result<Socket> {
    let negotiation = config.tls_negotiation()?;
    let started = Instant::now();
    let socket = Socket::connect(&config.endpoint, &config.socket, config.connect_timeout)?;
    match (negotiation, socket) {
        #[cfg(feature = "tls")]
        (Some(mode), Socket::Tcp(tcp)) => {
            let deadline = config.connect_timeout.map(|t| started + t);
            crate::client::tls::negotiate(tcp, config, mode, deadline)
        }
        // `tls_negotiation` asks for none on a Unix socket or without TLS support.
        (_, socket) => {
            let _ = started;
            Ok(socket)
        }
    }
}

/// [`open`] for tokio.
#[cfg(feature = "tokio")]
pub(crate) async fn open_async(config: &Config) -> Result<AsyncSocket> {
    let negotiation = config.tls_negotiation()?;
    let connect = async {
        let socket = AsyncSocket::connect(&config.endpoint, &config.socket, None).await?;
        match (negotiation, socket) {
            #[cfg(feature = "tls")]
            (Some(mode), AsyncSocket::Tcp(tcp)) => {
                crate::client::tls::negotiate_async(tcp, config, mode).await
            }
            (_, socket) => Ok(socket),
        }
    };
    match config.connect_timeout {
        Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| {
            crate::error::Error::timeout(format!(
                "connecting to {}: timed out after {t:?}",
                config.endpoint
            ))
        })?,
        None => connect.await,
    }
}
