//! The client against a scripted fake server (`test_support/fake_hyperd.rs`)
//! for what a real hyperd never does: ask for a password in clear text or
//! as MD5, or stop reading in the middle of a COPY. No hyperd needed;
//! `tests/live/auth.rs` has the real server's side of the same options.

#![allow(clippy::unwrap_used)]

#[path = "../test_support/fake_catalog.rs"]
mod fake_catalog;
#[path = "../test_support/fake_hyperd.rs"]
mod fake_hyperd;

use std::io::{self, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use hyperdb_api::{
    AsyncConnection, AuthMethod, AuthMethods, ConnectOptions, Connection, Endpoint, ErrorKind,
};

use fake_catalog::{answer_insert, catalog_reply, logged};
use fake_hyperd::{
    accept_login, complete_and_ready, copy_in_response, is_catalog_query, message, read_message,
    read_startup, serve_requests, serve_session_with_key,
};

const PASSWORD: &str = "hunter2-fake";

/// `AuthenticationCleartextPassword`.
const ASK_CLEARTEXT: &[u8] = &[0, 0, 0, 3];
/// `AuthenticationMD5Password` with a salt.
const ASK_MD5: &[u8] = &[0, 0, 0, 5, 1, 2, 3, 4];

/// What the fake server received in reply to its authentication request.
type Reply = io::Result<Option<(u8, Vec<u8>)>>;

/// Serves one connection on `listener`: asks for `request`, and returns
/// the client's reply (`None`: the client closed without one). A password
/// is accepted, and the session then served until the client ends it.
fn ask(listener: TcpListener, request: &'static [u8]) -> JoinHandle<Reply> {
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept()?;
        read_startup(&mut s)?;
        let mut out = BytesMut::new();
        message(&mut out, b'R', request);
        s.write_all(&out)?;
        let reply = read_message(&mut s)?;
        if let Some((b'p', _)) = reply {
            out.clear();
            accept_login(&mut out, (7, 8));
            s.write_all(&out)?;
            serve_requests(&mut s, |_, _, out| complete_and_ready(out, "SELECT 0"))?;
        }
        Ok(reply)
    })
}

fn bind(ip: IpAddr) -> (TcpListener, Endpoint) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, Endpoint::tcp(ip.to_string(), port))
}

fn loopback() -> (TcpListener, Endpoint) {
    bind(IpAddr::from([127, 0, 0, 1]))
}

fn assert_refused(e: &hyperdb_api::Error, method: AuthMethod) {
    assert_eq!(e.kind(), Some(ErrorKind::Auth), "{e}");
    assert_eq!(e.refused_auth_method(), Some(method), "{e}");
    assert_eq!(e.sqlstate(), "28000", "{e}");
    assert!(!e.to_string().contains(PASSWORD), "{e}");
}

/// With cleartext and MD5 refused, a server asking for either gets no
/// reply at all: the connect fails with the refused method typed on the
/// error and the client hangs up.
#[test]
fn refused_cleartext_and_md5_requests_get_no_password() {
    let refuse = AuthMethods::ALL.without(AuthMethods::CLEARTEXT | AuthMethods::MD5);
    for (request, method) in [
        (ASK_CLEARTEXT, AuthMethod::Cleartext),
        (ASK_MD5, AuthMethod::Md5),
    ] {
        let (listener, endpoint) = loopback();
        let server = ask(listener, request);
        let options = ConnectOptions::new(endpoint)
            .with_password(PASSWORD)
            .with_require_auth(refuse);
        let e = Connection::connect_with(&options).unwrap_err();
        assert_refused(&e, method);
        let reply = server.join().unwrap().unwrap();
        assert_eq!(reply, None, "{method}: the client answered");
    }
}

#[tokio::test]
async fn refused_methods_get_no_password_from_async_connections_either() {
    let (listener, endpoint) = loopback();
    let server = ask(listener, ASK_MD5);
    let options = ConnectOptions::new(endpoint)
        .with_password(PASSWORD)
        .with_require_auth(AuthMethods::SCRAM_SHA_256);
    let e = AsyncConnection::connect_with(&options).await.unwrap_err();
    assert_refused(&e, AuthMethod::Md5);
    assert_eq!(server.join().unwrap().unwrap(), None);
}

/// A non-loopback address of this machine, if it has one (the address a
/// packet to the outside would leave from; nothing is sent).
fn outward_address() -> Option<IpAddr> {
    let probe = UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// By default a TCP endpoint off the loopback refuses cleartext and MD5:
/// there is no TLS on the way, so whoever asks would get the password.
#[test]
fn remote_endpoints_refuse_cleartext_and_md5_by_default() {
    let Some(ip) = outward_address() else {
        eprintln!("no non-loopback address on this machine; the default is unit-tested in core");
        return;
    };
    for (request, method) in [
        (ASK_CLEARTEXT, AuthMethod::Cleartext),
        (ASK_MD5, AuthMethod::Md5),
    ] {
        let (listener, endpoint) = bind(ip);
        assert!(!endpoint.is_local(), "{endpoint}");
        let server = ask(listener, request);
        let options = ConnectOptions::new(endpoint).with_password(PASSWORD);
        let e = Connection::connect_with(&options).unwrap_err();
        assert_refused(&e, method);
        assert_eq!(server.join().unwrap().unwrap(), None, "{method}");
    }
}

/// On the loopback the default answers every method (the bytes stay on
/// this machine), and `AuthMethods::ALL` does so anywhere.
#[test]
fn loopback_endpoints_answer_cleartext_by_default() {
    let (listener, endpoint) = loopback();
    let server = ask(listener, ASK_CLEARTEXT);
    let mut conn =
        Connection::connect_with(&ConnectOptions::new(endpoint).with_password(PASSWORD)).unwrap();
    conn.execute_command("SELECT 0").unwrap();
    conn.close().unwrap();
    let reply = server.join().unwrap().unwrap();
    assert_eq!(reply, Some((b'p', format!("{PASSWORD}\0").into_bytes())));
}

/// No `Debug` of a connection, its cancel handle or its options shows the
/// session's cancel secret or the password.
#[test]
fn debug_output_never_shows_the_cancel_secret_or_the_password() {
    const SECRET: i32 = 1_987_654_321;
    let (listener, endpoint) = loopback();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let (s, _) = listener.accept()?;
            fake_hyperd::serve_session_with_key(s, (4242, SECRET), |_, _, out| {
                complete_and_ready(out, "SELECT 0")
            })?;
        }
        io::Result::Ok(())
    });
    let options = ConnectOptions::new(endpoint).with_password(PASSWORD);
    let check = |what: &str, shown: String| {
        assert!(!shown.contains(&SECRET.to_string()), "{what}: {shown}");
        assert!(!shown.contains(PASSWORD), "{what}: {shown}");
    };
    check("options", format!("{options:?}"));
    let conn = Connection::connect_with(&options).unwrap();
    check("connection", format!("{conn:?}"));
    check("cancel handle", format!("{:?}", conn.cancel_handle()));
    assert!(
        format!("{conn:?}").contains("4242"),
        "the process id is shown"
    );
    conn.close().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let conn = AsyncConnection::connect_with(&options).await.unwrap();
        check("async connection", format!("{conn:?}"));
        check("async cancel handle", format!("{:?}", conn.cancel_handle()));
        conn.close().await.unwrap();
    });
    server.join().unwrap().unwrap();
}

/// Serves one connection that logs in, answers the first COPY with a
/// `CopyInResponse` and then never reads again, as a wedged server would.
/// The socket (and the listener, where the client's cancel request then
/// waits unanswered) stay open until `release` is dropped.
fn stops_reading_during_copy(listener: TcpListener) -> (JoinHandle<io::Result<()>>, Sender<()>) {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept()?;
        read_startup(&mut s)?;
        let mut out = BytesMut::new();
        accept_login(&mut out, (7, 8));
        s.write_all(&out)?;
        loop {
            out.clear();
            match read_message(&mut s)? {
                Some((b'Q', sql)) if is_catalog_query(&sql) => {
                    out.extend_from_slice(&catalog_reply(&[("id", 23, true), ("s", 25, false)]));
                }
                Some((b'Q', sql)) if sql.starts_with(b"COPY") => break,
                Some((b'Q', _)) => complete_and_ready(&mut out, "SELECT 0"),
                Some(_) => {}
                None => return Ok(()),
            }
            s.write_all(&out)?;
        }
        copy_in_response(&mut out, 2);
        s.write_all(&out)?;
        let _ = released.recv_timeout(Duration::from_secs(120));
        drop((s, listener));
        Ok(())
    });
    (server, release)
}

const WRITE_TIMEOUT: Duration = Duration::from_secs(1);
/// The query timeout, the cancel request's wait for an answer that never
/// comes (2 s), the grace period after it (5 s), and slack for a loaded
/// machine.
const GIVES_UP_WITHIN: Duration = Duration::from_secs(12);
/// A test still running after this is hanging.
const WATCHDOG: Duration = Duration::from_secs(60);

fn copy_table() -> hyperdb_api::TableDefinition {
    hyperdb_api::TableDefinition::new("t")
        .with_not_null_column("id", hyperdb_api::types::SqlType::Int)
        .with_column("s", hyperdb_api::types::SqlType::Text)
}

/// Rows of ~1 KiB: enough of them fill every socket buffer on the way.
const FILL_ROWS: i32 = 2_000_000;

fn assert_write_timed_out(e: &hyperdb_api::Error, took: Duration) {
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(e.sqlstate(), "HYT00", "{e:?}");
    assert!(
        took >= WRITE_TIMEOUT,
        "not before the query timeout: {took:?}"
    );
    assert!(took < GIVES_UP_WITHIN, "took {took:?}");
}

/// A server that stops reading during a COPY: with a query timeout the
/// sync inserter's socket write gives up (cancel request first, then the
/// grace period) with the timeout error instead of blocking forever, and
/// the connection, out of step after a half-written frame, is closed.
#[test]
fn sync_inserter_write_times_out_when_the_server_stops_reading() {
    let (listener, endpoint) = loopback();
    let (server, release) = stops_reading_during_copy(listener);
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let options = ConnectOptions::new(endpoint).with_query_timeout(Some(WRITE_TIMEOUT));
        let mut conn = Connection::connect_with(&options).unwrap();
        let mut ins = hyperdb_api::Inserter::with_format(
            &mut conn,
            &copy_table(),
            hyperdb_api::InsertFormat::HyperBinary,
        )
        .unwrap();
        let text = Some("x".repeat(1024));
        let start = Instant::now();
        let mut failed = None;
        for i in 0..FILL_ROWS {
            if let Err(e) = ins.add_row(&[&i, &text]) {
                failed = Some(e);
                break;
            }
        }
        let took = start.elapsed();
        drop(ins);
        let next = Instant::now();
        let after = conn.execute_command("SELECT 1");
        done.send((failed, took, after, next.elapsed())).unwrap();
    });
    let (failed, took, after, next_took) = outcome
        .recv_timeout(WATCHDOG)
        .expect("the inserter hung in a socket write");
    let e = failed.expect("the server read nothing, yet every row was sent");
    assert_write_timed_out(&e, took);
    let e = after.unwrap_err();
    assert!(e.is_closed(), "the next call fails fast: {e:?}");
    assert!(next_took < Duration::from_secs(1), "{next_took:?}");
    drop(release);
    server.join().unwrap().unwrap();
}

/// The same for the async inserter: writes are bounded by the deadline.
#[tokio::test]
async fn async_inserter_write_times_out_when_the_server_stops_reading() {
    let (listener, endpoint) = loopback();
    let (server, release) = stops_reading_during_copy(listener);
    let options = ConnectOptions::new(endpoint).with_query_timeout(Some(WRITE_TIMEOUT));
    let mut conn = AsyncConnection::connect_with(&options).await.unwrap();
    let run = async {
        let mut ins = hyperdb_api::AsyncInserter::new(&mut conn, &copy_table())
            .await
            .unwrap();
        let text = Some("x".repeat(1024));
        let start = Instant::now();
        for i in 0..FILL_ROWS {
            if let Err(e) = ins.add_row(&[&i, &text]).await {
                return Some((e, start.elapsed()));
            }
        }
        None
    };
    let outcome = tokio::time::timeout(WATCHDOG, run)
        .await
        .expect("the inserter hung in a socket write");
    let (e, took) = outcome.expect("the server read nothing, yet every row was sent");
    assert_write_timed_out(&e, took);
    let next = Instant::now();
    let e = conn.execute_command("SELECT 1").await.unwrap_err();
    assert!(e.is_closed(), "the next call fails fast: {e:?}");
    assert!(next.elapsed() < Duration::from_secs(1));
    drop(release);
    server.join().unwrap().unwrap();
}

/// Chunks go out through `send_raw`, straight from the chunk's buffer:
/// bounded all the same.
#[test]
fn chunk_sender_write_times_out_when_the_server_stops_reading() {
    let (listener, endpoint) = loopback();
    let (server, release) = stops_reading_during_copy(listener);
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let options = ConnectOptions::new(endpoint).with_query_timeout(Some(WRITE_TIMEOUT));
        let mut conn = Connection::connect_with(&options).unwrap();
        let table = copy_table();
        let mut sender = hyperdb_api::ChunkSender::new(&mut conn, &table).unwrap();
        let mut chunk = hyperdb_api::InsertChunk::new(&table).unwrap();
        let text = Some("x".repeat(1024));
        let start = Instant::now();
        let mut failed = None;
        'fill: for _ in 0..FILL_ROWS / 4096 {
            for i in 0..4096 {
                chunk.add_row(&[&i, &text]).unwrap();
            }
            if let Err(e) = sender.send(&mut chunk) {
                failed = Some(e);
                break 'fill;
            }
        }
        done.send((failed, start.elapsed())).unwrap();
    });
    let (failed, took) = outcome
        .recv_timeout(WATCHDOG)
        .expect("the chunk sender hung in a socket write");
    let e = failed.expect("the server read nothing, yet every chunk was sent");
    assert_write_timed_out(&e, took);
    drop(release);
    server.join().unwrap().unwrap();
}

/// Serves one session whose second `BEGIN` fails, and logs what the
/// client sends after the first `COMMIT` (rows as `CopyData`).
fn failing_second_begin(listener: TcpListener) -> JoinHandle<io::Result<Vec<String>>> {
    std::thread::spawn(move || {
        let (s, _) = listener.accept()?;
        let (mut begins, mut committed, mut log) = (0, false, Vec::new());
        serve_session_with_key(s, (7, 8), |tag, body, out| {
            let what = logged(tag, body);
            if committed {
                log.push(what.clone());
            }
            begins += usize::from(what == "BEGIN");
            if what == "BEGIN" && begins == 2 {
                message(out, b'E', b"SERROR\0C53000\0Mfake: no transaction\0\0");
                message(out, b'Z', b"I");
            } else {
                committed |= what == "COMMIT";
                answer_insert(out, tag, body, 10);
            }
        })?;
        Ok(log)
    })
}

/// An insert repeating the last one skips its lookup and sends its COPY
/// statement with its `BEGIN`, before any row, so hyperd plans the COPY
/// while the rows are made (`copy_in_early`). Were that `BEGIN` to fail,
/// the COPY would run outside any transaction: it is ended with CopyFail
/// before a single row goes, the `BEGIN`'s error is the insert's, and
/// the connection goes on.
#[test]
fn a_failed_begin_ends_the_copy_sent_with_it_before_any_row() {
    let (listener, endpoint) = loopback();
    let server = failing_second_begin(listener);
    // A COPY left waiting for rows would hold the next call: fail, not hang.
    let options = ConnectOptions::new(endpoint).with_query_timeout(Some(Duration::from_secs(10)));
    let mut conn = Connection::connect_with(&options).unwrap();
    let table = hyperdb_api::TableDefinition::new("t")
        .with_not_null_column("id", hyperdb_api::types::SqlType::Int)
        .with_column("v", hyperdb_api::types::SqlType::BigInt);
    let insert = |conn: &mut Connection| -> hyperdb_api::Result<u64> {
        let mut ins = hyperdb_api::Inserter::new(conn, &table)?;
        for i in 0..10 {
            ins.add_row(&[&i, &None::<i64>])?;
        }
        ins.execute()
    };
    assert_eq!(insert(&mut conn).unwrap(), 10);
    let e = insert(&mut conn).unwrap_err();
    assert_eq!(e.sqlstate(), "53000", "{e}");
    conn.execute_command("SELECT 1").unwrap();
    conn.close().unwrap();
    let log = server.join().unwrap().unwrap();
    assert_eq!(log.len(), 5, "{log:?}");
    assert_eq!(log[0], "BEGIN");
    assert!(log[1].starts_with("COPY \"t\" FROM STDIN"), "{log:?}");
    assert_eq!(log[2..], ["CopyFail", "ROLLBACK", "SELECT 1"]);
}
