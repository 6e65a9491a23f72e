//! Record batches as JavaScript columns: one object per batch, one typed
//! array per column, over Arrow's own memory where the layout is already
//! JavaScript's (integers, floats, timestamps, validity bitmaps, bytes).
//! Only what JavaScript cannot view in place is converted, once per batch:
//! BOOL (bits to bytes), DATE (to float milliseconds), INTERVAL (split),
//! NUMERIC (to exact decimal text) and text (one JS string per column,
//! sliced by offsets in JS: one string creation per batch, not per value).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, IntervalMonthDayNanoType, Time64MicrosecondType, TimestampMicrosecondType,
    UInt32Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType, Field, SchemaRef};
use hyperdb_api::types::{Numeric, SqlType};
use napi::bindgen_prelude::{
    BigInt64Array, Float32Array, Float64Array, Int16Array, Int32Array, Uint32Array, Uint8Array,
};
use napi_derive::napi;

use crate::error::{invalid, Result};

/// A typed array over an Arrow buffer's memory, kept alive by the array.
macro_rules! view {
    ($ty:ident, $values:expr) => {{
        let values = $values.clone();
        let len = values.len();
        if len == 0 {
            $ty::new(Vec::new())
        } else {
            let ptr = values.as_ptr().cast_mut();
            // SAFETY: `ptr` points at `len` initialized values owned by
            // `values`, which the finalizer keeps alive until the JS array
            // is collected. Rust never reads or writes that memory again
            // (the batch it came from is dropped after this conversion), so
            // JS writing into its array races with nothing.
            unsafe { $ty::with_external_data(ptr, len, move |_, _| drop(values)) }
        }
    }};
}

const MILLIS_PER_DAY: f64 = 86_400_000.0;

/// A result column's name and type.
#[napi(object)]
#[derive(Clone)]
pub struct ColumnInfo {
    pub name: String,
    /// The SQL type as hyperd spells it (`INTEGER`, `VARCHAR(10)`, ...).
    pub sql_type: String,
    /// How `ColumnData` carries this column's values (see `ColumnData::kind`).
    pub kind: String,
    pub nullable: bool,
}

/// One batch of a result, column by column.
#[napi(object)]
pub struct ColumnBatch {
    pub num_rows: u32,
    pub columns: Vec<ColumnData>,
}

/// One column of a batch. `kind` says which fields hold the values:
/// - `int16`, `int32`, `uint32` (OID), `float32`, `float64`: the array of
///   that name; `int64` (BIGINT), `timestamp` / `timestamptz` (microseconds
///   since 1970-01-01 UTC), `time` (microseconds since midnight): `int64`;
/// - `date`: `float64`, milliseconds since 1970-01-01 (midnight UTC);
/// - `bool`: `bytes`, one 0/1 byte a row;
/// - `interval`: `int32` months, `days`, `int64` microseconds;
/// - `text`, `json`, `numeric` (exact decimal text): `text` holds the
///   batch's values back to back, value `i` is `text.slice(offsets[i],
///   offsets[i + 1])` (UTF-16 offsets);
/// - `bytes` (BYTEA, GEOGRAPHY): value `i` is `bytes.subarray(offsets[i],
///   offsets[i + 1])`.
///
/// `validity` is Arrow's bitmap (bit `i % 8` of byte `i / 8`, 1 = not
/// NULL), absent when the batch has no NULL in the column.
#[napi(object)]
pub struct ColumnData {
    pub kind: String,
    pub validity: Option<Uint8Array>,
    pub int16: Option<Int16Array>,
    pub int32: Option<Int32Array>,
    pub int64: Option<BigInt64Array>,
    pub uint32: Option<Uint32Array>,
    pub float32: Option<Float32Array>,
    pub float64: Option<Float64Array>,
    pub days: Option<Int32Array>,
    pub bytes: Option<Uint8Array>,
    pub offsets: Option<Int32Array>,
    pub text: Option<String>,
}

impl ColumnData {
    fn new(kind: &str) -> ColumnData {
        ColumnData {
            kind: kind.to_owned(),
            validity: None,
            int16: None,
            int32: None,
            int64: None,
            uint32: None,
            float32: None,
            float64: None,
            days: None,
            bytes: None,
            offsets: None,
            text: None,
        }
    }
}

/// The columns of a result's schema.
pub(crate) fn column_infos(schema: &SchemaRef) -> Result<Vec<ColumnInfo>> {
    schema
        .fields()
        .iter()
        .map(|f| {
            Ok(ColumnInfo {
                name: f.name().clone(),
                sql_type: sql_type(f)?.to_string(),
                kind: kind(f)?.to_owned(),
                nullable: f.is_nullable(),
            })
        })
        .collect()
}

fn sql_type(field: &Field) -> Result<SqlType> {
    hyperdb_api::arrow::sql_type(field).map_err(crate::error::to_napi)
}

/// How a field's values travel (see [`ColumnData`]).
fn kind(field: &Field) -> Result<&'static str> {
    Ok(match field.data_type() {
        DataType::Int16 => "int16",
        DataType::Int32 => "int32",
        DataType::Int64 => "int64",
        DataType::UInt32 => "uint32",
        DataType::Float32 => "float32",
        DataType::Float64 => "float64",
        DataType::Boolean => "bool",
        DataType::Date32 | DataType::Date64 => "date",
        DataType::Time64(_) => "time",
        DataType::Timestamp(_, None) => "timestamp",
        DataType::Timestamp(_, Some(_)) => "timestamptz",
        DataType::Interval(_) => "interval",
        DataType::Decimal128(..) => "numeric",
        DataType::Utf8 if sql_type(field)? == SqlType::Json => "json",
        DataType::Utf8 => "text",
        DataType::Binary => "bytes",
        other => {
            return Err(invalid(
                &format!("column {}", field.name()),
                &format!("Arrow type {other} has no JavaScript form"),
            ))
        }
    })
}

/// The batch as JavaScript columns.
pub(crate) fn column_batch(batch: &RecordBatch) -> Result<ColumnBatch> {
    let columns = batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, array)| column(field, array))
        .collect::<Result<Vec<_>>>()?;
    Ok(ColumnBatch {
        num_rows: u32::try_from(batch.num_rows()).unwrap_or(u32::MAX),
        columns,
    })
}

fn column(field: &Field, array: &ArrayRef) -> Result<ColumnData> {
    let mut c = ColumnData::new(kind(field)?);
    c.validity = array
        .logical_nulls()
        .filter(|n| n.null_count() > 0)
        .map(|n| bytes_view(n.inner().sliced()));
    match field.data_type() {
        DataType::Int16 => c.int16 = Some(view!(Int16Array, values::<Int16Type>(array))),
        DataType::Int32 => c.int32 = Some(view!(Int32Array, values::<Int32Type>(array))),
        DataType::Int64 => c.int64 = Some(view!(BigInt64Array, values::<Int64Type>(array))),
        DataType::UInt32 => c.uint32 = Some(view!(Uint32Array, values::<UInt32Type>(array))),
        DataType::Float32 => c.float32 = Some(view!(Float32Array, values::<Float32Type>(array))),
        DataType::Float64 => c.float64 = Some(view!(Float64Array, values::<Float64Type>(array))),
        DataType::Time64(_) => {
            c.int64 = Some(view!(BigInt64Array, values::<Time64MicrosecondType>(array)))
        }
        DataType::Timestamp(..) => {
            c.int64 = Some(view!(
                BigInt64Array,
                values::<TimestampMicrosecondType>(array)
            ))
        }
        DataType::Boolean => {
            let bools = array.as_boolean();
            c.bytes = Some(Uint8Array::new(
                (0..bools.len()).map(|i| u8::from(bools.value(i))).collect(),
            ));
        }
        DataType::Date64 => {
            let ms = values::<Date64Type>(array)
                .iter()
                .map(|&m| m as f64)
                .collect();
            c.float64 = Some(Float64Array::new(ms));
        }
        DataType::Date32 => {
            let days = values::<Date32Type>(array);
            let ms = days
                .iter()
                .map(|&d| f64::from(d) * MILLIS_PER_DAY)
                .collect();
            c.float64 = Some(Float64Array::new(ms));
        }
        DataType::Interval(_) => {
            let v = values::<IntervalMonthDayNanoType>(array);
            c.int32 = Some(Int32Array::new(v.iter().map(|i| i.months).collect()));
            c.days = Some(Int32Array::new(v.iter().map(|i| i.days).collect()));
            c.int64 = Some(BigInt64Array::new(
                v.iter().map(|i| i.nanoseconds / 1000).collect(),
            ));
        }
        DataType::Decimal128(_, scale) => numeric_text(&mut c, array, *scale)?,
        DataType::Utf8 => {
            let strings = array.as_string::<i32>();
            let offsets = strings.value_offsets();
            let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
            let text = &strings.value_data()[first..last];
            let text = std::str::from_utf8(text)
                .map_err(|e| invalid(&format!("column {}", field.name()), &e.to_string()))?;
            c.offsets = Some(utf16_offsets(text, offsets));
            c.text = Some(text.to_owned());
        }
        DataType::Binary => {
            let binary = array.as_binary::<i32>();
            let offsets = binary.value_offsets();
            let first = offsets[0];
            c.offsets = Some(Int32Array::new(offsets.iter().map(|o| o - first).collect()));
            let data = binary.values().slice_with_length(
                first as usize,
                (offsets[offsets.len() - 1] - first) as usize,
            );
            c.bytes = Some(bytes_view(data));
        }
        // `kind` refused every other type.
        _ => {}
    }
    Ok(c)
}

fn values<T: ArrowPrimitiveType>(array: &ArrayRef) -> &ScalarBuffer<T::Native> {
    array.as_primitive::<T>().values()
}

/// A `Uint8Array` over an Arrow buffer (see [`view`]).
pub(crate) fn bytes_view(buffer: Buffer) -> Uint8Array {
    let values: ScalarBuffer<u8> = ScalarBuffer::from(buffer);
    view!(Uint8Array, &values)
}

/// Text offsets in UTF-16 code units, as JS `String.prototype.slice` counts.
fn utf16_offsets(text: &str, offsets: &[i32]) -> Int32Array {
    let first = offsets[0];
    if text.is_ascii() {
        return Int32Array::new(offsets.iter().map(|o| o - first).collect());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(offsets.len());
    let mut units = 0i32;
    out.push(0);
    for pair in offsets.windows(2) {
        let value = &bytes[(pair[0] - first) as usize..(pair[1] - first) as usize];
        // Every UTF-8 byte that is not a continuation byte starts a
        // character; 4-byte characters take two UTF-16 units.
        units += value
            .iter()
            .map(|&b| i32::from(b & 0xC0 != 0x80) + i32::from(b >= 0xF0))
            .sum::<i32>();
        out.push(units);
    }
    Int32Array::new(out)
}

/// NUMERIC values as exact decimal text (JS numbers hold 15-17 digits, a
/// NUMERIC up to 38).
fn numeric_text(c: &mut ColumnData, array: &ArrayRef, scale: i8) -> Result<()> {
    let scale = u8::try_from(scale).map_err(|_| invalid("NUMERIC", "negative scale"))?;
    let decimals = array.as_primitive::<Decimal128Type>();
    let mut text = String::with_capacity(decimals.len() * 8);
    let mut offsets = Vec::with_capacity(decimals.len() + 1);
    offsets.push(0i32);
    for (i, &unscaled) in decimals.values().iter().enumerate() {
        if decimals.is_valid(i) {
            let n =
                Numeric::new(unscaled, scale).map_err(|e| invalid("NUMERIC", &e.to_string()))?;
            std::fmt::Write::write_fmt(&mut text, format_args!("{n}"))
                .map_err(|e| invalid("NUMERIC", &e.to_string()))?;
        }
        offsets.push(i32::try_from(text.len()).map_err(|_| invalid("NUMERIC", "batch too large"))?);
    }
    c.offsets = Some(Int32Array::new(offsets));
    c.text = Some(text);
    Ok(())
}
