//! Cooperative yielding of the tokio driver.
//!
//! tokio gives a task a budget of 128 units each time it is polled and
//! charges one unit per socket operation, whatever the operation moved: a
//! 1 MiB read of rows costs what a 5-byte read does. The rows it brought
//! are then handed out from the buffer without awaiting anything, and a
//! COPY's frames go out to a socket that takes them at once: a reader or
//! writer that never waits for the network yielded only every ~128 socket
//! operations, ~128 MiB (issue 18: a 50M-row `AsyncRows` kept other tasks
//! of its runtime waiting for up to ~1 s). So the driver also charges the
//! bytes it moves, one unit per [`BYTES_PER_UNIT`]: a task that moves 1 MiB
//! in one poll uses up its budget and yields at its next await.
//!
//! Why 8 KiB: ~500 rows of a narrow table, a few microseconds of a
//! consumer's work, so a budget (~1 MiB) lasts about a millisecond, the
//! order of what tokio aims for. A charge that finds budget left is a
//! thread-local decrement; a 1 MiB read costs 128 of them (~0.3 µs).

/// Bytes moved per unit of task budget charged.
pub const BYTES_PER_UNIT: usize = 8 << 10;

/// Bytes moved and not yet charged.
#[derive(Debug, Default)]
pub(crate) struct ByteBudget {
    owed: usize,
}

impl ByteBudget {
    /// Charges `bytes` to the task's budget; returns `Pending` (once, then
    /// goes on) when the budget ran out, so the task yields here. Dropped
    /// while pending, nothing is lost: the bytes were moved already.
    pub(crate) async fn charge(&mut self, bytes: usize) {
        self.owed += bytes;
        while self.owed >= BYTES_PER_UNIT {
            self.owed -= BYTES_PER_UNIT;
            tokio::task::coop::consume_budget().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::task::{Context, Waker};

    use super::*;

    /// Polls `fut` once inside a task budget of tokio's (128 units).
    fn polls_ready_within_one_budget(bytes: usize) -> bool {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut budget = ByteBudget::default();
            let mut fut = std::pin::pin!(budget.charge(bytes));
            let mut cx = Context::from_waker(Waker::noop());
            fut.as_mut().poll(&mut cx).is_ready()
        })
    }

    /// A charge within the budget does not yield; one past it does.
    #[test]
    fn a_poll_moving_more_than_a_budget_of_bytes_yields() {
        assert!(polls_ready_within_one_budget(BYTES_PER_UNIT * 100));
        assert!(!polls_ready_within_one_budget(BYTES_PER_UNIT * 200));
    }

    /// Bytes below a unit are kept for the next charge, not forgotten.
    #[test]
    fn small_charges_add_up() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut budget = ByteBudget::default();
            for _ in 0..10 {
                budget.charge(BYTES_PER_UNIT / 4).await;
            }
            assert_eq!(budget.owed, BYTES_PER_UNIT / 2);
        });
    }
}
