//! Reading one query's result in any transfer mode, as a sequence of Arrow
//! IPC stream bytes: the schema message first, then record batches (hyperd
//! sends no end-of-stream marker).
//!
//! The rules live in [`Progress`] (no I/O, unit-tested); [`GrpcResult`]
//! only moves messages. Measured on hyperd 0.0.26963:
//!
//! * Every `ExecuteQuery` stream starts with a `QueryStatus` carrying the
//!   query id, then the schema as a `binary_part` with 0 rows, in every mode.
//! * SYNC: then all record batches, then a final status.
//! * ADAPTIVE: chunk 0 inline, then a status; when it is not final, the
//!   remaining chunks come from `GetQueryResult(chunk_id = 1..)`.
//! * ASYNC: only the status; every chunk from `GetQueryResult`.
//! * A chunk is ~16 MiB of batches (`result_target_chunk_size`) sent as
//!   ~4 MiB messages; `GetQueryInfo(streaming)` reports each new chunk as
//!   it is produced, so chunks are read while the query still runs.
//! * `RESULTS_PRODUCED` already carries the final chunk and row counts;
//!   `FINISHED` follows.
//!
//! One message is held at a time: memory stays bounded by the message size
//! and the HTTP/2 windows, whatever the result size.

use bytes::Bytes;
use tonic::Streaming;

use super::client::{lock, GrpcClient};
use super::deadline::{until, QueryDeadline, CANCEL_WAIT};
use super::error::status_to_error;
use super::proto::execute_query_response::Result as ExecPart;
use super::proto::query_info::Content;
use super::proto::query_result::Result as ResultPart;
use super::proto::query_result_param::RequestedData;
use super::proto::query_status::CompletionStatus;
use super::proto::{
    ExecuteQueryResponse, OutputFormat, QueryInfo, QueryInfoParam, QueryResult, QueryResultParam,
    QueryStatus,
};
use super::query::TransferMode;
use crate::error::{Error, Result};

/// Pause before asking for the status again after a status stream ended
/// without news.
const REPOLL_DELAY: std::time::Duration = std::time::Duration::from_millis(10);

/// The transfer-mode rules: what has arrived and what to ask for next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    mode: TransferMode,
    pub(crate) query_id: Option<String>,
    /// Chunks the server has reported so far.
    chunk_count: u64,
    /// Rows the server reported in its last status.
    row_count: u64,
    /// The last status was final (`RESULTS_PRODUCED` or `FINISHED`).
    complete: bool,
    /// The next chunk to fetch with `GetQueryResult`.
    next_chunk: u64,
    /// Rows received so far.
    pub(crate) rows: u64,
    /// Some bytes (the schema) arrived.
    schema_seen: bool,
    /// Record batches arrived on the `ExecuteQuery` stream.
    inline_rows: bool,
}

/// What [`GrpcResult`] must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// `GetQueryResult` for this chunk (`omit_schema` unless no schema came yet).
    Fetch { chunk: u64, omit_schema: bool },
    /// Wait for a status with more chunks (`GetQueryInfo` streaming).
    Poll,
    /// The result is complete.
    Done,
}

impl Progress {
    pub(crate) fn new(mode: TransferMode) -> Progress {
        Progress {
            mode,
            query_id: None,
            chunk_count: 0,
            row_count: 0,
            complete: false,
            next_chunk: 0,
            rows: 0,
            schema_seen: false,
            inline_rows: false,
        }
    }

    pub(crate) fn on_status(&mut self, status: &QueryStatus) {
        if self.query_id.is_none() && !status.query_id.is_empty() {
            self.query_id = Some(status.query_id.clone());
        }
        self.chunk_count = self.chunk_count.max(status.chunk_count);
        self.row_count = status.row_count;
        self.complete = matches!(
            status.completion_status(),
            CompletionStatus::ResultsProduced | CompletionStatus::Finished
        );
    }

    /// A result part of `rows` rows arrived; `inline` when on `ExecuteQuery`.
    pub(crate) fn on_part(&mut self, rows: u64, inline: bool) {
        self.schema_seen = true;
        self.rows += rows;
        if inline && rows > 0 {
            self.inline_rows = true;
        }
    }

    /// The `ExecuteQuery` stream ended. An ADAPTIVE stream that carried
    /// rows carried exactly chunk 0 (measured; the final row count check
    /// catches it should that ever change).
    pub(crate) fn execute_ended(&mut self) -> Result<Next> {
        match self.mode {
            TransferMode::Sync => {
                self.check_rows()?;
                Ok(Next::Done)
            }
            _ => {
                self.next_chunk = u64::from(self.inline_rows);
                self.next()
            }
        }
    }

    /// A chunk's stream ended.
    pub(crate) fn chunk_ended(&mut self) -> Result<Next> {
        self.next()
    }

    /// What to do now that every fetched chunk has been read.
    pub(crate) fn next(&mut self) -> Result<Next> {
        if self.next_chunk < self.chunk_count {
            let chunk = self.next_chunk;
            self.next_chunk += 1;
            return Ok(Next::Fetch {
                chunk,
                omit_schema: self.schema_seen,
            });
        }
        if self.complete {
            self.check_rows()?;
            return Ok(Next::Done);
        }
        Ok(Next::Poll)
    }

    /// A status from polling says there is something new to do.
    pub(crate) fn has_news(&self) -> bool {
        self.complete || self.next_chunk < self.chunk_count
    }

    fn check_rows(&self) -> Result<()> {
        if self.complete && self.rows != self.row_count {
            return Err(Error::protocol(format!(
                "hyperd reported {} rows for query {} but {} arrived",
                self.row_count,
                self.query_id.as_deref().unwrap_or("?"),
                self.rows
            )));
        }
        Ok(())
    }

    /// The server's row count once the result is complete.
    pub(crate) fn row_count(&self) -> Option<u64> {
        self.complete.then_some(self.row_count)
    }
}

#[derive(Debug)]
enum State {
    Execute(Streaming<ExecuteQueryResponse>),
    Chunk(Streaming<QueryResult>),
    Poll(Streaming<QueryInfo>),
    Decide(Next),
    Done,
}

/// One query's result as Arrow IPC stream bytes; from
/// [`GrpcClient::execute`].
///
/// Dropping it before the end is fine: nothing blocks, and a query still
/// running on the server is cancelled in the background (when a tokio
/// runtime is still around to send the `CancelQuery`).
#[derive(Debug)]
pub struct GrpcResult {
    client: GrpcClient,
    generation: u64,
    progress: Progress,
    state: State,
    runtime: Option<tokio::runtime::Handle>,
    deadline: Option<QueryDeadline>,
}

impl GrpcResult {
    pub(crate) fn new(
        client: GrpcClient,
        generation: u64,
        mode: TransferMode,
        stream: Streaming<ExecuteQueryResponse>,
        deadline: Option<QueryDeadline>,
    ) -> GrpcResult {
        GrpcResult {
            client,
            generation,
            progress: Progress::new(mode),
            state: State::Execute(stream),
            runtime: tokio::runtime::Handle::try_current().ok(),
            deadline,
        }
    }

    /// Reads the first status (the query id); cancels at once if a cancel
    /// came while the query was starting.
    pub(crate) async fn start(&mut self) -> Result<()> {
        let State::Execute(stream) = &mut self.state else {
            return Ok(());
        };
        let first = match until(self.deadline.as_ref(), stream.message()).await {
            Ok(Ok(first)) => first,
            Ok(Err(status)) => return Err(self.fail(status_to_error(status))),
            Err(e) => return Err(self.fail(e)),
        };
        match first.and_then(|m| m.result) {
            Some(ExecPart::QueryInfo(QueryInfo {
                content: Some(Content::QueryStatus(status)),
                ..
            })) => self.progress.on_status(&status),
            _ => {
                let e = Error::protocol("hyperd's ExecuteQuery did not start with a query status");
                return Err(self.fail(e));
            }
        }
        let cancel = {
            let mut current = lock(&self.client.current);
            if current.generation != self.generation {
                false
            } else {
                current.query_id = self.progress.query_id.clone();
                std::mem::take(&mut current.cancel_requested)
            }
        };
        if cancel {
            self.cancel().await?;
        }
        Ok(())
    }

    /// The server's id for this query.
    pub fn query_id(&self) -> Option<&str> {
        self.progress.query_id.as_deref()
    }

    /// A handle that cancels this query, and no other, from anywhere:
    /// while other queries run on the same client too (the client's own
    /// handle cancels whichever started last).
    pub fn cancel_handle(&self) -> super::client::GrpcCancelHandle {
        super::client::GrpcCancelHandle::for_query(
            self.client.clone(),
            self.progress.query_id.clone(),
        )
    }

    /// Rows received so far.
    pub fn rows_received(&self) -> u64 {
        self.progress.rows
    }

    /// The row count the server reported, once the result is complete.
    pub fn row_count(&self) -> Option<u64> {
        self.progress.row_count()
    }

    /// Cancels this query on the server; the stream then ends with a
    /// cancelled error (SQLSTATE 57014).
    pub async fn cancel(&self) -> Result<()> {
        match &self.progress.query_id {
            Some(id) => self.client.cancel(id).await,
            None => Ok(()),
        }
    }

    /// The next piece of the Arrow IPC stream (the first is the schema), or
    /// `None` at the end. After an error the result is over; after the
    /// query timeout's error the query is being cancelled on the server.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        let deadline = self.deadline;
        match until(deadline.as_ref(), self.read_chunk()).await {
            Ok(read) => read,
            Err(e) => {
                self.abandon();
                Err(self.fail(e))
            }
        }
    }

    async fn read_chunk(&mut self) -> Result<Option<Bytes>> {
        loop {
            let step = match &mut self.state {
                State::Done => return Ok(None),
                State::Execute(stream) => match stream.message().await {
                    Ok(Some(message)) => match message.result {
                        Some(ExecPart::QueryResult(part)) => {
                            self.progress.on_part(part.result_part_row_count, true);
                            Step::Data(binary(part))
                        }
                        Some(ExecPart::QueryInfo(info)) => {
                            self.on_info(info);
                            Step::Continue
                        }
                        None => Step::Continue,
                    },
                    Ok(None) => Step::Next(self.progress.execute_ended()),
                    Err(status) => Step::Fail(status_to_error(status)),
                },
                State::Chunk(stream) => match stream.message().await {
                    Ok(Some(part)) => {
                        self.progress.on_part(part.result_part_row_count, false);
                        Step::Data(binary(part))
                    }
                    Ok(None) => Step::Next(self.progress.chunk_ended()),
                    Err(status) => Step::Fail(status_to_error(status)),
                },
                State::Poll(stream) => match stream.message().await {
                    Ok(Some(info)) => {
                        self.on_info(info);
                        if self.progress.has_news() {
                            Step::Next(self.progress.next())
                        } else {
                            Step::Continue
                        }
                    }
                    // The status stream ended without news: ask again,
                    // without spinning should the server keep doing that.
                    Ok(None) => {
                        tokio::time::sleep(REPOLL_DELAY).await;
                        Step::Next(Ok(Next::Poll))
                    }
                    Err(status) => Step::Fail(status_to_error(status)),
                },
                State::Decide(next) => {
                    let next = *next;
                    match self.open(next).await {
                        Ok(state) => {
                            self.state = state;
                            Step::Continue
                        }
                        Err(e) => Step::Fail(e),
                    }
                }
            };
            match step {
                Step::Continue => {}
                Step::Data(Some(bytes)) if !bytes.is_empty() => return Ok(Some(bytes)),
                Step::Data(_) => {}
                Step::Next(Ok(next)) => self.state = State::Decide(next),
                Step::Next(Err(e)) | Step::Fail(e) => {
                    let e = self.own_error(e).await;
                    return Err(self.fail(e));
                }
            }
        }
    }

    fn on_info(&mut self, info: QueryInfo) {
        if let Some(Content::QueryStatus(status)) = info.content {
            self.progress.on_status(&status);
        }
    }

    /// Opens the stream for `next`.
    async fn open(&mut self, next: Next) -> Result<State> {
        let id = self
            .progress
            .query_id
            .clone()
            .ok_or_else(|| Error::protocol("hyperd sent no query id"))?;
        let mut rpc = self.client.rpc.clone();
        match next {
            Next::Done => {
                self.client.end(self.generation);
                Ok(State::Done)
            }
            Next::Fetch { chunk, omit_schema } => {
                let param = QueryResultParam {
                    query_id: id.clone(),
                    output_format: OutputFormat::ArrowIpc.into(),
                    requested_data: Some(RequestedData::ChunkId(chunk)),
                    omit_schema,
                };
                let request = self.client.request(param, Some(&id))?;
                let response = rpc.get_query_result(request).await;
                Ok(State::Chunk(
                    response.map_err(status_to_error)?.into_inner(),
                ))
            }
            Next::Poll => Ok(State::Poll(self.query_info(&id, true).await?)),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        self.state = State::Done;
        self.client.end(self.generation);
        e
    }

    /// `GetQueryInfo` for query `id`: its status as it changes
    /// (`streaming`), or as it is now.
    async fn query_info(&self, id: &str, streaming: bool) -> Result<Streaming<QueryInfo>> {
        let param = QueryInfoParam {
            query_id: id.to_owned(),
            streaming,
            schema_output_format: OutputFormat::ArrowIpc.into(),
        };
        let request = self.client.request(param, Some(id))?;
        let response = self.client.rpc.clone().get_query_info(request).await;
        Ok(response.map_err(status_to_error)?.into_inner())
    }

    /// `e`, or the query's own error when `e` is hyperd's answer to a
    /// chunk request of a query that failed meanwhile: 55000 "query
    /// execution has failed", hinting to "Call GetQueryInfo to get the
    /// error message" (measured in ASYNC mode, where an error after the
    /// first rows came as 55000 in 7 of 12 runs). The status stream of
    /// that query ends in its error (22012, ...), read here within
    /// [`CANCEL_WAIT`].
    async fn own_error(&self, e: Error) -> Error {
        let asks_for_info = e.db_error().is_some_and(|db| {
            db.code == Some(crate::error::SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE)
                && db
                    .hint
                    .as_deref()
                    .is_some_and(|h| h.contains("GetQueryInfo"))
        });
        let (true, Some(id)) = (asks_for_info, self.progress.query_id.as_deref()) else {
            return e;
        };
        let read = async {
            let mut infos = self.query_info(id, false).await?;
            while infos.message().await.map_err(status_to_error)?.is_some() {}
            Ok::<(), Error>(())
        };
        match tokio::time::timeout(CANCEL_WAIT, read).await {
            Ok(Err(own)) if own.db_error().is_some_and(|db| db.code.is_some()) => own,
            _ => e,
        }
    }
}

enum Step {
    Continue,
    Data(Option<Bytes>),
    Next(Result<Next>),
    Fail(Error),
}

fn binary(part: QueryResult) -> Option<Bytes> {
    match part.result {
        Some(ResultPart::BinaryPart(p)) => Some(p.data),
        _ => None,
    }
}

impl GrpcResult {
    /// Lets go of a result not read to its end: a query still running on
    /// the server is cancelled in the background. Never blocks: the cancel
    /// runs whenever the runtime next runs tasks (or not at all if it is
    /// gone by then), for at most [`CANCEL_WAIT`] should the link be dead.
    fn abandon(&mut self) {
        if matches!(self.state, State::Done) {
            return;
        }
        self.client.end(self.generation);
        if self.progress.row_count().is_some() {
            // The server has produced everything: nothing left to stop.
            return;
        }
        let (Some(runtime), Some(id)) = (&self.runtime, self.progress.query_id.clone()) else {
            return;
        };
        let client = self.client.clone();
        runtime.spawn(async move {
            let outcome = tokio::time::timeout(CANCEL_WAIT, client.cancel(&id)).await;
            if let Ok(Err(e)) | Err(e) = outcome.map_err(|_| Error::timeout("no answer")) {
                tracing::debug!(query_id = %id, error = %e, "cancelling an abandoned gRPC query");
            }
        });
    }
}

impl Drop for GrpcResult {
    fn drop(&mut self) {
        self.abandon();
    }
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
