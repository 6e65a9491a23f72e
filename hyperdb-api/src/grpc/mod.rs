//! Reading over hyperd's gRPC interface (feature `grpc`, on by default).
//!
//! [`GrpcConnection`] (blocking) and [`AsyncGrpcConnection`] offer the read
//! API of the PostgreSQL-protocol connections: Arrow record batches
//! (`query_arrow`), raw IPC bytes (`query_arrow_ipc`), and the same
//! [`Row`](crate::Row)s with the same typed `try_get` (`execute_query`,
//! `query_as`, `query_scalar`); bound parameters (`$1`, ...) take the same
//! values as there. Databases, settings, the [`TransferMode`] and a row
//! limit go with every query (gRPC calls are stateless). Writes go through
//! the PostgreSQL protocol.
//!
//! Start a server that listens for gRPC with
//! [`HyperProcessOptions::with_grpc`](crate::HyperProcessOptions::with_grpc)
//! and connect to [`HyperProcess::grpc_endpoint`](crate::HyperProcess::grpc_endpoint).
//!
//! How hyperd transfers results in each mode, and how its errors map to
//! [`crate::Error`], is described in `hyperdb_api_core::grpc`.
//!
//! Rows: each Arrow batch is written once into `DataRow` form with
//! HyperBinary values, so a gRPC row and a PostgreSQL-protocol row are the
//! same type and read the same values.

mod blocking;
mod connection;
mod params;
mod results;

pub use blocking::{
    GrpcArrowBatches, GrpcArrowIpcChunks, GrpcCancelHandle, GrpcConnection, GrpcRows, GrpcTypedRows,
};
pub use connection::{AsyncGrpcConnection, GrpcConnectOptions};
pub use hyperdb_api_core::grpc::{
    GrpcCancelHandle as AsyncGrpcCancelHandle, GrpcConfig, TransferMode,
};
pub use results::{AsyncGrpcArrowBatches, AsyncGrpcArrowIpcChunks, AsyncGrpcRows};
