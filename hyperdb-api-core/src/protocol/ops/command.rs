//! Simple-query commands (`execute_command`) and draining abandoned replies.

use crate::error::Result;
use crate::protocol::backend::Message;
use crate::protocol::ops::{unexpected, Operation};
use crate::protocol::{frontend, Session};

/// Runs SQL through the simple query protocol and reports affected rows.
///
/// Result rows, if any, are discarded; a `COPY ... FROM STDIN` is refused with
/// `CopyFail` (it needs an inserter), which surfaces as the server's error.
#[derive(Debug, Default)]
pub struct Command {
    affected: u64,
}

impl Command {
    /// Queues `sql` as a simple `Query`.
    pub fn send(session: &mut Session, sql: &str) -> Result<Command> {
        frontend::query(session.write_buf(), sql)?;
        session.note_sql(sql);
        session.expect_ready();
        Ok(Command::default())
    }
}

impl Operation for Command {
    type Output = u64;

    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<u64>> {
        match msg {
            Message::CommandComplete(tag) => self.affected = affected_rows(&tag),
            Message::RowDescription(_)
            | Message::DataRows(_)
            | Message::EmptyQueryResponse
            | Message::CopyOutResponse(_)
            | Message::CopyData(_)
            | Message::CopyDone => {}
            Message::CopyInResponse(_) => {
                frontend::copy_fail(
                    session.write_buf(),
                    "COPY FROM STDIN is not supported by execute_command; use an inserter",
                )?;
            }
            Message::ReadyForQuery(_) => return Ok(Some(self.affected)),
            other => return Err(unexpected("command", &other)),
        }
        Ok(None)
    }
}

/// Affected rows from a command tag: `INSERT 0 5` -> 5, `SELECT 3` -> 3,
/// `CREATE TABLE` -> 0.
pub fn affected_rows(tag: &str) -> u64 {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Discards everything up to the next `ReadyForQuery`: what is left of a
/// result the caller dropped before reading it to the end.
#[derive(Debug, Default)]
pub struct Drain;

impl Operation for Drain {
    type Output = ();

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<()>> {
        Ok(matches!(msg, Message::ReadyForQuery(_)).then_some(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affected_rows_from_tags() {
        assert_eq!(affected_rows("INSERT 0 5"), 5);
        assert_eq!(affected_rows("SELECT 10000000"), 10_000_000);
        assert_eq!(affected_rows("UPDATE 3"), 3);
        assert_eq!(affected_rows("COPY 7"), 7);
        assert_eq!(affected_rows("CREATE TABLE"), 0);
        assert_eq!(affected_rows(""), 0);
    }
}
