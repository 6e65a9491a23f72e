//! A client for hyperd's gRPC interface, `salesforce.hyperdb.grpc.v1.HyperService`
//! (feature `grpc`).
//!
//! Start hyperd with `--listen-connection tcp.grpc://127.0.0.1:PORT`
//! (`HyperProcessOptions::with_grpc` in `hyperdb-api` does it). gRPC reads:
//! results arrive as Arrow IPC (`ARROW_IPC` output format); writes go
//! through the PostgreSQL protocol.
//!
//! * [`GrpcClient`]: the channel; [`GrpcClient::execute`] runs a
//!   [`GrpcQuery`] and returns a [`GrpcResult`], the result as Arrow IPC
//!   stream bytes in any [`TransferMode`] (see `result.rs` for what hyperd
//!   does in each).
//! * [`GrpcCancelHandle`] / [`GrpcResult::cancel`]: `CancelQuery`.
//! * Errors: [`status_to_error`] maps a status and hyperd's `ErrorInfo`
//!   details to [`crate::Error`] with SQLSTATE, message, detail, hint and
//!   position.
//! * TLS for `https` endpoints with rustls; certificates are verified.
//!
//! The `.proto` is ours (`proto/`), written from the service's published
//! message layout; the Rust code is generated at build time with a vendored
//! `protoc`.

mod client;
mod config;
mod deadline;
mod error;
mod query;
mod result;

pub use client::{GrpcCancelHandle, GrpcClient, QUERY_ID_HEADER};
pub use config::{
    GrpcConfig, DEFAULT_CONNECTION_WINDOW, DEFAULT_MAX_FRAME_SIZE, DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_STREAM_WINDOW,
};
pub use error::status_to_error;
pub use query::{GrpcDatabase, GrpcParameters, GrpcQuery, TransferMode};
pub use result::GrpcResult;

/// The generated protobuf messages and client stub.
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_debug_implementations,
    missing_docs,
    unreachable_pub
)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/salesforce.hyperdb.grpc.v1.rs"));
}
