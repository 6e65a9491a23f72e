//! Cancels of one gRPC result among several on a connection: a result's
//! canceller and its `CancelToken` (what Node's `AbortSignal` uses) reach
//! its own query, never the one started after it, and a token stops an
//! aggregate before its first batch rather than after its end.

use std::time::Duration;

use hyperdb_api::{AsyncGrpcConnection, CancelToken, Error, TransferMode};
use tokio::time::timeout;

use super::options;

/// Streams rows for hours.
const ENDLESS: &str = "SELECT i FROM generate_series(1, 100000000000) g(i)";
/// Computes for minutes before its one row.
const LONG_AGGREGATE: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

async fn connect() -> AsyncGrpcConnection {
    AsyncGrpcConnection::connect_with(&options(TransferMode::Sync))
        .await
        .unwrap()
}

/// Rows of `sql` read to the end on `conn`.
async fn count(conn: &AsyncGrpcConnection, sql: &str) -> Result<usize, Error> {
    let mut s = conn.query_arrow_stream(sql, vec![], None).await?;
    let mut n = 0;
    while let Some(b) = s.next().await {
        n += b?.num_rows();
    }
    Ok(n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_results_cancel_reaches_its_own_query_only() {
    let conn = connect().await;
    for token in [false, true] {
        let own = CancelToken::new();
        let mut a = conn
            .query_arrow_stream(ENDLESS, vec![], token.then_some(&own))
            .await
            .unwrap();
        a.next().await.unwrap().unwrap();
        // B starts after A: the connection's latest query.
        let b = {
            let conn = conn.clone();
            tokio::spawn(async move {
                count(&conn, "SELECT i FROM generate_series(1, 20000000) g(i)").await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        if token {
            own.cancel().await.unwrap();
        } else {
            a.canceller().cancel().await.unwrap();
        }
        let ended = timeout(Duration::from_secs(20), async {
            while let Some(item) = a.next().await {
                if let Err(e) = item {
                    return Some(e);
                }
            }
            None
        })
        .await
        .unwrap_or_else(|_| panic!("token {token}: A's cancel did not reach A"));
        let e = ended.expect("A ended with an error");
        assert_eq!(e.sqlstate(), "57014", "token {token}: {e}");
        assert_eq!(
            b.await
                .unwrap()
                .expect("B, never cancelled, runs to its end"),
            20_000_000,
            "token {token}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_stops_an_aggregate_before_its_first_batch() {
    let conn = connect().await;
    let token = CancelToken::new();
    let running = {
        let (conn, token) = (conn.clone(), token.clone());
        tokio::spawn(async move {
            let mut s = conn
                .query_arrow_stream(LONG_AGGREGATE, vec![], Some(&token))
                .await?;
            s.next().await.transpose()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    token.cancel().await.unwrap();
    let e = timeout(Duration::from_secs(20), running)
        .await
        .expect("the aggregate was cancelled on the server, not computed")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.sqlstate(), "57014", "{e}");

    // Cancelled before the call: an error, and the query does not run on.
    let token = CancelToken::new();
    token.cancel().await.unwrap();
    let start = std::time::Instant::now();
    let e = conn
        .query_arrow_ipc_stream(LONG_AGGREGATE, vec![], Some(&token))
        .await
        .err();
    assert!(
        e.is_some_and(|e| e.is_cancelled()),
        "a cancelled token's call"
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(count(&conn, "SELECT 1").await.unwrap(), 1);
}
