//! A server that goes silent (a stopped process, a network that drops
//! everything without closing the connection) while a result is
//! abandoned: the cancel the client sends for it goes unanswered, and
//! after the grace a query timeout would give (5 s) the connection is
//! given up, instead of holding the next call and `close` for ever (a
//! Node `close()` after an aborted query waited on, 8 s and more, for a
//! stopped hyperd). Without a query timeout set, which is the default.
//! A call whose own cancel (a token, Node's `AbortSignal`) goes
//! unanswered before its result starts, or a command's, is given up
//! alike.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use hyperdb_api::{
    AsyncConnection, CancelToken, ConnectOptions, Connection, Place, ResultStream, SharedConnection,
};

use crate::common::tcp_server;
use crate::fault_proxy::{Fault, FaultProxy};

const HUGE: &str = "SELECT i::BIGINT FROM generate_series(1, 50000000) g(i)";
/// Longer than giving up may take: the drain's patience (20 ms), the
/// cancel request's wait for the server (2 s) and the grace (5 s), with
/// room for a busy box; reached only when nothing gives up.
const NEVER: Duration = Duration::from_secs(60);

fn options(proxy: &FaultProxy) -> ConnectOptions {
    ConnectOptions::new(proxy.endpoint()).with_password(tcp_server().password().unwrap())
}

/// What the call after an abandoned result on a silent server gave: it
/// gives up with a timeout naming the abandoned result, not at once (the
/// grace was given) and well before [`NEVER`].
fn assert_given_up(e: &hyperdb_api::Error, took: Duration) {
    assert!(e.is_timeout(), "{e}");
    assert!(e.to_string().contains("abandoned"), "{e}");
    assert!(took >= Duration::from_secs(4), "no grace: {took:?}");
}

#[test]
fn an_abandoned_result_on_a_silent_server_gives_the_connection_up() {
    let proxy = FaultProxy::to_endpoint(tcp_server().endpoint()).unwrap();
    let mut c = Connection::connect_with(&options(&proxy)).unwrap();
    let mut batches = c.query_arrow(HUGE).unwrap();
    batches.next().unwrap().unwrap();
    proxy.set(Fault::StallBoth);
    drop(batches);
    // On a thread: without the fix the call never returns.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let started = Instant::now();
        let e = c.query_scalar::<i32>("SELECT 1").unwrap_err();
        let took = started.elapsed();
        let again = c.query_scalar::<i32>("SELECT 1").unwrap_err();
        tx.send((e, took, again, c.close())).unwrap();
    });
    let (e, took, again, closed) = rx.recv_timeout(NEVER).expect("the call gave up");
    proxy.set(Fault::None);
    assert_given_up(&e, took);
    // Given up for good: the next call fails at once, and close returns.
    assert_eq!(again.sqlstate(), "08006", "{again}");
    closed.unwrap();
}

#[tokio::test]
async fn an_abandoned_async_result_on_a_silent_server_gives_the_connection_up() {
    let proxy = FaultProxy::to_endpoint(tcp_server().endpoint()).unwrap();
    let mut c = AsyncConnection::connect_with(&options(&proxy))
        .await
        .unwrap();
    let mut batches = c.query_arrow(HUGE).await.unwrap();
    batches.next().await.unwrap().unwrap();
    proxy.set(Fault::StallBoth);
    drop(batches);
    let started = Instant::now();
    let e = tokio::time::timeout(NEVER, c.query_scalar::<i32>("SELECT 1"))
        .await
        .expect("the call gave up")
        .unwrap_err();
    let took = started.elapsed();
    proxy.set(Fault::None);
    assert_given_up(&e, took);
    c.close().await.unwrap();
}

/// The Node package's connection: its `close` after an aborted query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_after_an_abandoned_shared_result_on_a_silent_server_returns() {
    let (proxy, conn, s) = reading_through_a_proxy().await;
    proxy.set(Fault::StallBoth);
    drop(s);
    let started = Instant::now();
    let closed = tokio::time::timeout(NEVER, conn.close())
        .await
        .expect("close returned");
    let took = started.elapsed();
    proxy.set(Fault::None);
    closed.unwrap();
    assert!(took >= Duration::from_secs(4), "no grace: {took:?}");
    assert!(conn.is_closed());
}

/// A call cancelled by its token before its result started (Node's
/// aborted query, whose Promise rejects at once while the native call
/// waits on): the cancel goes unanswered, and 5 s later the call ends
/// with a timeout, the connection given up, and `close` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_cancelled_on_a_silent_server_gives_the_connection_up() {
    cancelled_on_a_silent_server(|place, token| async move {
        place
            .query_arrow(LONG, vec![], Some(&token))
            .await
            .map(drop)
    })
    .await;
}

/// A command cancelled by its token (Node's aborted `executeCommand`,
/// whose Promise waits for the command's outcome): without the grace, the
/// call, and `close` behind it, waited for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cancelled_on_a_silent_server_gives_the_connection_up() {
    cancelled_on_a_silent_server(|place, token| async move {
        let command = format!("CREATE TEMPORARY TABLE t AS {LONG}");
        place
            .execute_command(&command, &[], Some(&token))
            .await
            .map(drop)
    })
    .await;
}

/// A stream read on when the server goes silent, cancelled by the
/// connection-wide `cancel()` (Node's `conn.cancel()`) or by the
/// stream's own canceller, while its consumer keeps waiting for the next
/// batch: the cancel goes unanswered, and the wait ends with a timeout
/// after the grace instead of never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_cancelled_on_a_silent_server_gives_the_connection_up() {
    for by_connection in [true, false] {
        let (proxy, conn, mut s) = reading_through_a_proxy().await;
        proxy.set(Fault::StallBoth);
        let started = Instant::now();
        if by_connection {
            conn.cancel().await.unwrap();
        } else {
            s.cancel().await.unwrap();
        }
        let e = tokio::time::timeout(NEVER, first_error(&mut s))
            .await
            .expect("the read gave up");
        assert_given_up_and_closed(e, started, &conn, &proxy).await;
    }
}

/// A shared connection through a fault proxy, reading `HUGE`'s batches
/// (the first one read).
async fn reading_through_a_proxy() -> (FaultProxy, SharedConnection, ResultStream<RecordBatch>) {
    let proxy = FaultProxy::to_endpoint(tcp_server().endpoint()).unwrap();
    let conn = SharedConnection::connect_with(&options(&proxy))
        .await
        .unwrap();
    let mut s = conn.query_arrow(HUGE, vec![]).await.unwrap();
    s.next().await.unwrap().unwrap();
    (proxy, conn, s)
}

/// The batches read ahead before the stall come first.
async fn first_error(s: &mut ResultStream<RecordBatch>) -> hyperdb_api::Error {
    loop {
        match s.next().await {
            Some(Ok(_)) => continue,
            Some(Err(e)) => return e,
            None => panic!("the result ended"),
        }
    }
}

/// A call on `conn` that failed with `e`, its cancel sent at `started`:
/// given up after the grace, and `close` returns.
async fn assert_given_up_and_closed(
    e: hyperdb_api::Error,
    started: Instant,
    conn: &SharedConnection,
    proxy: &FaultProxy,
) {
    let took = started.elapsed();
    let closed = tokio::time::timeout(NEVER, conn.close())
        .await
        .expect("close returned");
    proxy.set(Fault::None);
    assert!(e.is_timeout(), "{e}");
    assert!(e.to_string().contains("cancel request"), "{e}");
    assert!(took >= Duration::from_secs(4), "no grace: {took:?}");
    closed.unwrap();
}

/// The same against a live server: the answered cancel ends the read
/// with 57014, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_cancel_ends_the_read_as_the_server_does() {
    let (_proxy, conn, mut s) = reading_through_a_proxy().await;
    conn.cancel().await.unwrap();
    let e = first_error(&mut s).await;
    assert_eq!(e.sqlstate(), "57014", "{e}");
    drop(s);
    conn.execute_command("SELECT 1", &[]).await.unwrap();
    conn.close().await.unwrap();
}

const LONG: &str = "SELECT count(*) FROM generate_series(1, 100000000000) g(i)";

/// Starts `call` with a token, silences the server, cancels the token,
/// and checks the call gives up after the grace and `close` returns.
async fn cancelled_on_a_silent_server<C, F>(call: C)
where
    C: FnOnce(Place, CancelToken) -> F,
    F: std::future::Future<Output = hyperdb_api::Result<()>> + Send + 'static,
{
    let proxy = FaultProxy::to_endpoint(tcp_server().endpoint()).unwrap();
    let conn = SharedConnection::connect_with(&options(&proxy))
        .await
        .unwrap();
    let token = CancelToken::new();
    let running = tokio::spawn(call(conn.place(), token.clone()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.set(Fault::StallBoth);
    let started = Instant::now();
    token.cancel().await.unwrap();
    let e = tokio::time::timeout(NEVER, running)
        .await
        .expect("the call gave up")
        .unwrap()
        .unwrap_err();
    assert_given_up_and_closed(e, started, &conn, &proxy).await;
}
