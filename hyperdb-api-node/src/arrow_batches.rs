//! Record batches as Arrow's own buffers, for `queryArrow`: JavaScript
//! wraps them in `apache-arrow` `Data` without parsing IPC or copying. On
//! the Arrow route a received message holds all of its batch's buffers,
//! so a handover (`handover.rs`) has one memory array per batch.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use napi_derive::napi;

use crate::error::{invalid, Result};
use crate::handover::{Handover, Layout, Memory};

/// The batches of one handover.
///
/// `layout`, batch after batch: the row count, then per column its null
/// count, its validity bitmap as a buffer reference (absent without
/// NULLs), its buffer count and that many buffer references: the values
/// (fixed width, and BOOL bits), or the `i32` offsets then the bytes (text,
/// binary), or the `i32` offsets (a list: an ARRAY); then a list's values,
/// as their own length followed by a column in this same form. Buffer
/// references are as `handover.rs` says; every buffer starts at its
/// column's first value.
#[napi(object, object_from_js = false)]
pub struct ArrowBatches {
    #[napi(ts_type = "Array<Uint8Array>")]
    pub memory: Memory,
    #[napi(ts_type = "Uint32Array")]
    pub layout: Layout,
}

/// Lays out `batches` for JavaScript (see [`ArrowBatches`]).
pub(crate) fn arrow_batches(batches: &[RecordBatch]) -> Result<ArrowBatches> {
    let mut out = Handover::default();
    for batch in batches {
        out.count(batch.num_rows())?;
        for array in batch.columns() {
            column(&mut out, array)?;
        }
    }
    let (memory, layout) = out.finish();
    Ok(ArrowBatches { memory, layout })
}

fn column(out: &mut Handover, array: &ArrayRef) -> Result<()> {
    out.count(array.null_count())?;
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    out.maybe(nulls.map(|n| n.inner().sliced()).as_ref())?;
    let buffers = column_buffers(array)?;
    out.count(buffers.len())?;
    for b in &buffers {
        out.buffer(b)?;
    }
    if let DataType::List(_) = array.data_type() {
        // Whole, as the offsets index it from its start.
        let values = array.as_list::<i32>().values();
        out.count(values.len())?;
        column(out, values)?;
    }
    Ok(())
}
/// A column's buffers after its validity, starting at its first value.
fn column_buffers(array: &ArrayRef) -> Result<Vec<Buffer>> {
    Ok(match array.data_type() {
        DataType::Boolean => vec![array.as_boolean().values().sliced()],
        DataType::Utf8 => {
            let strings = array.as_string::<i32>();
            vec![
                strings.offsets().inner().inner().clone(),
                strings.values().clone(),
            ]
        }
        DataType::Binary => {
            let binary = array.as_binary::<i32>();
            vec![
                binary.offsets().inner().inner().clone(),
                binary.values().clone(),
            ]
        }
        DataType::List(_) => vec![array.as_list::<i32>().offsets().inner().inner().clone()],
        other => {
            let width = other.primitive_width().ok_or_else(|| {
                invalid(
                    "queryArrow",
                    &format!("Arrow type {other} has no JavaScript form"),
                )
            })?;
            let data = array.to_data();
            let values = data.buffers().first().ok_or_else(|| {
                invalid(
                    "queryArrow",
                    &format!("an Arrow {other} array without values"),
                )
            })?;
            vec![values.slice_with_length(data.offset() * width, data.len() * width)]
        }
    })
}
