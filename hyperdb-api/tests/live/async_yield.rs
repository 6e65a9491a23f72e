//! Async work yields to the other tasks of its runtime (issue 18, defect
//! 4): on a current-thread runtime a ticker task counts its turns while a
//! large insert or read runs, and the longest stretch of rows handled
//! without the ticker getting a turn is bounded. Counts, not times: the
//! bound follows from tokio's task budget (128 units a poll) and the rows
//! or bytes a unit stands for, whatever the machine's speed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyperdb_api::types::SqlType;
use hyperdb_api::{AsyncInserter, TableDefinition};

use crate::common::{async_db_with_table, connect_async, temp_dir};
use crate::insert::FORMATS;

/// Rows per unit of task budget in the row streams and the row inserter
/// (`hyperdb_api`'s `coop::ROWS_PER_UNIT`), times tokio's budget of 128
/// units a poll: the most rows a task handles between two yields. Twice
/// that, so the assertion does not depend on the ticker being scheduled
/// at the first yield rather than the second.
const MAX_ROWS_WITHOUT_A_TURN: u64 = 2 * 128 * 64;

/// A task that counts its turns, and the longest run of work items done
/// without it getting one.
struct Ticker {
    ticks: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
    seen: u64,
    run: u64,
    longest: u64,
}

impl Ticker {
    fn start() -> Ticker {
        let ticks = Arc::new(AtomicU64::new(0));
        let counter = ticks.clone();
        let task = tokio::spawn(async move {
            loop {
                counter.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        });
        Ticker {
            ticks,
            task,
            seen: 0,
            run: 0,
            longest: 0,
        }
    }

    /// One item of work done (`n` rows).
    fn step(&mut self, n: u64) {
        let now = self.ticks.load(Ordering::Relaxed);
        if now != self.seen {
            self.seen = now;
            self.run = 0;
        }
        self.run += n;
        self.longest = self.longest.max(self.run);
    }

    /// The ticker's turns, and the longest run.
    fn stop(self) -> (u64, u64) {
        self.task.abort();
        (self.ticks.load(Ordering::Relaxed), self.longest)
    }
}

/// Some CPU per row, so that hyperd stays ahead of the reader and every
/// socket read finds data: a reader that never waits for the network
/// must still yield.
fn busy(i: i64) -> i64 {
    let mut x = i;
    for _ in 0..64 {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    x
}

fn table() -> TableDefinition {
    TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("v", SqlType::BigInt)
}

const INSERT_ROWS: i32 = 1_000_000;

/// Before: the inserter awaited nothing until a frame was full (a whole
/// Arrow batch, 64Ki rows; ~4 MiB of HyperBinary), and a socket that took
/// each frame at once never made it wait: one 3M-row insert held a
/// current-thread runtime for 200-450 ms.
#[tokio::test]
async fn the_async_inserter_lets_other_tasks_run() {
    for format in FORMATS {
        let dir = temp_dir();
        let mut c = async_db_with_table(&dir, "yield_ins.hyper", &table()).await;
        let mut ticker = Ticker::start();
        let mut ins = AsyncInserter::with_format(&mut c, &table(), format)
            .await
            .unwrap();
        for i in 0..INSERT_ROWS {
            ins.add_row(&[&i, &Some(i64::from(i))]).await.unwrap();
            ticker.step(1);
        }
        assert_eq!(ins.execute().await.unwrap(), INSERT_ROWS as u64);
        let (ticks, longest) = ticker.stop();
        assert!(
            longest <= MAX_ROWS_WITHOUT_A_TURN,
            "{format:?}: {longest} rows in a row without another task's turn ({ticks} turns)"
        );
        let n: i64 = c.query_scalar("SELECT count(*) FROM t").await.unwrap();
        assert_eq!(n, i64::from(INSERT_ROWS));
    }
}

/// Each chunk is a single `send`; the sender yields between them once the
/// bytes it wrote used up the task's budget, even when the socket never
/// makes it wait. Before, tokio charged one unit a write whatever its size:
/// 128 chunks (128,000 rows, ~2.6 MB) between two turns of the ticker;
/// now ~50 (1 MiB).
#[tokio::test]
async fn the_async_chunk_sender_lets_other_tasks_run() {
    let dir = temp_dir();
    let mut c = async_db_with_table(&dir, "yield_chunks.hyper", &table()).await;
    let mut chunk = hyperdb_api::InsertChunk::new(&table()).unwrap();
    let mut ticker = Ticker::start();
    let mut sender = hyperdb_api::AsyncChunkSender::new(&mut c, &table())
        .await
        .unwrap();
    // 1,000 chunks of 1,000 rows (~20 KB each).
    for n in 0..1_000 {
        for i in 0..1_000 {
            chunk
                .add_row(&[&(n * 1_000 + i), &Some(i64::from(i))])
                .unwrap();
        }
        sender.send(&mut chunk).await.unwrap();
        ticker.step(1_000);
    }
    assert_eq!(sender.execute().await.unwrap(), 1_000_000);
    let (ticks, longest) = ticker.stop();
    // 128 units of 8 KiB written: ~1 MiB, ~50K rows of these, and a chunk
    // (the rest of the charge for the last one is paid after the yield).
    assert!(
        longest < 100_000,
        "{longest} rows sent without another task's turn ({ticks} turns)"
    );
}

const READ_ROWS: i64 = 2_000_000;
const SERIES: &str = "SELECT i::BIGINT FROM generate_series(1, 2000000) g(i)";

/// Before: rows already received came back without an await, and the
/// socket reads that fetched them (1 MiB each) spent one unit of the
/// task's budget each: a reader starved the runtime for up to ~128 MiB of
/// rows (~1 s for a 50M-row `AsyncRows`).
#[tokio::test]
async fn async_rows_let_other_tasks_run() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "yield_rows.hyper").await;
    for arrow in [true, false] {
        let mut ticker = Ticker::start();
        let mut rows = if arrow {
            c.execute_query(SERIES).await.unwrap()
        } else {
            c.execute_query_params(SERIES, &[]).await.unwrap()
        };
        let (mut n, mut sum) = (0i64, 0i64);
        while let Some(row) = rows.next_row().await {
            let v: i64 = row.unwrap().try_get(0).unwrap();
            std::hint::black_box(busy(v));
            sum += v;
            n += 1;
            ticker.step(1);
        }
        let (ticks, longest) = ticker.stop();
        assert_eq!((n, sum), (READ_ROWS, READ_ROWS * (READ_ROWS + 1) / 2));
        assert!(
            longest <= MAX_ROWS_WITHOUT_A_TURN,
            "arrow {arrow}: {longest} rows in a row without another task's turn ({ticks} turns)"
        );
    }
    // Typed rows take the same path.
    let mut ticker = Ticker::start();
    let mut rows = c.execute_query_params(SERIES, &[]).await.unwrap();
    let mut n = 0i64;
    while let Some(v) = rows.next_as::<(i64,)>().await {
        std::hint::black_box(busy(v.unwrap().0));
        n += 1;
        ticker.step(1);
    }
    let (ticks, longest) = ticker.stop();
    assert_eq!(n, READ_ROWS);
    assert!(
        longest <= MAX_ROWS_WITHOUT_A_TURN,
        "typed: {longest} rows without another task's turn ({ticks} turns)"
    );
}

/// Record batches yield by the bytes they were read from: 128 units of 8
/// KiB, ~1 MiB (~131K BIGINT values) between two yields, a little more
/// for the charge a read leaves to the next poll and a batch's rounding.
/// Before, ~780K rows went by between two turns of the ticker.
#[tokio::test]
async fn async_arrow_batches_let_other_tasks_run() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "yield_arrow.hyper").await;
    let mut ticker = Ticker::start();
    let mut batches = c.query_arrow(SERIES).await.unwrap();
    let mut n = 0u64;
    while let Some(batch) = batches.next().await {
        let rows = batch.unwrap().num_rows() as u64;
        n += rows;
        for i in 0..rows {
            std::hint::black_box(busy(i as i64));
        }
        ticker.step(rows);
    }
    drop(batches);
    let (ticks, longest) = ticker.stop();
    assert_eq!(n, READ_ROWS as u64);
    assert!(
        longest <= 2 * 131_072 + 20_000,
        "{longest} rows of batches without another task's turn ({ticks} turns)"
    );
}

/// Raw IPC chunks, the same by their bytes.
#[tokio::test]
async fn async_arrow_ipc_chunks_let_other_tasks_run() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "yield_ipc.hyper").await;
    let mut ticker = Ticker::start();
    let mut chunks = c.query_arrow_ipc(SERIES).await.unwrap();
    let mut bytes = 0u64;
    while let Some(chunk) = chunks.next().await {
        let len = chunk.unwrap().len() as u64;
        bytes += len;
        for i in 0..len / 8 {
            std::hint::black_box(busy(i as i64));
        }
        ticker.step(len);
    }
    let (ticks, longest) = ticker.stop();
    assert!(bytes >= 8 * READ_ROWS as u64, "{bytes}");
    assert!(
        longest <= 2 * (1 << 20) + 200_000,
        "{longest} bytes of IPC without another task's turn ({ticks} turns)"
    );
}
