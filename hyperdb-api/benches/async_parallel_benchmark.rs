//! Dig deeper into async scaling: the same total rows over 1, 2, 4, ...
//! WORKERS async connections at once (one task and one table each), for
//! ingest (`AsyncChunkSender` fed by `spawn_blocking`, `AsyncArrowInserter`)
//! and for the full scan (`execute_query`, `query_arrow`).
//!
//! `cargo run -p hyperdb-api --release --example async_parallel_benchmark -- [ROWS] [WORKERS]`
//! (default 10M rows, 4 workers; `BENCH_TRANSPORT=ipc` for a Unix socket).
//! Median of 3 runs; every run checks its result. See docs/BENCHMARKS.md.

#[cfg(feature = "arrow")]
#[path = "benchmark_suite/arrow.rs"]
#[allow(dead_code)]
mod arrow;
#[path = "benchmark_suite/data.rs"]
#[allow(dead_code)]
mod data;
#[path = "benchmark_suite/env.rs"]
#[allow(dead_code)]
mod env;
#[path = "benchmark_suite/insert.rs"]
#[allow(dead_code)]
mod insert;
#[path = "benchmark_suite/query.rs"]
#[allow(dead_code)]
mod query;

use hyperdb_api::{Connection, CreateMode, HyperProcess, HyperProcessOptions};

use data::{Query, Result};
pub use env::Env;

const RUNS: usize = 3;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let workers: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4);
    let (transport, listen, _grpc) = env::transport()?;
    let db = env::data_dir()?.join("async_parallel.hyper");
    let hyper = HyperProcess::new(HyperProcessOptions::default().with_listen(listen))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(2))
        .enable_all()
        .build()?;
    let server = hyper.connect_options();
    let mut conn = Connection::connect_with(
        &server
            .clone()
            .with_database(&db, CreateMode::CreateAndReplace),
    )?;
    let mut env = Env {
        conn: &mut conn,
        rt: &rt,
        server: &server,
        db: &db,
        rows,
        workers: 1,
        grpc: None,
    };

    let mut counts: Vec<usize> = (0..).map(|k| 1 << k).take_while(|&n| n < workers).collect();
    counts.push(workers);
    println!(
        "Async connections over {transport}: {rows} rows in total, median of {RUNS} (M rows/s)"
    );
    println!(
        "  {:>5} {:>22} {:>20} {:>16} {:>14}",
        "conns", "AsyncChunkSender", "AsyncArrowInserter", "execute_query", "query_arrow"
    );
    for n in counts {
        env.workers = n;
        let mut cells = Vec::new();
        cells.push(rate(rows, &mut env, insert::async_chunk_senders)?);
        #[cfg(feature = "arrow")]
        {
            let prepared = arrow::Prepared::new(env.span(), n)?;
            cells.push(rate(rows, &mut env, |env| {
                arrow::parallel_async_insert(env, &prepared)
            })?);
        }
        #[cfg(not(feature = "arrow"))]
        cells.push("n/a".into());
        prepare_scan_tables(&mut env)?;
        let scan = |f: fn(&mut Env<'_>, Query) -> Result<(f64, data::Answer)>| {
            move |env: &mut Env<'_>| f(env, Query::FullScan).map(|(secs, _)| secs)
        };
        cells.push(rate(rows, &mut env, scan(query::parallel_async))?);
        #[cfg(feature = "arrow")]
        cells.push(rate(rows, &mut env, scan(arrow::parallel_async_query))?);
        #[cfg(not(feature = "arrow"))]
        cells.push("n/a".into());
        println!(
            "  {n:>5} {:>22} {:>20} {:>16} {:>14}",
            cells[0], cells[1], cells[2], cells[3]
        );
    }
    conn.close()?;
    drop(rt);
    drop(hyper);
    let _ = std::fs::remove_file(&db);
    Ok(())
}

/// Median rows/s of `RUNS` runs of `f`, formatted.
fn rate(
    rows: u64,
    env: &mut Env<'_>,
    mut f: impl FnMut(&mut Env<'_>) -> Result<f64>,
) -> Result<String> {
    let mut t = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        t.push(f(env)?);
    }
    t.sort_by(f64::total_cmp);
    Ok(format!("{:.2}", rows as f64 / t[t.len() / 2] / 1e6))
}

/// The tables the scans read: `measurements` for one connection, else
/// `measurements_{i}` per connection, made server-side.
fn prepare_scan_tables(env: &mut Env<'_>) -> Result<()> {
    let parts = env.span().split(env.workers);
    let names: Vec<String> = if env.workers == 1 {
        vec!["measurements".into()]
    } else {
        (0..env.workers).map(data::worker_table).collect()
    };
    for (name, span) in names.iter().zip(parts) {
        data::recreate(env.conn, name)?;
        env.conn.execute_command(&data::generate_sql(name, span)?)?;
        data::verify_table(env.conn, name, span)?;
    }
    Ok(())
}
