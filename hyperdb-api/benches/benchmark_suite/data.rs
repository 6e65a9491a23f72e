//! The one benchmark schema, its deterministic rows, the three queries and
//! the checks that make a fast wrong answer fail the run.
//!
//! Shared with the dig-deeper benches, which include it with `#[path]`.

use hyperdb_api::types::SqlType;
use hyperdb_api::{Row, TableDefinition};

/// Error type of the bench binaries: any error, with its message.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Result<T> = std::result::Result<T, BoxError>;

/// Logical bytes per row: INT + INT + DOUBLE + BIGINT.
pub const BYTES_PER_ROW: u64 = 24;
pub const TS_BASE: i64 = 1_700_000_000_000;
/// Rows per InsertChunk / RecordBatch.
pub const CHUNK_ROWS: u64 = 64 * 1024;

/// `measurements(id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)`.
pub fn table(name: &str) -> TableDefinition {
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::Int)
        .with_column("sensor_id", SqlType::Int)
        .with_column("value", SqlType::Double)
        .with_column("timestamp", SqlType::BigInt)
}

/// The per-worker table `measurements_{i}`.
pub fn worker_table(i: usize) -> String {
    format!("measurements_{i}")
}

/// The table worker `i` of `n` scans: `measurements` alone, else its own.
pub fn scan_table(i: usize, n: usize) -> String {
    if n == 1 {
        "measurements".to_owned()
    } else {
        worker_table(i)
    }
}

/// Row `id`: `(id, id % 10, id * 0.1, 1_700_000_000_000 + id * 1000)`.
#[inline]
pub fn row(id: i32) -> (i32, i32, f64, i64) {
    (
        id,
        id % 10,
        f64::from(id) * 0.1,
        TS_BASE + i64::from(id) * 1000,
    )
}

/// `name` as a quoted SQL identifier.
pub fn ident(name: &str) -> Result<String> {
    Ok(hyperdb_api::escape::quote_identifier(name)?)
}

/// Makes the record batches of a span (`arrow::batches`,
/// `lineitem_arrow::batches`): what prepared batches and the Arrow COPY
/// ceiling's file are built from.
#[cfg(feature = "arrow")]
pub type BatchMaker = fn(Span) -> Result<Vec<hyperdb_api::arrow_array::RecordBatch>>;

/// The server-side form of the same rows, for `INSERT ... SELECT`.
pub fn generate_sql(table: &str, range: Span) -> Result<String> {
    Ok(format!(
        "INSERT INTO {} SELECT i, i % 10, i * 0.1, {TS_BASE} + i::BIGINT * 1000 \
         FROM generate_series({}, {}) i",
        ident(table)?,
        range.start,
        range.end as i64 - 1
    ))
}

/// A half-open id range `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

impl Span {
    pub fn new(start: u64, end: u64) -> Span {
        Span { start, end }
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// `n` contiguous parts covering the span (the first ones one row
    /// larger when it does not divide).
    pub fn split(&self, n: usize) -> Vec<Span> {
        let n = n.max(1) as u64;
        (0..n)
            .map(|i| {
                Span::new(
                    self.start + self.len() * i / n,
                    self.start + self.len() * (i + 1) / n,
                )
            })
            .collect()
    }

    /// Consecutive parts of at most `rows` rows.
    pub fn chunks(&self, rows: u64) -> Vec<Span> {
        (self.start..self.end)
            .step_by(rows.max(1) as usize)
            .map(|s| Span::new(s, (s + rows).min(self.end)))
            .collect()
    }

    pub fn ids(&self) -> std::ops::Range<i32> {
        self.start as i32..self.end as i32
    }
}

/// The queries every transport and API runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    FullScan,
    Filtered,
    Aggregation,
}

impl Query {
    pub const ALL: [Query; 3] = [Query::FullScan, Query::Filtered, Query::Aggregation];

    /// `full_scan`, `filtered`, `aggregation`.
    pub fn name(self) -> &'static str {
        match self {
            Query::FullScan => "full_scan",
            Query::Filtered => "filtered",
            Query::Aggregation => "aggregation",
        }
    }

    pub fn sql(self, table: &str) -> Result<String> {
        let t = ident(table)?;
        Ok(match self {
            Query::FullScan => format!("SELECT id, sensor_id, value, timestamp FROM {t}"),
            Query::Filtered => {
                format!("SELECT id, sensor_id, value, timestamp FROM {t} WHERE sensor_id = 5")
            }
            Query::Aggregation => format!(
                "SELECT sensor_id, count(*) AS n, sum(id::BIGINT) AS ids FROM {t} GROUP BY sensor_id"
            ),
        })
    }

    /// What a correct result over `span` looks like.
    pub fn expected(self, span: Span) -> Answer {
        let mut answer = Answer::new(self);
        for id in span.ids() {
            match &mut answer {
                Answer::Scan(check) => {
                    if self == Query::FullScan || id % 10 == 5 {
                        let (id, s, v, t) = row(id);
                        check.add(id, Some(s), Some(v), Some(t));
                    }
                }
                Answer::Groups(groups) => groups.add(id % 10, 1, i64::from(id)),
            }
        }
        answer
    }
}

/// Every `SAMPLE`-th row (by id) of a scan is compared value by value with
/// [`row`]; every row goes into the sums. A power of two, so that finding
/// the sampled rows is a mask test.
pub const SAMPLE: i32 = 16;

/// Whether row `id` is one of the sampled ones.
#[inline]
fn is_sampled(id: i32) -> bool {
    id & (SAMPLE - 1) == 0
}

/// What a scan saw, reduced to what can be compared: the row count, sums
/// over every value of every row, and the sampled rows that break the row
/// formula. Cheap per row, as lineitem's check is, so that the figures
/// measure the read rather than the check: the formula on every row cost
/// ~45 ms of client CPU per 10M rows (`query_arrow`, measured), a quarter
/// of the Arrow drain, and on two cores that CPU is taken from hyperd.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Check {
    pub rows: u64,
    pub sum_id: i64,
    /// sensor_id, NULL as -1.
    pub sum_sensor: i64,
    /// value x 10 rounded ([`tenths`]), NULL as -1.
    pub sum_tenths: i64,
    /// timestamp - `TS_BASE`, NULL as -1.
    pub sum_ts: i64,
    pub sampled: u64,
    pub bad: u64,
}

/// `value` x 10, rounded half up (the values are id x 0.1, never negative).
#[inline]
pub fn tenths(value: f64) -> i64 {
    (value * 10.0 + 0.5) as i64
}

/// The sum of [`tenths`] over `values`, computed per 1024 values as
/// `tenths` of their sum: the values are id x 0.1 (at most 1e7, at the
/// sweep's 1e8 rows), so a chunk's sum is at most ~1e10, each addition
/// rounds by at most ~1e-6, and after 1024 of them and x 10 the error
/// (~2e-2 at worst) cannot move the sum to another integer. Summed in four
/// lanes, which the compiler vectorizes: `tenths` per value was ~16 ms per
/// 10M rows of the check's ~45, this is ~2.
pub fn sum_tenths(values: &[f64]) -> i64 {
    values
        .chunks(1024)
        .map(|chunk| {
            let mut lanes = [0.0f64; 4];
            let mut quads = chunk.chunks_exact(4);
            for quad in &mut quads {
                for (lane, v) in lanes.iter_mut().zip(quad) {
                    *lane += v;
                }
            }
            tenths(lanes.iter().sum::<f64>() + quads.remainder().iter().sum::<f64>())
        })
        .sum()
}

impl Check {
    /// Folds one row read back.
    #[inline]
    pub fn add(&mut self, id: i32, sensor: Option<i32>, value: Option<f64>, ts: Option<i64>) {
        self.rows += 1;
        self.sum_id += i64::from(id);
        self.sum_sensor += i64::from(sensor.unwrap_or(-1));
        self.sum_tenths += value.map_or(-1, tenths);
        self.sum_ts += ts.map_or(-1, |t| t - TS_BASE);
        if is_sampled(id) {
            self.sample(id, sensor, value, ts);
        }
    }

    /// [`Check::add`] of whole columns without NULLs, a column at a time
    /// (what a columnar reader does).
    pub fn add_columns(&mut self, ids: &[i32], sensors: &[i32], values: &[f64], ts: &[i64]) {
        self.rows += ids.len() as u64;
        self.sum_id += ids.iter().map(|&x| i64::from(x)).sum::<i64>();
        self.sum_sensor += sensors.iter().map(|&x| i64::from(x)).sum::<i64>();
        self.sum_tenths += sum_tenths(values);
        self.sum_ts += ts.iter().map(|&t| t - TS_BASE).sum::<i64>();
        for (i, &id) in ids.iter().enumerate() {
            if is_sampled(id) {
                self.sample(id, Some(sensors[i]), Some(values[i]), Some(ts[i]));
            }
        }
    }

    /// The value-by-value part of [`Check::add`], for a sampled row.
    #[inline]
    fn sample(&mut self, id: i32, sensor: Option<i32>, value: Option<f64>, ts: Option<i64>) {
        let (_, want_sensor, want_value, want_ts) = row(id);
        let value_ok = value.is_some_and(|v| (v - want_value).abs() <= 1e-6);
        self.sampled += 1;
        self.bad += u64::from(sensor != Some(want_sensor) || !value_ok || ts != Some(want_ts));
    }

    pub fn merge(&mut self, other: &Check) {
        self.rows += other.rows;
        self.sum_id += other.sum_id;
        self.sum_sensor += other.sum_sensor;
        self.sum_tenths += other.sum_tenths;
        self.sum_ts += other.sum_ts;
        self.sampled += other.sampled;
        self.bad += other.bad;
    }
}

/// Per sensor_id: row count and sum of ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    pub count: [i64; 10],
    pub sum_id: [i64; 10],
    /// Groups with a sensor_id outside 0..10 (or NULL).
    pub stray: u64,
}

impl Groups {
    pub fn add(&mut self, sensor: i32, count: i64, sum_id: i64) {
        match usize::try_from(sensor).ok().filter(|&s| s < 10) {
            Some(s) => {
                self.count[s] += count;
                self.sum_id[s] += sum_id;
            }
            None => self.stray += 1,
        }
    }
}

/// A query's result, reduced to what can be compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Scan(Check),
    Groups(Groups),
}

impl Answer {
    pub fn new(query: Query) -> Answer {
        match query {
            Query::Aggregation => Answer::Groups(Groups::default()),
            _ => Answer::Scan(Check::default()),
        }
    }

    /// Rows the result had.
    pub fn result_rows(&self) -> u64 {
        match self {
            Answer::Scan(c) => c.rows,
            Answer::Groups(g) => g.count.iter().filter(|&&c| c > 0).count() as u64,
        }
    }

    pub fn merge(&mut self, other: &Answer) -> Result<()> {
        match (self, other) {
            (Answer::Scan(a), Answer::Scan(b)) => a.merge(b),
            (Answer::Groups(a), Answer::Groups(b)) => {
                for s in 0..10 {
                    a.count[s] += b.count[s];
                    a.sum_id[s] += b.sum_id[s];
                }
                a.stray += b.stray;
            }
            _ => return Err("merging answers of different queries".into()),
        }
        Ok(())
    }

    /// Folds one typed row (the row API's decode path).
    #[inline]
    pub fn add_row(&mut self, row: &Row) -> hyperdb_api::Result<()> {
        match self {
            Answer::Scan(check) => check.add(
                row.try_get::<i32>(0)?,
                row.try_get::<Option<i32>>(1)?,
                row.try_get::<Option<f64>>(2)?,
                row.try_get::<Option<i64>>(3)?,
            ),
            Answer::Groups(groups) => groups.add(
                row.try_get::<Option<i32>>(0)?.unwrap_or(-1),
                row.try_get::<i64>(1)?,
                row.try_get::<i64>(2)?,
            ),
        }
        Ok(())
    }
}

/// Fails with both values when `got` is not `want` (every workload's
/// check ends here).
pub fn verify_eq<T: PartialEq + std::fmt::Debug>(what: &str, got: &T, want: &T) -> Result<()> {
    if got != want {
        return Err(
            format!("{what}: wrong result\n  got:      {got:?}\n  expected: {want:?}").into(),
        );
    }
    Ok(())
}

/// [`verify_eq`], and no row differing from the row formula.
pub fn verify(what: &str, got: &Answer, want: &Answer) -> Result<()> {
    verify_eq(what, got, want)?;
    if let Answer::Scan(c) = got {
        if c.bad != 0 {
            return Err(format!("{what}: {} rows differ from the row formula", c.bad).into());
        }
    }
    Ok(())
}

/// Checks what the server stored in `table` against `span` (untimed).
pub fn verify_table(conn: &mut hyperdb_api::Connection, table: &str, span: Span) -> Result<()> {
    // The client check's sums and sample count, but the formula on every
    // row (stricter than the client's sample).
    let sql = format!(
        "SELECT count(*), sum(id::BIGINT), sum(coalesce(sensor_id, -1)::BIGINT), \
         sum(coalesce(floor(value * 10 + 0.5)::BIGINT, -1)), \
         sum(coalesce(timestamp - {TS_BASE}, -1)), \
         sum(CASE WHEN id % {SAMPLE} = 0 THEN 1 ELSE 0 END), \
         sum(CASE WHEN sensor_id = id % 10 AND timestamp = {TS_BASE} + id::BIGINT * 1000 \
         AND abs(value - id * 0.1) < 1e-6 THEN 0 ELSE 1 END) FROM {}",
        ident(table)?
    );
    let mut rows = conn.execute_query(&sql)?;
    let row = rows.next().ok_or("checksum query returned no row")??;
    let sum = |i: usize| -> Result<i64> { Ok(row.try_get::<Option<i64>>(i)?.unwrap_or(0)) };
    let got = Check {
        rows: row.try_get::<i64>(0)? as u64,
        sum_id: sum(1)?,
        sum_sensor: sum(2)?,
        sum_tenths: sum(3)?,
        sum_ts: sum(4)?,
        sampled: sum(5)? as u64,
        bad: sum(6)? as u64,
    };
    drop(rows);
    let Answer::Scan(want) = Query::FullScan.expected(span) else {
        return Err("internal: full scan without a scan answer".into());
    };
    verify(
        &format!("stored rows of {table}"),
        &Answer::Scan(got),
        &Answer::Scan(want),
    )
}

/// `DROP TABLE IF EXISTS` + `CREATE TABLE` for the benchmark schema.
pub fn recreate(conn: &mut hyperdb_api::Connection, name: &str) -> Result<TableDefinition> {
    recreate_as(conn, name, table(name))
}

/// `DROP TABLE IF EXISTS` + `CREATE TABLE` of `table`, named `name`.
pub fn recreate_as(
    conn: &mut hyperdb_api::Connection,
    name: &str,
    table: TableDefinition,
) -> Result<TableDefinition> {
    conn.execute_command(&format!("DROP TABLE IF EXISTS {}", ident(name)?))?;
    conn.execute_command(&table.create_table_sql(false)?)?;
    Ok(table)
}

/// A benchmark table as the insert workloads and the insert ceiling see
/// it, so that one implementation of each runs on every schema
/// (`measurements` here, `lineitem` in `lineitem_data.rs`).
pub trait Schema: 'static {
    /// The base table; worker `i` of several writes [`Schema::worker_table`].
    const TABLE: &'static str;
    fn worker_table(i: usize) -> String;
    /// `DROP TABLE IF EXISTS` + `CREATE TABLE`.
    fn recreate(conn: &mut hyperdb_api::Connection, name: &str) -> Result<TableDefinition>;
    /// `INSERT ... SELECT` of the rows of `span`, made server-side.
    fn generate_sql(name: &str, span: Span) -> Result<String>;
    /// Checks what the server stored in `name` against `span` (untimed).
    fn verify_table(conn: &mut hyperdb_api::Connection, name: &str, span: Span) -> Result<()>;
    /// Hands row `i`'s values, as an inserter's `add_row` takes them, to `f`.
    fn with_row<R>(i: u64, f: impl FnOnce(&[&dyn hyperdb_api::types::ToHyperBinary]) -> R) -> R;
}

/// The `measurements` schema.
#[derive(Clone, Copy, Debug)]
pub struct Measurements;

impl Schema for Measurements {
    const TABLE: &'static str = "measurements";

    fn worker_table(i: usize) -> String {
        worker_table(i)
    }

    fn recreate(conn: &mut hyperdb_api::Connection, name: &str) -> Result<TableDefinition> {
        recreate(conn, name)
    }

    fn generate_sql(name: &str, span: Span) -> Result<String> {
        generate_sql(name, span)
    }

    fn verify_table(conn: &mut hyperdb_api::Connection, name: &str, span: Span) -> Result<()> {
        verify_table(conn, name, span)
    }

    #[inline(always)]
    fn with_row<R>(i: u64, f: impl FnOnce(&[&dyn hyperdb_api::types::ToHyperBinary]) -> R) -> R {
        let (id, sensor, value, ts) = row(i as i32);
        f(&[&id, &Some(sensor), &Some(value), &Some(ts)])
    }
}
