//! Row inserts: `COPY ... FROM STDIN` in HyperBinary or, by default, Arrow
//! ([`InsertFormat`]).
//!
//! * [`Inserter`] / [`AsyncInserter`]: rows written out in large CopyData
//!   frames, as Arrow record batches (the default, which hyperd ingests in
//!   parallel) or as HyperBinary straight into the send buffer
//!   ([`InsertFormat`]).
//! * [`InsertChunk`] + [`ChunkSender`]: rows encoded on any thread into
//!   chunks; one connection sends them in order.
//! * [`MappedInserter`]: for columns whose stored value is computed by SQL
//!   (e.g. WKT text cast to GEOGRAPHY), through a temporary staging table.
//!
//! All of them check every row against the table definition before it can
//! be sent (a rejected row is an [`crate::Error::InvalidRow`] and is simply
//! not added), commit only on `execute()`, and abort on drop: the COPY then
//! fails on the server, the table keeps its old contents and the connection
//! stays usable. Validation lives once, in `encoder.rs` (`RowEncoder`), over a
//! `RowSink` per wire format (`wire.rs`).

mod chunk;
pub(crate) mod encoder;
mod inserter;
mod mapped;
mod wire;

pub use chunk::{ChunkSender, InsertChunk};

pub use encoder::{DEFAULT_FLUSH_THRESHOLD, MAX_FLUSH_THRESHOLD};
pub use inserter::Inserter;
pub use mapped::{ColumnMapping, MappedInserter};
pub(crate) use wire::row_encoder;
pub use wire::InsertFormat;

#[cfg(feature = "async")]
pub use chunk::AsyncChunkSender;
#[cfg(feature = "async")]
pub use inserter::AsyncInserter;

/// The shared surface of [`Inserter`] and [`AsyncInserter`]:
/// `inserter_methods!(;)` for the sync one, `inserter_methods!(async; .await)`
/// for the async one. Each needs fields `client`, `encoder`, `finished`.
macro_rules! inserter_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Sets the CopyData frame size: rows are written out each time this
        /// many bytes are buffered (default [`DEFAULT_FLUSH_THRESHOLD`](crate::insert::DEFAULT_FLUSH_THRESHOLD),
        /// at most [`MAX_FLUSH_THRESHOLD`](crate::insert::MAX_FLUSH_THRESHOLD)).
        /// With [`InsertFormat::ArrowStream`](crate::InsertFormat) a
        /// record batch is always written whole.
        pub fn with_flush_threshold(mut self, bytes: usize) -> Self {
            self.encoder.set_flush_threshold(bytes);
            self
        }

        /// Appends one row: one value per column, in table order. `None`
        /// (of any `Option`) is NULL. A rejected row is not added. With
        /// [`InsertFormat::HyperBinary`](crate::InsertFormat) a row over
        /// hyperd's 150 MiB message limit is rejected too
        /// ([`RowErrorKind::TooLarge`](crate::error::RowErrorKind)); Arrow
        /// takes it.
        #[inline]
        pub $($async_kw)? fn add_row(&mut self, values: &[&dyn ToHyperBinary]) -> Result<()> {
            self.encoder.add_row(self.client.copy_buf(), values)?;
            self.flush_if_full() $($aw)*
        }

        /// Appends the next column's value of the current row; finish the
        /// row with `end_row`. On error the partial row is discarded.
        #[inline]
        pub fn add(&mut self, value: &dyn ToHyperBinary) -> Result<()> {
            self.encoder.add(self.client.copy_buf(), value)
        }

        /// Appends NULL as the next column's value.
        pub fn add_null(&mut self) -> Result<()> {
            self.encoder.add(self.client.copy_buf(), &None::<bool>)
        }

        /// Completes a row built with `add`.
        #[inline]
        pub $($async_kw)? fn end_row(&mut self) -> Result<()> {
            self.encoder.end_row(self.client.copy_buf())?;
            self.flush_if_full() $($aw)*
        }

        /// Rows accepted so far.
        pub fn rows(&self) -> u64 {
            self.encoder.rows()
        }

        /// Sends the remaining rows and ends the COPY; returns the rows the
        /// server stored, checked against the rows sent. On error nothing was
        /// stored. A half-built row aborts the whole insert.
        $($async_kw)? fn finish_copy(&mut self) -> Result<u64> {
            self.finished = true;
            if self.encoder.has_partial_row() {
                self.abort_queued("a row was left half-built");
                return Err(crate::Error::InvalidRow {
                    row: self.encoder.rows(),
                    column: None,
                    kind: crate::error::RowErrorKind::ColumnCount,
                    message: "execute() with a half-built row; nothing was inserted".into(),
                });
            }
            if let Err(e) = self.encoder.finish(self.client.copy_buf()) {
                self.abort_queued("the insert could not be completed");
                return Err(e);
            }
            let stored = self.client.copy_in_finish() $($aw)* ?;
            let sent = self.encoder.rows();
            if stored != sent {
                return Err(crate::Error::RowCountMismatch { sent, stored });
            }
            Ok(stored)
        }

        #[inline]
        $($async_kw)? fn flush_if_full(&mut self) -> Result<()> {
            if self.encoder.frame_full(self.client.copy_buf()) {
                self.encoder.close_frame(self.client.copy_buf())?;
                self.client.flush() $($aw)* ?;
            }
            Ok(())
        }

        /// Ends the COPY with `CopyFail` without waiting (for `Drop`).
        fn abort_queued(&mut self, reason: &str) {
            self.encoder.discard_partial(self.client.copy_buf());
            if self.encoder.close_frame(self.client.copy_buf()).is_err() {
                self.client.copy_buf().clear();
            }
            self.client.queue_copy_fail(reason);
        }
    };
}
pub(crate) use inserter_methods;
