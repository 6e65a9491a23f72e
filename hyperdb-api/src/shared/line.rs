//! The line of calls on a [`SharedConnection`](super::SharedConnection):
//! a [`Place`] is taken when a call is made, synchronously, so calls run in
//! the order they were made even when their futures are first polled in
//! another order (a binding spawns each call as its own task).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Inner;

/// Which place is served, and places given up before their turn.
#[derive(Debug, Default)]
pub(crate) struct Line {
    next: u64,
    serving: u64,
    gone: BTreeSet<u64>,
}

impl Line {
    pub(crate) fn take(&mut self) -> u64 {
        self.next += 1;
        self.next - 1
    }

    /// Places taken so far: every place made before now has a lower id.
    pub(crate) fn taken(&self) -> u64 {
        self.next
    }

    /// The place served next, if one was taken that was not yet served.
    pub(crate) fn next_served(&self) -> Option<u64> {
        (self.serving < self.next).then_some(self.serving)
    }

    pub(crate) fn is_turn_of(&self, id: u64) -> bool {
        self.serving == id
    }

    /// `id` is done waiting (served, or given up at its turn): the next
    /// place still in line is served.
    pub(crate) fn advance_past(&mut self, id: u64) {
        self.serving = id + 1;
        while self.gone.remove(&self.serving) {
            self.serving += 1;
        }
    }

    /// `id` gives up its place.
    pub(crate) fn leave(&mut self, id: u64) {
        if self.serving == id {
            self.advance_past(id);
        } else {
            self.gone.insert(id);
        }
    }
}

/// A place in line for the connection, taken when a call is made. Use it
/// (`lock`, or one of the calls on it) or drop it; a dropped place lets
/// the next one through.
#[derive(Debug)]
pub struct Place {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: u64,
    pub(crate) used: bool,
}

impl Drop for Place {
    fn drop(&mut self) {
        if !self.used {
            self.inner.line().leave(self.id);
            self.inner.turn.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_served_in_order_and_skipped_when_given_up() {
        let mut line = Line::default();
        let (a, b, c, d) = (line.take(), line.take(), line.take(), line.take());
        assert!(line.is_turn_of(a) && !line.is_turn_of(b));
        line.leave(c);
        assert!(!line.is_turn_of(c), "a place given up early is not served");
        line.advance_past(a);
        assert!(line.is_turn_of(b));
        line.advance_past(b);
        assert!(line.is_turn_of(d), "c was skipped");
        line.leave(d);
        let e = line.take();
        assert!(
            line.is_turn_of(e),
            "giving up at one's turn serves the next"
        );
    }
}
