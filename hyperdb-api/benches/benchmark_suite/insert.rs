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

use crate::data::{self, Measurements, Result, Schema, Span, CHUNK_ROWS};
use crate::Env;

/// Appends the rows of `span` to `chunk` (`benchmark.rs` uses it).
#[allow(dead_code)]
pub fn fill(chunk: &mut InsertChunk, span: Span) -> hyperdb_api::Result<()> {
    fill_of::<Measurements>(chunk, span)
}

/// Appends the rows of `span` of schema `S` to `chunk`.
pub fn fill_of<S: Schema>(chunk: &mut InsertChunk, span: Span) -> hyperdb_api::Result<()> {
    for i in span.start..span.end {
        S::with_row(i, |values| chunk.add_row(values))?;
    }
    Ok(())
}

/// Sync `Inserter` sending `format`, one connection, rows encoded inline.
pub fn inserter(env: &mut Env<'_>, format: InsertFormat) -> Result<f64> {
    inserter_of::<Measurements>(env, format)
}

/// [`inserter`] on schema `S`.
pub fn inserter_of<S: Schema>(env: &mut Env<'_>, format: InsertFormat) -> Result<f64> {
    let span = env.span();
    let table = S::recreate(env.conn, S::TABLE)?;
    let start = Instant::now();
    let mut ins = Inserter::with_format(env.conn, &table, format)?;
    for i in span.start..span.end {
        S::with_row(i, |values| ins.add_row(values))?;
    }
    ins.execute()?;
    let secs = start.elapsed().as_secs_f64();
    S::verify_table(env.conn, S::TABLE, span)?;
    Ok(secs)
}

/// Sync `ChunkSender` on one connection, chunks encoded on `workers` threads.
pub fn chunk_sender(env: &mut Env<'_>) -> Result<f64> {
    chunk_sender_of::<Measurements>(env)
}

/// [`chunk_sender`] on schema `S`.
pub fn chunk_sender_of<S: Schema>(env: &mut Env<'_>) -> Result<f64> {
    let span = env.span();
    let table = S::recreate(env.conn, S::TABLE)?;
    let chunks = span.chunks(CHUNK_ROWS);
    let start = Instant::now();
    let mut sender = ChunkSender::new(env.conn, &table)?;
    sender.send_parallel(&table, env.workers, chunks.len(), |i, chunk| {
        fill_of::<S>(chunk, chunks[i])
    })?;
    sender.execute()?;
    let secs = start.elapsed().as_secs_f64();
    S::verify_table(env.conn, S::TABLE, span)?;
    Ok(secs)
}

/// `AsyncChunkSender` on each of `workers` connections (one table each),
/// chunks encoded by `spawn_blocking` one ahead of the send.
pub fn async_chunk_senders(env: &mut Env<'_>) -> Result<f64> {
    async_chunk_senders_of::<Measurements>(env)
}

/// [`async_chunk_senders`] on schema `S`.
pub fn async_chunk_senders_of<S: Schema>(env: &mut Env<'_>) -> Result<f64> {
    let parts = env.span().split(env.workers);
    let mut tables = Vec::with_capacity(parts.len());
    for i in 0..parts.len() {
        tables.push(S::recreate(env.conn, &S::worker_table(i))?);
    }
    let rt = env.rt;
    let conns = env.async_connections(parts.len())?;
    let start = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::with_capacity(parts.len());
        for ((conn, table), span) in conns.into_iter().zip(tables).zip(parts.iter().copied()) {
            tasks.push(tokio::spawn(send_chunks::<S>(conn, table, span)));
        }
        for task in tasks {
            task.await??;
        }
        Ok::<(), data::BoxError>(())
    })?;
    let secs = start.elapsed().as_secs_f64();
    for (i, span) in parts.iter().enumerate() {
        S::verify_table(env.conn, &S::worker_table(i), *span)?;
    }
    Ok(secs)
}

async fn send_chunks<S: Schema>(
    mut conn: AsyncConnection,
    table: TableDefinition,
    span: Span,
) -> Result<()> {
    let template = InsertChunk::new(&table)?;
    let mut pieces = span.chunks(CHUNK_ROWS).into_iter();
    let Some(first) = pieces.next() else {
        return Ok(());
    };
    let mut sender = AsyncChunkSender::new(&mut conn, &table).await?;
    let encode = |mut chunk: InsertChunk, span: Span| {
        tokio::task::spawn_blocking(move || fill_of::<S>(&mut chunk, span).map(|()| chunk))
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
