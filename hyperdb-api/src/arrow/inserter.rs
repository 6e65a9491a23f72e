//! Arrow inserters over one connection, sync and async: `COPY ... FROM
//! STDIN WITH (FORMAT ARROWSTREAM)` carrying exactly one IPC stream.

use arrow_array::RecordBatch;

use super::encoder::{copy_sql, ArrowEncoder};
use crate::error::Result;
use crate::insert::copy_tx::{CopySql, CopyTx, Target};
use crate::table_definition::TableDefinition;
use crate::Connection;

/// The shared surface of [`ArrowInserter`] and [`AsyncArrowInserter`]:
/// `arrow_inserter_methods!(;)` and `arrow_inserter_methods!(async; .await)`.
/// Each needs fields `client`, `encoder`, `finished`.
macro_rules! arrow_inserter_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Sets how many bytes are buffered before they are written to the
        /// socket (default [`DEFAULT_ARROW_FLUSH_THRESHOLD`](super::DEFAULT_ARROW_FLUSH_THRESHOLD),
        /// at most [`MAX_FLUSH_THRESHOLD`](crate::insert::MAX_FLUSH_THRESHOLD)).
        /// It is also the largest CopyData frame.
        pub fn with_flush_threshold(mut self, bytes: usize) -> Self {
            self.encoder.set_flush_threshold(bytes);
            self
        }

        /// Inserts `batch`. Its fields are matched to the table's columns by
        /// name; every batch of one insert has the same schema. A rejected
        /// batch ([`SchemaMismatch`](crate::Error::SchemaMismatch),
        /// [`InvalidRow`](crate::Error::InvalidRow)) is not
        /// sent and the inserter stays usable.
        ///
        /// hyperd ingests batches of 64Ki to 1Mi rows best: 256Ki rows
        /// went in a few percent faster than 64Ki, and one batch of 10M
        /// rows took ~50 % longer (DEVELOPMENT.md, "Row inserts").
        pub $($async_kw)? fn insert_batch(&mut self, batch: &RecordBatch) -> Result<()> {
            self.encoder.push_batch(batch)?;
            self.drain() $($aw)*
        }

        /// Inserts raw Arrow IPC stream bytes (e.g. forwarded from elsewhere),
        /// split anywhere across calls. The schema is checked before any of
        /// it is sent; the data is passed through undecoded, except into a
        /// table with VARCHAR(n), CHAR(n), NUMERIC, TIME or INTERVAL
        /// columns, whose values hyperd would store cut or past their type
        /// rather than refuse: there it is decoded and checked as
        /// [`Self::insert_batch`] checks batches. Cannot be mixed
        /// with [`Self::insert_batch`] in one insert.
        pub $($async_kw)? fn insert_ipc(&mut self, bytes: &[u8]) -> Result<()> {
            for piece in bytes.chunks(self.encoder.flush_threshold()) {
                self.encoder.push_ipc(piece, self.client.copy_buf())?;
                self.drain() $($aw)*?;
            }
            Ok(())
        }

        /// Rows accepted so far.
        pub fn rows(&self) -> u64 {
            self.encoder.rows()
        }

        /// Ends the stream and commits. Returns the rows the server stored,
        /// checked against the rows sent
        /// ([`Error::RowCountMismatch`](crate::Error::RowCountMismatch)). On
        /// error nothing was stored and the connection is usable.
        pub $($async_kw)? fn finish(mut self) -> Result<u64> {
            self.finished = true;
            if let Err(e) = self.encoder.finish() {
                self.abort_queued("the Arrow stream could not be completed");
                return Err(self.copy.failed(e));
            }
            if let Err(e) = self.drain() $($aw)* {
                self.abort_queued("the Arrow stream could not be sent");
                return Err(self.copy.failed(e));
            }
            self.end_copy(self.encoder.rows(), None) $($aw)*
        }

        $($async_kw)? fn drain(&mut self) -> Result<()> {
            while self.encoder.write_pending(self.client.copy_buf())? {
                self.send_frames(&[]) $($aw)* ?;
            }
            Ok(())
        }

        /// Ends the COPY with `CopyFail` without waiting (for `Drop`). Only
        /// whole frames are ever in the send buffer, so `CopyFail` can follow.
        fn abort_queued(&mut self, reason: &str) {
            self.encoder.discard();
            self.abort_copy_queued(reason);
        }

        crate::insert::copy_tx::copy_methods!($($async_kw)?; $($aw)*);
    };
}

/// The COPY of an Arrow inserter: it holds no rows back.
fn arrow_copy(table: &TableDefinition) -> Result<CopySql> {
    Ok(CopySql {
        copy: copy_sql(table)?,
        held: None,
        stream_checked: true,
    })
}

/// Streams Arrow record batches into a table; see the [module docs](super).
///
/// ```no_run
/// # use std::sync::Arc;
/// # use hyperdb_api::{ArrowInserter, Connection, TableDefinition, types::SqlType};
/// # use arrow_array::{Int32Array, RecordBatch};
/// # fn f(conn: &mut Connection) -> hyperdb_api::Result<()> {
/// let table = TableDefinition::new("t").with_not_null_column("id", SqlType::Int);
/// let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&table)?);
/// let batch = RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![1, 2, 3]))])?;
/// let mut ins = ArrowInserter::new(conn, &table)?;
/// ins.insert_batch(&batch)?;
/// assert_eq!(ins.finish()?, 3);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ArrowInserter<'c> {
    client: &'c mut hyperdb_api_core::client::Client,
    encoder: ArrowEncoder,
    copy: CopyTx,
    finished: bool,
}

impl<'c> ArrowInserter<'c> {
    /// Starts a COPY into `table`, which must be the table's own definition
    /// (checked first, as for [`crate::Inserter::new`]).
    pub fn new(conn: &'c mut Connection, table: &TableDefinition) -> Result<ArrowInserter<'c>> {
        let encoder = ArrowEncoder::new(table)?;
        let (copy, _) = CopyTx::open(conn, Target::Checked(table), arrow_copy)?;
        Ok(ArrowInserter {
            client: conn.client(),
            encoder,
            copy,
            finished: false,
        })
    }

    arrow_inserter_methods!(;);
}

impl Drop for ArrowInserter<'_> {
    fn drop(&mut self) {
        self.abort_queued("Arrow inserter dropped without finish()");
    }
}

/// [`ArrowInserter`] for [`crate::AsyncConnection`]. Dropping it, or any of
/// its futures before `finish()` has sent the COMMIT, aborts the insert:
/// nothing is stored and the connection stays usable (as for
/// [`crate::AsyncInserter`]). It yields by the bytes it writes, ~1 MiB
/// per task budget.
#[cfg(feature = "async")]
#[derive(Debug)]
pub struct AsyncArrowInserter<'c> {
    client: &'c mut hyperdb_api_core::client::AsyncClient,
    encoder: ArrowEncoder,
    copy: CopyTx,
    finished: bool,
}

#[cfg(feature = "async")]
impl<'c> AsyncArrowInserter<'c> {
    /// Starts a COPY into `table`, which must be the table's own
    /// definition (checked first).
    pub async fn new(
        conn: &'c mut crate::AsyncConnection,
        table: &TableDefinition,
    ) -> Result<AsyncArrowInserter<'c>> {
        let encoder = ArrowEncoder::new(table)?;
        let (copy, _) = CopyTx::open_async(conn, Target::Checked(table), arrow_copy).await?;
        Ok(AsyncArrowInserter {
            client: conn.client(),
            encoder,
            copy,
            finished: false,
        })
    }

    /// Starts a COPY into the table `name` as the server defines it,
    /// looked up in the insert's own transaction (one catalog query, where
    /// a lookup before [`new`](Self::new) makes two); returns that
    /// definition, which batches must match. For callers that have a name
    /// only: the Node package's inserters.
    pub(crate) async fn into_resolved(
        conn: &'c mut crate::AsyncConnection,
        name: &crate::TableName,
    ) -> Result<(AsyncArrowInserter<'c>, TableDefinition)> {
        // The encoder is made with the statement, before the COPY is queued.
        let mut encoder = None;
        let (copy, resolved) = CopyTx::open_async(conn, Target::Resolved(name), |table| {
            encoder = Some(ArrowEncoder::new(table)?);
            arrow_copy(table)
        })
        .await?;
        let client = conn.client();
        match (encoder, resolved) {
            (Some(encoder), Some(definition)) => {
                let inserter = AsyncArrowInserter {
                    client,
                    encoder,
                    copy,
                    finished: false,
                };
                Ok((inserter, definition))
            }
            // `open_async` made the statement from the definition it
            // returns: unreachable, and undone like a dropped inserter.
            _ => {
                client.queue_copy_fail("internal: no encoder for the table");
                if copy.own() {
                    client.enqueue_command("ROLLBACK")?;
                }
                Err(crate::Error::invalid_argument(
                    "insert",
                    "internal: a resolved table without its definition",
                ))
            }
        }
    }

    arrow_inserter_methods!(async; .await);

    /// When the COPY's query timeout expires (`None` without one).
    pub(crate) fn query_deadline(&self) -> Option<std::time::Instant> {
        self.client.query_deadline()
    }
}

#[cfg(feature = "async")]
impl Drop for AsyncArrowInserter<'_> {
    fn drop(&mut self) {
        self.abort_queued("Arrow inserter dropped before finish() completed");
    }
}

#[cfg(test)]
mod tests {
    /// Inserters and result streams can move to other threads and tasks.
    #[test]
    fn send() {
        fn send<T: Send>() {}
        send::<super::ArrowInserter<'_>>();
        send::<crate::arrow::ArrowBatches<'_>>();
        send::<crate::arrow::ArrowIpcChunks<'_>>();
        #[cfg(feature = "async")]
        {
            send::<super::AsyncArrowInserter<'_>>();
            send::<crate::arrow::AsyncArrowBatches<'_>>();
        }
    }

    #[cfg(feature = "async")]
    #[allow(dead_code)]
    fn futures_are_send(
        conns: &mut [crate::AsyncConnection],
        tables: &[crate::TableDefinition],
        batches: &[arrow_array::RecordBatch],
    ) {
        fn send<T: Send>(_: T) {}
        send(crate::arrow::insert_batches_parallel(
            conns, tables, batches,
        ));
    }
}
