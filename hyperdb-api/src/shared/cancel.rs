//! Cancels on a shared connection. [`CancelToken`]: cancels one call
//! whether it still waits for its turn on the connection or already runs.
//! [`cancel_running`]: the connection-wide cancel, of the call running now.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyperdb_api_core::client::{cancel_unanswered, CancelHandle, CANCEL_GRACE};
use hyperdb_api_core::error::SqlState;
use tokio::sync::Notify;

use super::{Inner, StreamCanceller};
use crate::error::{Error, Result};

/// Pauses before each repeat of a cancel request while the call it was
/// sent for still holds the connection. hyperd drops a request that comes
/// before the statement it is for (measured from Node: 30 of 30 lost when
/// `cancel()` followed the call at once); a repeat a moment later finds it.
const REPEATS: [Duration; 5] = [
    Duration::from_millis(5),
    Duration::from_millis(15),
    Duration::from_millis(40),
    Duration::from_millis(100),
    Duration::from_millis(250),
];

/// [`super::SharedConnection::cancel`]: which calls were made before it is
/// decided now; the requests are sent when the future runs (see
/// [`send_if_held`]), the repeats in the background.
pub(crate) fn cancel_running(inner: Arc<Inner>) -> impl Future<Output = Result<()>> + Send {
    let made_before = inner.line().taken();
    async move {
        let holder = {
            let line = inner.line();
            match inner.holder.load(Ordering::SeqCst) {
                0 => {
                    // Nobody holds the connection: the call about to, if made
                    // before this cancel, fails as it gets it.
                    if let Some(next) = line.next_served().filter(|&p| p < made_before) {
                        inner.cancel_on_turn.store(next + 1, Ordering::SeqCst);
                    }
                    return Ok(());
                }
                h if h > made_before => return Ok(()),
                h => h,
            }
        };
        inner.cancels.fetch_add(1, Ordering::SeqCst);
        inner.cancelled.notify_waiters();
        if send_if_held(&inner, holder).await? {
            repeat_in_background(move || {
                let inner = inner.clone();
                async move { send_if_held(&inner, holder).await }
            });
        }
        Ok(())
    }
}

/// Cancel requests a connection's server left unanswered: it did not
/// close the request's socket within core's `CANCEL_ACK_WAIT`, as a live
/// hyperd does in milliseconds, so it has stopped or the network drops
/// everything, and the statement will not end either. The call holding
/// the connection (a command, a stream's start or its reads) waits
/// [`CANCEL_GRACE`] more, then gives the connection up: nothing else would
/// end it, the caller may have stopped waiting without dropping it (Node
/// settles an aborted query at once), and every call queued behind,
/// `close` too, would wait for ever. A cancel the server answered leaves
/// the call to end as the statement does, however long that takes.
#[derive(Debug, Default)]
pub(crate) struct Unheard {
    count: AtomicU64,
    changed: Notify,
}

impl Unheard {
    /// Requests left unanswered so far: a call takes this once it holds
    /// the connection, and counts those after.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    fn mark(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Resolves [`CANCEL_GRACE`] after a request went unanswered since
    /// `since` was counted (at once if one has and the grace passed
    /// meanwhile is not counted: a stream's reads race this afresh for
    /// each item, so it is the grace without an item).
    pub(crate) async fn given_up(&self, since: u64) {
        loop {
            // Made before the check: `notify_waiters` wakes it from then.
            let changed = self.changed.notified();
            if self.count() != since {
                break;
            }
            changed.await;
        }
        tokio::time::sleep(CANCEL_GRACE).await;
    }

    /// What a call given up by [`Unheard::given_up`] fails with, and its
    /// connection is marked broken with: one wording wherever it happens.
    pub(crate) fn error() -> hyperdb_api_core::Error {
        cancel_unanswered("of a cancelled call")
    }
}

/// Sends a request with `handle`, telling `unheard` when the server left
/// it unanswered.
pub(crate) async fn send(handle: &CancelHandle, unheard: Option<&Unheard>) -> Result<()> {
    if !handle.cancel_async_answered().await? {
        if let Some(unheard) = unheard {
            unheard.mark();
        }
    }
    Ok(())
}

/// Sends a cancel request again after each of [`REPEATS`], for as long as
/// `send` finds the call it is for still running (`Ok(true)`).
pub(crate) fn repeat_in_background<S, F>(mut send: S)
where
    S: FnMut() -> F + Send + 'static,
    F: Future<Output = Result<bool>> + Send,
{
    tokio::spawn(async move {
        for pause in REPEATS {
            tokio::time::sleep(pause).await;
            if !matches!(send().await, Ok(true)) {
                return;
            }
        }
    });
}

/// Sends a cancel request if `holder` still holds the connection; whether
/// it did. Only under [`Inner::sending_cancel`], which a call that gets
/// the connection waits for before it sends anything
/// ([`super::Place::lock`]): hyperd has acted on a request once it closes
/// the request's socket, so no request meant for one call reaches the next.
async fn send_if_held(inner: &Inner, holder: u64) -> Result<bool> {
    let _sending = inner.sending_cancel.lock().await;
    if inner.holder.load(Ordering::SeqCst) != holder {
        return Ok(false);
    }
    send(&inner.cancel, Some(&inner.unheard)).await?;
    Ok(true)
}

/// The error of a statement sent while its transaction was open and well
/// (`in_transaction`), a 25P02 put down to its cause. hyperd takes a
/// cancel request that comes while a transaction waits for its next
/// statement by rolling the transaction back (a request meant for a call
/// can come before hyperd has its statement); that statement then fails
/// with 25P02 without running. Nothing else ends a well transaction
/// between two statements, so the statement was cancelled.
pub(crate) fn blamed_on_cancel(in_transaction: bool, e: Error) -> Error {
    if in_transaction && e.code() == Some(&SqlState::IN_FAILED_SQL_TRANSACTION) {
        Error::CancelledTransaction
    } else {
        e
    }
}

/// Cancels the call it is given to (`Place::query_arrow`, ...), from
/// anywhere. Before the call has the connection, it then fails with
/// [`Error::Cancelled`] without being sent; once it runs, the server
/// cancels it (57014).
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<Mutex<State>>);

#[derive(Debug, Default)]
enum State {
    #[default]
    Waiting,
    Requested,
    /// Boxed: a canceller holds a whole cancel handle.
    Running(Box<StreamCanceller>),
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Plain data: valid after any panic.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cancels the call: at once if it has not started, on the server if it
    /// runs, not at all once its result was read to the end.
    pub async fn cancel(&self) -> Result<()> {
        let running = {
            let mut state = self.state();
            match &*state {
                State::Waiting => {
                    *state = State::Requested;
                    None
                }
                State::Requested => None,
                State::Running(c) => Some(StreamCanceller::clone(c)),
            }
        };
        match running {
            Some(c) => c.cancel().await,
            None => Ok(()),
        }
    }

    /// The call starts with `canceller`; `Err` when it was cancelled before.
    pub(crate) fn start(&self, canceller: StreamCanceller) -> Result<()> {
        let mut state = self.state();
        if matches!(*state, State::Requested) {
            return Err(Error::Cancelled);
        }
        *state = State::Running(Box::new(canceller));
        Ok(())
    }
}
