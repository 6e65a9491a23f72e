//! Record batches as JavaScript columns, for `queryColumns` and `query`:
//! a handover (`handover.rs`) of buffers over Arrow's own memory where the
//! layout is already JavaScript's (integers, floats, timestamps, validity
//! bitmaps, bytes), which JS views as typed arrays. Only what JavaScript
//! cannot view in place is converted, once per batch: BOOL (bits to
//! bytes), DATE (to float milliseconds), INTERVAL (split), NUMERIC (to
//! exact decimal text) and text (one JS string per column, sliced by
//! offsets in JS: one string creation per batch, not per value).

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Date64Type, Decimal128Type, IntervalMonthDayNanoType};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::{DataType, Field, SchemaRef};
use hyperdb_api::arrow::text_pieces;
use hyperdb_api::types::{Numeric, SqlType};
use napi_derive::napi;

use crate::error::{invalid, js, Result};
use crate::handover::{Handover, Layout, Memory};
use crate::text::{Text, Texts};

const MILLIS_PER_DAY: f64 = 86_400_000.0;

/// The longest string V8 makes (`v8::String::kMaxLength` on 64 bits), in
/// UTF-16 units; a column's text of a batch is one string, so batches are
/// cut to hold at most this many bytes of it (bytes >= units).
const JS_STRING_MAX: usize = (1 << 29) - 24;
const JS_STRING_WHY: &str = "the longest JavaScript string; \
     read the column as bytes (cast it to BYTEA, or use queryArrowIpc)";

/// A result column's name and type.
#[napi(object)]
#[derive(Clone)]
pub struct ColumnInfo {
    pub name: String,
    /// The SQL type as hyperd spells it (`INTEGER`, `VARCHAR(10)`, ...).
    pub sql_type: String,
    /// How a batch carries this column's values (see `ColumnBatches`).
    pub kind: String,
    pub nullable: bool,
}

/// The batches of one handover, column by column.
///
/// `layout`, batch after batch: the row count, then per column four
/// buffer references (see `handover.rs`) and a text index:
/// - validity: Arrow's bitmap (bit `i % 8` of byte `i / 8`, 1 = not
///   NULL), absent when the batch has no NULL in the column;
/// - values, by the column's `kind`: `int16`, `int32`, `uint32` (OID),
///   `float32`, `float64`: values of that type; `int64` (BIGINT),
///   `timestamp` / `timestamptz` (microseconds since 1970-01-01 UTC),
///   `time` (microseconds since midnight): `i64`; `date`: `f64`
///   milliseconds since 1970-01-01 (midnight UTC); `bool`: one 0/1 byte a
///   row; `interval`: `i32` months; `bytes` (BYTEA, GEOGRAPHY): the bytes;
///   absent for `text`, `json`, `numeric`;
/// - offsets: `i32`, value `i` is `offsets[i]..offsets[i + 1]` of the
///   bytes, or of the text in UTF-16 units; for `interval`, `i32` days;
/// - micros: for `interval`, `i64` microseconds;
/// - text: the index in `text` of the batch's values back to back
///   (`text`, `json`, `numeric` as exact decimal text), else
///   `ABSENT_BUFFER`.
///
/// An absent values, offsets or micros buffer of a column that has them
/// is an empty one (a batch of no rows).
#[napi(object, object_from_js = false)]
pub struct ColumnBatches {
    #[napi(ts_type = "Array<Uint8Array>")]
    pub memory: Memory,
    #[napi(ts_type = "Uint32Array")]
    pub layout: Layout,
    #[napi(ts_type = "Array<string>")]
    pub text: Texts,
}

/// What one column of one batch hands over after its validity.
#[derive(Default)]
struct Parts {
    values: Option<Buffer>,
    offsets: Option<Buffer>,
    micros: Option<Buffer>,
    text: Option<Text>,
}

/// The columns of a result's schema.
pub(crate) fn column_infos(schema: &SchemaRef) -> Result<Vec<ColumnInfo>> {
    schema
        .fields()
        .iter()
        .map(|f| {
            Ok(ColumnInfo {
                name: f.name().clone(),
                sql_type: hyperdb_api::arrow::sql_type_name(f).map_err(crate::error::to_napi)?,
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

/// Whether a column's batches hand over a JS string (see [`ColumnBatches`]),
/// made on the JS thread at the handover.
pub(crate) fn carries_text(column: &ColumnInfo) -> bool {
    matches!(column.kind.as_str(), "text" | "json" | "numeric")
}

/// Lays out `batches` for JavaScript (see [`ColumnBatches`]).
pub(crate) fn column_batches(batches: &[RecordBatch]) -> Result<ColumnBatches> {
    let mut out = Handover::default();
    let mut text = Vec::new();
    for whole in batches {
        for batch in &js(text_pieces(whole, JS_STRING_MAX, JS_STRING_WHY))? {
            lay_out(&mut out, &mut text, batch)?;
        }
    }
    let (memory, layout) = out.finish();
    Ok(ColumnBatches {
        memory,
        layout,
        text: Texts(text),
    })
}

/// One batch into the handover `out`, its columns' strings into `text`.
fn lay_out(out: &mut Handover, text: &mut Vec<Text>, batch: &RecordBatch) -> Result<()> {
    out.count(batch.num_rows())?;
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        let nulls = array.logical_nulls().filter(|n| n.null_count() > 0);
        out.maybe(nulls.map(|n| n.inner().sliced()).as_ref())?;
        let parts = parts(field, array)?;
        out.maybe(parts.values.as_ref())?;
        out.maybe(parts.offsets.as_ref())?;
        out.maybe(parts.micros.as_ref())?;
        match parts.text {
            Some(t) => {
                out.count(text.len())?;
                text.push(t);
            }
            None => out.no_index(),
        }
    }
    Ok(())
}

fn parts(field: &Field, array: &ArrayRef) -> Result<Parts> {
    let mut p = Parts::default();
    match field.data_type() {
        DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt32
        | DataType::Float32
        | DataType::Float64
        | DataType::Time64(_)
        | DataType::Timestamp(..) => p.values = Some(fixed_values(array)?),
        DataType::Boolean => {
            let bools = array.as_boolean();
            let bytes: Vec<u8> = (0..bools.len()).map(|i| u8::from(bools.value(i))).collect();
            p.values = Some(Buffer::from_vec(bytes));
        }
        DataType::Date64 => {
            let ms: Vec<f64> = values::<Date64Type>(array)
                .iter()
                .map(|&m| m as f64)
                .collect();
            p.values = Some(Buffer::from_vec(ms));
        }
        DataType::Date32 => {
            let days = values::<Date32Type>(array);
            let ms: Vec<f64> = days
                .iter()
                .map(|&d| f64::from(d) * MILLIS_PER_DAY)
                .collect();
            p.values = Some(Buffer::from_vec(ms));
        }
        DataType::Interval(_) => {
            let v = values::<IntervalMonthDayNanoType>(array);
            p.values = Some(Buffer::from_vec(
                v.iter().map(|i| i.months).collect::<Vec<i32>>(),
            ));
            p.offsets = Some(Buffer::from_vec(
                v.iter().map(|i| i.days).collect::<Vec<i32>>(),
            ));
            p.micros = Some(Buffer::from_vec(
                v.iter().map(|i| i.nanoseconds / 1000).collect::<Vec<i64>>(),
            ));
        }
        DataType::Decimal128(_, scale) => numeric_text(&mut p, array, *scale)?,
        DataType::Utf8 => {
            let strings = array.as_string::<i32>();
            let offsets = strings.value_offsets();
            let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
            let text = Text::new(strings.values().slice_with_length(first, last - first));
            p.offsets = Some(Buffer::from_vec(utf16_offsets(&text, offsets)));
            p.text = Some(text);
        }
        DataType::Binary => {
            let binary = array.as_binary::<i32>();
            let offsets = binary.value_offsets();
            let first = offsets[0];
            let rebased: Vec<i32> = offsets.iter().map(|o| o - first).collect();
            p.offsets = Some(Buffer::from_vec(rebased));
            p.values = Some(binary.values().slice_with_length(
                first as usize,
                (offsets[offsets.len() - 1] - first) as usize,
            ));
        }
        // `kind` refused every other type.
        _ => {}
    }
    Ok(p)
}

/// A fixed-width column's values, from its first to its last.
fn fixed_values(array: &ArrayRef) -> Result<Buffer> {
    let data = array.to_data();
    let width = data.data_type().primitive_width();
    match (width, data.buffers().first()) {
        (Some(width), Some(values)) => {
            Ok(values.slice_with_length(data.offset() * width, data.len() * width))
        }
        _ => Err(invalid(
            "a result column",
            &format!("Arrow type {} has no JavaScript form", data.data_type()),
        )),
    }
}

fn values<T: ArrowPrimitiveType>(array: &ArrayRef) -> &[T::Native] {
    array.as_primitive::<T>().values()
}

/// Text offsets in UTF-16 code units, as JS `String.prototype.slice` counts.
fn utf16_offsets(text: &Text, offsets: &[i32]) -> Vec<i32> {
    let first = offsets[0];
    if text.is_ascii() {
        return offsets.iter().map(|o| o - first).collect();
    }
    let bytes = text.bytes();
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
    out
}

/// NUMERIC values as exact decimal text (JS numbers hold 15-17 digits, a
/// NUMERIC up to 38).
fn numeric_text(p: &mut Parts, array: &ArrayRef, scale: i8) -> Result<()> {
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
    p.offsets = Some(Buffer::from_vec(offsets));
    p.text = Some(Text::new(Buffer::from_vec(text.into_bytes())));
    Ok(())
}
