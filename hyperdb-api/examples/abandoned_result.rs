//! What a dropped result costs the next query: a `generate_series` of ROWS
//! rows (default 50M) is started, KEEP rows (default 1,000) read, the
//! result dropped, and `SELECT 1` timed, on each row path (DataRows, the
//! Arrow-fed rows, Arrow batches), sync and async. Each case runs REPEAT
//! times (default 3); the median and the range are printed.
//!
//! `cargo run -p hyperdb-api --release --example abandoned_result -- [ROWS] [KEEP] [REPEAT]`

use std::time::{Duration, Instant};

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, HyperProcess};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

const PATHS: [&str; 3] = ["DataRows", "Arrow rows", "Arrow batches"];

fn sync_case(
    c: &mut Connection,
    path: &str,
    sql: &str,
    keep: u64,
) -> hyperdb_api::Result<Duration> {
    match path {
        "DataRows" => {
            let mut rows = c.execute_query_params(sql, &[])?;
            for _ in 0..keep {
                rows.next_row().transpose()?;
            }
        }
        "Arrow rows" => {
            let mut rows = c.execute_query(sql)?;
            for _ in 0..keep {
                rows.next_row().transpose()?;
            }
        }
        _ => {
            let mut batches = c.query_arrow(sql)?;
            let mut n = 0;
            while n < keep {
                match batches.next() {
                    Some(b) => n += b?.num_rows() as u64,
                    None => break,
                }
            }
        }
    }
    let start = Instant::now();
    let one: i32 = c.query_scalar("SELECT 1")?;
    assert_eq!(one, 1);
    Ok(start.elapsed())
}

async fn async_case(
    c: &mut AsyncConnection,
    path: &str,
    sql: &str,
    keep: u64,
) -> hyperdb_api::Result<Duration> {
    match path {
        "DataRows" => {
            let mut rows = c.execute_query_params(sql, &[]).await?;
            for _ in 0..keep {
                rows.next_row().await.transpose()?;
            }
        }
        "Arrow rows" => {
            let mut rows = c.execute_query(sql).await?;
            for _ in 0..keep {
                rows.next_row().await.transpose()?;
            }
        }
        _ => {
            let mut batches = c.query_arrow(sql).await?;
            let mut n = 0;
            while n < keep {
                match batches.next().await {
                    Some(b) => n += b?.num_rows() as u64,
                    None => break,
                }
            }
        }
    }
    let start = Instant::now();
    let one: i32 = c.query_scalar("SELECT 1").await?;
    assert_eq!(one, 1);
    Ok(start.elapsed())
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{what:<28} next query after the drop: median {:>9.2} ms  (min {:.2}, max {:.2})",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows = arg(1, 50_000_000);
    let keep = arg(2, 1_000);
    let repeat = arg(3, 3).max(1);
    let sql = format!("SELECT i::BIGINT FROM generate_series(1, {rows}) g(i)");
    let hyper = HyperProcess::start()?;
    let options = ConnectOptions::new(hyper.endpoint().clone());
    println!("{rows} rows, {keep} read before the drop, {repeat} runs each");
    let mut c = Connection::connect_with(&options)?;
    for path in PATHS {
        let times = (0..repeat)
            .map(|_| sync_case(&mut c, path, &sql, keep))
            .collect::<hyperdb_api::Result<Vec<_>>>()?;
        report(&format!("sync, {path}"), times);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut c = AsyncConnection::connect_with(&options).await?;
        for path in PATHS {
            let mut times = Vec::new();
            for _ in 0..repeat {
                times.push(async_case(&mut c, path, &sql, keep).await?);
            }
            report(&format!("async, {path}"), times);
        }
        Ok::<(), hyperdb_api::Error>(())
    })?;
    Ok(())
}
