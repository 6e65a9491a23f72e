//! Arrow record batches read as [`Row`](crate::Row)s, in place.
//!
//! A row's value is looked up as HyperBinary bytes (what the
//! PostgreSQL-protocol connection receives), so `try_get`, `FromRow` and
//! every type conversion are the same code for every source. Most Arrow
//! types hyperd produces already hold exactly those bytes: integers, floats,
//! OID, TIME and NUMERIC are little-endian in both (a NUMERIC of precision
//! <= 18 is the low 8 bytes of Arrow's 16), text and bytes are the same
//! bytes. Those columns are read straight from the batch's buffers. The
//! others are converted once per batch, a column at a time: DATE (Arrow
//! counts days or milliseconds from 1970, Hyper Julian days), TIMESTAMP
//! (shifted to Hyper's epoch with wrapping arithmetic, so that even hyperd's
//! `infinity`, which exceeds `i64::MAX` as Hyper micros, comes back bit for
//! bit), INTERVAL (nanoseconds to microseconds, fields reordered) and
//! BOOL (bits to bytes, via two constant slices).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, IntervalMonthDayNanoType, Time64MicrosecondType, TimestampMicrosecondType,
    UInt32Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, IntervalUnit, SchemaRef, TimeUnit};

use super::layout;
use crate::rows::Schema;
use crate::types::SqlType;

/// The row schema for an Arrow result: names, and SQL types as hyperd's
/// Arrow mapping gives them (a field this client cannot map gets no type;
/// typed reads of it fail with [`crate::Error::TypeMismatch`]).
pub(crate) fn row_schema(arrow: &SchemaRef) -> Arc<Schema> {
    Schema::from_sql_types(
        arrow
            .fields()
            .iter()
            .map(|f| (f.name().clone(), crate::arrow::sql_type(f).ok())),
    )
}

/// The columns of `batch`, ready to be read row by row.
pub(crate) fn columns<'a>(
    batch: &'a RecordBatch,
    schema: &'a Schema,
) -> impl Iterator<Item = ArrowColumn> + 'a {
    batch
        .columns()
        .iter()
        .zip(schema.columns())
        .map(|(array, col)| ArrowColumn {
            values: Values::new(array, col.sql_type()),
            nulls: array.nulls().cloned(),
        })
}

/// One column of a batch.
#[derive(Debug)]
pub(crate) struct ArrowColumn {
    values: Values,
    nulls: Option<NullBuffer>,
}

#[derive(Debug)]
enum Values {
    /// Row `i`'s value is `data[i * stride..][..width]`.
    Fixed {
        data: Buffer,
        stride: usize,
        width: usize,
    },
    /// Row `i`'s value is `data[offsets[i]..offsets[i + 1]]`.
    Var {
        offsets: OffsetBuffer<i32>,
        data: Buffer,
    },
    Bool(BooleanBuffer),
    /// A type without a HyperBinary form here: an empty value.
    Opaque,
}

impl ArrowColumn {
    /// Row `row`'s value as HyperBinary bytes (`Some(None)` is NULL);
    /// `None` when there is no such row.
    #[inline(always)]
    pub(crate) fn field(&self, row: usize) -> Option<Option<&[u8]>> {
        if let Some(nulls) = &self.nulls {
            if row >= nulls.len() {
                return None;
            }
            if nulls.is_null(row) {
                return Some(None);
            }
        }
        self.values.get(row).map(Some)
    }
}

impl Values {
    fn new(array: &ArrayRef, sql_type: Option<&SqlType>) -> Values {
        match array.data_type() {
            DataType::Boolean => Values::Bool(array.as_boolean().values().clone()),
            DataType::Int16 => as_is::<Int16Type>(array, 2),
            DataType::Int32 => as_is::<Int32Type>(array, 4),
            DataType::Int64 => as_is::<Int64Type>(array, 8),
            DataType::UInt32 => as_is::<UInt32Type>(array, 4),
            DataType::Float32 => as_is::<Float32Type>(array, 4),
            DataType::Float64 => as_is::<Float64Type>(array, 8),
            DataType::Time64(TimeUnit::Microsecond) => as_is::<Time64MicrosecondType>(array, 8),
            DataType::Decimal128(_, _) => {
                // Precision <= 18 is an i64 in HyperBinary, and guarantees the
                // unscaled value fits: the low 8 of Arrow's 16 bytes.
                let narrow = matches!(sql_type, Some(SqlType::Numeric { precision, .. }) if *precision <= 18);
                as_is::<Decimal128Type>(array, if narrow { 8 } else { 16 })
            }
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                Values::Var {
                    offsets: a.offsets().clone(),
                    data: a.values().clone(),
                }
            }
            DataType::Binary => {
                let a = array.as_binary::<i32>();
                Values::Var {
                    offsets: a.offsets().clone(),
                    data: a.values().clone(),
                }
            }
            DataType::Date32 => converted::<Date32Type, 4>(array, |days| {
                layout::julian_from_date32(days).to_le_bytes()
            }),
            DataType::Date64 => {
                converted::<Date64Type, 4>(array, |ms| layout::julian_from_date64(ms).to_le_bytes())
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                converted::<TimestampMicrosecondType, 8>(array, |micros| {
                    layout::hyper_from_unix_micros(micros).to_le_bytes()
                })
            }
            DataType::Interval(IntervalUnit::MonthDayNano) => {
                converted::<IntervalMonthDayNanoType, 16>(array, layout::hyper_interval)
            }
            _ => Values::Opaque,
        }
    }

    #[inline(always)]
    fn get(&self, row: usize) -> Option<&[u8]> {
        match self {
            Values::Fixed {
                data,
                stride,
                width,
            } => {
                let start = row * stride;
                data.as_slice().get(start..start + width)
            }
            Values::Var { offsets, data } => {
                let offsets: &[i32] = offsets;
                let start = usize::try_from(*offsets.get(row)?).ok()?;
                let end = usize::try_from(*offsets.get(row + 1)?).ok()?;
                data.as_slice().get(start..end)
            }
            Values::Bool(bits) => (row < bits.len()).then(|| {
                if bits.value(row) {
                    &[1u8][..]
                } else {
                    &[0u8][..]
                }
            }),
            Values::Opaque => Some(&[]),
        }
    }
}

/// A column whose Arrow values are already HyperBinary: the first `width`
/// bytes of each little-endian value, read in place.
fn as_is<T: ArrowPrimitiveType>(array: &ArrayRef, width: usize) -> Values {
    Values::Fixed {
        data: array.as_primitive::<T>().values().inner().clone(),
        stride: std::mem::size_of::<T::Native>(),
        width,
    }
}

/// A column converted to HyperBinary once, for the whole batch. Slots under
/// a NULL are converted too (their values are unspecified but harmless:
/// every conversion is total).
fn converted<T: ArrowPrimitiveType, const W: usize>(
    array: &ArrayRef,
    convert: impl Fn(T::Native) -> [u8; W],
) -> Values {
    let values = array.as_primitive::<T>().values();
    let mut data = Vec::with_capacity(values.len() * W);
    for &v in values.iter() {
        data.extend_from_slice(&convert(v));
    }
    Values::Fixed {
        data: Buffer::from_vec(data),
        stride: W,
        width: W,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::IntervalMonthDayNano;
    use arrow_array::{
        BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array, Float32Array,
        Int32Array, Int64Array, IntervalMonthDayNanoArray, StringArray, Time64MicrosecondArray,
        TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Schema as ArrowSchema};

    use crate::rows::{Block, Fetched, Row, RowCursor};
    use crate::types::{Date, Interval, Numeric, Time, Timestamp};
    use crate::Error;

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
        let batch = RecordBatch::try_new(arrow, columns).expect("batch");
        let rows = rows_of(&batch);
        let (r0, r1) = (&rows[0], &rows[1]);
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
        assert!(matches!(
            r0.try_get::<bool>("i"),
            Err(Error::TypeMismatch { .. })
        ));
        assert!(matches!(
            r0.try_get::<i32>(9),
            Err(Error::ColumnNotFound { .. })
        ));
    }

    /// Every row of `batch`, read through the cursor the row streams use.
    fn rows_of(batch: &RecordBatch) -> Vec<Row> {
        let schema = row_schema(&batch.schema());
        let mut cursor = RowCursor::new(schema.clone());
        let block = Block::arrow(&schema, batch);
        cursor.take(Fetched::Block(block)).expect("load");
        let mut rows = Vec::new();
        while cursor.advance() {
            cursor.index_current().expect("arrow rows index");
            rows.push(cursor.row().clone());
        }
        assert_eq!(rows.len(), batch.num_rows());
        rows
    }

    /// Arrays that are slices of larger ones (an offset into their buffers)
    /// read the right values, and wide and narrow NUMERIC, DATE as Date32,
    /// floats, TIME and bytes come through as they were.
    #[test]
    fn sliced_arrays_and_remaining_types() {
        let fields = vec![
            Field::new("i", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("narrow", DataType::Decimal128(18, 3), true),
            Field::new("wide", DataType::Decimal128(38, 0), true),
            Field::new("d", DataType::Date32, true),
            Field::new("f", DataType::Float32, true),
            Field::new("tm", DataType::Time64(TimeUnit::Microsecond), true),
            Field::new("by", DataType::Binary, true),
        ];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![Some(1), None, Some(-3)])),
            Arc::new(StringArray::from(vec![Some("a"), Some(""), Some("ü")])),
            Arc::new(BooleanArray::from(vec![
                Some(false),
                Some(true),
                Some(false),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(0), Some(-1), Some(999_999_999_999_999_999)])
                    .with_precision_and_scale(18, 3)
                    .expect("decimal"),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(0), Some(-(10i128.pow(37))), None])
                    .with_precision_and_scale(38, 0)
                    .expect("decimal"),
            ),
            Arc::new(Date32Array::from(vec![Some(0), Some(-719_162), Some(1)])),
            Arc::new(Float32Array::from(vec![Some(0.5), Some(f32::NAN), None])),
            Arc::new(Time64MicrosecondArray::from(vec![
                Some(0),
                Some(86_399_999_999),
                None,
            ])),
            Arc::new(BinaryArray::from(vec![
                Some(&b"x"[..]),
                Some(&b"\0\xff"[..]),
                None,
            ])),
        ];
        let whole =
            RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).expect("batch");
        let rows = rows_of(&whole.slice(1, 2));
        let (r0, r1) = (&rows[0], &rows[1]);
        assert_eq!(r0.try_get::<Option<i64>>("i").expect("i"), None);
        assert_eq!(r1.try_get::<i64>("i").expect("i"), -3);
        assert_eq!(r0.try_get::<&str>("s").expect("s"), "");
        assert_eq!(r1.try_get::<&str>("s").expect("s"), "ü");
        assert!(r0.try_get::<bool>("b").expect("b"));
        assert!(!r1.try_get::<bool>("b").expect("b"));
        assert_eq!(
            r0.try_get::<Numeric>("narrow").expect("n").to_string(),
            "-0.001"
        );
        assert_eq!(
            r1.try_get::<Numeric>("narrow").expect("n").to_string(),
            "999999999999999.999"
        );
        assert_eq!(
            r0.try_get::<Numeric>("wide").expect("w"),
            Numeric::new(-(10i128.pow(37)), 0).expect("numeric")
        );
        assert_eq!(r1.try_get::<Option<Numeric>>("wide").expect("w"), None);
        assert_eq!(
            r0.try_get::<Date>("d").expect("d"),
            Date::from_ymd(1, 1, 1).expect("date")
        );
        assert_eq!(
            r1.try_get::<Date>("d").expect("d"),
            Date::from_ymd(1970, 1, 2).expect("date")
        );
        assert!(r0.try_get::<f32>("f").expect("f").is_nan());
        assert_eq!(r1.try_get::<Option<f32>>("f").expect("f"), None);
        assert_eq!(
            r0.try_get::<Time>("tm").expect("tm"),
            Time::from_hms_micro(23, 59, 59, 999_999).expect("time")
        );
        assert_eq!(r0.try_get::<&[u8]>("by").expect("by"), b"\0\xff");
        assert_eq!(r1.try_get::<Option<Vec<u8>>>("by").expect("by"), None);
        assert_eq!(r1.raw(0).expect("raw"), Some(&(-3i64).to_le_bytes()[..]));
    }
}
