//! Record batches as Arrow's own buffers, for `queryArrow`: JavaScript
//! wraps them in `apache-arrow` `Data` without parsing IPC or copying. Each
//! buffer is a `Uint8Array` over the decoded batch's memory starting at
//! offset 0 of its own `ArrayBuffer`, so JS may view it as any typed array.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;

use crate::columns::bytes_view;
use crate::error::{invalid, Result};

/// One batch, column by column, in Arrow's layout.
#[napi(object)]
pub struct ArrowBatch {
    pub num_rows: u32,
    pub columns: Vec<ArrowColumn>,
}

/// One column in Arrow's layout, starting at the column's first value
/// (offset 0): `validity` is the null bitmap (absent without NULLs);
/// `buffers` are the values (fixed width and BOOL bits), or the `i32`
/// offsets then the bytes (text, binary).
#[napi(object)]
pub struct ArrowColumn {
    pub null_count: u32,
    pub validity: Option<Uint8Array>,
    pub buffers: Vec<Uint8Array>,
}

pub(crate) fn arrow_batch(batch: &RecordBatch) -> Result<ArrowBatch> {
    Ok(ArrowBatch {
        num_rows: count(batch.num_rows())?,
        columns: batch
            .columns()
            .iter()
            .map(arrow_column)
            .collect::<Result<_>>()?,
    })
}

fn arrow_column(array: &ArrayRef) -> Result<ArrowColumn> {
    let buffers: Vec<Buffer> = match array.data_type() {
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
    };
    Ok(ArrowColumn {
        null_count: count(array.null_count())?,
        validity: array
            .nulls()
            .filter(|n| n.null_count() > 0)
            .map(|n| bytes_view(n.inner().sliced())),
        buffers: buffers.into_iter().map(bytes_view).collect(),
    })
}

fn count(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| invalid("queryArrow", "a batch of more than 2^32 rows"))
}
