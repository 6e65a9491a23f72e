//! Drivers that move bytes for the [`crate::protocol`] state machine.
//!
//! [`Client`] (std sockets) and [`AsyncClient`] (tokio, feature `tokio`) share
//! the session, every operation and the whole request surface (generated
//! once by `request_methods!`); each implements only `flush`, `fill` and
//! connecting. See DEVELOPMENT.md, "Driver design", for why this shape.

mod cancel;
pub mod config;
#[cfg(feature = "tokio")]
pub mod coop;
mod deadline;
#[macro_use]
mod requests;
mod socket;
mod state;
mod sync;
#[cfg(feature = "tokio")]
mod tokio_client;
#[cfg(feature = "tokio")]
mod tokio_socket;

pub use cancel::CancelHandle;
pub use config::{Config, Endpoint, SocketOptions, MIN_READ_WINDOW};
pub use socket::{Socket, Transport};
pub use sync::Client;
#[cfg(feature = "tokio")]
pub use tokio_client::AsyncClient;
#[cfg(feature = "tokio")]
pub use tokio_socket::AsyncSocket;
