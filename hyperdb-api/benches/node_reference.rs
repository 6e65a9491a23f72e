//! The Rust side of the Node benchmark's "% of Rust": the same read path
//! in Rust, on the Node benchmark's own server and tables, run in turn
//! with the Node runs it is compared with.
//!
//! A figure taken from the Rust suite's artifact was measured minutes
//! earlier, against another server process: on a shared 2-core machine the
//! ratio of two such figures moved by 30 points between runs of the same
//! builds. Alternated in one run, both sides see the same machine.
//!
//! ```text
//! HYPER_PASSWORD=... node_reference ENDPOINT DATABASE
//! ```
//!
//! Reads requests from stdin, one a line: a path (`query_arrow` or
//! `execute_query`, both `AsyncConnection`'s) and one SQL text per
//! connection, separated by tabs; the statements run at once, one
//! connection and task each, on a 2-worker runtime as the suite's. Answers
//! each with `SECONDS ROWS SUM` (the sum of column 0, an INT or BIGINT, as
//! the Node benchmark checks), timed from the first start to the last end,
//! connections opened before. Started by `__test__/benchmark.mjs`.

use std::io::{BufRead, Write};
use std::time::Instant;

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::{Int32Type, Int64Type};
use hyperdb_api::arrow_array::{Array, RecordBatch};
use hyperdb_api::types::SqlType;
use hyperdb_api::{AsyncConnection, ConnectOptions, CreateMode, Endpoint};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Rows read and the sum of their column 0.
#[derive(Default)]
struct Tally {
    rows: u64,
    sum: i128,
}

impl Tally {
    fn add_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows() as u64;
        let col = batch.column(0);
        if let Some(a) = col.as_primitive_opt::<Int32Type>() {
            self.sum += a.iter().flatten().map(i128::from).sum::<i128>();
        } else if let Some(a) = col.as_primitive_opt::<Int64Type>() {
            self.sum += a.iter().flatten().map(i128::from).sum::<i128>();
        } else {
            return Err(format!("column 0 is {}, not INT or BIGINT", col.data_type()).into());
        }
        Ok(())
    }
}

async fn read(conn: &mut AsyncConnection, path: &str, sql: &str) -> Result<Tally> {
    let mut tally = Tally::default();
    match path {
        "query_arrow" => {
            let mut batches = conn.query_arrow(sql).await?;
            while let Some(batch) = batches.next().await {
                tally.add_batch(&batch?)?;
            }
        }
        "execute_query" => {
            let mut rows = conn.execute_query(sql).await?;
            // Decided once: a failed `try_get` a row would build an error a row.
            let int =
                rows.schema().columns().first().and_then(|c| c.sql_type()) == Some(&SqlType::Int);
            while let Some(row) = rows.next().await {
                let row = row?;
                let first = if int {
                    row.try_get::<Option<i32>>(0)?.map(i64::from)
                } else {
                    row.try_get::<Option<i64>>(0)?
                };
                tally.rows += 1;
                tally.sum += i128::from(first.unwrap_or(0));
            }
        }
        other => return Err(format!("unknown path {other:?}").into()),
    }
    Ok(tally)
}

/// Runs one request line on `conns` (grown to one per statement).
async fn request(
    options: &ConnectOptions,
    conns: &mut Vec<AsyncConnection>,
    line: &str,
) -> Result<String> {
    let mut parts = line.split('\t');
    let path = parts.next().unwrap_or_default().to_owned();
    let sqls: Vec<String> = parts.map(str::to_owned).collect();
    if sqls.is_empty() {
        return Err(format!("no statement in {line:?}").into());
    }
    while conns.len() < sqls.len() {
        conns.push(AsyncConnection::connect_with(options).await?);
    }
    let start = Instant::now();
    let tasks: Vec<_> = conns
        .drain(..sqls.len())
        .zip(sqls)
        .map(|(mut conn, sql)| {
            let path = path.clone();
            tokio::spawn(async move {
                let tally = read(&mut conn, &path, &sql).await;
                (tally, conn)
            })
        })
        .collect();
    let mut total = Tally::default();
    let mut failure = None;
    for task in tasks {
        let (tally, conn) = task.await?;
        conns.push(conn);
        match tally {
            Ok(t) => {
                total.rows += t.rows;
                total.sum += t.sum;
            }
            Err(e) => failure = Some(e),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    match failure {
        Some(e) => Err(e),
        None => Ok(format!("{secs} {} {}", total.rows, total.sum)),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [endpoint, database] = args.as_slice() else {
        return Err("usage: node_reference ENDPOINT DATABASE (password in HYPER_PASSWORD)".into());
    };
    let endpoint: Endpoint = endpoint.parse()?;
    let mut options =
        ConnectOptions::new(endpoint).with_database(database, CreateMode::DoNotCreate);
    if let Ok(password) = std::env::var("HYPER_PASSWORD") {
        options = options.with_password(password);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut conns = Vec::new();
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let answer = match rt.block_on(request(&options, &mut conns, &line)) {
            Ok(a) => a,
            Err(e) => format!("error {e}"),
        };
        let mut out = stdout.lock();
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(())
}
