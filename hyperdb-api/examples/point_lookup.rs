//! Point lookups with and without the statement cache, sync and async:
//! `SELECT v FROM t WHERE id = $1` on a 1M-row table, N iterations each
//! (default 10,000; `LOOKUPS=n`), runs interleaved. Also `ping` against
//! `SELECT 1` and an empty query. Prints median and mean latency and
//! queries/s; the figures in DEVELOPMENT.md come from here.
//!
//! `cargo run --release --example point_lookup`

use std::time::{Duration, Instant};

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, CreateMode, HyperProcess};

const ROWS: i64 = 1_000_000;
const SQL: &str = "SELECT v FROM t WHERE id = $1";

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let mean = total / samples.len() as u32;
    let median = samples[samples.len() / 2];
    println!(
        "{name:<34} median {:>7.1} us  mean {:>7.1} us  {:>8.0} queries/s",
        median.as_secs_f64() * 1e6,
        mean.as_secs_f64() * 1e6,
        samples.len() as f64 / total.as_secs_f64()
    );
}

/// The ids looked up: spread over the table, the same for every run.
fn ids(n: usize) -> Vec<i64> {
    (0..n as i64).map(|i| (i * 7_919 + 13) % ROWS).collect()
}

fn sync_run(c: &mut Connection, ids: &[i64]) -> hyperdb_api::Result<Vec<Duration>> {
    let mut samples = Vec::with_capacity(ids.len());
    for id in ids {
        let t = Instant::now();
        let mut rows = c.query(SQL, &[id])?;
        let v: i64 = rows.next().ok_or(hyperdb_api::Error::NoRows)??.try_get(0)?;
        drop(rows);
        samples.push(t.elapsed());
        assert_eq!(v, id * 2);
    }
    Ok(samples)
}

async fn async_run(c: &mut AsyncConnection, ids: &[i64]) -> hyperdb_api::Result<Vec<Duration>> {
    let mut samples = Vec::with_capacity(ids.len());
    for id in ids {
        let t = Instant::now();
        let query = c.query(SQL, &[id]);
        let mut rows = query.await?;
        let v: i64 = rows
            .next()
            .await
            .ok_or(hyperdb_api::Error::NoRows)??
            .try_get(0)?;
        drop(rows);
        samples.push(t.elapsed());
        assert_eq!(v, id * 2);
    }
    Ok(samples)
}

fn main() -> hyperdb_api::Result<()> {
    let lookups: usize = std::env::var("LOOKUPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let hyper = HyperProcess::start()?;
    let dir = std::env::temp_dir().join(format!("point_lookup_{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| hyperdb_api::Error::Io {
        context: "creating the example's directory".into(),
        source: e,
    })?;
    let db = dir.join("lookup.hyper");
    let base = ConnectOptions::new(hyper.endpoint().clone());
    let mut setup = Connection::connect_with(
        &base
            .clone()
            .with_database(&db, CreateMode::CreateAndReplace),
    )?;
    setup.execute_command("CREATE TABLE t (id BIGINT NOT NULL, v BIGINT NOT NULL)")?;
    setup.execute_command(&format!(
        "INSERT INTO t SELECT i, i * 2 FROM generate_series(0, {}) AS s(i)",
        ROWS - 1
    ))?;
    setup.close()?;
    let open = |capacity: usize| {
        base.clone()
            .with_database(&db, CreateMode::DoNotCreate)
            .with_statement_cache_capacity(capacity)
    };
    let ids = ids(lookups);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| hyperdb_api::Error::Io {
            context: "starting tokio".into(),
            source: e,
        })?;
    println!("{lookups} point lookups on {ROWS} rows, runs interleaved (warm-up first)");
    let mut results: Vec<(String, Vec<Duration>)> = Vec::new();
    for round in 0..3 {
        for capacity in [0usize, 128] {
            let label = if capacity == 0 {
                "cache off"
            } else {
                "cache on"
            };
            let mut c = Connection::connect_with(&open(capacity))?;
            let s = sync_run(&mut c, &ids)?;
            c.close()?;
            let mut a = rt.block_on(AsyncConnection::connect_with(&open(capacity)))?;
            let a_samples = rt.block_on(async_run(&mut a, &ids))?;
            rt.block_on(a.close())?;
            if round > 0 {
                for (name, samples) in [
                    (format!("sync, {label}"), s),
                    (format!("async, {label}"), a_samples),
                ] {
                    match results.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, all)) => all.extend(samples),
                        None => results.push((name, samples)),
                    }
                }
            }
        }
    }
    for (name, samples) in results {
        report(&name, samples);
    }
    // The cheapest round trip.
    let mut c = Connection::connect_with(&open(128))?;
    let mut ping = Vec::with_capacity(lookups);
    let mut select = Vec::with_capacity(lookups);
    let mut empty = Vec::with_capacity(lookups);
    for _ in 0..lookups {
        let t = Instant::now();
        c.ping()?;
        ping.push(t.elapsed());
        let t = Instant::now();
        c.execute_command("SELECT 1")?;
        select.push(t.elapsed());
        let t = Instant::now();
        c.execute_command("")?;
        empty.push(t.elapsed());
    }
    report("ping (Sync alone)", ping);
    report("execute_command(\"SELECT 1\")", select);
    report("execute_command(\"\") (empty query)", empty);
    c.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
