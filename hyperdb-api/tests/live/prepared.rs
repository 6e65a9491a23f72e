//! Prepared statements, `ping`, connection strings and keepalive, against
//! hyperd.

use std::time::Duration;

use hyperdb_api::types::SqlType;
use hyperdb_api::{AsyncConnection, ConnectOptions, Connection, CreateMode, Error, Statement};

use crate::common::{connect, connect_async, server, tcp_server, temp_dir, within};

/// The first row of `s` (prepared, or SQL text) run with `params`, as `T`.
fn first<T: for<'r> hyperdb_api::FromRow<'r>, S: hyperdb_api::ToStatement + ?Sized>(
    c: &mut Connection,
    s: &S,
    params: &[&dyn hyperdb_api::types::ToPgBinary],
) -> T {
    c.query_as_params::<T, _>(s, params)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
}

fn people(c: &mut Connection) {
    c.execute_command("CREATE TABLE people (id INT NOT NULL, name TEXT)")
        .unwrap();
    c.execute_command("INSERT INTO people VALUES (1, 'ada'), (2, 'bob'), (3, NULL)")
        .unwrap();
}

#[test]
fn a_statement_runs_many_times_with_other_parameters() {
    let dir = temp_dir();
    let mut c = connect(&dir, "p.hyper");
    people(&mut c);
    let lookup = c
        .prepare("SELECT name, id FROM people WHERE id = $1")
        .unwrap();
    assert_eq!(
        lookup.params(),
        &[None],
        "hyperd reports undeclared types as 0"
    );
    let columns: Vec<_> = lookup
        .columns()
        .iter()
        .map(|c| (c.name().to_owned(), c.sql_type().cloned()))
        .collect();
    assert_eq!(
        columns,
        vec![
            ("name".to_owned(), Some(SqlType::Text)),
            ("id".to_owned(), Some(SqlType::Int))
        ]
    );
    for (id, want) in [(1, Some("ada")), (2, Some("bob")), (3, None)] {
        let rows: Vec<(Option<String>, i32)> = c
            .query_as_params(&lookup, &[&id])
            .unwrap()
            .collect::<hyperdb_api::Result<_>>()
            .unwrap();
        assert_eq!(rows, vec![(want.map(str::to_owned), id)]);
    }
    assert_eq!(c.query(&lookup, &[&9]).unwrap().count(), 0);
    let insert = c.prepare("INSERT INTO people VALUES ($1, $2)").unwrap();
    assert!(insert.columns().is_empty());
    for id in 10..15 {
        assert_eq!(c.execute(&insert, &[&id, &format!("p{id}")]).unwrap(), 1);
    }
    let n: i64 = c
        .query_scalar("SELECT count(*) FROM people WHERE id >= 10")
        .unwrap();
    assert_eq!(n, 5);
    // SQL text runs through the same methods.
    let rows: Vec<(String,)> = c
        .query_as_params("SELECT name FROM people WHERE id = $1", &[&12])
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(rows, vec![("p12".to_owned(),)]);
    assert_eq!(
        c.execute("DELETE FROM people WHERE id > $1", &[&11])
            .unwrap(),
        3
    );
}

#[test]
fn declared_types_are_reported_and_checked() {
    let mut c =
        Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap();
    let s = c
        .prepare_typed("SELECT $1 + 1, $2", &[SqlType::BigInt])
        .unwrap();
    assert_eq!(s.params(), &[Some(SqlType::BigInt), None]);
    assert_eq!(s.columns()[0].sql_type(), Some(&SqlType::BigInt));
    // A narrower integer binds to a wider one.
    let row = c
        .query(&s, &[&41i32, &"x"])
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(row.try_get::<i64>(0).unwrap(), 42);
    // Refused before anything is sent, the connection untouched.
    let wrong = c.query(&s, &[&"41", &"x"]).unwrap_err();
    assert!(matches!(wrong, Error::InvalidArgument { .. }), "{wrong}");
    assert!(wrong.to_string().contains("parameter $1"), "{wrong}");
    assert!(wrong.to_string().contains("BIGINT"), "{wrong}");
    let count = c.query(&s, &[&1i64]).unwrap_err();
    assert!(
        count.to_string().contains("2 parameter(s), 1 value(s)"),
        "{count}"
    );
    let too_many = c.prepare_typed("SELECT $1", &[SqlType::Int, SqlType::Int]);
    assert!(matches!(too_many, Err(Error::InvalidArgument { .. })));
    // hyperd's own refusals come back as server errors, connection usable.
    let bad = c
        .prepare("SELECT * FROM no_such_table WHERE x = $1")
        .unwrap_err();
    assert_eq!(bad.sqlstate(), "42P01");
    let int = c.prepare_typed("SELECT $1", &[SqlType::Int]).unwrap();
    let (ok,): (i32,) = first(&mut c, &int, &[&7i16]);
    assert_eq!(ok, 7);
    c.ping().unwrap();
}

/// Text binds to parameters declared JSON, CHAR(1) (OID 18, hyperd's
/// `"char"`) and GEOGRAPHY, and a NULL of any type to every declared type:
/// each was refused with 22023 ("the statement declares JSON (OID 114),
/// the value is TEXT (OID 25)"). GEOGRAPHY goes as WKT text, the only form
/// hyperd takes for it, and stores what the same WKT cast in SQL does.
/// Values of another type, and values hyperd would store cut (a second
/// CHAR(1) character, WKT past a NUL), are still refused before sending.
#[test]
fn text_binds_to_json_char1_and_geography_parameters() {
    use hyperdb_api::Value;
    let dir = temp_dir();
    let mut c = connect(&dir, "typed.hyper");
    c.execute_command("CREATE TABLE p (id INT, j JSON, c CHAR(1), g TABLEAU.TABGEOGRAPHY)")
        .unwrap();
    let types = [
        SqlType::Int,
        SqlType::Json,
        SqlType::Char(1),
        SqlType::Geography,
    ];
    let insert = c
        .prepare_typed("INSERT INTO p VALUES ($1, $2, $3, $4)", &types)
        .unwrap();
    assert_eq!(insert.params().len(), 4);
    let n = c
        .execute(&insert, &[&1, &"{\"a\": [1, 2]}", &"\u{e9}", &"POINT(1 2)"])
        .unwrap();
    assert_eq!(n, 1);
    let n = c
        .execute(
            &insert,
            &[
                &2,
                &Value::Text("{}".into()),
                &String::from("x"),
                &Value::Text("POINT(3 4)".into()),
            ],
        )
        .unwrap();
    assert_eq!(n, 1);
    let n = c
        .execute(&insert, &[&3, &None::<&str>, &None::<i32>, &Value::Null])
        .unwrap();
    assert_eq!(n, 1);
    // A declared GEOGRAPHY beside an inferred parameter: the run goes as
    // the statement's text, the WKT as text all the same.
    let beside = c
        .prepare_typed(
            "INSERT INTO p (g, id) VALUES ($1, $2)",
            &[SqlType::Geography],
        )
        .unwrap();
    assert_eq!(c.execute(&beside, &[&"POINT(5 6)", &4i32]).unwrap(), 1);

    type Read = (i32, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Read> = c
        .query_as_params("SELECT id, j, c, CAST(g AS TEXT) FROM p ORDER BY id", &[])
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        rows,
        [
            (
                1,
                some("{\"a\": [1, 2]}"),
                some("\u{e9}"),
                some("POINT(1.0000000 2.0000000)")
            ),
            (2, some("{}"), some("x"), some("POINT(3.0000000 4.0000000)")),
            (3, None, None, None),
            (4, None, None, some("POINT(5.0000000 6.0000000)")),
        ]
    );
    // The bytes stored are those of the WKT cast in SQL.
    for (id, wkt) in [(1, "POINT(1 2)"), (4, "POINT(5 6)")] {
        let bound: Vec<u8> = c
            .query_scalar(&format!("SELECT g FROM p WHERE id = {id}"))
            .unwrap();
        let cast: Vec<u8> = c
            .query_scalar(&format!("SELECT CAST('{wkt}' AS TABLEAU.TABGEOGRAPHY)"))
            .unwrap();
        assert_eq!(bound, cast, "{wkt}");
    }

    let stored: Vec<u8> = c.query_scalar("SELECT g FROM p WHERE id = 1").unwrap();
    let refused: [(&[&dyn hyperdb_api::types::ToPgBinary], &str, &str); 6] = [
        (
            &[&9, &5i32, &"c", &"POINT(0 0)"],
            "$2",
            "JSON (OID 114), the value is INTEGER",
        ),
        (
            &[&9, &"{}", &7i64, &"POINT(0 0)"],
            "$3",
            "CHAR(1) (OID 18), the value is BIGINT",
        ),
        (
            &[&9, &"{}", &"ab", &"POINT(0 0)"],
            "$3",
            "the value has 2 characters",
        ),
        (
            &[&9, &"{}", &"c", &stored],
            "$4",
            "GEOGRAPHY (OID 5003), the value is BYTEA",
        ),
        (
            &[&9, &"{}", &"c", &1.5f64],
            "$4",
            "the value is DOUBLE PRECISION",
        ),
        (&[&9, &"{}", &"c", &"POINT(0 0)\0x"], "$4", "NUL"),
    ];
    for (values, param, why) in refused {
        let e = c.execute(&insert, values).unwrap_err();
        assert_eq!(e.sqlstate(), "22023", "{e}");
        let text = e.to_string();
        assert!(text.contains(&format!("parameter {param}")), "{text}");
        assert!(text.contains(why), "{text}");
    }
    let n: i64 = c.query_scalar("SELECT count(*) FROM p").unwrap();
    assert_eq!(n, 4, "nothing refused was stored");
}

#[test]
fn a_statement_belongs_to_its_connection() {
    let mut a =
        Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap();
    let mut b =
        Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap();
    let s = a.prepare("SELECT $1::int").unwrap();
    let e = b.query(&s, &[&1]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("another connection"), "{e}");
    assert_eq!(b.execute(&s, &[&1]).unwrap_err().sqlstate(), "22023");
    // Both still work.
    assert_eq!(a.query(&s, &[&5]).unwrap().count(), 1);
    b.ping().unwrap();
}

#[test]
fn statements_live_across_transactions_and_survive_a_failed_one() {
    let dir = temp_dir();
    let mut c = connect(&dir, "tx.hyper");
    people(&mut c);
    let mut tx = c.transaction().unwrap();
    let s = tx
        .prepare_typed("SELECT name FROM people WHERE id = $1", &[SqlType::Int])
        .unwrap();
    let e = tx.execute_command("SELECT 1/0").unwrap_err();
    assert_eq!(e.sqlstate(), "22012");
    let aborted = tx.query(&s, &[&1]).unwrap_err();
    assert_eq!(aborted.sqlstate(), "25P02");
    drop(tx);
    let name: String = c
        .query(&s, &[&1])
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(name, "ada");
}

#[test]
fn rows_of_another_shape_than_described_are_an_error_not_garbage() {
    let dir = temp_dir();
    let mut c = connect(&dir, "stale.hyper");
    people(&mut c);
    // Declared: a value bound to an inferred parameter runs the text,
    // planned afresh (see `values_of_another_type_than_inferred_...`).
    let all = c
        .prepare_typed("SELECT * FROM people WHERE id = $1", &[SqlType::Int])
        .unwrap();
    assert_eq!(all.columns().len(), 2);
    let mut other = connect(&dir, "stale.hyper");
    other
        .execute_command("ALTER TABLE people ADD COLUMN age INT")
        .unwrap();
    let e = c.query(&all, &[&1]).unwrap_err();
    assert_eq!(e.sqlstate(), "0A000", "{e}");
    assert!(
        e.to_string()
            .contains("cached plan must not change result type"),
        "{e}"
    );
    let detail = e.db_error().unwrap().detail.clone().unwrap();
    assert!(
        detail.contains("2 result columns") && detail.contains("3 fields"),
        "{detail}"
    );
    // The connection is idle and usable; prepared again, it fits.
    c.ping().unwrap();
    // Declared: a value bound to an inferred parameter runs the text,
    // planned afresh (see `values_of_another_type_than_inferred_...`).
    let all = c
        .prepare_typed("SELECT * FROM people WHERE id = $1", &[SqlType::Int])
        .unwrap();
    assert_eq!(all.columns().len(), 3);
    let row = c.query(&all, &[&1]).unwrap().next().unwrap().unwrap();
    assert_eq!(row.try_get::<Option<i32>>(2).unwrap(), None);
}

/// A table made again on this connection with other types of the same
/// widths: hyperd runs the statement against it but keeps its first
/// description, which read a DOUBLE PRECISION 1.5 as the BIGINT
/// 4609434218613702656. The run after such a command goes as the text,
/// described afresh.
#[test]
fn a_table_made_again_on_this_connection_is_read_with_its_new_types() {
    let dir = temp_dir();
    let mut c = connect(&dir, "remade.hyper");
    c.execute_command("CREATE TABLE t (a BIGINT, d DATE)")
        .unwrap();
    c.execute_command("INSERT INTO t VALUES (7, DATE '2020-01-02')")
        .unwrap();
    let stmt = c.prepare("SELECT a, d FROM t").unwrap();
    let row = c.query(&stmt, &[]).unwrap().next().unwrap().unwrap();
    assert_eq!(row.try_get::<i64>(0).unwrap(), 7);
    c.execute_command("DROP TABLE t").unwrap();
    c.execute_command("CREATE TABLE t (a DOUBLE PRECISION, d INT)")
        .unwrap();
    c.execute_command("INSERT INTO t VALUES (1.5, 42)").unwrap();
    for _ in 0..2 {
        let mut rows = c.query(&stmt, &[]).unwrap();
        let row = rows.next().unwrap().unwrap();
        assert_eq!(row.try_get::<f64>(0).unwrap(), 1.5);
        assert_eq!(row.try_get::<i32>(1).unwrap(), 42);
        assert_eq!(
            rows.schema().columns()[0].sql_type(),
            Some(&SqlType::Double)
        );
    }
}

#[test]
fn ping_answers_while_the_server_lives_and_fails_once_it_is_gone() {
    within(Duration::from_secs(60), || {
        let hyper = hyperdb_api::HyperProcess::start().unwrap();
        let mut c =
            Connection::connect_with(&ConnectOptions::new(hyper.endpoint().clone())).unwrap();
        for _ in 0..3 {
            c.ping().unwrap();
        }
        let mut tx = c.transaction().unwrap();
        tx.ping().unwrap();
        drop(tx);
        c.ping().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut a = rt
            .block_on(AsyncConnection::connect_with(&ConnectOptions::new(
                hyper.endpoint().clone(),
            )))
            .unwrap();
        rt.block_on(a.ping()).unwrap();
        kill(hyper.pid());
        let e = c.ping().unwrap_err();
        assert!(e.is_closed(), "{e:?}");
        assert_eq!(e.sqlstate(), "08006");
        assert!(c.ping().unwrap_err().is_closed(), "stays closed");
        let e = rt.block_on(a.ping()).unwrap_err();
        assert!(e.is_closed(), "{e:?}");
    });
}

fn kill(pid: u32) {
    // SAFETY: kill(2) with a pid of a child this test started; no memory
    // is involved.
    let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    assert_eq!(rc, 0, "kill hyperd {pid}");
}

#[test]
fn a_connection_string_connects() {
    let dir = temp_dir();
    let path = dir.path().join("from string.hyper");
    let hyperdb_api::Endpoint::Tcp { host, port } = tcp_server().endpoint() else {
        panic!("the shared TCP server listens on TCP")
    };
    let password = tcp_server().password().unwrap();
    let url = format!(
        "hyper://{}:{password}@{host}:{port}{}?create_mode=create_if_not_exists&query_timeout=30s\
         &statement_cache_capacity=8&set.lc_time=C",
        hyperdb_api::Config::DEFAULT_USER,
        path.to_str().unwrap().replace(' ', "%20")
    );
    let opts: ConnectOptions = url.parse().unwrap();
    let mut c = Connection::connect_with(&opts).unwrap();
    c.execute_command("CREATE TABLE t (x INT)").unwrap();
    assert_eq!(c.execute("INSERT INTO t VALUES ($1)", &[&4]).unwrap(), 1);
    c.close().unwrap();
    assert!(path.exists());
    // Unix socket, by `host=`.
    let unix = server().endpoint().unix_path().unwrap().to_owned();
    let url = format!(
        "hyper://{}?host={}",
        path.to_str().unwrap().replace(' ', "%20"),
        unix.display()
    );
    let mut c = Connection::connect_with(&url.parse().unwrap()).unwrap();
    let n: i64 = c.query_scalar("SELECT count(*) FROM t").unwrap();
    assert_eq!(n, 1);
    // Well-formed but wrong: the server's error.
    let url = format!(
        "hyper://{}:{password}@{host}:{port}/{}/missing.hyper",
        hyperdb_api::Config::DEFAULT_USER,
        dir.path().display()
    );
    let e = Connection::connect_with(&url.parse().unwrap()).unwrap_err();
    assert!(e.code().is_some(), "{e}");
}

/// Sockets of this process whose keepalive idle time is `idle`.
fn sockets_with_keepalive(idle: Duration) -> Vec<(Duration, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // SAFETY: the fd is borrowed only for these getsockopt calls; a
        // descriptor another test closes meanwhile gives an error, which
        // is skipped.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let s = socket2::SockRef::from(&fd);
        if s.keepalive().unwrap_or(false) && s.keepalive_time().ok() == Some(idle) {
            found.push((
                s.keepalive_interval().unwrap_or_default(),
                s.keepalive_retries().unwrap_or_default(),
            ));
        }
    }
    found
}

#[test]
fn connections_to_hyperd_have_keepalive_on() {
    // Idle times no other test uses pick out our sockets.
    let sync_idle = Duration::from_secs(77);
    let c = Connection::connect_with(
        &tcp_server()
            .connect_options()
            .with_keepalive(Some(sync_idle)),
    )
    .unwrap();
    assert_eq!(
        sockets_with_keepalive(sync_idle),
        vec![(Duration::from_secs(10), 3)]
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let async_idle = Duration::from_secs(78);
    let a = rt
        .block_on(AsyncConnection::connect_with(
            &tcp_server()
                .connect_options()
                .with_keepalive(Some(async_idle)),
        ))
        .unwrap();
    assert_eq!(
        sockets_with_keepalive(async_idle),
        vec![(Duration::from_secs(10), 3)]
    );
    drop(a);
    drop(c);
    // The default, read back from the options every connection uses.
    let default = tcp_server().connect_options();
    assert_eq!(
        default.config().socket_options().keepalive,
        Some(Duration::from_secs(60))
    );
}

/// hyperd infers an untyped parameter's type without reporting it and
/// reads a binary value as that type: bound to `prepare`d statements,
/// values of another type are cast or refused by the server, never stored
/// as other numbers (an `i64` 5 into DOUBLE PRECISION was 2.5e-323, an
/// `f64` 5.0 into BIGINT 4617315517961601024).
#[test]
fn values_of_another_type_than_inferred_are_cast_or_refused() {
    let dir = temp_dir();
    let mut c = connect(&dir, "infer.hyper");
    c.execute_command("CREATE TABLE w (d DOUBLE PRECISION, b BIGINT, i INT, ts TIMESTAMP)")
        .unwrap();
    let d = c.prepare("INSERT INTO w (d) VALUES ($1)").unwrap();
    assert_eq!(c.execute(&d, &[&5i64]).unwrap(), 1);
    let b = c.prepare("INSERT INTO w (b) VALUES ($1)").unwrap();
    assert_eq!(c.execute(&b, &[&5.0f64]).unwrap(), 1);
    let i = c.prepare("INSERT INTO w (i) VALUES ($1)").unwrap();
    assert_eq!(c.execute(&i, &[&1.0f32]).unwrap(), 1);
    let ts = c.prepare("INSERT INTO w (ts) VALUES ($1)").unwrap();
    let e = c.execute(&ts, &[&5i64]).unwrap_err();
    assert!(e.sqlstate().starts_with("42"), "{e}");
    let stored: (Option<String>, Option<i64>, Option<i32>) = c
        .query_as("SELECT max(d)::text, max(b), max(i) FROM w")
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(stored, (Some("5".into()), Some(5), Some(1)));
    let lookup = c.prepare("SELECT count(*) FROM w WHERE d = $1").unwrap();
    let (n,): (i64,) = first(&mut c, &lookup, &[&5i64]);
    assert_eq!(n, 1);
    // Values of the inferred type still run as the statement itself.
    assert_eq!(c.execute(&d, &[&2.5f64]).unwrap(), 1);
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM w").unwrap(), 4);
}

#[tokio::test]
async fn async_values_of_another_type_than_inferred_are_cast() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "infer_async.hyper").await;
    c.execute_command("CREATE TABLE w (d DOUBLE PRECISION)")
        .await
        .unwrap();
    let d = c.prepare("INSERT INTO w (d) VALUES ($1)").await.unwrap();
    assert_eq!(c.execute(&d, &[&5i64]).await.unwrap(), 1);
    let text: String = c.query_scalar("SELECT d::text FROM w").await.unwrap();
    assert_eq!(text, "5");
}

#[tokio::test]
async fn async_statements_are_send_and_static() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "a.hyper").await;
    c.execute_command("CREATE TABLE t (id INT, v TEXT)")
        .await
        .unwrap();
    let insert = c.prepare("INSERT INTO t VALUES ($1, $2)").await.unwrap();
    let lookup: Statement = c
        .prepare_typed("SELECT v FROM t WHERE id = $1", &[SqlType::Int])
        .await
        .unwrap();
    // A statement and the connection move into a task together. The
    // parameters are encoded when the call is made (`dyn ToPgBinary` is
    // not `Sync`), so the future holds none of them.
    let task = tokio::spawn(async move {
        for id in 0..20i32 {
            let insert = c.execute(&insert, &[&id, &format!("v{id}")]);
            assert_eq!(insert.await.unwrap(), 1);
        }
        let mut out = Vec::new();
        for id in [3i32, 17] {
            let query = c.query(&lookup, &[&id]);
            let mut rows = query.await.unwrap();
            while let Some(row) = rows.next().await {
                out.push(row.unwrap().try_get::<String>(0).unwrap());
            }
        }
        let wrong = c.query(&lookup, &[&"3"]);
        let wrong = wrong.await.unwrap_err();
        assert!(matches!(wrong, Error::InvalidArgument { .. }));
        let n: i64 = c.query_scalar("SELECT count(*) FROM t").await.unwrap();
        c.ping().await.unwrap();
        (out, n)
    });
    let (out, n) = task.await.unwrap();
    assert_eq!(out, vec!["v3", "v17"]);
    assert_eq!(n, 20);
}

#[test]
fn create_modes_in_strings_reach_the_server() {
    let dir = temp_dir();
    let path = dir.path().join("cm.hyper");
    let hyperdb_api::Endpoint::Tcp { host, port } = tcp_server().endpoint() else {
        panic!("TCP")
    };
    let password = tcp_server().password().unwrap();
    let url = format!(
        "hyper://{}:{password}@{host}:{port}{}?create_mode=create",
        hyperdb_api::Config::DEFAULT_USER,
        path.display()
    );
    Connection::connect_with(&url.parse().unwrap())
        .unwrap()
        .close()
        .unwrap();
    // `create` again: the file exists now.
    let e = Connection::connect_with(&url.parse().unwrap()).unwrap_err();
    assert!(e.code().is_some(), "{e}");
    let c = Connection::connect(server().endpoint(), &path, CreateMode::DoNotCreate).unwrap();
    c.close().unwrap();
}

/// hyperd returns only the first row of a top-level `VALUES` of several
/// rows run as a prepared statement (every statement with parameters):
/// refused (0A000), not read as one row; inside a `SELECT` it goes in
/// whole.
#[test]
fn a_values_of_several_rows_with_parameters_is_refused_not_cut() {
    let dir = temp_dir();
    let mut c = connect(&dir, "values.hyper");
    let e = c
        .execute_query_params("VALUES ($1::int), (2)", &[&1])
        .map(drop)
        .expect_err("refused");
    assert_eq!(e.sqlstate(), "0A000", "{e}");
    let e = c.prepare("VALUES ($1::int), (2)").expect_err("refused");
    assert_eq!(e.sqlstate(), "0A000", "{e}");
    let rows: Vec<i32> = c
        .execute_query_params("SELECT * FROM (VALUES ($1::int), (2)) v", &[&1])
        .unwrap()
        .map(|r| r.unwrap().try_get(0).unwrap())
        .collect();
    assert_eq!(rows, [1, 2]);
    let (one,): (i32,) = first(&mut c, "VALUES ($1::int)", &[&7]);
    assert_eq!(one, 7);
    let all = c.execute_query("VALUES (1), (2), (3)").unwrap().count();
    assert_eq!(all, 3, "without parameters every row");
}
