//! Transactions as guards: commit explicitly, or roll back on drop.
//!
//! Dropping an uncommitted guard never blocks: it queues `ROLLBACK`, which the
//! connection sends and settles before its next request.

use std::ops::{Deref, DerefMut};

use hyperdb_api_core::error::{DbError, SqlState};
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::protocol::Session;

use crate::connection::Connection;
use crate::error::{Error, Result};

/// An open transaction on a [`Connection`]; derefs to it for queries.
///
/// What hyperd's transactions are (measured on 0.0.26963, each checked by a
/// live test in `tests/live/session.rs`):
///
/// * **No savepoints.** `SAVEPOINT` is refused with SQLSTATE 0A000
///   ("Savepoints are disabled.", no setting enables them) and aborts the
///   transaction, so there is no savepoint API here: a failed statement
///   fails the whole transaction, which can only be rolled back.
/// * **DDL is not undone.** `CREATE TABLE`, `DROP TABLE`, `DROP SCHEMA`
///   take effect at once and stay after `ROLLBACK`; only rows written
///   (`INSERT`, `COPY`, ...) are rolled back.
/// * **DDL after DML is refused** in one transaction ("mixing DDL and DML
///   is currently not supported"); DDL first, then rows, works.
#[derive(Debug)]
pub struct Transaction<'c> {
    conn: &'c mut Connection,
    open: bool,
}

impl<'c> Transaction<'c> {
    pub(crate) fn begin(conn: &'c mut Connection) -> Result<Transaction<'c>> {
        // A dropped guard's ROLLBACK, if one is queued, ends its block first.
        conn.client().settle()?;
        refuse_nested(conn.transaction_status())?;
        conn.execute_command("BEGIN")?;
        Ok(Transaction { conn, open: true })
    }

    /// Commits. If a statement in the transaction had failed, it is
    /// rolled back instead, as PostgreSQL does, and this returns 25P02
    /// ("rolled back, not committed"), never `Ok`: also when the failed
    /// statement had parameters, which hyperd does not count as failing
    /// the transaction (see `Session::transaction_status` in the core).
    /// With no transaction left to commit (a `ROLLBACK` or `COMMIT` sent
    /// through the guard by hand), 25P01.
    pub fn commit(mut self) -> Result<()> {
        self.open = false;
        // Drains what an abandoned result still owed: its error, if any,
        // failed the transaction too.
        self.conn.client().settle()?;
        let before = self.conn.transaction_status();
        self.conn.execute_command("COMMIT")?;
        committed(before, self.conn.client().session())
    }

    /// Rolls back.
    pub fn rollback(mut self) -> Result<()> {
        self.open = false;
        self.conn.execute_command("ROLLBACK").map(drop)
    }
}

impl Deref for Transaction<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl DerefMut for Transaction<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open {
            if let Err(e) = self.conn.client().enqueue_command("ROLLBACK") {
                tracing::warn!("could not queue ROLLBACK for a dropped transaction: {e}");
            }
        }
    }
}

/// What to send for the caller's `sql` with the session in `status`: a
/// `COMMIT` (or `END`) of a failed transaction block goes as `ROLLBACK`,
/// which is what PostgreSQL does with it. hyperd may report a block as
/// running after a statement in it failed, and would then commit the
/// writes around the failure (see `Session::transaction_status`). The
/// keyword is found as hyperd finds it (`sql_lex`): `\u{A0}COMMIT` once
/// went as it was, and committed.
pub(crate) fn ending(status: TransactionStatus, sql: &str) -> &str {
    if status != TransactionStatus::Failed {
        return sql;
    }
    let word = crate::sql_lex::first_word(sql);
    if word.eq_ignore_ascii_case("COMMIT") || word.eq_ignore_ascii_case("END") {
        "ROLLBACK"
    } else {
        sql
    }
}

/// A guard begins a transaction only on a connection with none open
/// (`status`, read with nothing owed): hyperd has no savepoints, so a
/// transaction begun inside another is the same one, and the inner guard's
/// `COMMIT` or `ROLLBACK` would end the outer's too. 25001, as PostgreSQL
/// names a `BEGIN` inside a transaction, also for a block begun by hand.
pub(crate) fn refuse_nested(status: TransactionStatus) -> Result<()> {
    refuse_open(
        status,
        "a transaction is already open on this connection, and transactions do not nest \
         (hyperd has no savepoints)",
        "run the statements on the open transaction (its guard derefs to the connection), or \
         end it first",
    )
}

/// 25001 with `message` and `hint` unless `status` (read with nothing
/// owed) has no transaction open: for what must not run inside one.
pub(crate) fn refuse_open(status: TransactionStatus, message: &str, hint: &str) -> Result<()> {
    if status == TransactionStatus::Idle {
        return Ok(());
    }
    let mut db = DbError::new(Some(SqlState::ACTIVE_SQL_TRANSACTION), message);
    db.hint = Some(hint.into());
    Err(Error::server(db))
}

/// What a `COMMIT` sent with the session in `before` did: hyperd answers
/// the `COMMIT` of a failed transaction with a rollback and no error, so a
/// caller that caught the failing statement's error would otherwise
/// believe its rows stored. That is SQLSTATE 25P02 here, as PostgreSQL's
/// JDBC driver reports the same case. The sync and async commits share it.
///
/// A `COMMIT` with no transaction open (it was ended by a `COMMIT` or
/// `ROLLBACK` sent by hand) commits
/// nothing, and what was written since ran on its own: 25P01, never `Ok`.
///
/// A `COMMIT` that hyperd answered `ROLLBACK` (it had ended the transaction
/// itself: a cancel request that arrived between two of its statements
/// does that) stored nothing either: 25P02 too.
pub(crate) fn committed(before: TransactionStatus, after: &Session) -> Result<()> {
    if before == TransactionStatus::Idle {
        let mut db = DbError::new(
            Some(SqlState::NO_ACTIVE_SQL_TRANSACTION),
            "no transaction was open to commit: it had been ended before, by a COMMIT or \
             ROLLBACK sent by hand",
        );
        db.hint = Some(
            "what it wrote before that end was committed or rolled back then, and what it \
             wrote after ran on its own"
                .into(),
        );
        return Err(Error::server(db));
    }
    let why = if before == TransactionStatus::Failed {
        "the transaction was rolled back, not committed: a statement in it had failed"
    } else if after.last_command_rolled_back() {
        "the transaction was rolled back, not committed: the server had ended it (a cancel \
         request that reached it between two of its statements does that)"
    } else {
        return Ok(());
    };
    let mut db = DbError::new(Some(SqlState::IN_FAILED_SQL_TRANSACTION), why);
    db.hint = Some("nothing the transaction wrote was stored; run it again".into());
    Err(Error::server(db))
}
