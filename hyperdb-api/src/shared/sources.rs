//! How a [`Query`] becomes a stream of record batches or IPC bytes.
//!
//! Two routes, one schema: a plain query without parameters is read from
//! hyperd's Arrow stream (`COPY (...) TO STDOUT WITH (FORMAT ARROWSTREAM)`,
//! 3-4x cheaper for hyperd to produce than rows); anything else (bound
//! parameters, which COPY does not take; other statements; values Arrow
//! cannot express) is read as `DataRow`s and gathered into batches by
//! [`RowBatcher`].

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use bytes::Bytes;

use super::stream::{BoxFuture, Source, Started};
use super::Query;
use crate::arrow::from_rows::RowBatcher;
use crate::arrow::{arrow_cannot_express, ArrowDecoder, AsyncArrowBatches, AsyncArrowIpcChunks};
use crate::error::Result;
use crate::params::Params;
use crate::rows::{arrow_eligible, Schema};
use crate::trace::StatementTrace;
use crate::value::Value;
use crate::{AsyncConnection, AsyncRows};

/// Whether the query may take hyperd's Arrow route.
fn arrow_route(q: &Query) -> bool {
    q.params.is_empty() && arrow_eligible(&q.sql)
}

pub(super) fn start_batches(
    conn: &mut AsyncConnection,
    q: Query,
) -> BoxFuture<'_, Result<Started<'_, RecordBatch>>> {
    Box::pin(async move {
        let mut trace = conn.statement_trace("query_arrow", &q.sql, q.params.len());
        if arrow_route(&q) {
            match AsyncArrowBatches::start(conn.client(), &q.sql, &mut trace).await {
                Ok(started) => {
                    let batches = AsyncArrowBatches::resume(conn.client(), started);
                    let started: Started<'_, RecordBatch> = (batches.schema(), Box::new(batches));
                    return Ok(started);
                }
                Err(e) if arrow_cannot_express(&e) => {}
                Err(e) => return trace.result(Err(e), |_| None),
            }
        }
        let batches = RowBatches::start(conn, &q.sql, &q.params, trace).await?;
        let started: Started<'_, RecordBatch> =
            (batches.batcher.schema().clone(), Box::new(batches));
        Ok(started)
    })
}

pub(super) fn start_ipc(
    conn: &mut AsyncConnection,
    q: Query,
) -> BoxFuture<'_, Result<Started<'_, Bytes>>> {
    Box::pin(async move {
        let mut trace = conn.statement_trace("query_arrow_ipc", &q.sql, q.params.len());
        if arrow_route(&q) {
            // "Cannot be converted to Arrow" comes before the first chunk:
            // read it before choosing the route. The borrow of `conn` ends
            // with this block, so the fallback below may use it again. The
            // statement's trace waits here until the route is chosen, and
            // counts the first chunk itself.
            let (first, rows) = match AsyncArrowIpcChunks::new(
                conn.client(),
                &q.sql,
                StatementTrace::off(),
            )
            .await
            {
                Ok(mut chunks) => (chunks.next().await, chunks.rows()),
                Err(e) => (Some(Err(e)), None),
            };
            match first {
                Some(Ok(first)) => {
                    trace.add(0, first.len() as u64);
                    let schema = trace.check(ipc_schema(&first))?;
                    let chunks = Peeked {
                        first: Some(first),
                        chunks: AsyncArrowIpcChunks::resume(conn.client(), rows, trace),
                    };
                    let started: Started<'_, Bytes> = (schema, Box::new(chunks));
                    return Ok(started);
                }
                Some(Err(e)) if arrow_cannot_express(&e) => {}
                Some(Err(e)) => return trace.result(Err(e), |_| None),
                None => {}
            }
        }
        let batches = RowBatches::start(conn, &q.sql, &q.params, trace).await?;
        let schema = batches.batcher.schema().clone();
        let writer = StreamWriter::try_new(Vec::new(), &schema)?;
        let started: Started<'_, Bytes> = (
            schema,
            Box::new(IpcFromBatches {
                batches,
                writer: Some(writer),
            }),
        );
        Ok(started)
    })
}

/// The schema at the head of an IPC stream's first chunk.
pub(super) fn ipc_schema(first: &Bytes) -> Result<SchemaRef> {
    let mut decoder = ArrowDecoder::default();
    decoder.push(first.clone());
    decoder.read_ahead()?;
    if decoder.schema().is_none() {
        // A chunk holding only the schema completes it only at the end of
        // the input (see `ArrowDecoder::end_input`).
        decoder.end_input()?;
    }
    match decoder.schema() {
        Some(schema) => Ok(schema.clone()),
        None => Err(crate::Error::Arrow(arrow_schema::ArrowError::IpcError(
            "the first chunk of the Arrow result holds no schema".into(),
        ))),
    }
}

impl Source<RecordBatch> for AsyncArrowBatches<'_> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<RecordBatch>>> {
        Box::pin(self.next())
    }
}

/// IPC chunks whose first was read ahead (to choose the route, or for the
/// schema it holds).
pub(super) struct Peeked<S> {
    pub(super) first: Option<Bytes>,
    pub(super) chunks: S,
}

impl Source<Bytes> for Peeked<AsyncArrowIpcChunks<'_>> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<Bytes>>> {
        match self.first.take() {
            Some(first) => Box::pin(std::future::ready(Some(Ok(first)))),
            None => Box::pin(self.chunks.next()),
        }
    }
}

/// A `DataRow` result gathered into batches.
struct RowBatches<'c> {
    rows: AsyncRows<'c>,
    batcher: RowBatcher,
    ended: bool,
}

impl<'c> RowBatches<'c> {
    async fn start(
        conn: &'c mut AsyncConnection,
        sql: &str,
        params: &[Value],
        mut trace: StatementTrace,
    ) -> Result<RowBatches<'c>> {
        let params = trace.check(Params::encode(&Value::as_params(params)))?;
        let slices = params.slices();
        let client = conn.client();
        // Parameterized reads go through the statement cache, as the
        // `*_params` calls do.
        let request = params.request(sql, &slices);
        let fields = if slices.is_empty() {
            client.query(&request).await
        } else {
            client.query_cached(&request).await
        };
        let fields = trace.check(fields.map_err(Into::into))?;
        let rows = AsyncRows::wire(client, Schema::from_fields(fields), trace);
        let batcher = RowBatcher::new(rows.schema())?;
        Ok(RowBatches {
            rows,
            batcher,
            ended: false,
        })
    }

    async fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.ended {
            return None;
        }
        loop {
            let step = match self.rows.next_row().await {
                Some(Ok(row)) => self.batcher.push(row),
                Some(Err(e)) => Err(e),
                None => {
                    self.ended = true;
                    self.batcher.finish()
                }
            };
            match step {
                Ok(Some(batch)) => return Some(Ok(batch)),
                Ok(None) if self.ended => return None,
                Ok(None) => {}
                Err(e) => {
                    self.ended = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Source<RecordBatch> for RowBatches<'_> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<RecordBatch>>> {
        Box::pin(self.next_batch())
    }
}

/// Batches written as one IPC stream: the schema with the first chunk,
/// the end-of-stream marker with the last.
struct IpcFromBatches<'c> {
    batches: RowBatches<'c>,
    /// `None` once finished.
    writer: Option<StreamWriter<Vec<u8>>>,
}

impl IpcFromBatches<'_> {
    async fn next_chunk(&mut self) -> Option<Result<Bytes>> {
        let writer = self.writer.as_mut()?;
        let (step, last) = match self.batches.next_batch().await {
            Some(Ok(batch)) => (writer.write(&batch), false),
            Some(Err(e)) => {
                self.writer = None;
                return Some(Err(e));
            }
            None => (writer.finish(), true),
        };
        if let Err(e) = step {
            self.writer = None;
            return Some(Err(e.into()));
        }
        let bytes = Bytes::from(std::mem::take(writer.get_mut()));
        if last {
            self.writer = None;
        }
        Some(Ok(bytes))
    }
}

impl Source<Bytes> for IpcFromBatches<'_> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<Bytes>>> {
        Box::pin(self.next_chunk())
    }
}
