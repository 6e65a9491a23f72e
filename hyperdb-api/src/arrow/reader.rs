//! Query results as Arrow: `COPY (query) TO STDOUT WITH (FORMAT
//! ARROWSTREAM)` read through a streaming IPC decoder.
//!
//! Each CopyData payload is a slice of the receive buffer; it goes to
//! [`ArrowDecoder`] as an `arrow_buffer::Buffer` over the same memory, so
//! decoded batches point into what was received instead of a copy. The
//! session receives large payloads 16-byte aligned (`Session::prepare_read`),
//! since arrow copies any column buffer not aligned for its type.
//! One batch is held at a time: memory stays constant for any result size.
//! Dropping a stream early is fine: the connection drains the rest before
//! its next request.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use bytes::Bytes;
use hyperdb_api_core::client::Client;
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::protocol::ops::CopyOutEvent;
use hyperdb_api_core::protocol::Session;

use super::decoder::ArrowDecoder;
use super::EOS;
use crate::error::{DbError, Error, Result, SqlState};
use crate::files::sql::{copy_query, QUERY_OFFSET};
use crate::trace::StatementTrace;

/// `COPY (sql) TO STDOUT WITH (FORMAT ARROWSTREAM)`.
pub(crate) fn copy_out_sql(sql: &str) -> String {
    format!("{} TO STDOUT WITH (FORMAT ARROWSTREAM)", copy_query(sql))
}

/// A server error about the wrapped statement, with its position moved back
/// onto the caller's SQL: errors read the same whichever path ran the query.
fn from_server(e: hyperdb_api_core::Error) -> Error {
    Error::Client(e.shift_position(QUERY_OFFSET))
}

/// Whether hyperd refused the COPY before running it, at a place in its
/// text (a syntax error, an unknown name), and the session is idle. Such an
/// error's DETAIL quotes the COPY around that place (`line 1, column 44:
/// ...GROUP BY gg) TO STDOUT WITH (FORMAT A...`), which no position shift
/// turns into the caller's SQL.
fn refused_in_text(e: &hyperdb_api_core::Error, session: &Session) -> bool {
    e.db_error().is_some_and(|d| d.position.is_some())
        && session.transaction_status() == TransactionStatus::Idle
}

/// The error of an Arrow read of empty SQL text (42601, as hyperd reports
/// blank text).
fn empty_query() -> Error {
    Error::server(DbError::new(
        Some(SqlState::SYNTAX_ERROR),
        "the query text is empty: an Arrow read needs a query",
    ))
}

/// Sends `COPY (sql) TO STDOUT WITH (FORMAT ARROWSTREAM)`. When hyperd
/// refuses it in its text, the error is the one parsing the caller's own
/// SQL gives (one more round trip, on that path only): word for word what
/// the `DataRow` route reports. If that SQL parses (the refusal was the
/// COPY's own), the COPY's error stands, its position moved onto the SQL.
/// In a transaction the COPY's error stands too: hyperd would answer the
/// Parse with "current transaction is aborted".
macro_rules! start_copy {
    ($client:expr, $sql:expr $(, $aw:tt)*) => {{
        let client = $client;
        // Checked before the wrap, so that the offset is the caller's.
        if let Err(e) = hyperdb_api_core::protocol::frontend::check_cstr($sql, "query text") {
            Err(Error::Client(e))
        } else if $sql.is_empty() {
            // The COPY of nothing is a syntax error, and hyperd describes an
            // empty statement without its parameters, which the fallback's
            // `prepare` took for a broken stream: the connection was lost.
            Err(empty_query())
        } else {
            match client.copy_out(&copy_out_sql($sql)) $(.$aw)* {
                Ok(_) => Ok(()),
                Err(e) if refused_in_text(&e, client.session()) => {
                    match client.prepare("", $sql, &[]) $(.$aw)* {
                        Err(parsed) => Err(Error::Client(parsed)),
                        Ok(_) => Err(from_server(e)),
                    }
                }
                Err(e) => Err(from_server(e)),
            }
        }
    }};
}

/// The shared surface of [`ArrowBatches`] and [`AsyncArrowBatches`]; each
/// needs fields `client`, `decoder` and `rows` (`Some` once the server
/// ended the result).
macro_rules! batch_reader_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// The result's Arrow schema, known before the first batch.
        pub fn schema(&self) -> SchemaRef {
            self.decoder.schema().cloned().unwrap_or_else(|| Arc::new(Schema::empty()))
        }

        /// The row count the server reported, once the stream is exhausted.
        pub fn rows(&self) -> Option<u64> {
            self.rows
        }

        /// The statement's trace, handed on to a stream that continues
        /// this one's result (`resume`) or back to the caller.
        fn take_trace(&mut self) -> StatementTrace {
            std::mem::take(&mut self.trace)
        }

        /// Reads until the schema is known (it may bring the first batch).
        $($async_kw)? fn read_schema(&mut self) -> Result<()> {
            while self.decoder.schema().is_none() {
                match self.client.next_copy_out() $($aw)* .map_err(from_server)? {
                    CopyOutEvent::Data(data) => {
                        self.trace.add(0, data.len() as u64);
                        self.decoder.push(data);
                        self.decoder.read_ahead()?;
                    }
                    CopyOutEvent::Done { rows } => {
                        self.rows = Some(rows);
                        self.decoder.end_input()?;
                        if self.decoder.schema().is_none() {
                            return Err(unexpected(&CopyOutEvent::Done { rows }, "before the Arrow schema"));
                        }
                    }
                    other => return Err(unexpected(&other, "before the Arrow schema")),
                }
            }
            Ok(())
        }

        $($async_kw)? fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
            let item = self.read_batch() $($aw)*;
            record_batch_step(&mut self.trace, &item, self.rows);
            item
        }

        $($async_kw)? fn read_batch(&mut self) -> Option<Result<RecordBatch>> {
            loop {
                if let Some(item) = self.decoder.next_ready() {
                    return item;
                }
                let e = match self.client.next_copy_out() $($aw)* {
                    Ok(CopyOutEvent::Data(data)) => {
                        self.trace.add(0, data.len() as u64);
                        self.decoder.push(data);
                        continue;
                    }
                    Ok(CopyOutEvent::Done { rows }) => {
                        self.rows = Some(rows);
                        match self.decoder.end_input() {
                            Ok(()) => continue,
                            Err(e) => e,
                        }
                    }
                    Ok(other) => unexpected(&other, "in an Arrow result"),
                    Err(e) => from_server(e),
                };
                return Some(Err(self.decoder.fail(e)));
            }
        }
    };
}

/// The shared surface of the raw IPC chunk streams.
macro_rules! chunk_reader_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// The row count the server reported, once the stream is exhausted.
        pub fn rows(&self) -> Option<u64> {
            self.rows
        }

        $($async_kw)? fn next_chunk(&mut self) -> Option<Result<Bytes>> {
            if self.eos_sent {
                return None;
            }
            if self.rows.is_some() {
                self.eos_sent = true;
                self.trace.finish(self.rows);
                return Some(Ok(Bytes::from_static(&EOS)));
            }
            let e = match self.client.next_copy_out() $($aw)* {
                Ok(CopyOutEvent::Data(data)) => {
                    self.trace.add(0, data.len() as u64);
                    return Some(Ok(data));
                }
                Ok(CopyOutEvent::Done { rows }) => {
                    self.rows = Some(rows);
                    self.eos_sent = true;
                    self.trace.finish(Some(rows));
                    return Some(Ok(Bytes::from_static(&EOS)));
                }
                Ok(other) => unexpected(&other, "in an Arrow result"),
                Err(e) => from_server(e),
            };
            self.eos_sent = true;
            self.trace.fail(&e);
            Some(Err(e))
        }
    };
}

/// Records one step of a batch stream in its statement's trace: a batch's
/// rows, the stream's error, or its end (`total`: the server's row count,
/// when it reported one).
#[inline]
pub(crate) fn record_batch_step(
    trace: &mut StatementTrace,
    item: &Option<Result<RecordBatch>>,
    total: Option<u64>,
) {
    match item {
        Some(Ok(batch)) => trace.add(batch.num_rows() as u64, 0),
        Some(Err(e)) => trace.fail(e),
        None => trace.finish(total),
    }
}

fn unexpected(event: &CopyOutEvent, context: &str) -> Error {
    let what = match event {
        CopyOutEvent::Started(_) => "a second CopyOutResponse",
        CopyOutEvent::Data(_) => "data",
        CopyOutEvent::Done { .. } => "the end of the result",
    };
    Error::Arrow(arrow_schema::ArrowError::IpcError(format!(
        "unexpected {what} {context}"
    )))
}

/// A result whose schema has been read, detached from the connection borrow
/// so a caller can still choose another path if starting failed
/// ([`ArrowBatches::start`] / [`ArrowBatches::resume`]).
#[derive(Debug)]
pub(crate) struct StartedBatches {
    decoder: ArrowDecoder,
    rows: Option<u64>,
    trace: StatementTrace,
}

impl StartedBatches {
    /// Whether [`Rows`](crate::Rows) can read every column of the result
    /// from Arrow. A column whose Arrow type has no Hyper type here (an
    /// ARRAY, which hyperd sends as an Arrow list) would read as an empty
    /// value without an error, where its `DataRow`s carry its bytes, as
    /// Tableau's API reads them: such a result goes as rows.
    pub(crate) fn rows_read_every_column(&self) -> bool {
        self.decoder
            .schema()
            .is_none_or(|s| super::every_field_has_sql_type(s))
    }

    /// Its trace, for the run that takes the statement over.
    pub(crate) fn into_trace(self) -> StatementTrace {
        self.trace
    }
}

/// Whether starting an Arrow result failed only because hyperd cannot
/// express a value (e.g. `TIME '24:00:00'`: "cannot be converted to
/// Arrow") or a type (a UUID: "unsupported SQL type during conversion to
/// Arrow") in Arrow: the same query still works as DataRows.
pub(crate) fn arrow_cannot_express(e: &Error) -> bool {
    matches!(e, Error::Client(c) if {
        let m = c.message();
        m.contains("converted to Arrow") || m.contains("conversion to Arrow")
    })
}

/// A query result as an `Iterator` of Arrow [`RecordBatch`]es; from
/// [`Connection::query_arrow`](crate::Connection::query_arrow).
#[derive(Debug)]
pub struct ArrowBatches<'c> {
    client: &'c mut Client,
    decoder: ArrowDecoder,
    rows: Option<u64>,
    trace: StatementTrace,
}

impl<'c> ArrowBatches<'c> {
    /// Starts the result of `sql` and reads its schema. The stream takes
    /// over `trace`; on error it is left to the caller, who may run the
    /// statement another way or record the error.
    pub(crate) fn new(
        client: &'c mut Client,
        sql: &str,
        trace: &mut StatementTrace,
    ) -> Result<ArrowBatches<'c>> {
        start_copy!(&mut *client, sql)?;
        let mut batches = ArrowBatches {
            client,
            decoder: ArrowDecoder::default(),
            rows: None,
            trace: std::mem::take(trace),
        };
        if let Err(e) = batches.read_schema() {
            *trace = batches.take_trace();
            return Err(e);
        }
        Ok(batches)
    }

    /// Starts the result and reads its schema, borrowing `client` only
    /// for the duration of the call; see [`new`](Self::new) for `trace`.
    pub(crate) fn start(
        client: &mut Client,
        sql: &str,
        trace: &mut StatementTrace,
    ) -> Result<StartedBatches> {
        let mut b = ArrowBatches::new(client, sql, trace)?;
        Ok(StartedBatches {
            trace: b.take_trace(),
            decoder: std::mem::take(&mut b.decoder),
            rows: b.rows,
        })
    }

    /// Continues a started result on the connection it was started on.
    pub(crate) fn resume(client: &'c mut Client, started: StartedBatches) -> ArrowBatches<'c> {
        ArrowBatches {
            client,
            decoder: started.decoder,
            rows: started.rows,
            trace: started.trace,
        }
    }

    batch_reader_methods!(;);
}

impl Iterator for ArrowBatches<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        self.next_batch()
    }
}

/// A query result as raw Arrow IPC stream bytes, for callers that forward
/// them: the server's CopyData payloads as they arrive (no copy), then an
/// end-of-stream marker.
#[derive(Debug)]
pub struct ArrowIpcChunks<'c> {
    client: &'c mut Client,
    rows: Option<u64>,
    eos_sent: bool,
    trace: StatementTrace,
}

impl<'c> ArrowIpcChunks<'c> {
    /// Starts the result of `sql`, followed by `trace`.
    pub(crate) fn new(
        client: &'c mut Client,
        sql: &str,
        mut trace: StatementTrace,
    ) -> Result<ArrowIpcChunks<'c>> {
        trace.check(start_copy!(&mut *client, sql))?;
        Ok(ArrowIpcChunks {
            client,
            rows: None,
            eos_sent: false,
            trace,
        })
    }

    chunk_reader_methods!(;);
}

impl Iterator for ArrowIpcChunks<'_> {
    type Item = Result<Bytes>;

    fn next(&mut self) -> Option<Result<Bytes>> {
        self.next_chunk()
    }
}

#[cfg(feature = "async")]
pub use async_readers::{AsyncArrowBatches, AsyncArrowIpcChunks};

#[cfg(feature = "async")]
mod async_readers {
    use super::*;
    use futures_core::Stream;
    use hyperdb_api_core::client::AsyncClient;

    /// [`ArrowBatches`] for [`crate::AsyncConnection`]: read with `next()`
    /// or turn into a `Stream` with `into_stream()`. Cancel-safe: dropped
    /// before its end, the rest is cancelled by the connection's next
    /// request. It yields by the bytes it reads (~1 MiB per task budget),
    /// also when they were already buffered.
    #[derive(Debug)]
    pub struct AsyncArrowBatches<'c> {
        client: &'c mut AsyncClient,
        decoder: ArrowDecoder,
        rows: Option<u64>,
        trace: StatementTrace,
    }

    impl<'c> AsyncArrowBatches<'c> {
        /// See [`ArrowBatches::new`].
        pub(crate) async fn new(
            client: &'c mut AsyncClient,
            sql: &str,
            trace: &mut StatementTrace,
        ) -> Result<Self> {
            start_copy!(&mut *client, sql, await)?;
            let mut batches = AsyncArrowBatches {
                client,
                decoder: ArrowDecoder::default(),
                rows: None,
                trace: std::mem::take(trace),
            };
            if let Err(e) = batches.read_schema().await {
                *trace = batches.take_trace();
                return Err(e);
            }
            Ok(batches)
        }

        /// See [`ArrowBatches::start`].
        pub(crate) async fn start(
            client: &mut AsyncClient,
            sql: &str,
            trace: &mut StatementTrace,
        ) -> Result<StartedBatches> {
            let mut b = AsyncArrowBatches::new(client, sql, trace).await?;
            Ok(StartedBatches {
                trace: b.take_trace(),
                decoder: std::mem::take(&mut b.decoder),
                rows: b.rows,
            })
        }

        /// See [`ArrowBatches::resume`].
        pub(crate) fn resume(client: &'c mut AsyncClient, started: StartedBatches) -> Self {
            AsyncArrowBatches {
                client,
                decoder: started.decoder,
                rows: started.rows,
                trace: started.trace,
            }
        }

        batch_reader_methods!(async; .await);

        /// The next batch, or `None` at the end.
        pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
            self.next_batch().await
        }

        /// The batches as a `futures` [`Stream`].
        pub fn into_stream(self) -> impl Stream<Item = Result<RecordBatch>> + 'c {
            futures_util::stream::unfold(self, |mut s| async move {
                let item = s.next_batch().await?;
                Some((item, s))
            })
        }
    }

    /// [`ArrowIpcChunks`] for [`crate::AsyncConnection`]; dropped and
    /// yielding as [`AsyncArrowBatches`].
    #[derive(Debug)]
    pub struct AsyncArrowIpcChunks<'c> {
        client: &'c mut AsyncClient,
        rows: Option<u64>,
        eos_sent: bool,
        trace: StatementTrace,
    }

    impl<'c> AsyncArrowIpcChunks<'c> {
        /// Starts the result of `sql`, followed by `trace`.
        pub(crate) async fn new(
            client: &'c mut AsyncClient,
            sql: &str,
            mut trace: StatementTrace,
        ) -> Result<Self> {
            let started = start_copy!(&mut *client, sql, await);
            trace.check(started)?;
            Ok(AsyncArrowIpcChunks {
                client,
                rows: None,
                eos_sent: false,
                trace,
            })
        }

        /// Continues a result whose first chunks were read through another
        /// `AsyncArrowIpcChunks` on the same connection (`rows` is what that
        /// one reported, `trace` its [`take_trace`](Self::take_trace)).
        pub(crate) fn resume(
            client: &'c mut AsyncClient,
            rows: Option<u64>,
            trace: StatementTrace,
        ) -> Self {
            AsyncArrowIpcChunks {
                client,
                rows,
                eos_sent: false,
                trace,
            }
        }

        chunk_reader_methods!(async; .await);

        /// The next chunk, or `None` at the end.
        pub async fn next(&mut self) -> Option<Result<Bytes>> {
            self.next_chunk().await
        }

        /// The chunks as a `futures` [`Stream`].
        pub fn into_stream(self) -> impl Stream<Item = Result<Bytes>> + 'c {
            futures_util::stream::unfold(self, |mut s| async move {
                let item = s.next_chunk().await?;
                Some((item, s))
            })
        }
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
