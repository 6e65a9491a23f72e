//! How a [`Query`] becomes a stream of record batches or IPC bytes.
//!
//! Two routes, one schema: a plain query without parameters goes the way
//! its earlier runs on the connection showed to be faster (`crate::route`:
//! hyperd's Arrow stream, `COPY (...) TO STDOUT WITH (FORMAT ARROWSTREAM)`,
//! for results of many values; `DataRow`s of a simple `Query` for few);
//! anything else (bound parameters, which COPY does not take; other
//! statements; values Arrow cannot express) is read as `DataRow`s.
//! `DataRow`s are gathered into batches by [`RowBatcher`], with the schema
//! the statement's Arrow run had when there was one.

use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use hyperdb_api_core::client::AsyncClient;

use super::stream::{BoxFuture, Source, Started};
use super::Query;
use crate::arrow::from_rows::{PastArrow, RowBatcher};
use crate::arrow::{arrow_cannot_express, ArrowDecoder, AsyncArrowBatches, AsyncArrowIpcChunks};
use crate::error::Result;
use crate::params::Params;
use crate::route::{key, Learn, ReadRoute, RouteBook, RouteKey};
use crate::rows::{arrow_eligible, Schema};
use crate::trace::StatementTrace;
use crate::value::Value;
use crate::{AsyncConnection, AsyncRows};

/// Whether the query is plain: routed by its book entry.
fn plain(q: &Query) -> bool {
    q.params.is_empty() && arrow_eligible(&q.sql)
}

pub(super) fn start_batches(
    conn: &mut AsyncConnection,
    q: Query,
) -> BoxFuture<'_, Result<Started<'_, RecordBatch>>> {
    Box::pin(async move {
        let mut trace = conn.trace("query_arrow", &q.sql, q.params.len());
        let (client, book) = conn.route_parts();
        if !plain(&q) {
            let batches =
                RowBatches::start(client, None, &q.sql, &q.params, q.past_arrow, trace).await?;
            return Ok(batches.started());
        }
        let key = key(&q.sql);
        if book.choose_batches_in(key, client.session()) == ReadRoute::Arrow {
            let start = Instant::now();
            match AsyncArrowBatches::start(client, &q.sql, &mut trace).await {
                Ok(started) => {
                    let batches = AsyncArrowBatches::resume(client, started);
                    let schema = batches.schema();
                    book.arrow_started(key, start.elapsed().as_secs_f64(), &schema);
                    let source = Learning::new(batches, Learn::new(book, key), &schema);
                    let started: Started<'_, RecordBatch> = (schema, Box::new(source));
                    return Ok(started);
                }
                Err(e) if arrow_cannot_express(&e) => book.arrow_refused(key),
                Err(e) => return trace.result(Err(e), |_| None),
            }
        }
        let routed = Some(Routed::new(book, key));
        let batches = RowBatches::start(client, routed, &q.sql, &[], q.past_arrow, trace).await?;
        Ok(batches.started())
    })
}

pub(super) fn start_ipc(
    conn: &mut AsyncConnection,
    q: Query,
) -> BoxFuture<'_, Result<Started<'_, Bytes>>> {
    Box::pin(async move {
        let mut trace = conn.trace("query_arrow_ipc", &q.sql, q.params.len());
        let (client, book) = conn.route_parts();
        let key = key(&q.sql);
        let routed = plain(&q);
        if routed && book.choose_batches_in(key, client.session()) == ReadRoute::Arrow {
            // "Cannot be converted to Arrow" comes before the first chunk:
            // read it before choosing the route. The borrow of `client`
            // ends with this block, so the fallback below may use it again.
            // The statement's trace waits here until the route is chosen,
            // and counts the first chunk itself.
            let start = Instant::now();
            let (first, rows) =
                match AsyncArrowIpcChunks::new(client, &q.sql, StatementTrace::off()).await {
                    Ok(mut chunks) => (chunks.next().await, chunks.rows()),
                    Err(e) => (Some(Err(e)), None),
                };
            match first {
                Some(Ok(first)) => {
                    trace.add(0, first.len() as u64);
                    let schema = trace.check(ipc_schema(&first))?;
                    book.arrow_started(key, start.elapsed().as_secs_f64(), &schema);
                    let chunks = Peeked {
                        first: Some(first),
                        chunks: AsyncArrowIpcChunks::resume(client, rows, trace),
                    };
                    let source = Learning::new(chunks, Learn::new(book, key), &schema);
                    let started: Started<'_, Bytes> = (schema, Box::new(source));
                    return Ok(started);
                }
                Some(Err(e)) if arrow_cannot_express(&e) => book.arrow_refused(key),
                Some(Err(e)) => return trace.result(Err(e), |_| None),
                None => {}
            }
        }
        let routed = routed.then(|| Routed::new(book, key));
        let batches =
            RowBatches::start(client, routed, &q.sql, &q.params, q.past_arrow, trace).await?;
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

/// An Arrow result's source that knows, once it ended, how many rows
/// hyperd reported.
trait Counted {
    fn rows(&self) -> Option<u64>;
}

impl Counted for AsyncArrowBatches<'_> {
    fn rows(&self) -> Option<u64> {
        AsyncArrowBatches::rows(self)
    }
}

impl Counted for Peeked<AsyncArrowIpcChunks<'_>> {
    fn rows(&self) -> Option<u64> {
        self.chunks.rows()
    }
}

/// A routed Arrow result that reports its end to the route book (the
/// `DataRow` route's rows report through `AsyncRows`).
struct Learning<'c, S> {
    inner: S,
    learn: Option<Learn<'c>>,
    columns: usize,
}

impl<'c, S> Learning<'c, S> {
    fn new(inner: S, learn: Learn<'c>, schema: &SchemaRef) -> Learning<'c, S> {
        Learning {
            inner,
            learn: Some(learn),
            columns: schema.fields().len(),
        }
    }
}

impl<T: Send, S: Source<T> + Counted> Source<T> for Learning<'_, S> {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<T>>> {
        Box::pin(async move {
            let item = self.inner.next_item().await;
            match &item {
                None => {
                    if let Some(learn) = self.learn.take() {
                        learn.finished(self.columns, self.inner.rows().unwrap_or(0));
                    }
                }
                Some(Err(e)) => {
                    if let Some(learn) = self.learn.take() {
                        learn.failed_with(e);
                    }
                }
                Some(Ok(_)) => {}
            }
            item
        })
    }

    fn read_route(&self) -> Option<ReadRoute> {
        Some(ReadRoute::Arrow)
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

/// A plain query on the `DataRow` route: its book entry, and the schema
/// its Arrow run had.
struct Routed<'c> {
    learn: Learn<'c>,
    schema: Option<SchemaRef>,
}

impl<'c> Routed<'c> {
    fn new(book: &'c mut RouteBook, key: RouteKey) -> Routed<'c> {
        Routed {
            schema: book.arrow_schema(key),
            learn: Learn::new(book, key),
        }
    }
}

impl<'c> RowBatches<'c> {
    /// Starts `sql`: a routed plain query as a simple `Query` whose rows
    /// report to its book entry; otherwise with `params` through the
    /// statement cache, or without as an unnamed statement.
    async fn start(
        client: &'c mut AsyncClient,
        routed: Option<Routed<'c>>,
        sql: &str,
        params: &[Value],
        past_arrow: PastArrow,
        mut trace: StatementTrace,
    ) -> Result<RowBatches<'c>> {
        let params = trace.check(Params::encode(&Value::as_params(params)))?;
        let slices = params.slices();
        // A COMMIT of a failed transaction goes as ROLLBACK, as every
        // call of the connection sends it.
        let sql = crate::transaction::ending(client.session().transaction_status(), sql);
        // Parameterized reads go through the statement cache, as the
        // `*_params` calls do.
        let fields = match &routed {
            Some(_) => client.query_simple(sql).await,
            None => {
                let request = trace.check(params.request(sql, &slices))?;
                if slices.is_empty() {
                    client.query(&request).await
                } else {
                    client.query_cached(&request).await
                }
            }
        };
        let fields = match fields {
            Ok(fields) => fields,
            Err(e) => {
                if let Some(routed) = routed {
                    routed.learn.failed();
                }
                return trace.result(Err(e.into()), |_| None);
            }
        };
        let mut rows = AsyncRows::wire(client, Schema::from_fields(fields), trace);
        let mut batcher = RowBatcher::new(rows.schema(), past_arrow)?;
        if let Some(routed) = routed {
            rows = rows.learning(routed.learn);
            if let Some(schema) = &routed.schema {
                batcher.adopt(schema);
            }
        }
        Ok(RowBatches {
            rows,
            batcher,
            ended: false,
        })
    }

    fn started(self) -> Started<'c, RecordBatch> {
        (self.batcher.schema().clone(), Box::new(self))
    }

    async fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        if self.ended {
            return None;
        }
        loop {
            let step = match self.rows.next_row().await {
                Some(Ok(row)) => {
                    let step = self.batcher.push(row);
                    if self.batcher.take_lent_broken() {
                        // The Arrow run's nullability no longer holds: the
                        // next run learns the statement afresh.
                        self.rows.learn_failed();
                    }
                    step
                }
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
                    // A row the batcher refused: the next run starts over.
                    self.rows.learn_failed();
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

    fn read_route(&self) -> Option<ReadRoute> {
        Some(ReadRoute::DataRows)
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

    fn read_route(&self) -> Option<ReadRoute> {
        Some(ReadRoute::DataRows)
    }
}
