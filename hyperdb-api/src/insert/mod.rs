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
//! All of them check the table definition against the table the COPY
//! writes before the first row goes out (one that differs in a column's
//! name, type or nullability, or in the columns' number or order, is an
//! [`crate::Error::DefinitionMismatch`], SQLSTATE 42804), check every row
//! against the definition before it can be sent (a rejected row is an
//! [`crate::Error::InvalidRow`] and is simply not added), commit only on
//! `execute()`, and abort on drop: the table keeps its old contents and the
//! connection stays usable. On any error nothing was stored: outside a
//! transaction of the caller's, each insert runs in one of its own
//! (`copy_tx.rs`). Validation lives once, in `encoder.rs` (`RowEncoder`),
//! over a `RowSink` per wire format (`wire.rs`).
//!
//! With [`InsertFormat::ArrowStream`] (the default), a batch of rows
//! holding a value Arrow cannot carry (a TIMESTAMP or TIMESTAMPTZ after
//! 294247-01-10 04:00:54.775807 UTC, up to hyperd's greatest,
//! 294276-12-31 23:59:59.999999, which is also its `infinity`; TIME
//! 24:00:00; an INTERVAL with more than 2^63 nanoseconds of time) goes in
//! a HyperBinary COPY of its own, so every value HyperBinary stores, the
//! default inserter stores too.

mod chunk;
pub(crate) mod copy_tx;
pub(crate) mod encoder;
mod inserter;
mod mapped;
mod row_writer;
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

        /// Appends one row from a [`TableRow`](crate::TableRow) value
        /// (a `#[derive(Table)]` struct): its fields in column order,
        /// checked like [`add_row`](Self::add_row)'s values, with nothing
        /// allocated per row. A rejected row is not added.
        #[inline]
        pub $($async_kw)? fn add_struct<R: crate::TableRow + ?Sized>(&mut self, row: &R) -> Result<()> {
            self.encoder.add_struct(self.client.copy_buf(), row)?;
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
            self.check_open()?;
            self.finished = true;
            if self.encoder.has_partial_row() {
                self.abort_queued("a row was left half-built");
                return Err(self.copy.failed(crate::Error::InvalidRow {
                    row: self.encoder.rows(),
                    column: None,
                    kind: crate::error::RowErrorKind::ColumnCount,
                    message: "execute() with a half-built row; nothing was inserted".into(),
                }));
            }
            if let Err(e) = self.encoder.finish(self.client.copy_buf()) {
                self.abort_queued("the insert could not be completed");
                return Err(self.copy.failed(e));
            }
            let held = self.encoder.take_held();
            self.end_copy(self.encoder.rows(), held) $($aw)*
        }

        /// Writes out a full frame; rows the wire held back (a batch with a
        /// value Arrow cannot carry) go in a COPY of their own first. The
        /// async inserter also spends a unit of task budget every
        /// `ROWS_PER_UNIT` rows ([`crate::coop`]): encoding a batch awaits
        /// nothing else. One test per row here, the rest out of line: with
        /// both awaits inline the row loop ran ~30 instructions a row more.
        #[inline]
        $($async_kw)? fn flush_if_full(&mut self) -> Result<()> {
            let due = self.encoder.frame_full(self.client.copy_buf())
                $( || {
                    crate::coop::async_only!($async_kw);
                    self.encoder.rows() % crate::coop::ROWS_PER_UNIT as u64 == 0
                } )?;
            if due {
                self.write_out() $($aw)* ?;
            }
            Ok(())
        }

        /// `flush_if_full`'s work when a frame is full or budget is due.
        #[inline(never)]
        $($async_kw)? fn write_out(&mut self) -> Result<()> {
            if self.encoder.frame_full(self.client.copy_buf()) {
                self.encoder.close_frame(self.client.copy_buf())?;
                match self.encoder.take_held() {
                    None => self.send_frames(&[]) $($aw)* ?,
                    Some(held) => {
                        self.encoder.end_stream(self.client.copy_buf())?;
                        self.detour(held) $($aw)* ?;
                    }
                }
            }
            $(
                crate::coop::async_only!($async_kw);
                if self.encoder.rows() % crate::coop::ROWS_PER_UNIT as u64 == 0 {
                    crate::coop::pause().await;
                }
            )?
            Ok(())
        }

        /// Fails once an error ended the insert early (a batch held back
        /// could not be sent): that error was returned then. Rows added
        /// since went nowhere (`RowSink::abandon`); checked here only, not
        /// per row.
        #[inline]
        fn check_open(&self) -> Result<()> {
            if self.finished {
                return Err(crate::insert::copy_tx::insert_over());
            }
            Ok(())
        }

        /// Undoes the insert without waiting (for `Drop`): a running COPY
        /// gets its last frame closed and `CopyFail`; see `abort_copy_queued`.
        fn abort_queued(&mut self, reason: &str) {
            if self.copy.phase() == crate::insert::copy_tx::Phase::Copying {
                self.encoder.discard_partial(self.client.copy_buf());
                if self.encoder.close_frame(self.client.copy_buf()).is_err() {
                    self.client.copy_buf().clear();
                }
            }
            self.abort_copy_queued(reason);
        }

        /// Mid-insert: ends the running COPY, sends `held` in a HyperBinary
        /// COPY of its own and starts the COPY again. On error the insert is
        /// over and its own transaction rolled back.
        $($async_kw)? fn detour(&mut self, held: crate::insert::encoder::HeldRows) -> Result<()> {
            let mut res = self.end_segment() $($aw)*;
            if res.is_ok() {
                res = self.copy_held(held) $($aw)*;
            }
            if res.is_ok() {
                let sql = self.copy.copy_sql().to_owned();
                res = self.start_segment(&sql) $($aw)*;
            }
            if let Err(e) = &res {
                self.copy.fail(e);
                self.finished = true;
                self.encoder.abandon();
                if self.copy.own() {
                    crate::insert::copy_tx::rollback!(self.client; $($aw)*);
                }
                self.copy.set_phase(crate::insert::copy_tx::Phase::Settled);
            }
            res
        }

        crate::insert::copy_tx::copy_methods!($($async_kw)?; $($aw)*);
    };
}
pub(crate) use inserter_methods;
