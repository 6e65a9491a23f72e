//! What every workload is given.

use std::path::Path;

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, CreateMode, Listen};
use tokio::runtime::Runtime;

use crate::data::{Result, Span};

/// What every workload needs: the main (sync) connection, the runtime for
/// the async ones, how to connect, and the scale.
#[derive(Debug)]
pub struct Env<'a> {
    pub conn: &'a mut Connection,
    pub rt: &'a Runtime,
    /// The server's endpoint and password (TCP requires one), no database.
    pub server: &'a ConnectOptions,
    pub db: &'a Path,
    pub rows: u64,
    pub workers: usize,
    /// hyperd's gRPC endpoint when `BENCH_TRANSPORT=grpc`: queries go there.
    pub grpc: Option<&'a str>,
}

impl Env<'_> {
    /// All ids: `[0, rows)`.
    pub fn span(&self) -> Span {
        Span::new(0, self.rows)
    }

    /// `n` async connections to the suite's database (untimed by callers).
    pub fn async_connections(&self, n: usize) -> Result<Vec<AsyncConnection>> {
        self.rt.block_on(async {
            let mut conns = Vec::with_capacity(n);
            for _ in 0..n {
                let options = self
                    .server
                    .clone()
                    .with_database(self.db, CreateMode::DoNotCreate);
                conns.push(AsyncConnection::connect_with(&options).await?);
            }
            Ok(conns)
        })
    }

    pub fn close_async(&self, conns: Vec<AsyncConnection>) -> Result<()> {
        self.rt.block_on(async {
            for conn in conns {
                conn.close().await?;
            }
            Ok(())
        })
    }
}

/// `BENCH_TRANSPORT`: `tcp` (default), `ipc` (a Unix domain socket) or
/// `grpc` (queries over gRPC, inserts over TCP), as its name, the listener
/// to start hyperd with, and whether to add gRPC. TCP stays the default
/// here although `HyperProcess` defaults to a Unix socket: the suite's
/// figures are the TCP path's, comparable across runs and with the Node
/// benchmark.
pub fn transport() -> Result<(&'static str, Listen, bool)> {
    match std::env::var("BENCH_TRANSPORT").ok().as_deref() {
        None | Some("" | "tcp") => Ok(("tcp", Listen::Tcp, false)),
        Some("ipc" | "unix") => Ok(("ipc", Listen::Unix, false)),
        Some("grpc") => Ok(("grpc", Listen::Tcp, true)),
        Some(other) => Err(format!("BENCH_TRANSPORT=`{other}`: use tcp, ipc or grpc").into()),
    }
}

// Resolved at run time; a child module so that every bench including
// env.rs by `#[path]` gets it too.
#[path = "paths.rs"]
pub mod paths;
pub use paths::data_dir;
