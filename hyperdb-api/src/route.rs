//! Which way a plain query's rows travel: hyperd's Arrow stream (`COPY
//! (...) TO STDOUT WITH (FORMAT ARROWSTREAM)`) or `DataRow`s, chosen per
//! statement from what its earlier runs on the connection showed.
//!
//! Why: neither route wins everywhere (measured with the `mix_probe`
//! example; DEVELOPMENT.md, "Choosing the read route"). hyperd produces
//! Arrow 3-5x cheaper per value, so results of many values go faster as
//! Arrow. But wrapping a statement in COPY costs hyperd ~10-15 % more
//! execution time on aggregations and joins, and 0.3-1.5 ms of planning
//! per run that a simple `Query` takes from hyperd's plan cache: results of
//! few values go faster as `DataRow`s. The statement's text does not tell
//! which case it is; its result does.
//!
//! So a statement's first run is Arrow (its worst case, a small result,
//! loses ~1.5 ms or ~15 %, where `DataRow`s' worst case, a large result,
//! loses 3-5x). That run tells how long hyperd took to the first data and
//! how many values came back; later runs (of the same text, or of the
//! same lookup with another value: [`key`]) take `DataRow`s of a simple
//! `Query` when the values' extra cost as rows is below what the COPY
//! costs, and Arrow otherwise. Every complete result updates the
//! count, and a statement routed to `DataRow`s by its timing goes through
//! Arrow again after [`REPROBE_EVERY`] runs to refresh it, then after twice
//! as many each time the refresh confirms the route (up to
//! [`MAX_REPROBE_EVERY`]): a statement that runs often pays for the refresh
//! less and less.
//!
//! Values, types and errors are the same on both routes (`Rows` reads
//! either; batch readers take the Arrow run's schema, nullability
//! included), so a change of route is invisible but for its speed.

use std::collections::HashMap;
use std::hash::Hasher;

use arrow_schema::SchemaRef;

use crate::sql_lex::{skip_quoted, skip_unlexed};

/// hyperd's extra cost per value sent as a `DataRow` rather than as Arrow,
/// with the client's reading of it (10M-row scans: 12-16 ns on the server,
/// a few more in the client; 20 leans towards Arrow when unsure).
const VALUE_SECS: f64 = 20e-9;
/// What a COPY costs more than a simple `Query` whatever the result: the
/// `DataRow` route runs a plain statement as a simple `Query`, which hyperd
/// plans from its plan cache (keyed by the statement's shape, literals
/// aside), where each COPY is planned afresh. Measured on `SELECT 1`: 0.3
/// ms more for the same text each run, 1-1.5 ms with a new literal each
/// run; 250 us leans towards Arrow.
const COPY_FIXED_SECS: f64 = 250e-6;
/// The share of a run's time to the first data that the COPY adds
/// (hyperd's CPU: aggregations and joins with few groups 12-15 % more,
/// 10k groups ~3 %, a top-N none).
const COPY_SHARE: f64 = 0.10;
/// A statement routed to `DataRow`s by its timing goes through Arrow again
/// after this many runs, so a slow first run does not keep it there.
pub(crate) const REPROBE_EVERY: u32 = 16;
/// The longest interval between refreshes: each refresh that confirms the
/// `DataRow` route doubles the interval up to this. A refresh is the
/// Arrow route's cost (10-50 % more on the queries that go as rows), so
/// at 16 it added 1-3 % to a repeated statement's mean, and moved its
/// median; at 256 it adds under 0.2 %. The row count, which decides most
/// route changes, is still updated by every complete run.
pub(crate) const MAX_REPROBE_EVERY: u32 = 256;
/// Statements remembered per connection; the least recently used goes.
const CAPACITY: usize = 512;

/// The route a result took. Not an API: exposed for the tests that check
/// the choice.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadRoute {
    /// hyperd's Arrow stream.
    Arrow,
    /// `DataRow` messages.
    DataRows,
}

/// What a statement's runs showed.
#[derive(Debug)]
struct Seen {
    /// Seconds from sending the COPY to its schema, last time it ran as
    /// Arrow: for a result that comes whole at the end (an aggregation),
    /// hyperd's execution; for one that streams, the first batch's.
    arrow_secs: f64,
    /// The Arrow stream's schema: batch readers of the `DataRow` route
    /// take its nullability, which `DataRow`s do not carry.
    schema: Option<SchemaRef>,
    /// Columns and rows of the last complete result, either route.
    columns: u64,
    rows: Option<u64>,
    /// hyperd refused the result as Arrow (a value it cannot express).
    no_arrow: bool,
    /// Runs routed to `DataRow`s by timing since the last Arrow run.
    rows_runs: u32,
    /// Runs between refreshes now: [`REPROBE_EVERY`], doubled by each
    /// refresh, back to [`REPROBE_EVERY`] when a run goes as Arrow by
    /// what it showed.
    reprobe_every: u32,
    last_used: u64,
}

/// A connection's memory of its statements' results, keyed by a hash of
/// the SQL text (a collision can only pick the slower route).
#[derive(Debug, Default)]
pub(crate) struct RouteBook {
    seen: HashMap<u64, Seen>,
    tick: u64,
}

/// The key of `sql`: a hash of its text with the literal of each equality
/// (`= 42`, `= 'x'`) left out, so that runs of one lookup with different
/// values share what they showed. Why: hyperd plans simple `Query`s by that
/// shape too, so a lookup whose value changes each run is cheap as rows
/// from its second run on, where by its text each run would be a first run
/// (an Arrow COPY, planned afresh: 1-1.5 ms more). Other literals (ranges,
/// `LIMIT`, function arguments) stay in the key: they tend to change the
/// result's size, which decides the route.
pub(crate) fn key(sql: &str) -> u64 {
    let mut shape = std::hash::DefaultHasher::new();
    let b = sql.as_bytes();
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        if let Some(end) = skip_unlexed(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            b'=' if !matches!(
                i.checked_sub(1).map(|p| b[p]),
                Some(b'<' | b'>' | b'!' | b':')
            ) =>
            {
                i += 1;
                if let Some(end) = literal_end(b, i) {
                    shape.write(&b[from..i]);
                    shape.write_u8(0);
                    (i, from) = (end, end);
                }
            }
            _ => i += 1,
        }
    }
    shape.write(&b[from..]);
    shape.finish()
}

/// Where the literal that follows `=` at `b[at..]` ends (spaces first, a
/// minus sign, then a number or a string), if one does; a name or an
/// expression is no literal.
fn literal_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    match b.get(i)? {
        b'\'' => Some(skip_quoted(b, i + 1, b'\'', false)),
        b'-' | b'0'..=b'9' | b'.' => {
            let start = i + usize::from(b[i] == b'-');
            let mut end = start;
            while b.get(end).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                end += 1;
            }
            if matches!(b.get(end), Some(b'e' | b'E')) {
                end += 1;
                end += usize::from(matches!(b.get(end), Some(b'+' | b'-')));
                while b.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
            }
            let ends_word = !b
                .get(end)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
            (end > start && b[start..end].iter().any(u8::is_ascii_digit) && ends_word)
                .then_some(end)
        }
        _ => None,
    }
}

impl RouteBook {
    /// The route for the statement `key` now.
    pub(crate) fn choose(&mut self, key: u64) -> ReadRoute {
        self.tick += 1;
        let Some(seen) = self.seen.get_mut(&key) else {
            return ReadRoute::Arrow;
        };
        seen.last_used = self.tick;
        if seen.no_arrow {
            return ReadRoute::DataRows;
        }
        let Some(rows) = seen.rows else {
            return ReadRoute::Arrow;
        };
        if !prefers_rows(rows.saturating_mul(seen.columns), seen.arrow_secs) {
            seen.reprobe_every = REPROBE_EVERY;
            return ReadRoute::Arrow;
        }
        seen.rows_runs += 1;
        if seen.rows_runs >= seen.reprobe_every {
            seen.reprobe_every = seen.reprobe_every.saturating_mul(2).min(MAX_REPROBE_EVERY);
            return ReadRoute::Arrow;
        }
        ReadRoute::DataRows
    }

    /// The schema the statement's last Arrow run had (the shared streams
    /// give a DataRow run that schema's nullability).
    ///
    /// A run of another text of the same shape gives it too: hyperd's
    /// nullability does not follow a literal's value (`CASE WHEN 1 = 2
    /// THEN NULL ELSE 5 END` and `COALESCE(a, 1)` are nullable alike), and
    /// `RowBatcher::adopt` takes it only with the same names and types. A
    /// NULL under a lent NOT NULL would fail the run and forget the entry.
    #[cfg(any(feature = "async", test))]
    pub(crate) fn arrow_schema(&self, key: u64) -> Option<SchemaRef> {
        self.seen.get(&key).and_then(|s| s.schema.clone())
    }

    /// The statement started as Arrow: `secs` to its schema.
    pub(crate) fn arrow_started(&mut self, key: u64, secs: f64, schema: &SchemaRef) {
        let seen = self.entry(key);
        seen.arrow_secs = secs;
        seen.schema = Some(schema.clone());
        seen.columns = schema.fields().len() as u64;
        seen.rows_runs = 0;
    }

    /// hyperd cannot send the statement's result as Arrow.
    pub(crate) fn arrow_refused(&mut self, key: u64) {
        self.entry(key).no_arrow = true;
    }

    /// A result of the statement was read to its end.
    pub(crate) fn finished(&mut self, key: u64, columns: usize, rows: u64) {
        if let Some(seen) = self.seen.get_mut(&key) {
            seen.columns = columns as u64;
            seen.rows = Some(rows);
        }
    }

    /// Forgets the statement: its next run starts afresh as Arrow. After a
    /// failed run, since what the entry says (a schema, a size) may be why.
    pub(crate) fn forget(&mut self, key: u64) {
        self.seen.remove(&key);
    }

    /// The statement's entry, made if new (pushing out the least recently
    /// used one when full), marked as just used.
    fn entry(&mut self, key: u64) -> &mut Seen {
        if !self.seen.contains_key(&key) && self.seen.len() >= CAPACITY {
            let oldest = self.seen.iter().min_by_key(|(_, s)| s.last_used);
            if let Some((&old, _)) = oldest {
                self.seen.remove(&old);
            }
        }
        self.tick += 1;
        let tick = self.tick;
        let seen = self.seen.entry(key).or_insert_with(|| Seen {
            arrow_secs: 0.0,
            schema: None,
            columns: 0,
            rows: None,
            no_arrow: false,
            rows_runs: 0,
            reprobe_every: REPROBE_EVERY,
            last_used: tick,
        });
        seen.last_used = tick;
        seen
    }
}

/// Whether `values` are cheaper as `DataRow`s of a simple `Query` than
/// through a COPY whose run took `arrow_secs` to its first data.
fn prefers_rows(values: u64, arrow_secs: f64) -> bool {
    values as f64 * VALUE_SECS < COPY_SHARE * arrow_secs + COPY_FIXED_SECS
}

/// Reports how a result ended to its statement's entry; held by the row
/// streams of the routed calls. Dropped without a report (a result not
/// read to its end), it reports nothing.
#[derive(Debug)]
pub(crate) struct Learn<'c> {
    book: &'c mut RouteBook,
    key: u64,
}

impl<'c> Learn<'c> {
    pub(crate) fn new(book: &'c mut RouteBook, key: u64) -> Learn<'c> {
        Learn { book, key }
    }

    /// The result ended after `rows` rows of `columns` columns.
    pub(crate) fn finished(self, columns: usize, rows: u64) {
        self.book.finished(self.key, columns, rows);
    }

    /// The result ended in an error.
    pub(crate) fn failed(self) {
        self.book.forget(self.key);
    }
}

/// After a row stream's refill: reports the result's end (or failure) to
/// `learn`, once. The one hook of every routed row stream, sync and async.
pub(crate) fn report_end(
    learn: &mut Option<Learn<'_>>,
    cursor: &crate::rows::RowCursor,
    step: &crate::error::Result<bool>,
) {
    if learn.is_none() {
        return;
    }
    match (step, cursor.ended()) {
        (Err(_), _) => {
            if let Some(l) = learn.take() {
                l.failed();
            }
        }
        (Ok(_), Some(rows)) => {
            if let Some(l) = learn.take() {
                l.finished(cursor.schema().len(), rows);
            }
        }
        (Ok(_), None) => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Records a complete run of `key` as Arrow: `arrow_secs` to its
    /// schema, `rows` rows of `columns` columns.
    fn ran(book: &mut RouteBook, key: u64, arrow_secs: f64, columns: usize, rows: u64) {
        book.arrow_started(key, arrow_secs, &schema(columns));
        book.finished(key, columns, rows);
    }

    fn schema(columns: usize) -> SchemaRef {
        let fields: Vec<Field> = (0..columns)
            .map(|i| Field::new(format!("c{i}"), DataType::Int32, false))
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The first run of a statement, and any run whose result was never
    /// read to its end, is Arrow.
    #[test]
    fn unknown_results_go_as_arrow() {
        let mut book = RouteBook::default();
        assert_eq!(book.choose(1), ReadRoute::Arrow);
        book.arrow_started(1, 0.050, &schema(3));
        assert_eq!(book.choose(1), ReadRoute::Arrow, "no complete result yet");
    }

    #[test]
    fn small_results_of_costly_queries_go_as_rows() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.040, 3, 10);
        for _ in 1..REPROBE_EVERY {
            assert_eq!(book.choose(1), ReadRoute::DataRows);
        }
        // After REPROBE_EVERY runs, Arrow again to refresh the timing.
        assert_eq!(book.choose(1), ReadRoute::Arrow);
        book.arrow_started(1, 0.040, &schema(3));
        assert_eq!(book.choose(1), ReadRoute::DataRows);
    }

    /// Rows of the results in the refresh tests: 300k values, ~6 ms more
    /// as rows, so the route follows the run's time (100 ms: rows; 10 ms:
    /// Arrow).
    const ROWS: u64 = 100_000;

    /// The run number of each Arrow run among the next `runs` of statement
    /// 1, each Arrow run taking `arrow_secs` to its schema.
    fn arrow_runs(book: &mut RouteBook, runs: u32, arrow_secs: f64) -> Vec<u32> {
        let mut at = Vec::new();
        for run in 1..=runs {
            if book.choose(1) == ReadRoute::Arrow {
                at.push(run);
                book.arrow_started(1, arrow_secs, &schema(3));
            }
            book.finished(1, 3, ROWS);
        }
        at
    }

    /// Each refresh that confirms the rows route doubles the wait for the
    /// next one, up to MAX_REPROBE_EVERY.
    #[test]
    fn confirmed_refreshes_come_less_and_less_often() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.100, 3, ROWS);
        let at = arrow_runs(&mut book, 1200, 0.100);
        let gaps: Vec<u32> = at.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(at[0], REPROBE_EVERY);
        assert_eq!(&gaps[..4], &[32, 64, 128, 256], "refreshes at {at:?}");
        assert!(gaps[4..].iter().all(|&g| g == MAX_REPROBE_EVERY), "{at:?}");
    }

    /// A refresh that finds the query cheap now sends it back to Arrow, and
    /// once the rows route is chosen again, refreshes start over at
    /// REPROBE_EVERY.
    #[test]
    fn a_refresh_that_changes_the_route_starts_the_waits_over() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.100, 3, ROWS);
        assert_eq!(arrow_runs(&mut book, 48, 0.100), [16, 48]);
        // The query got cheap: the next refresh, 64 runs on, finds it so,
        // and it stays on Arrow.
        assert_eq!(
            arrow_runs(&mut book, 70, 0.010),
            [64, 65, 66, 67, 68, 69, 70]
        );
        // Costly again: one Arrow run shows it, and the next refresh comes
        // REPROBE_EVERY runs later, not 128.
        assert_eq!(arrow_runs(&mut book, 40, 0.100), [1, 1 + REPROBE_EVERY]);
    }

    #[test]
    fn large_results_of_quick_queries_stay_arrow() {
        let mut book = RouteBook::default();
        // A scan: 2M rows of 4 columns, first batch after 2 ms.
        ran(&mut book, 1, 0.002, 4, 2_000_000);
        assert_eq!(book.choose(1), ReadRoute::Arrow);
        // 10k rows of a cheap filter: 1 ms to the first data.
        ran(&mut book, 2, 0.001, 4, 10_000);
        assert_eq!(book.choose(2), ReadRoute::Arrow);
        // The same 10k rows from a 200 ms aggregation.
        ran(&mut book, 3, 0.200, 4, 10_000);
        assert_eq!(book.choose(3), ReadRoute::DataRows);
    }

    /// A result that grew is noticed at its end and goes back to Arrow.
    #[test]
    fn every_complete_result_updates_the_count() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.010, 2, 5);
        assert_eq!(book.choose(1), ReadRoute::DataRows);
        book.finished(1, 2, 5_000_000);
        assert_eq!(book.choose(1), ReadRoute::Arrow);
    }

    /// A simple `Query` costs less than a COPY whatever the statement: a
    /// small result goes as rows however quick its query.
    #[test]
    fn small_results_of_quick_queries_go_as_rows() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.0003, 1, 1);
        assert_eq!(book.choose(1), ReadRoute::DataRows);
        // 100 rows of 10 columns: 20 us more as rows, still less.
        book.finished(1, 10, 100);
        assert_eq!(book.choose(1), ReadRoute::DataRows);
    }

    /// Runs of one lookup with other values share an entry, the Arrow
    /// run's schema included.
    #[test]
    fn lookups_with_other_values_share_what_they_showed() {
        let mut book = RouteBook::default();
        let (five, six) = (
            key("SELECT v FROM t WHERE id = 5"),
            key("SELECT v FROM t WHERE id = 6"),
        );
        assert_eq!(book.choose(five), ReadRoute::Arrow);
        ran(&mut book, five, 0.001, 1, 1);
        assert_eq!(book.choose(six), ReadRoute::DataRows);
        assert!(book.arrow_schema(six).is_some());
        assert_eq!(book.arrow_schema(six), book.arrow_schema(five));
    }

    #[test]
    fn a_failed_run_forgets_the_statement() {
        let mut book = RouteBook::default();
        ran(&mut book, 1, 0.040, 3, 10);
        Learn::new(&mut book, 1).failed();
        assert_eq!(book.choose(1), ReadRoute::Arrow);
    }

    #[test]
    fn refused_results_go_as_rows_at_once() {
        let mut book = RouteBook::default();
        book.arrow_refused(7);
        assert_eq!(book.choose(7), ReadRoute::DataRows);
        assert!(book.arrow_schema(7).is_none());
    }

    #[test]
    fn the_least_recently_used_statement_goes_first() {
        let mut book = RouteBook::default();
        for n in 0..CAPACITY as u64 {
            ran(&mut book, n, 0.010, 1, 1);
        }
        assert_eq!(book.choose(0), ReadRoute::DataRows, "0 is now the newest");
        book.arrow_started(10_000, 0.010, &schema(1));
        assert_eq!(book.seen.len(), CAPACITY);
        assert!(book.seen.contains_key(&0));
        assert!(!book.seen.contains_key(&1), "1 was the oldest");
    }

    #[test]
    fn keys_follow_the_text() {
        assert_eq!(key("SELECT 1"), key("SELECT 1"));
        assert_ne!(key("SELECT 1"), key("SELECT 2"));
    }

    /// The literal of an equality is left out of the shape, and nothing
    /// else is.
    #[test]
    fn shapes_leave_out_the_literals_of_equalities() {
        let same = |a: &str, b: &str| key(a) == key(b);
        for (a, b) in [
            (
                "SELECT v FROM t WHERE id = 5",
                "SELECT v FROM t WHERE id = 123456",
            ),
            ("SELECT v FROM t WHERE id=5", "SELECT v FROM t WHERE id=-7"),
            (
                "SELECT v FROM t WHERE x = 1.5",
                "SELECT v FROM t WHERE x = 2e-3",
            ),
            (
                "SELECT * FROM t WHERE n = 'bob'",
                "SELECT * FROM t WHERE n = 'it''s = 1'",
            ),
            (
                "SELECT * FROM t WHERE a = 1 AND b = 'x' ORDER BY c",
                "SELECT * FROM t WHERE a = 22 AND b = 'yy' ORDER BY c",
            ),
        ] {
            assert!(same(a, b), "{a} / {b}");
        }
        for (a, b) in [
            ("SELECT 1", "SELECT 2"),
            (
                "SELECT * FROM t WHERE id < 5",
                "SELECT * FROM t WHERE id < 6",
            ),
            (
                "SELECT * FROM t WHERE id <= 5",
                "SELECT * FROM t WHERE id <= 6",
            ),
            (
                "SELECT * FROM t WHERE id != 5",
                "SELECT * FROM t WHERE id != 6",
            ),
            ("SELECT * FROM t LIMIT 10", "SELECT * FROM t LIMIT 10000"),
            (
                "SELECT * FROM t WHERE a = b1",
                "SELECT * FROM t WHERE a = b2",
            ),
            (
                "SELECT * FROM t WHERE a = 1x",
                "SELECT * FROM t WHERE a = 2x",
            ),
            ("SELECT 'a = 1'", "SELECT 'a = 2'"),
            ("SELECT 1 -- id = 1", "SELECT 1 -- id = 2"),
            ("SELECT E'\\' = 1'", "SELECT E'\\' = 2'"),
            ("SELECT \"a = 1\" FROM t", "SELECT \"a = 2\" FROM t"),
            (
                "SELECT * FROM t WHERE id = 5",
                "SELECT * FROM u WHERE id = 5",
            ),
        ] {
            assert!(!same(a, b), "{a} / {b}");
        }
    }
}
