//! What both drivers keep besides their stream, and the decisions they share.

use std::time::Duration;

use crate::client::cancel::CancelHandle;
use crate::client::config::Config;
use crate::client::deadline::Deadline;
use crate::error::{Error, Result};
use crate::protocol::{NoticeHandler, Session};

#[derive(Debug)]
pub(crate) struct DriverState {
    pub(crate) session: Session,
    pub(crate) read_window: usize,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) deadline: Option<Deadline>,
    /// Knows the backend key only after startup.
    pub(crate) cancel: CancelHandle,
    /// Bytes written to the socket since connecting (per flush, not per
    /// message): what an insert's trace reports as sent.
    pub(crate) bytes_sent: u64,
    /// Where a COPY started by `copy_in_early` stands.
    pub(crate) queued_copy: QueuedCopy,
    /// Columns of the COPY FROM STDIN whose `CopyInResponse` was read
    /// last (for a COPY without a column list, the table's).
    pub(crate) copy_columns: Option<usize>,
    /// A command was sent ahead (`execute_ahead`): its reply is the only
    /// one owed, and the next request reads it before its own.
    pub(crate) ahead: bool,
}

/// Where a COPY started by `copy_in_early` (its statement sent without
/// waiting for the answer) stands.
#[derive(Debug, Default)]
pub(crate) enum QueuedCopy {
    /// None was queued, or its answer was read and it runs.
    #[default]
    Settled,
    /// Its answer (`CopyInResponse`, or an error) is still unread.
    Unread,
    /// The server refused it: no COPY runs, and it dropped the frames sent
    /// behind the statement. Each later step of that COPY fails with this
    /// error instead of waiting for an answer that will not come.
    Refused(Box<crate::error::DbError>),
}

impl DriverState {
    pub(crate) fn new(config: &Config, notices: Option<NoticeHandler>) -> DriverState {
        DriverState {
            session: Session::new(config.limits, notices)
                .with_statement_cache(config.statement_cache_capacity),
            read_window: config.socket.read_window,
            query_timeout: config.query_timeout,
            deadline: None,
            cancel: CancelHandle::for_config(config, None),
            bytes_sent: 0,
            queued_copy: QueuedCopy::Settled,
            copy_columns: None,
            ahead: false,
        }
    }

    /// The deadline passed: `Ok(true)` means "send a cancel request now",
    /// `Err` means give up (the session is marked broken).
    pub(crate) fn expire_deadline(&mut self) -> Result<bool> {
        let Some(d) = &mut self.deadline else {
            return Ok(false);
        };
        match d.expire() {
            Ok(()) => Ok(true),
            Err(e) => {
                self.session.mark_broken(&e);
                Err(e)
            }
        }
    }

    /// [`expire_deadline`](Self::expire_deadline) for a socket write: when
    /// it gives up, part of a message may have been sent, and the error
    /// says so.
    pub(crate) fn expire_write_deadline(&mut self) -> Result<bool> {
        let Some(d) = &mut self.deadline else {
            return Ok(false);
        };
        match d.expire() {
            Ok(()) => Ok(true),
            Err(e) => {
                let e = Error::timeout(format!(
                    "{}; it stopped reading what was sent, so a message may be half-sent \
                     and the connection is closed",
                    e.message()
                ));
                self.session.mark_broken(&e);
                Err(e)
            }
        }
    }

    /// When a flush starts: see [`Deadline::renew_grace`] and
    /// [`Session::note_send`].
    #[inline]
    pub(crate) fn before_write(&mut self) {
        self.session.note_send();
        if let Some(d) = &mut self.deadline {
            d.renew_grace();
        }
    }

    /// When a flush has sent everything queued: [`Session::note_sent`].
    #[inline]
    pub(crate) fn after_write(&mut self) {
        self.session.note_sent();
    }
}
