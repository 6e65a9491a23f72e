//! Record batches from another Arrow implementation's buffers.
//!
//! Why: a binding's own Arrow library (apache-arrow in Node.js) holds
//! batches in Arrow's layout already; handing over their buffers skips
//! writing and parsing IPC in the binding's language. The caller keeps the
//! memory only for the call, so the rows asked for are copied out (a batch
//! may be taken a slice at a time), and the result is validated as Arrow
//! data before it goes anywhere: bad offsets or UTF-8 are an error, never
//! undefined behaviour.

use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::{BooleanBuffer, Buffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, SchemaRef};

use crate::error::{Error, Result};

/// One column's buffers in Arrow's layout, addressed the way Arrow
/// libraries that slice lazily (apache-arrow's `Data`) address them:
/// `values` and `offsets` start at the column's row 0, while bitmaps
/// (`validity`, and BOOL `values`) start `bit_offset` bits in.
#[derive(Debug, Clone, Copy)]
pub struct ArrowParts<'a> {
    pub bit_offset: usize,
    /// The null bitmap (1 = valid); `None` when no value is NULL.
    pub validity: Option<&'a [u8]>,
    /// Text and binary: the offsets into `values`, one more than the rows.
    pub offsets: Option<&'a [i32]>,
    /// Fixed-width values, BOOL bits, or the bytes of text and binary.
    pub values: &'a [u8],
}

/// Rows `first..first + rows` of `columns` (one per field of `schema`) as
/// a batch of `schema`, copied.
pub fn batch_from_arrow_parts(
    schema: &SchemaRef,
    first: usize,
    rows: usize,
    columns: &[ArrowParts<'_>],
) -> Result<RecordBatch> {
    if columns.len() != schema.fields().len() {
        return Err(Error::invalid_argument(
            "Arrow batch",
            format!(
                "{} columns for a schema of {} fields",
                columns.len(),
                schema.fields().len()
            ),
        ));
    }
    let arrays = schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(field, parts)| array(field, first, rows, parts))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &options,
    )?)
}

fn array(field: &Field, first: usize, rows: usize, parts: &ArrowParts<'_>) -> Result<ArrayRef> {
    let short = |what: &str| {
        Error::invalid_argument(
            format!("Arrow column {}", field.name()),
            format!("its {what} hold fewer than rows {first}..{}", first + rows),
        )
    };
    let nulls = parts
        .validity
        .map(|bitmap| {
            bits(bitmap, parts.bit_offset + first, rows).ok_or_else(|| short("validity bits"))
        })
        .transpose()?;
    let buffers = match field.data_type() {
        DataType::Boolean => {
            vec![bits(parts.values, parts.bit_offset + first, rows)
                .ok_or_else(|| short("values"))?]
        }
        DataType::Utf8 | DataType::Binary => {
            let offsets = parts
                .offsets
                .and_then(|o| o.get(first..=first + rows))
                .ok_or_else(|| short("offsets"))?;
            let (start, end) = (offsets[0], offsets[rows]);
            let bytes = usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(s, e)| parts.values.get(s..e))
                .ok_or_else(|| short("value bytes"))?;
            let rebased: ScalarBuffer<i32> = offsets.iter().map(|o| o - start).collect();
            vec![rebased.into_inner(), Buffer::from_slice_ref(bytes)]
        }
        other => {
            let width = other.primitive_width().ok_or_else(|| {
                Error::invalid_argument(
                    format!("Arrow column {}", field.name()),
                    format!("Arrow type {other} cannot be taken from buffers"),
                )
            })?;
            let values = parts
                .values
                .get(first * width..(first + rows) * width)
                .ok_or_else(|| short("values"))?;
            vec![Buffer::from_slice_ref(values)]
        }
    };
    let data = ArrayData::try_new(field.data_type().clone(), rows, nulls, 0, buffers, vec![])?;
    Ok(make_array(data))
}

/// Bits `offset..offset + len` of `bitmap` as a bitmap of their own.
fn bits(bitmap: &[u8], offset: usize, len: usize) -> Option<Buffer> {
    if len == 0 {
        return Some(Buffer::from_vec(Vec::<u8>::new()));
    }
    let bytes = bitmap.get(offset / 8..(offset + len).div_ceil(8))?;
    Some(BooleanBuffer::new(Buffer::from_slice_ref(bytes), offset % 8, len).sliced())
}

#[cfg(test)]
#[path = "from_parts_tests.rs"]
mod tests;
