//! `query.*` through the row API: `Connection::execute_query` (sync, served
//! from Arrow), `Connection::execute_query_params` (sync, served from
//! `DataRow`s: lent rows, owned rows, and tuples through `Rows::typed`),
//! `AsyncConnection::execute_query` (async, one connection) and the same on
//! `workers` connections at once, each over its own `measurements_{i}`.
//!
//! Timed: from sending the query to the last row, with every value of every
//! row decoded (through `Row::try_get`, or into a tuple) and folded into the
//! checksum.
//! Untimed: opening the extra connections, comparing with the expected
//! answer.

use std::time::Instant;

use hyperdb_api::AsyncConnection;

use crate::data::{self, Answer, Query, Result};
use crate::Env;

/// Sync, one connection, over `measurements`.
pub fn sync(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    for row in env.conn.execute_query(&sql)? {
        answer.add_row(&row?)?;
    }
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

/// Sync, one connection, over `measurements`, served from `DataRow`s (a
/// query with bound parameters, here none, never takes the Arrow path).
/// Rows are lent (`Rows::next_row`, the scan loop the README shows).
pub fn sync_data_rows(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    let mut rows = env.conn.execute_query_params(&sql, &[])?;
    while let Some(row) = rows.next_row() {
        answer.add_row(row?)?;
    }
    drop(rows);
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

/// [`sync_data_rows`] with owned rows (`Iterator`): each `Row` shares its
/// block through a reference count, the price of rows that outlive the loop.
pub fn sync_data_rows_owned(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    for row in env.conn.execute_query_params(&sql, &[])? {
        answer.add_row(&row?)?;
    }
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

/// [`sync_data_rows`] read as tuples (`Rows::typed`, as `query_as` reads):
/// each `DataRow` is decoded in column order, one pass over its bytes.
pub fn sync_data_rows_typed(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    let rows = env.conn.execute_query_params(&sql, &[])?;
    match &mut answer {
        Answer::Scan(check) => {
            for row in rows.typed::<(i32, Option<i32>, Option<f64>, Option<i64>)>() {
                let (id, sensor, value, ts) = row?;
                check.add(id, sensor, value, ts);
            }
        }
        Answer::Groups(groups) => {
            for row in rows.typed::<(Option<i32>, i64, i64)>() {
                let (sensor, count, sum_id) = row?;
                groups.add(sensor.unwrap_or(-1), count, sum_id);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

/// Runs `query` over `table` on an owned connection (so it can be moved
/// into a task) and hands the connection back.
pub type Owned = (Result<Answer>, AsyncConnection);

async fn run_async(mut conn: AsyncConnection, query: Query, table: String) -> Owned {
    let answer = async {
        let mut answer = Answer::new(query);
        let mut rows = conn.execute_query(&query.sql(&table)?).await?;
        while let Some(row) = rows.next().await {
            answer.add_row(&row?)?;
        }
        Ok(answer)
    }
    .await;
    (answer, conn)
}

/// Async, one connection, over `measurements`.
pub fn single_async(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    async_on(env, query, 1, run_async)
}

/// Async on `workers` connections at once (one task each), each over its
/// own `measurements_{i}`; the answers are merged and checked as one.
pub fn parallel_async(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    async_on(env, query, env.workers, run_async)
}

/// Runs `run` on `n` connections at once, one task each: over
/// `measurements` when `n` is 1, else over `measurements_{i}`. Timed from
/// the first task's start to the last task's end.
pub fn async_on<F, Fut>(env: &mut Env<'_>, query: Query, n: usize, run: F) -> Result<(f64, Answer)>
where
    F: Fn(AsyncConnection, Query, String) -> Fut,
    Fut: std::future::Future<Output = Owned> + Send + 'static,
{
    let (secs, answers) = spread(env, n, |conn, i| run(conn, query, data::scan_table(i, n)))?;
    let mut answer = Answer::new(query);
    for part in &answers {
        answer.merge(part)?;
    }
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

/// Runs `run(connection, i)` for `i` in `0..n` on `n` connections at once,
/// one task each; returns the seconds from the first task's start to the
/// last task's end, and each task's result in order. The connections are
/// opened before and closed after the timed region.
pub fn spread<T, F, Fut>(env: &mut Env<'_>, n: usize, run: F) -> Result<(f64, Vec<T>)>
where
    F: Fn(AsyncConnection, usize) -> Fut,
    Fut: std::future::Future<Output = (Result<T>, AsyncConnection)> + Send + 'static,
    T: Send + 'static,
{
    let conns = env.async_connections(n)?;
    let start = Instant::now();
    let (results, conns) = env.rt.block_on(async {
        let tasks: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| tokio::spawn(run(conn, i)))
            .collect();
        let mut results = Vec::with_capacity(tasks.len());
        let mut conns = Vec::with_capacity(tasks.len());
        for task in tasks {
            let (result, conn) = task.await?;
            results.push(result?);
            conns.push(conn);
        }
        Ok::<_, data::BoxError>((results, conns))
    })?;
    let secs = start.elapsed().as_secs_f64();
    env.close_async(conns)?;
    Ok((secs, results))
}
