//! `query.*` over hyperd's gRPC interface (`BENCH_TRANSPORT=grpc`): the row
//! API and Arrow batches, sync, async, and async on `workers` connections.
//! Inserts stay on the PostgreSQL protocol: the gRPC service only reads.
//! `BENCH_GRPC_MODE=sync|async|adaptive` picks the transfer mode (default
//! sync, the library's; hyperd then runs without persisted results, as
//! `with_grpc` starts it, and with them for the other two, which need them).
//!
//! Timed: from sending the query to the last row or batch, every value
//! decoded. Untimed: connecting, comparing with the expected answer.

use std::time::Instant;

use hyperdb_api::grpc::TransferMode;
use hyperdb_api::{AsyncGrpcConnection, GrpcConnectOptions, GrpcConnection};

use crate::arrow::add_batch;
use crate::data::{self, Answer, Query, Result};
use crate::Env;

/// The transfer mode from `BENCH_GRPC_MODE`, and its name for the table.
pub fn mode() -> Result<(TransferMode, &'static str)> {
    match std::env::var("BENCH_GRPC_MODE").ok().as_deref() {
        None | Some("" | "sync") => Ok((TransferMode::Sync, "sync")),
        Some("adaptive") => Ok((TransferMode::Adaptive, "adaptive")),
        Some("async") => Ok((TransferMode::Async, "async")),
        Some(other) => {
            Err(format!("BENCH_GRPC_MODE=`{other}`: use sync, async or adaptive").into())
        }
    }
}

fn options(env: &Env<'_>) -> Result<GrpcConnectOptions> {
    let url = env.grpc.ok_or("hyperd was started without gRPC")?;
    Ok(GrpcConnectOptions::from_endpoint(url)?
        .with_database(env.db)?
        .with_transfer_mode(mode()?.0))
}

/// Sync, one connection, over `measurements`; rows or Arrow batches.
pub fn sync(env: &mut Env<'_>, query: Query, arrow: bool) -> Result<(f64, Answer)> {
    let conn = GrpcConnection::connect_with(&options(env)?)?;
    let sql = query.sql("measurements")?;
    let mut answer = Answer::new(query);
    let start = Instant::now();
    if arrow {
        for batch in conn.query_arrow(&sql)? {
            add_batch(&mut answer, &batch?)?;
        }
    } else {
        for row in conn.execute_query(&sql)? {
            answer.add_row(&row?)?;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}

async fn run(
    conn: AsyncGrpcConnection,
    query: Query,
    table: String,
    arrow: bool,
) -> Result<Answer> {
    let sql = query.sql(&table)?;
    let mut answer = Answer::new(query);
    if arrow {
        let mut batches = conn.query_arrow(&sql).await?;
        while let Some(batch) = batches.next().await {
            add_batch(&mut answer, &batch?)?;
        }
    } else {
        let mut rows = conn.execute_query(&sql).await?;
        while let Some(row) = rows.next().await {
            answer.add_row(&row?)?;
        }
    }
    Ok(answer)
}

/// Async on `n` connections at once (one task each): over `measurements`
/// when `n` is 1, else over `measurements_{i}`.
pub fn async_on(env: &mut Env<'_>, query: Query, n: usize, arrow: bool) -> Result<(f64, Answer)> {
    let opts = options(env)?;
    let conns = env.rt.block_on(async {
        let mut conns = Vec::with_capacity(n);
        for _ in 0..n {
            conns.push(AsyncGrpcConnection::connect_with(&opts).await?);
        }
        Ok::<_, data::BoxError>(conns)
    })?;
    let start = Instant::now();
    let answer = env.rt.block_on(async {
        let tasks: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let table = data::scan_table(i, n);
                tokio::spawn(async move {
                    run(conn, query, table, arrow)
                        .await
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        let mut total = Answer::new(query);
        for task in tasks {
            total.merge(&task.await??)?;
        }
        Ok::<_, data::BoxError>(total)
    })?;
    let secs = start.elapsed().as_secs_f64();
    data::verify(query.name(), &answer, &query.expected(env.span()))?;
    Ok((secs, answer))
}
