//! Cancelling a running query from another thread or task, and query timeouts.

use std::time::{Duration, Instant};

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection};

use crate::common::{cancel_soon, endpoints};

/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

#[test]
fn cancel_from_another_thread() {
    for ep in endpoints() {
        let mut c = Connection::connect_with(&ConnectOptions::new(ep)).unwrap();
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
    for ep in endpoints() {
        let mut c = AsyncConnection::connect_with(&ConnectOptions::new(ep))
            .await
            .unwrap();
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
    let ep = endpoints().remove(0);
    let opts = ConnectOptions::new(ep).with_query_timeout(Some(Duration::from_millis(400)));
    let mut c = Connection::connect_with(&opts).unwrap();
    let start = Instant::now();
    let e = c.query_scalar::<i64>(LONG_QUERY).unwrap_err();
    let took = start.elapsed();
    assert!(e.is_cancelled(), "{e:?}");
    assert!(e.is_timeout(), "the timeout's cancel is told apart: {e:?}");
    assert_eq!(e.sqlstate(), "HYT00");
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

#[tokio::test]
async fn async_query_timeout_cancels() {
    let ep = endpoints().remove(0);
    let opts = ConnectOptions::new(ep).with_query_timeout(Some(Duration::from_millis(400)));
    let mut c = AsyncConnection::connect_with(&opts).await.unwrap();
    let start = Instant::now();
    let e = c.query_scalar::<i64>(LONG_QUERY).await.unwrap_err();
    assert!(e.is_cancelled(), "{e:?}");
    assert!(e.is_timeout(), "{e:?}");
    assert!(start.elapsed() < Duration::from_millis(1400));
    assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
}
