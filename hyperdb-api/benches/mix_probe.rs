//! Where the two read routes' costs differ, query by query: the mix of the
//! benchmark suite (`query.mix.*`) drained bare as `DataRow`s and as an
//! Arrow COPY, and read through `execute_query` and `execute_query_params`,
//! interleaved; with hyperd's own accounting of each statement (its
//! `query-end` log events: compilation, execution, CPU, threads). The
//! figures behind "Choosing the read route" in DEVELOPMENT.md come from
//! here.
//!
//! ```text
//! cargo run -p hyperdb-api --release --example mix_probe -- [ROWS] [ROUNDS]
//! ```
//!
//! `MIX_PROBE_ONLY=name,...` limits the queries (e.g. `group_by_10`),
//! `MIX_PROBE_PATHS=name,...` what is timed (see [`PATHS`]).

#[allow(dead_code)]
#[path = "benchmark_suite/ceiling.rs"]
mod ceiling;
#[allow(dead_code)]
#[path = "benchmark_suite/data.rs"]
mod data;
#[allow(dead_code)]
#[path = "benchmark_suite/mix.rs"]
mod mix;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hyperdb_api::{Connection, CreateMode, HyperProcess, HyperProcessOptions, Listen};

use ceiling::{Drain, RawConn};
use data::Result;
use hyperdb_api_core::protocol::frontend;
use mix::{Digest, MixQuery};

/// What is timed, in each round's order: bare drains of the SQL as
/// HyperBinary DataRows (extended protocol; and only Bind/Execute/Sync of
/// it prepared once), as an Arrow COPY, as text rows
/// (simple Query) and as a CSV COPY; then the two client routes.
const PATHS: [&str; 7] = [
    "rows drain",
    "bound drain",
    "arrow drain",
    "text drain",
    "csv drain",
    "execute_query",
    "params",
];

/// Executions per round: until this many seconds were timed...
const MIN_ROUND_SECS: f64 = 0.2;
/// ... or this many.
const MAX_PER_ROUND: usize = 20;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map_or(Ok(10_000_000), |s| s.parse())?;
    let rounds: usize = args.next().map_or(Ok(7), |s| s.parse())?;
    let only = std::env::var("MIX_PROBE_ONLY").ok();
    let paths = std::env::var("MIX_PROBE_PATHS").ok();
    let dir = tempfile::tempdir()?;
    let hyper = HyperProcess::new(
        HyperProcessOptions::default()
            .with_listen(Listen::Tcp)
            .with_log_dir(dir.path()),
    )?;
    let db = dir.path().join("mix.hyper");
    let server = hyper.connect_options();
    let mut conn =
        Connection::connect_with(&server.clone().with_database(&db, CreateMode::Create))?;
    let t = Instant::now();
    mix::create_tables(&mut conn, rows)?;
    println!(
        "tables of {rows} rows made in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let dbs = db.to_string_lossy().into_owned();
    let mut raw = RawConn::open(server.config(), &dbs)?;
    let log = dir.path().join("hyperd.log");

    for q in MixQuery::ALL {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|n| n == q.name()))
        {
            continue;
        }
        let sql = q.sql(rows)?;
        let want = q.expected(&mut conn, rows)?;
        raw.drain_with(|out| {
            frontend::close(
                out,
                hyperdb_api_core::protocol::frontend::Target::Statement,
                "mix",
            )?;
            frontend::parse(out, "mix", &sql, &[])?;
            frontend::sync(out);
            Ok(())
        })?;
        let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        let mut first: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for _ in 0..=rounds {
            for path in PATHS {
                if paths
                    .as_deref()
                    .is_some_and(|o| !o.split(',').any(|n| n == path))
                {
                    continue;
                }
                let mut timed = Vec::new();
                while timed.len() < MAX_PER_ROUND && timed.iter().sum::<f64>() < MIN_ROUND_SECS {
                    let secs = match path {
                        "text drain" | "csv drain" => {
                            let text = if path == "text drain" {
                                sql.clone()
                            } else {
                                format!("COPY ({sql}) TO STDOUT WITH (FORMAT CSV)")
                            };
                            let d = raw.drain_with(|out| frontend::query(out, &text))?;
                            if d.rows != want.rows {
                                return Err(format!("{path}: {} rows", d.rows).into());
                            }
                            first.entry(path).or_default().push(d.first_byte_secs);
                            d.secs
                        }
                        "bound drain" => {
                            // B/E/S of a statement prepared once, as a
                            // cached statement runs.
                            let d = raw.drain_with(|out| {
                                frontend::bind(out, "", "mix", &[], std::iter::empty(), &[2])?;
                                frontend::execute(out, "", 0)?;
                                frontend::sync(out);
                                Ok(())
                            })?;
                            d.expect_rows(want.rows)?;
                            first.entry(path).or_default().push(d.first_byte_secs);
                            d.secs
                        }
                        "rows drain" | "arrow drain" => {
                            let how = if path == "rows drain" {
                                Drain::Rows
                            } else {
                                Drain::Arrow
                            };
                            let d = raw.drain(&sql, how)?;
                            d.expect_rows(want.rows)?;
                            first.entry(path).or_default().push(d.first_byte_secs);
                            d.secs
                        }
                        _ => {
                            let mut digest = Digest::default();
                            let mut touch = 0u64;
                            let start = Instant::now();
                            let mut result = if path == "params" {
                                conn.execute_query_params(&sql, &[])?
                            } else {
                                conn.execute_query(&sql)?
                            };
                            while let Some(row) = result.next_row() {
                                digest.add_row(row?, &mut touch)?;
                            }
                            drop(result);
                            let secs = start.elapsed().as_secs_f64();
                            std::hint::black_box(touch);
                            digest.verify(path, &want)?;
                            secs
                        }
                    };
                    timed.push(secs);
                }
                times.entry(path).or_default().extend(timed);
            }
        }
        println!("\n== {} ({} rows)", q.name(), want.rows);
        for (path, t) in &mut times {
            let (med, p95) = stats(t);
            let fb = first.get_mut(path).map(|f| stats(f).0);
            println!(
                "  {path:<14} median {:>9.3} ms  p95 {:>9.3} ms  n={:<4}{}",
                med * 1e3,
                p95 * 1e3,
                t.len(),
                fb.map_or(String::new(), |f| format!(" first byte {:.3} ms", f * 1e3))
            );
        }
        server_stats(&log, &sql)?;
    }
    drop(raw);
    conn.close()?;
    if let Ok(keep) = std::env::var("MIX_PROBE_LOG") {
        std::fs::copy(&log, &keep)?;
    }
    hyper.shutdown(Duration::from_secs(10))?;
    Ok(())
}

/// Median and 95th percentile.
fn stats(t: &mut [f64]) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    let at = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.95))
}

/// hyperd's `query-end` events for `sql` run plainly and as an Arrow COPY:
/// medians of its timings.
fn server_stats(log: &std::path::Path, sql: &str) -> Result<()> {
    let text = std::fs::read_to_string(log)?;
    let copy = format!("COPY ({sql}) TO STDOUT WITH (FORMAT ARROWSTREAM)");
    let csv = format!("COPY ({sql}) TO STDOUT WITH (FORMAT CSV)");
    let mut by: BTreeMap<&str, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    let mut cache: BTreeMap<(&str, String), usize> = BTreeMap::new();
    // A plain (extended-protocol) statement is logged at Parse with its
    // text and at Execute rewritten (names qualified): follow each
    // session's last parsed text.
    let mut parsed: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        let parse = line.contains("\"k\":\"connection-handle-parse\"");
        if !parse && !line.contains("\"k\":\"query-end\"") {
            continue;
        }
        let e: serde_json::Value = serde_json::from_str(line)?;
        let sess = e["sess"].as_str().unwrap_or("").to_owned();
        let v = &e["v"];
        if parse {
            parsed.insert(sess, v["query"].as_str().unwrap_or("").to_owned());
            continue;
        }
        let stmt = v["query-trunc"].as_str().unwrap_or("");
        let form = if stmt == copy {
            "copy"
        } else if stmt == csv {
            "csv"
        } else if stmt == sql {
            "text"
        } else if v["statement"] == "SELECT" && parsed.get(&sess).is_some_and(|p| p == sql) {
            "plain"
        } else {
            continue;
        };
        let f = |p: &[&str]| p.iter().fold(v, |v, k| &v[*k]).as_f64();
        let m = by.entry(form).or_default();
        for (name, path) in [
            ("elapsed", &["elapsed"][..]),
            ("compile", &["pre-execution", "compilation-time"]),
            ("pre-exec", &["pre-execution", "elapsed"]),
            ("exec", &["execution", "elapsed"]),
            ("exec cpu", &["execution", "threads", "cpu-time"]),
            ("exec thread", &["execution", "threads", "thread-time"]),
            (
                "adaptive compile",
                &["execution", "adaptive-compilation", "compilation-time"],
            ),
            ("exec wait", &["execution", "threads", "wait-time"]),
            ("copydata", &["copydata-time"]),
            (
                "lowlatency",
                &["execution", "adaptive-execution-total-time", "lowlatency"],
            ),
            (
                "optimized",
                &["execution", "adaptive-execution-total-time", "optimized"],
            ),
            ("schedule", &["time-to-schedule"]),
        ] {
            if let Some(x) = f(path) {
                m.entry(name).or_default().push(x);
            }
        }
        let status = v["plan-cache-status"].as_str().unwrap_or("?").to_owned();
        *cache.entry((form, status)).or_default() += 1;
    }
    for (form, m) in &mut by {
        let cells: Vec<String> = m
            .iter_mut()
            .map(|(k, t)| {
                let (med, _) = stats(t);
                format!("{k} {:.3} (n={})", med * 1e3, t.len())
            })
            .collect();
        println!("  hyperd {form:<5} (ms) {}", cells.join(", "));
    }
    println!("  plan cache: {cache:?}");
    Ok(())
}
