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
//!
//! # Derived rows
//!
//! With the `derive` feature (on by default), `#[derive(Table)]` makes a
//! struct a table's rows ([`TableRow`]: its definition, and
//! [`Inserter::add_struct`]), and `#[derive(FromRow)]` reads it back
//! ([`FromRow`], by column name or by position). The attributes are in
//! the derives' docs ([`macro@FromRow`], [`macro@Table`]). The same
//! example is in the README.
//!
//! ```no_run
//! use hyperdb_api::types::{Numeric, Timestamp};
//! use hyperdb_api::{Connection, CreateMode, FromRow, HyperProcess, Inserter, Table, TableRow};
//!
//! /// One table row: the table is `sales.orders`, its columns these fields.
//! #[derive(Table, FromRow, Debug)]
//! #[hyper(table = "sales.orders")]
//! struct Order {
//!     id: i64,
//!     customer: String,
//!     #[hyper(sql_type = "NUMERIC(18,2)")]
//!     total: Numeric,
//!     shipped: Option<Timestamp>, // Option: a nullable column, NULL is None
//! }
//!
//! /// A report row, read by column name (`#[hyper(by_position)]` or a tuple
//! /// struct reads by position instead).
//! #[derive(FromRow, Debug)]
//! struct CustomerTotal {
//!     #[hyper(rename = "name")]
//!     customer: String,
//!     orders: i64,
//! }
//!
//! fn main() -> hyperdb_api::Result<()> {
//!     let hyper = HyperProcess::start()?;
//!     let mut conn = Connection::connect(hyper.endpoint(), "sales.hyper", CreateMode::CreateAndReplace)?;
//!     conn.catalog().create_schema("sales")?;
//!     conn.catalog().create_table(&Order::table_definition())?;
//!
//!     let mut ins = Inserter::new(&mut conn, &Order::table_definition())?;
//!     for id in 0..1000 {
//!         let order = Order { id, customer: format!("c{}", id % 7), total: "9.99".parse()?, shipped: None };
//!         ins.add_struct(&order)?; // no allocation per row
//!     }
//!     ins.execute()?;
//!
//!     for order in conn.query_as::<Order>("SELECT * FROM sales.orders WHERE id < 3")? {
//!         println!("{:?}", order?);
//!     }
//!     let sql = "SELECT customer AS name, count(*) AS orders FROM sales.orders GROUP BY 1";
//!     for total in conn.query_as::<CustomerTotal>(sql)? {
//!         let total = total?; // a missing column, a NULL, a wrong type: Error::Field
//!         println!("{}: {}", total.customer, total.orders);
//!     }
//!
//!     // Lent rows: `customer` borrows from the row, valid until the next call.
//!     #[derive(FromRow)]
//!     struct OrderRef<'r> {
//!         id: i64,
//!         customer: &'r str,
//!     }
//!     let mut rows = conn.execute_query("SELECT id, customer FROM sales.orders")?;
//!     while let Some(order) = rows.next_as::<OrderRef>() {
//!         let order = order?;
//!         println!("{} {}", order.id, order.customer);
//!     }
//!     Ok(())
//! }
//! ```
//!
//! # TLS
//!
//! With the `tls` feature (on by default) connections can use TLS, with
//! libpq's `sslmode` meanings ([`SslMode`]); a server started with
//! [`HyperProcessOptions::with_tls`] hands out a [`Config`] that verifies
//! its certificate:
//!
//! ```no_run
//! use hyperdb_api::{Connection, ConnectOptions, CreateMode, Endpoint, HyperProcess, HyperProcessOptions, SslMode};
//!
//! # fn main() -> hyperdb_api::Result<()> {
//! // hyperd serves TLS with this certificate (PEM chain + key) ...
//! let hyper = HyperProcess::new(
//!     HyperProcessOptions::default()
//!         .with_tls("server.pem", "server.key")
//!         .with_tls_root_certificate("ca.pem"),
//! )?;
//! // ... and its config() verifies it (VerifyFull, trusting ca.pem).
//! let options = ConnectOptions::from(hyper.config())
//!     .with_database("tls.hyper", CreateMode::CreateIfNotExists);
//! let mut conn = Connection::connect_with(&options)?;
//! println!("{:?}", conn.tls_info()); // TLSv1_3, TLS13_AES_256_GCM_SHA384, secp256r1
//! conn.execute_command("CREATE TABLE IF NOT EXISTS t (x INT)")?;
//!
//! // A remote server, its name checked against a private CA:
//! let ca = std::fs::read("ca.pem").map_err(|e| hyperdb_api::Error::Io {
//!     context: "reading ca.pem".into(),
//!     source: e,
//! })?;
//! let remote = ConnectOptions::new("db.example.com:7483".parse::<Endpoint>()?)
//!     .with_ssl_mode(SslMode::VerifyFull)
//!     .with_root_certificate(ca)
//!     .with_password("secret");
//! let _ = Connection::connect_with(&remote);
//! # Ok(())
//! # }
//! ```
//!
//! # Tracing
//!
//! Every statement is a `tracing` span, `hyperdb.statement` (DEBUG), from
//! the call that sends it to the end of its result, with the SQL (cut after
//! 1,024 bytes), the rows, the bytes, the duration, the outcome (`ok`,
//! `error`, `abandoned`) and, on error, the SQLSTATE; parameter values and
//! passwords are never recorded. A statement slower than
//! [`ConnectOptions::with_slow_statement_threshold`] logs one WARN event.
//! With no subscriber that wants them a statement costs a few branches.
//! The README's "Tracing" section lists every field; its example is this
//! one.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hyperdb_api::{ConnectOptions, Connection, CreateMode, HyperProcess};
//! use tracing_subscriber::fmt::format::FmtSpan;
//!
//! fn main() -> hyperdb_api::Result<()> {
//!     // Print each statement's span, with its fields, when it closes.
//!     tracing_subscriber::fmt()
//!         .with_max_level(tracing::Level::DEBUG)
//!         .with_span_events(FmtSpan::CLOSE)
//!         .init();
//!
//!     let hyper = HyperProcess::start()?;
//!     let options = ConnectOptions::new(hyper.endpoint().clone())
//!         .with_database("traced.hyper", CreateMode::CreateAndReplace)
//!         // One WARN event for each statement slower than this (default: none).
//!         .with_slow_statement_threshold(Some(Duration::from_millis(250)));
//!     let mut conn = Connection::connect_with(&options)?;
//!     conn.execute_command("CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 100000) g")?;
//!     let secret = "a parameter value"; // recorded nowhere: only the count of parameters
//!     let n = conn.execute_query_params("SELECT x FROM t WHERE x::text <> $1", &[&secret])?.count();
//!     println!("{n} rows");
//!     Ok(())
//! }
//! ```

// The derives' code names this crate `::hyperdb_api`; so may its own.
extern crate self as hyperdb_api;

#[doc(hidden)]
#[path = "derive_support.rs"]
pub mod __derive;
#[cfg(feature = "arrow")]
pub mod arrow;
#[cfg(feature = "async")]
mod async_connection;
mod catalog;
mod conn_string;
mod connection;
#[cfg(feature = "async")]
mod coop;
pub mod error;
pub mod escape;
pub mod files;
mod from_row;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "grpc")]
pub mod grpc;
pub mod insert;
mod names;
mod notices;
mod options;
mod params;
#[cfg(feature = "pool")]
pub mod pool;
mod process;
#[cfg(feature = "arrow")]
mod route;
mod rows;
mod server_version;
#[cfg(all(feature = "async", feature = "arrow"))]
pub mod shared;
mod sql_lex;
mod statement;
mod table_definition;
mod table_row;
mod trace;
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
pub use hyperdb_api_core::client::{
    CancelHandle, Config, Endpoint, SocketOptions, SslMode, TlsInfo,
};
pub use hyperdb_api_core::protocol::auth::{AuthMethod, AuthMethods};
pub use hyperdb_api_core::protocol::backend::TransactionStatus;
pub use hyperdb_api_core::protocol::Limits;
pub use hyperdb_api_core::types;
/// `#[derive(FromRow)]`: reads a struct from a row, by column name or by
/// position; see the [crate docs](crate#derived-rows).
#[cfg(feature = "derive")]
pub use hyperdb_api_derive::FromRow;
/// `#[derive(Table)]`: a struct as a table's rows ([`TableRow`]); see the
/// [crate docs](crate#derived-rows).
#[cfg(feature = "derive")]
pub use hyperdb_api_derive::Table;
#[cfg(feature = "async")]
pub use insert::{AsyncChunkSender, AsyncInserter};
pub use insert::{ChunkSender, ColumnMapping, InsertChunk, InsertFormat, Inserter, MappedInserter};
pub use names::{DatabaseName, SchemaName, TableName, DEFAULT_SCHEMA};
pub use notices::NoticeSender;
pub use options::{ConnectOptions, CreateMode, SESSION_DEFAULTS};
pub use process::{
    HyperProcess, HyperProcessOptions, Listen, DEFAULT_DATABASE_VERSION, DEFAULT_HYPERD_PARAMS,
};
#[cfg(feature = "arrow")]
#[doc(hidden)]
pub use route::ReadRoute;
pub use rows::{Column, ColumnIndex, Row, RowValues, Rows, Schema, TypedRows};
pub use server_version::ServerVersion;
#[cfg(all(feature = "async", feature = "arrow"))]
pub use shared::{
    started, CancelToken, ConnectionGuard, Gather, InsertPiece, InsertSink, Place, ResultStream,
    SharedConnection, Started, StreamCanceller,
};
pub use statement::{Statement, ToStatement};
pub use table_definition::{ColumnDefinition, Persistence, TableDefinition};
pub use table_row::{HasSqlType, RowWriter, TableRow};
pub use transaction::Transaction;
pub use value::Value;

#[cfg(feature = "arrow")]
pub use arrow::{ArrowBatches, ArrowInserter, ArrowIpcChunks};
#[cfg(all(feature = "arrow", feature = "async"))]
pub use arrow::{AsyncArrowBatches, AsyncArrowInserter, AsyncArrowIpcChunks};
#[cfg(feature = "grpc")]
pub use grpc::{AsyncGrpcConnection, GrpcConfig, GrpcConnectOptions, GrpcConnection, TransferMode};
#[cfg(all(feature = "pool", feature = "async"))]
pub use pool::{AsyncPool, AsyncPooledConnection};
#[cfg(feature = "pool")]
pub use pool::{Pool, PoolOptions, PooledConnection};
/// The Arrow crates the `arrow` API is built on, so callers can use the same versions.
#[cfg(feature = "arrow")]
pub use {arrow_array, arrow_schema};

/// The README's derive and tracing examples are the crate docs' ones,
/// which are compiled as doc tests: the README's copies cannot go stale.
#[cfg(test)]
mod readme_tests {
    /// The first Rust block after `readme_heading` in the README equals
    /// the first doc test after `doc_heading` in the crate docs.
    fn assert_same_example(readme_heading: &str, doc_heading: &str) {
        let readme = include_str!("../../README.md");
        let start = readme
            .find(readme_heading)
            .unwrap_or_else(|| panic!("README has a {readme_heading} section"));
        let block = &readme[start..];
        let code = block
            .split("```rust\n")
            .nth(1)
            .and_then(|b| b.split("\n```").next())
            .expect("a rust block");
        let lib = include_str!("lib.rs");
        let docs: Vec<&str> = lib
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.trim_start_matches("//!"))
            })
            .collect();
        let docs = docs.join("\n");
        let doc_code = docs
            .split(doc_heading)
            .nth(1)
            .and_then(|d| d.split("```no_run\n").nth(1))
            .and_then(|b| b.split("\n```").next())
            .expect("a doc test");
        assert_eq!(code, doc_code);
    }

    #[test]
    fn readme_derive_example_is_the_doc_test() {
        assert_same_example("## Derived rows", "# Derived rows");
    }

    #[test]
    fn readme_tracing_example_is_the_doc_test() {
        assert_same_example("### Tracing", "# Tracing");
    }
}
