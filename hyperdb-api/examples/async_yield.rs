//! Async throughput and how long other tasks wait meanwhile: ROWS rows
//! (default 10M) of the benchmark schema through `AsyncInserter`, then
//! read back as rows (`execute_query`, Arrow-fed; `execute_query_params`,
//! DataRows) and as Arrow batches, each on a current-thread runtime next
//! to a ticker task. Printed per workload: the median time and rate over
//! REPEAT runs (default 3), the client's CPU time per row (this thread's,
//! which runs the whole runtime; the figure to compare on a busy machine),
//! and the longest the ticker waited for a turn (the worst stall another
//! task would see).
//!
//! `cargo run -p hyperdb-api --release --example async_yield -- [ROWS] [REPEAT]`

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, AsyncInserter, ConnectOptions, CreateMode, HyperProcess, TableDefinition,
};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn table() -> TableDefinition {
    TableDefinition::new("measurements")
        .with_not_null_column("id", SqlType::Int)
        .with_column("sensor_id", SqlType::Int)
        .with_column("value", SqlType::Double)
        .with_column("timestamp", SqlType::BigInt)
}

/// CPU time this thread has used (Linux: utime + stime of its `stat`, in
/// clock ticks of 10 ms; zero elsewhere).
fn thread_cpu() -> Duration {
    let ticks = std::fs::read_to_string("/proc/thread-self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which may hold spaces): state
            // is the 3rd field, utime the 14th, stime the 15th.
            let rest = &s[s.rfind(')')? + 2..];
            let mut fields = rest.split_whitespace().skip(11);
            let utime: u64 = fields.next()?.parse().ok()?;
            let stime: u64 = fields.next()?.parse().ok()?;
            Some(utime + stime)
        })
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// One run: wall time, longest wait of the ticker, rows, client CPU time.
type Run = (Duration, Duration, u64, Duration);

/// Runs `work` next to a task that notes the longest gap between its turns.
async fn timed<F: std::future::Future<Output = hyperdb_api::Result<u64>>>(
    work: F,
) -> hyperdb_api::Result<Run> {
    let worst = Rc::new(Cell::new(Duration::ZERO));
    let seen = worst.clone();
    let ticker = tokio::task::spawn_local(async move {
        let mut last = Instant::now();
        loop {
            tokio::task::yield_now().await;
            let now = Instant::now();
            seen.set(seen.get().max(now - last));
            last = now;
        }
    });
    let (start, cpu) = (Instant::now(), thread_cpu());
    let n = work.await?;
    let (took, cpu) = (start.elapsed(), thread_cpu() - cpu);
    ticker.abort();
    Ok((took, worst.get(), n, cpu))
}

async fn insert(c: &mut AsyncConnection, rows: u64) -> hyperdb_api::Result<u64> {
    let mut ins = AsyncInserter::new(c, &table()).await?;
    for i in 0..rows as i32 {
        ins.add_row(&[
            &i,
            &Some(i % 100),
            &Some(f64::from(i) * 0.5),
            &Some(i64::from(i)),
        ])
        .await?;
    }
    ins.execute().await
}

const SCAN: &str = "SELECT id, sensor_id, value, timestamp FROM measurements";

/// Each read path in a function of its own, so that a profile (callgrind's
/// inclusive cost, say) tells them apart.
async fn read_rows_arrow(c: &mut AsyncConnection) -> hyperdb_api::Result<u64> {
    let mut rows = c.execute_query(SCAN).await?;
    let (mut n, mut sum) = (0u64, 0i64);
    while let Some(row) = rows.next_row().await {
        sum += i64::from(row?.try_get::<i32>(0)?);
        n += 1;
    }
    std::hint::black_box(sum);
    Ok(n)
}

async fn read_rows_data_rows(c: &mut AsyncConnection) -> hyperdb_api::Result<u64> {
    let mut rows = c.execute_query_params(SCAN, &[]).await?;
    let (mut n, mut sum) = (0u64, 0i64);
    while let Some(row) = rows.next_row().await {
        sum += i64::from(row?.try_get::<i32>(0)?);
        n += 1;
    }
    std::hint::black_box(sum);
    Ok(n)
}

async fn read_batches(c: &mut AsyncConnection) -> hyperdb_api::Result<u64> {
    let mut batches = c.query_arrow(SCAN).await?;
    let mut n = 0u64;
    while let Some(b) = batches.next().await {
        n += b?.num_rows() as u64;
    }
    Ok(n)
}

fn report(what: &str, mut runs: Vec<Run>) {
    let worst = runs.iter().map(|r| r.1).max().unwrap_or_default();
    let mut cpu: Vec<Duration> = runs.iter().map(|r| r.3).collect();
    cpu.sort();
    runs.sort_by_key(|r| r.0);
    let (took, _, n, _) = runs[runs.len() / 2];
    let secs = took.as_secs_f64();
    println!(
        "{what:<28} median {secs:>6.3} s {:>6.2} M rows/s, client CPU {:>5.1} ns/row, \
         longest wait of another task {:>8.2} ms",
        n as f64 / secs / 1e6,
        cpu[cpu.len() / 2].as_secs_f64() * 1e9 / n as f64,
        worst.as_secs_f64() * 1e3
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows = arg(1, 10_000_000);
    let repeat = arg(2, 3).max(1);
    let hyper = HyperProcess::start()?;
    let db = std::env::temp_dir().join(format!("async_yield_{}.hyper", std::process::id()));
    let options = ConnectOptions::new(hyper.endpoint().clone())
        .with_database(&db, CreateMode::CreateAndReplace);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    println!("{rows} rows, {repeat} runs each, current-thread runtime");
    local.block_on(&rt, async {
        let mut c = AsyncConnection::connect_with(&options).await?;
        c.execute_command(&table().create_table_sql(false)?).await?;
        let mut runs = Vec::new();
        for _ in 0..repeat {
            c.execute_command("DELETE FROM measurements").await?;
            runs.push(timed(insert(&mut c, rows)).await?);
        }
        report("AsyncInserter (Arrow)", runs);
        let mut runs = Vec::new();
        for _ in 0..repeat {
            runs.push(timed(read_rows_arrow(&mut c)).await?);
        }
        report("read, execute_query", runs);
        let mut runs = Vec::new();
        for _ in 0..repeat {
            runs.push(timed(read_rows_data_rows(&mut c)).await?);
        }
        report("read, execute_query_params", runs);
        let mut runs = Vec::new();
        for _ in 0..repeat {
            runs.push(timed(read_batches(&mut c)).await?);
        }
        report("read, query_arrow", runs);
        c.close().await
    })?;
    let _ = std::fs::remove_file(&db);
    Ok(())
}
