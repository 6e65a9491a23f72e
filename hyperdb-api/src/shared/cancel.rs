//! [`CancelToken`]: cancels one call whether it still waits for its turn
//! on the connection or already runs. A connection-wide cancel cannot:
//! while the call waits, the statement running is someone else's.

use std::sync::{Arc, Mutex};

use super::StreamCanceller;
use crate::error::{Error, Result};

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
