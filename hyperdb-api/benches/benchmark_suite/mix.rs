//! The query mix (`query.mix.*`): the shapes analysts run, on generated
//! tables, rather than the one four-column scan of `data.rs`.
//!
//! * `mix_fact`: `rows` rows of keys at three granularities, a
//!   pseudo-random score, a DOUBLE and a BIGINT;
//! * `mix_dim`: 1,000 rows, a dimension joined on `mix_fact.k1k`;
//! * `mix_wide`: [`wide_rows`] rows of text, DATE, TIMESTAMP, NUMERIC,
//!   DOUBLE and BOOL, with NULLs: a tenth of `rows`, so that reading it
//!   as rows through every path keeps the suite's run time reasonable.
//!
//! Every query's first column is an integer, so that any read path can be
//! checked the same way: rows, the first column's sum, and the count of
//! non-NULL values, against the same figures computed by hyperd.
//!
//! Shared with `mix_probe` (`#[path]`), which measures the routes' costs.

use hyperdb_api::types::SqlType;
use hyperdb_api::{Connection, Row};

use crate::data::{ident, Result};

pub const FACT: &str = "mix_fact";
pub const DIM: &str = "mix_dim";
pub const WIDE: &str = "mix_wide";
/// Rows of `mix_dim`.
pub const DIM_ROWS: u64 = 1_000;

/// Rows of `mix_wide` next to `rows` of `mix_fact`.
pub fn wide_rows(rows: u64) -> u64 {
    (rows / 10).max(1_000)
}

/// The tables, created (replaced) server-side; untimed.
pub fn create_tables(conn: &mut Connection, rows: u64) -> Result<()> {
    let last = rows as i64 - 1;
    let last_wide = wide_rows(rows) as i64 - 1;
    let (fact, dim, wide) = (ident(FACT)?, ident(DIM)?, ident(WIDE)?);
    for sql in [
        format!("DROP TABLE IF EXISTS {fact}"),
        format!(
            "CREATE TABLE {fact} (id INT NOT NULL, k1k INT NOT NULL, k10k INT NOT NULL, \
             g10 INT NOT NULL, score INT NOT NULL, value DOUBLE PRECISION, ts BIGINT)"
        ),
        format!(
            "INSERT INTO {fact} SELECT i, i % 1000, i % 10000, i % 10, \
             (i::BIGINT * 7919 % 1000003)::INT, i * 0.1, 1700000000000 + i::BIGINT * 1000 \
             FROM generate_series(0, {last}) i"
        ),
        format!("DROP TABLE IF EXISTS {dim}"),
        format!("CREATE TABLE {dim} (k INT NOT NULL, name TEXT NOT NULL, region TEXT)"),
        format!(
            "INSERT INTO {dim} SELECT i, 'item ' || i, 'region ' || (i % 7) \
             FROM generate_series(0, {}) i",
            DIM_ROWS - 1
        ),
        format!("DROP TABLE IF EXISTS {wide}"),
        format!(
            "CREATE TABLE {wide} (id INT NOT NULL, name TEXT, city TEXT, born DATE, \
             seen TIMESTAMP, amount NUMERIC(18,2), price DOUBLE PRECISION, active BOOL)"
        ),
        format!(
            "INSERT INTO {wide} SELECT i, 'customer ' || i, \
             CASE WHEN i % 5 = 0 THEN NULL ELSE 'city ' || (i % 97) END, \
             DATE '1950-01-01' + (i % 20000), \
             TIMESTAMP '2020-01-01 00:00:00' + i * INTERVAL '1 second', \
             (i % 100000)::NUMERIC(18,2) / 100, i * 0.01, \
             CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END \
             FROM generate_series(0, {last_wide}) i"
        ),
    ] {
        conn.execute_command(&sql)?;
    }
    Ok(())
}

/// The queries of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixQuery {
    Select1,
    PointLookup,
    GroupBy10,
    GroupBy10k,
    Join1k,
    Top100,
    Filter1Pct,
    WideScan,
}

impl MixQuery {
    pub const ALL: [MixQuery; 8] = [
        MixQuery::Select1,
        MixQuery::PointLookup,
        MixQuery::GroupBy10,
        MixQuery::GroupBy10k,
        MixQuery::Join1k,
        MixQuery::Top100,
        MixQuery::Filter1Pct,
        MixQuery::WideScan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MixQuery::Select1 => "select_1",
            MixQuery::PointLookup => "point_lookup",
            MixQuery::GroupBy10 => "group_by_10",
            MixQuery::GroupBy10k => "group_by_10k",
            MixQuery::Join1k => "join_1k",
            MixQuery::Top100 => "top_100",
            MixQuery::Filter1Pct => "filter_1pct",
            MixQuery::WideScan => "wide_scan",
        }
    }

    /// The SQL over tables of `rows` rows.
    pub fn sql(self, rows: u64) -> Result<String> {
        let (fact, dim, wide) = (ident(FACT)?, ident(DIM)?, ident(WIDE)?);
        Ok(match self {
            MixQuery::Select1 => "SELECT 1 AS one".to_owned(),
            MixQuery::PointLookup => format!(
                "SELECT id, k1k, k10k, g10, score, value, ts FROM {fact} WHERE id = {}",
                Self::lookup_id(rows)
            ),
            MixQuery::GroupBy10 => {
                format!("SELECT g10, count(*) AS n, sum(value) AS total FROM {fact} GROUP BY g10")
            }
            MixQuery::GroupBy10k => {
                format!("SELECT k10k, count(*) AS n, sum(value) AS total FROM {fact} GROUP BY k10k")
            }
            MixQuery::Join1k => format!(
                "SELECT d.k, d.name, count(*) AS n, sum(f.value) AS total \
                 FROM {fact} f JOIN {dim} d ON f.k1k = d.k GROUP BY d.k, d.name"
            ),
            MixQuery::Top100 => {
                format!("SELECT id, score, value FROM {fact} ORDER BY score DESC, id LIMIT 100")
            }
            MixQuery::Filter1Pct => {
                format!("SELECT id, k10k, value, ts FROM {fact} WHERE k10k < 100")
            }
            MixQuery::WideScan => {
                format!("SELECT id, name, city, born, seen, amount, price, active FROM {wide}")
            }
        })
    }

    /// The key `point_lookup` reads: in the middle of the table.
    fn lookup_id(rows: u64) -> u64 {
        rows / 2 + 7
    }

    /// The result's column names, in order.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            MixQuery::Select1 => &["one"],
            MixQuery::PointLookup => &["id", "k1k", "k10k", "g10", "score", "value", "ts"],
            MixQuery::GroupBy10 => &["g10", "n", "total"],
            MixQuery::GroupBy10k => &["k10k", "n", "total"],
            MixQuery::Join1k => &["k", "name", "n", "total"],
            MixQuery::Top100 => &["id", "score", "value"],
            MixQuery::Filter1Pct => &["id", "k10k", "value", "ts"],
            MixQuery::WideScan => &[
                "id", "name", "city", "born", "seen", "amount", "price", "active",
            ],
        }
    }

    /// Rows of the result over tables of `rows` rows.
    pub fn result_rows(self, rows: u64) -> u64 {
        match self {
            MixQuery::Select1 | MixQuery::PointLookup => 1,
            MixQuery::GroupBy10 => 10.min(rows),
            MixQuery::GroupBy10k => 10_000.min(rows),
            MixQuery::Join1k => DIM_ROWS.min(rows),
            MixQuery::Top100 => 100.min(rows),
            MixQuery::Filter1Pct => (0..rows).filter(|i| i % 10_000 < 100).count() as u64,
            MixQuery::WideScan => wide_rows(rows),
        }
    }

    /// The digest every read path must reproduce, computed by hyperd
    /// (untimed).
    pub fn expected(self, conn: &mut Connection, rows: u64) -> Result<Digest> {
        let cols = self.columns();
        let non_null = cols
            .iter()
            .map(|c| Ok(format!("count(q.{})", ident(c)?)))
            .collect::<Result<Vec<_>>>()?
            .join(" + ");
        let sql = format!(
            "SELECT count(*), sum(q.{}::BIGINT), {non_null} FROM ({}) q",
            ident(cols[0])?,
            self.sql(rows)?
        );
        let mut result = conn.execute_query_params(&sql, &[])?;
        let row = result.next().ok_or("digest query returned no row")??;
        let digest = Digest {
            rows: row.try_get::<i64>(0)? as u64,
            key_sum: row.try_get::<Option<i64>>(1)?.unwrap_or(0),
            non_null: row.try_get::<i64>(2)? as u64,
        };
        drop(result);
        if digest.rows != self.result_rows(rows) {
            return Err(format!(
                "query.mix.{}: hyperd counts {} rows, expected {}",
                self.name(),
                digest.rows,
                self.result_rows(rows)
            )
            .into());
        }
        Ok(digest)
    }
}

/// A read path of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixPath {
    /// `execute_query`, the route it chooses: what the targets are about.
    Routed,
    /// `execute_query` forced onto hyperd's Arrow stream.
    ArrowRoute,
    /// `execute_query_params` without parameters: `DataRow`s of a cached
    /// statement, as the `DataRow` route reads them.
    DataRowRoute,
    /// `query_as` into tuples, routed.
    Typed,
    /// `query_arrow`: record batches, every column read.
    Batches,
    /// `AsyncConnection::execute_query`, routed, on one long-lived
    /// connection (the route is learnt per connection).
    Async,
}

impl MixPath {
    pub const ALL: [MixPath; 6] = [
        MixPath::Routed,
        MixPath::ArrowRoute,
        MixPath::DataRowRoute,
        MixPath::Typed,
        MixPath::Batches,
        MixPath::Async,
    ];

    /// The report's variant and flavor.
    pub fn names(self) -> (&'static str, &'static str) {
        match self {
            MixPath::Routed => ("execute_query", "sync, routed"),
            MixPath::ArrowRoute => ("execute_query", "sync, Arrow route"),
            MixPath::DataRowRoute => ("execute_query_params", "sync, DataRow route"),
            MixPath::Typed => ("query_as", "sync, tuples, routed"),
            MixPath::Batches => ("query_arrow", "sync, record batches"),
            MixPath::Async => ("execute_query", "async, routed"),
        }
    }
}

/// What a read saw: rows, the sum of the first column, and how many values
/// were not NULL. Every value is decoded on the way (`touch` keeps the
/// compiler from skipping that work; it is not compared).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Digest {
    pub rows: u64,
    pub key_sum: i64,
    pub non_null: u64,
}

impl Digest {
    /// Checks `self` against `want`.
    pub fn verify(&self, what: &str, want: &Digest) -> Result<()> {
        crate::data::verify_eq(what, self, want)
    }

    /// Folds one row, decoding every value by its column's type.
    pub fn add_row(&mut self, row: &Row, touch: &mut u64) -> hyperdb_api::Result<()> {
        use hyperdb_api::types::{Date, Numeric, Timestamp};
        self.rows += 1;
        for (i, col) in row.schema().columns().iter().enumerate() {
            let seen = match col.sql_type() {
                Some(SqlType::SmallInt | SqlType::Int) => {
                    let v = row.try_get::<Option<i32>>(i)?;
                    if i == 0 {
                        self.key_sum += i64::from(v.unwrap_or(0));
                    }
                    v.map(|v| *touch ^= v as u64)
                }
                Some(SqlType::BigInt) => {
                    let v = row.try_get::<Option<i64>>(i)?;
                    if i == 0 {
                        self.key_sum += v.unwrap_or(0);
                    }
                    v.map(|v| *touch ^= v as u64)
                }
                Some(SqlType::Double) => row
                    .try_get::<Option<f64>>(i)?
                    .map(|v| *touch ^= v.to_bits()),
                Some(SqlType::Bool) => row
                    .try_get::<Option<bool>>(i)?
                    .map(|v| *touch += u64::from(v)),
                Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_)) => row
                    .try_get::<Option<&str>>(i)?
                    .map(|v| *touch += v.len() as u64),
                Some(SqlType::Date) => row
                    .try_get::<Option<Date>>(i)?
                    .map(|v| *touch ^= v.julian_day() as u64),
                Some(SqlType::Timestamp) => row
                    .try_get::<Option<Timestamp>>(i)?
                    .map(|v| *touch ^= v.micros_since_2000() as u64),
                Some(SqlType::Numeric { .. }) => row
                    .try_get::<Option<Numeric>>(i)?
                    .map(|v| *touch ^= v.unscaled() as u64),
                _ => row.raw(i)?.map(|v| *touch += v.len() as u64),
            };
            self.non_null += u64::from(seen.is_some());
        }
        Ok(())
    }
}
