//! The blocking gRPC connection: the async one driven by a private
//! current-thread tokio runtime.
//!
//! Unlike the PostgreSQL protocol (one sans-IO engine, a std driver and a
//! tokio driver), gRPC comes through tonic, which is async only; HTTP/2
//! framing, flow control and TLS are not ours to drive from a std socket.
//! So each blocking call is a `block_on` of the async call, as the
//! `postgres` crate does over `tokio-postgres`. The runtime has one thread
//! (the caller's): tonic's connection task runs only while a call blocks,
//! which is when there is something to do. A [`GrpcCancelHandle`] used from
//! another thread enters the same runtime; tokio lets a second thread block
//! on it while the first one drives the I/O.

use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use hyperdb_api_core::grpc::TransferMode;
use hyperdb_api_core::types::{FromHyperBinary, ToPgBinary};
use tokio::runtime::Runtime;

use super::connection::{AsyncGrpcConnection, GrpcConnectOptions};
use super::results::{AsyncGrpcArrowBatches, AsyncGrpcArrowIpcChunks, AsyncGrpcRows};
use crate::error::{Error, Result};
use crate::from_row::FromRow;
use crate::rows::{ReadPlan, Row, Schema};

/// A blocking connection to hyperd's gRPC interface (feature `grpc`); see
/// [`AsyncGrpcConnection`] for what it offers. Results are iterators.
///
/// ```no_run
/// use hyperdb_api::{GrpcConnection, GrpcConnectOptions};
/// let conn = GrpcConnection::connect_with(
///     &GrpcConnectOptions::from_endpoint("http://127.0.0.1:7484")?.with_database("example.hyper")?,
/// )?;
/// for batch in conn.query_arrow("SELECT * FROM t")? {
///     println!("{} rows", batch?.num_rows());
/// }
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
#[derive(Debug)]
pub struct GrpcConnection {
    // `inner` first: fields drop in order, and what it spawns on drop
    // needs the runtime still there.
    inner: AsyncGrpcConnection,
    rt: Arc<Runtime>,
}

impl GrpcConnection {
    /// Connects to `endpoint` with default options.
    pub fn connect(endpoint: &str) -> Result<GrpcConnection> {
        GrpcConnection::connect_with(&GrpcConnectOptions::from_endpoint(endpoint)?)
    }

    /// Connects with full options.
    pub fn connect_with(options: &GrpcConnectOptions) -> Result<GrpcConnection> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the gRPC runtime", e))?;
        let inner = rt.block_on(AsyncGrpcConnection::connect_with(options))?;
        Ok(GrpcConnection {
            rt: Arc::new(rt),
            inner,
        })
    }

    /// Runs a query and streams its result as Arrow record batches.
    pub fn query_arrow(&self, sql: &str) -> Result<GrpcArrowBatches> {
        self.query_arrow_params(sql, &[])
    }

    /// [`Self::query_arrow`] with bound parameters (`$1`, `$2`, ...).
    pub fn query_arrow_params(
        &self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> Result<GrpcArrowBatches> {
        let inner = self
            .rt
            .block_on(self.inner.query_arrow_params(sql, params))?;
        Ok(GrpcArrowBatches {
            rt: self.rt.clone(),
            inner,
        })
    }

    /// Runs a query and streams its result as raw Arrow IPC stream bytes.
    pub fn query_arrow_ipc(&self, sql: &str) -> Result<GrpcArrowIpcChunks> {
        let inner = self.rt.block_on(self.inner.query_arrow_ipc(sql))?;
        Ok(GrpcArrowIpcChunks {
            rt: self.rt.clone(),
            inner,
        })
    }

    /// Runs a query and streams its rows.
    pub fn execute_query(&self, sql: &str) -> Result<GrpcRows> {
        self.execute_query_params(sql, &[])
    }

    /// Runs a query with bound parameters and streams its rows.
    pub fn execute_query_params(&self, sql: &str, params: &[&dyn ToPgBinary]) -> Result<GrpcRows> {
        let inner = self
            .rt
            .block_on(self.inner.execute_query_params(sql, params))?;
        Ok(GrpcRows {
            rt: self.rt.clone(),
            inner,
        })
    }

    /// Runs a query and streams its rows as `T`.
    pub fn query_as<T: for<'r> FromRow<'r>>(&self, sql: &str) -> Result<GrpcTypedRows<T>> {
        Ok(self.execute_query(sql)?.typed())
    }

    /// The first column of the first row as `T`.
    pub fn query_scalar<T>(&self, sql: &str) -> Result<T>
    where
        T: for<'a> FromHyperBinary<'a>,
    {
        self.rt.block_on(self.inner.query_scalar(sql))
    }

    /// Attaches the database file `path` under `alias` to later queries.
    pub fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        self.inner.attach_database(path, alias)
    }

    /// Stops attaching the database known as `alias`.
    pub fn detach_database(&mut self, alias: &str) -> Result<()> {
        self.inner.detach_database(alias)
    }

    /// Sets a query setting for later queries.
    pub fn set_setting(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.inner.set_setting(name, value);
    }

    /// Sets the transfer mode of later queries.
    pub fn set_transfer_mode(&mut self, mode: TransferMode) {
        self.inner.set_transfer_mode(mode);
    }

    pub fn transfer_mode(&self) -> TransferMode {
        self.inner.transfer_mode()
    }

    /// Sets the row limit of later queries.
    pub fn set_row_limit(&mut self, limit: Option<u64>) {
        self.inner.set_row_limit(limit);
    }

    /// A handle that cancels this connection's running query from any
    /// thread.
    pub fn cancel_handle(&self) -> GrpcCancelHandle {
        GrpcCancelHandle {
            rt: self.rt.clone(),
            inner: self.inner.cancel_handle(),
        }
    }
}

/// Cancels the query running on a [`GrpcConnection`]; `Send + Sync`, use
/// it from another thread.
#[derive(Debug, Clone)]
pub struct GrpcCancelHandle {
    inner: hyperdb_api_core::grpc::GrpcCancelHandle,
    rt: Arc<Runtime>,
}

impl GrpcCancelHandle {
    /// Sends `CancelQuery` for the running query (nothing when none runs).
    /// The query's result then fails with a cancelled error.
    pub fn cancel(&self) -> Result<()> {
        Ok(self.rt.block_on(self.inner.cancel())?)
    }
}

/// [`AsyncGrpcArrowBatches`] as an `Iterator`.
#[derive(Debug)]
pub struct GrpcArrowBatches {
    inner: AsyncGrpcArrowBatches,
    rt: Arc<Runtime>,
}

impl GrpcArrowBatches {
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    pub fn query_id(&self) -> Option<&str> {
        self.inner.query_id()
    }

    /// The row count the server reported, once the stream is exhausted.
    pub fn row_count(&self) -> Option<u64> {
        self.inner.row_count()
    }

    /// Cancels this query; the iterator then yields a cancelled error.
    pub fn cancel(&self) -> Result<()> {
        self.rt.block_on(self.inner.cancel())
    }
}

impl Iterator for GrpcArrowBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        self.rt.block_on(self.inner.next())
    }
}

/// [`AsyncGrpcArrowIpcChunks`] as an `Iterator`.
#[derive(Debug)]
pub struct GrpcArrowIpcChunks {
    inner: AsyncGrpcArrowIpcChunks,
    rt: Arc<Runtime>,
}

impl GrpcArrowIpcChunks {
    pub fn row_count(&self) -> Option<u64> {
        self.inner.row_count()
    }
}

impl Iterator for GrpcArrowIpcChunks {
    type Item = Result<Bytes>;

    fn next(&mut self) -> Option<Result<Bytes>> {
        self.rt.block_on(self.inner.next())
    }
}

/// [`AsyncGrpcRows`] as an `Iterator`.
#[derive(Debug)]
pub struct GrpcRows {
    inner: AsyncGrpcRows,
    rt: Arc<Runtime>,
}

impl GrpcRows {
    pub fn schema(&self) -> &Arc<Schema> {
        self.inner.schema()
    }

    pub fn query_id(&self) -> Option<&str> {
        self.inner.query_id()
    }

    /// The row count the server reported, once the stream is exhausted.
    pub fn row_count(&self) -> Option<u64> {
        self.inner.row_count()
    }

    /// Cancels this query; the iterator then yields a cancelled error.
    pub fn cancel(&self) -> Result<()> {
        self.rt.block_on(self.inner.cancel())
    }

    /// The same stream, each row converted to `T`.
    pub fn typed<T: for<'r> FromRow<'r>>(mut self) -> GrpcTypedRows<T> {
        GrpcTypedRows {
            plan: self.inner.plan::<T>(),
            rows: self,
            _t: PhantomData,
        }
    }
}

impl GrpcRows {
    /// The next row, lent until the next call; `None` at the end.
    #[inline]
    pub fn next_row(&mut self) -> Option<Result<&Row>> {
        // Most rows come from the batch at hand: no runtime entry for them.
        if self.inner.step_buffered() {
            return Some(Ok(self.inner.current()));
        }
        self.rt.block_on(self.inner.next_row())
    }
}

impl Iterator for GrpcRows {
    type Item = Result<Row>;

    #[inline]
    fn next(&mut self) -> Option<Result<Row>> {
        self.next_row().map(|r| r.cloned())
    }
}

/// [`GrpcRows`] converted to `T` row by row.
#[derive(Debug)]
pub struct GrpcTypedRows<T> {
    rows: GrpcRows,
    /// How `T` reads this result's columns, found once.
    plan: ReadPlan,
    _t: PhantomData<fn() -> T>,
}

impl<T> GrpcTypedRows<T> {
    pub fn schema(&self) -> &Arc<Schema> {
        self.rows.schema()
    }
}

impl<T: for<'r> FromRow<'r>> Iterator for GrpcTypedRows<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if let Err(e) = self.rows.next_row()? {
            return Some(Err(e));
        }
        Some(self.rows.inner.current_as(self.plan))
    }
}
