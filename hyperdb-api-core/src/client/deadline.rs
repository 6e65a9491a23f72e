//! What a driver does when a connect or query timeout expires: the first
//! expiry of a query asks the server to cancel (so the connection stays
//! usable, and the server's 57014 comes back as a timeout: `is_timeout()`
//! and `is_cancelled()` both hold, which a caller's own cancel never is);
//! if the server stays silent for a grace period after that, the
//! connection is given up as broken.
//!
//! Writes wait under the same deadline: a server that stops reading
//! during a COPY gets the cancel request too. After it the server is
//! expected to read on (it discards the rest of a cancelled COPY), so each
//! flush gets a grace period of its own ([`Deadline::renew_grace`]); one
//! that has not finished by then gives up, and since a message may then be
//! half-sent, the connection is broken. Per flush, not per write call: a
//! peer that stopped reading still takes a few bytes now and then (the
//! kernel makes room in its receive queue), which must not keep a write
//! waiting forever.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long to wait for the server to honour a cancel request.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// The timeout a connection is given up with when the server answered a
/// cancel request (`of` says which) neither by ending the statement nor
/// otherwise within [`CANCEL_GRACE`]: one wording for the drivers and the
/// shared connection's streams.
pub fn cancel_unanswered(of: &str) -> Error {
    Error::timeout(format!(
        "the server did not answer the cancel request {of} within {} s; the connection is given up",
        CANCEL_GRACE.as_secs()
    ))
}

#[derive(Debug)]
pub(crate) struct Deadline {
    at: Instant,
    cancellable: bool,
    cancel_sent: bool,
    /// Set for [`Deadline::abandoned`]: giving up says so
    /// ([`cancel_unanswered`]) rather than naming a query timeout.
    abandoned: bool,
}

impl Deadline {
    /// A query deadline: expiry sends a cancel request first.
    pub(crate) fn query(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            cancellable: true,
            cancel_sent: false,
            abandoned: false,
        }
    }

    /// The wait for a statement the client has just cancelled because
    /// nobody reads its result any more: the grace a query timeout gives
    /// after its cancel, then the connection is given up. Without it a
    /// server that answers neither the statement nor the cancel (a stopped
    /// process, a silent network) held the connection, and every call
    /// queued on it, `close` included, for ever.
    pub(crate) fn abandoned() -> Deadline {
        Deadline {
            at: Instant::now() + CANCEL_GRACE,
            cancellable: true,
            cancel_sent: true,
            abandoned: true,
        }
    }

    /// A connect deadline: expiry fails at once.
    pub(crate) fn connect(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            cancellable: false,
            cancel_sent: false,
            abandoned: false,
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

    /// Once the cancel request is out, restarts the grace period: called
    /// when a flush starts (and when the request has gone out), so a
    /// server that keeps reading (draining a cancelled COPY) is waited
    /// for however long the caller keeps writing, and a flush it does not
    /// take within a grace period is given up. Before the cancel it does
    /// nothing.
    #[inline]
    pub(crate) fn renew_grace(&mut self) {
        if self.cancel_sent {
            self.at = Instant::now() + CANCEL_GRACE;
        }
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
        if self.abandoned {
            return Err(cancel_unanswered("of an abandoned result"));
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
    fn writes_renew_the_grace_only_after_the_cancel() {
        let mut d = Deadline::query(Duration::ZERO);
        d.renew_grace();
        assert!(d.remaining().is_none(), "no grace before the cancel");
        d.expire().unwrap();
        d.at = Instant::now();
        assert!(d.remaining().is_none());
        d.renew_grace();
        assert!(d.remaining().is_some_and(|left| left > CANCEL_GRACE / 2));
        d.at = Instant::now();
        assert!(d.expire().unwrap_err().is_timeout());
    }

    #[test]
    fn an_abandoned_statement_gets_the_grace_then_gives_up() {
        let mut d = Deadline::abandoned();
        let left = d.remaining().expect("the grace");
        assert!(left > CANCEL_GRACE / 2 && left <= CANCEL_GRACE);
        assert!(d.cancelled_by_timeout(), "its cancel is out: none again");
        d.at = Instant::now();
        let e = d.expire().unwrap_err();
        assert!(e.is_timeout() && e.to_string().contains("abandoned"), "{e}");
    }

    #[test]
    fn connect_deadline_fails_at_once() {
        let mut d = Deadline::connect(Duration::ZERO);
        assert!(d.expire().unwrap_err().is_timeout());
    }
}
