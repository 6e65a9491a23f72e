//! Ten million rows through Arrow, sync, async and over several
//! connections, with count and checksum checks and rough rows/s printed
//! (`--nocapture`): the benchmarks come later, these catch lost rows.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Float64Array, Int32Array, Int64Array, RecordBatch};
use hyperdb_api::arrow::{arrow_schema, insert_batches_parallel, insert_batches_parallel_blocking};
use hyperdb_api::types::SqlType;
use hyperdb_api::{
    ArrowInserter, AsyncArrowInserter, AsyncConnection, ConnectOptions, Connection, CreateMode,
    TableDefinition,
};

use crate::common::{async_db_with_table, db_with_table, server, temp_dir};

const N: usize = 10_000_000;
const BATCH: usize = 65_536;

fn measurements(name: &str) -> TableDefinition {
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::Int)
        .with_column("sensor_id", SqlType::Int)
        .with_column("value", SqlType::Double)
        .with_column("timestamp", SqlType::BigInt)
}

/// Rows `start..end` of the measurements data.
fn batch(start: usize, end: usize) -> RecordBatch {
    let ids: Vec<i32> = (start as i32..end as i32).collect();
    RecordBatch::try_new(
        Arc::new(arrow_schema(&measurements("m")).unwrap()),
        vec![
            Arc::new(Int32Array::from_iter_values(ids.iter().copied())),
            Arc::new(Int32Array::from_iter_values(ids.iter().map(|id| id % 10))),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|id| f64::from(*id) * 0.1),
            )),
            Arc::new(Int64Array::from_iter_values(
                ids.iter()
                    .map(|id| 1_700_000_000_000 + i64::from(*id) * 1000),
            )),
        ],
    )
    .unwrap()
}

fn batches(n: usize) -> Vec<RecordBatch> {
    (0..n)
        .step_by(BATCH)
        .map(|s| batch(s, (s + BATCH).min(n)))
        .collect()
}

fn rate(what: &str, rows: usize, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{what}: {rows} rows in {secs:.2} s = {:.1} M rows/s",
        rows as f64 / secs / 1e6
    );
}

/// Count and checksums in SQL (sums kept small: hyperd's sum(bigint) does
/// not widen).
fn sql_checks(table: &str, n: usize) -> String {
    let n = n as i128;
    format!(
        "SELECT count(*) = {n} AND sum(id::bigint) = {} AND sum(sensor_id::bigint) = {} \
         AND sum(timestamp - 1700000000000) = {} FROM {table}",
        n * (n - 1) / 2,
        45 * n / 10,
        n * (n - 1) / 2 * 1000
    )
}

/// Count and checksums over the decoded batches.
#[derive(Default, Debug, PartialEq)]
struct Tally {
    rows: usize,
    ids: i64,
    sensors: i64,
    /// Value checks that failed.
    bad: usize,
}

impl Tally {
    fn add(&mut self, b: &RecordBatch) {
        let ids = b.column(0).as_primitive::<Int32Type>();
        let sensors = b.column(1).as_primitive::<Int32Type>();
        let values = b.column(2).as_primitive::<Float64Type>();
        let ts = b.column(3).as_primitive::<Int64Type>();
        self.rows += b.num_rows();
        for i in 0..b.num_rows() {
            let id = ids.value(i);
            self.ids += i64::from(id);
            self.sensors += i64::from(sensors.value(i));
            if values.value(i) != f64::from(id) * 0.1
                || ts.value(i) != 1_700_000_000_000 + i64::from(id) * 1000
            {
                self.bad += 1;
            }
        }
    }

    fn check(&self, n: usize) {
        let n64 = n as i64;
        assert_eq!(
            (self.rows, self.ids, self.sensors, self.bad),
            (n, n64 * (n64 - 1) / 2, 45 * n64 / 10, 0)
        );
    }
}

#[test]
fn ten_million_rows_in_and_out_sync() {
    let dir = temp_dir();
    let table = measurements("measurements");
    let mut c = db_with_table(&dir, "ten_m.hyper", &table);
    let input = batches(N);
    let started = Instant::now();
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    for b in &input {
        ins.insert_batch(b).unwrap();
    }
    assert_eq!(ins.finish().unwrap(), N as u64);
    rate("ArrowInserter", N, started);
    drop(input);
    assert!(c
        .query_scalar::<bool>(&sql_checks("measurements", N))
        .unwrap());

    let started = Instant::now();
    let mut tally = Tally::default();
    let mut result = c.query_arrow("SELECT * FROM measurements").unwrap();
    for b in result.by_ref() {
        tally.add(&b.unwrap());
    }
    rate("query_arrow (with checks)", N, started);
    tally.check(N);
    assert_eq!(result.rows(), Some(N as u64));
    let started = Instant::now();
    let rows: usize = c
        .query_arrow("SELECT * FROM measurements")
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    rate("query_arrow full scan", rows, started);
    assert_eq!(rows, N);

    // Dropped after the first batch: the next query is still right.
    let mut result = c.query_arrow("SELECT * FROM measurements").unwrap();
    let first = result.next().unwrap().unwrap();
    assert!(first.num_rows() > 0);
    drop(result);
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM measurements")
            .unwrap(),
        N as i64
    );
    {
        let mut chunks = c.query_arrow_ipc("SELECT * FROM measurements").unwrap();
        assert!(!chunks.next().unwrap().unwrap().is_empty());
    }
    assert_eq!(c.query_scalar::<i32>("SELECT 41 + 1").unwrap(), 42);
}

#[tokio::test]
async fn ten_million_rows_in_and_out_async() {
    let dir = temp_dir();
    let table = measurements("measurements");
    let mut c = async_db_with_table(&dir, "ten_m.hyper", &table).await;
    let input = batches(N);
    let started = Instant::now();
    let mut ins = AsyncArrowInserter::new(&mut c, &table).await.unwrap();
    for b in &input {
        ins.insert_batch(b).await.unwrap();
    }
    assert_eq!(ins.finish().await.unwrap(), N as u64);
    rate("AsyncArrowInserter", N, started);
    drop(input);
    assert!(c
        .query_scalar::<bool>(&sql_checks("measurements", N))
        .await
        .unwrap());

    let started = Instant::now();
    let mut tally = Tally::default();
    let mut result = c.query_arrow("SELECT * FROM measurements").await.unwrap();
    while let Some(b) = result.next().await {
        tally.add(&b.unwrap());
    }
    rate("async query_arrow (with checks)", N, started);
    tally.check(N);
    let started = Instant::now();
    let mut rows = 0;
    let mut result = c.query_arrow("SELECT * FROM measurements").await.unwrap();
    while let Some(b) = result.next().await {
        rows += b.unwrap().num_rows();
    }
    rate("async query_arrow full scan", rows, started);
    assert_eq!(rows, N);

    let mut result = c.query_arrow("SELECT * FROM measurements").await.unwrap();
    assert!(result.next().await.unwrap().unwrap().num_rows() > 0);
    drop(result);
    let n: i64 = c
        .query_scalar("SELECT count(*) FROM measurements")
        .await
        .unwrap();
    assert_eq!(n, N as i64);
}

fn options(dir: &tempfile::TempDir, mode: CreateMode) -> ConnectOptions {
    ConnectOptions::new(server().endpoint().clone())
        .with_database(dir.path().join("par.hyper"), mode)
}

#[test]
fn parallel_ingest_one_table_each_and_shared_blocking() {
    let dir = temp_dir();
    let mut conns = vec![Connection::connect_with(&options(&dir, CreateMode::Create)).unwrap()];
    for _ in 0..3 {
        conns.push(Connection::connect_with(&options(&dir, CreateMode::DoNotCreate)).unwrap());
    }
    let own: Vec<TableDefinition> = (0..2).map(|i| measurements(&format!("own{i}"))).collect();
    let shared = measurements("shared");
    for t in own.iter().chain([&shared]) {
        conns[0]
            .execute_command(&t.create_table_sql(false).unwrap())
            .unwrap();
    }
    // Two connections, one table each.
    const ROWS: usize = 4_000_000;
    let input = batches(ROWS);
    let started = Instant::now();
    let stored = insert_batches_parallel_blocking(&mut conns[..2], &own, &input).unwrap();
    rate("2 connections, blocking, one table each", ROWS, started);
    assert_eq!(stored, ROWS as u64);
    let union = "(SELECT * FROM own0 UNION ALL SELECT * FROM own1) u";
    assert!(conns[0]
        .query_scalar::<bool>(&sql_checks(union, ROWS))
        .unwrap());
    // Batches are dealt round-robin: table 1 holds batches 1, 3, 5, ...
    let own1: i64 = conns[2].query_scalar("SELECT count(*) FROM own1").unwrap();
    let share: usize = input
        .iter()
        .skip(1)
        .step_by(2)
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(own1, share as i64);
    drop(input);

    // Four connections, one shared table.
    let small = batches(2_000_000);
    let started = Instant::now();
    let stored =
        insert_batches_parallel_blocking(&mut conns, std::slice::from_ref(&shared), &small);
    rate("4 connections, blocking, one table", 2_000_000, started);
    assert_eq!(stored.unwrap(), 2_000_000);
    assert!(conns[3]
        .query_scalar::<bool>(&sql_checks("shared", 2_000_000))
        .unwrap());

    // One connection fails at once: the error comes back, and the other
    // one's COPY is either aborted or complete, never half-stored.
    let bad = vec![
        shared.clone(),
        TableDefinition::new("missing").with_column("id", SqlType::Int),
    ];
    let e = insert_batches_parallel_blocking(&mut conns[..2], &bad, &small).unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "{e:?}");
    let after: i64 = conns[0]
        .query_scalar("SELECT count(*) FROM shared")
        .unwrap();
    let half: usize = small.iter().step_by(2).map(RecordBatch::num_rows).sum();
    assert!(
        after == 2_000_000 || after == 2_000_000 + half as i64,
        "{after}"
    );
    assert_eq!(conns[1].query_scalar::<i32>("SELECT 1").unwrap(), 1);
}

#[tokio::test]
async fn parallel_ingest_async_over_2_and_4_connections() {
    let dir = temp_dir();
    let mut first = AsyncConnection::connect_with(&options(&dir, CreateMode::Create))
        .await
        .unwrap();
    let shared = measurements("shared");
    first
        .execute_command(&shared.create_table_sql(false).unwrap())
        .await
        .unwrap();
    let mut conns = vec![first];
    for _ in 0..3 {
        conns.push(
            AsyncConnection::connect_with(&options(&dir, CreateMode::DoNotCreate))
                .await
                .unwrap(),
        );
    }
    let input = batches(4_000_000);
    for n in [2, 4] {
        conns[0].execute_command("TRUNCATE shared").await.unwrap();
        let started = Instant::now();
        let stored =
            insert_batches_parallel(&mut conns[..n], std::slice::from_ref(&shared), &input)
                .await
                .unwrap();
        rate(
            &format!("{n} async connections, one table"),
            4_000_000,
            started,
        );
        assert_eq!(stored, 4_000_000);
        let ok: bool = conns[n - 1]
            .query_scalar(&sql_checks("shared", 4_000_000))
            .await
            .unwrap();
        assert!(ok);
    }
    let own: Vec<TableDefinition> = (0..4).map(|i| measurements(&format!("own{i}"))).collect();
    for t in &own {
        conns[0]
            .execute_command(&t.create_table_sql(false).unwrap())
            .await
            .unwrap();
    }
    assert_eq!(
        insert_batches_parallel(&mut conns, &own, &input)
            .await
            .unwrap(),
        4_000_000
    );
    let total: i64 = conns[3]
        .query_scalar("SELECT (SELECT count(*) FROM own0) + (SELECT count(*) FROM own1) + (SELECT count(*) FROM own2) + (SELECT count(*) FROM own3)")
        .await
        .unwrap();
    assert_eq!(total, 4_000_000);
}
