//! Ingest over several connections at once: hyperd parses and stores each
//! COPY on its own, so N connections use N server threads.
//!
//! Batches are dealt round-robin (batch `i` to connection `i % n`). Each
//! connection's COPY commits on its own: if one fails, the others are
//! aborted when still running, but ones that already committed stay. Give
//! each connection its own table (and merge with `INSERT ... SELECT`) when
//! the whole load must be all or nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use arrow_array::RecordBatch;

use super::ArrowInserter;
use crate::error::{Error, Result};
use crate::table_definition::TableDefinition;
use crate::Connection;

/// Which table connection `i` of `n` writes into: one shared table, or one
/// table per connection.
fn table_for(tables: &[TableDefinition], i: usize, n: usize) -> Result<&TableDefinition> {
    match tables.len() {
        1 => Ok(&tables[0]),
        len if len == n => Ok(&tables[i]),
        len => Err(Error::invalid_argument(
            "tables",
            format!(
                "{len} tables for {n} connections: give one shared table or one per connection"
            ),
        )),
    }
}

fn check_setup(connections: usize, tables: &[TableDefinition]) -> Result<()> {
    if connections == 0 {
        return Err(Error::invalid_argument("connections", "none given"));
    }
    table_for(tables, 0, connections).map(drop)
}

/// Checks the per-connection counts (each already matched what its COPY
/// was sent) against the input.
fn total(stored: &[u64], batches: &[RecordBatch]) -> Result<u64> {
    let sent: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let stored: u64 = stored.iter().sum();
    if stored != sent {
        return Err(Error::RowCountMismatch { sent, stored });
    }
    Ok(stored)
}

/// Inserts `batches` over all `connections` at once, one thread each, into
/// `tables` (one shared table, or one per connection). Returns the rows
/// stored, checked per connection and in total.
pub fn insert_batches_parallel_blocking(
    connections: &mut [Connection],
    tables: &[TableDefinition],
    batches: &[RecordBatch],
) -> Result<u64> {
    check_setup(connections.len(), tables)?;
    let n = connections.len();
    let stop = AtomicBool::new(false);
    let results: Vec<Result<u64, Option<Error>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = connections
            .iter_mut()
            .enumerate()
            .map(|(i, conn)| {
                let stop = &stop;
                scope.spawn(move || {
                    let table = table_for(tables, i, n).map_err(Some)?;
                    let res = insert_share(conn, table, batches, i, n, stop);
                    if matches!(res, Err(Some(_))) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    res
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Some(Error::invalid_argument(
                        "insert_batches_parallel",
                        "a worker panicked",
                    )))
                })
            })
            .collect()
    });
    let mut stored = Vec::with_capacity(n);
    let mut stopped = false;
    for res in results {
        match res {
            Ok(rows) => stored.push(rows),
            Err(Some(e)) => return Err(e),
            Err(None) => stopped = true,
        }
    }
    if stopped {
        return Err(Error::invalid_argument(
            "insert_batches_parallel",
            "stopped without an error",
        ));
    }
    total(&stored, batches)
}

/// One connection's share; `Err(None)` means it stopped because another
/// connection failed (that error is the one to report).
fn insert_share(
    conn: &mut Connection,
    table: &TableDefinition,
    batches: &[RecordBatch],
    i: usize,
    n: usize,
    stop: &AtomicBool,
) -> Result<u64, Option<Error>> {
    let mut ins = ArrowInserter::new(conn, table)?;
    for batch in batches.iter().skip(i).step_by(n) {
        if stop.load(Ordering::Relaxed) {
            return Err(None);
        }
        ins.insert_batch(batch)?;
    }
    Ok(ins.finish()?)
}

/// Inserts `batches` over all `connections` concurrently (one task, I/O
/// interleaved), into `tables` (one shared table, or one per connection).
/// Returns the rows stored, checked per connection and in total. The first
/// error drops the other inserters, which aborts their COPYs.
#[cfg(feature = "async")]
pub async fn insert_batches_parallel(
    connections: &mut [crate::AsyncConnection],
    tables: &[TableDefinition],
    batches: &[RecordBatch],
) -> Result<u64> {
    check_setup(connections.len(), tables)?;
    let n = connections.len();
    let mut jobs = Vec::with_capacity(n);
    for (i, conn) in connections.iter_mut().enumerate() {
        let table = table_for(tables, i, n)?;
        jobs.push(async move {
            let mut ins = super::AsyncArrowInserter::new(conn, table).await?;
            for batch in batches.iter().skip(i).step_by(n) {
                ins.insert_batch(batch).await?;
            }
            ins.finish().await
        });
    }
    let stored = futures_util::future::try_join_all(jobs).await?;
    total(&stored, batches)
}
