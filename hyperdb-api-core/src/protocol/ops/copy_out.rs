//! `COPY ... TO STDOUT`: a stream of `CopyData` chunks (e.g. an Arrow IPC stream).

use bytes::Bytes;

use crate::error::Result;
use crate::protocol::backend::{CopyResponse, Message};
use crate::protocol::ops::{affected_rows, unexpected, Operation};
use crate::protocol::{frontend, Session};

/// What the next step of a COPY OUT produced.
#[derive(Debug)]
pub enum CopyOutEvent {
    /// The server started the copy.
    Started(CopyResponse),
    /// One chunk, a slice of the receive buffer (no copy).
    Data(Bytes),
    /// The copy finished; the server is ready for the next request.
    Done { rows: u64 },
}

/// Reads a COPY OUT reply one event at a time.
#[derive(Debug, Default)]
pub struct CopyOut {
    rows: u64,
}

impl CopyOut {
    /// Queues `copy_sql` (a `COPY (...) TO STDOUT ...` statement).
    pub fn send(session: &mut Session, copy_sql: &str) -> Result<CopyOut> {
        frontend::query(session.write_buf(), copy_sql)?;
        session.note_sql(copy_sql);
        session.expect_ready();
        session.expect_stream(true);
        Ok(CopyOut::default())
    }
}

impl Operation for CopyOut {
    type Output = CopyOutEvent;

    #[inline]
    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<CopyOutEvent>> {
        match msg {
            Message::CopyData(data) => Ok(Some(CopyOutEvent::Data(data))),
            Message::CopyOutResponse(r) => Ok(Some(CopyOutEvent::Started(r))),
            Message::CopyDone => Ok(None),
            Message::CommandComplete(tag) => {
                self.rows = affected_rows(&tag);
                Ok(None)
            }
            Message::ReadyForQuery(_) => Ok(Some(CopyOutEvent::Done { rows: self.rows })),
            other => Err(unexpected("COPY TO STDOUT", &other)),
        }
    }
}
