//! Named prepared statements, without I/O: their names, the per-session
//! cache behind the `*_params` calls, the `Close`s that dropped statement
//! handles queue, and which commands make cached descriptions stale.
//!
//! hyperd re-plans a named statement against the current catalog when it
//! runs, but describes it (Describe Statement, Describe Portal) as it was
//! planned before (measured, 0.0.26963): after another session adds a
//! column, the rows of `SELECT *` have one field more than the description
//! the same round trip gave. So a description is trusted only until this
//! session runs a command that may change what names mean (every command
//! tag but those of [`keeps_catalog`]); the drivers check the first row of
//! each run against it (`client/requests.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;

use crate::error::{Error, Result, SqlState};
use crate::protocol::backend::FieldDescription;
use crate::protocol::frontend::{self, Target};

/// What `Describe Statement` reported for a prepared statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementDescription {
    /// Parameter type OIDs as hyperd reports them: the declared ones, 0 for
    /// a parameter declared 0 (hyperd does not report what it inferred).
    pub params: Vec<u32>,
    /// The result columns; empty for a statement that returns no rows.
    pub columns: Vec<FieldDescription>,
}

/// Names of statements to `Close`, queued by handles dropped anywhere (no
/// connection at hand, and `Drop` must not block) and sent with the
/// session's next extended-protocol request, in the same `Sync` group, so a
/// `Close` costs neither a round trip nor a transaction state change of its
/// own.
#[derive(Clone, Debug, Default)]
pub struct CloseQueue(Arc<Mutex<Vec<String>>>);

impl CloseQueue {
    /// Queues `Close Statement name`.
    pub fn push(&self, name: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name);
    }

    /// Takes every queued name.
    pub(crate) fn take(&self) -> Vec<String> {
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if names.is_empty() {
            return Vec::new();
        }
        std::mem::take(&mut *names)
    }

    /// How many names wait.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Process-wide, so a statement names the one session it belongs to.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// A new session id, unique in this process.
pub(crate) fn next_session_id() -> u64 {
    NEXT_SESSION.fetch_add(1, Ordering::Relaxed)
}

/// The first words of the statements, and of the command tags, that leave
/// every name meaning what it meant: rows read or written, transaction
/// control, nothing else.
const KEEPS_CATALOG: [&str; 18] = [
    "SELECT", "INSERT", "UPDATE", "DELETE", "COPY", "BEGIN", "START", "COMMIT", "END", "ROLLBACK",
    "SHOW", "EXPLAIN", "FETCH", "MOVE", "CLOSE", "VALUES", "TABLE", "WITH",
];

/// Whether a command tag leaves every name meaning what it meant
/// (`KEEPS_CATALOG`). Any other tag (`CREATE TABLE`, `DROP TABLE`,
/// `ALTER TABLE`, `SET`, `ATTACH DATABASE`, ...) empties the statement
/// cache, since hyperd would run cached statements against the new catalog
/// with their old descriptions.
pub fn keeps_catalog(tag: &str) -> bool {
    let word = tag.split(' ').next().unwrap_or("");
    KEEPS_CATALOG.contains(&word)
}

/// A statement's first word: its ASCII letters after white space and
/// opening parentheses; empty when it starts with anything else (a
/// comment too).
pub(crate) fn first_word(sql: &str) -> &str {
    let rest = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let end = rest
        .bytes()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Whether the statement `sql`, judged by its text as it is sent, may
/// change what names mean or how the session behaves: its first word is
/// not one of [`KEEPS_CATALOG`], or it calls `set_config`. The tags miss
/// both: hyperd ends a `CREATE TABLE ... AS` with `SELECT n`, and `SELECT
/// set_config('search_path', ...)` changes a setting under a `SELECT` tag.
/// Anything else, comments first included, counts as a change.
pub fn sql_may_change_catalog(sql: &str) -> bool {
    let word = first_word(sql);
    !KEEPS_CATALOG.iter().any(|w| word.eq_ignore_ascii_case(w)) || calls_set_config(sql)
}

/// Whether `sql` names `set_config` (in any case) anywhere: one pass that
/// looks closer only at underscores.
pub fn calls_set_config(sql: &str) -> bool {
    const NAME: &[u8] = b"set_config";
    let b = sql.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'_'
            && i >= 3
            && b.get(i - 3..i + 7)
                .is_some_and(|w| w.eq_ignore_ascii_case(NAME))
    })
}

/// A session's named statements: the cache, the queued `Close`s, and what
/// names the next statement gets.
#[derive(Debug)]
pub struct Statements {
    cache: StatementCache,
    closes: CloseQueue,
    session_id: u64,
    next_name: u64,
    catalog_changed: bool,
    /// What [`Statements::changes`] counts.
    changes: u64,
}

impl Statements {
    pub(crate) fn new(cache_capacity: usize) -> Statements {
        Statements {
            cache: StatementCache::new(cache_capacity),
            closes: CloseQueue::default(),
            session_id: next_session_id(),
            next_name: 0,
            catalog_changed: false,
            changes: 0,
        }
    }

    /// The cache, emptied first (its statements queued for `Close`) when a
    /// command since the last call may have changed what names mean.
    pub fn cache(&mut self) -> &mut StatementCache {
        if std::mem::take(&mut self.catalog_changed) {
            for name in self.cache.clear() {
                self.closes.push(name);
            }
        }
        &mut self.cache
    }

    /// Where dropped statement handles queue their `Close`.
    pub fn close_queue(&self) -> &CloseQueue {
        &self.closes
    }

    /// How many commands so far may have changed what names mean or how
    /// the session behaves (DDL, `SET`, `RESET`, `ATTACH`, a temporary
    /// table, ...): each statement sent that `sql_may_change_catalog` and
    /// each command whose tag is not [`keeps_catalog`], so one may count
    /// twice. Unchanged between two reads, the
    /// session ran only reads, writes and transaction control: a pool need
    /// not look further, and a prepared statement's description still holds
    /// as far as this session can tell.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// This session's id, unique in the process: a statement prepared on
    /// one session is refused by another.
    pub fn session_id(&self) -> u64 {
        self.session_id
    }

    /// A statement name not used before in this session: `prefix` and a
    /// number (`s` for prepared handles, `c` for the cache).
    pub fn next_name(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    /// A statement that [`sql_may_change_catalog`] is being sent.
    pub(crate) fn note_change(&mut self) {
        self.catalog_changed = true;
        self.changes += 1;
    }

    /// A command completed with `tag`.
    #[inline]
    pub(crate) fn note_command(&mut self, tag: &str) {
        if !keeps_catalog(tag) {
            self.note_change();
        }
    }

    /// Appends a `Close Statement` for every queued name.
    pub(crate) fn write_closes(&mut self, buf: &mut BytesMut) -> Result<()> {
        for name in self.closes.take() {
            frontend::close(buf, Target::Statement, &name)?;
        }
        Ok(())
    }
}

/// What to do with a cached statement whose run failed with `e`: `None`
/// keeps it (the error is about this run: a value, a constraint, the
/// transaction, the connection); `Some(retry)` forgets it, and says whether
/// to prepare `sql` again and run it once more in the same call.
pub(crate) fn retry_after(e: &Error, sql: &str) -> Option<bool> {
    let db = e.db_error()?;
    let code = db.code?;
    if code == SqlState::T_R_SERIALIZATION_FAILURE || code == SqlState::INVALID_SQL_STATEMENT_NAME {
        // Refused before anything ran ("the referenced schema object is
        // no longer valid", or the statement is gone).
        return Some(true);
    }
    if code == SqlState::SYNTAX_ERROR && db.message.starts_with("unrecognized prepared statement") {
        return Some(true);
    }
    if code == SqlState::FEATURE_NOT_SUPPORTED
        && db.message == "cached plan must not change result type"
    {
        // The statement ran: run it again only if that changes nothing.
        return Some(reads_only(sql));
    }
    // Syntax or access rule errors (class 42: a table or column gone, a
    // type changed) may come from a changed catalog: prepare afresh next time.
    code.code().starts_with("42").then_some(false)
}

/// Whether `sql` only reads: its `first_word` is SELECT, VALUES, TABLE or
/// SHOW. Anything else, comments first included, counts as a write.
pub fn reads_only(sql: &str) -> bool {
    let word = first_word(sql);
    ["SELECT", "VALUES", "TABLE", "SHOW"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
}

/// One statement in the cache.
#[derive(Debug)]
pub struct CachedStatement {
    pub name: String,
    pub param_types: Box<[u32]>,
    pub columns: Vec<FieldDescription>,
    last_used: u64,
}

/// The statements behind the `*_params` calls: a bounded LRU keyed by SQL
/// text and parameter types (hyperd needs every parameter's type declared
/// in `Parse`, so one text bound with other Rust types is another
/// statement). Capacity 0 turns it off.
///
/// A hit costs a hash of the SQL text and no allocation; eviction scans the
/// entries for the least recently used one, which happens only on a miss,
/// itself a `Parse` on the server.
#[derive(Debug)]
pub struct StatementCache {
    capacity: usize,
    by_sql: HashMap<Box<str>, Vec<CachedStatement>>,
    len: usize,
    tick: u64,
}

impl StatementCache {
    pub fn new(capacity: usize) -> StatementCache {
        StatementCache {
            capacity,
            by_sql: HashMap::new(),
            len: 0,
            tick: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The statement for `sql` with these parameter types, marked as just
    /// used.
    pub fn get(&mut self, sql: &str, param_types: &[u32]) -> Option<&CachedStatement> {
        let entry = self
            .by_sql
            .get_mut(sql)?
            .iter_mut()
            .find(|e| *e.param_types == *param_types)?;
        self.tick += 1;
        entry.last_used = self.tick;
        Some(entry)
    }

    /// Adds a statement; returns the names of those it pushed out (to be
    /// closed). With capacity 0 the statement itself is returned.
    pub fn insert(
        &mut self,
        sql: &str,
        param_types: &[u32],
        name: String,
        columns: Vec<FieldDescription>,
    ) -> Vec<String> {
        if self.capacity == 0 {
            return vec![name];
        }
        let mut evicted = Vec::new();
        if let Some(old) = self.remove_entry(sql, param_types) {
            evicted.push(old);
        }
        while self.len >= self.capacity {
            match self.evict_oldest() {
                Some(name) => evicted.push(name),
                None => break,
            }
        }
        self.tick += 1;
        self.by_sql
            .entry(sql.into())
            .or_default()
            .push(CachedStatement {
                name,
                param_types: param_types.into(),
                columns,
                last_used: self.tick,
            });
        self.len += 1;
        evicted
    }

    /// Forgets the statement called `name`; returns whether it was cached.
    pub fn remove(&mut self, name: &str) -> bool {
        let mut found = false;
        self.by_sql.retain(|_, entries| {
            let before = entries.len();
            entries.retain(|e| e.name != name);
            found |= entries.len() != before;
            !entries.is_empty()
        });
        if found {
            self.len -= 1;
        }
        found
    }

    /// Forgets everything; returns the names (to be closed).
    pub fn clear(&mut self) -> Vec<String> {
        self.len = 0;
        self.by_sql
            .drain()
            .flat_map(|(_, entries)| entries.into_iter().map(|e| e.name))
            .collect()
    }

    fn remove_entry(&mut self, sql: &str, param_types: &[u32]) -> Option<String> {
        let entries = self.by_sql.get_mut(sql)?;
        let at = entries
            .iter()
            .position(|e| *e.param_types == *param_types)?;
        let old = entries.swap_remove(at);
        if entries.is_empty() {
            self.by_sql.remove(sql);
        }
        self.len -= 1;
        Some(old.name)
    }

    fn evict_oldest(&mut self) -> Option<String> {
        let (sql, at) = self
            .by_sql
            .iter()
            .flat_map(|(sql, entries)| {
                entries
                    .iter()
                    .enumerate()
                    .map(move |(at, e)| (e.last_used, sql, at))
            })
            .min_by_key(|(used, _, _)| *used)
            .map(|(_, sql, at)| (sql.clone(), at))?;
        let entries = self.by_sql.get_mut(&sql)?;
        let old = entries.swap_remove(at);
        if entries.is_empty() {
            self.by_sql.remove(&sql);
        }
        self.len -= 1;
        Some(old.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str) -> Vec<FieldDescription> {
        vec![FieldDescription {
            name: name.into(),
            table_oid: 0,
            column_id: 0,
            type_oid: 23,
            type_size: 4,
            type_modifier: -1,
            format: 0,
        }]
    }

    #[test]
    fn hits_by_text_and_parameter_types() {
        let mut c = StatementCache::new(4);
        assert!(c
            .insert("SELECT $1", &[23], "c1".into(), col("a"))
            .is_empty());
        assert!(c
            .insert("SELECT $1", &[20], "c2".into(), col("b"))
            .is_empty());
        assert_eq!(
            c.get("SELECT $1", &[23]).map(|e| e.name.as_str()),
            Some("c1")
        );
        assert_eq!(
            c.get("SELECT $1", &[20]).map(|e| e.name.as_str()),
            Some("c2")
        );
        assert!(c.get("SELECT $1", &[25]).is_none());
        assert!(c.get("SELECT $2", &[23]).is_none());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut c = StatementCache::new(2);
        c.insert("a", &[], "c1".into(), col("a"));
        c.insert("b", &[], "c2".into(), col("b"));
        assert!(c.get("a", &[]).is_some());
        assert_eq!(c.insert("c", &[], "c3".into(), col("c")), vec!["c2"]);
        assert!(c.get("b", &[]).is_none());
        assert!(c.get("a", &[]).is_some());
        assert!(c.get("c", &[]).is_some());
        assert_eq!(c.len(), 2);
        // Re-inserting a key replaces (and closes) the old statement.
        assert_eq!(c.insert("a", &[], "c4".into(), col("a")), vec!["c1"]);
        assert_eq!(c.get("a", &[]).map(|e| e.name.as_str()), Some("c4"));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn capacity_zero_caches_nothing() {
        let mut c = StatementCache::new(0);
        assert_eq!(c.insert("a", &[], "c1".into(), col("a")), vec!["c1"]);
        assert!(c.get("a", &[]).is_none());
        assert!(c.is_empty());
    }

    #[test]
    fn remove_and_clear_hand_back_names() {
        let mut c = StatementCache::new(8);
        c.insert("a", &[], "c1".into(), col("a"));
        c.insert("a", &[1], "c2".into(), col("a"));
        c.insert("b", &[], "c3".into(), col("b"));
        assert!(c.remove("c2"));
        assert!(!c.remove("c2"));
        assert_eq!(c.len(), 2);
        let mut names = c.clear();
        names.sort();
        assert_eq!(names, vec!["c1", "c3"]);
        assert!(c.is_empty() && c.get("a", &[]).is_none());
    }

    #[test]
    fn catalog_changing_tags() {
        for keeps in [
            "SELECT 1",
            "INSERT 0 5",
            "UPDATE 2",
            "DELETE 0",
            "COPY 7",
            "BEGIN",
            "COMMIT",
            "ROLLBACK",
        ] {
            assert!(keeps_catalog(keeps), "{keeps}");
        }
        for changes in [
            "CREATE TABLE",
            "DROP TABLE",
            "ALTER TABLE",
            "SET",
            "ATTACH DATABASE",
            "DETACH DATABASE",
            "CREATE SCHEMA",
            "TRUNCATE TABLE",
            "",
        ] {
            assert!(!keeps_catalog(changes), "{changes}");
        }
    }

    #[test]
    fn statement_text_that_may_change_names_or_the_session() {
        for sql in [
            "CREATE TABLE t AS SELECT 1",
            "create temp table v (x) as values (1)",
            "SELECT set_config('search_path', 'x', false)",
            "copy (select SET_CONFIG('a', 'b', false)) to stdout",
            "ATTACH DATABASE \"f.hyper\" AS f",
            "-- a comment first\nSELECT 1",
            "RESET ALL",
            "",
        ] {
            assert!(sql_may_change_catalog(sql), "{sql}");
        }
        for sql in [
            "SELECT a_b FROM t",
            " (select 1)",
            "INSERT INTO t VALUES ('set config')",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "COPY (SELECT * FROM t) TO STDOUT",
            "commit",
        ] {
            assert!(!sql_may_change_catalog(sql), "{sql}");
        }
        assert!(!calls_set_config("_set_confi"));
        assert!(calls_set_config("set_config"));
    }

    #[test]
    fn changes_count_the_commands_that_may_change_names_or_the_session() {
        let mut s = Statements::new(4);
        for tag in ["SELECT 1", "INSERT 0 5", "COMMIT"] {
            s.note_command(tag);
        }
        assert_eq!(s.changes(), 0);
        for tag in ["SET", "RESET", "CREATE TABLE"] {
            s.note_command(tag);
        }
        assert_eq!(s.changes(), 3);
    }

    #[test]
    fn read_only_statements() {
        for sql in [
            "SELECT 1",
            "  select v FROM t",
            "(SELECT 1) UNION (SELECT 2)",
            "VALUES (1)",
            "TABLE t",
            "show x",
        ] {
            assert!(reads_only(sql), "{sql}");
        }
        for sql in [
            "INSERT INTO t SELECT 1",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "-- c\nSELECT 1",
            "",
            "SELECTED",
        ] {
            assert!(!reads_only(sql), "{sql}");
        }
    }

    #[test]
    fn which_errors_forget_or_retry_a_cached_statement() {
        let err = |code: &str, msg: &str| {
            Error::server(crate::error::DbError::new(SqlState::from_code(code), msg))
        };
        let gone = err("40001", "The referenced schema object is no longer valid");
        assert_eq!(retry_after(&gone, "INSERT INTO t VALUES ($1)"), Some(true));
        let lost = err("42601", "unrecognized prepared statement 'c1'");
        assert_eq!(retry_after(&lost, "SELECT 1"), Some(true));
        let stale = Error::stale_statement("c1", Some(2), 3);
        assert_eq!(retry_after(&stale, "SELECT * FROM t"), Some(true));
        assert_eq!(
            retry_after(&stale, "INSERT INTO t SELECT 1 RETURNING *"),
            Some(false)
        );
        let dropped = err("42P01", "table \"t\" does not exist");
        assert_eq!(retry_after(&dropped, "SELECT 1"), Some(false));
        for kept in [
            err("22012", "division by zero"),
            err("25P02", "aborted"),
            err("57014", "canceled"),
        ] {
            assert_eq!(retry_after(&kept, "SELECT 1"), None);
        }
        assert_eq!(retry_after(&Error::closed("gone"), "SELECT 1"), None);
    }

    #[test]
    fn close_queue_is_shared_by_clones() {
        let q = CloseQueue::default();
        let handle = q.clone();
        handle.push("s1".into());
        handle.push("s2".into());
        assert_eq!(q.len(), 2);
        assert_eq!(q.take(), vec!["s1", "s2"]);
        assert!(q.is_empty() && q.take().is_empty());
    }
}
