//! Wire protocols for Hyper (`hyperd`).
//!
//! Layers, bottom up; nothing reaches up a layer:
//!
//! * [`protocol`]: the PostgreSQL v3 protocol as Hyper speaks it, without I/O.
//!   Message codecs, authentication, and the session state machine that every
//!   driver runs.
//! * [`types`]: Hyper's SQL types, Rust value types, and the HyperBinary codec.
//! * [`client`]: drivers that move bytes: a std-socket client and (feature
//!   `tokio`) an async client, both over the same state machine.
//! * [`grpc`] (feature `grpc`): a client for hyperd's gRPC interface
//!   (`salesforce.hyperdb.grpc.v1.HyperService`), yielding Arrow IPC bytes.

pub mod client;
pub mod error;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod protocol;
pub mod types;

pub use error::{Error, Result};
