//! Buffers handed to JavaScript as a few flat pieces rather than an object
//! (and an external array) per buffer: the memory they lie in, one
//! `Uint8Array` per allocation, and a `Uint32Array` of references into it.
//! Each external array costs V8 a weak handle and a finalizer on the JS
//! thread, and each object a property lookup per field: measured on a
//! 10M-row read (978 batches of 4 columns), the per-buffer form spent
//! ~10 ms of the JS thread on them. `queryArrow` (`arrow_batches.rs`) and
//! `queryColumns` / `query` (`columns.rs`) hand their batches over so.
//!
//! The layout, small, is copied into memory V8 allocates ([`Layout`]), as
//! is a small region ([`COPIED_REGION_MAX`]). The layout's copy also lets
//! V8 collect the memory arrays young: V8 checks the bytes
//! that young `ArrayBuffer`s hold (external ones included) only when it
//! allocates one itself, and scavenges once they pass twice its
//! semi-space. With external arrays alone it never checks, and sees only
//! its external-memory total, which starts a full mark-compact every
//! 64 MB: ~5 of them (each 5-15 ms of the JS thread plus concurrent
//! marking) per 10M-row `queryArrow`, against ~10 scavenges of ~1 ms with
//! the copied layout. Measured, same binary but for the layout, three
//! processes each: client CPU per read ~200 ms against ~130-145 ms.

use std::ptr;

use arrow_buffer::Buffer;
use napi::bindgen_prelude::{ToNapiValue, TypedArrayType, Uint8Array};
use napi::{check_status, sys};
use napi_derive::napi;

use crate::error::{invalid, Result};

/// Marks an absent buffer in a handover's layout (a column without NULLs
/// has no validity).
#[napi]
pub const ABSENT_BUFFER: u32 = u32::MAX;

/// A handover being built: its memory regions and its layout, numbers
/// and buffer references in the order the reader expects them. A buffer
/// reference is three numbers: the index of the memory array it lies in,
/// its byte offset there and its byte length (an absent one:
/// `ABSENT_BUFFER, 0, 0`). Every buffer lies at an offset that is a
/// multiple of 8. A memory array starts where its allocation does (a
/// received message's payload, IPC metadata first), so its first bytes
/// may belong to no buffer.
#[derive(Default)]
pub(crate) struct Handover {
    regions: Vec<Region>,
    layout: Vec<u32>,
}

impl Handover {
    /// Adds a count (rows, nulls, buffers) to the layout.
    pub(crate) fn count(&mut self, n: usize) -> Result<()> {
        self.layout.push(count(n)?);
        Ok(())
    }

    /// Adds `ABSENT_BUFFER` where an index would be.
    pub(crate) fn no_index(&mut self) {
        self.layout.push(ABSENT_BUFFER);
    }

    /// Adds the reference of an absent buffer.
    pub(crate) fn absent(&mut self) {
        self.layout.extend([ABSENT_BUFFER, 0, 0]);
    }

    /// Adds a reference to `buffer`, in the region of its allocation (an
    /// empty buffer is absent). A buffer that would sit at an offset JS
    /// cannot view as 8-byte values (not seen from hyperd, whose buffers
    /// are 8-aligned) gets a region of its own, from its own start.
    pub(crate) fn buffer(&mut self, buffer: &Buffer) -> Result<()> {
        let len = count(buffer.len())?;
        if len == 0 {
            self.absent();
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

    /// [`buffer`](Self::buffer), or [`absent`](Self::absent) for `None`.
    pub(crate) fn maybe(&mut self, buffer: Option<&Buffer>) -> Result<()> {
        match buffer {
            Some(b) => self.buffer(b),
            None => {
                self.absent();
                Ok(())
            }
        }
    }

    /// The memory arrays and the layout.
    pub(crate) fn finish(self) -> (Memory, Layout) {
        (Memory(self.regions), Layout(self.layout))
    }
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
    fn len(&self) -> usize {
        self.end as usize - self.start as usize
    }

    /// Its bytes. Only valid while `owner` lives.
    fn bytes(&self) -> &[u8] {
        let len = self.len();
        // SAFETY: `start..end` lies in one allocation: `start` is the
        // allocation's start (`Buffer::data_ptr`) shared by every buffer
        // of the region, or a buffer's own start, and `end` the end of one
        // of those buffers. `owner`, a buffer of that allocation, keeps all
        // of it alive as long as `self`, and Arrow buffers are immutable.
        unsafe { std::slice::from_raw_parts(self.start, len) }
    }

    /// The region as a JS array over its own memory, which the array's
    /// finalizer frees.
    fn into_view(self) -> Uint8Array {
        let len = self.len();
        let owner = self.owner;
        // SAFETY: as in `bytes`; `owner` keeps the allocation alive until
        // the finalizer drops it with the JS array. The batches the buffers
        // came from are dropped after this conversion, so JS writing into
        // its array races with nothing.
        unsafe {
            Uint8Array::with_external_data(self.start.cast_mut(), len, move |_, _| drop(owner))
        }
    }
}

/// A region up to this size is copied into memory V8 allocates rather
/// than handed over as an external array. Why: an external array costs a
/// weak handle and a finalizer, more than copying a small region does.
/// Measured on small results (alternated processes, 3,000 reads each): a
/// 2,000-row `queryColumns` read 676-696 against 582-605 us and ~390
/// against ~330 us of client CPU; a 1,000-row `queryAll` within noise,
/// never slower. A full scan's regions (received messages of ~1.5 MB)
/// stay external.
const COPIED_REGION_MAX: usize = 64 * 1024;

/// A handover's memory arrays, one per region: each a `Uint8Array` over
/// the region's own memory, or over a copy when it is small.
pub struct Memory(Vec<Region>);

// SAFETY: a `Region`'s pointers point into the allocation of its `owner`,
// an Arrow `Buffer` (Send and Sync), which keeps it alive and immutable;
// nothing reads through them but `Region::bytes` / `into_view`, wherever
// the `Memory` has moved.
unsafe impl Send for Memory {}

impl ToNapiValue for Memory {
    unsafe fn to_napi_value(env: sys::napi_env, val: Memory) -> napi::Result<sys::napi_value> {
        // SAFETY: `env` is the live env napi passes to this conversion, on
        // the JS thread; each array is a value of this env.
        unsafe {
            js_array(env, val.0, "a handover's memory", |region| {
                let bytes = region.bytes();
                if bytes.len() <= COPIED_REGION_MAX {
                    v8_typed_array(env, TypedArrayType::Uint8, bytes, 1, "a small region")
                } else {
                    Uint8Array::to_napi_value(env, region.into_view())
                }
            })
        }
    }
}

/// A JS array of `items`, each made a JS value by `value`.
///
/// # Safety
/// `env` is the env napi passes to a conversion, on the JS thread, and
/// `value` gives values of it.
pub(crate) unsafe fn js_array<T>(
    env: sys::napi_env,
    items: Vec<T>,
    what: &str,
    mut value: impl FnMut(T) -> napi::Result<sys::napi_value>,
) -> napi::Result<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: as the caller promises; `out` is a live local.
    unsafe {
        check_status!(
            sys::napi_create_array_with_length(env, items.len(), &mut out),
            "{}",
            what
        )?;
    }
    for (i, item) in items.into_iter().enumerate() {
        let index = u32::try_from(i).map_err(|_| napi::Error::from_reason("too many items"))?;
        let item = value(item)?;
        // SAFETY: as above; `item` is a value of this env.
        unsafe {
            check_status!(sys::napi_set_element(env, out, index, item), "{}", what)?;
        }
    }
    Ok(out)
}

/// A handover's layout, handed to JavaScript as a `Uint32Array` over a
/// copy in memory V8 allocates (see the module docs for why).
pub struct Layout(Vec<u32>);

impl ToNapiValue for Layout {
    unsafe fn to_napi_value(env: sys::napi_env, val: Layout) -> napi::Result<sys::napi_value> {
        let words = val.0;
        // SAFETY: `u32` has no padding, so its bytes are plain data.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                words.as_ptr().cast::<u8>(),
                std::mem::size_of_val(words.as_slice()),
            )
        };
        // SAFETY: as the caller (napi) promises.
        unsafe { v8_typed_array(env, TypedArrayType::Uint32, bytes, 4, "a handover's layout") }
    }
}

/// A typed array of `kind` (elements of `width` bytes) over a copy of
/// `bytes` in an `ArrayBuffer` V8 allocates.
///
/// # Safety
/// `env` is the env napi passes to a conversion, on the JS thread.
unsafe fn v8_typed_array(
    env: sys::napi_env,
    kind: TypedArrayType,
    bytes: &[u8],
    width: usize,
    what: &str,
) -> napi::Result<sys::napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: as the caller promises. The new buffer holds `bytes.len()`
    // bytes at `data`, which nothing else references yet and which do not
    // overlap `bytes`; the typed array covers `bytes.len() / width`
    // elements of it from offset 0.
    unsafe {
        let (data, buffer) = v8_array_buffer(env, bytes.len(), what)?;
        if !bytes.is_empty() {
            ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        }
        check_status!(
            sys::napi_create_typedarray(
                env,
                kind as i32,
                bytes.len() / width,
                buffer,
                0,
                &mut array
            ),
            "{}",
            what
        )?;
    }
    Ok(array)
}

/// Lets V8 weigh the young external arrays a conversion just made, for a
/// conversion that makes nothing else V8 would allocate (raw IPC chunks;
/// a handover's [`Layout`] is that allocation for the others): V8 checks
/// them only when it allocates an `ArrayBuffer` itself (see the module
/// docs), so this allocates one of one byte and drops it.
///
/// # Safety
/// `env` is the env napi passes to a conversion, on the JS thread.
pub(crate) unsafe fn let_v8_weigh_young_buffers(env: sys::napi_env) -> napi::Result<()> {
    // SAFETY: as the caller promises; the new buffer is left to the GC.
    unsafe { v8_array_buffer(env, 1, "a one-byte ArrayBuffer") }.map(drop)
}

/// An `ArrayBuffer` of `bytes` bytes that V8 allocates (the allocation at
/// which it weighs its young buffers): its data pointer and its value.
///
/// # Safety
/// `env` is the env napi passes to a conversion, on the JS thread.
unsafe fn v8_array_buffer(
    env: sys::napi_env,
    bytes: usize,
    what: &str,
) -> napi::Result<(*mut u8, sys::napi_value)> {
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    // SAFETY: as the caller promises; both out-pointers are live locals.
    unsafe {
        check_status!(
            sys::napi_create_arraybuffer(env, bytes, &mut data, &mut buffer),
            "{}",
            what
        )?;
    }
    Ok((data.cast::<u8>(), buffer))
}

/// `n` as a layout number (never `ABSENT_BUFFER`).
pub(crate) fn count(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n != ABSENT_BUFFER)
        .ok_or_else(|| invalid("a result batch", "more than 2^32 - 2 rows or bytes"))
}
