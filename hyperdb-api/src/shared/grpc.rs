//! gRPC results as [`ResultStream`]s: an [`AsyncGrpcConnection`] is already
//! `Clone` and `'static`, so its results need no lock, only the same
//! read-ahead task and the same handle type as the PostgreSQL ones.

use arrow_array::RecordBatch;
use bytes::Bytes;

use super::sources::{ipc_schema, Peeked};
use super::stream::{BoxFuture, ResultStream, Source};
use crate::error::Result;
use crate::grpc::{AsyncGrpcArrowBatches, AsyncGrpcArrowIpcChunks, AsyncGrpcConnection};
use crate::value::Value;

impl AsyncGrpcConnection {
    /// [`AsyncGrpcConnection::query_arrow_params`] as a [`ResultStream`],
    /// read ahead of the consumer in its own task.
    pub async fn query_arrow_stream(
        &self,
        sql: &str,
        params: Vec<Value>,
    ) -> Result<ResultStream<RecordBatch>> {
        let start = self.query_arrow_params(sql, &Value::as_params(&params));
        let batches = start.await?;
        let schema = batches.schema();
        Ok(ResultStream::read_ahead(
            schema,
            batches,
            self.client().cancel_handle(),
        ))
    }

    /// [`AsyncGrpcConnection::query_arrow_ipc`] (with parameters) as a
    /// [`ResultStream`]: one IPC stream, schema first.
    pub async fn query_arrow_ipc_stream(
        &self,
        sql: &str,
        params: Vec<Value>,
    ) -> Result<ResultStream<Bytes>> {
        let start = self.query_arrow_ipc_params(sql, &Value::as_params(&params));
        let mut chunks = start.await?;
        let first = match chunks.next().await {
            Some(first) => first?,
            None => {
                return Err(crate::Error::Arrow(arrow_schema::ArrowError::IpcError(
                    "the gRPC result ended before its Arrow schema".into(),
                )))
            }
        };
        let schema = ipc_schema(&first)?;
        let chunks = Peeked {
            first: Some(first),
            chunks,
        };
        Ok(ResultStream::read_ahead(
            schema,
            chunks,
            self.client().cancel_handle(),
        ))
    }
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
