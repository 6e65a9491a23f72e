//! The fuzz targets, as functions: each `check` takes one input, runs the
//! code under test on it and panics when an invariant breaks (a panic of
//! the code itself, a wrong result, an untyped error, or more memory than
//! the input can justify). `fuzz_targets/*.rs` hand them to libFuzzer
//! (`scripts/fuzz.sh`); `tests/regressions.rs` replays the seed corpus and
//! every input kept in `regressions/` through them in a plain `cargo test`.
//!
//! Every target runs under [`alloc`]'s counting allocator, so "no
//! allocation proportional to a hostile length before the bytes arrived"
//! is checked on every input.

#![allow(clippy::unwrap_used)]

pub mod alloc;
pub mod arrow;
pub mod backend;
pub mod escape;
pub mod hyperbinary;
mod input;
mod reads;
pub mod scram;
pub mod seeds;
pub mod session;

pub use input::{chunks, Input};

/// A target's check: one input in, a panic when an invariant breaks.
pub type Check = fn(&[u8]);

/// Every target: its name (the libFuzzer binary's, the corpus and
/// regression folders') and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("backend", backend::check),
    ("session", session::check),
    ("hyperbinary", hyperbinary::check),
    ("arrow", arrow::check),
    ("scram", scram::check),
    ("escape", escape::check),
];

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;
