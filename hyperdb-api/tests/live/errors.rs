//! Errors carry the server's fields, and the connection stays usable after
//! every kind of failure that leaves the socket intact.

use std::time::Duration;

use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, Error, HyperProcess, SqlState,
};

use crate::common::{server, temp_dir, transports};

fn connect() -> Connection {
    Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap()
}

#[test]
fn syntax_error_has_sqlstate_and_position_then_select_1_works() {
    for options in transports() {
        let mut c = Connection::connect_with(&options).unwrap();
        let e = c.execute_command("SELECT 1 FROM WHERE").unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR), "{e:?}");
        let db = e.db_error().unwrap();
        assert!(db.position.is_some(), "position reported: {db:?}");
        assert!(!db.message.is_empty());
        // Through execute_query too.
        let e = c.execute_query("SELEC 1").unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR));
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    }
}

#[test]
fn failed_statement_in_transaction_then_select_1_works() {
    let mut c = connect();
    {
        let mut tx = c.transaction().unwrap();
        let e = tx.execute_command("SELECT 1/0").unwrap_err();
        assert!(e.code().is_some(), "{e:?}");
        let e = tx.execute_command("SELECT 1").unwrap_err();
        assert!(
            e.code().is_some(),
            "the failed transaction refuses further commands: {e:?}"
        );
    }
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);

    // commit() of a failed transaction reports it (hyperd answers COMMIT
    // with a rollback and no error), stores nothing, and leaves us idle.
    c.execute_command("CREATE TEMPORARY TABLE failed_tx (i INT NOT NULL)")
        .unwrap();
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO failed_tx VALUES (1)")
        .unwrap();
    tx.execute_command("INSERT INTO failed_tx VALUES (NULL)")
        .unwrap_err();
    let e = tx.commit().unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    assert!(e.to_string().contains("rolled back"), "{e}");
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM failed_tx")
            .unwrap(),
        0
    );
    assert_eq!(c.query_scalar::<i32>("SELECT 2").unwrap(), 2);
    // A committed transaction still commits.
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO failed_tx VALUES (2)")
        .unwrap();
    tx.commit().unwrap();
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM failed_tx")
            .unwrap(),
        1
    );
}

/// A cancel request that reaches hyperd while a transaction waits between
/// its statements (one sent for a statement that had just completed:
/// a timeout's, an abort's) ends the transaction; hyperd then answers its
/// `COMMIT` with `ROLLBACK` and no error. The commits say so (25P02),
/// where they returned `Ok` with the rows gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_hyperd_answers_with_rollback_is_an_error() {
    let dir = temp_dir();
    let path = dir.path().join("cancelled_tx.hyper");
    let mut c = Connection::connect(server().endpoint(), &path, CreateMode::Create).unwrap();
    c.execute_command("CREATE TABLE t (x INT)").unwrap();
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO t VALUES (1)").unwrap();
    tx.cancel_handle().cancel().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let e = tx.commit().unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    assert!(e.to_string().contains("the server had ended it"), "{e}");
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 0);
    // An ordinary one commits.
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO t VALUES (2)").unwrap();
    tx.commit().unwrap();
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 1);
    drop(c);

    let mut c = AsyncConnection::connect(server().endpoint(), &path, CreateMode::DoNotCreate)
        .await
        .unwrap();
    let mut tx = c.transaction().await.unwrap();
    tx.execute_command("INSERT INTO t VALUES (3)")
        .await
        .unwrap();
    tx.cancel_handle().cancel().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let e = tx.commit().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    let n: i64 = c.query_scalar("SELECT count(*) FROM t").await.unwrap();
    assert_eq!(n, 1);
}

/// A `COMMIT` (or `END`) of a failed transaction sent by any call stores
/// nothing: by SQL text with parameters, by a prepared statement, by
/// `query`, `execute_query`, `query_scalar`, a shared connection's
/// streams (the Node package's reads). hyperd answers such a COMMIT by
/// committing the writes around the failure when it came through the
/// extended protocol, or as a simple query after a statement with
/// parameters failed; only `execute_command` used to send it as ROLLBACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_commit_of_a_failed_transaction_stores_nothing() {
    let mut c = connect();
    c.execute_command("CREATE TEMPORARY TABLE ended (i INT NOT NULL)")
        .unwrap();
    type End = fn(&mut Connection) -> hyperdb_api::Result<u64>;
    let ends: [(&str, End); 7] = [
        ("execute_command_params", |c| {
            c.execute_command_params("COMMIT", &[])
        }),
        ("execute(text)", |c| c.execute("END", &[])),
        ("execute(prepared)", |c| {
            let commit = c.prepare("COMMIT")?;
            c.execute(&commit, &[])
        }),
        ("query", |c| {
            c.query("COMMIT", &[]).map(|rows| rows.count() as u64)
        }),
        ("execute_query_params", |c| {
            c.execute_query_params("COMMIT", &[])
                .map(|rows| rows.count() as u64)
        }),
        ("execute_query", |c| {
            c.execute_query("COMMIT").map(|rows| rows.count() as u64)
        }),
        ("query_scalar", |c| match c.query_scalar::<i32>("END") {
            Err(hyperdb_api::Error::NoRows) => Ok(0),
            other => other.map(|_| 0),
        }),
    ];
    for (name, end) in ends {
        c.execute_command("BEGIN").unwrap();
        c.execute_command_params("INSERT INTO ended VALUES ($1)", &[&1i32])
            .unwrap();
        c.execute_command_params("INSERT INTO ended VALUES ($1)", &[&None::<i32>])
            .unwrap_err();
        end(&mut c).unwrap();
        let n: i64 = c.query_scalar("SELECT count(*) FROM ended").unwrap();
        assert_eq!(
            n, 0,
            "{name}: the failed transaction's insert was committed"
        );
        assert_eq!(c.query_scalar::<i32>("SELECT 3").unwrap(), 3, "{name}");
    }
    // Async: text with parameters, prepared, and a plain query.
    let options = ConnectOptions::new(server().endpoint().clone());
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    c.execute_command("CREATE TEMPORARY TABLE ended (i INT NOT NULL)")
        .await
        .unwrap();
    for how in ["params", "prepared", "execute_query"] {
        c.execute_command("BEGIN").await.unwrap();
        c.execute_command_params("INSERT INTO ended VALUES ($1)", &[&1i32])
            .await
            .unwrap();
        c.execute_command_params("INSERT INTO ended VALUES ($1)", &[&None::<i32>])
            .await
            .unwrap_err();
        match how {
            "prepared" => {
                let commit = c.prepare("COMMIT").await.unwrap();
                c.execute(&commit, &[]).await.unwrap();
            }
            "execute_query" => drop(c.execute_query("COMMIT").await.unwrap()),
            _ => drop(c.execute_command_params("COMMIT", &[]).await.unwrap()),
        }
        let n: i64 = c.query_scalar("SELECT count(*) FROM ended").await.unwrap();
        assert_eq!(n, 0, "async, {how}");
    }
    // A shared connection's streams, which read every statement (the
    // Node package's query(), queryAll(), queryArrow()).
    let shared = hyperdb_api::SharedConnection::connect_with(&options)
        .await
        .unwrap();
    shared
        .execute_command("CREATE TEMPORARY TABLE ended (i INT NOT NULL)", &[])
        .await
        .unwrap();
    for ipc in [false, true] {
        shared.execute_command("BEGIN", &[]).await.unwrap();
        let one = vec![hyperdb_api::Value::Int(1)];
        shared
            .execute_command("INSERT INTO ended VALUES ($1)", &one)
            .await
            .unwrap();
        let null = vec![hyperdb_api::Value::Null];
        shared
            .execute_command("INSERT INTO ended VALUES ($1::INT)", &null)
            .await
            .unwrap_err();
        if ipc {
            let mut s = shared.query_arrow_ipc("COMMIT", vec![]).await.unwrap();
            while s.next().await.transpose().unwrap().is_some() {}
        } else {
            let mut s = shared.query_arrow("COMMIT", vec![]).await.unwrap();
            while s.next().await.transpose().unwrap().is_some() {}
        }
        let mut s = shared
            .query_arrow("SELECT count(*) FROM ended", vec![])
            .await
            .unwrap();
        let batch = s.next().await.unwrap().unwrap();
        let n = batch
            .column(0)
            .as_any()
            .downcast_ref::<hyperdb_api::arrow_array::Int64Array>()
            .unwrap()
            .value(0);
        assert_eq!(n, 0, "shared, ipc: {ipc}");
    }
}

/// `commit()` of a transaction already ended (a ROLLBACK or COMMIT sent
/// by hand through the guard, or a transaction started inside it and
/// ended) is 25P01, not `Ok` for work that was not committed with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_of_a_transaction_ended_before_is_an_error() {
    let mut c = connect();
    c.execute_command("CREATE TEMPORARY TABLE ended_before (i INT)")
        .unwrap();
    for end in ["ROLLBACK", "COMMIT"] {
        let mut tx = c.transaction().unwrap();
        tx.execute_command("INSERT INTO ended_before VALUES (1)")
            .unwrap();
        tx.execute_command(end).unwrap();
        let e = tx.commit().unwrap_err();
        assert_eq!(e.sqlstate(), "25P01", "{end}: {e}");
        assert_eq!(c.query_scalar::<i32>("SELECT 4").unwrap(), 4);
    }
    // A transaction with DDL first commits as before.
    let mut tx = c.transaction().unwrap();
    tx.execute_command("CREATE TEMPORARY TABLE made_in_tx (i INT)")
        .unwrap();
    tx.execute_command("INSERT INTO made_in_tx VALUES (1)")
        .unwrap();
    tx.commit().unwrap();
    let options = ConnectOptions::new(server().endpoint().clone());
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    c.execute_command("CREATE TEMPORARY TABLE ended_before (i INT)")
        .await
        .unwrap();
    let mut tx = c.transaction().await.unwrap();
    tx.execute_command("ROLLBACK").await.unwrap();
    let e = tx.commit().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25P01", "{e}");
}

/// A transaction begun inside another (through the guard, or after a
/// `BEGIN` sent by hand) is refused with 25001 and leaves the open one as
/// it was; before, it was accepted, and its `COMMIT` committed the outer's
/// rows too. A dropped guard's queued `ROLLBACK` is no open transaction.
#[tokio::test]
async fn a_transaction_inside_another_is_refused() {
    let mut c = connect();
    c.execute_command("CREATE TEMPORARY TABLE nested (i INT)")
        .unwrap();
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO nested VALUES (1)").unwrap();
    let e = tx.transaction().unwrap_err();
    assert_eq!(e.sqlstate(), "25001", "{e}");
    assert!(e.to_string().contains("already open"), "{e}");
    tx.execute_command("INSERT INTO nested VALUES (2)").unwrap();
    tx.rollback().unwrap();
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM nested")
            .unwrap(),
        0
    );
    c.execute_command("BEGIN").unwrap();
    assert_eq!(c.transaction().unwrap_err().sqlstate(), "25001");
    c.execute_command("ROLLBACK").unwrap();
    // A dropped guard: its ROLLBACK is queued, and the next guard begins.
    drop(c.transaction().unwrap());
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO nested VALUES (3)").unwrap();
    tx.commit().unwrap();
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM nested")
            .unwrap(),
        1
    );

    let options = ConnectOptions::new(server().endpoint().clone());
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    c.execute_command("CREATE TEMPORARY TABLE nested (i INT)")
        .await
        .unwrap();
    let mut tx = c.transaction().await.unwrap();
    tx.execute_command("INSERT INTO nested VALUES (1)")
        .await
        .unwrap();
    let e = tx.transaction().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25001", "{e}");
    tx.commit().await.unwrap();
    drop(c.transaction().await.unwrap());
    let tx = c.transaction().await.unwrap();
    tx.commit().await.unwrap();
    let n: i64 = c.query_scalar("SELECT count(*) FROM nested").await.unwrap();
    assert_eq!(n, 1);
}

/// The same through the async guard and the owned connection's `commit`
/// (which Node's `transaction()` calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_commit_of_a_failed_transaction_is_an_error() {
    let options = ConnectOptions::new(server().endpoint().clone());
    let mut c = AsyncConnection::connect_with(&options).await.unwrap();
    c.execute_command("CREATE TEMPORARY TABLE failed_tx (i INT NOT NULL)")
        .await
        .unwrap();
    let mut tx = c.transaction().await.unwrap();
    tx.execute_command("INSERT INTO failed_tx VALUES (1)")
        .await
        .unwrap();
    tx.execute_command("SELECT 1/0").await.unwrap_err();
    let e = tx.commit().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    let n: i64 = c
        .query_scalar("SELECT count(*) FROM failed_tx")
        .await
        .unwrap();
    assert_eq!(n, 0);

    let shared = hyperdb_api::SharedConnection::new(c);
    shared.execute_command("BEGIN", &[]).await.unwrap();
    shared
        .execute_command("INSERT INTO failed_tx VALUES (3)", &[])
        .await
        .unwrap();
    shared
        .execute_command("INSERT INTO failed_tx VALUES (NULL)", &[])
        .await
        .unwrap_err();
    let e = shared.place().commit().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    shared.execute_command("BEGIN", &[]).await.unwrap();
    shared
        .execute_command("INSERT INTO failed_tx VALUES (4)", &[])
        .await
        .unwrap();
    shared.place().commit().await.unwrap();
    // Only the committed row is there.
    let deleted = shared.execute_command("DELETE FROM failed_tx", &[]).await;
    assert_eq!(deleted.unwrap(), 1);
}

/// hyperd does not fail a transaction for an error of a statement with
/// parameters, and such a statement sent into a failed transaction clears
/// the failure (measured, 0.0.26963): a commit would store the rows around
/// the failed statement. Every commit path rolls the transaction back and
/// reports 25P02, as PostgreSQL would; the status says `Failed`.
#[test]
fn a_failed_statement_with_parameters_fails_the_transaction() {
    use hyperdb_api::TransactionStatus;
    let mut c = connect();
    c.execute_command("CREATE TEMPORARY TABLE failed_params (i INT NOT NULL)")
        .unwrap();
    let count = |c: &mut Connection| {
        c.query_scalar::<i64>("SELECT count(*) FROM failed_params")
            .unwrap()
    };
    // A failing statement with parameters, then more writes: Transaction::commit.
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO failed_params VALUES (1)")
        .unwrap();
    let e = tx
        .execute_command_params("SELECT $1::INT / 0", &[&1i32])
        .unwrap_err();
    assert_eq!(e.sqlstate(), "22012", "{e}");
    assert_eq!(tx.transaction_status(), TransactionStatus::Failed);
    // hyperd takes more writes; they are rolled back with the rest.
    let _ = tx.execute_command("INSERT INTO failed_params VALUES (2)");
    let e = tx.commit().unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    assert_eq!(count(&mut c), 0);
    assert_eq!(c.transaction_status(), TransactionStatus::Idle);

    // A plain failure, then a statement with parameters (which hyperd
    // answers by clearing the failure), then a raw COMMIT; also behind
    // what hyperd skips before a keyword (each of these but the first
    // committed row 1 and 2).
    for commit in [
        "commit",
        "\u{A0}COMMIT",
        "\u{FEFF}commit",
        "\u{2028}\u{3000}\u{200B}\u{B}END",
        ";COMMIT",
        "-- note\rCOMMIT",
        "/* a /* b */ COMMIT",
    ] {
        c.execute_command("BEGIN").unwrap();
        c.execute_command("INSERT INTO failed_params VALUES (1)")
            .unwrap();
        c.execute_command("INSERT INTO missing_table VALUES (1)")
            .unwrap_err();
        c.execute_command_params("SELECT $1::INT", &[&1i32])
            .unwrap_err();
        let _ = c.execute_command("INSERT INTO failed_params VALUES (2)");
        assert_eq!(c.transaction_status(), TransactionStatus::Failed);
        c.execute_command(commit).unwrap();
        assert_eq!(count(&mut c), 0, "{commit:?}");
        assert_eq!(c.transaction_status(), TransactionStatus::Idle);
    }

    // A transaction without a failure still commits, parameters and all.
    let mut tx = c.transaction().unwrap();
    tx.execute_command_params("INSERT INTO failed_params VALUES ($1)", &[&5i32])
        .unwrap();
    tx.commit().unwrap();
    assert_eq!(count(&mut c), 1);
}

/// The same through the owned connection (Node's `transaction()`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_statement_with_parameters_fails_a_shared_transaction() {
    use hyperdb_api::Value;
    let options = ConnectOptions::new(server().endpoint().clone());
    let c = AsyncConnection::connect_with(&options).await.unwrap();
    let shared = hyperdb_api::SharedConnection::new(c);
    shared
        .execute_command("CREATE TEMPORARY TABLE failed_params (i INT NOT NULL)", &[])
        .await
        .unwrap();
    shared.execute_command("BEGIN", &[]).await.unwrap();
    shared
        .execute_command("INSERT INTO failed_params VALUES (1)", &[])
        .await
        .unwrap();
    let e = shared
        .execute_command("INSERT INTO failed_params VALUES ($1)", &[Value::Null])
        .await
        .unwrap_err();
    assert_eq!(e.sqlstate(), "23502", "{e}");
    shared
        .execute_command("INSERT INTO failed_params VALUES (2)", &[])
        .await
        .unwrap();
    let e = shared.place().commit().await.unwrap_err();
    assert_eq!(e.sqlstate(), "25P02", "{e}");
    let deleted = shared
        .execute_command("DELETE FROM failed_params", &[])
        .await;
    assert_eq!(deleted.unwrap(), 0);
}

#[test]
fn dropped_half_read_stream_then_select_1_works() {
    let mut c = connect();
    {
        let mut rows = c
            .execute_query("SELECT i FROM generate_series(1, 10000000) g(i)")
            .unwrap();
        for _ in 0..1000 {
            rows.next().unwrap().unwrap();
        }
    }
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    // An error that arrives after some rows: over DataRows the stream yields
    // it, then ends.
    let sql = "SELECT 10 / (5 - i) FROM generate_series(1, 10) g(i)";
    let rows: Vec<_> = c.execute_query_params(sql, &[]).unwrap().collect();
    let e = rows.last().unwrap().as_ref().unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("22012"), "{e:?}");
    assert_eq!(c.query_scalar::<i32>("SELECT 3").unwrap(), 3);
    // Over Arrow hyperd may report it before the first batch: the same
    // error, from execute_query itself or from the stream.
    let e = match c.execute_query(sql) {
        Err(e) => e,
        Ok(rows) => rows.filter_map(Result::err).next().expect("an error"),
    };
    assert_eq!(e.code().map(|c| c.code()), Some("22012"), "{e:?}");
    assert_eq!(c.query_scalar::<i32>("SELECT 4").unwrap(), 4);
}

#[tokio::test]
async fn async_errors_leave_the_connection_usable() {
    for options in transports() {
        let mut c = AsyncConnection::connect_with(&options).await.unwrap();
        let e = c.execute_command("SELECT 1 FROM WHERE").await.unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR));
        assert!(e.db_error().unwrap().position.is_some());
        {
            let mut tx = c.transaction().await.unwrap();
            tx.execute_command("SELECT 1/0").await.unwrap_err();
        }
        {
            let mut rows = c
                .execute_query("SELECT i FROM generate_series(1, 10000000) g(i)")
                .await
                .unwrap();
            rows.next().await.unwrap().unwrap();
        }
        // A future dropped mid-flight (cancel-safety).
        let fut = c.execute_command("SELECT count(*) FROM generate_series(1, 100000000)");
        let _ = tokio::time::timeout(Duration::from_millis(50), fut).await;
        assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
    }
}

#[test]
fn bad_input_is_a_typed_error_and_keeps_the_connection() {
    let mut c = connect();
    let e = c.execute_command("SELECT '\0'").unwrap_err();
    assert_eq!(
        e.kind(),
        Some(hyperdb_api::ErrorKind::InvalidInput),
        "{e:?}"
    );
    assert!(e.to_string().contains("NUL"), "{e}");
    let e = c.query_scalar::<i32>("SELECT 1 WHERE false").unwrap_err();
    assert!(matches!(e, Error::NoRows), "{e:?}");
    let e = c.query_scalar::<i32>("SELECT 'text'").unwrap_err();
    assert!(matches!(e, Error::TypeMismatch { .. }), "{e:?}");
    let e = c.query_scalar::<i32>("SELECT NULL::int").unwrap_err();
    assert!(matches!(e, Error::UnexpectedNull { .. }), "{e:?}");
    let mut rows = c.execute_query("SELECT 1 AS a").unwrap();
    let row = rows.next().unwrap().unwrap();
    assert!(matches!(
        row.try_get::<i32>(5),
        Err(Error::ColumnNotFound { .. })
    ));
    assert!(matches!(
        row.try_get::<i32>("b"),
        Err(Error::ColumnNotFound { .. })
    ));
    assert_eq!(row.try_get::<i32>("a").unwrap(), 1);
    assert_eq!(row.try_get::<Option<i32>>(0).unwrap(), Some(1));
    drop(rows);
    assert_eq!(c.query_scalar::<i32>("SELECT 7").unwrap(), 7);
}

#[test]
fn unknown_startup_parameter_is_a_typed_error() {
    let opts =
        ConnectOptions::new(server().endpoint().clone()).with_param("no_such_setting_xyz", "1");
    let e = Connection::connect_with(&opts).unwrap_err();
    assert!(
        e.code().is_some(),
        "hyperd rejects it with a SQLSTATE: {e:?}"
    );
    assert!(e.to_string().contains("no_such_setting_xyz"), "{e}");
    // A known setting is applied.
    let opts = ConnectOptions::new(server().endpoint().clone()).with_param("lc_time", "de_DE");
    let mut c = Connection::connect_with(&opts).unwrap();
    assert_eq!(
        c.query_scalar::<String>("SHOW lc_time")
            .unwrap()
            .to_lowercase(),
        "de_de"
    );
    let opts = ConnectOptions::new(server().endpoint().clone()).with_param("search_path", "a b");
    let e = Connection::connect_with(&opts).unwrap_err();
    assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Config), "{e:?}");
    let opts = ConnectOptions::new(server().endpoint().clone()).with_param("bad name", "1");
    let e = Connection::connect_with(&opts).unwrap_err();
    assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Config), "{e:?}");
    // The client's own setting: it reads simple queries' rows as HyperBinary.
    let opts =
        ConnectOptions::new(server().endpoint().clone()).with_param("result_format_code", "text");
    let e = Connection::connect_with(&opts).unwrap_err();
    assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Config), "{e:?}");
    assert!(e.to_string().contains("result_format_code"), "{e}");
}

#[test]
fn connection_to_a_stopped_server_reports_closed() {
    let hyper = HyperProcess::start().unwrap();
    let dir = temp_dir();
    let mut c = Connection::connect(
        hyper.endpoint(),
        dir.path().join("gone.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    let ep = hyper.endpoint().clone();
    hyper.shutdown(Duration::from_secs(5)).unwrap();
    let e = c.query_scalar::<i32>("SELECT 1").unwrap_err();
    assert!(e.is_closed(), "{e:?}");
    let e = c.query_scalar::<i32>("SELECT 1").unwrap_err();
    assert!(e.is_closed(), "stays closed: {e:?}");
    let e = Connection::connect_with(&ConnectOptions::new(ep)).unwrap_err();
    assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Io), "{e:?}");
}
