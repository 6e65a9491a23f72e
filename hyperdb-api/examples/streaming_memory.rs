//! Client memory while streaming a large result: the peak RSS growth over a
//! `generate_series` scan of ROWS rows (default 100M), through both row
//! paths (`execute_query`: Arrow-fed; `execute_query_params`: DataRows).
//!
//! `cargo run -p hyperdb-api --release --example streaming_memory -- [ROWS]`

use std::time::Instant;

use hyperdb_api::{ConnectOptions, Connection, HyperProcess, Rows};

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

fn drain(rows: Rows<'_>, base: u64) -> hyperdb_api::Result<(i64, i64, u64)> {
    let (mut n, mut sum, mut peak) = (0i64, 0i64, 0u64);
    for row in rows {
        let row = row?;
        n += 1;
        sum += row.try_get::<i64>(0)?;
        if n % 1_000_000 == 0 {
            peak = peak.max(rss().saturating_sub(base));
        }
    }
    Ok((n, sum, peak))
}

fn main() -> hyperdb_api::Result<()> {
    let rows: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000_000);
    let hyper = HyperProcess::start()?;
    let mut conn = Connection::connect_with(&ConnectOptions::new(hyper.endpoint().clone()))?;
    let sql = format!("SELECT i::bigint FROM generate_series(1, {rows}) g(i)");
    for path in ["execute_query (Arrow)", "execute_query_params (DataRows)"] {
        let base = rss();
        let start = Instant::now();
        let result = if path.starts_with("execute_query (") {
            conn.execute_query(&sql)?
        } else {
            conn.execute_query_params(&sql, &[])?
        };
        let (n, sum, peak) = drain(result, base)?;
        assert_eq!(n, rows, "row count");
        assert_eq!(
            i128::from(sum),
            i128::from(rows) * i128::from(rows + 1) / 2,
            "checksum"
        );
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{path:<34} {n} rows in {secs:.1} s ({:.1} M rows/s), peak RSS growth {:.1} MiB (base {:.1} MiB)",
            n as f64 / secs / 1e6,
            peak as f64 / (1 << 20) as f64,
            base as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}
