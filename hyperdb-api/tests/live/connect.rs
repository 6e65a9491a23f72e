//! Connecting, every CreateMode, DDL/DML counts, attach/detach, transactions:
//! sync and async, over TCP and Unix sockets.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, Endpoint, HyperProcess, Severity,
    TransactionStatus,
};

use crate::common::{server, tcp_server, temp_dir, transports};

#[test]
fn create_modes_sync() {
    for options in transports() {
        let dir = temp_dir();
        let db = dir.path().join("modes.hyper");

        let e =
            Connection::connect_with(&options.clone().with_database(&db, CreateMode::DoNotCreate))
                .unwrap_err();
        assert!(
            e.code().is_some(),
            "missing file is a server error with SQLSTATE: {e:?}"
        );
        assert!(e.to_string().contains("modes.hyper"), "{e}");

        let mut c =
            Connection::connect_with(&options.clone().with_database(&db, CreateMode::Create))
                .unwrap();
        c.execute_command("CREATE TABLE t (x INT)").unwrap();
        assert_eq!(
            c.execute_command("INSERT INTO t VALUES (1), (2), (3)")
                .unwrap(),
            3
        );
        c.close().unwrap();

        let e = Connection::connect_with(&options.clone().with_database(&db, CreateMode::Create))
            .unwrap_err();
        assert!(
            e.code().is_some(),
            "Create on an existing file fails: {e:?}"
        );

        let mut c = Connection::connect_with(
            &options
                .clone()
                .with_database(&db, CreateMode::CreateIfNotExists),
        )
        .unwrap();
        assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 3);
        drop(c);

        let mut c =
            Connection::connect_with(&options.clone().with_database(&db, CreateMode::DoNotCreate))
                .unwrap();
        assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 3);
        c.close().unwrap();

        let mut c = Connection::connect_with(
            &options
                .clone()
                .with_database(&db, CreateMode::CreateAndReplace),
        )
        .unwrap();
        let e = c.execute_command("SELECT * FROM t").unwrap_err();
        assert_eq!(
            e.code().map(|c| c.code()),
            Some("42P01"),
            "replaced file has no table t: {e}"
        );
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    }
}

/// A file is named by its stem in every mode, as Tableau's Hyper API names
/// it, so SQL that qualifies a table with it runs through either client;
/// `close` detaches it, so the next connection opens it at once.
#[test]
fn a_database_is_named_by_its_stem_in_every_mode() {
    let dir = temp_dir();
    let db = dir.path().join("my.sales.hyper");
    let modes = [
        CreateMode::CreateAndReplace,
        CreateMode::CreateIfNotExists,
        CreateMode::DoNotCreate,
    ];
    for (i, mode) in modes.into_iter().enumerate() {
        let mut c = Connection::connect(server().endpoint(), &db, mode).unwrap();
        let name: String = c.query_scalar("SELECT current_database()").unwrap();
        assert_eq!(name, "my.sales", "{mode:?}");
        if i == 0 {
            c.execute_command("CREATE TABLE t (x INT)").unwrap();
        }
        c.execute_command(r#"INSERT INTO "my.sales"."public"."t" VALUES (1)"#)
            .unwrap();
        let n: i64 = c.query_scalar("SELECT count(*) FROM t").unwrap();
        assert_eq!(n, i as i64 + 1, "{mode:?}");
        c.close().unwrap();
    }
}

/// An existing file is attached at startup (hyperd's `database`
/// parameter, a JSON list of alias and path), so its name goes through
/// JSON: quotes, a backslash, a tab and non-ASCII come out as the file's
/// own. Reopened right after each close, every write is there.
#[test]
fn an_existing_file_of_any_name_is_attached_at_startup() {
    let dir = temp_dir();
    let stem = "a \"q\" \\b\t\u{fc}";
    let db = dir.path().join(format!("{stem}.hyper"));
    let mut c = Connection::connect(server().endpoint(), &db, CreateMode::Create).unwrap();
    c.execute_command("CREATE TABLE t (x INT)").unwrap();
    c.close().unwrap();
    for i in 0..20 {
        let mut c = Connection::connect(server().endpoint(), &db, CreateMode::DoNotCreate)
            .unwrap_or_else(|e| panic!("round {i}: {e}"));
        let name: String = c.query_scalar("SELECT current_database()").unwrap();
        assert_eq!(name, stem);
        c.execute_command(&format!("INSERT INTO t VALUES ({i})"))
            .unwrap();
        c.close().unwrap();
    }
    let mut c = Connection::connect(server().endpoint(), &db, CreateMode::DoNotCreate).unwrap();
    let n: i64 = c.query_scalar("SELECT count(*) FROM t").unwrap();
    assert_eq!(n, 20);
    let missing = dir.path().join("gone \"x\".hyper");
    let e =
        Connection::connect(server().endpoint(), &missing, CreateMode::DoNotCreate).unwrap_err();
    assert_eq!(e.sqlstate(), "58S01", "{e}");
    assert!(e.to_string().contains("gone"), "{e}");
}

#[tokio::test]
async fn a_database_is_named_by_its_stem_async() {
    let dir = temp_dir();
    let db = dir.path().join("stem.hyper");
    let mut c = AsyncConnection::connect(server().endpoint(), &db, CreateMode::Create)
        .await
        .unwrap();
    c.execute_command("CREATE TABLE t (x INT)").await.unwrap();
    c.close().await.unwrap();
    let mut c = AsyncConnection::connect(server().endpoint(), &db, CreateMode::DoNotCreate)
        .await
        .unwrap();
    let name: String = c.query_scalar("SELECT current_database()").await.unwrap();
    assert_eq!(name, "stem");
    let n: i64 = c
        .query_scalar(r#"SELECT count(*) FROM "stem"."public"."t""#)
        .await
        .unwrap();
    assert_eq!(n, 0);
}

/// hyperd 0.0.26963 dies (SIGSEGV) when a DROP DATABASE lands while the
/// last session on the file is still closing it. `close` detaches first and
/// CreateAndReplace attaches before it drops, so replacing or dropping a
/// file right after closing its connection is safe, again and again. Its
/// own server: a crash here must not take the other tests down with it.
#[test]
fn replace_and_drop_right_after_close_keep_hyperd_up() {
    let mut hyper = HyperProcess::start().unwrap();
    let dir = temp_dir();
    let db = dir.path().join("again.hyper");
    let mut admin =
        Connection::connect_with(&ConnectOptions::new(hyper.endpoint().clone())).unwrap();
    for i in 0..40 {
        let mut c = Connection::connect(hyper.endpoint(), &db, CreateMode::CreateAndReplace)
            .unwrap_or_else(|e| panic!("replace {i}: {e}"));
        let e = c.execute_command("SELECT * FROM t").unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "{e}");
        c.execute_command("CREATE TABLE t (x INT)").unwrap();
        assert_eq!(c.execute_command("INSERT INTO t VALUES (1)").unwrap(), 1);
        c.close().unwrap();
        if i % 2 == 1 {
            admin.catalog().drop_database(&db).unwrap();
            assert!(!db.exists());
        }
    }
    assert_eq!(admin.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    assert!(hyper.is_running());
}

#[test]
fn dml_counts_attach_detach_sync() {
    let dir = temp_dir();
    let mut c = Connection::connect(
        server().endpoint(),
        dir.path().join("a.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    assert_eq!(
        c.execute_command("CREATE TABLE t (x INT, s TEXT)").unwrap(),
        0
    );
    assert_eq!(
        c.execute_command("INSERT INTO t SELECT i, 'v' || i FROM generate_series(1, 100) g(i)")
            .unwrap(),
        100
    );
    assert_eq!(
        c.execute_command("UPDATE t SET s = 'even' WHERE x % 2 = 0")
            .unwrap(),
        50
    );
    assert_eq!(c.execute_command("DELETE FROM t WHERE x > 90").unwrap(), 10);
    assert_eq!(
        c.query_scalar::<String>("SELECT s FROM t WHERE x = 4")
            .unwrap(),
        "even"
    );

    // A second file, attached under an alias and addressed by it.
    let other = dir.path().join("other file.hyper");
    let mut c2 = Connection::connect(server().endpoint(), &other, CreateMode::Create).unwrap();
    c2.execute_command("CREATE TABLE u (y BIGINT)").unwrap();
    c2.execute_command("INSERT INTO u VALUES (42)").unwrap();
    c2.close().unwrap();
    c.attach_database(&other, "o\"ther").unwrap();
    assert_eq!(
        c.query_scalar::<i64>("SELECT y FROM \"o\"\"ther\".\"public\".\"u\"")
            .unwrap(),
        42
    );
    c.detach_database("o\"ther").unwrap();
    assert!(c
        .execute_command("SELECT y FROM \"o\"\"ther\".\"public\".\"u\"")
        .is_err());
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 90);
}

#[test]
fn transactions_commit_rollback_and_drop_sync() {
    let dir = temp_dir();
    let mut c = Connection::connect(
        server().endpoint(),
        dir.path().join("tx.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    c.execute_command("CREATE TABLE t (x INT)").unwrap();

    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO t VALUES (1)").unwrap();
    assert_eq!(tx.transaction_status(), TransactionStatus::InTransaction);
    tx.commit().unwrap();

    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO t VALUES (2)").unwrap();
    tx.rollback().unwrap();

    {
        let mut tx = c.transaction().unwrap();
        tx.execute_command("INSERT INTO t VALUES (3)").unwrap();
        // dropped: rolls back
    }
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 1);
    assert_eq!(c.transaction_status(), TransactionStatus::Idle);
}

#[tokio::test]
async fn create_modes_dml_and_transactions_async() {
    for options in transports() {
        let dir = temp_dir();
        let db = dir.path().join("async.hyper");
        assert!(AsyncConnection::connect_with(
            &options.clone().with_database(&db, CreateMode::DoNotCreate)
        )
        .await
        .is_err());
        let mut c = AsyncConnection::connect_with(
            &options
                .clone()
                .with_database(&db, CreateMode::CreateAndReplace),
        )
        .await
        .unwrap();
        c.execute_command("CREATE TABLE t (x INT)").await.unwrap();
        assert_eq!(
            c.execute_command("INSERT INTO t VALUES (1), (2)")
                .await
                .unwrap(),
            2
        );
        assert_eq!(
            c.execute_command("UPDATE t SET x = x + 1").await.unwrap(),
            2
        );
        {
            let mut tx = c.transaction().await.unwrap();
            tx.execute_command("DELETE FROM t").await.unwrap();
        }
        let mut tx = c.transaction().await.unwrap();
        tx.execute_command("INSERT INTO t VALUES (10)")
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(
            c.query_scalar::<i64>("SELECT sum(x) FROM t").await.unwrap(),
            15
        );
        c.close().await.unwrap();

        let mut c = AsyncConnection::connect_with(
            &options
                .clone()
                .with_database(&db, CreateMode::CreateIfNotExists),
        )
        .await
        .unwrap();
        assert_eq!(
            c.query_scalar::<i64>("SELECT count(*) FROM t")
                .await
                .unwrap(),
            3
        );
        let other = dir.path().join("o.hyper");
        AsyncConnection::connect_with(&options.clone().with_database(&other, CreateMode::Create))
            .await
            .unwrap()
            .close()
            .await
            .unwrap();
        c.attach_database(&other, "o").await.unwrap();
        c.detach_database("o").await.unwrap();
    }
}

#[test]
fn endpoint_round_trips_through_display() {
    let tcp = tcp_server().endpoint().clone();
    assert!(matches!(tcp, Endpoint::Tcp { .. }));
    let unix = server().endpoint().clone();
    assert!(matches!(unix, Endpoint::Unix(_)));
    for ep in [tcp, unix] {
        assert_eq!(ep.to_string().parse::<Endpoint>().unwrap(), ep);
    }
}

#[test]
fn notices_reach_the_callback() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = ConnectOptions::new(server().endpoint().clone())
        .with_notice_handler(move |n| sink.lock().unwrap().push((n.severity, n.message.clone())));
    let mut c = Connection::connect_with(&opts).unwrap();
    // hyperd warns about a ROLLBACK outside a transaction.
    c.execute_command("ROLLBACK").unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, Some(Severity::Warning));
    assert!(seen[0].1.contains("no transaction"), "{seen:?}");
}

#[test]
fn connect_timeout_applies_to_a_silent_server() {
    // Accepts TCP connections (the kernel does, via the backlog) but never
    // answers the startup message.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = Endpoint::tcp("127.0.0.1", silent.local_addr().unwrap().port());
    let opts = ConnectOptions::new(ep).with_connect_timeout(Some(Duration::from_millis(300)));
    let start = Instant::now();
    let e = Connection::connect_with(&opts).unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn async_connect_timeout_applies_to_a_silent_server() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ep = Endpoint::tcp("127.0.0.1", silent.local_addr().unwrap().port());
    let opts = ConnectOptions::new(ep).with_connect_timeout(Some(Duration::from_millis(300)));
    let e = AsyncConnection::connect_with(&opts).await.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
}
