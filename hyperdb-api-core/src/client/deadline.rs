//! What a driver does when a connect or query timeout expires: the first
//! expiry of a query asks the server to cancel (so the connection stays
//! usable, and the server's 57014 comes back as a timeout: `is_timeout()`
//! and `is_cancelled()` both hold, which a caller's own cancel never is);
//! if the server stays silent for a grace period after that, the
//! connection is given up as broken.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long to wait for the server to honour a cancel request.
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub(crate) struct Deadline {
    at: Instant,
    cancellable: bool,
    cancel_sent: bool,
}

impl Deadline {
    /// A query deadline: expiry sends a cancel request first.
    pub(crate) fn query(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            cancellable: true,
            cancel_sent: false,
        }
    }

    /// A connect deadline: expiry fails at once.
    pub(crate) fn connect(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            cancellable: false,
            cancel_sent: false,
        }
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// Time left, or `None` once expired.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        let left = self.at.saturating_duration_since(Instant::now());
        (left >= Duration::from_millis(1)).then_some(left)
    }

    /// Whether this deadline's expiry sent a cancel request: a 57014 that
    /// follows is the timeout's, not a caller's cancel.
    pub(crate) fn cancelled_by_timeout(&self) -> bool {
        self.cancel_sent
    }

    /// Called on expiry: `Ok(())` means "send a cancel request now" (the
    /// deadline moves on by [`CANCEL_GRACE`]); `Err` means give up.
    pub(crate) fn expire(&mut self) -> Result<()> {
        if !self.cancellable {
            return Err(Error::timeout("connect timeout expired during startup"));
        }
        if self.cancel_sent {
            return Err(Error::timeout(
                "query timeout expired and the server did not answer the cancel request",
            ));
        }
        self.cancel_sent = true;
        self.at = Instant::now() + CANCEL_GRACE;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_deadline_cancels_once_then_gives_up() {
        let mut d = Deadline::query(Duration::ZERO);
        assert!(d.remaining().is_none());
        d.expire().unwrap();
        assert!(d.remaining().is_some(), "grace period");
        assert!(d.expire().unwrap_err().is_timeout());
    }

    #[test]
    fn connect_deadline_fails_at_once() {
        let mut d = Deadline::connect(Duration::ZERO);
        assert!(d.expire().unwrap_err().is_timeout());
    }
}
