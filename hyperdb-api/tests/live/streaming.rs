//! Streaming ten million rows with bounded client memory, sync and async,
//! over TCP and Unix sockets.

use hyperdb_api::{AsyncConnection, Connection};

use crate::common::{runs_here_alone, server, transports, RssGrowth};

const N: i64 = 10_000_000;
const QUERY: &str = "SELECT i, i * 2 AS j FROM generate_series(1, 10000000) g(i)";
/// RSS growth allowed while streaming: far below the ~200 MB the result
/// would take if it were buffered.
const RSS_BUDGET: u64 = 64 << 20;

/// Counts rows, sums both columns, and tracks the peak RSS growth.
struct Tally {
    n: i64,
    sum_i: i64,
    sum_j: i64,
    rss: RssGrowth,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            n: 0,
            sum_i: 0,
            sum_j: 0,
            rss: RssGrowth::new(),
        }
    }

    fn add(&mut self, row: hyperdb_api::Row) {
        self.n += 1;
        self.sum_i += i64::from(row.try_get::<i32>(0).unwrap());
        self.sum_j += i64::from(row.try_get::<i32>("j").unwrap());
        if self.n % 1_000_000 == 0 {
            self.rss.sample();
        }
    }

    fn check(&self) {
        assert_eq!(self.n, N);
        assert_eq!(self.sum_i, N * (N + 1) / 2);
        assert_eq!(self.sum_j, N * (N + 1));
        assert!(
            self.rss.peak() < RSS_BUDGET,
            "RSS grew by {} MiB",
            self.rss.peak() >> 20
        );
    }
}

#[test]
fn ten_million_rows_sync() {
    if !runs_here_alone("streaming::ten_million_rows_sync") {
        return;
    }
    for options in transports() {
        let mut c = Connection::connect_with(&options).unwrap();
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
    if !runs_here_alone("streaming::ten_million_rows_async") {
        return;
    }
    for options in transports() {
        let mut c = AsyncConnection::connect_with(&options).await.unwrap();
        let mut t = Tally::new();
        let mut rows = c.execute_query(QUERY).await.unwrap();
        while let Some(row) = rows.next().await {
            t.add(row.unwrap());
        }
        t.check();
    }
}

const HELD: &str = "SELECT i, 'v' || i AS s FROM generate_series(1, 60000) g(i)";

/// Owned rows keep their block alive after the stream moved on (many
/// blocks later), on the Arrow path and the `DataRow` path: every row
/// still reads its own values (hyperd may return the series out of order).
fn check_held(rows: &[hyperdb_api::Row]) -> i64 {
    let mut sum = 0;
    for row in rows {
        let i = row.try_get::<i64>(0).unwrap();
        assert_eq!(row.try_get::<&str>("s").unwrap(), format!("v{i}"));
        sum += i;
    }
    sum
}

#[test]
fn lent_and_held_rows_on_both_paths() {
    let mut c = Connection::connect_with(&server().connect_options()).unwrap();
    fn run(c: &mut Connection, arrow: bool) -> hyperdb_api::Rows<'_> {
        if arrow {
            c.execute_query(HELD).unwrap()
        } else {
            c.execute_query_params(HELD, &[]).unwrap()
        }
    }
    for arrow in [true, false] {
        // Lent rows: read in place, one at a time.
        let mut rows = run(&mut c, arrow);
        let (mut n, mut sum) = (0i64, 0i64);
        while let Some(row) = rows.next_row() {
            let row = row.unwrap();
            sum += row.try_get::<i64>(0).unwrap();
            n += 1;
        }
        assert!(rows.next_row().is_none(), "ended streams stay ended");
        assert_eq!((n, sum), (60_000, 60_000 * 60_001 / 2), "arrow: {arrow}");
        // Owned rows: all held until the end.
        let held: Vec<_> = run(&mut c, arrow).map(Result::unwrap).collect();
        assert_eq!(held.len(), 60_000);
        assert_eq!(check_held(&held), 60_000 * 60_001 / 2);
    }
}

#[tokio::test]
async fn lent_and_held_rows_on_both_paths_async() {
    let options = server().connect_options();
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    for arrow in [true, false] {
        let mut rows = if arrow {
            c.execute_query(HELD).await.unwrap()
        } else {
            c.execute_query_params(HELD, &[]).await.unwrap()
        };
        let mut held = Vec::new();
        let mut sum = 0i64;
        // Alternate lent and owned reads on one stream.
        loop {
            let Some(row) = rows.next_row().await else {
                break;
            };
            sum += row.unwrap().try_get::<i64>(0).unwrap();
            let Some(row) = rows.next().await else { break };
            held.push(row.unwrap());
        }
        assert_eq!(held.len(), 30_000, "arrow: {arrow}");
        assert_eq!(sum + check_held(&held), 60_000 * 60_001 / 2);
    }
}
