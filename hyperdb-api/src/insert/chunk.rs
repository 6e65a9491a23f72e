//! Encoding off the connection: [`InsertChunk`]s are filled on any thread and
//! a [`ChunkSender`] writes them, in order, into one COPY.

use bytes::BytesMut;
use hyperdb_api_core::protocol::frontend;
use hyperdb_api_core::types::{ColumnType, ToHyperBinary, COPY_HEADER};

use crate::error::{Error, Result};
use crate::insert::copy_tx::{CopySql, CopyTx, Target};
use crate::insert::encoder::{copy_sql, RowEncoder};
use crate::table_definition::TableDefinition;
use crate::Connection;

/// Rows for one table, encoded into complete CopyData frames, ready to be
/// written as they are. `Send`: build chunks on worker threads.
#[derive(Debug, Clone)]
pub struct InsertChunk {
    encoder: RowEncoder,
    buf: BytesMut,
}

impl InsertChunk {
    /// An empty chunk for `table`.
    pub fn new(table: &TableDefinition) -> Result<InsertChunk> {
        Ok(InsertChunk {
            encoder: RowEncoder::new(table)?,
            buf: BytesMut::new(),
        })
    }

    /// Reserves room for `bytes` of encoded rows up front.
    pub fn with_capacity(mut self, bytes: usize) -> InsertChunk {
        self.buf.reserve(bytes);
        self
    }

    /// Sets the CopyData frame size inside the chunk (at most
    /// [`MAX_FLUSH_THRESHOLD`](crate::insert::MAX_FLUSH_THRESHOLD)).
    pub fn with_flush_threshold(mut self, bytes: usize) -> InsertChunk {
        self.encoder.set_flush_threshold(bytes);
        self
    }

    /// Appends one row; a rejected row is not added.
    #[inline]
    pub fn add_row(&mut self, values: &[&dyn ToHyperBinary]) -> Result<()> {
        self.encoder.add_row(&mut self.buf, values)?;
        self.close_full_frame()
    }

    /// Appends one row from a [`TableRow`](crate::TableRow) value; a
    /// rejected row is not added.
    #[inline]
    pub fn add_struct<R: crate::TableRow + ?Sized>(&mut self, row: &R) -> Result<()> {
        self.encoder.add_struct(&mut self.buf, row)?;
        self.close_full_frame()
    }

    /// Appends the next column's value; finish with [`InsertChunk::end_row`].
    #[inline]
    pub fn add(&mut self, value: &dyn ToHyperBinary) -> Result<()> {
        self.encoder.add(&mut self.buf, value)
    }

    /// Appends NULL as the next column's value.
    pub fn add_null(&mut self) -> Result<()> {
        self.encoder.add(&mut self.buf, &None::<bool>)
    }

    /// Completes a row built with `add`.
    pub fn end_row(&mut self) -> Result<()> {
        self.encoder.end_row(&mut self.buf)?;
        self.close_full_frame()
    }

    /// Rows in the chunk.
    pub fn rows(&self) -> u64 {
        self.encoder.rows()
    }

    /// Encoded bytes in the chunk.
    pub fn encoded_len(&self) -> usize {
        self.buf.len()
    }

    /// Empties the chunk, keeping its memory for reuse.
    pub fn clear(&mut self) {
        self.encoder.reset();
        self.buf.clear();
    }

    #[inline]
    fn close_full_frame(&mut self) -> Result<()> {
        if self.encoder.frame_full(&self.buf) {
            self.encoder.close_frame(&mut self.buf)?;
        }
        Ok(())
    }

    /// Closes the last frame; the bytes are then whole CopyData messages.
    fn seal(&mut self) -> Result<()> {
        if self.encoder.has_partial_row() {
            return Err(Error::InvalidRow {
                row: self.encoder.rows(),
                column: None,
                kind: crate::error::RowErrorKind::ColumnCount,
                message: "the chunk ends with a half-built row".into(),
            });
        }
        self.encoder.close_frame(&mut self.buf)
    }

    fn check_table(&self, types: &[ColumnType]) -> Result<()> {
        if self.encoder.types() != types {
            return Err(Error::invalid_argument(
                "chunk",
                "it was built for a different table definition than the sender's",
            ));
        }
        Ok(())
    }
}

/// The shared surface of the sync and async chunk senders.
macro_rules! chunk_sender_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Writes `chunk` into the COPY and empties it for reuse.
        pub $($async_kw)? fn send(&mut self, chunk: &mut InsertChunk) -> Result<()> {
            chunk.check_table(&self.types)?;
            chunk.seal()?;
            self.send_frames(&chunk.buf) $($aw)* ?;
            self.rows += chunk.rows();
            chunk.clear();
            Ok(())
        }

        /// Rows sent so far.
        pub fn rows(&self) -> u64 {
            self.rows
        }

        /// Commits. Returns the rows stored (checked against the rows
        /// sent); on error nothing was stored.
        pub $($async_kw)? fn execute(mut self) -> Result<u64> {
            self.end_copy(self.rows, None) $($aw)*
        }

        crate::insert::copy_tx::copy_methods!($($async_kw)?; $($aw)*);
    };
}

/// The HyperBinary COPY statement and the column types chunks must have.
fn start_copy_sql(table: &TableDefinition) -> Result<(CopySql, Vec<ColumnType>)> {
    let sql = CopySql {
        copy: copy_sql(table)?,
        held: None,
        stream_checked: false,
    };
    Ok((sql, RowEncoder::new(table)?.types().to_vec()))
}

fn queue_header(buf: &mut BytesMut) -> Result<()> {
    Ok(frontend::copy_data(buf, &COPY_HEADER)?)
}

/// Sends [`InsertChunk`]s over one connection into one COPY, in the order
/// they are given. Dropping it before `execute()` aborts the insert.
#[derive(Debug)]
pub struct ChunkSender<'c> {
    client: &'c mut hyperdb_api_core::client::Client,
    types: Vec<ColumnType>,
    rows: u64,
    copy: CopyTx,
    finished: bool,
}

impl<'c> ChunkSender<'c> {
    /// Starts a COPY into `table`, which must be the table's own definition
    /// (checked first, as for [`crate::Inserter::new`]).
    pub fn new(conn: &'c mut Connection, table: &TableDefinition) -> Result<ChunkSender<'c>> {
        let (sql, types) = start_copy_sql(table)?;
        let (copy, _) = CopyTx::open(conn, Target::Checked(table), |_| Ok(sql.clone()))?;
        let client = conn.client();
        queue_header(client.copy_buf())?;
        Ok(ChunkSender {
            client,
            types,
            rows: 0,
            copy,
            finished: false,
        })
    }

    chunk_sender_methods!(;);

    /// Fills `chunks` chunks on `workers` threads with `fill(index, chunk)`
    /// and sends them in index order as they complete. At most two filled
    /// chunks per worker wait in memory, and sent chunks go back to their
    /// worker to be refilled. The first error stops every worker.
    pub fn send_parallel<F>(
        &mut self,
        table: &TableDefinition,
        workers: usize,
        chunks: usize,
        fill: F,
    ) -> Result<()>
    where
        F: Fn(usize, &mut InsertChunk) -> Result<()> + Sync,
    {
        let workers = workers.clamp(1, chunks.max(1));
        let template = InsertChunk::new(table)?;
        template.check_table(&self.types)?;
        std::thread::scope(|scope| {
            // One bounded channel per worker: chunk i comes from worker
            // i % workers, so reading the channels round-robin is in order.
            // Sent chunks flow back on a second channel: a fresh chunk would
            // grow its buffer by doubling and fault in new pages every time,
            // which on a small machine takes CPU from the server.
            let mut receivers = Vec::with_capacity(workers);
            let mut recycle = Vec::with_capacity(workers);
            for w in 0..workers {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Result<InsertChunk>>(2);
                let (spare_tx, spare_rx) = std::sync::mpsc::sync_channel::<InsertChunk>(1);
                receivers.push(rx);
                recycle.push(spare_tx);
                let (fill, template) = (&fill, &template);
                scope.spawn(move || {
                    for i in (w..chunks).step_by(workers) {
                        let mut chunk = spare_rx.try_recv().unwrap_or_else(|_| template.clone());
                        let filled = fill(i, &mut chunk).map(|()| chunk);
                        let failed = filled.is_err();
                        if tx.send(filled).is_err() || failed {
                            break;
                        }
                    }
                });
            }
            for i in 0..chunks {
                let mut chunk = receivers[i % workers].recv().map_err(|_| {
                    Error::invalid_argument(
                        "send_parallel",
                        format!("worker for chunk {i} stopped"),
                    )
                })??;
                self.send(&mut chunk)?;
                // Full (the worker has a spare) or gone: the chunk is dropped.
                let _ = recycle[i % workers].try_send(chunk);
            }
            Ok(())
        })
    }
}

impl Drop for ChunkSender<'_> {
    fn drop(&mut self) {
        self.abort_copy_queued("chunk sender dropped without execute()");
    }
}

/// [`ChunkSender`] for [`crate::AsyncConnection`]; encode chunks with
/// `tokio::task::spawn_blocking` and send them here. Dropping it, or any
/// of its futures before `execute()` has sent the COMMIT, aborts the
/// insert (as for [`crate::AsyncInserter`]); it yields by the bytes it
/// writes, ~1 MiB per task budget.
#[cfg(feature = "async")]
#[derive(Debug)]
pub struct AsyncChunkSender<'c> {
    client: &'c mut hyperdb_api_core::client::AsyncClient,
    types: Vec<ColumnType>,
    rows: u64,
    copy: CopyTx,
    finished: bool,
}

#[cfg(feature = "async")]
impl<'c> AsyncChunkSender<'c> {
    /// Starts a COPY into `table`.
    pub async fn new(
        conn: &'c mut crate::AsyncConnection,
        table: &TableDefinition,
    ) -> Result<AsyncChunkSender<'c>> {
        let (sql, types) = start_copy_sql(table)?;
        let (copy, _) =
            CopyTx::open_async(conn, Target::Checked(table), |_| Ok(sql.clone())).await?;
        let client = conn.client();
        queue_header(client.copy_buf())?;
        Ok(AsyncChunkSender {
            client,
            types,
            rows: 0,
            copy,
            finished: false,
        })
    }

    chunk_sender_methods!(async; .await);
}

#[cfg(feature = "async")]
impl Drop for AsyncChunkSender<'_> {
    fn drop(&mut self) {
        self.abort_copy_queued("chunk sender dropped before execute() completed");
    }
}
