//! Rows sent as Arrow: the values of the row inserters, gathered column by
//! column into record batches and sent as one IPC stream
//! (`FORMAT ARROWSTREAM`).
//!
//! Why: hyperd parses a HyperBinary COPY on one thread and ingests Arrow in
//! parallel, so on a small machine the same rows go in ~1.4x faster as Arrow
//! (DEVELOPMENT.md, "Row inserts"). Nothing else changes for the caller:
//! each value is checked and encoded by the same `ToHyperBinary` code as on
//! the HyperBinary wire, into its column's buffer (no null byte; a validity
//! bitmap instead). When a batch is full, each column becomes an Arrow array
//! in one pass; for most types the bytes are already Arrow's (little-endian
//! values), the rest convert through [`super::layout`].
//!
//! A few values HyperBinary stores have no Arrow form hyperd reads: the
//! latest timestamps (past `i64::MAX` microseconds after 1970, up to
//! hyperd's greatest, its `infinity`), TIME 24:00:00, and intervals with
//! more than 2^63 nanoseconds of time. A batch holding one is held back as
//! HyperBinary rows (`HeldRows`) for the inserter to send in a COPY of that
//! format of its own: the column buffers already hold each value's
//! HyperBinary bytes, so only null bytes are added. Nothing of this is
//! checked per row: batches end as before, and `frame_full` stays one
//! compare (`flush_at`).

use std::sync::Arc;

use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Time64MicrosecondType, UInt32Type,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, Date32Array, Decimal128Array,
    IntervalMonthDayNanoArray, PrimitiveArray, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_buffer::{
    BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::{BufMut, Bytes, BytesMut};
use hyperdb_api_core::types::{encode_value_or_null, ColumnType, ToHyperBinary};

use super::encoder::{ArrowEncoder, DEFAULT_ARROW_FLUSH_THRESHOLD};
use super::layout;
use super::schema::{arrow_type, UTC};
use crate::error::{Error, Result};
use crate::insert::encoder::{FrameError, HeldRows, RowSink};
use crate::table_definition::TableDefinition;
use crate::types::SqlType;

/// Rows per record batch: hyperd ingests batches of this size at full speed
/// (the `ArrowInserter` figures in the benchmark suite use the same).
pub(crate) const BATCH_ROWS: usize = 65_536;

/// A batch is also sent once its columns hold this many bytes (wide rows).
const BATCH_BYTES: usize = 16 << 20;

/// A [`RowSink`] that turns rows into one Arrow IPC stream of CopyData
/// frames.
#[derive(Debug)]
pub(crate) struct ArrowRows {
    columns: Vec<Column>,
    schema: SchemaRef,
    encoder: ArrowEncoder,
    /// Rows in the open batch.
    rows: usize,
    /// The open batch holds a value Arrow cannot carry.
    hold: bool,
    /// A batch held back, until the inserter takes it.
    held: Option<HeldRows>,
    /// `frame_full` from this many bytes: the flush threshold, or 0 while a
    /// batch is held back, so the inserter takes it at once.
    flush_at: usize,
    /// The insert failed taking a held batch: no batch goes out any more.
    abandoned: bool,
    /// A batch ends at this many bytes of values (or `BATCH_ROWS` rows).
    batch_bytes_max: usize,
}

/// One column of the open batch.
#[derive(Debug)]
struct Column {
    ty: SqlType,
    nullable: bool,
    /// Some values of this type have no Arrow form (see the module docs).
    checked: bool,
    /// Bytes of a fixed-width value, `None` for length-prefixed ones.
    width: Option<usize>,
    /// The values as HyperBinary encodes them, without null bytes. A NULL
    /// fixed-width value has a zeroed slot; a NULL text value nothing.
    values: BytesMut,
    /// Rows of the open batch that are NULL, ascending: nothing to do per
    /// value in the common case, a bitmap built once per batch otherwise.
    null_rows: Vec<u32>,
    /// Where the current row's value starts, to take it back.
    row_start: usize,
    /// The memory the last batch's array was handed (see `take_values`),
    /// taken back for the next batch once that array is gone.
    spent: Option<Bytes>,
}

impl ArrowRows {
    /// Fails for a table with a column Arrow cannot carry.
    pub(crate) fn new(table: &TableDefinition) -> Result<ArrowRows> {
        let mut fields = Vec::with_capacity(table.column_count());
        let mut columns = Vec::with_capacity(table.column_count());
        for c in table.columns() {
            let ty = *c.sql_type();
            let data_type = data_type(&ty).ok_or_else(|| Error::UnsupportedType {
                column: c.name().to_owned(),
                type_name: ty.to_string(),
                message: "this client cannot send it as Arrow; use InsertFormat::HyperBinary"
                    .into(),
            })?;
            fields.push(Field::new(c.name(), data_type, c.is_nullable()));
            columns.push(Column {
                ty,
                nullable: c.is_nullable(),
                checked: matches!(
                    ty,
                    SqlType::Timestamp | SqlType::TimestampTz | SqlType::Time | SqlType::Interval
                ),
                width: ty.fixed_width(),
                values: BytesMut::new(),
                null_rows: Vec::new(),
                row_start: 0,
                spent: None,
            });
        }
        Ok(ArrowRows {
            columns,
            schema: Arc::new(Schema::new(fields)),
            encoder: ArrowEncoder::new(table)?,
            rows: 0,
            hold: false,
            held: None,
            flush_at: DEFAULT_ARROW_FLUSH_THRESHOLD,
            abandoned: false,
            batch_bytes_max: BATCH_BYTES,
        })
    }

    /// Batches end at `bytes` bytes of values instead (a reader's batches,
    /// see `from_rows`).
    #[cfg(feature = "async")]
    pub(crate) fn with_batch_bytes(mut self, bytes: usize) -> ArrowRows {
        self.batch_bytes_max = bytes;
        self
    }

    /// Sends the open batch: converts its columns, queues the IPC message
    /// and copies it into `buf` as CopyData frames.
    fn send_batch(&mut self, buf: &mut BytesMut) -> Result<()> {
        if self.abandoned {
            return Err(crate::insert::copy_tx::insert_over());
        }
        if self.hold {
            return self.hold_batch();
        }
        let Some(batch) = self.take_batch()? else {
            return Ok(());
        };
        self.encoder.push_checked_batch(&batch)?;
        self.encoder.write_all_pending(buf)?;
        drop(batch);
        for c in &mut self.columns {
            c.reuse_spent();
        }
        Ok(())
    }

    /// The open batch as a record batch (`None` when it has no rows); the
    /// columns start over empty.
    pub(crate) fn take_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let rows = self.rows;
        let arrays = self
            .columns
            .iter_mut()
            .map(|c| c.take_array(rows))
            .collect::<Result<Vec<_>>>()?;
        self.rows = 0;
        Ok(Some(RecordBatch::try_new(self.schema.clone(), arrays)?))
    }

    /// Whether a value put since the last call has no Arrow form; for
    /// readers of rows (`RowBatcher`), which have no other format to send.
    #[cfg(feature = "async")]
    pub(crate) fn take_hold(&mut self) -> bool {
        std::mem::take(&mut self.hold)
    }

    /// Counts the row just put; `true` when the open batch is full.
    #[inline]
    pub(crate) fn row_done(&mut self) -> bool {
        self.rows += 1;
        self.rows == BATCH_ROWS
            || (self.rows.is_multiple_of(64) && self.batch_bytes() >= self.batch_bytes_max)
    }

    fn batch_bytes(&self) -> usize {
        self.columns.iter().map(|c| c.values.len()).sum()
    }

    /// The open batch as HyperBinary rows in `held` (for a COPY of that
    /// format); the columns start over empty. A column's buffer holds each
    /// value's HyperBinary bytes (a NULL: a zeroed slot if fixed-width,
    /// nothing otherwise), so a row is its values with a null byte before
    /// each of a nullable column.
    fn hold_batch(&mut self) -> Result<()> {
        self.hold = false;
        self.flush_at = 0;
        let rows = std::mem::take(&mut self.rows);
        let nulls: usize = self.columns.iter().filter(|c| c.nullable).count();
        let size = self.batch_bytes() + rows * nulls;
        let held = self.held.get_or_insert_with(|| HeldRows {
            rows: 0,
            data: BytesMut::new(),
        });
        held.data.reserve(size);
        let mut at = vec![0usize; self.columns.len()];
        let mut next_null = vec![0usize; self.columns.len()];
        for row in 0..rows {
            for (i, c) in self.columns.iter().enumerate() {
                let null = c.null_rows.get(next_null[i]) == Some(&(row as u32));
                if null {
                    next_null[i] += 1;
                }
                if c.nullable {
                    held.data.put_u8(u8::from(null));
                }
                let len = match c.width {
                    Some(width) => width,
                    None if null => 0,
                    None => {
                        let prefix = c.values.get(at[i]..).and_then(|v| v.first_chunk::<4>());
                        4 + u32::from_le_bytes(*prefix.ok_or_else(corrupt)?) as usize
                    }
                };
                let value = c.values.get(at[i]..at[i] + len).ok_or_else(corrupt)?;
                if !null {
                    held.data.extend_from_slice(value);
                }
                at[i] += len;
            }
        }
        held.rows += rows as u64;
        for c in &mut self.columns {
            c.values.clear();
            c.null_rows.clear();
        }
        Ok(())
    }

    /// The rest of `put` for a NULL, a value that may have no Arrow form
    /// (TIMESTAMP, TIME, INTERVAL) or an error: out of line, so that the
    /// plain-copy loop stays small enough for the compiler to unroll over a
    /// row.
    #[inline(never)]
    fn finish_put(
        &mut self,
        i: usize,
        encoded: hyperdb_api_core::Result<bool>,
    ) -> hyperdb_api_core::Result<()> {
        let col = &mut self.columns[i];
        if encoded? {
            // At most BATCH_ROWS rows, so the index fits.
            col.null_rows.push(self.rows as u32);
            col.values.put_bytes(0, col.width.unwrap_or(0));
        } else if col.checked && !col.arrow_carries_last() {
            self.hold = true;
        }
        Ok(())
    }
}

impl RowSink for ArrowRows {
    #[inline]
    fn begin_row(&mut self, _: &mut BytesMut) {}

    #[inline(always)]
    fn put(
        &mut self,
        _: &mut BytesMut,
        i: usize,
        column: &ColumnType,
        value: &dyn ToHyperBinary,
    ) -> hyperdb_api_core::Result<()> {
        let col = &mut self.columns[i];
        col.row_start = col.values.len();
        match encode_value_or_null(value, column, &mut col.values) {
            Ok(false) if !col.checked => Ok(()),
            other => self.finish_put(i, other),
        }
    }

    fn discard_row(&mut self, _: &mut BytesMut, values: usize) {
        let row = self.rows as u32;
        for col in &mut self.columns[..values] {
            col.values.truncate(col.row_start);
            if col.null_rows.last() == Some(&row) {
                col.null_rows.pop();
            }
        }
    }

    #[inline]
    fn end_row(&mut self, buf: &mut BytesMut) -> Result<()> {
        if self.row_done() {
            self.send_batch(buf)?;
        }
        Ok(())
    }

    /// Also true while a batch is held back: the inserter takes it next.
    #[inline]
    fn frame_full(&self, buf: &BytesMut) -> bool {
        buf.len() >= self.flush_at
    }

    /// Frames are closed as batches are copied in; a partial batch waits.
    /// Rows are not framed one by one, so none is ever too large.
    fn close_frame(&mut self, _: &mut BytesMut) -> Result<(), FrameError> {
        Ok(())
    }

    fn finish(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        self.send_batch(buf)?;
        Ok(self.end_stream(buf)?)
    }

    fn set_flush_threshold(&mut self, bytes: usize) {
        self.encoder.set_flush_threshold(bytes);
        self.flush_at = self.encoder.flush_threshold();
    }

    fn take_held(&mut self) -> Option<HeldRows> {
        self.flush_at = self.encoder.flush_threshold();
        self.held.take()
    }

    fn abandon(&mut self) {
        self.abandoned = true;
    }

    /// The end of the IPC stream (with its schema if no batch went); the
    /// next batch opens a new stream.
    fn end_stream(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.encoder.finish()?;
        self.encoder.write_all_pending(buf)
    }
}

impl Column {
    /// Whether the value just put has an Arrow form hyperd reads (see the
    /// module docs). Runs for every value of such a column, out of line
    /// (`finish_put`): checked inline in `put`, it doubled the time of the
    /// `inserter/arrow` bench, whose columns need no check (criterion, 1M
    /// rows: 18 -> 32-37 ms; the compiler stopped unrolling the row loop).
    fn arrow_carries_last(&self) -> bool {
        let v = self.values.get(self.row_start..).unwrap_or_default();
        match self.ty {
            SqlType::Timestamp | SqlType::TimestampTz => v
                .first_chunk::<8>()
                .is_none_or(|b| layout::arrow_timestamp(i64::from_le_bytes(*b)).is_some()),
            SqlType::Time => v
                .first_chunk::<8>()
                .is_none_or(|b| layout::arrow_time(i64::from_le_bytes(*b))),
            SqlType::Interval => v
                .first_chunk::<16>()
                .is_none_or(|b| layout::arrow_interval(*b).is_some()),
            _ => true,
        }
    }

    /// The batch's values as an Arrow array; the column is left empty.
    fn take_array(&mut self, rows: usize) -> Result<ArrayRef> {
        let nulls = (!self.null_rows.is_empty()).then(|| {
            let mut valid = BooleanBufferBuilder::new(rows);
            valid.append_n(rows, true);
            for &row in &self.null_rows {
                valid.set_bit(row as usize, false);
            }
            self.null_rows.clear();
            NullBuffer::new(valid.finish())
        });
        if let Some(array) = self.take_as_is(nulls.clone())? {
            return Ok(array);
        }
        let v = &self.values[..];
        let array: ArrayRef = match self.ty {
            SqlType::Bool => Arc::new(BooleanArray::new(
                BooleanBuffer::collect_bool(rows, |i| v[i] != 0),
                nulls,
            )),
            SqlType::Numeric { precision, scale } if precision <= 18 => {
                let array: Decimal128Array =
                    converted(v, nulls, |b: [u8; 8]| i128::from(i64::from_le_bytes(b)));
                Arc::new(array.with_precision_and_scale(precision, scale as i8)?)
            }
            SqlType::Date => Arc::new(converted::<_, 4>(v, nulls, |b| {
                layout::date32_from_julian(i32::from_le_bytes(b))
            }) as Date32Array),
            SqlType::Timestamp | SqlType::TimestampTz => {
                let array: TimestampMicrosecondArray = converted(v, nulls, |b| {
                    layout::unix_micros_from_hyper(i64::from_le_bytes(b))
                });
                if self.ty == SqlType::TimestampTz {
                    Arc::new(array.with_timezone(UTC))
                } else {
                    Arc::new(array)
                }
            }
            SqlType::Interval => Arc::new(converted::<_, 16>(v, nulls, |b| {
                layout::arrow_interval(b).unwrap_or_default()
            }) as IntervalMonthDayNanoArray),
            SqlType::Text
            | SqlType::Varchar(_)
            | SqlType::Char(_)
            | SqlType::Json
            | SqlType::Bytea
            | SqlType::Geography => {
                let (offsets, data) = unprefixed(v, rows, nulls.as_ref())?;
                if matches!(self.ty, SqlType::Bytea | SqlType::Geography) {
                    Arc::new(BinaryArray::try_new(offsets, data, nulls)?)
                } else {
                    Arc::new(StringArray::try_new(offsets, data, nulls)?)
                }
            }
            // `new` accepted only the types above.
            other => {
                return Err(Error::UnsupportedType {
                    column: String::new(),
                    type_name: other.to_string(),
                    message: "no Arrow layout for it".into(),
                })
            }
        };
        self.values.clear();
        Ok(array)
    }

    /// After a batch went out: the memory its array had back as this
    /// column's buffer, or, if something still holds it, a new one as large.
    ///
    /// Why: a batch's columns are ~1.5 MiB here, so new ones each batch came
    /// from fresh pages and the kernel faulted and zeroed every one of them,
    /// ~15 % of the `Inserter`'s CPU.
    fn reuse_spent(&mut self) {
        if let Some(spent) = self.spent.take() {
            let len = spent.len();
            match spent.try_into_mut() {
                Ok(mut values) => {
                    values.clear();
                    self.values = values;
                }
                Err(_) => self.values.reserve(len),
            }
        }
    }

    /// For the types whose HyperBinary bytes are Arrow's values as they are:
    /// the array, handed the column's memory without a copy.
    fn take_as_is(&mut self, nulls: Option<NullBuffer>) -> Result<Option<ArrayRef>> {
        Ok(Some(match self.ty {
            SqlType::SmallInt => Arc::new(self.take_values::<Int16Type>(nulls)),
            SqlType::Int => Arc::new(self.take_values::<Int32Type>(nulls)),
            SqlType::BigInt => Arc::new(self.take_values::<Int64Type>(nulls)),
            SqlType::Real => Arc::new(self.take_values::<Float32Type>(nulls)),
            SqlType::Double => Arc::new(self.take_values::<Float64Type>(nulls)),
            SqlType::Oid => Arc::new(self.take_values::<UInt32Type>(nulls)),
            SqlType::Time => Arc::new(self.take_values::<Time64MicrosecondType>(nulls)),
            SqlType::Numeric { precision, scale } if precision > 18 => Arc::new(
                self.take_values::<Decimal128Type>(nulls)
                    .with_precision_and_scale(precision, scale as i8)?,
            ),
            _ => return Ok(None),
        }))
    }

    /// The values as `T`s. The memory moves into the array (the allocator
    /// aligns it for any primitive; a misaligned one would be copied); the
    /// column keeps a handle on it to take it back (`reuse_spent`).
    fn take_values<T: ArrowPrimitiveType>(
        &mut self,
        nulls: Option<NullBuffer>,
    ) -> PrimitiveArray<T> {
        let len = self.values.len() / std::mem::size_of::<T::Native>();
        let bytes = std::mem::take(&mut self.values).freeze();
        self.spent = Some(bytes.clone());
        let buffer = if bytes
            .as_ptr()
            .align_offset(std::mem::align_of::<T::Native>())
            == 0
        {
            Buffer::from(bytes)
        } else {
            Buffer::from_slice_ref(&bytes)
        };
        PrimitiveArray::new(ScalarBuffer::new(buffer, 0, len), nulls)
    }
}

/// A column converted value by value from `W`-byte HyperBinary values.
fn converted<T: ArrowPrimitiveType, const W: usize>(
    v: &[u8],
    nulls: Option<NullBuffer>,
    convert: impl Fn([u8; W]) -> T::Native,
) -> PrimitiveArray<T> {
    let (chunks, _) = v.as_chunks::<W>();
    let values: ScalarBuffer<T::Native> = chunks.iter().map(|b| convert(*b)).collect();
    PrimitiveArray::new(values, nulls)
}

/// Arrow offsets and data from length-prefixed values (a NULL row has none).
fn unprefixed(
    v: &[u8],
    rows: usize,
    nulls: Option<&NullBuffer>,
) -> Result<(OffsetBuffer<i32>, Buffer)> {
    let mut offsets = Vec::with_capacity(rows + 1);
    let mut data = Vec::with_capacity(v.len().saturating_sub(4 * rows));
    offsets.push(0i32);
    let mut rest = v;
    for row in 0..rows {
        if nulls.is_none_or(|n| n.is_valid(row)) {
            let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(corrupt)?;
            let len = u32::from_le_bytes(*len) as usize;
            let value = tail.get(..len).ok_or_else(corrupt)?;
            data.extend_from_slice(value);
            rest = &tail[len..];
        }
        offsets.push(
            i32::try_from(data.len()).map_err(|_| {
                Error::invalid_argument("row", "a batch's text column exceeds 2 GiB")
            })?,
        );
    }
    Ok((
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(data),
    ))
}

#[cold]
fn corrupt() -> Error {
    Error::invalid_argument("row", "internal: column buffer out of step with its rows")
}

/// The Arrow type a column is sent as: what hyperd reads it as, except
/// DATE, which goes as Date32 (Julian days map to it exactly).
fn data_type(ty: &SqlType) -> Option<DataType> {
    match ty {
        SqlType::Date => Some(DataType::Date32),
        _ => arrow_type(ty),
    }
}

#[cfg(test)]
#[path = "row_batch_tests.rs"]
mod tests;
