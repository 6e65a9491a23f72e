//! Cooperative yielding of the async row paths.
//!
//! The driver charges tokio's task budget for the bytes it moves (core
//! `client::coop`), but rows are handed out and encoded between socket
//! operations: a block of a million rows read in one go, or 64Ki rows
//! encoded into one Arrow batch before anything is written, ran without an
//! await (issue 18). So the async row streams and the async row inserter
//! also charge one unit per [`ROWS_PER_UNIT`] rows: with tokio's 128 units
//! a poll, a task yields at least every 8,192 rows, a fraction of a
//! millisecond for a plain scan or insert.
//!
//! The row streams charge without a per-row test: their cursor stops every
//! `ROWS_PER_UNIT` rows as if its block had ended (`RowCursor::cooperative`,
//! the one compare per row it always made), and the out-of-line refill
//! spends the unit and moves the stop on. The inserter tests its row count
//! (a mask and a branch) after each row.

/// Rows per unit of task budget charged by the async row paths.
pub(crate) const ROWS_PER_UNIT: usize = 64;

/// Spends one unit of the task's budget; yields when it is used up.
#[inline]
pub(crate) async fn pause() {
    tokio::task::coop::consume_budget().await;
}

/// Expands to nothing; written as `$( async_only!($async_kw); ... )?` in a
/// macro shared by the sync and async types, it makes the rest of that
/// group part of the async expansion only.
macro_rules! async_only {
    (async) => {};
}
pub(crate) use async_only;
