//! Cancelling a running query from another thread or task, and query timeouts.

use std::time::{Duration, Instant};

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, InsertFormat, Inserter,
    TableDefinition,
};

use crate::common::{cancel_soon, db_with_table, server, temp_dir, transports, within};

/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

#[test]
fn cancel_from_another_thread() {
    for options in transports() {
        let mut c = Connection::connect_with(&options).unwrap();
        let handle = c.cancel_handle();
        let canceller = cancel_soon(move || handle.cancel().unwrap());
        let e = c.query_scalar::<i64>(LONG_QUERY).unwrap_err();
        let done = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        assert!(e.is_cancelled(), "{e:?}");
        assert!(!e.is_timeout(), "a caller's cancel is no timeout: {e:?}");
        assert_eq!(e.sqlstate(), "57014");
        let took = done.saturating_duration_since(cancelled_at);
        assert!(took < Duration::from_secs(1), "cancel took {took:?}");
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_from_another_task() {
    for options in transports() {
        let mut c = AsyncConnection::connect_with(&options).await.unwrap();
        let handle = c.cancel_handle();
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let at = Instant::now();
            handle.cancel_async().await.unwrap();
            at
        });
        let e = c.query_scalar::<i64>(LONG_QUERY).await.unwrap_err();
        let done = Instant::now();
        let cancelled_at = canceller.await.unwrap();
        assert!(e.is_cancelled(), "{e:?}");
        let took = done.saturating_duration_since(cancelled_at);
        assert!(took < Duration::from_secs(1), "cancel took {took:?}");
        assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
    }
}

#[test]
fn query_timeout_cancels_and_connection_survives() {
    for options in transports() {
        let opts = options.with_query_timeout(Some(Duration::from_millis(400)));
        let mut c = Connection::connect_with(&opts).unwrap();
        let start = Instant::now();
        let e = c.query_scalar::<i64>(LONG_QUERY).unwrap_err();
        let took = start.elapsed();
        assert!(e.is_cancelled(), "{e:?}");
        assert!(e.is_timeout(), "the timeout's cancel is told apart: {e:?}");
        assert_eq!(e.sqlstate(), "HYT00");
        assert!(
            e.to_string().starts_with("query timeout (400ms) expired"),
            "{e}"
        );
        assert!(
            took >= Duration::from_millis(400),
            "not before the timeout: {took:?}"
        );
        assert!(
            took < Duration::from_millis(1400),
            "soon after it: {took:?}"
        );
        assert_eq!(
            c.query_scalar::<i32>("SELECT 1").unwrap(),
            1,
            "short queries still run"
        );
    }
}

#[tokio::test]
async fn async_query_timeout_cancels() {
    for options in transports() {
        let opts = options.with_query_timeout(Some(Duration::from_millis(400)));
        let mut c = AsyncConnection::connect_with(&opts).await.unwrap();
        let start = Instant::now();
        let e = c.query_scalar::<i64>(LONG_QUERY).await.unwrap_err();
        assert!(e.is_cancelled(), "{e:?}");
        assert!(e.is_timeout(), "{e:?}");
        assert!(start.elapsed() < Duration::from_millis(1400));
        assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
    }
}

/// A COPY that runs past its query timeout is cancelled like any
/// statement: the writes go on (hyperd reads and discards the rest of a
/// cancelled COPY), the insert fails with the timeout error, nothing is
/// stored, and the connection stays usable.
#[test]
fn insert_past_its_query_timeout_is_cancelled() {
    within(Duration::from_secs(120), || {
        let dir = temp_dir();
        let table = TableDefinition::new("slow")
            .with_not_null_column("id", SqlType::Int)
            .with_column("s", SqlType::Text);
        db_with_table(&dir, "slow.hyper", &table).close().unwrap();
        let opts = ConnectOptions::new(server().endpoint().clone())
            .with_database(dir.path().join("slow.hyper"), CreateMode::DoNotCreate)
            .with_query_timeout(Some(Duration::from_millis(300)));
        let mut c = Connection::connect_with(&opts).unwrap();
        let mut ins = Inserter::with_format(&mut c, &table, InsertFormat::HyperBinary).unwrap();
        let text = Some("x".repeat(200));
        let start = Instant::now();
        let mut result = Ok(0);
        // Rows until well past the timeout (hyperd takes ~5 M rows/s), then
        // commit.
        let mut id = 0i32;
        while start.elapsed() < Duration::from_secs(2) {
            for _ in 0..10_000 {
                if let Err(e) = ins.add_row(&[&id, &text]) {
                    result = Err(e);
                    break;
                }
                id += 1;
            }
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = ins.execute();
        } else {
            drop(ins);
        }
        let e = result.unwrap_err();
        assert!(e.is_timeout(), "{e:?}");
        assert_eq!(e.sqlstate(), "HYT00");
        assert_eq!(
            c.query_scalar::<i64>("SELECT count(*) FROM slow").unwrap(),
            0
        );
    });
}
