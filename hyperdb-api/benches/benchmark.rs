//! Dig deeper into sync ingest: one `Inserter` thread against
//! `ChunkSender::send_parallel` with 1..=THREADS encoder threads, over TCP
//! and over a Unix domain socket, each against the server-side insert
//! ceiling measured on the same server. One more row sends chunks that were
//! encoded before the clock started: the wire and hyperd's COPY alone, so
//! the gap to the other rows is the client's encoding.
//!
//! `cargo run -p hyperdb-api --release --example benchmark -- [ROWS] [THREADS]`
//! (default 10M rows, 4 threads). Median of 3 interleaved runs per path;
//! every run checks what was stored. See docs/BENCHMARKS.md.

#[path = "benchmark_suite/ceiling.rs"]
#[allow(dead_code)]
mod ceiling;
#[path = "benchmark_suite/data.rs"]
#[allow(dead_code)]
mod data;
#[path = "benchmark_suite/env.rs"]
#[allow(dead_code)]
mod env;
#[path = "benchmark_suite/insert.rs"]
#[allow(dead_code)]
mod insert;

use std::time::Instant;

use hyperdb_api::{
    ChunkSender, Connection, CreateMode, HyperProcess, HyperProcessOptions, InsertChunk, Listen,
};

use data::{Result, CHUNK_ROWS};
pub use env::Env;

const RUNS: usize = 3;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4);
    let db = env::data_dir()?.join("benchmark.hyper");

    for (name, listen) in [("TCP", Listen::Tcp), ("Unix socket", Listen::Unix)] {
        let hyper = HyperProcess::new(HyperProcessOptions::default().with_listen(listen))?;
        let rt = tokio::runtime::Runtime::new()?;
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
        // (label, encoder threads, insert path); 0 threads = the ceiling.
        type Path = fn(&mut Env<'_>) -> Result<f64>;
        let mut paths: Vec<(String, usize, Path)> = vec![
            ("INSERT ... SELECT (ceiling)".into(), 0, |env| {
                ceiling::insert(env.conn, "measurements", env.span())
            }),
            ("Inserter (HyperBinary), 1 thread".into(), 1, |env| {
                insert::inserter(env, hyperdb_api::InsertFormat::HyperBinary)
            }),
            ("Inserter (default format), 1 thread".into(), 1, |env| {
                insert::inserter(env, hyperdb_api::InsertFormat::default())
            }),
            ("ChunkSender, encoded before timing".into(), 1, pre_encoded),
        ];
        for t in 1..=threads {
            paths.push((
                format!("ChunkSender, {t} encoder thread(s)"),
                t,
                insert::chunk_sender,
            ));
        }
        // Interleaved, so background load spreads over every path.
        let mut times = vec![Vec::new(); paths.len()];
        for _ in 0..RUNS {
            for ((_, t, path), times) in paths.iter().zip(times.iter_mut()) {
                env.workers = (*t).max(1);
                times.push(path(&mut env)?);
            }
        }
        println!("{name}: {rows} rows, median of {RUNS}");
        let ceiling = median(&mut times[0]);
        for ((label, _, _), t) in paths.iter().zip(times.iter_mut()) {
            let m = median(t);
            println!(
                "  {label:<36} {:>7.2} M rows/s  {:>5.0}% of ceiling  ({m:.3} s)",
                rows as f64 / m / 1e6,
                ceiling / m * 100.0
            );
        }
        conn.close()?;
        drop(rt);
        drop(hyper);
    }
    let _ = std::fs::remove_file(&db);
    Ok(())
}

/// `ChunkSender` with every chunk encoded before the clock starts: only the
/// wire and hyperd's HyperBinary COPY are timed, so the gap to the other
/// rows is the client's encoding.
fn pre_encoded(env: &mut Env<'_>) -> Result<f64> {
    let span = env.span();
    let table = data::recreate(env.conn, "measurements")?;
    let mut chunks = Vec::new();
    for part in span.chunks(CHUNK_ROWS) {
        let mut chunk = InsertChunk::new(&table)?;
        insert::fill(&mut chunk, part)?;
        chunks.push(chunk);
    }
    let start = Instant::now();
    let mut sender = ChunkSender::new(env.conn, &table)?;
    for chunk in &mut chunks {
        sender.send(chunk)?;
    }
    sender.execute()?;
    let secs = start.elapsed().as_secs_f64();
    data::verify_table(env.conn, "measurements", span)?;
    Ok(secs)
}

fn median(t: &mut [f64]) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}
