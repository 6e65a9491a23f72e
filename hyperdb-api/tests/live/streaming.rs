//! Streaming ten million rows with bounded client memory, sync and async,
//! over TCP and Unix sockets.

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection};

use crate::common::endpoints;

const N: i64 = 10_000_000;
const QUERY: &str = "SELECT i, i * 2 AS j FROM generate_series(1, 10000000) g(i)";
/// RSS growth allowed while streaming: far below the ~200 MB the result
/// would take if it were buffered.
const RSS_BUDGET: u64 = 64 << 20;

fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// Counts rows, sums both columns, and tracks the peak RSS growth.
#[derive(Default)]
struct Tally {
    n: i64,
    sum_i: i64,
    sum_j: i64,
    base: u64,
    peak: u64,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            base: rss(),
            ..Tally::default()
        }
    }

    fn add(&mut self, row: hyperdb_api::Row) {
        self.n += 1;
        self.sum_i += i64::from(row.try_get::<i32>(0).unwrap());
        self.sum_j += i64::from(row.try_get::<i32>("j").unwrap());
        if self.n % 1_000_000 == 0 {
            self.peak = self.peak.max(rss().saturating_sub(self.base));
        }
    }

    fn check(&self) {
        assert_eq!(self.n, N);
        assert_eq!(self.sum_i, N * (N + 1) / 2);
        assert_eq!(self.sum_j, N * (N + 1));
        assert!(
            self.peak < RSS_BUDGET,
            "RSS grew by {} MiB",
            self.peak >> 20
        );
    }
}

#[test]
fn ten_million_rows_sync() {
    for ep in endpoints() {
        let mut c = Connection::connect_with(&ConnectOptions::new(ep)).unwrap();
        let mut t = Tally::new();
        let mut rows = c.execute_query(QUERY).unwrap();
        assert_eq!(rows.schema().len(), 2);
        for row in rows.by_ref() {
            t.add(row.unwrap());
        }
        assert_eq!(rows.affected_rows(), Some(N as u64));
        t.check();
    }
}

#[tokio::test]
async fn ten_million_rows_async() {
    for ep in endpoints() {
        let mut c = AsyncConnection::connect_with(&ConnectOptions::new(ep))
            .await
            .unwrap();
        let mut t = Tally::new();
        let mut rows = c.execute_query(QUERY).await.unwrap();
        while let Some(row) = rows.next().await {
            t.add(row.unwrap());
        }
        t.check();
    }
}
