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
//! same lookup with another value: [`RouteKey::statement`]) take
//! `DataRow`s of a simple `Query` when the values' extra cost as rows is
//! below what the COPY costs, and Arrow otherwise. A statement never seen
//! whose shape (its text with literals left out: [`RouteKey::shape`]) gave
//! only small results so far takes `DataRow`s at once: a query written
//! with a new literal each run is not a first run each time. Every complete result updates the
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

use arrow_schema::SchemaRef;
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::protocol::Session;

mod key;

pub(crate) use key::{key, RouteKey};

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
    /// The Arrow run had a column the `DataRow` route cannot gather into
    /// batches (an ARRAY, sent as an Arrow list): batch reads stay Arrow.
    arrow_only_batches: bool,
    /// Runs routed to `DataRow`s by timing since the last Arrow run.
    rows_runs: u32,
    /// Runs between refreshes now: [`REPROBE_EVERY`], doubled by each
    /// refresh, back to [`REPROBE_EVERY`] when a run goes as Arrow by
    /// what it showed.
    reprobe_every: u32,
    last_used: u64,
}

/// What the results of a shape's statements showed (see
/// [`RouteKey::shape`]).
#[derive(Debug)]
struct ShapeSeen {
    /// Every complete result of the shape was small enough to go as rows
    /// whatever its query's time (`None` before the first).
    small: Option<bool>,
    /// The schema of the shape's last Arrow run, lent to a statement that
    /// first runs as rows (its nullability; `RowBatcher::adopt` takes it
    /// only with the same names and types).
    schema: Option<SchemaRef>,
    /// A result of the shape had a column the `DataRow` route cannot
    /// gather into batches (see [`Seen::arrow_only_batches`]).
    arrow_only_batches: bool,
    last_used: u64,
}

/// A connection's memory of its statements' results, keyed by
/// [`RouteKey`] hashes (a collision can only pick the slower route).
#[derive(Debug, Default)]
pub(crate) struct RouteBook {
    seen: HashMap<u64, Seen>,
    shapes: HashMap<u64, ShapeSeen>,
    tick: u64,
    /// The session's catalog changes when the book was last consulted.
    changes: u64,
}

impl RouteBook {
    /// The route for the statement `key` now.
    ///
    /// A statement never seen goes as rows when every complete result of
    /// its shape was small (`SELECT 41 + 1` after `SELECT 40 + 1`), and as
    /// Arrow otherwise: a shape whose results were large once stays
    /// Arrow-first for good, so a statement whose literals change its
    /// size (`LIMIT 10`, then `LIMIT 90`, then a large one) can read a
    /// large result as rows, 3-5x slower, only once.
    pub(crate) fn choose(&mut self, key: RouteKey) -> ReadRoute {
        self.tick += 1;
        let tick = self.tick;
        let Some(seen) = self.seen.get_mut(&key.statement) else {
            let shape = self.shapes.get_mut(&key.shape);
            let Some(shape) = shape.filter(|s| s.small == Some(true)) else {
                return ReadRoute::Arrow;
            };
            shape.last_used = tick;
            let schema = shape.schema.clone();
            // An entry for its result to report to; no Arrow timing yet.
            self.entry(key.statement).schema = schema;
            return ReadRoute::DataRows;
        };
        seen.last_used = tick;
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

    /// [`choose`](Self::choose) for a session whose transaction state is
    /// `status`. Inside a transaction block a refused Arrow run cannot be run again as
    /// rows: hyperd fails the transaction with the refusal (a TIMESTAMP
    /// `infinity`, a TIME `24:00`), and the `DataRow` run after it gets
    /// 25P02, so a read that works outside would roll back the caller's
    /// writes. So Arrow is taken only for a statement whose last Arrow run
    /// had no column where a value can be refused (see
    /// [`arrow_cannot_refuse`]); a statement first seen in a transaction
    /// goes as rows, its values read whatever they are.
    pub(crate) fn choose_in(&mut self, key: RouteKey, session: &Session) -> ReadRoute {
        self.choose_at(key, session.transaction_status(), session.catalog_changes())
    }

    /// [`choose_in`](Self::choose_in) by the session's transaction status
    /// and catalog changes ([`Session::catalog_changes`]). What the book
    /// learnt before a command that may have changed the catalog is
    /// forgotten, as the statement cache is emptied then: a table made
    /// again may hold an `infinity` Arrow refuses (in a transaction block
    /// that refusal fails the block) or an ARRAY only Arrow reads, where
    /// the book remembered a result that could not.
    fn choose_at(&mut self, key: RouteKey, status: TransactionStatus, changes: u64) -> ReadRoute {
        if changes != self.changes {
            self.seen.clear();
            self.shapes.clear();
            self.changes = changes;
        }
        let route = self.choose(key);
        if status == TransactionStatus::Idle || route == ReadRoute::DataRows {
            return route;
        }
        let schema = self
            .seen
            .get(&key.statement)
            .and_then(|s| s.schema.as_ref());
        if schema.is_some_and(arrow_cannot_refuse) {
            ReadRoute::Arrow
        } else {
            ReadRoute::DataRows
        }
    }

    /// [`choose_in`](Self::choose_in) for a read of record batches
    /// (`SharedConnection`'s streams): a statement whose Arrow run had a
    /// column the `DataRow` route cannot gather into batches (an ARRAY)
    /// stays Arrow, so the same read does not pass on its first run and
    /// fail on the next (inside a transaction block, as `choose_in` allows).
    #[cfg(any(feature = "async", test))]
    pub(crate) fn choose_batches_in(&mut self, key: RouteKey, session: &Session) -> ReadRoute {
        self.choose_batches_at(key, session.transaction_status(), session.catalog_changes())
    }

    #[cfg(any(feature = "async", test))]
    fn choose_batches_at(
        &mut self,
        key: RouteKey,
        status: TransactionStatus,
        changes: u64,
    ) -> ReadRoute {
        let route = self.choose_at(key, status, changes);
        let shape = self.shapes.get(&key.shape);
        let pinned = self.seen.get(&key.statement).is_some_and(|s| {
            (s.arrow_only_batches || shape.is_some_and(|s| s.arrow_only_batches))
                && (status == TransactionStatus::Idle
                    || s.schema.as_ref().is_some_and(arrow_cannot_refuse))
        });
        if pinned {
            ReadRoute::Arrow
        } else {
            route
        }
    }

    /// The schema the statement's last Arrow run had (the shared streams
    /// give a DataRow run that schema's nullability).
    ///
    /// A run of another text of the same statement key or shape gives it
    /// too: hyperd's nullability does not follow a literal's value (`CASE
    /// WHEN 1 = 2 THEN NULL ELSE 5 END` and `COALESCE(a, 1)` are nullable
    /// alike), and `RowBatcher::adopt` takes it only with the same names
    /// and types. A NULL under a lent NOT NULL makes that field nullable
    /// in the run and forgets the entry.
    #[cfg(any(feature = "async", test))]
    pub(crate) fn arrow_schema(&self, key: RouteKey) -> Option<SchemaRef> {
        self.seen.get(&key.statement).and_then(|s| s.schema.clone())
    }

    /// The statement started as Arrow: `secs` to its schema.
    pub(crate) fn arrow_started(&mut self, key: RouteKey, secs: f64, schema: &SchemaRef) {
        let seen = self.entry(key.statement);
        seen.arrow_secs = secs;
        seen.schema = Some(schema.clone());
        seen.columns = schema.fields().len() as u64;
        seen.rows_runs = 0;
        let lists = !crate::arrow::every_field_has_sql_type(schema);
        seen.arrow_only_batches = lists;
        let shape = self.shape(key.shape);
        shape.schema = Some(schema.clone());
        shape.arrow_only_batches |= lists;
    }

    /// hyperd cannot send the statement's result as Arrow.
    pub(crate) fn arrow_refused(&mut self, key: RouteKey) {
        self.entry(key.statement).no_arrow = true;
    }

    /// The statement's Arrow result has a column rows cannot read from
    /// Arrow (an ARRAY, an Arrow list): row reads go as `DataRow`s, which
    /// carry its bytes, and batch reads as Arrow, which carries its list
    /// (see [`choose_batches_in`](Self::choose_batches_in)).
    pub(crate) fn arrow_unreadable_as_rows(&mut self, key: RouteKey) {
        let seen = self.entry(key.statement);
        seen.no_arrow = true;
        seen.arrow_only_batches = true;
        self.shape(key.shape).arrow_only_batches = true;
    }

    /// A result of the statement was read to its end.
    pub(crate) fn finished(&mut self, key: RouteKey, columns: usize, rows: u64) {
        if let Some(seen) = self.seen.get_mut(&key.statement) {
            seen.columns = columns as u64;
            seen.rows = Some(rows);
        }
        let small = prefers_rows(rows.saturating_mul(columns as u64), 0.0);
        let shape = self.shape(key.shape);
        shape.small = Some(small && shape.small != Some(false));
    }

    /// Forgets the statement and its shape: its next run starts afresh as
    /// Arrow. After a failed run, since what an entry says (a schema, a
    /// size) may be why.
    pub(crate) fn forget(&mut self, key: RouteKey) {
        self.seen.remove(&key.statement);
        self.shapes.remove(&key.shape);
    }

    /// The statement's entry, made if new, marked as just used.
    fn entry(&mut self, statement: u64) -> &mut Seen {
        self.tick += 1;
        let tick = self.tick;
        let seen = recent_entry(
            &mut self.seen,
            statement,
            |s| s.last_used,
            || Seen {
                arrow_secs: 0.0,
                schema: None,
                columns: 0,
                rows: None,
                no_arrow: false,
                arrow_only_batches: false,
                rows_runs: 0,
                reprobe_every: REPROBE_EVERY,
                last_used: tick,
            },
        );
        seen.last_used = tick;
        seen
    }

    /// The shape's entry, made if new, marked as just used.
    fn shape(&mut self, shape: u64) -> &mut ShapeSeen {
        self.tick += 1;
        let tick = self.tick;
        let seen = recent_entry(
            &mut self.shapes,
            shape,
            |s| s.last_used,
            || ShapeSeen {
                small: None,
                schema: None,
                arrow_only_batches: false,
                last_used: tick,
            },
        );
        seen.last_used = tick;
        seen
    }
}

/// `map`'s entry for `key`, made by `make` if new; when the map is full,
/// the least recently used entry goes first.
fn recent_entry<V>(
    map: &mut HashMap<u64, V>,
    key: u64,
    last_used: impl Fn(&V) -> u64,
    make: impl FnOnce() -> V,
) -> &mut V {
    if !map.contains_key(&key) && map.len() >= CAPACITY {
        let oldest = map.iter().min_by_key(|(_, v)| last_used(v));
        if let Some((&old, _)) = oldest {
            map.remove(&old);
        }
    }
    map.entry(key).or_insert_with(make)
}

/// Whether hyperd's Arrow stream of a result of `schema` takes every value:
/// it refuses some dates and times (TIMESTAMP `infinity` and past Arrow's
/// range, TIME `24:00`, INTERVALs past 2^63 ns) and other columns hold
/// nothing it refuses.
fn arrow_cannot_refuse(schema: &SchemaRef) -> bool {
    use arrow_schema::DataType;
    schema.fields().iter().all(|f| {
        !matches!(
            f.data_type(),
            DataType::Timestamp(..)
                | DataType::Time32(_)
                | DataType::Time64(_)
                | DataType::Date32
                | DataType::Date64
                | DataType::Interval(_)
        )
    })
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
    key: RouteKey,
}

impl<'c> Learn<'c> {
    pub(crate) fn new(book: &'c mut RouteBook, key: RouteKey) -> Learn<'c> {
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

    /// The result ended in `e`, which may be hyperd refusing a value in
    /// Arrow mid-result (a timestamp past Arrow's, in a later batch): the
    /// read fails, as rows were handed out, and the statement's next run
    /// goes as `DataRow`s, which carry the value.
    pub(crate) fn failed_with(self, e: &crate::error::Error) {
        #[cfg(feature = "arrow")]
        if crate::arrow::arrow_cannot_express(e) {
            self.book.arrow_refused(self.key);
            return;
        }
        let _ = e;
        self.failed();
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
        (Err(e), _) => {
            if let Some(l) = learn.take() {
                l.failed_with(e);
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

    /// Statement `n`, of a shape of its own.
    fn k(n: u64) -> RouteKey {
        RouteKey {
            statement: n,
            shape: n,
        }
    }

    /// Records a complete run of `key` as Arrow: `arrow_secs` to its
    /// schema, `rows` rows of `columns` columns.
    fn ran(book: &mut RouteBook, key: RouteKey, arrow_secs: f64, columns: usize, rows: u64) {
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
        assert_eq!(book.choose(k(1)), ReadRoute::Arrow);
        book.arrow_started(k(1), 0.050, &schema(3));
        assert_eq!(
            book.choose(k(1)),
            ReadRoute::Arrow,
            "no complete result yet"
        );
    }

    /// A small result goes as rows by timing; one with an ARRAY (an Arrow
    /// list, which the row route cannot gather into batches) stays Arrow
    /// for batch reads, whether an Arrow batch read or a row read (which
    /// reads its rows from `DataRow`s) saw it first.
    #[test]
    fn batch_reads_of_lists_stay_arrow() {
        let list = Arc::new(Schema::new(vec![Field::new_list(
            "a",
            Field::new_list_field(DataType::Int32, true),
            true,
        )]));
        let idle = TransactionStatus::Idle;
        let mut book = RouteBook::default();
        book.arrow_started(k(1), 0.050, &list);
        book.finished(k(1), 1, 1);
        assert_eq!(book.choose_at(k(1), idle, 0), ReadRoute::DataRows, "small");
        assert_eq!(book.choose_batches_at(k(1), idle, 0), ReadRoute::Arrow);
        ran(&mut book, k(2), 0.050, 1, 1);
        assert_eq!(
            book.choose_batches_at(k(2), idle, 0),
            ReadRoute::DataRows,
            "an INT result goes by timing"
        );
        book.arrow_unreadable_as_rows(k(3));
        assert_eq!(book.choose_at(k(3), idle, 0), ReadRoute::DataRows);
        assert_eq!(book.choose_batches_at(k(3), idle, 0), ReadRoute::Arrow);
    }

    /// In a transaction a refused Arrow run fails the transaction: Arrow
    /// only for a statement whose Arrow schema has no date or time column.
    #[test]
    fn transactions_take_arrow_only_where_nothing_is_refused() {
        let mut book = RouteBook::default();
        assert_eq!(
            book.choose_at(k(1), TransactionStatus::InTransaction, 0),
            ReadRoute::DataRows,
            "never seen"
        );
        ran(&mut book, k(1), 0.050, 1, 10_000_000);
        assert_eq!(
            book.choose_at(k(1), TransactionStatus::InTransaction, 0),
            ReadRoute::Arrow
        );
        let dated = Arc::new(Schema::new(vec![Field::new(
            "t",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
            true,
        )]));
        book.arrow_started(k(2), 0.050, &dated);
        book.finished(k(2), 1, 10_000_000);
        assert_eq!(
            book.choose_at(k(2), TransactionStatus::Idle, 0),
            ReadRoute::Arrow
        );
        assert_eq!(
            book.choose_at(k(2), TransactionStatus::InTransaction, 0),
            ReadRoute::DataRows
        );
    }

    /// A command that may have changed the catalog makes the book forget:
    /// the table a statement read may now hold what its Arrow run did not.
    #[test]
    fn a_catalog_change_forgets_what_was_learnt() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.050, 1, 10_000_000);
        let tx = TransactionStatus::InTransaction;
        assert_eq!(book.choose_at(k(1), tx, 0), ReadRoute::Arrow);
        assert_eq!(
            book.choose_at(k(1), tx, 1),
            ReadRoute::DataRows,
            "never seen since the change"
        );
        ran(&mut book, k(2), 0.040, 3, 10);
        assert_eq!(
            book.choose_at(k(2), TransactionStatus::Idle, 1),
            ReadRoute::DataRows
        );
        assert_eq!(
            book.choose_at(k(2), TransactionStatus::Idle, 2),
            ReadRoute::Arrow
        );
    }

    #[test]
    fn small_results_of_costly_queries_go_as_rows() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.040, 3, 10);
        for _ in 1..REPROBE_EVERY {
            assert_eq!(book.choose(k(1)), ReadRoute::DataRows);
        }
        // After REPROBE_EVERY runs, Arrow again to refresh the timing.
        assert_eq!(book.choose(k(1)), ReadRoute::Arrow);
        book.arrow_started(k(1), 0.040, &schema(3));
        assert_eq!(book.choose(k(1)), ReadRoute::DataRows);
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
            if book.choose(k(1)) == ReadRoute::Arrow {
                at.push(run);
                book.arrow_started(k(1), arrow_secs, &schema(3));
            }
            book.finished(k(1), 3, ROWS);
        }
        at
    }

    /// Each refresh that confirms the rows route doubles the wait for the
    /// next one, up to MAX_REPROBE_EVERY.
    #[test]
    fn confirmed_refreshes_come_less_and_less_often() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.100, 3, ROWS);
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
        ran(&mut book, k(1), 0.100, 3, ROWS);
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
        ran(&mut book, k(1), 0.002, 4, 2_000_000);
        assert_eq!(book.choose(k(1)), ReadRoute::Arrow);
        // 10k rows of a cheap filter: 1 ms to the first data.
        ran(&mut book, k(2), 0.001, 4, 10_000);
        assert_eq!(book.choose(k(2)), ReadRoute::Arrow);
        // The same 10k rows from a 200 ms aggregation.
        ran(&mut book, k(3), 0.200, 4, 10_000);
        assert_eq!(book.choose(k(3)), ReadRoute::DataRows);
    }

    /// A result that grew is noticed at its end and goes back to Arrow.
    #[test]
    fn every_complete_result_updates_the_count() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.010, 2, 5);
        assert_eq!(book.choose(k(1)), ReadRoute::DataRows);
        book.finished(k(1), 2, 5_000_000);
        assert_eq!(book.choose(k(1)), ReadRoute::Arrow);
    }

    /// A simple `Query` costs less than a COPY whatever the statement: a
    /// small result goes as rows however quick its query.
    #[test]
    fn small_results_of_quick_queries_go_as_rows() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.0003, 1, 1);
        assert_eq!(book.choose(k(1)), ReadRoute::DataRows);
        // 100 rows of 10 columns: 20 us more as rows, still less.
        book.finished(k(1), 10, 100);
        assert_eq!(book.choose(k(1)), ReadRoute::DataRows);
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

    /// A statement never seen goes as rows at once when every result of
    /// its shape was small, with the schema of the shape's Arrow run.
    #[test]
    fn new_statements_of_small_shapes_go_as_rows_at_once() {
        let mut book = RouteBook::default();
        let (a, b) = (key("SELECT 41 + 1 AS x"), key("SELECT 57 + 1 AS x"));
        assert_ne!(a.statement, b.statement);
        assert_eq!(book.choose(a), ReadRoute::Arrow);
        ran(&mut book, a, 0.0005, 1, 1);
        assert_eq!(book.choose(b), ReadRoute::DataRows);
        assert_eq!(book.arrow_schema(b), book.arrow_schema(a));
        // Its own runs count from now on.
        book.finished(b, 1, 1);
        assert_eq!(book.choose(b), ReadRoute::DataRows);
        // A shape of another magnitude is a shape never seen.
        assert_eq!(book.choose(key("SELECT 4100 + 1 AS x")), ReadRoute::Arrow);
    }

    /// One large result of a shape sends its new statements to Arrow for
    /// good: a literal that changes a result's size costs a slow run once.
    #[test]
    fn a_shape_with_a_large_result_starts_new_statements_as_arrow() {
        let mut book = RouteBook::default();
        let limit = |n: u32| key(&format!("SELECT * FROM t LIMIT {n}"));
        ran(&mut book, limit(10), 0.001, 4, 10);
        assert_eq!(book.choose(limit(20)), ReadRoute::DataRows);
        book.finished(limit(20), 4, 20);
        assert_eq!(book.choose(limit(90)), ReadRoute::DataRows);
        book.finished(limit(90), 4, 90);
        // hyperd says LIMIT 99 is 99 rows, but say it was far more.
        assert_eq!(book.choose(limit(99)), ReadRoute::DataRows);
        book.finished(limit(99), 4, 1_000_000);
        assert_eq!(book.choose(limit(99)), ReadRoute::Arrow);
        for n in [11, 12, 13] {
            assert_eq!(book.choose(limit(n)), ReadRoute::Arrow, "LIMIT {n}");
            ran(&mut book, limit(n), 0.001, 4, 10);
        }
        // Those it has seen go by their own results.
        assert_eq!(book.choose(limit(20)), ReadRoute::DataRows);
    }

    /// A failed run forgets its shape too.
    #[test]
    fn a_failed_run_forgets_its_shape() {
        let mut book = RouteBook::default();
        let (a, b) = (key("SELECT 5 / (5 - 4)"), key("SELECT 5 / (5 - 5)"));
        ran(&mut book, a, 0.0005, 1, 1);
        assert_eq!(book.choose(b), ReadRoute::DataRows);
        Learn::new(&mut book, b).failed();
        assert_eq!(book.choose(key("SELECT 6 / (6 - 5)")), ReadRoute::Arrow);
    }

    #[test]
    fn a_failed_run_forgets_the_statement() {
        let mut book = RouteBook::default();
        ran(&mut book, k(1), 0.040, 3, 10);
        Learn::new(&mut book, k(1)).failed();
        assert_eq!(book.choose(k(1)), ReadRoute::Arrow);
    }

    #[test]
    fn refused_results_go_as_rows_at_once() {
        let mut book = RouteBook::default();
        book.arrow_refused(k(7));
        assert_eq!(book.choose(k(7)), ReadRoute::DataRows);
        assert!(book.arrow_schema(k(7)).is_none());
    }

    #[test]
    fn the_least_recently_used_statement_goes_first() {
        let mut book = RouteBook::default();
        for n in 0..CAPACITY as u64 {
            ran(&mut book, k(n), 0.010, 1, 1);
        }
        assert_eq!(
            book.choose(k(0)),
            ReadRoute::DataRows,
            "0 is now the newest"
        );
        book.arrow_started(k(10_000), 0.010, &schema(1));
        assert_eq!(book.seen.len(), CAPACITY);
        assert!(book.seen.contains_key(&0));
        assert!(!book.seen.contains_key(&1), "1 was the oldest");
    }
}
