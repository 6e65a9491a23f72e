//! Dig deeper into Arrow ingest: how the inserter's flush threshold (bytes
//! buffered before a socket write, also the largest CopyData frame) and the
//! record batch size change throughput, sync and async, against the
//! server-side insert ceiling.
//!
//! `cargo run -p hyperdb-api --release --example arrow_batching_benchmark -- [ROWS]`
//! (default 10M; `BENCH_TRANSPORT=ipc` for a Unix socket). Median of 3
//! interleaved runs; batches are built before timing; every run checks what
//! was stored. See docs/BENCHMARKS.md.
//!
//! The smallest threshold is 64 KiB, not 1 byte: the threshold also caps the
//! CopyData frame, so 1 byte would send every byte of the stream as its own
//! frame and write (48M writes for 2M rows), which measures nothing useful.

#[path = "benchmark_suite/arrow.rs"]
#[allow(dead_code)]
mod arrow;
#[path = "benchmark_suite/ceiling.rs"]
#[allow(dead_code)]
mod ceiling;
#[path = "benchmark_suite/data.rs"]
#[allow(dead_code)]
mod data;
#[path = "benchmark_suite/env.rs"]
#[allow(dead_code)]
mod env;
#[path = "benchmark_suite/query.rs"]
#[allow(dead_code)]
mod query;

use std::time::Instant;

use hyperdb_api::arrow::DEFAULT_ARROW_FLUSH_THRESHOLD;
use hyperdb_api::arrow_array::RecordBatch;
use hyperdb_api::{
    ArrowInserter, AsyncArrowInserter, AsyncConnection, Connection, CreateMode, HyperProcess,
    HyperProcessOptions,
};

use data::{Result, Span};
pub use env::Env;

const RUNS: usize = 3;
const MIB: usize = 1 << 20;

/// One configuration: batch rows, flush threshold, async or not.
struct Case {
    label: String,
    batch_rows: u64,
    threshold: usize,
    is_async: bool,
}

fn main() -> Result<()> {
    let rows: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let (transport, listen, _grpc) = env::transport()?;
    let span = Span::new(0, rows);
    let db = env::data_dir()?.join("arrow_batching.hyper");
    let hyper = HyperProcess::new(HyperProcessOptions::default().with_listen(listen))?;
    let rt = tokio::runtime::Runtime::new()?;
    let server = hyper.connect_options();
    let mut conn = Connection::connect_with(
        &server
            .clone()
            .with_database(&db, CreateMode::CreateAndReplace),
    )?;
    let mut aconn = rt.block_on(AsyncConnection::connect_with(
        &server.with_database(&db, CreateMode::DoNotCreate),
    ))?;

    let thresholds = [
        ("64 KiB", 64 * 1024),
        ("4 MiB (default)", DEFAULT_ARROW_FLUSH_THRESHOLD),
        ("16 MiB", 16 * MIB),
        ("64 MiB", 64 * MIB),
    ];
    let mut cases = Vec::new();
    for is_async in [false, true] {
        for (name, threshold) in thresholds {
            cases.push(Case {
                label: format!("{}, 64K-row batches, flush {name}", mode(is_async)),
                batch_rows: 64 * 1024,
                threshold,
                is_async,
            });
        }
        for batch_rows in [8 * 1024, 256 * 1024, 1024 * 1024] {
            cases.push(Case {
                label: format!(
                    "{}, {}K-row batches, flush 4 MiB",
                    mode(is_async),
                    batch_rows / 1024
                ),
                batch_rows,
                threshold: DEFAULT_ARROW_FLUSH_THRESHOLD,
                is_async,
            });
        }
    }
    let mut sets: Vec<(u64, Vec<RecordBatch>)> = Vec::new();
    for case in &cases {
        if !sets.iter().any(|(r, _)| *r == case.batch_rows) {
            sets.push((case.batch_rows, arrow::batches_of(span, case.batch_rows)?));
        }
    }

    // Interleaved, so background load spreads over every case.
    let mut ceiling_times = Vec::new();
    let mut times = vec![Vec::new(); cases.len()];
    for _ in 0..RUNS {
        ceiling_times.push(ceiling::insert(&mut conn, "measurements", span)?);
        for (case, t) in cases.iter().zip(times.iter_mut()) {
            let batches = &sets
                .iter()
                .find(|(r, _)| *r == case.batch_rows)
                .ok_or("batch set missing")?
                .1;
            let table = data::recreate(&mut conn, "measurements")?;
            let start = Instant::now();
            if case.is_async {
                rt.block_on(async {
                    let mut ins = AsyncArrowInserter::new(&mut aconn, &table)
                        .await?
                        .with_flush_threshold(case.threshold);
                    for b in batches {
                        ins.insert_batch(b).await?;
                    }
                    ins.finish().await
                })?;
            } else {
                let mut ins =
                    ArrowInserter::new(&mut conn, &table)?.with_flush_threshold(case.threshold);
                for b in batches {
                    ins.insert_batch(b)?;
                }
                ins.finish()?;
            }
            t.push(start.elapsed().as_secs_f64());
            data::verify_table(&mut conn, "measurements", span)?;
        }
    }

    println!("Arrow ingest over {transport}: {rows} rows, median of {RUNS}");
    let ceiling = median(&mut ceiling_times);
    println!(
        "  {:<52} {:>7.2} M rows/s  (ceiling)",
        "INSERT ... SELECT generate_series",
        rows as f64 / ceiling / 1e6
    );
    for (case, t) in cases.iter().zip(times.iter_mut()) {
        let m = median(t);
        println!(
            "  {:<52} {:>7.2} M rows/s  {:>5.0}% of ceiling",
            case.label,
            rows as f64 / m / 1e6,
            ceiling / m * 100.0
        );
    }
    rt.block_on(aconn.close())?;
    conn.close()?;
    drop(rt);
    drop(hyper);
    let _ = std::fs::remove_file(&db);
    Ok(())
}

fn mode(is_async: bool) -> &'static str {
    if is_async {
        "AsyncArrowInserter"
    } else {
        "ArrowInserter"
    }
}

fn median(t: &mut [f64]) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}
