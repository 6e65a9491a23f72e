//! Drivers that move bytes for the [`crate::protocol`] state machine.
//!
//! [`Client`] (std sockets) and [`AsyncClient`] (tokio, feature `tokio`) share
//! the session, every operation and the whole request surface (generated
//! once by `request_methods!`); each implements only `flush`, `fill` and
//! connecting. See DEVELOPMENT.md, "Driver design", for why this shape.

mod cancel;
pub mod config;
mod connect;
#[cfg(feature = "tokio")]
pub mod coop;
mod deadline;
#[macro_use]
mod requests;
mod socket;
mod state;
mod sync;
#[cfg(feature = "tls")]
mod tls;
#[cfg(feature = "tokio")]
mod tokio_client;
#[cfg(feature = "tokio")]
mod tokio_socket;

pub use crate::protocol::ssl::SslMode;
pub use cancel::CancelHandle;
pub use config::{Config, Endpoint, SocketOptions, MIN_READ_WINDOW};
pub use deadline::{cancel_unanswered, CANCEL_GRACE};
pub use socket::{Socket, Transport};
pub use sync::Client;
#[cfg(all(feature = "tls", feature = "tokio"))]
pub use tls::AsyncTlsStream;
#[cfg(feature = "tls")]
pub use tls::TlsStream;
#[cfg(feature = "tokio")]
pub use tokio_client::AsyncClient;
#[cfg(feature = "tokio")]
pub use tokio_socket::AsyncSocket;

/// How much of an abandoned result's rest is read and discarded before its
/// statement is cancelled (`end_abandoned_stream` in `requests.rs`).
/// Measured on the next query after a dropped result (DEVELOPMENT.md,
/// "Cooperative yielding and dropped results"): a cancel costs a
/// connection and ~0.4 ms more than reading a short rest (10K rows: 0.46
/// ms instead of 0.80), while reading on costs ~1-2 ms per MB; 64 KiB kept
/// the short rests' figure and changed nothing measurable for 50M rows;
/// 256 KiB added ~4 ms there.
pub(crate) const ABANDONED_DRAIN_BYTES: usize = 64 << 10;

/// How long an abandoned result is waited for before its statement is
/// cancelled, however little of it came (`end_abandoned_stream`): a
/// statement that sends nothing for long, such as an aggregate over a large
/// table, would otherwise hold the next call until it ends (a dropped 6 s
/// `count(*)` made the next `SELECT 1` wait 6.7 s). A cancel costs ~0.4 ms
/// more than a short rest read to its end, so a rest that is on its way
/// within this is still read.
pub(crate) const ABANDONED_DRAIN_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// The TLS a connection negotiated (see `Client::tls_info`); the values
/// are rustls's names, e.g. `TLSv1_3`, `TLS13_AES_256_GCM_SHA384`,
/// `secp256r1`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsInfo {
    pub protocol_version: String,
    pub cipher_suite: String,
    pub key_exchange: String,
}
