//! Connection pools against a real hyperd: reuse, exhaustion, transactions
//! left open, expiry, and hyperd restarted under a pool.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyperdb_api::{
    AsyncPool, ConnectOptions, CreateMode, Endpoint, Error, HyperProcess, HyperProcessOptions,
    Listen, Pool, PoolOptions, TransactionStatus,
};

use crate::common::{server, temp_dir};

/// The password of the TCP servers the restart test starts, so that the
/// pools' options fit the first and the second alike.
const PASSWORD: &str = "pool-restart-test";

fn options(dir: &tempfile::TempDir, endpoint: Endpoint) -> ConnectOptions {
    ConnectOptions::new(endpoint)
        .with_database(dir.path().join("pool.hyper"), CreateMode::CreateIfNotExists)
}

/// A prepared statement runs only on the session that prepared it: it
/// tells the same connection came back, without changing its session.
const MARK: &str = "SELECT 1";

fn assert_pool_timeout(e: &Error) {
    assert!(matches!(e, Error::PoolTimeout { .. }), "{e:?}");
    assert!(e.is_timeout());
    assert_eq!(e.sqlstate(), "HYT00");
}

#[test]
fn sync_pool_reuses_connections_and_times_out_when_exhausted() {
    let dir = temp_dir();
    // The wait covers opening the first connection too (r2d2 waits for its
    // own connect): 300 ms timed out on a loaded 2-core machine.
    let opts = PoolOptions::default()
        .with_max_size(1)
        .with_wait_timeout(Duration::from_secs(2));
    let pool = Pool::new(options(&dir, server().endpoint().clone()), opts).unwrap();
    assert_eq!(pool.state(), (0, 0), "nothing is opened up front");
    let mark = {
        let mut conn = pool.get().unwrap();
        conn.prepare(MARK).unwrap()
    };
    {
        let _held = pool.get().unwrap();
        assert_pool_timeout(&pool.get().unwrap_err());
    }
    let mut conn = pool.get().unwrap();
    assert!(conn.query(&mark, &[]).is_ok(), "the same session");
    assert_eq!(pool.state(), (1, 0));
}

#[test]
fn sync_pool_rolls_back_a_transaction_left_open() {
    let dir = temp_dir();
    let pool = Pool::new(
        options(&dir, server().endpoint().clone()),
        PoolOptions::default().with_max_size(1),
    )
    .unwrap();
    pool.get()
        .unwrap()
        .execute_command("CREATE TABLE t (x INT)")
        .unwrap();
    {
        let mut conn = pool.get().unwrap();
        conn.execute_command("BEGIN").unwrap();
        conn.execute_command("INSERT INTO t VALUES (1)").unwrap();
        assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    }
    {
        // A failed transaction too.
        let mut conn = pool.get().unwrap();
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        conn.execute_command("BEGIN").unwrap();
        assert!(conn.execute_command("SELECT * FROM missing_table").is_err());
        assert_eq!(conn.transaction_status(), TransactionStatus::Failed);
    }
    let mut conn = pool.get().unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_eq!(
        conn.query_scalar::<i64>("SELECT COUNT(*) FROM t").unwrap(),
        0
    );
}

#[tokio::test]
async fn async_pool_reuses_times_out_rolls_back_and_expires() {
    let dir = temp_dir();
    let opts = PoolOptions::default()
        .with_max_size(1)
        .with_wait_timeout(Duration::from_millis(300));
    let pool = AsyncPool::new(options(&dir, server().endpoint().clone()), opts.clone()).unwrap();
    pool.get()
        .await
        .unwrap()
        .execute_command("CREATE TABLE t (x INT)")
        .await
        .unwrap();
    let mark = {
        let mut conn = pool.get().await.unwrap();
        let mark = conn.prepare(MARK).await.unwrap();
        conn.execute_command("BEGIN").await.unwrap();
        conn.execute_command("INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        assert_pool_timeout(&pool.get().await.unwrap_err());
        mark
    };
    {
        let mut conn = pool.get().await.unwrap();
        assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
        assert_eq!(
            conn.query_scalar::<i64>("SELECT COUNT(*) FROM t")
                .await
                .unwrap(),
            0
        );
        assert!(conn.query(&mark, &[]).await.is_ok(), "same session");
    }

    // With a max lifetime passed, the next checkout is a new session.
    let short = AsyncPool::new(
        options(&dir, server().endpoint().clone()),
        opts.with_max_lifetime(Some(Duration::from_millis(50))),
    )
    .unwrap();
    let mark = short.get().await.unwrap().prepare(MARK).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut conn = short.get().await.unwrap();
    let e = conn.query(&mark, &[]).await.unwrap_err();
    assert!(
        e.to_string().contains("another connection"),
        "a new session: {e}"
    );

    pool.close();
    assert!(matches!(pool.get().await.unwrap_err(), Error::PoolClosed));
}

/// What a caller can change in a session and hyperd cannot restore in
/// place: a setting (also through `RESET`, which goes to hyperd's defaults,
/// not the connection's), a database attached, a temporary table.
const SESSION_CHANGES: [&str; 4] = [
    "SET time_zone = 'America/New_York'",
    "RESET ALL",
    "CREATE TEMPORARY TABLE scratch (x INT)",
    "ATTACH DATABASE {other} AS other",
];

/// That `conn` is a session as a new connection has it.
fn assert_fresh_session(conn: &mut hyperdb_api::Connection) {
    let zone: String = conn.query_scalar("SHOW time_zone").unwrap();
    assert_eq!(zone, "Etc/UTC");
    // The crate's own session default (a fresh hyperd session reads 2050).
    let year: String = conn.query_scalar("SELECT (DATE '01/02/50')::TEXT").unwrap();
    assert_eq!(year, "1950-01-02");
    let e = conn
        .query_scalar::<i64>("SELECT count(*) FROM scratch")
        .unwrap_err();
    assert_eq!(e.sqlstate(), "42P01", "{e}");
    let e = conn
        .query_scalar::<i64>("SELECT count(*) FROM other.public.secret")
        .unwrap_err();
    assert!(e.sqlstate().starts_with("3"), "{e}");
}

#[test]
fn pools_hand_no_caller_another_callers_session() {
    let dir = temp_dir();
    let other_path = dir.path().join("other.hyper");
    {
        let mut c =
            hyperdb_api::Connection::connect(server().endpoint(), &other_path, CreateMode::Create)
                .unwrap();
        c.execute_command("CREATE TABLE secret (x TEXT)").unwrap();
        c.close().unwrap();
    }
    let other = hyperdb_api::escape::quote_identifier(other_path.to_str().unwrap()).unwrap();
    let pool = Pool::new(
        options(&dir, server().endpoint().clone()),
        PoolOptions::default().with_max_size(1),
    )
    .unwrap();
    for change in SESSION_CHANGES {
        let change = change.replace("{other}", &other);
        let mark = {
            let mut conn = pool.get().unwrap();
            conn.execute_command(&change).unwrap();
            conn.prepare(MARK).unwrap()
        };
        let mut conn = pool.get().unwrap();
        assert!(conn.query(&mark, &[]).is_err(), "{change}: a new session");
        assert_fresh_session(&mut conn);
    }
    // Reads, writes and transaction control keep the session.
    let mark = {
        let mut conn = pool.get().unwrap();
        conn.execute_command("INSERT INTO t VALUES (1)")
            .unwrap_err();
        conn.query_scalar::<i32>("SELECT 1").unwrap();
        conn.prepare(MARK).unwrap()
    };
    assert!(pool.get().unwrap().query(&mark, &[]).is_ok(), "kept");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let pool = AsyncPool::new(
            options(&dir, server().endpoint().clone()),
            PoolOptions::default().with_max_size(1),
        )
        .unwrap();
        let mark = {
            let mut conn = pool.get().await.unwrap();
            conn.execute_command(SESSION_CHANGES[0]).await.unwrap();
            conn.prepare(MARK).await.unwrap()
        };
        let mut conn = pool.get().await.unwrap();
        assert!(conn.query(&mark, &[]).await.is_err(), "a new session");
        let zone: String = conn.query_scalar("SHOW time_zone").await.unwrap();
        assert_eq!(zone, "Etc/UTC");
    });
}

/// Forwards every accepted connection to the current `target`, so a
/// restarted hyperd (on a new port) sits behind one fixed address.
fn forwarder(target: Arc<Mutex<SocketAddr>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let to = *target.lock().unwrap();
            let Ok(server) = TcpStream::connect(to) else {
                continue;
            };
            let pipe = |mut from: TcpStream, mut to: TcpStream| {
                std::thread::spawn(move || {
                    let _ = io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            };
            pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
            pipe(server, client);
        }
    });
    addr
}

fn tcp_hyperd() -> (HyperProcess, SocketAddr) {
    let server = HyperProcess::new(
        HyperProcessOptions::default()
            .with_listen(Listen::Tcp)
            .with_password(PASSWORD),
    )
    .unwrap();
    let addr = match server.endpoint() {
        Endpoint::Tcp { host, port } => format!("{host}:{port}").parse().unwrap(),
        other => panic!("not TCP: {other:?}"),
    };
    (server, addr)
}

fn kill(server: &HyperProcess) {
    // SAFETY: kill(2) on the pid of a child we started; no memory involved.
    let rc = unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGKILL) };
    assert_eq!(rc, 0);
}

#[test]
fn pools_hand_out_working_connections_after_hyperd_restarts() {
    let dir = temp_dir();
    let (first, addr) = tcp_hyperd();
    let target = Arc::new(Mutex::new(addr));
    let front = forwarder(target.clone());
    let endpoint = Endpoint::tcp("127.0.0.1", front.port());
    let pool = Pool::new(
        options(&dir, endpoint.clone()).with_password(PASSWORD),
        PoolOptions::default().with_max_size(2),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_pool = rt
        .block_on(async {
            AsyncPool::new(
                options(&dir, endpoint).with_password(PASSWORD),
                PoolOptions::default().with_max_size(2),
            )
        })
        .unwrap();
    pool.get().unwrap().ping().unwrap();
    rt.block_on(async { async_pool.get().await.unwrap().ping().await.unwrap() });

    // Both pools now hold an idle connection to a hyperd that dies.
    kill(&first);
    let (second, addr) = tcp_hyperd();
    *target.lock().unwrap() = addr;

    let mut conn = pool.get().unwrap();
    assert_eq!(conn.query_scalar::<i64>("SELECT 42").unwrap(), 42);
    rt.block_on(async {
        let mut conn = async_pool.get().await.unwrap();
        assert_eq!(conn.query_scalar::<i64>("SELECT 43").await.unwrap(), 43);
    });
    drop(conn);
    drop(second);
}
