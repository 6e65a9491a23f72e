//! Record batches as Arrow's own buffers, for `queryArrow`: JavaScript
//! wraps them in `apache-arrow` `Data` without parsing IPC or copying.
//!
//! A handover is a few flat pieces rather than an object per batch and
//! column: the memory the buffers lie in, one `Uint8Array` per allocation
//! (on the Arrow route a received message holds all of its batch's
//! buffers, so one array per batch instead of one per buffer), and a
//! `Uint32Array` saying where each buffer is. Each external array costs V8
//! a weak handle and a finalizer on the JS thread, and each object a
//! property lookup per field: measured on a 10M-row read (978 batches of 4
//! columns), the per-buffer form spent ~10 ms of the JS thread on them.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use napi::bindgen_prelude::{Uint32Array, Uint8Array};
use napi_derive::napi;

use crate::error::{invalid, Result};

/// Marks an absent buffer (a column without NULLs has no validity) in
/// [`ArrowBatches::layout`].
#[napi]
pub const ABSENT_BUFFER: u32 = u32::MAX;

/// The batches of one handover.
///
/// `layout`, batch after batch: the row count, then per column its null
/// count, its validity bitmap as a buffer reference (`ABSENT_BUFFER` without
/// NULLs), its buffer count and that many buffer references: the values
/// (fixed width, and BOOL bits), or the `i32` offsets then the bytes (text,
/// binary). A buffer reference is three numbers: the index of the
/// `memory` array it lies in, its byte offset there and its byte length
/// (an absent one: `ABSENT_BUFFER, 0, 0`). Every buffer starts at its column's
/// first value, at an offset that is a multiple of 8. A memory array
/// starts where its allocation does (a received message's payload, IPC
/// metadata first), so its first bytes may belong to no buffer.
#[napi(object)]
pub struct ArrowBatches {
    pub memory: Vec<Uint8Array>,
    pub layout: Uint32Array,
}

/// Lays out `batches` for JavaScript (see [`ArrowBatches`]).
pub(crate) fn arrow_batches(batches: &[RecordBatch]) -> Result<ArrowBatches> {
    let mut out = Layout::default();
    for batch in batches {
        out.layout.push(count(batch.num_rows())?);
        for array in batch.columns() {
            out.column(array)?;
        }
    }
    Ok(ArrowBatches {
        memory: out.regions.into_iter().map(Region::into_view).collect(),
        layout: Uint32Array::new(out.layout),
    })
}

#[derive(Default)]
struct Layout {
    regions: Vec<Region>,
    layout: Vec<u32>,
}

/// What a handover's buffers use of one allocation: from its start, so
/// that a buffer's offset is known when the buffer is seen, to the end of
/// the last of them.
struct Region {
    start: *const u8,
    end: *const u8,
    /// Any buffer of the allocation keeps all of it alive.
    owner: Buffer,
}

impl Region {
    fn into_view(self) -> Uint8Array {
        let len = self.end as usize - self.start as usize;
        let owner = self.owner;
        // SAFETY: `start..end` lies in one allocation: `start` is the
        // allocation's start (`Buffer::data_ptr`) shared by every buffer
        // of the region, or a buffer's own start, and `end` the end of one
        // of those buffers. `owner`, a buffer of that allocation, keeps all
        // of it alive until the finalizer drops it with the JS array.
        // Arrow buffers are immutable and the batches they came from are
        // dropped after this conversion, so JS writing into its array races
        // with nothing.
        unsafe {
            Uint8Array::with_external_data(self.start.cast_mut(), len, move |_, _| drop(owner))
        }
    }
}

impl Layout {
    fn column(&mut self, array: &ArrayRef) -> Result<()> {
        self.layout.push(count(array.null_count())?);
        match array.nulls().filter(|n| n.null_count() > 0) {
            Some(nulls) => self.buffer(&nulls.inner().sliced())?,
            None => self.layout.extend([ABSENT_BUFFER, 0, 0]),
        }
        let buffers = column_buffers(array)?;
        self.layout.push(count(buffers.len())?);
        for b in &buffers {
            self.buffer(b)?;
        }
        Ok(())
    }

    /// Adds a reference to `buffer`, in the region of its allocation. A
    /// buffer that would sit at an offset JS cannot view as 8-byte values
    /// (not seen from hyperd, whose buffers are 8-aligned) gets a region
    /// of its own, from its own start.
    fn buffer(&mut self, buffer: &Buffer) -> Result<()> {
        let len = count(buffer.len())?;
        if len == 0 {
            self.layout.extend([ABSENT_BUFFER, 0, 0]);
            return Ok(());
        }
        let (start, offset) = match u32::try_from(buffer.ptr_offset()) {
            Ok(offset) if offset % 8 == 0 => (buffer.data_ptr().as_ptr().cast_const(), offset),
            _ => (buffer.as_ptr(), 0),
        };
        let end = buffer.as_ptr().wrapping_add(buffer.len());
        let index = match self.regions.iter().position(|r| r.start == start) {
            Some(i) => {
                let r = &mut self.regions[i];
                r.end = r.end.max(end);
                i
            }
            None => {
                self.regions.push(Region {
                    start,
                    end,
                    owner: buffer.clone(),
                });
                self.regions.len() - 1
            }
        };
        self.layout.extend([count(index)?, offset, len]);
        Ok(())
    }
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

fn count(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n != ABSENT_BUFFER)
        .ok_or_else(|| invalid("queryArrow", "a batch of more than 2^32 - 2 rows or bytes"))
}
