//! Arrow record batches as [`Row`](crate::Row)s: each batch is written once
//! into one buffer in the `DataRow` layout with HyperBinary values (what the
//! PostgreSQL-protocol connection receives), so `try_get`, `FromRow` and
//! every type conversion are the same code for both transports.
//!
//! Arrow types are the ones hyperd produces (see [`crate::arrow`]); the
//! conversions back to HyperBinary are exact: DATE as Date64 in whole days,
//! TIMESTAMP as microseconds since 1970 (shifted to Hyper's epoch, Julian
//! day 0, with wrapping arithmetic so that even hyperd's `infinity`, which
//! exceeds `i64::MAX` as Hyper micros, comes back bit for bit), INTERVAL's
//! nanoseconds as microseconds.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, IntervalMonthDayNanoType, Time64MicrosecondType, TimestampMicrosecondType,
    UInt32Type,
};
use arrow_array::{Array, ArrayRef, PrimitiveArray, RecordBatch};
use arrow_schema::{DataType, IntervalUnit, SchemaRef, TimeUnit};
use bytes::{BufMut, Bytes, BytesMut};

use hyperdb_api_core::protocol::backend::DataRow;

use crate::error::{Error, Result};
use crate::rows::{Row, Schema};
use crate::types::SqlType;

/// Julian day number of 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;
const MICROS_PER_DAY: i64 = 86_400_000_000;
const MILLIS_PER_DAY: i64 = 86_400_000;

/// The row schema for an Arrow result: names, and SQL types as hyperd's
/// Arrow mapping gives them (a field this client cannot map gets no type;
/// typed reads of it fail with [`Error::TypeMismatch`]).
pub(crate) fn row_schema(arrow: &SchemaRef) -> Arc<Schema> {
    Schema::from_sql_types(
        arrow
            .fields()
            .iter()
            .map(|f| (f.name().clone(), crate::arrow::sql_type(f).ok())),
    )
}

/// One batch as `DataRow` bodies in one buffer.
#[derive(Debug, Default)]
pub(crate) struct EncodedRows {
    pub(crate) buf: Bytes,
    pub(crate) rows: Vec<Range<usize>>,
}

/// One column, downcast once per batch.
enum Col<'a> {
    Bool(&'a arrow_array::BooleanArray),
    I16(&'a PrimitiveArray<Int16Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I64(&'a PrimitiveArray<Int64Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    F32(&'a PrimitiveArray<Float32Type>),
    F64(&'a PrimitiveArray<Float64Type>),
    /// Unscaled, written as i64 (precision <= 18) or i128.
    Decimal(&'a PrimitiveArray<Decimal128Type>, bool),
    Str(&'a arrow_array::StringArray),
    Bin(&'a arrow_array::BinaryArray),
    Date64(&'a PrimitiveArray<Date64Type>),
    Date32(&'a PrimitiveArray<Date32Type>),
    Time(&'a PrimitiveArray<Time64MicrosecondType>),
    Timestamp(&'a PrimitiveArray<TimestampMicrosecondType>),
    Interval(&'a PrimitiveArray<IntervalMonthDayNanoType>),
    /// A type without a HyperBinary form here: written as an empty value.
    Opaque,
}

impl<'a> Col<'a> {
    fn new(array: &'a ArrayRef, sql_type: Option<&SqlType>) -> Col<'a> {
        match array.data_type() {
            DataType::Boolean => Col::Bool(array.as_boolean()),
            DataType::Int16 => Col::I16(array.as_primitive()),
            DataType::Int32 => Col::I32(array.as_primitive()),
            DataType::Int64 => Col::I64(array.as_primitive()),
            DataType::UInt32 => Col::U32(array.as_primitive()),
            DataType::Float32 => Col::F32(array.as_primitive()),
            DataType::Float64 => Col::F64(array.as_primitive()),
            DataType::Decimal128(_, _) => {
                let wide = match sql_type {
                    Some(SqlType::Numeric { precision, .. }) => *precision > 18,
                    _ => true,
                };
                Col::Decimal(array.as_primitive(), wide)
            }
            DataType::Utf8 => Col::Str(array.as_string()),
            DataType::Binary => Col::Bin(array.as_binary()),
            DataType::Date64 => Col::Date64(array.as_primitive()),
            DataType::Date32 => Col::Date32(array.as_primitive()),
            DataType::Time64(TimeUnit::Microsecond) => Col::Time(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Microsecond, _) => Col::Timestamp(array.as_primitive()),
            DataType::Interval(IntervalUnit::MonthDayNano) => Col::Interval(array.as_primitive()),
            _ => Col::Opaque,
        }
    }

    /// The byte width of this column's values, when it is fixed.
    #[inline]
    fn fixed_width(&self) -> Option<i32> {
        Some(match self {
            Col::Bool(_) => 1,
            Col::I16(_) => 2,
            Col::I32(_) | Col::U32(_) | Col::F32(_) | Col::Date64(_) | Col::Date32(_) => 4,
            Col::I64(_) | Col::F64(_) | Col::Time(_) | Col::Timestamp(_) => 8,
            Col::Decimal(_, false) => 8,
            Col::Decimal(_, true) | Col::Interval(_) => 16,
            Col::Str(_) | Col::Bin(_) | Col::Opaque => return None,
        })
    }

    /// Appends row `i`'s value (non-NULL) without its length.
    #[inline]
    fn put(&self, i: usize, buf: &mut BytesMut) {
        match self {
            Col::Bool(a) => buf.put_u8(u8::from(a.value(i))),
            Col::I16(a) => buf.put_i16_le(a.value(i)),
            Col::I32(a) => buf.put_i32_le(a.value(i)),
            Col::I64(a) => buf.put_i64_le(a.value(i)),
            Col::U32(a) => buf.put_u32_le(a.value(i)),
            Col::F32(a) => buf.put_f32_le(a.value(i)),
            Col::F64(a) => buf.put_f64_le(a.value(i)),
            // Precision <= 18 guarantees the unscaled value fits an i64.
            Col::Decimal(a, false) => buf.put_i64_le(a.value(i) as i64),
            Col::Decimal(a, true) => buf.put_i128_le(a.value(i)),
            Col::Str(a) => buf.put_slice(a.value(i).as_bytes()),
            Col::Bin(a) => buf.put_slice(a.value(i)),
            Col::Date64(a) => {
                let days = a.value(i).div_euclid(MILLIS_PER_DAY);
                buf.put_i32_le((days + UNIX_EPOCH_JULIAN_DAY) as i32);
            }
            Col::Date32(a) => {
                buf.put_i32_le((i64::from(a.value(i)) + UNIX_EPOCH_JULIAN_DAY) as i32);
            }
            Col::Time(a) => buf.put_i64_le(a.value(i)),
            Col::Timestamp(a) => {
                let hyper = a
                    .value(i)
                    .wrapping_add(UNIX_EPOCH_JULIAN_DAY * MICROS_PER_DAY);
                buf.put_u64_le(hyper as u64);
            }
            Col::Interval(a) => {
                let v = a.value(i);
                buf.put_i64_le(v.nanoseconds / 1000);
                buf.put_i32_le(v.days);
                buf.put_i32_le(v.months);
            }
            Col::Opaque => {}
        }
    }
}

/// The rows of one encoded batch, handed out one at a time: the cursor
/// behind every Arrow-fed row stream (the PostgreSQL protocol's `Rows` and
/// `AsyncRows` for plain queries, and gRPC rows).
#[derive(Debug, Default)]
pub(crate) struct BatchRows {
    current: EncodedRows,
    pos: usize,
}

impl BatchRows {
    /// The next row of the batch at hand, without touching the network.
    #[inline]
    pub(crate) fn next(&mut self, schema: &Arc<Schema>) -> Option<Row> {
        let range = self.current.rows.get(self.pos)?;
        self.pos += 1;
        let data = DataRow::new(self.current.buf.slice(range.clone()));
        Some(Row::new(schema.clone(), data))
    }

    /// Takes what the batch source produced: `Some(Ok(()))` when a batch was
    /// loaded, `Some(Err)` on an error, `None` at the end of the result.
    pub(crate) fn load(
        &mut self,
        fetched: Option<Result<RecordBatch>>,
        schema: &Schema,
    ) -> Option<Result<()>> {
        self.current = EncodedRows::default();
        self.pos = 0;
        let batch = match fetched? {
            Ok(batch) => batch,
            Err(e) => return Some(Err(e)),
        };
        Some(encode_batch(&batch, schema).map(|rows| self.current = rows))
    }
}

impl BatchRows {
    /// One step of a row stream fed by batches, after the batch at hand ran
    /// out: loads `fetched` and returns `None` to keep reading, or what the
    /// stream yields next (an error, or the end, recording the affected
    /// count from `total`).
    pub(crate) fn advance(
        &mut self,
        fetched: Option<Result<RecordBatch>>,
        schema: &Schema,
        affected: &mut Option<u64>,
        total: impl FnOnce() -> Option<u64>,
    ) -> Option<Option<Result<Row>>> {
        match self.load(fetched, schema) {
            Some(Ok(())) => None,
            Some(Err(e)) => {
                *affected = Some(0);
                Some(Some(Err(e)))
            }
            None => {
                *affected = Some(total().unwrap_or(0));
                Some(None)
            }
        }
    }
}

/// Writes every row of `batch` as a `DataRow` body (i16 BE field count,
/// then per field an i32 BE length, -1 for NULL, and the value).
pub(crate) fn encode_batch(batch: &RecordBatch, schema: &Schema) -> Result<EncodedRows> {
    let n = batch.num_columns();
    let count = i16::try_from(n).map_err(|_| Error::UnsupportedType {
        column: String::new(),
        type_name: format!("{n} columns"),
        message: "a row holds at most 32767 columns".into(),
    })?;
    let cols: Vec<Col<'_>> = batch
        .columns()
        .iter()
        .zip(schema.columns())
        .map(|(a, c)| Col::new(a, c.sql_type()))
        .collect();
    // Null bitmaps read directly: `Array::is_null` is a virtual call per value.
    let nulls: Vec<Option<&arrow_buffer::NullBuffer>> =
        batch.columns().iter().map(|a| a.nulls()).collect();
    let mut buf =
        BytesMut::with_capacity(batch.get_array_memory_size() + batch.num_rows() * (2 + 4 * n));
    let mut rows = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let start = buf.len();
        buf.put_i16(count);
        for (col, nulls) in cols.iter().zip(&nulls) {
            if nulls.is_some_and(|n| n.is_null(i)) {
                buf.put_i32(-1);
                continue;
            }
            if let Some(width) = col.fixed_width() {
                buf.put_i32(width);
                col.put(i, &mut buf);
                continue;
            }
            let len_at = buf.len();
            buf.put_i32(0);
            col.put(i, &mut buf);
            let len = i32::try_from(buf.len() - len_at - 4)
                .map_err(|_| Error::invalid_argument("value", "a single value exceeds 2 GiB"))?;
            buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        rows.push(start..buf.len());
    }
    Ok(EncodedRows {
        buf: buf.freeze(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::IntervalMonthDayNano;
    use arrow_array::{
        BooleanArray, Date64Array, Decimal128Array, Int32Array, IntervalMonthDayNanoArray,
        StringArray, TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Schema as ArrowSchema};

    use crate::types::{Date, Interval, Numeric, Timestamp};

    #[test]
    fn values_read_back_through_row() {
        let fields = vec![
            Field::new("b", DataType::Boolean, true),
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("n", DataType::Decimal128(10, 2), true),
            Field::new("d", DataType::Date64, true),
            Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, None), true),
            Field::new("iv", DataType::Interval(IntervalUnit::MonthDayNano), true),
        ];
        let arrow = Arc::new(ArrowSchema::new(fields));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(BooleanArray::from(vec![Some(true), None])),
            Arc::new(Int32Array::from(vec![Some(-7), Some(1)])),
            Arc::new(StringArray::from(vec![Some("hé"), None])),
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None])
                    .with_precision_and_scale(10, 2)
                    .expect("decimal"),
            ),
            // 2000-01-01 and 1969-12-31 (a negative Date64).
            Arc::new(Date64Array::from(vec![
                Some(946_684_800_000),
                Some(-86_400_000),
            ])),
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(946_684_800_000_001),
                None,
            ])),
            Arc::new(IntervalMonthDayNanoArray::from(vec![
                Some(IntervalMonthDayNano::new(1, 2, 3_000)),
                None,
            ])),
        ];
        let batch = RecordBatch::try_new(arrow.clone(), columns).expect("batch");
        let schema = row_schema(&arrow);
        let encoded = encode_batch(&batch, &schema).expect("encode");
        let row = |i: usize| {
            Row::new(
                schema.clone(),
                DataRow::new(encoded.buf.slice(encoded.rows[i].clone())),
            )
        };
        let (r0, r1) = (row(0), row(1));
        assert!(r0.try_get::<bool>("b").expect("b"));
        assert_eq!(r1.try_get::<Option<bool>>("b").expect("b"), None);
        assert_eq!(r0.try_get::<i32>("i").expect("i"), -7);
        assert_eq!(r0.try_get::<String>("s").expect("s"), "hé");
        assert_eq!(
            r0.try_get::<Numeric>("n").expect("n"),
            Numeric::new(12345, 2).expect("numeric")
        );
        assert_eq!(
            r0.try_get::<Date>("d").expect("d"),
            Date::from_ymd(2000, 1, 1).expect("date")
        );
        assert_eq!(
            r1.try_get::<Date>("d").expect("d"),
            Date::from_ymd(1969, 12, 31).expect("date")
        );
        assert_eq!(
            r0.try_get::<Timestamp>("t").expect("t").micros_since_2000(),
            1
        );
        assert_eq!(
            r0.try_get::<Interval>("iv").expect("iv"),
            Interval {
                months: 1,
                days: 2,
                micros: 3
            }
        );
        assert!(matches!(
            r1.try_get::<String>("s"),
            Err(Error::UnexpectedNull { .. })
        ));
    }
}
