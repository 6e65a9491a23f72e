//! Per-statement tracing (issue 20), against hyperd: each test installs its
//! own subscriber, a registry with a [`Capture`] layer (`capture.rs`), for
//! the code it runs.

use std::time::Duration;

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    ArrowInserter, AsyncConnection, ConnectOptions, Connection, CreateMode, HyperProcess,
    HyperProcessOptions, Inserter, TableDefinition,
};
use tracing::Level;
use tracing_subscriber::filter::LevelFilter;

use crate::capture::{Capture, EventRec, SpanRec};
use crate::common;

/// A connection to a fresh database holding `t(x INT)` with `rows` rows.
fn db_with_rows(dir: &tempfile::TempDir, rows: u32) -> Connection {
    let mut conn = common::connect(dir, "trace.hyper");
    conn.execute_command("CREATE TABLE t (x INT NOT NULL)")
        .unwrap();
    conn.execute_command(&format!(
        "INSERT INTO t SELECT g FROM generate_series(1, {rows}) g"
    ))
    .unwrap();
    conn
}

fn assert_ok(span: &SpanRec, call: &str, rows: u64) {
    assert_eq!(span.field("db.system"), "hyper", "{span:?}");
    assert_eq!(span.field("hyperdb.call"), call, "{span:?}");
    assert_eq!(span.field("outcome"), "ok", "{span:?}");
    assert_eq!(span.num("rows"), rows as f64, "{span:?}");
    assert!(span.num("duration_ms") >= 0.0, "{span:?}");
    assert!(span.get("sqlstate").is_none(), "{span:?}");
    assert!(span.closed, "{span:?}");
}

/// A plain query (hyperd's Arrow stream) and the same query as `DataRow`s
/// (`execute_query_params`): SQL, rows and bytes, one span each.
#[test]
fn query_spans_record_sql_rows_and_bytes() {
    let dir = common::temp_dir();
    let mut conn = db_with_rows(&dir, 5000);
    let capture = Capture::default();
    let arrow_sql = "SELECT x FROM t";
    let rows_sql = "SELECT x FROM t WHERE x > 0";
    capture.run(|| {
        let n = conn.execute_query(arrow_sql).unwrap().count();
        assert_eq!(n, 5000);
        let n = conn.execute_query_params(rows_sql, &[]).unwrap().count();
        assert_eq!(n, 5000);
        assert_eq!(
            conn.execute_command("UPDATE t SET x = x WHERE x <= 7")
                .unwrap(),
            7
        );
    });
    let arrow = capture.statement(arrow_sql);
    assert_ok(&arrow, "execute_query", 5000);
    // 5000 INTs as Arrow: at least their 20,000 value bytes.
    assert!(arrow.num("bytes") >= 20_000.0, "{arrow:?}");
    let rows = capture.statement(rows_sql);
    assert_ok(&rows, "execute_query_params", 5000);
    // A DataRow of one INT is 15 bytes on the wire.
    assert_eq!(rows.num("bytes"), 5000.0 * 15.0, "{rows:?}");
    assert_eq!(rows.field("hyperdb.params"), "0");
    let update = capture.statement("UPDATE t SET x = x WHERE x <= 7");
    assert_ok(&update, "execute_command", 7);
    assert_eq!(capture.statements().len(), 3, "{:?}", capture.statements());
}

/// A streamed result's span lasts as long as the stream: read to its end
/// it is "ok" with every row; dropped after one row it is "abandoned" with
/// the rows received by then, on both row paths and as Arrow batches.
#[test]
fn dropped_streams_are_abandoned() {
    let dir = common::temp_dir();
    let mut conn = db_with_rows(&dir, 300_000);
    let capture = Capture::default();
    let (arrow_sql, rows_sql, batch_sql) = (
        "SELECT x FROM t",
        "SELECT x FROM t WHERE x <> 0",
        "SELECT x, x + 1 AS y FROM t",
    );
    capture.run(|| {
        let mut rows = conn.execute_query(arrow_sql).unwrap();
        rows.next().unwrap().unwrap();
        // Still running while the stream lives.
        let open = capture.statement(arrow_sql);
        assert!(!open.closed && open.get("outcome").is_none(), "{open:?}");
        drop(rows);
        let mut rows = conn.execute_query_params(rows_sql, &[]).unwrap();
        rows.next_row().unwrap().unwrap();
        drop(rows);
        let mut batches = conn.query_arrow(batch_sql).unwrap();
        batches.next().unwrap().unwrap();
        drop(batches);
        // The connection settles the dropped results and goes on.
        assert_eq!(
            conn.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(),
            300_000
        );
    });
    for (sql, call) in [
        (arrow_sql, "execute_query"),
        (rows_sql, "execute_query_params"),
        (batch_sql, "query_arrow"),
    ] {
        let span = capture.statement(sql);
        assert_eq!(span.field("hyperdb.call"), call, "{span:?}");
        assert_eq!(span.field("outcome"), "abandoned", "{span:?}");
        let rows = span.num("rows");
        assert!((1.0..300_000.0).contains(&rows), "{span:?}");
        assert!(span.num("bytes") > 0.0, "{span:?}");
        assert!(span.closed, "{span:?}");
    }
}

/// Reading a result to its end through `query_arrow` and
/// `query_arrow_ipc`: "ok", the server's row count, the bytes received.
#[test]
fn arrow_streams_record_their_end() {
    let dir = common::temp_dir();
    let mut conn = db_with_rows(&dir, 50_000);
    let capture = Capture::default();
    let ipc_bytes = capture.run(|| {
        let n: usize = conn
            .query_arrow("SELECT x FROM t")
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(n, 50_000);
        conn.query_arrow_ipc("TABLE t")
            .unwrap()
            .map(|c| c.unwrap().len())
            .sum::<usize>()
    });
    assert_ok(&capture.statement("SELECT x FROM t"), "query_arrow", 50_000);
    let ipc = capture.statement("TABLE t");
    assert_ok(&ipc, "query_arrow_ipc", 50_000);
    // Every chunk handed out but the 8-byte end-of-stream marker.
    assert_eq!(ipc.num("bytes"), (ipc_bytes - 8) as f64, "{ipc:?}");
}

const SECRET: &str = "s3cr3t-param-value";

/// Parameter values are never recorded: not in a span, not in an event,
/// not in an error's message (hyperd's quotes the value, so a statement
/// with parameters records only its SQLSTATE), whether the statement is
/// SQL text, prepared, or async.
#[test]
fn parameter_values_are_never_recorded() {
    let dir = common::temp_dir();
    let mut conn = db_with_rows(&dir, 10);
    let capture = Capture::default();
    let (concat, cast) = ("SELECT $1 || '!' AS v", "SELECT CAST($1 AS INT) AS n");
    let (server_message, prepared_sql) = capture.run(|| {
        let rows: Vec<String> = conn
            .execute_query_params(concat, &[&SECRET])
            .unwrap()
            .typed::<(String,)>()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(rows, [format!("{SECRET}!")]);
        let err = conn
            .execute_query_params(cast, &[&SECRET])
            .and_then(|mut rows| rows.next().transpose())
            .unwrap_err();
        let stmt = conn.prepare("SELECT x FROM t WHERE x::text <> $1").unwrap();
        assert_eq!(conn.query(&stmt, &[&SECRET]).unwrap().count(), 10);
        (err.to_string(), stmt.sql().to_owned())
    });
    // The server's own message quotes the value: recording it would leak.
    assert!(server_message.contains(SECRET), "{server_message}");
    let ok = capture.statement(concat);
    assert_ok(&ok, "execute_query_params", 1);
    assert_eq!(ok.field("hyperdb.params"), "1");
    let failed = capture.statement(cast);
    assert_eq!(failed.field("outcome"), "error", "{failed:?}");
    assert_eq!(failed.field("sqlstate"), "22P02", "{failed:?}");
    assert!(failed.field("error").contains("not recorded"), "{failed:?}");
    let prepared = capture.statements_for(&prepared_sql);
    assert_eq!(prepared.len(), 2, "prepare, then run: {prepared:?}");
    assert_ok(&prepared[0], "prepare", 0);
    assert_ok(&prepared[1], "query_prepared", 10);
    assert_eq!(prepared[1].field("hyperdb.params"), "1");
    let all = capture.everything();
    assert!(
        all.contains(concat) && all.contains(cast),
        "SQL is recorded"
    );
    assert!(
        !all.contains("s3cr3t"),
        "a parameter value was recorded:\n{all}"
    );
}

/// An error ends the span with the SQLSTATE and the message: a plain
/// query (Arrow route), a command, and a query as `DataRow`s.
#[test]
fn errors_record_sqlstate_and_message() {
    let dir = common::temp_dir();
    let mut conn = common::connect(&dir, "errors.hyper");
    let capture = Capture::default();
    capture.run(|| {
        assert!(conn.execute_query("SELECT * FROM no_such_table").is_err());
        assert!(conn.execute_command("DROP TABLE no_such_table").is_err());
        assert!(conn.execute_query("SHOW no_such_setting").is_err());
        // Division by zero is found while the rows are produced.
        let mut rows = conn
            .execute_query_params("SELECT 1 / (g - 3) FROM generate_series(1, 5) g", &[])
            .unwrap();
        let failed = rows.find_map(|r| r.err()).expect("an error in the stream");
        assert_eq!(failed.sqlstate(), "22012");
    });
    for (sql, call, state) in [
        ("SELECT * FROM no_such_table", "execute_query", "42P01"),
        ("DROP TABLE no_such_table", "execute_command", "42P01"),
        ("SHOW no_such_setting", "execute_query", "42601"),
        (
            "SELECT 1 / (g - 3) FROM generate_series(1, 5) g",
            "execute_query_params",
            "22012",
        ),
    ] {
        let span = capture.statement(sql);
        assert_eq!(span.field("hyperdb.call"), call, "{span:?}");
        assert_eq!(span.field("outcome"), "error", "{span:?}");
        assert_eq!(span.field("sqlstate"), state, "{span:?}");
        assert_eq!(span.field("otel.status_code"), "ERROR", "{span:?}");
        assert!(!span.field("error").is_empty(), "{span:?}");
        assert!(span.closed, "{span:?}");
    }
    let missing = capture.statement("SELECT * FROM no_such_table");
    assert!(
        missing.field("error").contains("no_such_table"),
        "{missing:?}"
    );
}

/// An insert is one span: its COPY statement, the rows stored and the
/// bytes sent; a dropped inserter's span is "abandoned", a refused one's
/// an error. The catalog check it runs first is a statement of its own.
#[test]
fn inserts_record_rows_and_bytes_sent() {
    let dir = common::temp_dir();
    let table = TableDefinition::new("ins")
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Text);
    let mut conn = common::db_with_table(&dir, "insert.hyper", &table);
    let capture = Capture::default();
    capture.run(|| {
        let mut ins = Inserter::new(&mut conn, &table).unwrap();
        for id in 0..1000 {
            ins.add_row(&[&id, &Some(format!("name {id}"))]).unwrap();
        }
        assert_eq!(ins.execute().unwrap(), 1000);
        let mut ins = Inserter::new(&mut conn, &table).unwrap();
        ins.add_row(&[&1, &None::<&str>]).unwrap();
        drop(ins);
        let wrong = TableDefinition::new("ins").with_column("id", SqlType::BigInt);
        assert!(Inserter::new(&mut conn, &wrong).is_err());
        let missing = TableDefinition::new("nope").with_column("id", SqlType::Int);
        assert!(Inserter::new(&mut conn, &missing).is_err());
        let schema = std::sync::Arc::new(hyperdb_api::arrow::arrow_schema(&table).unwrap());
        let batch = hyperdb_api::arrow_array::RecordBatch::try_new(
            schema,
            vec![
                std::sync::Arc::new(hyperdb_api::arrow_array::Int32Array::from(vec![1, 2, 3])),
                std::sync::Arc::new(hyperdb_api::arrow_array::StringArray::from(vec![
                    Some("a"),
                    None,
                    Some("c"),
                ])),
            ],
        )
        .unwrap();
        let mut ins = ArrowInserter::new(&mut conn, &table).unwrap();
        ins.insert_batch(&batch).unwrap();
        assert_eq!(ins.finish().unwrap(), 3);
    });
    let inserts: Vec<SpanRec> = capture
        .statements()
        .into_iter()
        .filter(|s| s.get("hyperdb.call") == Some("insert"))
        .collect();
    assert_eq!(inserts.len(), 5, "{inserts:?}");
    let (done, dropped, refused, missing, arrow) = (
        &inserts[0],
        &inserts[1],
        &inserts[2],
        &inserts[3],
        &inserts[4],
    );
    assert_eq!(missing.field("sqlstate"), "42P01", "{missing:?}");
    assert!(done.field("db.statement").starts_with("COPY "), "{done:?}");
    assert_ok(done, "insert", 1000);
    // Each row is at least its 4-byte id and "name N".
    assert!(done.num("bytes") > 1000.0 * 10.0, "{done:?}");
    assert_eq!(dropped.field("outcome"), "abandoned", "{dropped:?}");
    assert_eq!(refused.field("outcome"), "error", "{refused:?}");
    assert_eq!(refused.field("sqlstate"), "42804", "{refused:?}");
    assert_ok(arrow, "insert", 3);
    assert!(
        arrow.field("db.statement").contains("ARROWSTREAM"),
        "{arrow:?}"
    );
    assert!(arrow.num("bytes") > 0.0, "{arrow:?}");
    // Every insert checked its table first, in a statement of its own that
    // records how it ended (the missing table's, its error); but for the
    // second, which repeats the first (committed, nothing run between):
    // hyperd's own check of its Arrow stream stands in (`copy_tx.rs`).
    let lookups: Vec<SpanRec> = capture
        .statements()
        .into_iter()
        .filter(|s| s.get("hyperdb.call") == Some("catalog"))
        .collect();
    assert_eq!(lookups.len(), 4, "{lookups:?}");
    let failed: Vec<&SpanRec> = lookups
        .iter()
        .filter(|s| s.field("outcome") != "ok")
        .collect();
    assert_eq!(failed.len(), 1, "{lookups:?}");
    assert_eq!(failed[0].field("outcome"), "error", "{failed:?}");
    assert_eq!(failed[0].field("sqlstate"), "42P01", "{failed:?}");
}

/// The async connection: the same spans, ended by the stream.
#[tokio::test]
async fn async_statements_are_traced() {
    let dir = common::temp_dir();
    let mut conn = common::connect_async(&dir, "async.hyper").await;
    let capture = Capture::default();
    let guard = capture.install();
    conn.execute_command("CREATE TABLE a (x INT)")
        .await
        .unwrap();
    conn.execute_command("INSERT INTO a SELECT g FROM generate_series(1, 2500) g")
        .await
        .unwrap();
    let mut rows = conn.execute_query("SELECT x FROM a").await.unwrap();
    let mut n = 0;
    while let Some(row) = rows.next_row().await {
        row.unwrap();
        n += 1;
    }
    assert_eq!(n, 2500);
    let mut rows = conn
        .execute_query_params("SELECT x FROM a WHERE x > $1", &[&2000i32])
        .await
        .unwrap();
    while let Some(row) = rows.next().await {
        row.unwrap();
    }
    drop(rows);
    // A value the parameter's inferred type (INT) refuses: an error.
    assert!(conn
        .execute_query_params("SELECT x FROM a WHERE x > $1", &[&SECRET])
        .await
        .is_err());
    let mut batches = conn.query_arrow("SELECT x + 0 FROM a").await.unwrap();
    while let Some(b) = batches.next().await {
        b.unwrap();
    }
    drop(batches);
    assert!(conn.execute_command("SELECT * FROM missing").await.is_err());
    drop(guard);
    assert_ok(
        &capture.statement("INSERT INTO a SELECT g FROM generate_series(1, 2500) g"),
        "execute_command",
        2500,
    );
    assert_ok(&capture.statement("SELECT x FROM a"), "execute_query", 2500);
    let params = capture.statements_for("SELECT x FROM a WHERE x > $1");
    assert_eq!(params.len(), 2, "{params:?}");
    assert_ok(&params[0], "execute_query_params", 500);
    assert_eq!(params[1].field("outcome"), "error", "{params:?}");
    assert_ok(
        &capture.statement("SELECT x + 0 FROM a"),
        "query_arrow",
        2500,
    );
    let failed = capture.statement("SELECT * FROM missing");
    assert_eq!(failed.field("sqlstate"), "42P01", "{failed:?}");
    assert!(!capture.everything().contains("s3cr3t"));
}

fn warnings(capture: &Capture) -> Vec<EventRec> {
    capture
        .events()
        .into_iter()
        .filter(|e| e.level == Level::WARN)
        .collect()
}

/// A statement over the connection's threshold logs exactly one WARN
/// event (in the statement's span, with the SQL and duration); one under
/// it, or on a connection without a threshold, none. A subscriber that
/// wants only warnings gets the warning and no span.
#[test]
fn slow_statements_warn_once() {
    let dir = common::temp_dir();
    let path = dir.path().join("slow.hyper");
    let options = |threshold| {
        ConnectOptions::new(common::server().endpoint().clone())
            .with_database(&path, CreateMode::CreateIfNotExists)
            .with_slow_statement_threshold(threshold)
    };
    let mut slow = Connection::connect_with(&options(Some(Duration::from_nanos(1)))).unwrap();
    let mut fast = Connection::connect_with(&options(Some(Duration::from_secs(3600)))).unwrap();
    let mut plain = Connection::connect_with(&options(None)).unwrap();
    assert_eq!(
        options(Some(Duration::from_secs(2))).slow_statement_threshold(),
        Some(Duration::from_secs(2))
    );

    let capture = Capture::default();
    capture.run(|| slow.execute_command("SELECT 1").unwrap());
    let warned = warnings(&capture);
    assert_eq!(warned.len(), 1, "{warned:?}");
    let w = &warned[0];
    assert_eq!(w.fields["message"], "slow statement", "{w:?}");
    assert_eq!(w.fields["db.statement"], "SELECT 1", "{w:?}");
    assert_eq!(w.fields["outcome"], "ok", "{w:?}");
    assert!(
        w.fields["duration_ms"].parse::<f64>().unwrap() > 0.0,
        "{w:?}"
    );
    assert_eq!(w.fields["threshold_ms"], "0.000001", "{w:?}");
    assert_eq!(w.parent, Some("hyperdb.statement"), "{w:?}");
    assert_eq!(w.target, "hyperdb_api::trace", "{w:?}");

    let capture = Capture::default();
    capture.run(|| {
        fast.execute_command("SELECT 1").unwrap();
        assert_eq!(fast.execute_query("SELECT 2").unwrap().count(), 1);
        plain.execute_command("SELECT 3").unwrap();
    });
    assert_eq!(warnings(&capture).len(), 0, "{:?}", capture.events());
    assert_eq!(capture.statements().len(), 3);

    // Warnings only: the span is never made, the warning still comes, with
    // a streamed result's rows.
    let capture = Capture::default();
    capture.run_filtered(LevelFilter::WARN, || {
        let n = slow
            .execute_query("SELECT g FROM generate_series(1, 1234) g")
            .unwrap()
            .count();
        assert_eq!(n, 1234);
        assert!(slow.execute_command("SELECT * FROM missing").is_err());
    });
    assert!(
        capture.statements().is_empty(),
        "{:?}",
        capture.statements()
    );
    let warned = warnings(&capture);
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert_eq!(warned[0].fields["rows"], "1234", "{warned:?}");
    assert_eq!(warned[0].parent, None, "{warned:?}");
    assert_eq!(warned[1].fields["outcome"], "error", "{warned:?}");
    assert_eq!(warned[1].fields["sqlstate"], "42P01", "{warned:?}");
}

/// SQL over 1,024 bytes is cut at a character boundary, with its length.
#[test]
fn long_sql_is_truncated() {
    let dir = common::temp_dir();
    let mut conn = common::connect(&dir, "long.hyper");
    // 13 bytes, then 2-byte characters: byte 1024 is inside one.
    let sql = format!("SELECT 1  /* {} */", "é".repeat(2000));
    let capture = Capture::default();
    capture.run(|| conn.execute_command(&sql).unwrap());
    let spans = capture.statements();
    assert_eq!(spans.len(), 1);
    let recorded = spans[0].field("db.statement");
    let tail = format!("… ({} bytes)", sql.len());
    let kept = recorded.strip_suffix(&tail).expect("cut with its length");
    assert_eq!(kept.len(), 1023, "cut before the character at byte 1023");
    assert!(sql.starts_with(kept));
    assert!(!recorded.contains("*/"));
}

/// Connect spans name the endpoint, user and database; no password
/// appears anywhere: not while hyperd starts with one, not on connect,
/// not when it is wrong, not in statements.
#[test]
fn passwords_are_never_recorded() {
    const PASSWORD: &str = "tr4ce-pa55word";
    const WRONG: &str = "wr0ng-pa55word";
    let dir = common::temp_dir();
    let path = dir.path().join("pw.hyper");
    let capture = Capture::default();
    let (endpoint, wrong) = capture.run(|| {
        let hyper =
            HyperProcess::new(HyperProcessOptions::default().with_password(PASSWORD)).unwrap();
        let options = ConnectOptions::new(hyper.endpoint().clone())
            .with_password(PASSWORD)
            .with_database(&path, CreateMode::CreateIfNotExists);
        let mut conn = Connection::connect_with(&options).unwrap();
        assert_eq!(conn.execute_command("SELECT 1").unwrap(), 1);
        let wrong = Connection::connect_with(
            &ConnectOptions::new(hyper.endpoint().clone()).with_password(WRONG),
        )
        .unwrap_err();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut conn = AsyncConnection::connect_with(&options).await.unwrap();
            conn.execute_command("SELECT 2").await.unwrap();
        });
        (hyper.endpoint().to_string(), wrong)
    });
    let connects = capture.spans("hyperdb.connect");
    assert_eq!(connects.len(), 3, "{connects:?}");
    for c in [&connects[0], &connects[2]] {
        assert_eq!(c.field("outcome"), "ok", "{c:?}");
        assert_eq!(c.field("server.address"), endpoint, "{c:?}");
        assert_eq!(c.field("db.name"), path.to_str().unwrap(), "{c:?}");
        assert!(c.get("db.user").is_some(), "{c:?}");
        assert!(c.closed, "{c:?}");
    }
    assert_eq!(connects[1].field("outcome"), "error", "{connects:?}");
    assert_eq!(
        connects[1].field("sqlstate"),
        wrong.sqlstate(),
        "{connects:?}"
    );
    assert_eq!(capture.statements().len(), 2);
    let all = capture.everything();
    assert!(all.contains("hyperdb.connect"), "{all}");
    assert!(
        !all.contains(PASSWORD),
        "the password was recorded:
{all}"
    );
    assert!(
        !all.contains(WRONG),
        "the wrong password was recorded:
{all}"
    );
}

/// gRPC queries: the same span, its bytes the Arrow IPC received; with
/// parameters, none of their values.
#[cfg(feature = "grpc")]
#[test]
fn grpc_queries_are_traced() {
    use hyperdb_api::{GrpcConnectOptions, GrpcConnection};
    let endpoint = crate::grpc::server().grpc_endpoint().unwrap();
    let capture = Capture::default();
    let (arrow_sql, params_sql, missing) = (
        "SELECT g FROM generate_series(1, 20000) g /* tracing */",
        "SELECT $1 || '?' AS s /* tracing */",
        "SELECT * FROM no_such_table_tracing",
    );
    capture.run(|| {
        let options = GrpcConnectOptions::from_endpoint(endpoint)
            .unwrap()
            .with_slow_statement_threshold(Some(Duration::from_nanos(1)));
        let conn = GrpcConnection::connect_with(&options).unwrap();
        let n: usize = conn
            .query_arrow(arrow_sql)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(n, 20000);
        assert_eq!(
            conn.execute_query_params(params_sql, &[&SECRET])
                .unwrap()
                .count(),
            1
        );
        assert!(conn.query_arrow(missing).is_err());
    });
    let arrow = capture.statement(arrow_sql);
    assert_ok(&arrow, "grpc_query_arrow", 20000);
    assert!(arrow.num("bytes") >= 20000.0 * 4.0, "{arrow:?}");
    let params = capture.statement(params_sql);
    assert_ok(&params, "grpc_execute_query", 1);
    assert_eq!(params.field("hyperdb.params"), "1");
    let failed = capture.statement(missing);
    assert_eq!(failed.field("outcome"), "error", "{failed:?}");
    assert_eq!(failed.field("sqlstate"), "42P01", "{failed:?}");
    assert_eq!(warnings(&capture).len(), 3, "{:?}", capture.events());
    assert!(!capture.everything().contains("s3cr3t"));
}

/// The binding streams (`SharedConnection`): each read is one span held by
/// the stream's task, on hyperd's Arrow route and on the `DataRow` route
/// a parameter takes; no parameter value recorded.
#[tokio::test]
async fn shared_streams_are_traced() {
    use hyperdb_api::{SharedConnection, Value};
    let capture = Capture::default();
    let guard = capture.install();
    let options = ConnectOptions::new(common::server().endpoint().clone());
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    let arrow_sql = "SELECT g FROM generate_series(1, 30000) g";
    let params_sql = "SELECT g, $1 AS s FROM generate_series(1, 700) g";
    let mut batches = conn.query_arrow(arrow_sql, vec![]).await.unwrap();
    let mut n = 0;
    while let Some(b) = batches.next().await {
        n += b.unwrap().num_rows();
    }
    assert_eq!(n, 30000);
    let mut chunks = conn
        .query_arrow_ipc(params_sql, vec![Value::Text(SECRET.to_owned())])
        .await
        .unwrap();
    let mut bytes = 0;
    while let Some(c) = chunks.next().await {
        bytes += c.unwrap().len();
    }
    assert!(bytes > 0);
    conn.close().await.unwrap();
    drop(guard);
    assert_ok(&capture.statement(arrow_sql), "query_arrow", 30000);
    let params = capture.statement(params_sql);
    assert_ok(&params, "query_arrow_ipc", 700);
    assert_eq!(params.field("hyperdb.params"), "1");
    assert!(params.num("bytes") > 700.0 * 4.0, "{params:?}");
    assert!(!capture.everything().contains("s3cr3t"));
}
