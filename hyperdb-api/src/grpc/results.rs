//! gRPC query results: Arrow record batches (decoded by the same
//! [`ArrowDecoder`] as `query_arrow` over the PostgreSQL protocol), raw IPC
//! bytes, and typed rows. Async types here; the blocking ones wrap them in
//! `blocking.rs`.
//!
//! Nothing is buffered beyond the message being decoded and one batch, so
//! memory stays bounded whatever the result size.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use bytes::Bytes;
use futures_core::Stream;
use hyperdb_api_core::grpc::GrpcResult;

use crate::arrow::row_schema;
use crate::arrow::{record_batch_step, ArrowDecoder, EOS};
use crate::error::{Error, Result};
use crate::from_row::FromRow;
use crate::rows::{fetched_from_arrow, read_rows, refill_cursor, ReadPlan, Row, RowCursor, Schema};
use crate::trace::StatementTrace;

/// A gRPC query hyperd has taken, its Arrow schema not read yet: for a
/// caller that must be able to cancel it meanwhile, as an aggregate's
/// schema comes with its one row, at its end.
pub(crate) struct StartedArrow {
    pub(super) result: GrpcResult,
    pub(super) trace: StatementTrace,
}

impl StartedArrow {
    /// Cancels this query, and no other.
    pub(crate) fn cancel_handle(&self) -> hyperdb_api_core::grpc::GrpcCancelHandle {
        self.result.cancel_handle()
    }

    /// Reads on until the schema is known.
    pub(crate) async fn batches(self) -> Result<AsyncGrpcArrowBatches> {
        AsyncGrpcArrowBatches::new(self.result, self.trace).await
    }
}

/// A gRPC query result as Arrow [`RecordBatch`]es; from
/// [`AsyncGrpcConnection::query_arrow`](super::AsyncGrpcConnection::query_arrow).
/// Read with `next()` or turn into a `Stream` with `into_stream()`.
#[derive(Debug)]
pub struct AsyncGrpcArrowBatches {
    result: GrpcResult,
    decoder: ArrowDecoder,
    trace: StatementTrace,
}

impl AsyncGrpcArrowBatches {
    /// Reads until the schema is known (it may bring the first batch); the
    /// stream follows the statement in `trace`.
    pub(crate) async fn new(
        result: GrpcResult,
        trace: StatementTrace,
    ) -> Result<AsyncGrpcArrowBatches> {
        let mut batches = AsyncGrpcArrowBatches {
            result,
            decoder: ArrowDecoder::default(),
            trace,
        };
        let read = batches.read_schema().await;
        batches.trace.check(read)?;
        Ok(batches)
    }

    async fn read_schema(&mut self) -> Result<()> {
        while self.decoder.schema().is_none() {
            match self.result.next_chunk().await? {
                Some(bytes) => {
                    self.trace.add(0, bytes.len() as u64);
                    self.decoder.push(bytes);
                    self.decoder.read_ahead()?;
                }
                None => {
                    self.decoder.end_input()?;
                    if self.decoder.schema().is_none() {
                        return Err(Error::Arrow(arrow_schema::ArrowError::IpcError(
                            "the gRPC result ended before its Arrow schema".into(),
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// The result's Arrow schema, known before the first batch.
    pub fn schema(&self) -> SchemaRef {
        self.decoder
            .schema()
            .cloned()
            .unwrap_or_else(|| Arc::new(ArrowSchema::empty()))
    }

    /// The server's id for this query.
    pub fn query_id(&self) -> Option<&str> {
        self.result.query_id()
    }

    /// The row count the server reported, once the stream is exhausted.
    pub fn row_count(&self) -> Option<u64> {
        self.result.row_count()
    }

    /// Cancels this query; the stream then ends with a cancelled error.
    pub async fn cancel(&self) -> Result<()> {
        Ok(self.result.cancel().await?)
    }

    /// A handle that cancels this query, and no other, from anywhere.
    pub fn cancel_handle(&self) -> hyperdb_api_core::grpc::GrpcCancelHandle {
        self.result.cancel_handle()
    }

    /// The next batch, or `None` at the end.
    pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
        let item = self.read_batch().await;
        record_batch_step(&mut self.trace, &item, self.result.row_count());
        item
    }

    async fn read_batch(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(item) = self.decoder.next_ready() {
                return item;
            }
            let e = match self.result.next_chunk().await {
                Ok(Some(bytes)) => {
                    self.trace.add(0, bytes.len() as u64);
                    self.decoder.push(bytes);
                    continue;
                }
                Ok(None) => match self.decoder.end_input() {
                    Ok(()) => continue,
                    Err(e) => e,
                },
                Err(e) => e.into(),
            };
            return Some(Err(self.decoder.fail(e)));
        }
    }

    /// The batches as a `futures` [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<RecordBatch>> + Send + 'static {
        futures_util::stream::unfold(self, |mut s| async move {
            let item = s.next().await?;
            Some((item, s))
        })
    }
}

/// A gRPC query result as raw Arrow IPC stream bytes (hyperd's messages as
/// they arrive, then an end-of-stream marker); from
/// [`AsyncGrpcConnection::query_arrow_ipc`](super::AsyncGrpcConnection::query_arrow_ipc).
#[derive(Debug)]
pub struct AsyncGrpcArrowIpcChunks {
    result: GrpcResult,
    eos_sent: bool,
    trace: StatementTrace,
}

impl AsyncGrpcArrowIpcChunks {
    /// The chunks of `result`, following the statement in `trace`.
    pub(crate) fn new(result: GrpcResult, trace: StatementTrace) -> AsyncGrpcArrowIpcChunks {
        AsyncGrpcArrowIpcChunks {
            result,
            eos_sent: false,
            trace,
        }
    }

    /// The server's id for this query.
    pub fn query_id(&self) -> Option<&str> {
        self.result.query_id()
    }

    /// A handle that cancels this query, and no other, from anywhere.
    pub fn cancel_handle(&self) -> hyperdb_api_core::grpc::GrpcCancelHandle {
        self.result.cancel_handle()
    }

    /// The row count the server reported, once the stream is exhausted.
    pub fn row_count(&self) -> Option<u64> {
        self.result.row_count()
    }

    /// The next chunk, or `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Bytes>> {
        if self.eos_sent {
            return None;
        }
        match self.result.next_chunk().await {
            Ok(Some(bytes)) => {
                self.trace.add(0, bytes.len() as u64);
                Some(Ok(bytes))
            }
            Ok(None) => {
                self.eos_sent = true;
                self.trace.finish(self.result.row_count());
                Some(Ok(Bytes::from_static(&EOS)))
            }
            Err(e) => {
                self.eos_sent = true;
                let e = Error::from(e);
                self.trace.fail(&e);
                Some(Err(e))
            }
        }
    }

    /// The chunks as a `futures` [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes>> + Send + 'static {
        futures_util::stream::unfold(self, |mut s| async move {
            let item = s.next().await?;
            Some((item, s))
        })
    }
}

/// A gRPC query result as [`Row`]s, the same type (and the same `try_get`
/// conversions) as over the PostgreSQL protocol; from
/// [`AsyncGrpcConnection::execute_query`](super::AsyncGrpcConnection::execute_query).
#[derive(Debug)]
pub struct AsyncGrpcRows {
    batches: AsyncGrpcArrowBatches,
    cursor: RowCursor,
}

impl AsyncGrpcRows {
    pub(crate) fn new(batches: AsyncGrpcArrowBatches) -> AsyncGrpcRows {
        let schema = row_schema(&batches.schema());
        AsyncGrpcRows {
            batches,
            cursor: RowCursor::new(schema),
        }
    }

    /// The result's columns, known before the first row.
    pub fn schema(&self) -> &Arc<Schema> {
        self.cursor.schema()
    }

    /// The server's id for this query.
    pub fn query_id(&self) -> Option<&str> {
        self.batches.query_id()
    }

    /// The row count the server reported, once the stream is exhausted.
    pub fn row_count(&self) -> Option<u64> {
        self.batches.row_count()
    }

    /// Cancels this query; the stream then ends with a cancelled error.
    pub async fn cancel(&self) -> Result<()> {
        self.batches.cancel().await
    }

    /// Moves to the next row of the batch at hand, without waiting for the
    /// network; `false` when the batch ran out. The row is then `current`.
    #[inline]
    pub(crate) fn step_buffered(&mut self) -> bool {
        // gRPC rows come from Arrow batches: only a `DataRow` can fail to
        // index.
        self.cursor.advance() && self.cursor.index_current().is_ok()
    }

    #[inline]
    pub(crate) fn current(&self) -> &Row {
        self.cursor.row()
    }

    /// How to read this result's rows as `T`, for a typed stream.
    pub(crate) fn plan<'r, T: FromRow<'r>>(&mut self) -> ReadPlan {
        self.cursor.plan::<T>()
    }

    /// The current row as `T`, read as `plan` says.
    #[inline]
    pub(crate) fn current_as<'r, T: FromRow<'r>>(&'r self, plan: ReadPlan) -> Result<T> {
        self.cursor.read_row(plan)
    }

    /// The next row, lent until the next call; `None` at the end.
    pub async fn next_row(&mut self) -> Option<Result<&Row>> {
        let step = read_rows!(
            self.cursor,
            self.cursor.index_current().map(Ok),
            self.refill().await,
            malformed(e) => e
        )?;
        Some(step.map(|()| self.cursor.row()))
    }

    /// Fetches the next batch once the one at hand ran out; `false` once
    /// the stream has ended.
    async fn refill(&mut self) -> Result<bool> {
        refill_cursor!(self.cursor, {
            let step = self.batches.next().await;
            fetched_from_arrow(self.cursor.schema(), step, || self.batches.row_count())
        })
    }

    /// The next row, or `None` at the end.
    pub async fn next(&mut self) -> Option<Result<Row>> {
        self.next_row().await.map(|r| r.cloned())
    }

    /// The next row as `T`, lent until the next call like
    /// [`Rows::next_as`](crate::Rows::next_as): `T` may borrow from the row.
    pub async fn next_as<'r, T: FromRow<'r>>(&'r mut self) -> Option<Result<T>> {
        if let Err(e) = self.next_row().await? {
            return Some(Err(e));
        }
        Some(self.cursor.read_lent())
    }

    /// The rows as a `futures` [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<Row>> + Send + 'static {
        futures_util::stream::unfold(self, |mut s| async move {
            let item = s.next().await?;
            Some((item, s))
        })
    }
}
