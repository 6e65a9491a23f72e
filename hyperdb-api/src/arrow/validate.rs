//! Full validation of a decoded record batch, with the UTF-8 check done in
//! one pass over each string column's bytes.
//!
//! arrow-ipc validates every array it decodes (`ArrayData::validate_full`),
//! and for a string column that walks the offsets one by one through an
//! iterator chain with a char-boundary test on each. On a wide result that
//! is the client's largest cost: 10M `lineitem` rows (five text columns)
//! spent ~0.3 s of client CPU in it, as much as receiving the 1.9 GB.
//!
//! So [`ArrowDecoder`](super::reader) decodes with arrow's validation off
//! and calls [`batch`] before a batch leaves it. [`batch`] checks what
//! `validate_full` and `RecordBatch::try_new` check, with the same arrow
//! functions, except for the values of `Utf8`/`LargeUtf8` (and the offsets
//! of `Binary`/`LargeBinary`), which it checks in bulk: offsets
//! non-decreasing and within the data (one branch-free pass), then the
//! bytes they span as ASCII (any offset is then a char boundary) or as
//! UTF-8 with every offset on a char boundary. When that bulk check fails,
//! arrow's own check runs to name the value, so errors read as before.

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_buffer::ArrowNativeType;
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType};

/// Checks `batch` as `RecordBatch::try_new` and `ArrayData::validate_full`
/// would: after this, reading any value of it is sound.
pub(crate) fn batch(batch: &RecordBatch) -> Result<(), ArrowError> {
    // Column count, types, lengths and nullability against the schema.
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(batch.schema(), batch.columns().to_vec(), &options)?;
    for (i, column) in batch.columns().iter().enumerate() {
        array(&column.to_data()).map_err(|e| {
            ArrowError::InvalidArgumentError(format!(
                "column {i} (`{}`): {e}",
                batch.schema().field(i).name()
            ))
        })?;
    }
    Ok(())
}

/// `data.validate_full()`, with bulk checks for text and binary values.
fn array(data: &ArrayData) -> Result<(), ArrowError> {
    data.validate()?;
    data.validate_nulls()?;
    let values_ok = match data.data_type() {
        DataType::Utf8 => Some(utf8::<i32>(data)),
        DataType::LargeUtf8 => Some(utf8::<i64>(data)),
        DataType::Binary => Some(offsets::<i32>(data).is_some()),
        DataType::LargeBinary => Some(offsets::<i64>(data).is_some()),
        _ => None,
    };
    match values_ok {
        Some(true) => {}
        // arrow's check names the bad value; if it finds none, the bulk
        // check still stands.
        Some(false) => {
            data.validate_values()?;
            return Err(ArrowError::InvalidArgumentError(format!(
                "invalid {} offsets or values",
                data.data_type()
            )));
        }
        None => data.validate_values()?,
    }
    for (i, child) in data.child_data().iter().enumerate() {
        array(child).map_err(|e| {
            ArrowError::InvalidArgumentError(format!(
                "{} child #{i} invalid: {e}",
                data.data_type()
            ))
        })?;
    }
    Ok(())
}

/// The array's offsets and values buffer, when the offsets are
/// non-decreasing, start at or after 0 and end within the values. Call
/// after `ArrayData::validate` (buffer count, sizes and alignment).
fn offsets<O: ArrowNativeType>(data: &ArrayData) -> Option<(&[O], &[u8])> {
    let [offsets, values] = data.buffers() else {
        return None;
    };
    let values = values.as_slice();
    let offsets: &[O] = offsets.typed_data();
    if data.is_empty() && offsets.len() <= data.offset() {
        // An empty array may have an empty offsets buffer.
        return Some((&[], values));
    }
    let offsets = offsets.get(data.offset()..data.offset() + data.len() + 1)?;
    let (first, last) = (offsets.first()?.to_usize()?, offsets.last()?.to_usize()?);
    // No early exit, so that the loop vectorizes; a failure is rare.
    let increasing = offsets
        .iter()
        .zip(&offsets[1..])
        .fold(true, |ok, (a, b)| ok & (a <= b));
    (increasing && first <= last && last <= values.len()).then_some((offsets, values))
}

/// Whether every value of a string array is valid UTF-8.
fn utf8<O: ArrowNativeType>(data: &ArrayData) -> bool {
    let Some((offsets, values)) = offsets::<O>(data) else {
        return false;
    };
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else {
        return true;
    };
    // In range: `offsets` checked them.
    let (first, last) = (first.as_usize(), last.as_usize());
    let span = &values[first..last];
    if span.is_ascii() {
        return true;
    }
    // Valid UTF-8 split only between characters: no offset may point at a
    // continuation byte (0b10xx_xxxx) inside the span.
    std::str::from_utf8(span).is_ok()
        && offsets.iter().all(|o| {
            let o = o.as_usize();
            o == last || (values[o] as i8) >= -0x40
        })
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
