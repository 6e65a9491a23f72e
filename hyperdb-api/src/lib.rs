//! Rust client SDK for Hyper, Tableau's columnar SQL engine.
//!
//! Start a server with [`HyperProcess`], open a `.hyper` file with
//! [`Connection`] (blocking) or [`AsyncConnection`] (tokio), run SQL, stream
//! results.
//!
//! ```no_run
//! use hyperdb_api::{Connection, CreateMode, HyperProcess};
//!
//! let hyper = HyperProcess::start()?;
//! let mut conn = Connection::connect(hyper.endpoint(), "example.hyper", CreateMode::CreateAndReplace)?;
//! conn.execute_command("CREATE TABLE t (x INT)")?;
//! conn.execute_command("INSERT INTO t VALUES (1), (2)")?;
//! for row in conn.execute_query("SELECT x FROM t")? {
//!     let row = row?;
//!     let x: i32 = row.try_get(0)?;
//!     println!("{x}");
//! }
//! # Ok::<(), hyperdb_api::Error>(())
//! ```

#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "async")]
mod async_connection;
mod catalog;
mod connection;
pub mod error;
pub mod escape;
pub mod files;
mod from_row;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod insert;
mod names;
mod notices;
mod options;
mod params;
mod process;
mod rows;
mod server_version;
#[cfg(all(feature = "async", feature = "arrow"))]
pub mod shared;
mod table_definition;
mod transaction;
mod value;

#[cfg(feature = "async")]
pub use async_connection::{AsyncConnection, AsyncRows, AsyncTransaction};
#[cfg(feature = "async")]
pub use catalog::AsyncCatalog;
pub use catalog::Catalog;
pub use connection::Connection;
pub use error::{DbError, Error, ErrorKind, Result, Severity, SqlState};
pub use from_row::FromRow;
pub use hyperdb_api_core::client::{CancelHandle, Config, Endpoint, SocketOptions};
pub use hyperdb_api_core::protocol::auth::{AuthMethod, AuthMethods};
pub use hyperdb_api_core::protocol::backend::TransactionStatus;
pub use hyperdb_api_core::protocol::Limits;
pub use hyperdb_api_core::types;
#[cfg(feature = "async")]
pub use insert::{AsyncChunkSender, AsyncInserter};
pub use insert::{ChunkSender, ColumnMapping, InsertChunk, InsertFormat, Inserter, MappedInserter};
pub use names::{DatabaseName, SchemaName, TableName, DEFAULT_SCHEMA};
pub use notices::NoticeSender;
pub use options::{ConnectOptions, CreateMode};
pub use process::{HyperProcess, HyperProcessOptions, Listen, DEFAULT_DATABASE_VERSION};
pub use rows::{Column, ColumnIndex, Row, RowValues, Rows, Schema, TypedRows};
pub use server_version::ServerVersion;
#[cfg(all(feature = "async", feature = "arrow"))]
pub use shared::{
    CancelToken, ConnectionGuard, InsertPiece, InsertSink, Place, ResultStream, SharedConnection,
    StreamCanceller,
};
pub use table_definition::{ColumnDefinition, TableDefinition};
pub use transaction::Transaction;
pub use value::Value;

#[cfg(feature = "arrow")]
pub use arrow::{ArrowBatches, ArrowInserter, ArrowIpcChunks};
#[cfg(all(feature = "arrow", feature = "async"))]
pub use arrow::{AsyncArrowBatches, AsyncArrowInserter, AsyncArrowIpcChunks};
#[cfg(feature = "grpc")]
pub use grpc::{AsyncGrpcConnection, GrpcConfig, GrpcConnectOptions, GrpcConnection, TransferMode};
/// The Arrow crates the `arrow` API is built on, so callers can use the same versions.
#[cfg(feature = "arrow")]
pub use {arrow_array, arrow_schema};
