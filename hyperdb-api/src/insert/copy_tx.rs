//! Every inserter's COPY, from the table check to the commit, so that an
//! insert that fails stores nothing.
//!
//! Why: hyperd commits a COPY when it ends and only then says how many
//! rows it stored. Rows encoded for a definition that is not the table's
//! were parsed otherwise by hyperd (a nullable column sent to a NOT NULL
//! one: 1000 rows sent, 2000 garbage rows committed), and the row-count
//! check came after the commit. So an inserter
//!
//! * checks its definition against the table its COPY writes before the
//!   first row goes out: [`TableDefinition::check_columns_match`] against
//!   the definition of the name as the server resolves it (a temporary
//!   table first, then the search path; `Catalog`'s own lookups take
//!   `public`), read from the Arrow schema of `SELECT * FROM t LIMIT 0`.
//!   A name that resolves to nothing is `42P01` before any COPY starts.
//!   An Arrow insert repeating the connection's last request skips the
//!   lookup and relies on hyperd's own check of the stream ([`LastInsert`]);
//! * when the connection is in no transaction, runs that lookup, its COPY
//!   (or COPYs: rows the format cannot carry go in a HyperBinary COPY of
//!   their own, `HeldRows`) and the row-count check in one transaction of
//!   its own, committed only once the count matched and rolled back on any
//!   error. Its `BEGIN` goes out with the lookup (or, when a repeat skips
//!   it, with the COPY statement), and the COPY statement as soon as it is
//!   known, before the rows, so hyperd plans it while they are made: three
//!   round trips in all for a small insert (`BEGIN`, the rows, `COMMIT`).
//!
//! Inside the caller's transaction the inserter neither commits nor rolls
//! back: after an error the rows sent are the caller's to roll back (a
//! dropped `Transaction` does; a server error fails the transaction anyway).

use hyperdb_api_core::protocol::backend::TransactionStatus;

use crate::error::{Error, Result};
use crate::table_definition::TableDefinition;
use crate::trace::StatementTrace;

/// An inserter's COPY statement, and the HyperBinary one for rows its
/// format holds back (`None` when it holds none back).
#[derive(Debug, Clone)]
pub(crate) struct CopySql {
    pub(crate) copy: String,
    pub(crate) held: Option<String>,
    /// hyperd checks this COPY's stream against the table itself (an Arrow
    /// stream: every field by name, its type and nullability), so an
    /// insert repeating the last one may skip the lookup ([`LastInsert`]).
    pub(crate) stream_checked: bool,
}

/// The table a connection's last request, an insert's commit, wrote and
/// had checked: the next insert of the same table, if nothing else ran
/// on the connection in between (the session's mark, which any request
/// clears, still holds that insert's tag), skips the lookup. "The same
/// table" is the same definition for a [`Target::Checked`] insert, and
/// the same name for a [`Target::Resolved`] one, which then takes the
/// definition that name resolved to last time. What it then relies on is
/// hyperd's own check of the Arrow stream (every near type and a nullable
/// field for a NOT NULL column refused, 42804; a table column missing
/// from it, 42P10) and the table's column count in the COPY's answer (a
/// column the table no longer has: hyperd ignores the field); the one
/// difference either could miss, another session making the table's
/// columns nullable or reordering them, stores the rows correctly by
/// name. Rows held back for a HyperBinary COPY, whose layout follows the
/// table's exactly, are checked again first.
#[derive(Debug, Default)]
pub(crate) struct LastInsert {
    table: Option<Asked>,
    tag: u64,
}

/// What an insert was asked to write.
#[derive(Debug, PartialEq)]
enum Asked {
    /// The caller's definition.
    Definition(TableDefinition),
    /// A name, and the definition it resolved to.
    #[cfg(all(feature = "async", feature = "arrow"))]
    Name(crate::names::TableName, TableDefinition),
}

impl LastInsert {
    /// Records an insert of `table` starting, the session's mark being
    /// `mark`: its tag, to mark the session with once it committed, and
    /// whether it repeats the last insert.
    fn start(&mut self, table: &TableDefinition, mark: Option<u64>) -> (u64, bool) {
        let same = matches!(&self.table, Some(Asked::Definition(t)) if t == table);
        let repeated = same && mark == Some(self.tag);
        if !same {
            self.table = Some(Asked::Definition(table.clone()));
        }
        self.tag += 1;
        (self.tag, repeated)
    }

    /// Records an insert into the table `name` starting (see `start`): its
    /// tag, and the definition `name` resolved to when it repeats the last
    /// insert, else `None` (a lookup is due: [`LastInsert::resolved`]).
    #[cfg(all(feature = "async", feature = "arrow"))]
    fn start_resolved(
        &mut self,
        name: &crate::names::TableName,
        mark: Option<u64>,
    ) -> (u64, Option<TableDefinition>) {
        let cached = match &self.table {
            Some(Asked::Name(n, table)) if n == name && mark == Some(self.tag) => {
                Some(table.clone())
            }
            _ => None,
        };
        self.tag += 1;
        (self.tag, cached)
    }

    /// What a lookup for an insert into `name` found.
    #[cfg(all(feature = "async", feature = "arrow"))]
    fn resolved(&mut self, name: &crate::names::TableName, table: &TableDefinition) {
        self.table = Some(Asked::Name(name.clone(), table.clone()));
    }
}

/// The table an inserter's COPY writes, and how its definition is known.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// The caller's definition, checked against the table the COPY writes.
    Checked(&'a TableDefinition),
    /// A table this crate just made from this definition: not looked up.
    Made(&'a TableDefinition),
    /// The named table as the server defines it, looked up in the insert's
    /// transaction: for callers that have a name only (the Node package),
    /// one catalog query instead of a lookup and then the check.
    #[cfg(all(feature = "async", feature = "arrow"))]
    Resolved(&'a crate::names::TableName),
}

/// Where an inserter's COPY stands: what dropping the inserter (or a
/// future of it, at any await point) must queue so that nothing is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// A COPY runs, or its statement went out: a drop ends it with
    /// `CopyFail` (and rolls back the inserter's own transaction).
    Copying,
    /// No COPY runs (the last one was ended with `CopyDone`, or the next
    /// has not been started): a drop rolls back the own transaction.
    Between,
    /// Committed or rolled back, or the COMMIT has been decided (it goes
    /// out in the same poll): nothing is left to undo.
    Settled,
}

/// The transaction an inserter's COPY runs in, and what it stored so far.
#[derive(Debug)]
pub(crate) struct CopyTx {
    /// The inserter began the transaction, so it commits or rolls back.
    own: bool,
    sql: CopySql,
    /// Rows stored by the COPYs already ended.
    stored: u64,
    phase: Phase,
    /// The insert's span: from the table check to the commit, with the
    /// rows stored and the bytes sent (the connection's count since the
    /// COPY started). Dropped before its end (the inserter dropped): it
    /// records the insert as abandoned.
    trace: StatementTrace,
    /// The connection's `bytes_sent` when the COPY started.
    sent_before: u64,
    /// The session's mark once committed ([`LastInsert`]).
    tag: Option<u64>,
    /// The caller's definition, when its lookup was skipped: held rows
    /// check it first.
    unchecked: Option<TableDefinition>,
    /// Whether the COPY's answer was checked against `unchecked`.
    answer_checked: bool,
}

impl CopyTx {
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    pub(crate) fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    pub(crate) fn own(&self) -> bool {
        self.own
    }

    pub(crate) fn copy_sql(&self) -> &str {
        &self.sql.copy
    }

    pub(crate) fn held_sql(&self) -> Result<&str> {
        self.sql.held.as_deref().ok_or_else(|| {
            Error::invalid_argument("insert", "internal: rows held back without a COPY for them")
        })
    }

    pub(crate) fn stored(&self) -> u64 {
        self.stored
    }

    pub(crate) fn add_stored(&mut self, rows: u64) {
        self.stored += rows;
    }

    pub(crate) fn tag(&self) -> Option<u64> {
        self.tag
    }

    /// The definition whose lookup was skipped, if it was (only Arrow
    /// streams skip it, and only they hold rows back).
    #[cfg(feature = "arrow")]
    pub(crate) fn unchecked(&self) -> Option<&TableDefinition> {
        self.unchecked.as_ref()
    }

    /// Checks a skipped lookup's definition against `columns`, the column
    /// count of the COPY's answer (`None` while unread), once.
    pub(crate) fn check_answer(&mut self, columns: Option<usize>) -> Result<()> {
        let (Some(table), Some(columns), false) = (&self.unchecked, columns, self.answer_checked)
        else {
            return Ok(());
        };
        self.answer_checked = true;
        let given = table.column_count();
        if columns == given {
            return Ok(());
        }
        let e = Error::DefinitionMismatch {
            table: table.name().to_string(),
            // The first the table lacks, when the definition has more.
            column: table.columns().get(columns).map(|c| c.name().to_owned()),
            actual: format!("{columns} columns"),
            given: format!("{given}"),
        };
        self.fail(&e);
        Err(e)
    }

    /// Records `e` as how the insert ended.
    #[cold]
    pub(crate) fn fail(&mut self, e: &Error) {
        self.trace.fail(e);
    }

    /// [`fail`](Self::fail), passing `e` on.
    #[cold]
    pub(crate) fn failed(&mut self, e: impl Into<Error>) -> Error {
        let e = e.into();
        self.fail(&e);
        e
    }

    /// Records how the insert ended: `result` (the rows stored, or the
    /// error), with `bytes_sent`, the connection's count now.
    pub(crate) fn end_trace(&mut self, result: &Result<u64>, bytes_sent: u64) {
        self.trace
            .add(0, bytes_sent.saturating_sub(self.sent_before));
        match result {
            Ok(stored) => self.trace.finish(Some(*stored)),
            Err(e) => self.trace.fail(e),
        }
    }
}

/// What an inserter answers once an earlier error ended its insert.
#[cold]
pub(crate) fn insert_over() -> Error {
    Error::invalid_argument(
        "inserter",
        "an earlier error ended this insert; nothing was stored",
    )
}

/// Rolls back after an error. The error being reported matters more than
/// this one's, which only a broken connection causes.
macro_rules! rollback {
    ($client:expr; $($aw:tt)*) => {
        if let Err(e) = $client.execute("ROLLBACK") $($aw)* {
            tracing::debug!("rolling back a failed insert: {e}");
        }
    };
}

/// Sends `COMMIT` and waits for its reply. The async form writes it in the
/// poll that calls it, whatever the task's budget (`unconstrained`; the
/// socket took everything before the COPY's reply, so it has room): so
/// the only await point after the commit was decided is the wait for the
/// reply, by when the COMMIT is the server's.
macro_rules! commit {
    ($client:expr;) => {
        $client.execute("COMMIT").map(drop)
    };
    ($client:expr; .await) => {
        tokio::task::coop::unconstrained($client.execute("COMMIT"))
            .await
            .map(drop)
    };
}

/// The definition of the table a name resolves to, on an inserter's
/// client: sync, or `.await`ed.
#[cfg(feature = "arrow")]
macro_rules! lookup {
    ($client:expr, $table:expr;) => {
        crate::catalog::resolved_definition_on($client, $table, |_| {
            crate::trace::StatementTrace::default()
        })
    };
    ($client:expr, $table:expr; .await) => {
        crate::catalog::resolved_definition_on_async($client, $table, |_| {
            crate::trace::StatementTrace::default()
        })
        .await
    };
}

/// `CopyTx::open` for [`crate::Connection`] and `CopyTx::open_async` for
/// [`crate::AsyncConnection`].
macro_rules! open_fn {
    ($name:ident, $conn:ty $(, $async_kw:ident)? ; $($aw:tt)*) => {
        impl CopyTx {
            /// Starts a COPY into `target`: in a transaction of its own when
            /// the connection is in none, after looking the table up (unless
            /// this crate just made it). Its statement is `sql` of the
            /// definition settled on: the caller's, once it matched the
            /// table's, or the table's own for a [`Target::Resolved`]. On
            /// error nothing is left open.
            pub(crate) $($async_kw)? fn $name(
                conn: &mut $conn,
                target: Target<'_>,
                mut sql: impl FnMut(&TableDefinition) -> Result<CopySql>,
            ) -> Result<(CopyTx, Option<TableDefinition>)> {
                /// Queues what undoes `open` if it stops midway (its future
                /// dropped): `CopyFail` once the COPY statement went out,
                /// `ROLLBACK` after its own `BEGIN`. Else the session's
                /// later statements would run in the transaction, or reach
                /// a server waiting for COPY data.
                struct Begun<'a> {
                    conn: &'a mut $conn,
                    own: bool,
                    phase: Phase,
                }
                impl Drop for Begun<'_> {
                    fn drop(&mut self) {
                        let client = self.conn.client();
                        if self.phase == Phase::Copying {
                            client.queue_copy_fail("the insert's start was abandoned");
                        }
                        if self.own && self.phase != Phase::Settled {
                            if let Err(e) = client.enqueue_command("ROLLBACK") {
                                tracing::warn!("could not queue ROLLBACK for an insert: {e}");
                            }
                        }
                    }
                }

                // The statement is known now unless it is made from the
                // table's own definition, after the lookup; the insert's
                // span starts with it (a lookup has a span of its own).
                let early = match target {
                    Target::Checked(table) | Target::Made(table) => Some(sql(table)?),
                    #[cfg(all(feature = "async", feature = "arrow"))]
                    Target::Resolved(_) => None,
                };
                let mut trace = match &early {
                    Some(sql) => conn.trace("insert", &sql.copy, 0),
                    None => StatementTrace::default(),
                };
                // Read before anything is queued, which clears it.
                let mark = conn.client().mark();
                // A dropped transaction or inserter queued its end: settle
                // it, so the status below is the server's.
                if let Err(e) = conn.client().settle() $($aw)* {
                    return trace.result(Err(e.into()), |_| None);
                }
                let own = conn.transaction_status() == TransactionStatus::Idle;
                // An insert in its own transaction whose stream hyperd checks
                // may skip the lookup when it repeats the last one.
                let (tag, unchecked) = match (target, &early) {
                    (Target::Checked(table), Some(sql)) if own && sql.stream_checked => {
                        let (tag, repeated) = conn.last_insert().start(table, mark);
                        (Some(tag), repeated.then(|| table.clone()))
                    }
                    // Its statement is made from the definition: Arrow's,
                    // which hyperd checks, is the only one made so.
                    #[cfg(all(feature = "async", feature = "arrow"))]
                    (Target::Resolved(name), None) if own => {
                        let (tag, cached) = conn.last_insert().start_resolved(name, mark);
                        (Some(tag), cached)
                    }
                    _ => (None, None),
                };
                // Armed before `BEGIN` is queued: a future dropped after
                // that leaves the transaction begun.
                let mut begun = Begun { conn, own, phase: Phase::Between };
                if own {
                    // Sent with the lookup (or the COPY), in one write.
                    if let Err(e) = begun.conn.client().execute_ahead("BEGIN") $($aw)* {
                        return trace.result(Err(e.into()), |_| None);
                    }
                }
                // The table's own definition, for a `Resolved` target.
                let looked_up = match target {
                    Target::Made(_) => Ok(None),
                    Target::Checked(_) if unchecked.is_some() => Ok(None),
                    Target::Checked(table) => begun
                        .conn
                        .catalog()
                        .resolved_definition(table.name())
                        $($aw)*
                        .and_then(|actual| table.check_columns_match(&actual))
                        .map(|()| None),
                    #[cfg(all(feature = "async", feature = "arrow"))]
                    Target::Resolved(_) if unchecked.is_some() => Ok(unchecked.clone()),
                    #[cfg(all(feature = "async", feature = "arrow"))]
                    Target::Resolved(name) => {
                        let found = begun.conn.catalog().resolved_definition(name) $($aw)*;
                        if let (Ok(actual), true) = (&found, own) {
                            begun.conn.last_insert().resolved(name, actual);
                        }
                        found.map(Some)
                    }
                };
                // The statement: the caller's, or made from the table's own
                // definition (its span starts then).
                let planned = looked_up.and_then(|resolved| {
                    let copy = match (early, &resolved) {
                        (Some(copy), _) => copy,
                        (None, Some(actual)) => {
                            let made = sql(actual)?;
                            // Only a stream hyperd checks may skip the lookup.
                            debug_assert!(unchecked.is_none() || made.stream_checked);
                            trace = begun.conn.trace("insert", &made.copy, 0);
                            made
                        }
                        (None, None) => {
                            return Err(Error::invalid_argument(
                                "insert",
                                "internal: a table looked up without its definition",
                            ))
                        }
                    };
                    Ok((copy, resolved))
                });
                let (started, resolved) = match planned {
                    Ok((copy, resolved)) => {
                        begun.phase = Phase::Copying;
                        // Sent now (with the `BEGIN` when no lookup ran), so
                        // hyperd plans it while the rows are made; its answer
                        // is read after the first frames (`send_frames`,
                        // `end_segment`).
                        let queued = begun.conn.client().copy_in_early(&copy.copy) $($aw)*;
                        (queued.map(|()| copy).map_err(Error::from), resolved)
                    }
                    Err(e) => (Err(e), None),
                };
                let sql = match started {
                    Ok(sql) => sql,
                    Err(e) => {
                        // No COPY runs: the lookup or check failed, or the
                        // connection did.
                        begun.phase = Phase::Between;
                        if own {
                            rollback!(begun.conn.client(); $($aw)*);
                        }
                        begun.phase = Phase::Settled;
                        return trace.result(Err(e), |_| None);
                    }
                };
                // The inserter's own phases take over.
                begun.phase = Phase::Settled;
                begun.own = false;
                let sent_before = begun.conn.client().bytes_sent();
                let copy = CopyTx { own, sql, stored: 0, phase: Phase::Copying, trace, sent_before, tag, unchecked, answer_checked: false };
                Ok((copy, resolved))
            }
        }
    };
}

open_fn!(open, crate::Connection;);
#[cfg(feature = "async")]
open_fn!(open_async, crate::AsyncConnection, async; .await);

/// How every inserter ends its COPY: `copy_methods!(;)` for the sync ones,
/// `copy_methods!(async; .await)` for the async ones. Each needs fields
/// `client`, `copy` (a [`CopyTx`]) and `finished`.
macro_rules! copy_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Ends the COPY, sends `held` rows in a HyperBinary COPY of their
        /// own, and checks that the server stored `sent` rows in all. Only
        /// then commits the inserter's own transaction; on error rolls it
        /// back, so nothing was stored. A future of it dropped before the
        /// COMMIT went out stores nothing either (`Phase`); dropped while
        /// it waits for the COMMIT's reply, the COMMIT is the server's.
        $($async_kw)? fn end_copy(
            &mut self,
            sent: u64,
            held: Option<crate::insert::encoder::HeldRows>,
        ) -> Result<u64> {
            self.finished = true;
            let mut ended = self.end_segment() $($aw)*;
            if let (true, Some(held)) = (ended.is_ok(), held) {
                ended = self.copy_held(held) $($aw)*;
            }
            let stored = self.copy.stored();
            let checked = ended.and_then(|()| {
                if stored == sent {
                    Ok(stored)
                } else {
                    Err(crate::Error::RowCountMismatch { sent, stored })
                }
            });
            let bytes_sent = self.client.bytes_sent();
            let result = match checked {
                Ok(stored) => {
                    self.copy.set_phase(crate::insert::copy_tx::Phase::Settled);
                    let committed = if self.copy.own() {
                        crate::insert::copy_tx::commit!(self.client; $($aw)*).map_err(crate::Error::from)
                    } else {
                        Ok(())
                    };
                    if let (Ok(()), Some(tag)) = (&committed, self.copy.tag()) {
                        self.client.set_mark(tag);
                    }
                    committed.map(|()| stored)
                }
                Err(e) => {
                    if self.copy.own() {
                        crate::insert::copy_tx::rollback!(self.client; $($aw)*);
                    }
                    self.copy.set_phase(crate::insert::copy_tx::Phase::Settled);
                    Err(e)
                }
            };
            self.copy.end_trace(&result, bytes_sent);
            result
        }

        /// Sends the frames in the send buffer, then `raw` ones. The first
        /// time, this reads the server's answer to the COPY statement,
        /// which `CopyTx::open` queued ahead of the frames. So a COPY the
        /// server refuses ends the insert after one frame. Until then
        /// nothing is awaited, and a small insert's COPY is one round
        /// trip.
        $($async_kw)? fn send_frames(&mut self, raw: &[u8]) -> Result<()> {
            let mut sent = if raw.is_empty() {
                self.client.flush() $($aw)*
            } else {
                self.client.send_raw(raw) $($aw)*
            };
            if sent.is_ok() {
                sent = self.client.copy_in_confirm() $($aw)*;
            }
            sent.map_err(|e| self.copy.failed(e))?;
            self.copy.check_answer(self.client.copy_in_columns())
        }

        /// Ends the running COPY with CopyDone and counts what it stored.
        $($async_kw)? fn end_segment(&mut self) -> Result<()> {
            // CopyDone is queued when `copy_in_finish` first runs, before
            // it awaits anything: from here no COPY is left to fail.
            self.copy.set_phase(crate::insert::copy_tx::Phase::Between);
            let rows = self.client.copy_in_finish() $($aw)* ?;
            self.copy.check_answer(self.client.copy_in_columns())?;
            self.copy.add_stored(rows);
            Ok(())
        }

        /// Starts the COPY `sql` (none running); the phase says `Copying`
        /// from before its statement goes out.
        $($async_kw)? fn start_segment(&mut self, sql: &str) -> Result<()> {
            self.copy.set_phase(crate::insert::copy_tx::Phase::Copying);
            let started = self.client.copy_in(sql) $($aw)*;
            if started.is_err() {
                self.copy.set_phase(crate::insert::copy_tx::Phase::Between);
            }
            started.map(drop).map_err(crate::Error::from)
        }

        /// A HyperBinary COPY of `held` (no other COPY running); the rows
        /// it stored are checked at once.
        $($async_kw)? fn copy_held(&mut self, held: crate::insert::encoder::HeldRows) -> Result<()> {
            let sql = self.copy.held_sql()?.to_owned();
            // HyperBinary rows follow the table's layout exactly: a skipped
            // lookup is run now.
            #[cfg(feature = "arrow")]
            if let Some(table) = self.copy.unchecked() {
                let actual = crate::insert::copy_tx::lookup!(&mut *self.client, table.name(); $($aw)*)?;
                table.check_columns_match(&actual)?;
            }
            self.start_segment(&sql) $($aw)* ?;
            if let Err(e) = held.put(self.client.copy_buf()) {
                self.client.queue_copy_fail("the held rows could not be framed");
                self.copy.set_phase(crate::insert::copy_tx::Phase::Between);
                return Err(e);
            }
            let before = self.copy.stored();
            self.end_segment() $($aw)* ?;
            let stored = self.copy.stored() - before;
            if stored != held.rows {
                return Err(crate::Error::RowCountMismatch { sent: held.rows, stored });
            }
            Ok(())
        }

        /// Undoes the insert without waiting (for `Drop`): ends a running
        /// COPY with `CopyFail` and the inserter's own transaction with
        /// `ROLLBACK`, as far as its phase needs; the connection's next
        /// request sends them and settles the replies.
        fn abort_copy_queued(&mut self, reason: &str) {
            use crate::insert::copy_tx::Phase;
            let phase = self.copy.phase();
            if phase == Phase::Copying {
                self.client.queue_copy_fail(reason);
            }
            if phase != Phase::Settled && self.copy.own() {
                if let Err(e) = self.client.enqueue_command("ROLLBACK") {
                    tracing::warn!("could not queue ROLLBACK for an aborted insert: {e}");
                }
            }
            self.copy.set_phase(Phase::Settled);
        }
    };
}

pub(crate) use commit;
pub(crate) use copy_methods;
#[cfg(feature = "arrow")]
pub(crate) use lookup;
pub(crate) use rollback;
