//! A result dropped before its end (issue 18, defect 6): the next request
//! cancels the rest of a long result instead of reading all of it, the
//! cancel never reaches the statement after it, and the next query
//! answers correctly. Bytes are counted by a proxy in front of the shared
//! TCP server, so the assertions are counts, not times.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, Endpoint, ReadRoute};

use crate::capture::Capture;
use crate::common::tcp_server;

/// A TCP proxy to the shared TCP server that counts what the server sends.
/// Every connection through it (cancel requests too) is forwarded.
pub(crate) struct Proxy {
    endpoint: Endpoint,
    from_server: Arc<AtomicU64>,
}

impl Proxy {
    pub(crate) fn start() -> Proxy {
        let Endpoint::Tcp { host, port } = tcp_server().endpoint().clone() else {
            panic!("the shared TCP server listens on TCP")
        };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = Endpoint::tcp("127.0.0.1", listener.local_addr().unwrap().port());
        let from_server = Arc::new(AtomicU64::new(0));
        let counter = from_server.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(upstream) = TcpStream::connect((host.as_str(), port)) else {
                    return;
                };
                let (c2, u2) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                std::thread::spawn(move || pipe(client, upstream, None));
                let counter = counter.clone();
                std::thread::spawn(move || pipe(u2, c2, Some(&counter)));
            }
        });
        Proxy {
            endpoint,
            from_server,
        }
    }

    pub(crate) fn options(&self) -> ConnectOptions {
        let password = tcp_server().password().expect("the TCP server's password");
        ConnectOptions::new(self.endpoint.clone()).with_password(password)
    }

    pub(crate) fn received(&self) -> u64 {
        self.from_server.load(Ordering::Relaxed)
    }
}

/// Copies `from` to `to` until EOF, counting into `count`; then passes the
/// EOF on.
fn pipe(mut from: TcpStream, mut to: TcpStream, count: Option<&AtomicU64>) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
                if let Some(count) = count {
                    count.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

const HUGE: &str = "SELECT i::BIGINT FROM generate_series(1, 50000000) g(i)";
/// The least the whole result takes on the wire: 8 bytes a value as
/// Arrow; as DataRows 19 (5 of header, 2 of field count, 4 of length).
const ARROW_BYTES: u64 = 50_000_000 * 8;
/// What reading on after the cancel may take at most: what the socket
/// buffers on the way (the proxy's two sockets and ours) held when it
/// landed, at most ~72 MB with Linux's largest defaults (`tcp_rmem` 32
/// MiB and `tcp_wmem` 4 MiB a socket); a third of the smallest whole
/// result. The reader does not read while the cancel is sent, so hyperd
/// cannot get further ahead than that.
pub(crate) const AFTER_CANCEL: u64 = 128 << 20;

/// The second DataRows run finds its statement in the connection's cache
/// (a `Bind` of it, no `Parse`): the other way a row result starts.
const PATHS: [&str; 4] = [
    "DataRows",
    "DataRows, cached statement",
    "Arrow rows",
    "Arrow batches",
];

/// The next query's answer, from a statement that is not trivial.
const CHECK: &str = "SELECT sum(i) FROM generate_series(1, 1000) g(i)";

/// Before: the next request read the whole rest (~1 GB as DataRows, 3-5 s).
#[test]
fn a_dropped_huge_result_is_cancelled_not_read_to_its_end() {
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options()).unwrap();
    for path in PATHS {
        let before = proxy.received();
        match path {
            p if p.starts_with("DataRows") => {
                let mut rows = c.execute_query_params(HUGE, &[]).unwrap();
                for _ in 0..1_000 {
                    rows.next_row().unwrap().unwrap();
                }
            }
            "Arrow rows" => {
                let mut rows = c.execute_query(HUGE).unwrap();
                for _ in 0..1_000 {
                    rows.next_row().unwrap().unwrap();
                }
            }
            _ => {
                let mut batches = c.query_arrow(HUGE).unwrap();
                batches.next().unwrap().unwrap();
            }
        }
        let sum: i64 = c.query_scalar(CHECK).unwrap();
        assert_eq!(sum, 500_500, "{path}");
        let read = proxy.received() - before;
        assert!(
            read < AFTER_CANCEL,
            "{path}: {read} bytes read of a result of at least {ARROW_BYTES}"
        );
    }
}

#[tokio::test]
async fn a_dropped_huge_async_result_is_cancelled_not_read_to_its_end() {
    let proxy = Proxy::start();
    let mut c = AsyncConnection::connect_with(&proxy.options())
        .await
        .unwrap();
    for path in PATHS {
        let before = proxy.received();
        match path {
            p if p.starts_with("DataRows") => {
                let mut rows = c.execute_query_params(HUGE, &[]).await.unwrap();
                for _ in 0..1_000 {
                    rows.next_row().await.unwrap().unwrap();
                }
            }
            "Arrow rows" => {
                let mut rows = c.execute_query(HUGE).await.unwrap();
                for _ in 0..1_000 {
                    rows.next_row().await.unwrap().unwrap();
                }
            }
            _ => {
                let mut batches = c.query_arrow(HUGE).await.unwrap();
                batches.next().await.unwrap().unwrap();
            }
        }
        let sum: i64 = c.query_scalar(CHECK).await.unwrap();
        assert_eq!(sum, 500_500, "{path}");
        let read = proxy.received() - before;
        assert!(
            read < AFTER_CANCEL,
            "{path}: {read} bytes read of a result of at least {ARROW_BYTES}"
        );
    }
    // A shared connection's stream, dropped: its task settles it the same
    // way before the next call gets the connection.
    let shared = hyperdb_api::SharedConnection::new(c);
    let before = proxy.received();
    let mut stream = shared.query_arrow(HUGE, Vec::new()).await.unwrap();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    let n = shared
        .execute_command("SELECT 1 FROM generate_series(1, 3)", &[])
        .await
        .unwrap();
    assert_eq!(n, 3);
    let read = proxy.received() - before;
    assert!(read < AFTER_CANCEL, "shared stream: {read} bytes read");
}

/// `HUGE` with a value hyperd's Arrow stream refuses (`TIME '24:00:00'`):
/// `execute_query` and `query_arrow` route it to `DataRow`s of a cached
/// statement, the first run after the refused COPY, later runs by the
/// connection's route book.
const HUGE_AS_ROWS: &str =
    "SELECT i::BIGINT AS i, TIME '24:00:00' AS t FROM generate_series(1, 50000000) g(i)";

/// The routed reads' `DataRow` route, dropped: cancelled like the others
/// (a routed Arrow run is `Arrow rows` above), and its statement's one
/// span ends `abandoned`. Both runs: the fallback after the refused COPY
/// and the book's choice.
#[test]
fn a_dropped_routed_row_result_is_cancelled_not_read_to_its_end() {
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options()).unwrap();
    let capture = Capture::default();
    capture.run(|| {
        for run in ["fallback", "book"] {
            let before = proxy.received();
            {
                let mut rows = c.execute_query(HUGE_AS_ROWS).unwrap();
                assert_eq!(rows.read_route(), ReadRoute::DataRows, "{run}");
                for _ in 0..1_000 {
                    rows.next_row().unwrap().unwrap();
                }
            }
            let sum: i64 = c.query_scalar(CHECK).unwrap();
            assert_eq!(sum, 500_500, "{run}");
            let read = proxy.received() - before;
            assert!(read < AFTER_CANCEL, "{run}: {read} bytes read");
        }
    });
    assert_abandoned(&capture, "execute_query", 2);
}

#[tokio::test]
async fn a_dropped_routed_async_row_result_is_cancelled_not_read_to_its_end() {
    let proxy = Proxy::start();
    let capture = Capture::default();
    let guard = capture.install();
    let mut c = AsyncConnection::connect_with(&proxy.options())
        .await
        .unwrap();
    for run in ["fallback", "book"] {
        let before = proxy.received();
        {
            let mut rows = c.execute_query(HUGE_AS_ROWS).await.unwrap();
            assert_eq!(rows.read_route(), ReadRoute::DataRows, "{run}");
            for _ in 0..1_000 {
                rows.next_row().await.unwrap().unwrap();
            }
        }
        let sum: i64 = c.query_scalar(CHECK).await.unwrap();
        assert_eq!(sum, 500_500, "{run}");
        let read = proxy.received() - before;
        assert!(read < AFTER_CANCEL, "{run}: {read} bytes read");
    }
    let shared = hyperdb_api::SharedConnection::new(c);
    for run in ["shared fallback", "shared book"] {
        let before = proxy.received();
        let mut stream = shared.query_arrow(HUGE_AS_ROWS, Vec::new()).await.unwrap();
        assert_eq!(stream.read_route(), Some(ReadRoute::DataRows), "{run}");
        stream.next().await.unwrap().unwrap();
        drop(stream);
        let n = shared
            .execute_command("SELECT 1 FROM generate_series(1, 3)", &[])
            .await
            .unwrap();
        assert_eq!(n, 3, "{run}");
        let read = proxy.received() - before;
        assert!(read < AFTER_CANCEL, "{run}: {read} bytes read");
    }
    shared.close().await.unwrap();
    drop(guard);
    assert_abandoned(&capture, "execute_query", 2);
    assert_abandoned(&capture, "query_arrow", 2);
}

/// `n` spans of `call` for `HUGE_AS_ROWS`, each closed as `abandoned`
/// after some of its rows and bytes.
fn assert_abandoned(capture: &Capture, call: &str, n: usize) {
    let spans: Vec<_> = capture
        .statements_for(HUGE_AS_ROWS)
        .into_iter()
        .filter(|s| s.get("hyperdb.call") == Some(call))
        .collect();
    assert_eq!(spans.len(), n, "{call}: {spans:?}");
    for span in &spans {
        assert!(span.closed, "{span:?}");
        assert_eq!(span.field("outcome"), "abandoned", "{span:?}");
        assert!((1.0..50e6).contains(&span.num("rows")), "{span:?}");
        assert!(span.num("bytes") > 0.0, "{span:?}");
    }
}

/// Results dropped with little or nothing left (the cancel may come after
/// the statement ended), and a cancel sent while the connection is idle:
/// the statement after never fails with 57014. Each size runs a few times,
/// on both drivers.
#[test]
fn the_cancel_of_a_dropped_result_never_reaches_the_next_statement() {
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&proxy.options()).unwrap();
    for rows in [1, 2, 100, 10_000, 100_000, 1_000_000, 5_000_000] {
        let sql = format!("SELECT i FROM generate_series(1, {rows}) g(i)");
        for round in 0..3 {
            {
                let mut r = c.execute_query_params(&sql, &[]).unwrap();
                r.next_row().unwrap().unwrap();
            }
            let n: i64 = c.query_scalar(CHECK).unwrap_or_else(|e| {
                panic!("{rows} rows, round {round}: the next statement failed: {e:?}")
            });
            assert_eq!(n, 500_500);
            {
                let mut r = c.execute_query(&sql).unwrap();
                r.next_row().unwrap().unwrap();
            }
            let n: i64 = c.query_scalar(CHECK).unwrap_or_else(|e| {
                panic!("{rows} rows (Arrow), round {round}: the next statement failed: {e:?}")
            });
            assert_eq!(n, 500_500);
        }
    }
    c.cancel_handle().cancel().unwrap();
    assert_eq!(c.query_scalar::<i64>(CHECK).unwrap(), 500_500);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = AsyncConnection::connect_with(&proxy.options())
            .await
            .unwrap();
        for rows in [1, 100, 100_000, 5_000_000] {
            let sql = format!("SELECT i FROM generate_series(1, {rows}) g(i)");
            for _ in 0..3 {
                {
                    let mut r = c.execute_query_params(&sql, &[]).await.unwrap();
                    r.next_row().await.unwrap().unwrap();
                }
                let n: i64 = c.query_scalar(CHECK).await.unwrap();
                assert_eq!(n, 500_500, "{rows} rows");
            }
        }
    });
}

/// Inside a transaction a dropped result is read to its end, not cancelled:
/// a cancelled statement fails the transaction (hyperd then rolls it back
/// at COMMIT), and leaving a result early must not lose the transaction's
/// writes. Outside one (the test above) it is cancelled.
#[test]
fn a_dropped_result_inside_a_transaction_is_read_not_cancelled() {
    let dir = crate::common::temp_dir();
    let mut c = crate::common::connect(&dir, "abandoned_tx.hyper");
    c.execute_command("CREATE TABLE kept (id INT NOT NULL)")
        .unwrap();
    let big = "SELECT g FROM generate_series(1, 3000000) g";
    c.execute_command("BEGIN").unwrap();
    c.execute_command("INSERT INTO kept VALUES (1)").unwrap();
    for run in 0..2 {
        // The first run of the text goes as Arrow, the second too (a large
        // result); the parameterized one as DataRows.
        let mut rows = c.execute_query(big).unwrap();
        rows.next_row().unwrap().unwrap();
        drop(rows);
        let mut rows = c.execute_query_params(big, &[]).unwrap();
        rows.next_row().unwrap().unwrap();
        drop(rows);
        let mut batches = c.query_arrow(big).unwrap();
        batches.next().unwrap().unwrap();
        drop(batches);
        c.execute_command(&format!("INSERT INTO kept VALUES ({})", run + 2))
            .unwrap();
    }
    c.execute_command("COMMIT").unwrap();
    let ids: i64 = c.query_scalar("SELECT sum(id) FROM kept").unwrap();
    assert_eq!(ids, 1 + 2 + 3, "every insert of the transaction is stored");
}

/// A statement that would run for ~15 minutes (~1G rows/s) and sends
/// nothing until it ends: one aggregate row. (`sum(i)` itself overflows
/// after ~5 s.)
const SILENT: &str = "SELECT sum(i % 7) FROM generate_series(1, 1000000000000) g(i)";

/// What the next call may take after dropping `SILENT`: seconds under
/// the connection's safety-net query timeout (30 s), were the dropped
/// statement waited for; with the cancel, a few ms.
const AFTER_SILENT: Duration = Duration::from_secs(10);

fn safety_net(proxy: &Proxy) -> ConnectOptions {
    proxy
        .options()
        .with_query_timeout(Some(Duration::from_secs(30)))
}

/// Before: a dropped result whose statement had sent nothing yet was read
/// until it sent 64 KiB or ended, so the next call waited for the whole
/// statement (a dropped 6 s `count(*)`: the next `SELECT 1` took 6.7 s).
/// Now it is waited for ~20 ms, then cancelled: sync (a described result
/// dropped), async (a future dropped by `tokio::time::timeout`) and a
/// shared connection's stream.
#[test]
fn a_dropped_result_that_sends_nothing_is_cancelled_not_waited_for() {
    let proxy = Proxy::start();
    let mut c = Connection::connect_with(&safety_net(&proxy)).unwrap();
    for round in 0..2 {
        drop(c.execute_query_params(SILENT, &[]).unwrap());
        let at = Instant::now();
        assert_eq!(c.query_scalar::<i64>(CHECK).unwrap(), 500_500);
        assert!(
            at.elapsed() < AFTER_SILENT,
            "round {round}: {:?}",
            at.elapsed()
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = AsyncConnection::connect_with(&safety_net(&proxy))
            .await
            .unwrap();
        for round in 0..2 {
            let call = c.query_scalar::<i64>(SILENT);
            let dropped = tokio::time::timeout(Duration::from_millis(100), call).await;
            assert!(dropped.is_err(), "round {round}: the statement ended");
            let at = Instant::now();
            assert_eq!(c.query_scalar::<i64>(CHECK).await.unwrap(), 500_500);
            assert!(
                at.elapsed() < AFTER_SILENT,
                "round {round}: {:?}",
                at.elapsed()
            );
        }
        let shared = hyperdb_api::SharedConnection::new(c);
        let stream = shared.query_arrow(SILENT, Vec::new());
        let dropped = tokio::time::timeout(Duration::from_millis(100), stream).await;
        assert!(dropped.is_err(), "the shared statement ended");
        let at = Instant::now();
        let n = shared
            .execute_command("SELECT 1 FROM generate_series(1, 3)", &[])
            .await
            .unwrap();
        assert_eq!(n, 3);
        assert!(at.elapsed() < AFTER_SILENT, "shared: {:?}", at.elapsed());
    });
}
