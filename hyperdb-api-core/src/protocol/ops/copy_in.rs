//! `COPY ... FROM STDIN`: start, then (after the caller's CopyData) finish.

use crate::error::Result;
use crate::protocol::backend::{CopyResponse, Message};
use crate::protocol::ops::{affected_rows, unexpected, Operation};
use crate::protocol::{frontend, Session};

/// Sends the COPY statement and waits for `CopyInResponse`.
#[derive(Debug, Default)]
pub struct CopyInStart;

impl CopyInStart {
    pub fn send(session: &mut Session, copy_sql: &str) -> Result<CopyInStart> {
        frontend::query(session.write_buf(), copy_sql)?;
        session.expect_ready();
        Ok(CopyInStart)
    }
}

impl Operation for CopyInStart {
    type Output = CopyResponse;

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<CopyResponse>> {
        match msg {
            Message::CopyInResponse(r) => Ok(Some(r)),
            other => Err(unexpected("COPY FROM STDIN", &other)),
        }
    }
}

/// Ends the COPY (with `CopyDone`, or `CopyFail` to abort) and waits for the
/// server's verdict: the row count, or its error.
#[derive(Debug, Default)]
pub struct CopyInFinish {
    rows: Option<u64>,
}

impl CopyInFinish {
    /// Commits: the server reports the row count.
    pub fn done(session: &mut Session) -> CopyInFinish {
        frontend::copy_done(session.write_buf());
        CopyInFinish::default()
    }

    /// Aborts: the table keeps its old contents; the server answers with an
    /// error naming `reason`, which the caller usually discards.
    pub fn fail(session: &mut Session, reason: &str) -> Result<CopyInFinish> {
        frontend::copy_fail(session.write_buf(), reason)
            .or_else(|_| frontend::copy_fail(session.write_buf(), "aborted by client"))?;
        Ok(CopyInFinish::default())
    }
}

impl Operation for CopyInFinish {
    type Output = u64;

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<u64>> {
        match msg {
            Message::CommandComplete(tag) => {
                self.rows = Some(affected_rows(&tag));
                Ok(None)
            }
            Message::ReadyForQuery(_) => Ok(Some(self.rows.unwrap_or(0))),
            other => Err(unexpected("COPY finish", &other)),
        }
    }
}
