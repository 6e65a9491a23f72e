//! `insert.bulk` through the row API: `Inserter` in each wire format,
//! `ChunkSender::send_parallel`, and `AsyncChunkSender` fed by
//! `spawn_blocking` encoders.
//!
//! Timed: from opening the COPY to its commit, including producing and
//! encoding every row (rows are computed from the formula as they are
//! encoded). Untimed: creating the table(s), opening the extra connections,
//! and the server-side checksum of what was stored.

use std::time::Instant;

use hyperdb_api::{
    AsyncChunkSender, AsyncConnection, ChunkSender, InsertChunk, InsertFormat, Inserter,
    TableDefinition,
};

use crate::data::{self, Result, Span, CHUNK_ROWS};
use crate::Env;

/// Appends the rows of `span` to `chunk`.
pub fn fill(chunk: &mut InsertChunk, span: Span) -> hyperdb_api::Result<()> {
    for id in span.ids() {
        let (id, sensor, value, ts) = data::row(id);
        chunk.add_row(&[&id, &Some(sensor), &Some(value), &Some(ts)])?;
    }
    Ok(())
}

/// Sync `Inserter` sending `format`, one connection, rows encoded inline.
pub fn inserter(env: &mut Env<'_>, format: InsertFormat) -> Result<f64> {
    let span = env.span();
    let table = data::recreate(env.conn, "measurements")?;
    let start = Instant::now();
    let mut ins = Inserter::with_format(env.conn, &table, format)?;
    for id in span.ids() {
        let (id, sensor, value, ts) = data::row(id);
        ins.add_row(&[&id, &Some(sensor), &Some(value), &Some(ts)])?;
    }
    ins.execute()?;
    let secs = start.elapsed().as_secs_f64();
    data::verify_table(env.conn, "measurements", span)?;
    Ok(secs)
}

/// Sync `ChunkSender` on one connection, chunks encoded on `workers` threads.
pub fn chunk_sender(env: &mut Env<'_>) -> Result<f64> {
    let span = env.span();
    let table = data::recreate(env.conn, "measurements")?;
    let chunks = span.chunks(CHUNK_ROWS);
    let start = Instant::now();
    let mut sender = ChunkSender::new(env.conn, &table)?;
    sender.send_parallel(&table, env.workers, chunks.len(), |i, chunk| {
        fill(chunk, chunks[i])
    })?;
    sender.execute()?;
    let secs = start.elapsed().as_secs_f64();
    data::verify_table(env.conn, "measurements", span)?;
    Ok(secs)
}

/// `AsyncChunkSender` on each of `workers` connections (one table each),
/// chunks encoded by `spawn_blocking` one ahead of the send.
pub fn async_chunk_senders(env: &mut Env<'_>) -> Result<f64> {
    let parts = env.span().split(env.workers);
    let mut tables = Vec::with_capacity(parts.len());
    for i in 0..parts.len() {
        tables.push(data::recreate(env.conn, &data::worker_table(i))?);
    }
    let rt = env.rt;
    let conns = env.async_connections(parts.len())?;
    let start = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::with_capacity(parts.len());
        for ((conn, table), span) in conns.into_iter().zip(tables).zip(parts.iter().copied()) {
            tasks.push(tokio::spawn(send_chunks(conn, table, span)));
        }
        for task in tasks {
            task.await??;
        }
        Ok::<(), data::BoxError>(())
    })?;
    let secs = start.elapsed().as_secs_f64();
    for (i, span) in parts.iter().enumerate() {
        data::verify_table(env.conn, &data::worker_table(i), *span)?;
    }
    Ok(secs)
}

async fn send_chunks(mut conn: AsyncConnection, table: TableDefinition, span: Span) -> Result<()> {
    let template = InsertChunk::new(&table)?;
    let mut pieces = span.chunks(CHUNK_ROWS).into_iter();
    let Some(first) = pieces.next() else {
        return Ok(());
    };
    let mut sender = AsyncChunkSender::new(&mut conn, &table).await?;
    let encode = |mut chunk: InsertChunk, span: Span| {
        tokio::task::spawn_blocking(move || fill(&mut chunk, span).map(|()| chunk))
    };
    let mut spare = template.clone();
    let mut pending = encode(template, first);
    for next in pieces {
        let mut ready = pending.await??;
        pending = encode(spare, next);
        sender.send(&mut ready).await?;
        spare = ready;
    }
    let mut last = pending.await??;
    sender.send(&mut last).await?;
    sender.execute().await?;
    conn.close().await?;
    Ok(())
}
