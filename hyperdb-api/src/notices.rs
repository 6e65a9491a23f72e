//! Server notices to a channel: the senders
//! [`ConnectOptions::with_notice_channel`](crate::ConnectOptions::with_notice_channel)
//! takes.
//!
//! A notice is handed over the moment the connection reads it, before the
//! rest of the statement's reply (a warning about the first statement of a
//! batch arrives while the second still runs). The connection never waits
//! for the receiver: unbounded channels take every notice, a full bounded
//! one drops it (logged through `tracing`), and a closed one is ignored.

use std::sync::Arc;

use hyperdb_api_core::protocol::NoticeHandler;

use crate::error::DbError;

mod sealed {
    pub trait Sealed {}
}

/// A channel sender that can receive server notices: `std::sync::mpsc`'s
/// `Sender` and `SyncSender`, and (feature `async`) tokio's `mpsc`
/// `UnboundedSender` and `Sender`, each of [`DbError`]. Sealed.
pub trait NoticeSender: sealed::Sealed + Send + Sync + 'static {
    #[doc(hidden)]
    fn send_notice(&self, notice: DbError);
}

impl sealed::Sealed for std::sync::mpsc::Sender<DbError> {}
impl NoticeSender for std::sync::mpsc::Sender<DbError> {
    fn send_notice(&self, notice: DbError) {
        // Err only when the receiver is gone: nobody listens any more.
        let _ = self.send(notice);
    }
}

impl sealed::Sealed for std::sync::mpsc::SyncSender<DbError> {}
impl NoticeSender for std::sync::mpsc::SyncSender<DbError> {
    fn send_notice(&self, notice: DbError) {
        if let Err(std::sync::mpsc::TrySendError::Full(n)) = self.try_send(notice) {
            dropped(&n);
        }
    }
}

#[cfg(feature = "async")]
impl sealed::Sealed for tokio::sync::mpsc::UnboundedSender<DbError> {}
#[cfg(feature = "async")]
impl NoticeSender for tokio::sync::mpsc::UnboundedSender<DbError> {
    fn send_notice(&self, notice: DbError) {
        let _ = self.send(notice);
    }
}

#[cfg(feature = "async")]
impl sealed::Sealed for tokio::sync::mpsc::Sender<DbError> {}
#[cfg(feature = "async")]
impl NoticeSender for tokio::sync::mpsc::Sender<DbError> {
    fn send_notice(&self, notice: DbError) {
        if let Err(tokio::sync::mpsc::error::TrySendError::Full(n)) = self.try_send(notice) {
            dropped(&n);
        }
    }
}

#[cold]
fn dropped(notice: &DbError) {
    tracing::warn!(target: "hyperdb::notice", "notice channel full, dropped: {notice}");
}

/// The session's handler for `sender`.
pub(crate) fn channel_handler(sender: impl NoticeSender) -> NoticeHandler {
    Arc::new(move |n: &DbError| sender.send_notice(n.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Severity;

    fn notice(text: &str) -> DbError {
        let mut n = DbError::new(None, text);
        n.severity = Some(Severity::Warning);
        n
    }

    #[test]
    fn every_sender_delivers_and_none_blocks() {
        let (tx, rx) = std::sync::mpsc::channel();
        channel_handler(tx)(&notice("a"));
        assert_eq!(rx.try_recv().unwrap().message, "a");

        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let handler = channel_handler(tx);
        handler(&notice("b"));
        handler(&notice("full: dropped, not blocking"));
        assert_eq!(rx.try_recv().unwrap().message, "b");
        assert!(rx.try_recv().is_err());
        drop(rx);
        handler(&notice("closed: ignored"));
    }

    #[cfg(feature = "async")]
    #[test]
    fn tokio_senders() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        channel_handler(tx)(&notice("c"));
        assert_eq!(rx.try_recv().unwrap().message, "c");
        let (tx, mut rx) = tokio::sync::mpsc::channel(1);
        let handler = channel_handler(tx);
        handler(&notice("d"));
        handler(&notice("dropped"));
        assert_eq!(rx.try_recv().unwrap().message, "d");
        assert!(rx.try_recv().is_err());
    }
}
