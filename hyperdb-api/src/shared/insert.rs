//! [`InsertSink`]: an Arrow COPY into a table of a [`SharedConnection`]
//! (one IPC stream, all or nothing), fed piece by piece from outside.
//!
//! Why: a binding's inserter receives its rows over many calls (a Node.js
//! producer adds rows as they come). A task holds the connection and the
//! [`AsyncArrowInserter`] for the whole COPY; pieces reach it through a
//! short queue, so encoding and sending run beside the producer, and a
//! producer faster than the server waits for room instead of growing the
//! heap.
//!
//! [`SharedConnection`]: super::SharedConnection

use std::sync::atomic::Ordering;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};

use super::{ConnectionGuard, Place};
use crate::error::{Error, Result};
use crate::table_definition::TableDefinition;
use crate::{AsyncArrowInserter, TableName};

/// Pieces queued ahead of the COPY: with 64K-row batches, a few MB.
const QUEUE_DEPTH: usize = 2;

/// What an [`InsertSink`] takes.
#[derive(Debug)]
pub enum InsertPiece {
    /// A batch with the table's Arrow schema (fields matched by name).
    Batch(RecordBatch),
    /// Bytes of one Arrow IPC stream, split anywhere. Not to be mixed with
    /// batches in one insert.
    Ipc(Bytes),
}

#[derive(Debug)]
enum Message {
    Piece(InsertPiece),
    Finish,
}

/// An open Arrow COPY into one table of a
/// [`SharedConnection`](super::SharedConnection), fed piece by piece: a task
/// holds the connection and an [`AsyncArrowInserter`] for the whole COPY,
/// and pieces reach it through a queue two deep, so encoding and sending
/// run beside the producer and a faster producer waits for room.
///
/// Nothing is stored until [`InsertSink::finish`] succeeds. Dropping the
/// sink, [`InsertSink::abort`], or any error (a refused batch, a server
/// error) ends the COPY with nothing stored and the connection usable. The
/// connection is held until then: calls made on it meanwhile wait.
#[derive(Debug)]
pub struct InsertSink {
    queue: mpsc::Sender<Message>,
    outcome: Option<oneshot::Receiver<Result<u64>>>,
    definition: TableDefinition,
    schema: SchemaRef,
    /// Closed when the task ends (its sender is dropped then).
    running: watch::Receiver<()>,
}

impl Place {
    /// Starts an Arrow COPY into `table` in this place. The table's
    /// definition is the server's; when `expected` is given (the definition
    /// the caller built its rows for), its columns must match the server's
    /// by name, type and nullability ([`Error::SchemaMismatch`] otherwise),
    /// so rows are never written into columns they were not made for.
    pub async fn insert_sink(
        self,
        table: TableName,
        expected: Option<&TableDefinition>,
    ) -> Result<InsertSink> {
        let guard = self.lock().await?;
        let (queue, pieces) = mpsc::channel(QUEUE_DEPTH);
        let (opened_tx, opened) = oneshot::channel();
        let (outcome_tx, outcome) = oneshot::channel();
        let (alive, running) = watch::channel(());
        let expected = expected.cloned();
        // Started here, as a result stream's pump is (see `started`).
        tokio::spawn(super::started(async move {
            let _alive = alive;
            let result = feed(guard, &table, expected.as_ref(), pieces, opened_tx).await;
            // Nobody listens when the sink was dropped: nothing to report.
            let _ = outcome_tx.send(result);
        }));
        let definition = opened.await.map_err(|_| task_gone())??;
        let schema = SchemaRef::new(crate::arrow::arrow_schema(&definition)?);
        Ok(InsertSink {
            queue,
            outcome: Some(outcome),
            definition,
            schema,
            running,
        })
    }
}

impl InsertSink {
    /// The table as the server defines it (what the COPY writes).
    pub fn definition(&self) -> &TableDefinition {
        &self.definition
    }

    /// The Arrow schema batches must have: [`crate::arrow::arrow_schema`]
    /// of [`InsertSink::definition`].
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Queues `piece`, waiting while the queue is full. An error is the
    /// insert's own (an earlier piece was refused, the server failed the
    /// COPY): nothing is stored, and the sink is done.
    pub async fn send(&mut self, piece: InsertPiece) -> Result<()> {
        if self.queue.send(Message::Piece(piece)).await.is_err() {
            return Err(self.failure().await);
        }
        Ok(())
    }

    /// [`InsertSink::send`] for a thread outside any async runtime (it
    /// blocks while the queue is full). Panics inside a runtime.
    pub fn blocking_send(&mut self, piece: InsertPiece) -> Result<()> {
        if self.queue.blocking_send(Message::Piece(piece)).is_err() {
            let outcome = self.outcome.take().map(|o| o.blocking_recv());
            return Err(failure(outcome));
        }
        Ok(())
    }

    /// Ends the stream and commits; returns the rows stored (checked
    /// against the rows sent).
    pub async fn finish(&mut self) -> Result<u64> {
        if self.queue.send(Message::Finish).await.is_err() {
            return Err(self.failure().await);
        }
        let outcome = self.outcome.take().ok_or_else(task_gone)?;
        outcome.await.map_err(|_| task_gone())?
    }

    /// Ends the COPY, storing nothing, and waits until the connection is
    /// free for the next call. Errors only when the connection broke.
    pub async fn abort(mut self) -> Result<()> {
        let Some(outcome) = self.outcome.take() else {
            return Ok(());
        };
        drop(self);
        match outcome.await {
            Ok(Err(e)) if e.is_closed() => Err(e),
            _ => Ok(()),
        }
    }

    /// Completes once the COPY has stopped taking pieces: committed,
    /// aborted, or failed (a timeout, a cancel, a server error), with the
    /// connection free again. Owns what it waits on, so a producer can
    /// await it beside its own source: a source that stalls then learns
    /// of the failure at once instead of at its next piece.
    pub fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut running = self.running.clone();
        async move {
            // Only ever an error: the task's sender sends nothing, and is
            // dropped when the task ends.
            while running.changed().await.is_ok() {}
        }
    }

    /// The error the insert ended with, once it has
    /// [`stopped`](InsertSink::stopped) without being finished.
    pub async fn failure(&mut self) -> Error {
        let outcome = match self.outcome.take() {
            Some(outcome) => Some(outcome.await),
            None => None,
        };
        failure(outcome)
    }
}

/// The task's error from its outcome, however it was received.
fn failure(outcome: Option<std::result::Result<Result<u64>, oneshot::error::RecvError>>) -> Error {
    match outcome {
        Some(Ok(Err(e))) => e,
        // Its outcome was returned before.
        None => Error::invalid_argument(
            "insert",
            "the insert has ended (finished, aborted, or failed with the error returned before)",
        ),
        _ => task_gone(),
    }
}

/// Runs the COPY: starts it (reported through `opened`), writes pieces as
/// they come, commits on [`Message::Finish`]. Ends the COPY without storing
/// anything on any error or when the queue closes without `Finish`.
async fn feed(
    mut guard: ConnectionGuard,
    table: &TableName,
    expected: Option<&TableDefinition>,
    mut pieces: mpsc::Receiver<Message>,
    opened: oneshot::Sender<Result<TableDefinition>>,
) -> Result<u64> {
    let inner = guard.inner.clone();
    let cancels_before = inner.cancels.load(Ordering::SeqCst);
    let in_transaction = guard.in_transaction();
    let blamed = |e| super::cancel::blamed_on_cancel(in_transaction, e);
    let conn = guard.conn();
    // The table's definition comes from the inserter's own lookup, in its
    // transaction: one catalog query per insert.
    let (mut inserter, definition) = match AsyncArrowInserter::into_resolved(conn, table).await {
        Ok(opened) => opened,
        Err(e) => {
            let _ = opened.send(Err(blamed(e)));
            return Err(Error::Cancelled);
        }
    };
    let mut failed = Error::Cancelled;
    let checked = expected.map_or(Ok(()), |expected| expected.check_columns_match(&definition));
    let _ = match checked {
        Ok(()) => opened.send(Ok(definition)),
        Err(e) => {
            pieces.close();
            opened.send(Err(e))
        }
    };
    loop {
        // A cancel ends the COPY now (see `Inner::cancels`), whether it
        // came while a piece was written or while waiting for one. The
        // query timeout bounds the wait for a piece too: the driver
        // enforces it only on the socket, and a source that stalls would
        // otherwise hold the COPY open past it.
        // The wake-up is armed before the check, so one that comes
        // between is not missed.
        let woken = inner.cancelled.notified();
        if let Some(stop) = stopped_by(&inner, cancels_before) {
            failed = stop;
            break;
        }
        let message = tokio::select! {
            biased;
            () = woken => continue,
            () = expiry(inserter.query_deadline()) => {
                failed = timed_out();
                break;
            }
            message = pieces.recv() => message,
        };
        let Some(message) = message else { break };
        let written = match message {
            Message::Piece(InsertPiece::Batch(batch)) => inserter.insert_batch(&batch).await,
            Message::Piece(InsertPiece::Ipc(bytes)) => inserter.insert_ipc(&bytes).await,
            Message::Finish => return inserter.finish().await.map_err(blamed),
        };
        if let Err(e) = written {
            failed = blamed(e);
            break;
        }
    }
    drop(inserter);
    // Dropping the inserter queued CopyFail; settle it while the connection
    // is still ours, so the next call finds the server idle.
    pieces.close();
    if let Err(e) = guard.conn().client().settle().await {
        tracing::debug!("settling an aborted insert: {e}");
    }
    Err(failed)
}

/// The insert's error after [`SharedConnection::cancel`](super::SharedConnection::cancel):
/// 57014, as hyperd reports a cancelled statement.
fn cancelled() -> Error {
    let db = hyperdb_api_core::error::DbError::new(
        Some(hyperdb_api_core::error::SqlState::QUERY_CANCELED),
        "the insert was cancelled: nothing is stored",
    );
    Error::server(db)
}

/// The insert's error when a cancel or a close came since the COPY started.
fn stopped_by(inner: &super::Inner, cancels_before: u64) -> Option<Error> {
    if inner.cancels.load(Ordering::SeqCst) != cancels_before {
        Some(cancelled())
    } else if inner.closing.load(Ordering::SeqCst) {
        Some(closed_while_open())
    } else {
        None
    }
}

/// The insert's error when the connection's close ended it (08003).
fn closed_while_open() -> Error {
    let db = hyperdb_api_core::error::DbError::new(
        Some(hyperdb_api_core::error::SqlState::CONNECTION_DOES_NOT_EXIST),
        "the connection was closed while the insert was open: nothing is stored",
    );
    Error::server(db)
}

/// Completes at `deadline`; never without one.
async fn expiry(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// The insert's error when its query timeout expired while it waited for
/// its next piece: a timeout (`is_timeout()`), as the driver reports one.
fn timed_out() -> Error {
    Error::Client(hyperdb_api_core::Error::timeout(
        "query timeout expired while the insert waited for its next rows: nothing is stored",
    ))
}

fn task_gone() -> Error {
    Error::Cancelled
}
