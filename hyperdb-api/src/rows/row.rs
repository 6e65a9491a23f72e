//! One result row, and the blocks of rows it is read from.
//!
//! Rows arrive in blocks: every `DataRow` the receive buffer held, or one
//! Arrow record batch. A [`Row`] is a block and an index into it, so handing
//! out a row costs one reference count (none through [`RowCursor`], which
//! the lending and typed streams use) and reading a value is an O(1) lookup
//! of its HyperBinary bytes: in the received buffer for `DataRow`s, in the
//! batch's own buffers for Arrow (converted per column, per batch, only
//! where Arrow's layout differs from HyperBinary's). `try_get` and every
//! type conversion are therefore one implementation for both sources.
//!
//! A `DataRow` is indexed when the cursor moves onto it: its fields' spans
//! go into the cursor's row, so they are read from L1 while the row's bytes
//! are still hot. A row of up to [`INLINE_SPANS`] columns keeps them
//! inline, so a clone carries them along; a clone of a wider row does not,
//! and the first value read from one indexes its whole block, once, for
//! every such row.

use std::fmt;
use std::sync::{Arc, OnceLock};

use hyperdb_api_core::protocol::backend::{FieldSpan, RowBlock};
use hyperdb_api_core::types::{FromHyperBinary, SqlType};

use crate::error::{Error, Result};
use crate::from_row::FromRow;
use crate::rows::plan::{ColumnCache, ReadPlan};
use crate::rows::schema::{ColumnIndex, Schema};
use crate::rows::values::RowValues;
use crate::trace::StatementTrace;

/// Rows that arrived together, with the result's columns.
#[derive(Debug)]
pub(crate) struct Block {
    pub(super) schema: Arc<Schema>,
    rows: usize,
    /// Per column, its type next to where its values are: reading a value
    /// touches one entry (the hot path of every row API).
    pub(super) columns: Vec<BlockColumn>,
    /// The `DataRow`s, for a block received as such (else empty).
    pub(super) wire: RowBlock,
    /// Every `DataRow`'s spans, made when a clone of a row wider than
    /// [`INLINE_SPANS`] first reads a value (other rows carry their own).
    wire_spans: OnceLock<Vec<FieldSpan>>,
}

#[derive(Debug)]
pub(super) struct BlockColumn {
    pub(super) sql_type: Option<SqlType>,
    values: ColumnValues,
}

#[derive(Debug)]
enum ColumnValues {
    /// In the block's `DataRow`s.
    Wire,
    #[cfg(feature = "arrow")]
    Arrow(crate::arrow::row_columns::ArrowColumn),
}

impl Block {
    fn empty(schema: Arc<Schema>) -> Block {
        Block {
            schema,
            rows: 0,
            columns: Vec::new(),
            wire: RowBlock::default(),
            wire_spans: OnceLock::new(),
        }
    }

    fn with_columns(
        schema: &Arc<Schema>,
        rows: usize,
        values: impl Iterator<Item = ColumnValues>,
        wire: RowBlock,
    ) -> Block {
        let columns = schema
            .columns()
            .iter()
            .zip(values)
            .map(|(col, values)| BlockColumn {
                sql_type: col.sql_type().copied(),
                values,
            })
            .collect();
        Block {
            schema: schema.clone(),
            rows,
            columns,
            wire,
            wire_spans: OnceLock::new(),
        }
    }

    /// `DataRow`s as received; their field count must match the columns.
    pub(crate) fn wire(schema: &Arc<Schema>, rows: RowBlock) -> Result<Block> {
        if !rows.is_empty() && rows.columns() != schema.len() {
            return Err(Error::Client(hyperdb_api_core::Error::protocol(format!(
                "rows have {} fields, the result has {} columns",
                rows.columns(),
                schema.len()
            ))));
        }
        let values = std::iter::repeat_with(|| ColumnValues::Wire);
        Ok(Block::with_columns(schema, rows.len(), values, rows))
    }

    /// One Arrow record batch.
    #[cfg(feature = "arrow")]
    pub(crate) fn arrow(schema: &Arc<Schema>, batch: &arrow_array::RecordBatch) -> Block {
        let values = crate::arrow::row_columns::columns(batch, schema).map(ColumnValues::Arrow);
        Block::with_columns(schema, batch.num_rows(), values, RowBlock::default())
    }

    fn is_wire(&self) -> bool {
        !self.wire.is_empty()
    }

    /// Where field `column` of `DataRow` `row` lies, for rows read out of
    /// the cursor: the whole block is indexed once, on first use.
    #[inline]
    fn wire_span(&self, row: usize, column: usize) -> Option<FieldSpan> {
        let spans = self.wire_spans.get_or_init(|| self.wire.index_all());
        spans.get(row * self.wire.columns() + column).copied()
    }
}

/// `DataRow`s of up to this many columns carry their fields' spans inline.
const INLINE_SPANS: usize = 8;

/// Where a `DataRow`'s fields lie: inline for rows of up to
/// [`INLINE_SPANS`] columns, else in `wide`, which only the cursor's own row
/// fills.
#[derive(Debug)]
struct RowSpans {
    inline: [FieldSpan; INLINE_SPANS],
    wide: Vec<FieldSpan>,
}

impl RowSpans {
    fn new() -> RowSpans {
        RowSpans {
            inline: [FieldSpan::default(); INLINE_SPANS],
            wide: Vec::new(),
        }
    }

    /// Field `column`'s span in a row of `columns` fields; `None` for a
    /// clone of a wide row.
    #[inline(always)]
    fn get(&self, columns: usize, column: usize) -> Option<FieldSpan> {
        if columns <= INLINE_SPANS {
            self.inline.get(column).copied()
        } else {
            self.wide.get(column).copied()
        }
    }

    /// Room for the spans of a row of `columns` fields.
    #[inline(always)]
    fn of_mut(&mut self, columns: usize) -> &mut [FieldSpan] {
        match self.inline.get_mut(..columns) {
            Some(inline) => inline,
            None => {
                self.wide.resize(columns, FieldSpan::default());
                &mut self.wide
            }
        }
    }
}

impl Clone for RowSpans {
    /// Copies the inline spans; a wide row's stay with the cursor, so a
    /// cloned row never allocates.
    fn clone(&self) -> RowSpans {
        RowSpans {
            inline: self.inline,
            wide: Vec::new(),
        }
    }
}

/// One result row; values stay in the received buffers until asked for.
///
/// Cheap to clone (a reference count). A row keeps the block it came from
/// alive: collecting a few rows of a huge result holds their blocks too.
#[derive(Clone)]
pub struct Row {
    pub(super) block: Arc<Block>,
    pub(super) index: usize,
    spans: RowSpans,
}

impl Row {
    pub fn schema(&self) -> &Arc<Schema> {
        &self.block.schema
    }

    pub fn len(&self) -> usize {
        self.block.schema.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of a column, by index or name, as `T`.
    ///
    /// Errors tell apart a missing column ([`Error::ColumnNotFound`]), a NULL
    /// read into a non-`Option` ([`Error::UnexpectedNull`]), a type that
    /// cannot be read as `T` ([`Error::TypeMismatch`]) and a value that does
    /// not fit ([`Error::Conversion`]).
    #[inline(always)]
    pub fn try_get<'a, T: FromHyperBinary<'a>>(&'a self, column: impl ColumnIndex) -> Result<T> {
        let block = &*self.block;
        let Some((index, col)) = column
            .index_in(&block.schema)
            .and_then(|i| Some((i, block.columns.get(i)?)))
        else {
            return Err(column_not_found(&column, block.schema.len()));
        };
        decode!(T, &block.schema, col, index, self.value(col, index))
    }

    /// The raw HyperBinary bytes of column `index`; `None` is SQL NULL.
    #[inline]
    pub fn raw(&self, index: usize) -> Result<Option<&[u8]>> {
        self.field(index)
            .ok_or_else(|| column_not_found(&index, self.len()))
    }

    /// Where field `column` of this `DataRow` lies.
    #[inline(always)]
    fn wire_span(&self, column: usize) -> Option<FieldSpan> {
        match self.spans.get(self.block.wire.columns(), column) {
            Some(span) => Some(span),
            None => self.block.wire_span(self.index, column),
        }
    }

    /// The HyperBinary bytes of one value (`Some(None)` is NULL); `None`
    /// when the column does not exist.
    #[inline]
    fn field(&self, column: usize) -> Option<Option<&[u8]>> {
        self.value(self.block.columns.get(column)?, column)
    }

    #[inline(always)]
    fn value<'a>(&'a self, col: &'a BlockColumn, column: usize) -> Option<Option<&'a [u8]>> {
        match &col.values {
            ColumnValues::Wire => self.block.wire.value(self.wire_span(column)?),
            #[cfg(feature = "arrow")]
            ColumnValues::Arrow(values) => values.field(self.index),
        }
    }
}

/// Column `$index`'s `$value` as `$t` (`Some(None)` is NULL, `None` no
/// value, read as NULL), the type checked before the value is touched:
/// what `try_get` and the in-order reader ([`RowValues::read`]) both
/// return. A macro, not a function: the optimizer keeps a scan's loop
/// tight only when this is spelled out in place (a shared function, even
/// `#[inline(always)]`, cost 30-70 instructions a row in callgrind).
macro_rules! decode {
    ($t:ty, $schema:expr, $col:expr, $index:expr, $value:expr) => {{
        let (schema, index) = ($schema, $index);
        let ty = match &$col.sql_type {
            Some(ty) if <$t>::accepts(ty) => ty,
            _ => return Err($crate::rows::row::type_mismatch::<$t>(schema, index)),
        };
        match $value {
            Some(Some(raw)) => <$t>::decode_hyper(ty, raw)
                .map_err(|e| $crate::rows::row::conversion(schema, index, e)),
            _ => <$t>::decode_hyper_null(ty)
                .map_err(|_| $crate::rows::row::unexpected_null(schema, index)),
        }
    }};
}
pub(super) use decode;

#[cold]
#[inline(never)]
pub(super) fn column_not_found(column: &dyn fmt::Display, count: usize) -> Error {
    Error::ColumnNotFound {
        column: column.to_string(),
        count,
    }
}

#[cold]
#[inline(never)]
pub(super) fn conversion(schema: &Schema, index: usize, source: hyperdb_api_core::Error) -> Error {
    Error::Conversion {
        column: schema.columns()[index].name().to_owned(),
        source,
    }
}

#[cold]
#[inline(never)]
pub(super) fn unexpected_null(schema: &Schema, index: usize) -> Error {
    Error::UnexpectedNull {
        column: schema.columns()[index].name().to_owned(),
    }
}

#[cold]
#[inline(never)]
pub(super) fn type_mismatch<'a, T: FromHyperBinary<'a>>(schema: &Schema, index: usize) -> Error {
    let col = &schema.columns()[index];
    let sql_type = match col.sql_type() {
        Some(ty) => ty.to_string(),
        None => super::schema::unmapped_type_name(col.type_oid()),
    };
    Error::TypeMismatch {
        column: col.name().to_owned(),
        sql_type,
        rust_type: std::any::type_name::<T>(),
    }
}

impl fmt::Debug for Row {
    /// The columns by name with their raw bytes (`NULL` for NULL).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (i, col) in self.schema().columns().iter().enumerate() {
            match self.field(i).flatten() {
                Some(raw) => m.entry(&col.name(), &raw.escape_ascii().to_string()),
                None => m.entry(&col.name(), &format_args!("NULL")),
            };
        }
        m.finish()
    }
}

/// Walks the rows of the block at hand without a reference count per row:
/// the one [`Row`] it holds moves its index. Behind every row stream.
#[derive(Debug)]
pub(crate) struct RowCursor {
    row: Row,
    next: usize,
    /// Where [`advance`](Self::advance) stops: the block's end, or sooner
    /// for a cooperative cursor (see [`resume`](Self::resume)).
    stop: usize,
    /// Rows between two stops within a block (`usize::MAX`: none).
    stride: usize,
    /// Set once the stream ended: the affected-row count (0 after an error).
    affected: Option<u64>,
    /// Where the last by-name type read found its columns.
    columns: ColumnCache,
    /// The statement's trace, for a `DataRow` result: counted per block,
    /// ended with the stream ([`StatementTrace`]). A stream of Arrow
    /// batches has it in its batch source instead.
    trace: StatementTrace,
}

/// What a source produced after the block at hand ran out.
pub(crate) enum Fetched {
    Block(Block),
    /// The result ended; the server's affected-row count.
    End(u64),
    Error(Error),
}

impl RowCursor {
    pub(crate) fn new(schema: Arc<Schema>) -> RowCursor {
        RowCursor {
            row: Row {
                block: Arc::new(Block::empty(schema)),
                index: 0,
                spans: RowSpans::new(),
            },
            next: 0,
            stop: 0,
            stride: usize::MAX,
            affected: None,
            columns: ColumnCache::default(),
            trace: StatementTrace::off(),
        }
    }

    /// A cursor that reports to `trace` (the blocks' rows and bytes, the
    /// end or error of the stream; a drop before the end is "abandoned").
    pub(crate) fn traced(schema: Arc<Schema>, trace: StatementTrace) -> RowCursor {
        RowCursor {
            trace,
            ..RowCursor::new(schema)
        }
    }

    /// This cursor, for an async stream: it stops every
    /// [`ROWS_PER_UNIT`](crate::coop::ROWS_PER_UNIT) rows, so the stream
    /// spends task budget per rows handed out (see [`crate::coop`]).
    #[cfg(feature = "async")]
    pub(crate) fn cooperative(self) -> RowCursor {
        RowCursor {
            stride: crate::coop::ROWS_PER_UNIT,
            ..self
        }
    }

    /// How to read this result's rows as `T` ([`ColumnCache::plan`]).
    #[inline]
    pub(crate) fn plan<'r, T: FromRow<'r>>(&mut self) -> ReadPlan {
        self.columns.plan::<T>(self.row.schema())
    }

    pub(crate) fn schema(&self) -> &Arc<Schema> {
        self.row.schema()
    }

    /// Finds the fields of the row [`advance`](Self::advance) moved to,
    /// for [`row`](Self::row); an error is a malformed row, and the stream
    /// has then ended.
    #[inline(always)]
    pub(crate) fn index_current(&mut self) -> Result<()> {
        let block = &self.row.block;
        if !block.is_wire() {
            return Ok(());
        }
        let spans = self.row.spans.of_mut(block.wire.columns());
        match block.wire.index_row(self.row.index, spans) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.malformed(e.into())),
        }
    }

    /// Reads the row [`advance`](Self::advance) moved to as `T`, read as
    /// `plan` says: a `DataRow` in column order when `T` can be read so
    /// ([`FromRow::from_values`]: one pass over its bytes, never indexed),
    /// else through [`read_row`](Self::read_row). The outer error is a
    /// malformed row (the stream has then ended); the inner one the row's
    /// own.
    #[inline(always)]
    pub(crate) fn read_current<T: for<'r> FromRow<'r>>(
        &mut self,
        plan: ReadPlan,
    ) -> Result<Result<T>> {
        if plan.in_order && self.row.block.is_wire() {
            let mut values = match RowValues::new(&self.row) {
                Ok(values) => values,
                Err(e) => return Err(self.malformed(e)),
            };
            if let Some(value) = T::from_values(&mut values) {
                if values.is_complete() {
                    return Ok(value);
                }
                // The reader stopped early (an error, or fewer fields than
                // the row has). Check the row, then read it by index, which
                // gives the same value or error. The value is not kept
                // across the check: when it was, the optimizer copied every
                // decoded row through memory, three times.
                drop(value);
                if let Err(e) = values.finish() {
                    return Err(self.malformed(e));
                }
            }
        }
        self.index_current()?;
        Ok(self.read_row(plan))
    }

    /// The current row (indexed) as `T`: by the columns `plan` found for
    /// a by-name type, else [`FromRow::from_row`].
    #[inline(always)]
    pub(crate) fn read_row<'r, T: FromRow<'r>>(&'r self, plan: ReadPlan) -> Result<T> {
        if plan.mapped {
            T::from_columns(&self.row, self.columns.map())
        } else {
            T::from_row(&self.row)
        }
    }

    /// The row [`index_current`](Self::index_current) indexed, as a `T`
    /// that may borrow from it: for the lending `next_as`. Every step
    /// that needs the cursor mutably (moving on, a malformed row ending
    /// the stream, then the plan here) comes before the read, so the
    /// value can hold the cursor's borrow: the row is read in order where
    /// the plan allows, else by its index (which gives the same value or
    /// error). The plan is asked per row, as each call may read another
    /// `T`; the last one is reused (`ColumnCache::plan`).
    #[inline(always)]
    pub(crate) fn read_lent<'r, T: FromRow<'r>>(&'r mut self) -> Result<T> {
        let plan = self.plan::<T>();
        let cursor: &'r RowCursor = self;
        match cursor.try_read_current::<T>(plan) {
            Some(value) => Ok(value),
            None => cursor.read_row(plan),
        }
    }

    /// The row [`advance`](Self::advance) moved to as `T`, when it is a
    /// well-formed `DataRow` that [`FromRow::try_from_values`] reads whole:
    /// a scan's every row, when `plan` reads in order. With `plan.plain`
    /// ([`FromRow::reads_plain`] of the result's columns) the row is first
    /// read with no type checks. `None` sends the caller to
    /// [`read_current`](Self::read_current), which reads the row again
    /// with every check and error.
    #[inline(always)]
    pub(crate) fn try_read_current<'r, T: FromRow<'r>>(&'r self, plan: ReadPlan) -> Option<T> {
        if !plan.in_order || !self.row.block.is_wire() {
            return None;
        }
        let mut values = RowValues::new(&self.row).ok()?;
        if plan.plain {
            if let Some(value) = T::from_plain_fields(values.unread()) {
                return Some(value);
            }
        }
        let value = T::try_from_values(&mut values)?;
        values.is_complete().then_some(value)
    }

    /// Moves the row to the next index of the block at hand; `false` when
    /// it ran out, or at a stop of a cooperative cursor.
    #[inline(always)]
    pub(crate) fn advance(&mut self) -> bool {
        if self.next >= self.stop {
            return false;
        }
        self.row.index = self.next;
        self.next += 1;
        true
    }

    /// Gives up the rest of the block at hand, so that the next refill
    /// fetches the next one (`resume` alone never moves past a row).
    #[inline]
    pub(crate) fn skip_block(&mut self) {
        self.next = self.row.block.rows;
        self.stop = self.next;
    }

    /// After `advance` returned `false`: `true` when that was a stop within
    /// the block (which moves on to the next stop), `false` when the block
    /// is used up and the next must be fetched.
    #[inline]
    pub(crate) fn resume(&mut self) -> bool {
        let rows = self.row.block.rows;
        if self.next >= rows {
            return false;
        }
        self.stop = rows.min(self.next.saturating_add(self.stride));
        true
    }

    /// A malformed row ends the stream.
    #[cold]
    fn malformed(&mut self, e: Error) -> Error {
        self.trace.fail(&e);
        self.end(0);
        e
    }

    /// The row [`advance`](Self::advance) moved to.
    #[inline]
    pub(crate) fn row(&self) -> &Row {
        &self.row
    }

    /// The stream ended: the affected-row count (`Some` also after an error).
    pub(crate) fn ended(&self) -> Option<u64> {
        self.affected
    }

    /// Takes what the source produced; an error ends the stream.
    pub(crate) fn take(&mut self, fetched: Fetched) -> Result<()> {
        match fetched {
            Fetched::Block(block) => {
                self.trace
                    .add(block.rows as u64, block.wire.byte_len() as u64);
                self.load(block)
            }
            Fetched::End(affected) => {
                self.trace.finish(Some(affected));
                self.end(affected)
            }
            Fetched::Error(e) => {
                self.trace.fail(&e);
                self.end(0);
                return Err(e);
            }
        }
        Ok(())
    }

    fn load(&mut self, block: Block) {
        self.row.spans.wide.clear();
        // Rows of the last block still held elsewhere keep it alive;
        // otherwise its allocation is reused.
        match Arc::get_mut(&mut self.row.block) {
            Some(slot) => *slot = block,
            None => self.row.block = Arc::new(block),
        }
        self.next = 0;
        self.stop = self.row.block.rows.min(self.stride);
    }

    /// Lets go of the block at hand before the next is fetched, unless rows
    /// of it are held elsewhere: the receive buffer can then reuse its
    /// memory instead of allocating anew for every block.
    #[inline]
    pub(crate) fn release(&mut self) {
        if let Some(block) = Arc::get_mut(&mut self.row.block) {
            block.columns.clear();
            block.wire = RowBlock::default();
            block.wire_spans = OnceLock::new();
            block.rows = 0;
        }
    }

    /// Drops the last block at once: an ended stream holds no buffers.
    fn end(&mut self, affected: u64) {
        self.affected = Some(affected);
        let schema = self.row.schema().clone();
        self.load(Block::empty(schema));
    }
}

/// The body of every row stream's `next`: moves `$cursor` to its next row
/// and reads it with `$read` (a `Result<Result<_>>` from the cursor, the
/// outer error a malformed row, which goes through `$broken` to break the
/// connection), refilling the cursor with `$refill` (a `Result<bool>`,
/// `false` once the stream ended; it may `.await`) when the block at hand
/// runs out. The row is made in one place and the refill is out of line
/// and carries no row, so the optimizer keeps a decoded row in registers.
macro_rules! read_rows {
    ($cursor:expr, $read:expr, $refill:expr, malformed($e:ident) => $broken:expr) => {
        loop {
            if $cursor.advance() {
                break Some(match $read {
                    Ok(row) => row,
                    Err($e) => Err($broken),
                });
            }
            match $refill {
                Ok(true) => {}
                Ok(false) => break None,
                Err(e) => break Some(Err(e)),
            }
        }
    };
}
pub(crate) use read_rows;

/// The body of every typed row stream's `next` (`$t` rows): like
/// [`read_rows!`], but a row is first read the way that builds no error
/// ([`RowCursor::try_read_current`]), and only a row that fails it goes to
/// `$checked` (a `Result<$t>`, out of line: the cursor's `read_current`,
/// a malformed row breaking the connection), which reads it again and
/// reports what is wrong. Each stream has its own `read_checked` because
/// `broken` is its own: one on the cursor, its `Result<Result<_>>` matched
/// here, cost the scan 14 instructions a row more. An error value anywhere on a scan's path made the
/// optimizer keep each decoded row in memory, copied through the stack
/// (callgrind: 291 -> 230 instructions a row; client CPU -4 ns a row).
macro_rules! read_typed_rows {
    ($cursor:expr, $t:ty, plan: $plan:expr, checked: $checked:expr, $refill:expr) => {
        loop {
            if $cursor.advance() {
                if let Some(value) = $cursor.try_read_current::<$t>($plan) {
                    break Some(Ok(value));
                }
                break Some($checked);
            }
            match $refill {
                Ok(true) => {}
                Ok(false) => break None,
                Err(e) => break Some(Err(e)),
            }
        }
    };
}
pub(crate) use read_typed_rows;

/// The body of every row stream's `refill`: at a stop of a cooperative
/// cursor `$pause` (spending task budget; only the async streams' cursors
/// stop within a block), else the next block from `$fetch` (a [`Fetched`];
/// it may `.await`) into `$cursor`; `Ok(false)` once the stream has ended.
macro_rules! refill_cursor {
    ($cursor:expr, pause: $pause:expr, $fetch:expr) => {{
        if $cursor.resume() {
            $pause;
            Ok(true)
        } else {
            refill_cursor!(@fetch $cursor, $fetch)
        }
    }};
    ($cursor:expr, $fetch:expr) => {{
        if $cursor.resume() {
            Ok(true)
        } else {
            refill_cursor!(@fetch $cursor, $fetch)
        }
    }};
    (@fetch $cursor:expr, $fetch:expr) => {
        if $cursor.ended().is_some() {
            Ok(false)
        } else {
            $cursor.release();
            let fetched = $fetch;
            $cursor.take(fetched).map(|()| true)
        }
    };
}
pub(crate) use refill_cursor;

/// The `DataRow` source's step as [`Fetched`].
#[inline]
pub(crate) fn fetched_from_wire(
    schema: &Arc<Schema>,
    step: hyperdb_api_core::Result<hyperdb_api_core::protocol::ops::RowEvent>,
) -> Fetched {
    use hyperdb_api_core::protocol::ops::RowEvent;
    match step {
        Ok(RowEvent::Rows(rows)) => match Block::wire(schema, rows) {
            Ok(block) => Fetched::Block(block),
            Err(e) => Fetched::Error(e),
        },
        Ok(RowEvent::Done { affected }) => Fetched::End(affected),
        Err(e) => Fetched::Error(e.into()),
    }
}

/// An Arrow batch source's step as [`Fetched`]; `total` is the row count
/// the source reports once it ended.
#[cfg(feature = "arrow")]
#[inline]
pub(crate) fn fetched_from_arrow(
    schema: &Arc<Schema>,
    step: Option<Result<arrow_array::RecordBatch>>,
    total: impl FnOnce() -> Option<u64>,
) -> Fetched {
    match step {
        Some(Ok(batch)) => Fetched::Block(Block::arrow(schema, &batch)),
        Some(Err(e)) => Fetched::Error(e),
        None => Fetched::End(total().unwrap_or(0)),
    }
}

#[cfg(test)]
#[path = "row_tests.rs"]
mod tests;
