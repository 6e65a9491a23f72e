//! Dropped futures and dropped results against a scripted fake server
//! (`test_support/fake_hyperd.rs`), which can hold a reply back or stream
//! rows until it is cancelled, and logs what the client sent and when: an
//! insert future dropped before its COMMIT went out is rolled back (issue
//! 18, defect 4), and a dropped result is cancelled and completed before
//! anything else is sent (defect 6). No hyperd needed; `tests/live/`
//! `async_drop.rs` and `abandoned.rs` have the real server's side.

#![allow(clippy::unwrap_used)]

#[path = "../test_support/fake_catalog.rs"]
mod fake_catalog;
#[path = "../test_support/fake_hyperd.rs"]
mod fake_hyperd;

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, Endpoint};

use fake_catalog::{answer_insert, logged};
use fake_hyperd::{
    accept_login, message, read_message, read_startup, row_description, serve_session_with_key,
    BACKEND_KEY,
};

/// How long a fake server waits for the client before it gives up.
const WATCHDOG: Duration = Duration::from_secs(60);

fn loopback() -> (TcpListener, Endpoint) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, Endpoint::tcp("127.0.0.1", port))
}

/// A [`holding_insert_server`]: its thread (the log), the signal that it
/// holds a reply, and what releases it.
type HoldingServer = (
    JoinHandle<io::Result<Vec<String>>>,
    std::sync::mpsc::Receiver<()>,
    Sender<()>,
);

/// A server for inserts that logs what the client sends after the first
/// insert's rows (`CopyDone`, `CopyFail`, query texts) and, from then on,
/// holds back its reply to `hold` (a query text, or `"CopyDone"`) until
/// released, so that the client's future can be dropped at exactly that
/// await point. Returns the log once the client ends the session.
fn holding_insert_server(listener: TcpListener, hold: &'static str, rows: u64) -> HoldingServer {
    let (held_tx, held) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (s, _) = listener.accept()?;
        let (mut log, mut copy_ended) = (Vec::new(), false);
        serve_session_with_key(s, (7, 8), |tag, body, out| {
            if tag == b'd' {
                return;
            }
            let what = logged(tag, body);
            copy_ended |= what == "CopyDone";
            if copy_ended && what == hold {
                let _ = held_tx.send(());
                let _ = released.recv_timeout(WATCHDOG);
            }
            if copy_ended {
                log.push(what);
            }
            answer_insert(out, tag, body, rows);
        })?;
        Ok(log)
    });
    (server, held, release)
}

/// Rows of each insert of the drop tests.
const ROWS: u64 = 10;

/// The fake's table, `t (id INT NOT NULL, v BIGINT)`.
fn table() -> hyperdb_api::TableDefinition {
    hyperdb_api::TableDefinition::new("t")
        .with_not_null_column("id", hyperdb_api::types::SqlType::Int)
        .with_column("v", hyperdb_api::types::SqlType::BigInt)
}

/// A connection to a [`holding_insert_server`] holding `hold`.
async fn connect_held_at(hold: &'static str) -> (AsyncConnection, HoldingServer) {
    let (listener, endpoint) = loopback();
    let server = holding_insert_server(listener, hold, ROWS);
    let conn = AsyncConnection::connect_with(&ConnectOptions::new(endpoint))
        .await
        .unwrap();
    (conn, server)
}

/// An inserter into `t` that has added its `ROWS` rows.
async fn inserter_with_rows<'c>(
    conn: &'c mut AsyncConnection,
    table: &hyperdb_api::TableDefinition,
) -> hyperdb_api::AsyncInserter<'c> {
    let mut ins = hyperdb_api::AsyncInserter::new(conn, table).await.unwrap();
    for i in 0..ROWS as i32 {
        ins.add_row(&[&i, &None::<i64>]).await.unwrap();
    }
    ins
}

/// Runs `step` until the server holds a reply (`held` signals it), and
/// drops it there.
async fn drop_when_held<T: std::fmt::Debug>(
    held: std::sync::mpsc::Receiver<()>,
    step: impl Future<Output = T>,
) {
    let held = tokio::task::spawn_blocking(move || held.recv_timeout(WATCHDOG));
    tokio::select! {
        res = step => panic!("the step ended while the server held its reply: {res:?}"),
        held = held => held.unwrap().expect("the server never got to the held reply"),
    }
}

/// Releases the server, runs `SELECT 1` and closes: what the client sent
/// after the first insert's rows.
async fn release_and_log(
    mut conn: AsyncConnection,
    server: JoinHandle<io::Result<Vec<String>>>,
    release: Sender<()>,
) -> Vec<String> {
    drop(release);
    conn.execute_command("SELECT 1").await.unwrap();
    conn.close().await.unwrap();
    server.join().unwrap().unwrap()
}

/// Drives the insert of `ROWS` rows until the server holds its reply to
/// `hold`, drops `execute()` there, and returns what the client sent after
/// the rows, its next query (`SELECT 1`) included.
async fn drop_insert_at(hold: &'static str) -> Vec<String> {
    let (mut conn, (server, held, release)) = connect_held_at(hold).await;
    let table = table();
    let ins = inserter_with_rows(&mut conn, &table).await;
    drop_when_held(held, ins.execute()).await;
    release_and_log(conn, server, release).await
}

/// `execute()` dropped while the COPY's reply is awaited (CopyDone sent,
/// no COMMIT yet): the client rolls the insert's transaction back and
/// never sends COMMIT. Before, it sent neither, and the rows sat in a
/// transaction left open, which the session's next statements ran in.
#[tokio::test]
async fn an_insert_dropped_before_its_commit_is_rolled_back() {
    let log = drop_insert_at("CopyDone").await;
    assert_eq!(log, ["CopyDone", "ROLLBACK", "SELECT 1"]);
}

/// Dropped while the COMMIT's reply is awaited, the COMMIT went out in
/// the poll that decided it (the server had it before the future could be
/// dropped): the insert is the server's, and nothing undoes it.
#[tokio::test]
async fn an_insert_dropped_after_its_commit_went_out_sends_nothing_more() {
    let log = drop_insert_at("COMMIT").await;
    assert_eq!(log, ["CopyDone", "COMMIT", "SELECT 1"]);
}

/// `AsyncInserter::new` of an insert repeating the last one (no lookup)
/// sends its COPY statement with its `BEGIN` and waits for `BEGIN`'s
/// reply; dropped there, the COPY is ended with CopyFail and the
/// transaction rolled back before the next call, no row sent.
#[tokio::test]
async fn an_insert_dropped_while_its_begin_is_answered_sends_no_row() {
    let (mut conn, (server, held, release)) = connect_held_at("BEGIN").await;
    let table = table();
    let ins = inserter_with_rows(&mut conn, &table).await;
    assert_eq!(ins.execute().await.unwrap(), ROWS);
    drop_when_held(held, hyperdb_api::AsyncInserter::new(&mut conn, &table)).await;
    let log = release_and_log(conn, server, release).await;
    assert_eq!(log.len(), 7, "{log:?}");
    assert_eq!(log[..3], ["CopyDone", "COMMIT", "BEGIN"]);
    assert!(log[3].starts_with("COPY \"t\" FROM STDIN"), "{log:?}");
    assert_eq!(log[4..], ["CopyFail", "ROLLBACK", "SELECT 1"]);
}

/// Rows the streaming server sends at most (14 bytes each, 140 MB): a
/// client that drains instead of cancelling is told by the count.
const STREAM_CAP: u64 = 10_000_000;
/// Rows a cancelling client may still have been sent: the socket buffers
/// on the way hold what the server wrote before it saw the cancel, up to
/// ~36 MB with Linux's largest defaults (`tcp_rmem` 32 MiB, `tcp_wmem` 4
/// MiB), ~2.6M rows.
const CANCELLED_CAP: u64 = 4_000_000;
/// Rows per write of the streaming server; it looks for a cancel between
/// writes.
const ROWS_PER_WRITE: u64 = 512;

/// What the streaming server saw.
#[derive(Debug, Default)]
struct StreamLog {
    /// Rows sent before the result ended (by the cancel, or at the cap).
    rows_sent: u64,
    /// A cancel request with the session's key arrived.
    cancelled: bool,
    /// Bytes had arrived from the client when the server was about to
    /// end the cancelled result: the client sent on before the stream's
    /// `ReadyForQuery`, which a late cancel could then have failed.
    sent_early: bool,
    /// The simple queries received, in order.
    queries: Vec<String>,
}

/// Serves one session on `listener` whose extended queries stream INT rows
/// until a cancel request (on a new connection to the same listener)
/// arrives, then end with 57014; at [`STREAM_CAP`] rows they complete.
/// Simple queries are logged and answered (`BEGIN` opens a transaction).
fn streaming_server(listener: TcpListener) -> JoinHandle<io::Result<StreamLog>> {
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept()?;
        let cancelled = Arc::new(AtomicBool::new(false));
        let flag = cancelled.clone();
        // Every later connection is a cancel request: 16 bytes (length,
        // code 80877102, key), then the server closes the socket, as
        // hyperd does once it has taken it.
        std::thread::spawn(move || {
            for c in listener.incoming() {
                let Ok(mut c) = c else { return };
                let mut req = [0u8; 16];
                if c.read_exact(&mut req).is_ok() {
                    let word = |i: usize| i32::from_be_bytes(req[i..i + 4].try_into().unwrap());
                    if word(4) == 80_877_102 && (word(8), word(12)) == BACKEND_KEY {
                        flag.store(true, Ordering::SeqCst);
                    }
                }
            }
        });
        s.set_read_timeout(Some(WATCHDOG))?;
        read_startup(&mut s)?;
        let mut out = BytesMut::new();
        accept_login(&mut out, BACKEND_KEY);
        s.write_all(&out)?;
        let mut log = StreamLog::default();
        let mut status = b'I';
        while let Some((tag, body)) = read_message(&mut s)? {
            out.clear();
            match tag {
                b'X' => break,
                b'Q' => {
                    let text = String::from_utf8_lossy(body.strip_suffix(b"\0").unwrap_or(&body))
                        .into_owned();
                    let word = text.split(' ').next().unwrap_or("").to_owned();
                    status = match word.as_str() {
                        "BEGIN" => b'T',
                        "ROLLBACK" | "COMMIT" => b'I',
                        _ => status,
                    };
                    message(&mut out, b'C', format!("{word}\0").as_bytes());
                    message(&mut out, b'Z', &[status]);
                    log.queries.push(text);
                }
                b'S' => {
                    stream_rows(&mut s, &cancelled, &mut log, &mut status)?;
                    continue;
                }
                // Parse, Bind, Describe, Execute: answered at Sync.
                _ => continue,
            }
            s.write_all(&out)?;
        }
        Ok(log)
    })
}

/// Answers one extended query: rows until cancelled or the cap.
fn stream_rows(
    s: &mut TcpStream,
    cancelled: &AtomicBool,
    log: &mut StreamLog,
    status: &mut u8,
) -> io::Result<()> {
    let mut out = BytesMut::new();
    message(&mut out, b'1', b"");
    message(&mut out, b'2', b"");
    row_description(&mut out, &[("i", 23, 4)]);
    s.write_all(&out)?;
    while log.rows_sent < STREAM_CAP {
        if cancelled.load(Ordering::SeqCst) {
            log.cancelled = true;
            // Whatever a wrong client sends right after its cancel has
            // time to arrive; a right one sends nothing until it has
            // read the end written below.
            std::thread::sleep(Duration::from_millis(50));
            s.set_nonblocking(true)?;
            log.sent_early = matches!(s.peek(&mut [0u8; 1]), Ok(n) if n > 0);
            s.set_nonblocking(false)?;
            out.clear();
            message(&mut out, b'E', b"SERROR\0C57014\0Mcanceled by user\0\0");
            if *status == b'T' {
                *status = b'E';
            }
            message(&mut out, b'Z', &[*status]);
            return s.write_all(&out);
        }
        out.clear();
        for i in 0..ROWS_PER_WRITE {
            out.put_u8(b'D');
            out.put_i32(4 + 2 + 4 + 4);
            out.put_i16(1);
            out.put_i32(4);
            out.put_i32_le((log.rows_sent + i) as i32);
        }
        s.write_all(&out)?;
        log.rows_sent += ROWS_PER_WRITE;
    }
    out.clear();
    message(
        &mut out,
        b'C',
        format!("SELECT {}\0", log.rows_sent).as_bytes(),
    );
    message(&mut out, b'Z', &[*status]);
    s.write_all(&out)
}

/// What a dropped result, and a transaction dropped around it, must leave
/// on the wire: the result cancelled long before its end, its
/// `ReadyForQuery` read before the queued `ROLLBACK` went out, then the
/// next statement.
fn assert_cancelled_before_anything_else_was_sent(log: &StreamLog) {
    assert!(
        log.cancelled,
        "the dropped result was not cancelled: {log:?}"
    );
    assert!(
        log.rows_sent < CANCELLED_CAP,
        "{} rows sent of {STREAM_CAP}: the rest was read, not cancelled",
        log.rows_sent
    );
    assert!(
        !log.sent_early,
        "the client sent on before the cancelled result had ended: {log:?}"
    );
    assert_eq!(log.queries, ["BEGIN", "ROLLBACK", "SELECT 1"]);
}

/// Before: the next request read all the rest (here 10M rows), or, in the
/// first version of the cancel, sent the transaction's queued `ROLLBACK`
/// right after the cancel, which a late cancel could have failed.
#[test]
fn a_dropped_result_is_cancelled_and_ended_before_the_next_request_goes_out() {
    let (listener, endpoint) = loopback();
    let server = streaming_server(listener);
    let mut c = Connection::connect_with(&ConnectOptions::new(endpoint)).unwrap();
    {
        let mut t = c.transaction().unwrap();
        let mut rows = t.execute_query_params("SELECT i", &[]).unwrap();
        for expected in 0..1_000 {
            let row = rows.next_row().unwrap().unwrap();
            assert_eq!(row.try_get::<i32>(0).unwrap(), expected);
        }
    }
    assert_eq!(c.execute_command("SELECT 1").unwrap(), 0);
    c.close().unwrap();
    assert_cancelled_before_anything_else_was_sent(&server.join().unwrap().unwrap());
}

#[tokio::test]
async fn a_dropped_async_result_is_cancelled_and_ended_before_the_next_request_goes_out() {
    let (listener, endpoint) = loopback();
    let server = streaming_server(listener);
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(endpoint))
        .await
        .unwrap();
    {
        let mut t = c.transaction().await.unwrap();
        let mut rows = t.execute_query_params("SELECT i", &[]).await.unwrap();
        for expected in 0..1_000 {
            let row = rows.next_row().await.unwrap().unwrap();
            assert_eq!(row.try_get::<i32>(0).unwrap(), expected);
        }
    }
    assert_eq!(c.execute_command("SELECT 1").await.unwrap(), 0);
    c.close().await.unwrap();
    let log = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_cancelled_before_anything_else_was_sent(&log);
}

/// Dropped before its rows were even described (the future dropped at
/// its first wait, a `timeout` that fires early): the next request reads
/// up to the description, then cancels as for any dropped result. Before,
/// such a query was read to its end whatever it was.
#[tokio::test]
async fn a_query_dropped_before_its_description_is_cancelled_too() {
    let (listener, endpoint) = loopback();
    let server = streaming_server(listener);
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(endpoint))
        .await
        .unwrap();
    {
        let mut query = std::pin::pin!(c.execute_query_params("SELECT i", &[]));
        let polled =
            std::future::poll_fn(|cx| std::task::Poll::Ready(query.as_mut().poll(cx).is_pending()))
                .await;
        assert!(polled, "the query's reply came within its first poll");
    }
    assert_eq!(c.execute_command("SELECT 1").await.unwrap(), 0);
    c.close().await.unwrap();
    let log = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(log.cancelled, "not cancelled: {log:?}");
    assert!(log.rows_sent < CANCELLED_CAP, "{log:?}");
    assert!(!log.sent_early, "{log:?}");
    assert_eq!(log.queries, ["SELECT 1"]);
}
