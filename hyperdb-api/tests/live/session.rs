//! Catalog and session extras: `drop_schema`, `get_database_names`,
//! `copy_table`, `server_version`, notices to a callback or a channel as
//! they arrive, and what hyperd's transactions do (no savepoints, DDL not
//! undone); sync and async.

use std::sync::mpsc;
use std::time::Duration;

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, ColumnDefinition, ConnectOptions, Connection, DatabaseName, Error, SchemaName,
    Severity, TableDefinition, TableName,
};

use crate::common::{cancel_soon, code, connect, connect_async, server, temp_dir};

fn count(conn: &mut Connection, table: &str) -> i64 {
    conn.query_scalar(&format!("SELECT count(*) FROM {table}"))
        .unwrap()
}

#[test]
fn drop_schema_with_and_without_cascade() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "schemas.hyper");
    let mut cat = conn.catalog();
    cat.create_schema("it's").unwrap();
    cat.create_table(&TableDefinition::new(("it's", "t")).with_column("a", SqlType::Int))
        .unwrap();
    // Holds a table: refused without CASCADE, nothing dropped.
    let e = cat.drop_schema("it's", false).unwrap_err();
    assert_eq!(code(&e), "2BP01", "{e}");
    assert!(cat.has_table(("it's", "t")).unwrap());
    cat.drop_schema("it's", true).unwrap();
    assert!(!cat.has_schema("it's").unwrap());
    assert!(!cat.has_table(("it's", "t")).unwrap());
    // Missing: an error, or nothing with IF EXISTS.
    let e = cat.drop_schema("it's", true).unwrap_err();
    assert_eq!(code(&e), "3F000", "{e}");
    cat.drop_schema_if_exists("it's", true).unwrap();
    // An empty schema goes without CASCADE.
    cat.create_schema("empty").unwrap();
    cat.drop_schema("empty", false).unwrap();
    assert_eq!(
        cat.get_schema_names(None).unwrap(),
        vec![SchemaName::new("public")]
    );
    let e = cat.drop_schema("a\0b", true).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
}

#[tokio::test]
async fn drop_schema_async() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "schemas_async.hyper").await;
    let mut cat = conn.catalog();
    cat.create_schema("s").await.unwrap();
    cat.create_table(&TableDefinition::new(("s", "t")).with_column("a", SqlType::Int))
        .await
        .unwrap();
    let e = cat.drop_schema("s", false).await.unwrap_err();
    assert_eq!(code(&e), "2BP01", "{e}");
    cat.drop_schema("s", true).await.unwrap();
    assert!(!cat.has_schema("s").await.unwrap());
    let e = cat.drop_schema("s", false).await.unwrap_err();
    assert_eq!(code(&e), "3F000", "{e}");
    cat.drop_schema_if_exists("s", false).await.unwrap();
}

#[test]
fn database_names_are_the_attached_aliases() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "main.hyper");
    let other = dir.path().join("other.hyper");
    conn.catalog().create_database(&other).unwrap();
    conn.attach_database(&other, "my \"db\"").unwrap();
    assert_eq!(
        conn.catalog().get_database_names().unwrap(),
        vec![DatabaseName::new("main"), DatabaseName::new("my \"db\"")]
    );
    // The names qualify tables as they are.
    let t = TableName::new("t").with_database(DatabaseName::new("my \"db\""));
    conn.catalog()
        .create_table(&TableDefinition::new(t.clone()).with_column("a", SqlType::Int))
        .unwrap();
    assert!(conn.catalog().has_table(t).unwrap());
    conn.detach_database("my \"db\"").unwrap();
    assert_eq!(
        conn.catalog().get_database_names().unwrap(),
        vec![DatabaseName::new("main")]
    );
    // No database attached: none.
    let mut bare =
        Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap();
    assert!(bare.catalog().get_database_names().unwrap().is_empty());
}

#[tokio::test]
async fn database_names_async() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "main_async.hyper").await;
    let other = dir.path().join("b.hyper");
    conn.catalog().create_database(&other).await.unwrap();
    conn.attach_database(&other, "b").await.unwrap();
    assert_eq!(
        conn.catalog().get_database_names().await.unwrap(),
        vec![DatabaseName::new("b"), DatabaseName::new("main_async")]
    );
}

fn rich(name: impl Into<TableName>) -> TableDefinition {
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::BigInt)
        .with_column_definition(
            ColumnDefinition::not_null("name", SqlType::Varchar(20)).with_collation("en_US_CI"),
        )
        .with_column("amount", SqlType::numeric(12, 3).unwrap())
        .with_column("day", SqlType::Date)
}

#[test]
fn copy_table_keeps_the_definition() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "copy.hyper");
    let mut cat = conn.catalog();
    cat.create_table(&rich("src")).unwrap();
    cat.create_schema("archive").unwrap();
    conn.execute_command(
        "INSERT INTO src VALUES (1, 'Zoë', 1.5, DATE '2024-02-29'), (2, 'b', NULL, NULL)",
    )
    .unwrap();
    // A temporary table of the same name comes first, as in a statement
    // (and in Tableau's catalog): a bare name copies it, with its own
    // definition and rows; `public`'s is copied by its qualified name.
    conn.execute_command("CREATE TEMPORARY TABLE src (x TEXT)")
        .unwrap();
    conn.execute_command("INSERT INTO src VALUES ('decoy')")
        .unwrap();

    let mut cat = conn.catalog();
    assert_eq!(cat.copy_table("src", ("archive", "decoy")).unwrap(), 1);
    let decoy = cat.get_table_definition(("archive", "decoy")).unwrap();
    assert_eq!(decoy.columns()[0].name(), "x");
    assert_eq!(
        cat.copy_table(("public", "src"), ("archive", "dst"))
            .unwrap(),
        2
    );
    // NOT NULL, VARCHAR(20), the collation and NUMERIC(12,3) survive
    // (`CREATE TABLE .. AS` keeps none of the NOT NULLs).
    let copied = cat.get_table_definition(("archive", "dst")).unwrap();
    assert_eq!(copied, rich(("copy", "archive", "dst")));
    let same: i64 = conn
        .query_scalar(
            "SELECT count(*) FROM (SELECT * FROM public.src INTERSECT SELECT * FROM archive.dst) x",
        )
        .unwrap();
    assert_eq!(same, 2);

    // Into another attached database.
    let other = dir.path().join("other.hyper");
    conn.catalog().create_database(&other).unwrap();
    conn.attach_database(&other, "other").unwrap();
    let there = TableName::from(("other", "public", "src"));
    assert_eq!(
        conn.catalog()
            .copy_table(("copy", "public", "src"), there.clone())
            .unwrap(),
        2
    );
    assert_eq!(
        conn.catalog().get_table_definition(there).unwrap(),
        rich(("other", "public", "src"))
    );

    let mut cat = conn.catalog();
    // A missing source: nothing created.
    let e = cat
        .copy_table(("copy", "public", "nope"), ("copy", "public", "dst2"))
        .unwrap_err();
    assert_eq!(code(&e), "42P01", "{e}");
    assert!(!cat.has_table(("copy", "public", "dst2")).unwrap());
    // An existing target: left as it was.
    let e = cat
        .copy_table(("copy", "public", "src"), ("copy", "archive", "dst"))
        .unwrap_err();
    assert_eq!(code(&e), "42P07", "{e}");
    assert_eq!(count(&mut conn, "copy.archive.dst"), 2);
}

#[test]
fn copy_table_drops_the_copy_when_the_rows_fail() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "copy_fail.hyper");
    conn.execute_command(
        "CREATE TABLE big (a BIGINT NOT NULL, b BIGINT NOT NULL, c BIGINT NOT NULL)",
    )
    .unwrap();
    conn.execute_command(
        "INSERT INTO big SELECT g, g * 7, g * 13 FROM generate_series(1, 8000000) g",
    )
    .unwrap();
    // Cancelled 300 ms in: while its 8M rows are copied (0.72-0.91 s here;
    // with one BIGINT column it took 0.31-0.46 s, and once finished before
    // the cancel), or, on a machine so busy that reading the definition
    // took that long, before the table was made. Either way no copy may be
    // left.
    let cancel = conn.cancel_handle();
    let canceller = cancel_soon(move || cancel.cancel().unwrap());
    let e = conn.catalog().copy_table("big", "copy").unwrap_err();
    canceller.join().unwrap();
    assert!(e.is_cancelled(), "{e}");
    assert!(!conn.catalog().has_table("copy").unwrap());
    assert_eq!(count(&mut conn, "big"), 8_000_000);
}

#[tokio::test]
async fn copy_table_async() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "copy_async.hyper").await;
    conn.catalog().create_table(&rich("src")).await.unwrap();
    conn.execute_command("INSERT INTO src VALUES (1, 'a', 2, NULL)")
        .await
        .unwrap();
    let mut cat = conn.catalog();
    assert_eq!(cat.copy_table("src", "dst").await.unwrap(), 1);
    assert_eq!(
        cat.get_table_definition("dst").await.unwrap(),
        rich(("copy_async", "public", "dst"))
    );
    let e = cat.copy_table("missing", "dst3").await.unwrap_err();
    assert_eq!(code(&e), "42P01", "{e}");
    assert!(!cat.has_table("dst3").await.unwrap());
}

#[tokio::test]
async fn server_version_is_parsed() {
    let conn = Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap();
    let v = conn.server_version().unwrap();
    assert_eq!(v.text(), conn.server_parameter("server_version").unwrap());
    // hyperd emulates PostgreSQL 9.1.
    assert_eq!((v.major, v.minor), (9, 1), "{v}");
    let h = conn.hyper_version().unwrap();
    assert_eq!(h.text(), conn.server_parameter("hyper_version").unwrap());
    assert!(h.major > 0 || h.minor > 0 || h.patch > 0, "{h:?}");
    let a = AsyncConnection::connect_with(&ConnectOptions::new(server().endpoint().clone()))
        .await
        .unwrap();
    assert_eq!(a.server_version().unwrap(), v);
    assert_eq!(a.hyper_version().unwrap(), h);
}

#[test]
fn notices_arrive_before_the_statements_result() {
    // The callback holds the connection's thread until the test has seen
    // the notice and checked that the statement has not returned yet.
    let (seen_tx, seen) = mpsc::channel();
    let (go_on, wait) = mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(wait);
    let options = ConnectOptions::new(server().endpoint().clone()).with_notice_handler(move |n| {
        seen_tx.send(n.clone()).unwrap();
        wait.lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(60))
            .unwrap();
    });
    let mut conn = Connection::connect_with(&options).unwrap();
    // hyperd warns about a ROLLBACK outside a transaction.
    let running = std::thread::spawn(move || conn.execute_command("ROLLBACK"));
    let notice = seen.recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(
        !running.is_finished(),
        "the statement returned before its notice"
    );
    go_on.send(()).unwrap();
    assert_eq!(running.join().unwrap().unwrap(), 0);
    assert_eq!(notice.severity, Some(Severity::Warning));
    assert_eq!(notice.code.as_ref().map(|c| c.code()), Some("25P01"));
    assert!(notice.message.contains("no transaction"), "{notice:?}");

    // A channel: each notice once, in order, none left behind.
    let (tx, notices) = mpsc::channel();
    let options = ConnectOptions::new(server().endpoint().clone()).with_notice_channel(tx);
    let mut conn = Connection::connect_with(&options).unwrap();
    conn.execute_command("BEGIN").unwrap();
    conn.execute_command("BEGIN").unwrap();
    let first = notices.try_recv().unwrap();
    assert_eq!(
        first.code.as_ref().map(|c| c.code()),
        Some("25001"),
        "{first:?}"
    );
    conn.execute_command("COMMIT").unwrap();
    conn.execute_command("ROLLBACK").unwrap();
    let second = notices.try_recv().unwrap();
    assert_eq!(
        second.code.as_ref().map(|c| c.code()),
        Some("25P01"),
        "{second:?}"
    );
    assert!(notices.try_recv().is_err());
    // The receiver gone: notices are dropped, the connection unaffected.
    drop(notices);
    conn.execute_command("ROLLBACK").unwrap();
    // hyperd runs one statement per query string.
    let e = conn.execute_command("ROLLBACK; SELECT 1").unwrap_err();
    assert_eq!(code(&e), "0A000", "{e}");
}

#[tokio::test]
async fn notices_to_tokio_channels() {
    let (tx, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let options = ConnectOptions::new(server().endpoint().clone()).with_notice_channel(tx);
    let mut conn = AsyncConnection::connect_with(&options).await.unwrap();
    let (result, notice) = tokio::join!(conn.execute_command("ROLLBACK"), notices.recv());
    result.unwrap();
    assert_eq!(
        notice.unwrap().code.as_ref().map(|c| c.code()),
        Some("25P01")
    );
    // A callback on an async connection.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_notice_handler(move |n| sink.lock().unwrap().push(n.message.clone()));
    let mut conn = AsyncConnection::connect_with(&options).await.unwrap();
    conn.execute_command("ROLLBACK").await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 1);
    // A full bounded channel drops notices instead of blocking.
    let (tx, mut full) = tokio::sync::mpsc::channel(1);
    let options = ConnectOptions::new(server().endpoint().clone()).with_notice_channel(tx);
    let mut conn = AsyncConnection::connect_with(&options).await.unwrap();
    for _ in 0..3 {
        conn.execute_command("ROLLBACK").await.unwrap();
    }
    assert!(full.try_recv().is_ok());
    assert!(full.try_recv().is_err());
}

#[test]
fn hyperd_has_no_savepoints_and_keeps_ddl() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "tx.hyper");
    conn.execute_command("CREATE TABLE t (a INT)").unwrap();
    let mut tx = conn.transaction().unwrap();
    tx.execute_command("INSERT INTO t VALUES (1)").unwrap();
    let e = tx.execute_command("SAVEPOINT s").unwrap_err();
    assert_eq!(code(&e), "0A000", "{e}");
    assert!(e.to_string().contains("Savepoints are disabled"), "{e}");
    // The failed statement failed the transaction.
    let e = tx.execute_command("SELECT 1").unwrap_err();
    assert_eq!(code(&e), "25P02", "{e}");
    tx.rollback().unwrap();
    assert_eq!(count(&mut conn, "t"), 0);

    // DDL takes effect at once and outlives ROLLBACK; the rows do not.
    let mut tx = conn.transaction().unwrap();
    tx.execute_command("CREATE TABLE made (a INT)").unwrap();
    tx.execute_command("DROP TABLE t").unwrap();
    tx.execute_command("INSERT INTO made VALUES (1)").unwrap();
    tx.rollback().unwrap();
    assert_eq!(count(&mut conn, "made"), 0);
    assert!(!conn.catalog().has_table("t").unwrap());
    // DDL after DML in one transaction is refused.
    let mut tx = conn.transaction().unwrap();
    tx.execute_command("INSERT INTO made VALUES (1)").unwrap();
    let e = tx
        .execute_command("CREATE TABLE later (a INT)")
        .unwrap_err();
    assert_eq!(code(&e), "0A000", "{e}");
    assert!(e.to_string().contains("mixing DDL and DML"), "{e}");
}

/// `RESET ALL` takes hyperd's `result_format_code` back to text, which a
/// `SET` cannot undo: every read after it, on every route, still gets its
/// values (a simple `Query` read the text `1234` as the INTEGER 875770417),
/// and the catalog still answers.
#[test]
fn reads_after_reset_all_get_their_values() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "reset.hyper");
    conn.execute_command("CREATE TABLE t (a INT, b TEXT)")
        .unwrap();
    conn.execute_command("INSERT INTO t VALUES (1234, 'x')")
        .unwrap();
    conn.execute_command("RESET ALL").unwrap();
    for _ in 0..6 {
        assert_eq!(conn.query_scalar::<i32>("SELECT 1234").unwrap(), 1234);
    }
    #[cfg(feature = "arrow")]
    for route in [
        hyperdb_api::ReadRoute::DataRows,
        hyperdb_api::ReadRoute::Arrow,
    ] {
        let mut rows = conn.execute_query_by("SELECT a, b FROM t", route).unwrap();
        let row = rows.next().unwrap().unwrap();
        assert_eq!(row.try_get::<i32>(0).unwrap(), 1234, "{route:?}");
        assert_eq!(row.try_get::<String>(1).unwrap(), "x", "{route:?}");
    }
    let def = conn.catalog().get_table_definition("t").unwrap();
    assert_eq!(def.columns()[0].sql_type(), &SqlType::Int);
}

#[tokio::test]
async fn async_reads_after_reset_all_get_their_values() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "reset_async.hyper").await;
    conn.execute_command("RESET ALL").await.unwrap();
    for _ in 0..6 {
        let n: i32 = conn.query_scalar("SELECT 1234").await.unwrap();
        assert_eq!(n, 1234);
    }
}
