//! Per-statement tracing: one `tracing` span per statement, and one WARN
//! event for a statement slower than the connection's threshold.
//!
//! Why here, in the API layer: a statement starts in a connection call and
//! ends where its result ends, which only this layer sees: the call's
//! return for a command, the end, error or drop of a streamed result, the
//! commit of an insert. Each result stream holds its statement's
//! [`StatementTrace`] and adds rows and bytes once per block, batch or
//! chunk it takes from the wire, never per row.
//!
//! Cost: with no subscriber that wants the span and no slow-statement
//! warning that could fire, [`StatementTrace::start`] is the span macro's
//! level and interest checks (an atomic load or two) and returns an empty
//! trace, a null pointer; every later step is one branch on it. Nothing is
//! formatted, allocated or timed. The fields are the span's own, so a
//! subscriber formats the SQL only if it records it.
//!
//! What is never recorded: parameter values (only their count), and, for a
//! statement with bound parameters, an error's message, which may quote a
//! value (`invalid input syntax for type integer: "..."`); its SQLSTATE is.
//! Connect spans carry the endpoint, user and database, never the password.

use std::fmt;
use std::time::{Duration, Instant};

use tracing::field::Empty;
use tracing::{Level, Span};

use crate::error::Error;

/// The SQL recorded in a span or a slow-statement event is cut after this
/// many bytes (at a character boundary), followed by `…` and the whole
/// text's length.
pub(crate) const SQL_LIMIT: usize = 1024;

/// `sql` as recorded: itself up to [`SQL_LIMIT`] bytes, else its first
/// bytes up to a character boundary, then `… (N bytes)`.
#[derive(Clone, Copy)]
pub(crate) struct Sql<'a>(pub(crate) &'a str);

impl<'a> Sql<'a> {
    /// The part of the text that is recorded, and whether it was cut.
    pub(crate) fn kept(&self) -> (&'a str, bool) {
        let sql = self.0;
        if sql.len() <= SQL_LIMIT {
            return (sql, false);
        }
        let mut end = SQL_LIMIT;
        while !sql.is_char_boundary(end) {
            end -= 1;
        }
        (&sql[..end], true)
    }
}

impl fmt::Display for Sql<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kept() {
            (sql, false) => f.write_str(sql),
            (sql, true) => write!(f, "{sql}… ({} bytes)", self.0.len()),
        }
    }
}

impl fmt::Debug for Sql<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// One statement's span while it runs; see the [module docs](self). Empty
/// (and free) when nobody listens.
#[derive(Debug, Default)]
pub(crate) struct StatementTrace(Option<Box<Active>>);

#[derive(Debug)]
struct Active {
    span: Span,
    started: Instant,
    rows: u64,
    bytes: u64,
    /// The threshold and the recorded SQL, when a slow-statement warning
    /// could be emitted.
    slow: Option<(Duration, Box<str>)>,
    /// Bound parameters: an error's message is not recorded.
    has_params: bool,
}

/// How a statement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Ok,
    Error,
    /// Its result was dropped before its end.
    Abandoned,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Abandoned => "abandoned",
        }
    }
}

impl StatementTrace {
    /// A trace that records nothing (a result whose statement is traced
    /// elsewhere, e.g. rows read from a batch stream that holds the trace).
    pub(crate) fn off() -> StatementTrace {
        StatementTrace(None)
    }

    /// Starts the span of statement `sql` run by API call `call`, with
    /// `params` bound parameters; `slow` is the connection's
    /// slow-statement threshold.
    #[inline]
    pub(crate) fn start(
        call: &'static str,
        sql: &str,
        params: usize,
        slow: Option<Duration>,
    ) -> StatementTrace {
        let span = tracing::debug_span!(
            "hyperdb.statement",
            db.system = "hyper",
            db.statement = %Sql(sql),
            hyperdb.call = call,
            hyperdb.params = params,
            rows = Empty,
            bytes = Empty,
            duration_ms = Empty,
            outcome = Empty,
            sqlstate = Empty,
            error = Empty,
            otel.status_code = Empty,
        );
        let warn = slow.is_some() && tracing::enabled!(Level::WARN);
        if span.is_disabled() && !warn {
            return StatementTrace(None);
        }
        StatementTrace::active(span, sql, params, slow.filter(|_| warn))
    }

    #[inline(never)]
    fn active(span: Span, sql: &str, params: usize, slow: Option<Duration>) -> StatementTrace {
        StatementTrace(Some(Box::new(Active {
            span,
            started: Instant::now(),
            rows: 0,
            bytes: 0,
            slow: slow.map(|limit| (limit, Sql(sql).to_string().into_boxed_str())),
            has_params: params > 0,
        })))
    }

    /// Whether anything is recorded.
    #[cfg(test)]
    fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Counts a block of `rows` rows and `bytes` bytes received or sent.
    #[inline]
    pub(crate) fn add(&mut self, rows: u64, bytes: u64) {
        if let Some(active) = &mut self.0 {
            active.rows += rows;
            active.bytes += bytes;
        }
    }

    /// The statement ended well; `rows` is the server's row count when it
    /// reported one (it replaces the rows counted).
    #[inline]
    pub(crate) fn finish(&mut self, rows: Option<u64>) {
        if let Some(active) = self.0.take() {
            active.end(Outcome::Ok, rows, None);
        }
    }

    /// The statement failed with `e`.
    #[inline]
    pub(crate) fn fail(&mut self, e: &Error) {
        if let Some(active) = self.0.take() {
            active.end(Outcome::Error, None, Some(e));
        }
    }

    /// Records how `result` ended the statement (`rows` of a success:
    /// the server's row count, if any) and passes it on.
    #[inline]
    pub(crate) fn result<T>(
        mut self,
        result: Result<T, Error>,
        rows: impl FnOnce(&T) -> Option<u64>,
    ) -> Result<T, Error> {
        match &result {
            Ok(value) => self.finish(rows(value)),
            Err(e) => self.fail(e),
        }
        result
    }

    /// Records `result`'s error, if it is one, leaving a success's trace
    /// running (a stream started, its statement not yet over).
    #[inline]
    pub(crate) fn check<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &result {
            self.fail(e);
        }
        result
    }
}

impl Drop for StatementTrace {
    fn drop(&mut self) {
        if let Some(active) = self.0.take() {
            active.end(Outcome::Abandoned, None, None);
        }
    }
}

impl Active {
    #[inline(never)]
    fn end(self, outcome: Outcome, rows: Option<u64>, error: Option<&Error>) {
        let elapsed = self.started.elapsed();
        let duration_ms = millis(elapsed);
        let rows = rows.unwrap_or(self.rows);
        let span = &self.span;
        span.record("rows", rows);
        span.record("bytes", self.bytes);
        span.record("duration_ms", duration_ms);
        span.record("outcome", outcome.as_str());
        let sqlstate = error.map(Error::sqlstate);
        if let Some(e) = error {
            span.record("sqlstate", e.sqlstate());
            span.record("otel.status_code", "ERROR");
            if self.has_params {
                span.record("error", WITHHELD);
            } else {
                span.record("error", tracing::field::display(e));
            }
        }
        if let Some((limit, sql)) = &self.slow {
            if elapsed > *limit {
                tracing::warn!(
                    parent: span,
                    db.statement = %sql,
                    duration_ms,
                    threshold_ms = millis(*limit),
                    rows,
                    outcome = outcome.as_str(),
                    sqlstate,
                    "slow statement"
                );
            }
        }
    }
}

/// `d` in milliseconds, from whole nanoseconds (1 ns reads 0.000001).
fn millis(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// The `error` field of a failed statement with bound parameters.
const WITHHELD: &str =
    "(message not recorded: the statement has bound parameters, which it may quote; see sqlstate)";

/// The span of one connect (`hyperdb.connect`): endpoint, user and
/// database, then its duration and outcome. No password, ever.
#[derive(Debug)]
pub(crate) struct ConnectTrace {
    span: Span,
    started: Option<Instant>,
}

impl ConnectTrace {
    pub(crate) fn start(options: &crate::ConnectOptions) -> ConnectTrace {
        let config = options.config();
        let span = tracing::debug_span!(
            "hyperdb.connect",
            db.system = "hyper",
            server.address = %config.endpoint(),
            db.user = config.user(),
            db.name = options.database(),
            duration_ms = Empty,
            outcome = Empty,
            sqlstate = Empty,
            error = Empty,
        );
        let started = (!span.is_disabled()).then(Instant::now);
        ConnectTrace { span, started }
    }

    /// The span, to run the connect in (events during it are its own).
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Records how the connect ended and passes `result` on.
    pub(crate) fn result<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        if let Some(started) = self.started {
            let span = &self.span;
            span.record("duration_ms", millis(started.elapsed()));
            match &result {
                Ok(_) => span.record("outcome", Outcome::Ok.as_str()),
                Err(e) => {
                    span.record("outcome", Outcome::Error.as_str());
                    span.record("sqlstate", e.sqlstate());
                    span.record("error", tracing::field::display(e))
                }
            };
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_sql_is_kept_whole() {
        let sql = "SELECT 1";
        assert_eq!(Sql(sql).kept(), (sql, false));
        assert_eq!(Sql(sql).to_string(), sql);
        let exact = "x".repeat(SQL_LIMIT);
        assert_eq!(Sql(&exact).to_string(), exact);
    }

    #[test]
    fn long_sql_is_cut_at_the_limit_with_its_length() {
        let sql = "y".repeat(SQL_LIMIT + 1);
        let (kept, cut) = Sql(&sql).kept();
        assert!(cut);
        assert_eq!(kept.len(), SQL_LIMIT);
        assert_eq!(
            Sql(&sql).to_string(),
            format!("{}… ({} bytes)", "y".repeat(SQL_LIMIT), SQL_LIMIT + 1)
        );
    }

    /// A multi-byte character across the limit is left out whole.
    #[test]
    fn long_sql_is_cut_at_a_char_boundary() {
        // 1023 ASCII bytes, then 'é' (2 bytes) straddling byte 1024.
        let sql = format!("{}é tail", "a".repeat(SQL_LIMIT - 1));
        let (kept, cut) = Sql(&sql).kept();
        assert!(cut);
        assert_eq!(kept, "a".repeat(SQL_LIMIT - 1));
        // A 4-byte character straddling it, at each offset.
        for pad in SQL_LIMIT - 3..SQL_LIMIT {
            let sql = format!("{}🦀{}", "b".repeat(pad), "c".repeat(10));
            let (kept, cut) = Sql(&sql).kept();
            assert!(cut, "{pad}");
            assert_eq!(kept, "b".repeat(pad), "{pad}");
        }
    }

    /// With no subscriber at all the trace is empty: nothing timed or kept.
    #[test]
    fn no_subscriber_no_trace() {
        let t = StatementTrace::start("execute_query", "SELECT 1", 0, Some(Duration::ZERO));
        assert!(!t.is_on());
    }
}
