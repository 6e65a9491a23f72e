//! A global allocator that counts, per thread, the bytes live and the most
//! ever live at once, so a target can check that what it held stayed in
//! proportion to its input: a server's declared length must not turn into
//! an allocation before the bytes it declares have arrived.
//!
//! Per thread, because `cargo test` replays inputs on several threads at
//! once; every target allocates and frees on its own thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts each thread's heap, then hands over to the system allocator.
#[derive(Debug)]
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    // `try_with`: during thread teardown the counters may be gone.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded to `System` unchanged; the counters have
// no say in the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result and the most heap this thread held at
/// once while it ran, beyond what was live when it started.
pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, usize::try_from(peak - start).unwrap_or(0))
}

/// Heap any target may hold whatever its input: buffers sized by
/// configuration (a session's 64 KiB send and receive buffers, a COPY OUT
/// read's 1 MiB window), decoder state.
pub const BASE: usize = 4 << 20;
/// Heap a target may hold per input byte: decoded messages are larger
/// than their wire form (a `String` per field, an 8-byte span per
/// 4-byte length word, a byte per BOOLEAN bit).
pub const PER_BYTE: usize = 64;

/// Panics when `peak` is more than an input of `input_len` bytes can
/// justify.
pub fn assert_bounded(what: &str, peak: usize, input_len: usize) {
    assert_bounded_with(what, peak, input_len, 0);
}

/// [`assert_bounded`], with `allowance` more bytes for a known, fixed
/// reservation of a dependency (named where it is passed).
pub fn assert_bounded_with(what: &str, peak: usize, input_len: usize, allowance: usize) {
    let bound = BASE + PER_BYTE * input_len + allowance;
    assert!(
        peak <= bound,
        "{what}: held {peak} bytes of heap at once for {input_len} bytes of input (bound {bound})"
    );
}
