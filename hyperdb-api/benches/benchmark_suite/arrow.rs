//! The Arrow workloads (feature `arrow`): `insert.bulk` through
//! `ArrowInserter` / `AsyncArrowInserter`, and every query through
//! `query_arrow` (sync, async, async on `workers` connections).
//!
//! Inserts: the record batches (64K rows each) are built once per workload,
//! before the first run and outside the timed region, as a caller who
//! already holds Arrow data would have them. Timed: from opening the COPY to
//! its commit. Queries: timed from sending the query to the last batch, with
//! every column of every batch read and folded into the checksum.

use std::sync::Arc;
use std::time::Instant;

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::{Float64Type, Int32Type, Int64Type};
use hyperdb_api::arrow_array::{
    Array, ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch,
};
use hyperdb_api::{ArrowInserter, AsyncArrowInserter, AsyncConnection, TableDefinition};

use crate::data::{self, Answer, Check, Measurements, Query, Result, Schema, Span, CHUNK_ROWS};
use crate::query::{async_on, Owned};
use crate::Env;

/// The rows of `span` as record batches of at most [`CHUNK_ROWS`] rows.
pub fn batches(span: Span) -> Result<Vec<RecordBatch>> {
    batches_of(span, CHUNK_ROWS)
}

/// The rows of `span` as record batches of at most `rows` rows.
pub fn batches_of(span: Span, rows: u64) -> Result<Vec<RecordBatch>> {
    let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&data::table(
        "measurements",
    ))?);
    let mut out = Vec::new();
    for part in span.chunks(rows) {
        let ids: Vec<i32> = part.ids().collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from_iter_values(ids.iter().copied())),
            Arc::new(Int32Array::from_iter_values(
                ids.iter().map(|&i| data::row(i).1),
            )),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|&i| data::row(i).2),
            )),
            Arc::new(Int64Array::from_iter_values(
                ids.iter().map(|&i| data::row(i).3),
            )),
        ];
        out.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    Ok(out)
}

/// Batches prepared once per insert workload.
#[derive(Debug)]
pub struct Prepared {
    /// All rows, for the single-connection inserters.
    pub all: Vec<RecordBatch>,
    /// Per worker: the rows of its part, for its own table.
    pub parts: Vec<(Span, Arc<Vec<RecordBatch>>)>,
}

impl Prepared {
    pub fn new(span: Span, workers: usize) -> Result<Prepared> {
        Prepared::with(span, workers, batches)
    }

    /// The batches `batches` makes of `span`, and of each worker's part.
    pub fn with(span: Span, workers: usize, batches: data::BatchMaker) -> Result<Prepared> {
        let mut parts = Vec::with_capacity(workers);
        for part in span.split(workers) {
            parts.push((part, Arc::new(batches(part)?)));
        }
        Ok(Prepared {
            all: batches(span)?,
            parts,
        })
    }
}

impl Prepared {
    /// [`Prepared::with`], each worker's part sliced (zero-copy) out of
    /// the batches of the whole span: a wide table's batches are held once.
    pub fn sliced(span: Span, workers: usize, batches: data::BatchMaker) -> Result<Prepared> {
        let all = batches(span)?;
        let mut parts = Vec::with_capacity(workers);
        for part in span.split(workers) {
            let mut mine = Vec::new();
            let mut at = span.start;
            for batch in &all {
                let end = at + batch.num_rows() as u64;
                let (from, to) = (part.start.max(at), part.end.min(end));
                if from < to {
                    mine.push(batch.slice((from - at) as usize, (to - from) as usize));
                }
                at = end;
            }
            parts.push((part, Arc::new(mine)));
        }
        Ok(Prepared { all, parts })
    }
}

/// Sync `ArrowInserter`, one connection.
pub fn sync_insert(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    sync_insert_of::<Measurements>(env, prepared)
}

/// [`sync_insert`] into schema `S`'s table.
pub fn sync_insert_of<S: Schema>(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    let table = S::recreate(env.conn, S::TABLE)?;
    let start = Instant::now();
    let mut ins = ArrowInserter::new(env.conn, &table)?;
    for batch in &prepared.all {
        ins.insert_batch(batch)?;
    }
    ins.finish()?;
    let secs = start.elapsed().as_secs_f64();
    S::verify_table(env.conn, S::TABLE, env.span())?;
    Ok(secs)
}

async fn insert_all(
    conn: &mut AsyncConnection,
    table: &TableDefinition,
    batches: &[RecordBatch],
) -> Result<u64> {
    let mut ins = AsyncArrowInserter::new(conn, table).await?;
    for batch in batches {
        ins.insert_batch(batch).await?;
    }
    Ok(ins.finish().await?)
}

/// `AsyncArrowInserter`, one connection.
pub fn async_insert(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    async_insert_of::<Measurements>(env, prepared)
}

/// [`async_insert`] into schema `S`'s table.
pub fn async_insert_of<S: Schema>(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    let table = S::recreate(env.conn, S::TABLE)?;
    let mut conns = env.async_connections(1)?;
    let conn = conns.first_mut().ok_or("no connection")?;
    let start = Instant::now();
    env.rt.block_on(insert_all(conn, &table, &prepared.all))?;
    let secs = start.elapsed().as_secs_f64();
    env.close_async(conns)?;
    S::verify_table(env.conn, S::TABLE, env.span())?;
    Ok(secs)
}

/// `AsyncArrowInserter` on `workers` connections (one task and one table
/// `measurements_{i}` each).
pub fn parallel_async_insert(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    parallel_async_insert_of::<Measurements>(env, prepared)
}

/// [`parallel_async_insert`] into schema `S`'s worker tables.
pub fn parallel_async_insert_of<S: Schema>(env: &mut Env<'_>, prepared: &Prepared) -> Result<f64> {
    let mut tables = Vec::with_capacity(prepared.parts.len());
    for i in 0..prepared.parts.len() {
        tables.push(S::recreate(env.conn, &S::worker_table(i))?);
    }
    let conns = env.async_connections(prepared.parts.len())?;
    let start = Instant::now();
    let conns = env.rt.block_on(async {
        let mut tasks = Vec::with_capacity(conns.len());
        for ((mut conn, table), (_, batches)) in conns.into_iter().zip(tables).zip(&prepared.parts)
        {
            let batches = Arc::clone(batches);
            tasks.push(tokio::spawn(async move {
                insert_all(&mut conn, &table, &batches).await.map(|_| conn)
            }));
        }
        let mut conns = Vec::with_capacity(tasks.len());
        for task in tasks {
            conns.push(task.await??);
        }
        Ok::<_, data::BoxError>(conns)
    })?;
    let secs = start.elapsed().as_secs_f64();
    env.close_async(conns)?;
    for (i, (span, _)) in prepared.parts.iter().enumerate() {
        S::verify_table(env.conn, &S::worker_table(i), *span)?;
    }
    Ok(secs)
}

/// Folds one result batch into `answer`, reading every column.
pub(crate) fn add_batch(answer: &mut Answer, batch: &RecordBatch) -> Result<()> {
    let col = |i: usize| batch.columns().get(i).ok_or("result has too few columns");
    match answer {
        Answer::Scan(check) => {
            let ids = col(0)?
                .as_primitive_opt::<Int32Type>()
                .ok_or("id is not Int32")?;
            let sensors = col(1)?
                .as_primitive_opt::<Int32Type>()
                .ok_or("sensor_id is not Int32")?;
            let values = col(2)?
                .as_primitive_opt::<Float64Type>()
                .ok_or("value is not Float64")?;
            let ts = col(3)?
                .as_primitive_opt::<Int64Type>()
                .ok_or("timestamp is not Int64")?;
            if ids.null_count() + sensors.null_count() + values.null_count() + ts.null_count() > 0 {
                let mut part = Check::default();
                for i in 0..batch.num_rows() {
                    let get = |a: &dyn Array| !a.is_null(i);
                    part.add(
                        ids.value(i),
                        get(sensors).then(|| sensors.value(i)),
                        get(values).then(|| values.value(i)),
                        get(ts).then(|| ts.value(i)),
                    );
                }
                check.merge(&part);
                return Ok(());
            }
            check.add_columns(ids.values(), sensors.values(), values.values(), ts.values());
        }
        Answer::Groups(groups) => {
            let sensors = col(0)?
                .as_primitive_opt::<Int32Type>()
                .ok_or("sensor_id is not Int32")?;
            let counts = col(1)?
                .as_primitive_opt::<Int64Type>()
                .ok_or("count is not Int64")?;
            let sums = col(2)?
                .as_primitive_opt::<Int64Type>()
                .ok_or("sum is not Int64")?;
            for i in 0..batch.num_rows() {
                let sensor = if sensors.is_null(i) {
                    -1
                } else {
                    sensors.value(i)
                };
                groups.add(sensor, counts.value(i), sums.value(i));
            }
        }
    }
    Ok(())
}

/// Sync `Connection::query_arrow`, one connection, over `measurements`.
pub fn sync_query(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    for batch in env.conn.query_arrow(&sql)? {
        add_batch(&mut answer, &batch?)?;
    }
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

async fn run_async(mut conn: AsyncConnection, query: Query, table: String) -> Owned {
    let answer = async {
        let mut answer = Answer::new(query);
        let mut batches = conn.query_arrow(&query.sql(&table)?).await?;
        while let Some(batch) = batches.next().await {
            add_batch(&mut answer, &batch?)?;
        }
        Ok(answer)
    }
    .await;
    (answer, conn)
}

/// `AsyncConnection::query_arrow`, one connection.
pub fn async_query(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    async_on(env, query, 1, run_async)
}

/// `AsyncConnection::query_arrow` on `workers` connections at once, each
/// over its own `measurements_{i}`.
pub fn parallel_async_query(env: &mut Env<'_>, query: Query) -> Result<(f64, Answer)> {
    async_on(env, query, env.workers, run_async)
}
