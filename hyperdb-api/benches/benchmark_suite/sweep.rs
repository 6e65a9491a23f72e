//! The scale sweep (`BENCH_SCALE=1e5,1e6,1e7`): the headline paths and
//! their ceilings at each size, with the client's peak RSS per path, so a
//! reader sees whether cost grows linearly and memory stays flat.
//!
//! Headline paths: `Inserter` (its default, Arrow), `ArrowInserter` fed
//! record batches built as they are sent (the fastest insert path whose
//! memory does not grow with the table: the suite's own `ArrowInserter`
//! row builds every batch up front, as a caller holding the data would,
//! which at 1e8 rows is 2.4 GB of batches before a byte is sent), and the
//! full scan through `execute_query`, `execute_query_params` read as
//! tuples, and `query_arrow`, all sync on one connection; with the insert
//! ceiling and both drains of the scan, so every point is also a % of
//! ceiling. Sizes run in ascending order on the one server; each size
//! rebuilds the scan table server-side (untimed).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use hyperdb_api::{ArrowInserter, InsertFormat};

use crate::ceiling::{self, Drain};
use crate::data::{self, Query, Result, CHUNK_ROWS};
use crate::report::Kind;
use crate::suite::{self, Suite};
use crate::{insert, query, rss, Env};

/// The variable that turns the sweep on.
pub const ENV: &str = "BENCH_SCALE";

/// Smallest and largest size: the suite's own limits on `ROWS` (ids are INT).
const MIN_ROWS: u64 = 1_000;
const MAX_ROWS: u64 = i32::MAX as u64;

/// A `BENCH_SCALE` value the sweep cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScaleError {
    #[error("{ENV} is set but names no size: give sizes like `1e5,1e6,1e7`")]
    Empty,
    #[error("{ENV}: `{value}` is not a row count (write it as 100000, 1e5, 100k or 10M)")]
    NotANumber { value: String },
    #[error("{ENV}: `{value}` is not a whole number of rows ({rows})")]
    Fractional { value: String, rows: f64 },
    #[error("{ENV}: `{value}` is {rows} rows; each size must be between {MIN_ROWS} and {MAX_ROWS} (ids are INT)")]
    OutOfRange { value: String, rows: f64 },
}

/// One size: `100000`, `100_000`, `1e5`, `2.5e6`, `100k`, `10M` (`k`, `M`,
/// `G` are powers of 1000, either case).
pub fn parse_size(text: &str) -> std::result::Result<u64, ScaleError> {
    let value = text.trim();
    let not_a_number = || ScaleError::NotANumber {
        value: value.to_owned(),
    };
    let digits = value.replace('_', "");
    let (number, factor) = match digits.char_indices().last() {
        Some((i, 'k' | 'K')) => (&digits[..i], 1e3),
        Some((i, 'm' | 'M')) => (&digits[..i], 1e6),
        Some((i, 'g' | 'G')) => (&digits[..i], 1e9),
        _ => (digits.as_str(), 1.0),
    };
    // `f64::from_str` takes `inf` and `NaN`; a size is digits, a point and
    // an exponent.
    if number.is_empty()
        || !number
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return Err(not_a_number());
    }
    let rows = number.parse::<f64>().map_err(|_| not_a_number())? * factor;
    if !rows.is_finite() {
        return Err(not_a_number());
    }
    if rows.fract() != 0.0 {
        return Err(ScaleError::Fractional {
            value: value.to_owned(),
            rows,
        });
    }
    if !(MIN_ROWS as f64..=MAX_ROWS as f64).contains(&rows) {
        return Err(ScaleError::OutOfRange {
            value: value.to_owned(),
            rows,
        });
    }
    // Whole and within 1000..2^31-1: exact as u64.
    Ok(rows as u64)
}

/// A comma-separated list of sizes, ascending, duplicates dropped.
pub fn parse_sizes(text: &str) -> std::result::Result<Vec<u64>, ScaleError> {
    let mut sizes = text
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(parse_size)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if sizes.is_empty() {
        return Err(ScaleError::Empty);
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

/// `BENCH_SCALE` from the environment: `None` when unset or empty.
pub fn from_env() -> std::result::Result<Option<Vec<u64>>, ScaleError> {
    match std::env::var(ENV) {
        Ok(v) if !v.trim().is_empty() => parse_sizes(&v).map(Some),
        _ => Ok(None),
    }
}

/// Peak client RSS per (rows, "workload | variant | flavor"): the highest
/// of its executions at that size, in bytes.
#[derive(Debug, Default)]
pub struct Peaks(RefCell<BTreeMap<(u64, String), u64>>);

impl Peaks {
    fn record(&self, rows: u64, label: &str, peak: u64) {
        let mut map = self.0.borrow_mut();
        let slot = map.entry((rows, label.to_owned())).or_insert(0);
        *slot = (*slot).max(peak);
    }

    /// The peak recorded for `label` at `rows`.
    pub fn get(&self, rows: u64, label: &str) -> Option<u64> {
        self.0.borrow().get(&(rows, label.to_owned())).copied()
    }

    #[cfg(test)]
    pub fn insert(&self, rows: u64, label: &str, peak: u64) {
        self.record(rows, label, peak);
    }
}

/// Wraps a workload so each execution resets the peak RSS before it and
/// records the peak after it (setup and verification included: they are
/// small next to the data path, and the peak is the process's).
fn measured<'p>(
    peaks: &'p Peaks,
    names: [&str; 3],
    mut exec: impl FnMut(&mut Env<'_>) -> Result<(f64, u64)> + 'p,
) -> impl FnMut(&mut Env<'_>) -> Result<(f64, u64)> + 'p {
    let label = names.join(" | ");
    move |env| {
        rss::reset_peak()?;
        let out = exec(env)?;
        peaks.record(env.rows, &label, rss::current()?.peak);
        Ok(out)
    }
}

/// `ArrowInserter` fed one 64K-row record batch at a time, each built from
/// the row formula just before it is sent (timed: building and sending).
fn streamed_arrow_insert(env: &mut Env<'_>) -> Result<f64> {
    let span = env.span();
    let table = data::recreate(env.conn, "measurements")?;
    let start = Instant::now();
    let mut ins = ArrowInserter::new(env.conn, &table)?;
    for part in span.chunks(CHUNK_ROWS) {
        for batch in crate::arrow::batches(part)? {
            ins.insert_batch(&batch)?;
        }
    }
    ins.finish()?;
    let secs = start.elapsed().as_secs_f64();
    data::verify_table(env.conn, "measurements", span)?;
    Ok(secs)
}

/// A read workload of `query.rs` / `arrow.rs`.
type ReadPath = fn(&mut Env<'_>, Query) -> Result<(f64, data::Answer)>;

/// Runs the headline paths at each of `sizes` (ascending), into `suite`'s
/// records (one set per size, `rows` telling them apart) and `peaks`.
pub fn run(suite: &mut Suite, env: &mut Env<'_>, sizes: &[u64], peaks: &Peaks) -> Result<()> {
    for &rows in sizes {
        env.rows = rows;
        suite.log(&format!("scale sweep: {rows} rows"));

        let mut group = Vec::new();
        let names = [
            "insert.ceiling",
            "INSERT ... SELECT generate_series",
            "server",
        ];
        let exec = measured(peaks, names, move |env| {
            Ok((ceiling::insert(env.conn, "measurements", env.span())?, rows))
        });
        suite.add(&mut group, Kind::InsertCeiling, names, exec);
        let names = ["insert.bulk", "Inserter", "sync, Arrow (default)"];
        let exec = measured(peaks, names, move |env| {
            Ok((insert::inserter(env, InsertFormat::ArrowStream)?, rows))
        });
        suite.add(&mut group, Kind::Insert, names, exec);
        let names = [
            "insert.bulk",
            "ArrowInserter",
            "sync, batches built as sent",
        ];
        let exec = measured(peaks, names, move |env| {
            Ok((streamed_arrow_insert(env)?, rows))
        });
        suite.add(&mut group, Kind::Insert, names, exec);
        suite.run(env, group)?;

        suite.log("preparing the scan table server-side (untimed)");
        suite::prepare_scan_table(env, "measurements", env.span())?;
        let q = Query::FullScan;
        let db = env.db.to_string_lossy().into_owned();
        let mut group = Vec::new();
        for (kind, name, flavor, how) in [
            (
                Kind::RowCeiling(q),
                "query.row_ceiling",
                "DataRow drain",
                Drain::Rows,
            ),
            (
                Kind::ArrowCeiling(q),
                "query.ceiling",
                "Arrow IPC drain",
                Drain::Arrow,
            ),
        ] {
            let db = &db;
            let names = [name, q.name(), flavor];
            let exec = measured(peaks, names, move |env| {
                let secs = ceiling::drain(env.server.config(), db, "measurements", q, how, rows)?;
                Ok((secs, rows))
            });
            suite.add(&mut group, kind, names, exec);
        }
        let paths: [(Kind, &str, &str, ReadPath); 3] = [
            (Kind::RowQuery(q), "execute_query", "sync", query::sync),
            (
                Kind::RowQuery(q),
                "execute_query_params + typed",
                "sync, DataRows, tuples",
                query::sync_data_rows_typed,
            ),
            (
                Kind::ArrowQuery(q),
                "query_arrow",
                "sync",
                crate::arrow::sync_query,
            ),
        ];
        for (kind, variant, flavor, path) in paths {
            let names = ["query.full_scan", variant, flavor];
            let exec = measured(peaks, names, move |env| {
                path(env, q).map(|(s, a)| (s, a.result_rows()))
            });
            suite.add(&mut group, kind, names, exec);
        }
        suite.run(env, group)?;
        // The next size rebuilds the table; dropping it now returns the
        // space before the next insert group grows the file.
        env.conn
            .execute_command(&format!("DROP TABLE {}", data::ident("measurements")?))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_every_spelling() {
        for (text, rows) in [
            ("1e5", 100_000),
            ("1E7", 10_000_000),
            ("2.5e6", 2_500_000),
            ("10000000", 10_000_000),
            ("10_000_000", 10_000_000),
            (" 100k ", 100_000),
            ("10M", 10_000_000),
            ("1.5m", 1_500_000),
            ("1G", 1_000_000_000),
            ("1e3", 1_000),
            ("2147483647", 2_147_483_647),
        ] {
            assert_eq!(parse_size(text), Ok(rows), "{text}");
        }
    }

    #[test]
    fn lists_are_sorted_and_deduplicated() {
        assert_eq!(
            parse_sizes("1e7,1e5, 1e6,100000,"),
            Ok(vec![100_000, 1_000_000, 10_000_000])
        );
    }

    #[test]
    fn bad_sizes_are_typed_errors_naming_the_value() {
        let not = |v: &str| ScaleError::NotANumber { value: v.into() };
        for text in ["abc", "1e", "k", "10MB", "inf", "NaN", "-"] {
            let err = parse_sizes(text).unwrap_err();
            assert!(
                matches!(&err, ScaleError::NotANumber { .. }),
                "{text}: {err:?}"
            );
        }
        assert_eq!(parse_size("ten"), Err(not("ten")));
        let err = parse_size("1.5e3x").unwrap_err();
        assert!(err.to_string().contains("`1.5e3x`"), "{err}");
        assert_eq!(
            parse_size("1.0005e3"),
            Err(ScaleError::Fractional {
                value: "1.0005e3".into(),
                rows: 1000.5
            })
        );
        for (text, rows) in [("100", 100.0), ("3e9", 3e9), ("-1e5", -1e5), ("0", 0.0)] {
            assert_eq!(
                parse_size(text),
                Err(ScaleError::OutOfRange {
                    value: text.into(),
                    rows
                }),
                "{text}"
            );
        }
        let msg = parse_size("1e10").unwrap_err().to_string();
        assert!(
            msg.contains("BENCH_SCALE") && msg.contains("`1e10`") && msg.contains("2147483647"),
            "{msg}"
        );
        assert_eq!(parse_sizes(""), Err(ScaleError::Empty));
        assert_eq!(parse_sizes(" , ,"), Err(ScaleError::Empty));
        // One bad size fails the whole list, naming that size.
        assert_eq!(parse_sizes("1e5,1e6,x7"), Err(not("x7")));
    }

    #[test]
    fn peaks_keep_the_highest_execution_per_size_and_path() {
        let peaks = Peaks::default();
        peaks.insert(1000, "a | b | c", 10);
        peaks.insert(1000, "a | b | c", 30);
        peaks.insert(1000, "a | b | c", 20);
        peaks.insert(2000, "a | b | c", 5);
        assert_eq!(peaks.get(1000, "a | b | c"), Some(30));
        assert_eq!(peaks.get(2000, "a | b | c"), Some(5));
        assert_eq!(peaks.get(3000, "a | b | c"), None);
    }
}
