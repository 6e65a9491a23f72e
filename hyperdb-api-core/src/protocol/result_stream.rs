//! What the session knows about the result stream it owes first (rows, or
//! a COPY OUT), so that a driver can end an abandoned one early: cancel
//! its statement rather than read the rest (issue 18: 50M dropped rows
//! cost the next query 0.5-5 s), without the cancel ever reaching another
//! statement.
//!
//! A cancel request names the session, not a statement: it is safe only
//! while the stream's statement is the last one the server was sent, and
//! its request went out whole. So the state follows the request from the
//! moment it is queued: whether it went out (a flush completed after it),
//! whether a request was queued behind it (a dropped transaction's
//! `ROLLBACK`), and whether any of that went out too.

/// What the first owed reply is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not a stream, or its statement completed.
    #[default]
    None,
    /// A query whose rows are described before they come: a stream once
    /// its `RowDescription` arrives, a plain command on `NoData`.
    Undescribed,
    /// Rows or COPY OUT data of a statement that still runs.
    Open,
}

/// See the module documentation.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ResultStream {
    kind: Kind,
    /// Its request went out whole.
    out: bool,
    /// A request was queued after it.
    queued_behind: bool,
    /// Something queued after it went out.
    sent_behind: bool,
}

impl ResultStream {
    /// The request just queued (its reply the first owed) returns a
    /// stream (`described`: rows of a bound statement, a COPY OUT), or
    /// may (a query not yet described).
    pub(crate) fn queued(&mut self, described: bool) {
        *self = ResultStream {
            kind: if described {
                Kind::Open
            } else {
                Kind::Undescribed
            },
            ..ResultStream::default()
        };
    }

    /// Another request was queued (after this one, if it is owed).
    pub(crate) fn request_queued(&mut self) {
        if self.kind != Kind::None {
            self.queued_behind = true;
        }
    }

    /// A flush starts: what was queued behind the stream may go out.
    pub(crate) fn flush_started(&mut self) {
        if self.kind != Kind::None && self.queued_behind {
            self.sent_behind = true;
        }
    }

    /// A flush completed: everything queued went out.
    pub(crate) fn flushed(&mut self) {
        self.out = true;
    }

    /// Its description arrived: rows follow (`true`) or none (`NoData`).
    pub(crate) fn described(&mut self, rows: bool) {
        if self.kind == Kind::Undescribed {
            self.kind = if rows { Kind::Open } else { Kind::None };
        }
    }

    /// Its statement completed, failed, or its reply ended.
    pub(crate) fn ended(&mut self) {
        self.kind = Kind::None;
    }

    /// Rows or COPY OUT data are owed: the statement has neither completed
    /// nor failed.
    pub(crate) fn open(&self) -> bool {
        self.kind == Kind::Open
    }

    /// A stream (or a query that may be one) is owed, with nothing sent
    /// behind it: a driver can still end it early.
    pub(crate) fn endable(&self) -> bool {
        self.kind != Kind::None && !self.sent_behind
    }

    /// Its request went out whole.
    pub(crate) fn request_out(&self) -> bool {
        self.out
    }

    /// A request was queued behind it (and has not gone out, while
    /// [`endable`](Self::endable)).
    pub(crate) fn queued_behind(&self) -> bool {
        self.queued_behind
    }

    /// Rows or COPY OUT data of a statement that still runs, with nothing
    /// sent behind its request: a cancel sent now (and answered before
    /// anything else is sent) reaches that statement, or none once it
    /// has ended.
    pub(crate) fn cancellable(&self) -> bool {
        self.kind == Kind::Open && !self.sent_behind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A described stream is cancellable from when it is queued until a
    /// request queued behind it goes out.
    #[test]
    fn a_stream_is_cancellable_until_something_behind_it_goes_out() {
        let mut s = ResultStream::default();
        assert!(!s.endable() && !s.cancellable());
        s.queued(true);
        assert!(s.cancellable() && !s.request_out());
        s.flush_started();
        s.flushed();
        assert!(s.cancellable() && s.request_out());
        s.request_queued();
        assert!(s.cancellable() && s.queued_behind(), "queued, not sent");
        s.flush_started();
        assert!(!s.cancellable() && !s.endable(), "sent behind it");
    }

    /// A query is a stream once described with rows; `NoData` makes it a
    /// command, which is never cancelled (only drained).
    #[test]
    fn a_query_is_a_stream_once_its_rows_are_described() {
        let mut s = ResultStream::default();
        s.queued(false);
        assert!(s.endable() && !s.cancellable());
        s.described(true);
        assert!(s.cancellable());
        s.ended();
        assert!(!s.endable() && !s.cancellable());

        s.queued(false);
        s.described(false);
        assert!(!s.endable() && !s.cancellable());
    }

    /// Queued in one buffer with the stream's request, a request behind it
    /// goes out with it: no cancel then.
    #[test]
    fn a_request_flushed_with_the_streams_own_is_sent_behind_it() {
        let mut s = ResultStream::default();
        s.queued(true);
        s.request_queued();
        s.flush_started();
        assert!(!s.cancellable());
        // A new stream starts afresh.
        s.queued(true);
        assert!(s.cancellable() && !s.queued_behind());
    }
}
