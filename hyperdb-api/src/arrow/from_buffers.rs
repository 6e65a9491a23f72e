//! Record batches from raw column buffers.
//!
//! Why: a binding (Node.js) gathers a batch of values in its own memory,
//! typed arrays and one string a text column, and hands them over in one
//! call. Turning those buffers into a [`RecordBatch`] of the table's Arrow
//! schema is the same work for every binding, so it lives here and is
//! tested here: fixed-width values are copied as they are, text is
//! converted from UTF-16 (the encoding JavaScript strings have) and
//! NUMERIC is parsed from exact decimal text, each with an error naming
//! the row, column and value it could not take.

use std::sync::Arc;

use arrow_array::types::{
    Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    IntervalMonthDayNanoType, Time64MicrosecondType, TimestampMicrosecondType, UInt32Type,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, PrimitiveArray, RecordBatch,
    StringArray,
};
use arrow_buffer::{
    BooleanBuffer, Buffer, IntervalMonthDayNano, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{DataType, Field, IntervalUnit, SchemaRef, TimeUnit};
use hyperdb_api_core::types::Numeric;

use crate::error::{Error, Result, RowErrorKind};

/// The values of one column of a batch.
#[derive(Debug, Clone, Copy)]
pub enum ColumnBuffer<'a> {
    /// Fixed-width little-endian values, as many bytes a value as the
    /// field's Arrow type has; Boolean takes one byte a value (0 or not);
    /// INTERVAL takes 16: months (i32), days (i32), microseconds (i64).
    Fixed(&'a [u8]),
    /// Text (or NUMERIC as exact decimal text): the UTF-16 code units of
    /// all values back to back, and `rows + 1` offsets into them.
    Utf16 {
        units: &'a [u16],
        offsets: &'a [u32],
    },
    /// Bytes of all values back to back, and `rows + 1` offsets; for a
    /// text column, their UTF-8 (each value checked), which a caller whose
    /// text is ASCII has without a conversion: no UTF-16 copy to make and
    /// narrow again.
    Binary { data: &'a [u8], offsets: &'a [u32] },
}

/// One column of a batch: its values and which rows are NULL.
#[derive(Debug, Clone, Copy)]
pub struct ColumnInput<'a> {
    pub values: ColumnBuffer<'a>,
    /// One byte a row, 0 for NULL; `None` when no row is NULL. A NULL
    /// row's value slot is ignored (but must be there).
    pub validity: Option<&'a [u8]>,
}

/// A batch of `rows` rows with `schema` from `columns` (one per field, in
/// the schema's order). `first_row` is the index of the batch's first row
/// within the whole insert, for error messages.
pub fn batch_from_buffers(
    schema: &SchemaRef,
    rows: usize,
    first_row: u64,
    columns: &[ColumnInput<'_>],
) -> Result<RecordBatch> {
    if columns.len() != schema.fields().len() {
        return Err(Error::InvalidRow {
            row: first_row,
            column: None,
            kind: RowErrorKind::ColumnCount,
            message: format!(
                "{} column buffers for a table of {} columns",
                columns.len(),
                schema.fields().len()
            ),
        });
    }
    let arrays = schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(field, input)| {
            let at = Column {
                field,
                rows,
                first_row,
            };
            at.array(input)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(schema.clone(), arrays)?)
}

/// Where a column's values go, for building and for error messages.
struct Column<'f> {
    field: &'f Field,
    rows: usize,
    first_row: u64,
}

impl Column<'_> {
    fn array(&self, input: &ColumnInput<'_>) -> Result<ArrayRef> {
        let nulls = self.nulls(input.validity)?;
        if let Some(row) = nulls
            .as_ref()
            .filter(|_| !self.field.is_nullable())
            .and_then(|n| n.iter().position(|valid| !valid))
        {
            return Err(self.error(
                row,
                RowErrorKind::NullInNotNull,
                "the value is marked NULL".into(),
            ));
        }
        let dt = self.field.data_type();
        let array: ArrayRef = match (dt, input.values) {
            (DataType::Boolean, ColumnBuffer::Fixed(bytes)) => {
                let bytes = self.fixed(bytes, 1)?;
                let values = BooleanBuffer::from_iter(bytes.iter().map(|&b| b != 0));
                Arc::new(BooleanArray::new(values, nulls))
            }
            (DataType::Int16, ColumnBuffer::Fixed(b)) => self.primitive::<Int16Type>(b, nulls)?,
            (DataType::Int32, ColumnBuffer::Fixed(b)) => self.primitive::<Int32Type>(b, nulls)?,
            (DataType::Int64, ColumnBuffer::Fixed(b)) => self.primitive::<Int64Type>(b, nulls)?,
            (DataType::UInt32, ColumnBuffer::Fixed(b)) => self.primitive::<UInt32Type>(b, nulls)?,
            (DataType::Float32, ColumnBuffer::Fixed(b)) => {
                self.primitive::<Float32Type>(b, nulls)?
            }
            (DataType::Float64, ColumnBuffer::Fixed(b)) => {
                self.primitive::<Float64Type>(b, nulls)?
            }
            (DataType::Date64, ColumnBuffer::Fixed(b)) => self.primitive::<Date64Type>(b, nulls)?,
            (DataType::Time64(TimeUnit::Microsecond), ColumnBuffer::Fixed(b)) => {
                self.time_of_day(b, nulls.as_ref())?;
                self.primitive::<Time64MicrosecondType>(b, nulls)?
            }
            (DataType::Timestamp(TimeUnit::Microsecond, _), ColumnBuffer::Fixed(b)) => {
                self.primitive::<TimestampMicrosecondType>(b, nulls)?
            }
            (DataType::Interval(IntervalUnit::MonthDayNano), ColumnBuffer::Fixed(b)) => {
                self.interval(b, nulls)?
            }
            (DataType::Decimal128(precision, scale), ColumnBuffer::Utf16 { units, offsets }) => {
                self.decimal(units, offsets, *precision, *scale, nulls.as_ref())?
            }
            (DataType::Utf8, ColumnBuffer::Utf16 { units, offsets }) => {
                self.text(units, offsets, nulls)?
            }
            (DataType::Utf8, ColumnBuffer::Binary { data, offsets }) => {
                self.utf8_text(data, offsets, nulls)?
            }
            (DataType::Binary, ColumnBuffer::Binary { data, offsets }) => {
                let offsets = self.offsets(offsets, data.len())?;
                Arc::new(BinaryArray::try_new(
                    offsets,
                    Buffer::from_slice_ref(data),
                    nulls,
                )?)
            }
            (dt, values) => {
                return Err(self.error(
                    0,
                    RowErrorKind::WrongType,
                    format!(
                        "{} values cannot fill an Arrow {dt} column",
                        kind_name(&values)
                    ),
                ))
            }
        };
        Ok(array.slice(0, self.rows))
    }

    fn error(&self, row: usize, kind: RowErrorKind, message: String) -> Error {
        Error::InvalidRow {
            row: self.first_row + row as u64,
            column: Some(self.field.name().clone()),
            kind,
            message,
        }
    }

    fn size_error(&self, what: &str, got: usize, want: usize) -> Error {
        self.error(
            0,
            RowErrorKind::ColumnCount,
            format!(
                "{what}: {got} given, {want} expected for {} rows",
                self.rows
            ),
        )
    }

    /// `bytes` holds exactly `rows` values of `width` bytes.
    fn fixed<'b>(&self, bytes: &'b [u8], width: usize) -> Result<&'b [u8]> {
        let want = self.rows.saturating_mul(width);
        if bytes.len() != want {
            return Err(self.size_error("value bytes", bytes.len(), want));
        }
        Ok(bytes)
    }

    fn nulls(&self, validity: Option<&[u8]>) -> Result<Option<NullBuffer>> {
        let Some(validity) = validity else {
            return Ok(None);
        };
        if validity.len() != self.rows {
            return Err(self.size_error("validity bytes", validity.len(), self.rows));
        }
        if validity.iter().all(|&v| v != 0) {
            return Ok(None);
        }
        Ok(Some(NullBuffer::new(BooleanBuffer::from_iter(
            validity.iter().map(|&v| v != 0),
        ))))
    }

    fn primitive<T: ArrowPrimitiveType>(
        &self,
        bytes: &[u8],
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayRef> {
        let bytes = self.fixed(bytes, std::mem::size_of::<T::Native>())?;
        // `from_slice_ref` copies into a fresh, suitably aligned buffer.
        let values = ScalarBuffer::<T::Native>::new(Buffer::from_slice_ref(bytes), 0, self.rows);
        let array = PrimitiveArray::<T>::try_new(values, nulls)?
            .with_data_type(self.field.data_type().clone());
        Ok(Arc::new(array))
    }

    /// TIME values must be below 24:00:00: hyperd's Arrow reader refuses
    /// the whole stream otherwise, naming no row.
    fn time_of_day(&self, bytes: &[u8], nulls: Option<&NullBuffer>) -> Result<()> {
        const DAY_MICROS: i64 = 86_400_000_000;
        let bytes = self.fixed(bytes, 8)?;
        for (row, v) in bytes.chunks_exact(8).enumerate() {
            let mut micros = [0u8; 8];
            micros.copy_from_slice(v);
            let micros = i64::from_le_bytes(micros);
            let valid = nulls.is_none_or(|n| n.is_valid(row));
            if valid && !(0..DAY_MICROS).contains(&micros) {
                return Err(self.error(
                    row,
                    RowErrorKind::DateTimeOutOfRange,
                    format!("TIME of {micros} microseconds: inserts take 00:00:00 up to, not including, 24:00:00"),
                ));
            }
        }
        Ok(())
    }

    fn interval(&self, bytes: &[u8], nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        let bytes = self.fixed(bytes, 16)?;
        let values = bytes
            .chunks_exact(16)
            .enumerate()
            .map(|(row, v)| {
                let le4 = |at: usize| i32::from_le_bytes([v[at], v[at + 1], v[at + 2], v[at + 3]]);
                let mut micros = [0u8; 8];
                micros.copy_from_slice(&v[8..16]);
                let micros = i64::from_le_bytes(micros);
                let nanos = micros.checked_mul(1000).ok_or_else(|| {
                    self.error(
                        row,
                        RowErrorKind::OutOfRange,
                        format!("INTERVAL of {micros} microseconds is out of range"),
                    )
                })?;
                Ok(IntervalMonthDayNano::new(le4(0), le4(4), nanos))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(PrimitiveArray::<IntervalMonthDayNanoType>::new(
            values.into(),
            nulls,
        )))
    }

    /// `rows + 1` offsets, non-decreasing, ending within `len`.
    fn checked_offsets(&self, offsets: &[u32], len: usize) -> Result<()> {
        if offsets.len() != self.rows + 1 {
            return Err(self.size_error("offsets", offsets.len(), self.rows + 1));
        }
        if let Some(row) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return Err(self.error(row, RowErrorKind::OutOfRange, "offsets decrease".into()));
        }
        let end = offsets[self.rows] as usize;
        if end > len {
            return Err(self.size_error("data", len, end));
        }
        Ok(())
    }

    fn offsets(&self, offsets: &[u32], len: usize) -> Result<OffsetBuffer<i32>> {
        self.checked_offsets(offsets, len)?;
        let base = offsets[0];
        let ends = offsets
            .iter()
            .map(|&o| i32::try_from(o - base))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| self.too_large())?;
        Ok(OffsetBuffer::new(ends.into()))
    }

    fn too_large(&self) -> Error {
        self.error(
            0,
            RowErrorKind::OutOfRange,
            "more than 2 GiB of values in one batch".into(),
        )
    }

    /// Each value's code units, with its row.
    fn values_of<'u>(
        &self,
        units: &'u [u16],
        offsets: &'u [u32],
    ) -> Result<impl Iterator<Item = (usize, &'u [u16])> + 'u> {
        self.checked_offsets(offsets, units.len())?;
        Ok(offsets
            .windows(2)
            .enumerate()
            .map(move |(row, w)| (row, &units[w[0] as usize..w[1] as usize])))
    }

    fn text(&self, units: &[u16], offsets: &[u32], nulls: Option<NullBuffer>) -> Result<ArrayRef> {
        // The offsets are checked against `rows` before anything is sized
        // by it: a row count the buffers do not back must not allocate.
        let values = self.values_of(units, offsets)?;
        let mut data = Vec::with_capacity(units.len());
        let mut ends = Vec::with_capacity(self.rows + 1);
        ends.push(0i32);
        for (row, value) in values {
            if value.iter().all(|&u| u < 0x80) {
                data.extend(value.iter().map(|&u| u as u8));
            } else {
                self.push_utf8(row, value, &mut data)?;
            }
            ends.push(i32::try_from(data.len()).map_err(|_| self.too_large())?);
        }
        let offsets = OffsetBuffer::new(ends.into());
        Ok(Arc::new(StringArray::try_new(offsets, data.into(), nulls)?))
    }

    /// Text given as UTF-8: each value must be UTF-8 on its own.
    /// `StringArray::try_new` checks that (the whole once, then each
    /// offset on a character); only when it refuses is the row found, so
    /// the refusal names it rather than the whole batch.
    fn utf8_text(
        &self,
        data: &[u8],
        offsets: &[u32],
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayRef> {
        let ends = self.offsets(offsets, data.len())?;
        let base = offsets[0] as usize;
        let data = &data[base..base + ends.iter().last().map_or(0, |&e| e as usize)];
        match StringArray::try_new(ends.clone(), Buffer::from_slice_ref(data), nulls) {
            Ok(array) => Ok(Arc::new(array)),
            Err(e) => Err(self.not_utf8(data, &ends).unwrap_or_else(|| e.into())),
        }
    }

    /// The refusal of the first row whose bytes are not UTF-8 on their own
    /// (invalid bytes, or a value starting inside a character).
    fn not_utf8(&self, data: &[u8], ends: &OffsetBuffer<i32>) -> Option<Error> {
        let at = match std::str::from_utf8(data) {
            Err(e) => e.valid_up_to(),
            Ok(_) => *ends
                .iter()
                .find(|&&end| !is_utf8_boundary(data, end as usize))? as usize,
        };
        let row = ends
            .windows(2)
            .position(|w| (w[0] as usize..w[1] as usize).contains(&at))
            .unwrap_or(0);
        Some(self.error(
            row,
            RowErrorKind::InvalidText,
            "the bytes of a text value are not UTF-8".into(),
        ))
    }

    fn push_utf8(&self, row: usize, value: &[u16], out: &mut Vec<u8>) -> Result<()> {
        let mut buf = [0u8; 4];
        for c in char::decode_utf16(value.iter().copied()) {
            let c = c.map_err(|e| {
                self.error(
                    row,
                    RowErrorKind::WrongType,
                    format!(
                        "the string holds a lone UTF-16 surrogate (0x{:04X}), which is not text",
                        e.unpaired_surrogate()
                    ),
                )
            })?;
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Ok(())
    }

    fn decimal(
        &self,
        units: &[u16],
        offsets: &[u32],
        precision: u8,
        scale: i8,
        nulls: Option<&NullBuffer>,
    ) -> Result<ArrayRef> {
        let column_scale = u8::try_from(scale).unwrap_or(0);
        let checked = self.values_of(units, offsets)?;
        let mut values = Vec::with_capacity(self.rows);
        for (row, value) in checked {
            if nulls.is_some_and(|n| n.is_null(row)) {
                values.push(0);
                continue;
            }
            let text = String::from_utf16_lossy(value);
            let out_of_range = |why: String| {
                self.error(
                    row,
                    RowErrorKind::OutOfRange,
                    format!("{text:?} for NUMERIC({precision},{scale}): {why}"),
                )
            };
            let parsed: Numeric = text.parse().map_err(|e: hyperdb_api_core::Error| {
                // No number at all, or one no NUMERIC holds.
                let kind = match e.kind() {
                    hyperdb_api_core::error::ErrorKind::InvalidInput => RowErrorKind::InvalidText,
                    _ => RowErrorKind::OutOfRange,
                };
                self.error(row, kind, e.message().to_string())
            })?;
            let exact = parsed
                .rescale(column_scale)
                .map_err(|e| out_of_range(e.message().to_string()))?;
            if exact.precision() > precision {
                return Err(out_of_range(format!("more than {precision} digits")));
            }
            values.push(exact.unscaled());
        }
        let array = PrimitiveArray::<Decimal128Type>::new(values.into(), nulls.cloned())
            .with_precision_and_scale(precision, scale)?;
        Ok(Arc::new(array))
    }
}

fn kind_name(values: &ColumnBuffer<'_>) -> &'static str {
    match values {
        ColumnBuffer::Fixed(_) => "fixed-width",
        ColumnBuffer::Utf16 { .. } => "text",
        ColumnBuffer::Binary { .. } => "byte",
    }
}

/// Whether byte `at` of UTF-8 `data` starts a character (or is its end).
fn is_utf8_boundary(data: &[u8], at: usize) -> bool {
    data.get(at).is_none_or(|&b| (b as i8) >= -0x40)
}

#[cfg(test)]
#[path = "from_buffers_tests.rs"]
mod tests;
