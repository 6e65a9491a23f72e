//! The heap bounds a target checks its input against, measured with the
//! per-thread counting allocator the hostile-server tests use too
//! (`hyperdb-api/test_support/counting_alloc.rs`): what a target held must
//! stay in proportion to its input, so a server's declared length cannot
//! turn into an allocation before the bytes it declares have arrived.

#[path = "../../hyperdb-api/test_support/counting_alloc.rs"]
mod counting_alloc;

pub use counting_alloc::{peak_during, Counting};

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
