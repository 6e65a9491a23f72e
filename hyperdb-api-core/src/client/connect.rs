//! Opening a connection's transport: the socket, then TLS as the config's
//! `SslMode` asks. A connection and its cancel requests open theirs here
//! alike (libpq negotiates TLS on the cancel connection too).

#[cfg(feature = "tls")]
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
    #[cfg(feature = "tls")]
    let deadline = config.connect_timeout.map(|t| Instant::now() + t);
    let socket = Socket::connect(&config.endpoint, &config.socket, config.connect_timeout)?;
    match (negotiation, socket) {
        #[cfg(feature = "tls")]
        (Some(mode), Socket::Tcp(tcp)) => {
            crate::client::tls::negotiate(tcp, config, mode, deadline)
        }
        // `tls_negotiation` asks for none on a Unix socket or without TLS support.
        (_, socket) => Ok(socket),
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
    crate::client::tokio_socket::within_connect_timeout(
        &config.endpoint,
        config.connect_timeout,
        connect,
    )
    .await
}
