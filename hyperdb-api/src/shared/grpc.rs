//! gRPC results as [`ResultStream`]s: an [`AsyncGrpcConnection`] is already
//! `Clone` and `'static`, so its results need no lock, only the same
//! read-ahead task and the same handle type as the PostgreSQL ones.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;

use super::sources::{ipc_schema, Peeked};
use super::stream::{BoxFuture, ResultStream, Source};
use super::{CancelToken, StreamCanceller};
use crate::error::Result;
use crate::grpc::{AsyncGrpcArrowBatches, AsyncGrpcArrowIpcChunks, AsyncGrpcConnection};
use crate::value::Value;
use hyperdb_api_core::grpc::GrpcCancelHandle;

impl AsyncGrpcConnection {
    /// [`AsyncGrpcConnection::query_arrow_params`] as a [`ResultStream`],
    /// read ahead of the consumer in its own task. Its canceller and
    /// `token` cancel this query, never another running on the connection,
    /// from the moment hyperd has taken it: before its first batch too
    /// (an aggregate is stopped, not computed to its end).
    pub async fn query_arrow_stream(
        &self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<RecordBatch>> {
        let start = self.query_arrow_started(sql, &Value::as_params(&params));
        let started = start.await?;
        let canceller = watch(started.cancel_handle(), token)?;
        let batches = canceller.ended_if_failed(started.batches().await).await?;
        let schema = batches.schema();
        Ok(ResultStream::read_ahead(schema, batches, canceller))
    }

    /// [`AsyncGrpcConnection::query_arrow_ipc`] (with parameters) as a
    /// [`ResultStream`]: one IPC stream, schema first; cancelled as
    /// [`AsyncGrpcConnection::query_arrow_stream`] is.
    pub async fn query_arrow_ipc_stream(
        &self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<Bytes>> {
        let start = self.query_arrow_ipc_params(sql, &Value::as_params(&params));
        let mut chunks = start.await?;
        let canceller = watch(chunks.cancel_handle(), token)?;
        let (first, schema) = canceller
            .ended_if_failed(schema_chunk(&mut chunks).await)
            .await?;
        let chunks = Peeked {
            first: Some(first),
            chunks,
        };
        Ok(ResultStream::read_ahead(schema, chunks, canceller))
    }
}

/// The canceller of the query `handle` cancels, given to `token`; an error
/// when the token was cancelled while the query started (the caller then
/// drops the query, which cancels it).
fn watch(handle: GrpcCancelHandle, token: Option<&CancelToken>) -> Result<StreamCanceller> {
    let canceller = StreamCanceller::grpc(handle);
    if let Some(token) = token {
        token.start(canceller.clone())?;
    }
    Ok(canceller)
}

/// The first chunk of an IPC stream, which holds its schema, and that
/// schema.
async fn schema_chunk(chunks: &mut AsyncGrpcArrowIpcChunks) -> Result<(Bytes, SchemaRef)> {
    let Some(first) = chunks.next().await else {
        return Err(crate::Error::Arrow(arrow_schema::ArrowError::IpcError(
            "the gRPC result ended before its Arrow schema".into(),
        )));
    };
    let first = first?;
    let schema = ipc_schema(&first)?;
    Ok((first, schema))
}

impl Source<RecordBatch> for AsyncGrpcArrowBatches {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<RecordBatch>>> {
        Box::pin(self.next())
    }
}

impl Source<Bytes> for Peeked<AsyncGrpcArrowIpcChunks> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<Bytes>>> {
        match self.first.take() {
            Some(first) => Box::pin(std::future::ready(Some(Ok(first)))),
            None => Box::pin(self.chunks.next()),
        }
    }
}
