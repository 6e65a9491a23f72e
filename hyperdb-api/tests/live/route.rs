//! The read route of plain queries (`execute_query`, `query_as`,
//! `query_scalar`, the async twins, `SharedConnection::query_arrow`): a
//! statement's first run is Arrow; once a run has shown a small result of
//! a query that takes hyperd a while, later runs take `DataRow`s, while a
//! large result stays Arrow. Values, types, schemas and errors are the same
//! whichever route a run took.
//!
//! Nothing here is timed. The choices asserted are those that the results'
//! sizes decide on any machine: a result of a few values goes as rows
//! however quick its query (a simple `Query` costs hyperd less than a
//! COPY), and a 2M-row scan's first batch comes far sooner than the 0.8 s
//! that would send it as rows.

use arrow_array::RecordBatch;
use hyperdb_api::{AsyncConnection, Connection, ReadRoute, Rows, SharedConnection};

use crate::common::{connect, connect_async, server, temp_dir, types_and_raw, Raw};

const BIG: i64 = 2_000_000;
/// 10 rows of 3 columns from all of `big`.
const AGG: &str = "SELECT g, count(*) AS n, sum(v) AS s FROM big GROUP BY g ORDER BY g";
/// Every row of `big`.
const SCAN: &str = "SELECT id, g FROM big";

/// `big` (2M rows, made server-side) and `mixed` (20k rows of text, DATE,
/// TIMESTAMP, NUMERIC, BOOL, with NULLs) and `dim` (100 rows).
fn make_tables(c: &mut Connection) {
    for sql in [
        "CREATE TABLE big (id INT NOT NULL, g INT NOT NULL, v DOUBLE PRECISION)".to_owned(),
        format!(
            "INSERT INTO big SELECT i, i % 10, i * 0.5 FROM generate_series(0, {}) i",
            BIG - 1
        ),
        "CREATE TABLE mixed (id INT NOT NULL, name TEXT, city TEXT, born DATE, seen TIMESTAMP, \
         amount NUMERIC(18,2), price DOUBLE PRECISION, active BOOL, k INT NOT NULL)"
            .to_owned(),
        "INSERT INTO mixed SELECT i, 'customer ' || i, \
         CASE WHEN i % 5 = 0 THEN NULL ELSE 'city ' || (i % 97) END, \
         DATE '1950-01-01' + (i % 20000), TIMESTAMP '2020-01-01 00:00:00' + i * INTERVAL '1 second', \
         (i % 100000)::NUMERIC(18,2) / 100, i * 0.01, \
         CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END, i % 100 \
         FROM generate_series(0, 19999) i"
            .to_owned(),
        "CREATE TABLE dim (k INT NOT NULL, label TEXT NOT NULL)".to_owned(),
        "INSERT INTO dim SELECT i, 'item ' || i FROM generate_series(0, 99) i".to_owned(),
    ] {
        c.execute_command(&sql).unwrap();
    }
}

/// The route `rows` took and its whole result.
fn read(rows: Rows<'_>) -> (ReadRoute, Raw) {
    (rows.read_route(), types_and_raw(rows))
}

/// The route and row count of a result read to its end.
fn count(rows: Rows<'_>) -> (ReadRoute, usize) {
    let route = rows.read_route();
    let mut n = 0;
    for row in rows {
        row.unwrap();
        n += 1;
    }
    (route, n)
}

#[test]
fn small_results_move_to_rows_large_ones_stay_arrow() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route.hyper");
    make_tables(&mut c);
    let (first, want) = read(c.execute_query(AGG).unwrap());
    assert_eq!(first, ReadRoute::Arrow, "a statement's first run");
    assert_eq!(want.1.len(), 10);
    for run in 2..=4 {
        let (route, got) = read(c.execute_query(AGG).unwrap());
        assert_eq!(route, ReadRoute::DataRows, "run {run} of a 10-row result");
        assert_eq!(got, want, "run {run}: same types and values");
    }
    for run in 1..=3 {
        let (route, rows) = count(c.execute_query(SCAN).unwrap());
        assert_eq!(route, ReadRoute::Arrow, "run {run} of a 2M-row scan");
        assert_eq!(rows, BIG as usize);
    }
    c.close().unwrap();
}

/// Comments do not change the route or the result: a tagged scan
/// (`/* job */ SELECT ...`, `-- note` lines first) goes as Arrow as the
/// bare one does (it went as rows), and a query ending in a `-- note`
/// reads (its Arrow run failed with 42601: the note commented out the
/// COPY's closing parenthesis), through every read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_around_a_query_keep_its_route_and_result() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route_comments.hyper");
    make_tables(&mut c);
    for sql in [
        format!("/* job=nightly /* not nested */ {SCAN}"),
        format!("-- a note\n-- another\n{SCAN}"),
        format!("{SCAN} -- a note at the end"),
        format!("{SCAN} /* at the end */"),
    ] {
        let (route, rows) = count(c.execute_query(&sql).unwrap());
        assert_eq!((route, rows), (ReadRoute::Arrow, BIG as usize), "{sql}");
        let batches: usize = c
            .query_arrow(&sql)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(batches, BIG as usize, "{sql}");
        let n: i64 = c
            .query_scalar(&format!("SELECT count(*) FROM ({sql}\n) t -- counted"))
            .unwrap();
        assert_eq!(n, BIG, "{sql}");
    }
    drop(c);
    let c: AsyncConnection = connect_async(&dir, "route_comments.hyper").await;
    let shared = SharedConnection::new(c);
    let sql = format!("/* tag */ {SCAN} -- note");
    let mut batches = shared.query_arrow(&sql, Vec::new()).await.unwrap();
    assert_eq!(batches.read_route(), Some(ReadRoute::Arrow));
    let mut n = 0;
    while let Some(b) = batches.next().await {
        n += b.unwrap().num_rows();
    }
    assert_eq!(n, BIG as usize);
}

/// A result dropped before its end tells nothing: the next run is Arrow
/// again. Read to its end, it moves the statement.
#[test]
fn unfinished_results_teach_nothing() {
    let dir = temp_dir();
    let mut c = connect(&dir, "unfinished.hyper");
    make_tables(&mut c);
    for _ in 0..2 {
        let mut rows = c.execute_query(AGG).unwrap();
        assert_eq!(rows.read_route(), ReadRoute::Arrow);
        assert!(rows.next().unwrap().is_ok());
    }
    count(c.execute_query(AGG).unwrap());
    assert_eq!(
        c.execute_query(AGG).unwrap().read_route(),
        ReadRoute::DataRows
    );
    // A new connection starts with nothing known.
    let mut other = connect(&dir, "unfinished.hyper");
    assert_eq!(
        other.execute_query(AGG).unwrap().read_route(),
        ReadRoute::Arrow
    );
}

/// `query_scalar` reads its result to the end, and `query_as` is
/// `execute_query`: both route like it, and read the same either way.
#[test]
fn query_scalar_and_query_as_route_too() {
    let dir = temp_dir();
    let mut c = connect(&dir, "scalar.hyper");
    make_tables(&mut c);
    let sql = "SELECT count(*) FROM big WHERE g = 3";
    let first: i64 = c.query_scalar(sql).unwrap();
    let second: i64 = c.query_scalar(sql).unwrap();
    assert_eq!((first, second), (BIG / 10, BIG / 10));
    assert_eq!(
        c.execute_query(sql).unwrap().read_route(),
        ReadRoute::DataRows,
        "the scalar's runs were read to their end"
    );
    let typed = |c: &mut Connection| {
        let rows = c.query_as::<(i32, i64, Option<f64>)>(AGG).unwrap();
        let route = rows.read_route();
        (route, rows.map(Result::unwrap).collect::<Vec<_>>())
    };
    let (r1, a) = typed(&mut c);
    let (r2, b) = typed(&mut c);
    assert_eq!((r1, r2), (ReadRoute::Arrow, ReadRoute::DataRows));
    assert_eq!(a, b);
    assert_eq!((a.len(), a[3].0, a[3].1), (10, 3, BIG / 10));
}

/// `query_scalar` of a result of many rows: the first value, the rest
/// read and dropped, the connection free after it, on both routes, sync
/// and async. It spun for ever on any result of two rows or more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_scalar_of_many_rows_gives_the_first() {
    let dir = temp_dir();
    let mut c = connect(&dir, "scalar_many.hyper");
    make_tables(&mut c);
    let two = "SELECT g FROM generate_series(7, 8) g ORDER BY g";
    let many = "SELECT id FROM big ORDER BY id";
    for run in 0..3 {
        assert_eq!(c.query_scalar::<i64>(two).unwrap(), 7, "run {run}");
        assert_eq!(c.query_scalar::<i32>(many).unwrap(), 0, "run {run}");
        assert_eq!(c.query_scalar::<i32>("SELECT 5").unwrap(), 5);
    }
    drop(c);
    let mut c: AsyncConnection = connect_async(&dir, "scalar_many.hyper").await;
    for run in 0..3 {
        assert_eq!(c.query_scalar::<i64>(two).await.unwrap(), 7, "run {run}");
        assert_eq!(c.query_scalar::<i32>(many).await.unwrap(), 0, "run {run}");
        assert_eq!(c.query_scalar::<i32>("SELECT 5").await.unwrap(), 5);
    }
}

/// The async connection routes the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_queries_route_the_same_way() {
    let dir = temp_dir();
    let mut c = connect(&dir, "async.hyper");
    make_tables(&mut c);
    c.close().unwrap();
    let mut a: AsyncConnection = connect_async(&dir, "async.hyper").await;
    let mut runs = Vec::new();
    for _ in 0..3 {
        let mut rows = a.execute_query(AGG).await.unwrap();
        let route = rows.read_route();
        let mut values = Vec::new();
        while let Some(row) = rows.next().await {
            let row = row.unwrap();
            values.push((
                row.try_get::<i32>(0).unwrap(),
                row.try_get::<i64>(1).unwrap(),
                row.try_get::<Option<f64>>(2).unwrap(),
            ));
        }
        runs.push((route, values));
    }
    let routes: Vec<_> = runs.iter().map(|r| r.0).collect();
    assert_eq!(
        routes,
        [ReadRoute::Arrow, ReadRoute::DataRows, ReadRoute::DataRows]
    );
    assert!(runs.iter().all(|r| r.1 == runs[0].1 && r.1.len() == 10));
    let scalar: i64 = a.query_scalar("SELECT count(*) FROM big").await.unwrap();
    assert_eq!(scalar, BIG);
    let mut rows = a.execute_query(SCAN).await.unwrap();
    assert_eq!(rows.read_route(), ReadRoute::Arrow);
    let mut n = 0;
    while let Some(row) = rows.next_row().await {
        row.unwrap();
        n += 1;
    }
    assert_eq!(n, BIG);
    drop(rows);
    assert_eq!(
        a.execute_query(SCAN).await.unwrap().read_route(),
        ReadRoute::Arrow
    );
    a.close().await.unwrap();
}

/// Shared result streams (the Node package's `query`) route the same way,
/// and the `DataRow` route's batches carry the schema the Arrow run had,
/// nullability and field metadata included: a NOT NULL column stays
/// non-nullable whichever route a run took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_streams_route_and_keep_the_arrow_schema() {
    let dir = temp_dir();
    let mut c = connect(&dir, "shared.hyper");
    make_tables(&mut c);
    c.close().unwrap();
    let options = hyperdb_api::ConnectOptions::new(server().endpoint().clone()).with_database(
        dir.path().join("shared.hyper"),
        hyperdb_api::CreateMode::DoNotCreate,
    );
    let s = SharedConnection::connect_with(&options).await.unwrap();
    let batches = |mut stream: hyperdb_api::ResultStream<RecordBatch>| async move {
        let mut out = Vec::new();
        while let Some(b) = stream.next().await {
            out.push(b.unwrap());
        }
        out
    };
    let mut runs = Vec::new();
    for _ in 0..3 {
        let stream = s.query_arrow(AGG, vec![]).await.unwrap();
        let (route, schema) = (stream.read_route(), stream.schema().clone());
        let got = batches(stream).await;
        let got = arrow_select::concat::concat_batches(&schema, &got).unwrap();
        runs.push((route, schema, got));
    }
    let routes: Vec<_> = runs.iter().map(|r| r.0).collect();
    assert_eq!(
        routes,
        [
            Some(ReadRoute::Arrow),
            Some(ReadRoute::DataRows),
            Some(ReadRoute::DataRows)
        ]
    );
    let (_, schema, want) = &runs[0];
    assert!(
        schema.fields().iter().any(|f| !f.is_nullable()),
        "hyperd's Arrow stream marks count(*) NOT NULL: {schema:?}"
    );
    for (_, s2, got) in &runs[1..] {
        assert_eq!(s2, schema, "the DataRow route's schema is the Arrow run's");
        assert_eq!(got, want);
    }
    // Raw IPC: its own statement entry, the same bytes' batches.
    let sql = "SELECT g, max(id) AS top FROM big GROUP BY g ORDER BY g";
    let mut decoded = Vec::new();
    for _ in 0..2 {
        let mut stream = s.query_arrow_ipc(sql, vec![]).await.unwrap();
        let route = stream.read_route();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            bytes.extend_from_slice(&chunk.unwrap());
        }
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        decoded.push((route, batches));
    }
    assert_eq!(decoded[0].0, Some(ReadRoute::Arrow));
    assert_eq!(decoded[1].0, Some(ReadRoute::DataRows));
    let rows = |b: &[RecordBatch]| b.iter().map(RecordBatch::num_rows).sum::<usize>();
    assert_eq!(rows(&decoded[0].1), 10);
    for (a, b) in decoded[0].1.iter().zip(&decoded[1].1) {
        assert_eq!(a.columns(), b.columns());
    }
    s.close().await.unwrap();
}

/// The mix's shapes over text, dates, timestamps, numerics, booleans and
/// NULLs: every run of `execute_query` (the first as Arrow, later ones by
/// the route chosen) reads what `execute_query_params` (`DataRow`s) reads.
#[test]
fn mix_shapes_agree_across_routes() {
    let dir = temp_dir();
    let mut c = connect(&dir, "shapes.hyper");
    make_tables(&mut c);
    for sql in [
        "SELECT 1 AS one",
        "SELECT * FROM mixed WHERE id = 10007",
        "SELECT active, count(*) AS n, sum(amount) AS total, min(born) AS b, max(seen) AS s \
         FROM mixed GROUP BY active ORDER BY active",
        "SELECT city, count(*) AS n, avg(price) AS p FROM mixed GROUP BY city ORDER BY city",
        "SELECT d.k, d.label, count(*) AS n, sum(m.amount) AS total FROM mixed m \
         JOIN dim d ON m.k = d.k GROUP BY d.k, d.label ORDER BY d.k",
        "SELECT id, name, amount FROM mixed ORDER BY amount DESC, id LIMIT 100",
        "SELECT * FROM mixed WHERE id % 100 = 7 ORDER BY id",
        "SELECT * FROM mixed ORDER BY id",
    ] {
        let (first, want) = read(c.execute_query(sql).unwrap());
        assert_eq!(first, ReadRoute::Arrow, "{sql}");
        assert!(!want.1.is_empty(), "{sql}");
        let (route, rows) = read(c.execute_query_params(sql, &[]).unwrap());
        assert_eq!(route, ReadRoute::DataRows);
        assert_eq!(rows, want, "{sql}: DataRows");
        for run in 2..=3 {
            let (_, got) = read(c.execute_query(sql).unwrap());
            assert_eq!(got, want, "{sql}: run {run}");
        }
    }
}

/// Errors read the same on both routes. A statement that ran fine and
/// moved to `DataRow`s fails there as it fails as Arrow, and its failure
/// makes the next run Arrow again.
#[test]
fn errors_read_the_same_on_both_routes() {
    let dir = temp_dir();
    let mut c = connect(&dir, "errors.hyper");
    make_tables(&mut c);
    c.execute_command("CREATE TABLE flag (x INT)").unwrap();
    c.execute_command("INSERT INTO flag VALUES (1), (2)")
        .unwrap();
    let sql = "SELECT g, count(*) / ((SELECT count(*) FROM flag) - 1) AS q FROM big GROUP BY g";
    let (first, _) = read(c.execute_query(sql).unwrap());
    assert_eq!(first, ReadRoute::Arrow);
    assert_eq!(
        c.execute_query(sql).unwrap().read_route(),
        ReadRoute::DataRows
    );
    c.execute_command("DELETE FROM flag WHERE x = 2").unwrap();
    let on_rows = match c.execute_query(sql) {
        Ok(mut rows) => rows.find_map(Result::err).unwrap(),
        Err(e) => e,
    };
    let on_arrow = match c.execute_query(sql) {
        Ok(mut rows) => {
            assert_eq!(
                rows.read_route(),
                ReadRoute::Arrow,
                "forgotten after failing"
            );
            rows.find_map(Result::err).unwrap()
        }
        Err(e) => e,
    };
    assert_eq!(on_rows.sqlstate(), "22012", "{on_rows}");
    assert_eq!(on_arrow.sqlstate(), on_rows.sqlstate());
    assert_eq!(on_arrow.to_string(), on_rows.to_string());
    c.execute_command("INSERT INTO flag VALUES (2)").unwrap();
    assert_eq!(
        c.execute_query(sql).unwrap().read_route(),
        ReadRoute::Arrow,
        "a failed run forgets what the statement's runs showed"
    );
    // A syntax error, with its position, reads the same too.
    let bad = "SELECT g, count(*) FROM big GROUP BY gg";
    let arrow = c.execute_query(bad).unwrap_err();
    let rows = c.execute_query_params(bad, &[]).unwrap_err();
    assert_eq!(arrow.to_string(), rows.to_string());
    assert_eq!(arrow.sqlstate(), rows.sqlstate());
}

/// Runs of one lookup with a new value each time share what they showed:
/// the first goes as Arrow, the next ones as rows (hyperd plans them from
/// its plan cache by their shape), with the values of each.
#[test]
fn lookups_with_new_values_go_as_rows_from_the_second_run() {
    let dir = temp_dir();
    let mut c = connect(&dir, "lookups.hyper");
    make_tables(&mut c);
    for (run, id) in [17, 123_456, 1_999_999, -1].into_iter().enumerate() {
        let sql = format!("SELECT id, g, v FROM big WHERE id = {id}");
        let mut rows = c.execute_query(&sql).unwrap();
        let route = rows.read_route();
        let got: Vec<(i32, i32)> = rows
            .by_ref()
            .map(|r| {
                let r = r.unwrap();
                (r.try_get(0).unwrap(), r.try_get(1).unwrap())
            })
            .collect();
        let want = if id < 0 { vec![] } else { vec![(id, id % 10)] };
        assert_eq!(got, want, "{sql}");
        let expected = if run == 0 {
            ReadRoute::Arrow
        } else {
            ReadRoute::DataRows
        };
        assert_eq!(route, expected, "run {run}: {sql}");
    }
    // A text literal too; a range is another statement.
    let label = |c: &mut Connection, sql: &str| {
        let rows = c.execute_query(sql).unwrap();
        (rows.read_route(), types_and_raw(rows))
    };
    let (r1, _) = label(&mut c, "SELECT k FROM dim WHERE label = 'item 3'");
    let (r2, v2) = label(&mut c, "SELECT k FROM dim WHERE label = 'item 42'");
    assert_eq!((r1, r2), (ReadRoute::Arrow, ReadRoute::DataRows));
    let (_, want) = label(&mut c, "SELECT 42::INT AS k");
    assert_eq!(v2.1, want.1);
    assert_eq!(
        c.execute_query("SELECT k FROM dim WHERE k < 3")
            .unwrap()
            .read_route(),
        ReadRoute::Arrow
    );
}

/// A query written with a new literal each run goes as rows from its
/// second run on when the results of its shape were small, with the
/// values of each; a shape whose result was large once starts new
/// statements as Arrow again, after reading that one right as rows.
#[test]
fn new_literals_of_small_shapes_go_as_rows() {
    let dir = temp_dir();
    let mut c = connect(&dir, "shapes.hyper");
    make_tables(&mut c);
    for (run, k) in [41, 57, 63, 99].into_iter().enumerate() {
        let sql = format!("SELECT {k} + 1 AS x, 'n{k}' AS n");
        let (route, got) = read(c.execute_query(&sql).unwrap());
        let (_, want) = read(
            c.execute_query_by(
                &format!("SELECT {}::INT AS x, 'n{k}'::TEXT AS n", k + 1),
                ReadRoute::Arrow,
            )
            .unwrap(),
        );
        assert_eq!(got, want, "{sql}");
        let expected = [ReadRoute::Arrow, ReadRoute::DataRows][usize::from(run > 0)];
        assert_eq!(route, expected, "run {run}: {sql}");
    }
    // 10 rows, 20 rows, then 89,990 of the same shape (ids of 5 digits).
    let above = |id: i32| format!("SELECT id FROM big WHERE id > {id} AND id < 100000");
    let runs: Vec<_> = [99_989, 99_979, 10_009, 10_019, 99_969]
        .into_iter()
        .map(|id| count(c.execute_query(&above(id)).unwrap()))
        .collect();
    assert_eq!(
        runs,
        [
            (ReadRoute::Arrow, 10),
            (ReadRoute::DataRows, 20),
            (ReadRoute::DataRows, 89_990),
            (ReadRoute::Arrow, 89_980),
            (ReadRoute::Arrow, 30),
        ]
    );
}

/// Batch readers of one lookup with new values keep the Arrow run's
/// schema, NOT NULL included, on the rows route (hyperd's nullability does
/// not follow a literal's value).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_with_new_values_keep_the_arrow_schema() {
    let dir = temp_dir();
    let path = dir.path().join("nullability.hyper");
    let options = hyperdb_api::ConnectOptions::new(server().endpoint().clone())
        .with_database(&path, hyperdb_api::CreateMode::Create);
    let s = SharedConnection::connect_with(&options).await.unwrap();
    s.execute_command("CREATE TABLE t (a INT, b INT NOT NULL)", &[])
        .await
        .unwrap();
    s.execute_command("INSERT INTO t VALUES (NULL, 1), (2, 2)", &[])
        .await
        .unwrap();
    let mut runs = Vec::new();
    for b in [1, 2] {
        let sql = format!("SELECT a, b FROM t WHERE b = {b}");
        let mut stream = s.query_arrow(&sql, vec![]).await.unwrap();
        let (route, schema) = (stream.read_route(), stream.schema().clone());
        let batch = stream.next().await.unwrap().unwrap();
        assert!(stream.next().await.is_none());
        let nullable: Vec<bool> = schema.fields().iter().map(|f| f.is_nullable()).collect();
        runs.push((
            route,
            nullable,
            batch.column(0).null_count(),
            batch.num_rows(),
        ));
    }
    assert_eq!(
        runs,
        [
            (Some(ReadRoute::Arrow), vec![true, false], 1, 1),
            (Some(ReadRoute::DataRows), vec![true, false], 0, 1)
        ]
    );
    s.close().await.unwrap();
}

/// Every type reads the same from a simple `Query`'s rows (the `DataRow`
/// route of plain statements, HyperBinary by the session's
/// `result_format_code`) as from a bound statement's: NULLs, extremes,
/// NaN and infinities, 38-digit NUMERIC, multi-byte text, BYTEA,
/// GEOGRAPHY, every date and time type.
#[test]
fn every_type_reads_the_same_from_a_simple_query() {
    use crate::insert::{all_types_table, rows, values};
    let dir = temp_dir();
    let mut c = connect(&dir, "types.hyper");
    let table = all_types_table();
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let mut ins = hyperdb_api::Inserter::new(&mut c, &table).unwrap();
    for r in &rows() {
        ins.add_row(&values(r)).unwrap();
    }
    ins.execute().unwrap();
    for sql in [
        "SELECT * FROM all_types ORDER BY id",
        "SELECT 'POINT(1 2)'::GEOGRAPHY AS g, NULL::GEOGRAPHY AS n, \
         CAST(-0.0 AS DOUBLE PRECISION) AS z, 'a'::\"char\" AS ch",
    ] {
        let (_, want) = read(c.execute_query_params(sql, &[]).unwrap());
        assert!(!want.1.is_empty(), "{sql}");
        let (route, got) = read(c.execute_query_by(sql, ReadRoute::DataRows).unwrap());
        assert_eq!(route, ReadRoute::DataRows);
        assert_eq!(got, want, "{sql}");
    }
}

/// The crate's own lookups (the catalog's, an inserter's table check) go
/// as simple queries outside the route book: never as an Arrow COPY, which
/// hyperd plans afresh for each, and teaching the book nothing. So the
/// same text run by the caller is a statement never seen: Arrow first.
#[test]
fn catalog_lookups_stay_out_of_the_route_book() {
    use crate::capture::Capture;
    use hyperdb_api::{types::SqlType, Inserter, TableDefinition};
    let dir = temp_dir();
    let mut c = connect(&dir, "lookups.hyper");
    let table = TableDefinition::new("t").with_not_null_column("id", SqlType::Int);
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let capture = Capture::default();
    capture.run(|| {
        for id in 0..3 {
            assert_eq!(
                c.catalog().get_table_definition("t").unwrap().columns(),
                table.columns()
            );
            let mut ins = Inserter::new(&mut c, &table).unwrap();
            ins.add_row(&[&id]).unwrap();
            ins.execute().unwrap();
        }
    });
    let lookups: Vec<_> = capture
        .statements()
        .into_iter()
        .filter(|s| s.field("hyperdb.call") == "catalog")
        .collect();
    assert_eq!(lookups.len(), 6, "{:?}", capture.statements());
    let mut texts: Vec<&str> = lookups.iter().map(|l| l.field("db.statement")).collect();
    texts.sort_unstable();
    texts.dedup();
    assert!(
        lookups.iter().all(|l| l.field("outcome") == "ok"),
        "{lookups:?}"
    );
    // `get_table_definition`'s, and the inserters' check.
    assert_eq!(texts.len(), 2, "{texts:?}");
    for sql in texts {
        let (route, rows) = count(c.execute_query(sql).unwrap());
        assert_eq!(route, ReadRoute::Arrow, "{sql}: a statement never seen");
        // The check reads the table's schema only (`LIMIT 0`); the
        // catalog's definition has a row per column.
        let columns = if sql.ends_with("LIMIT 0") { 0 } else { 1 };
        assert_eq!(rows, columns, "{sql}");
    }
}

/// A `SELECT` of no columns has rows on every route: `execute_query`'s
/// Arrow run and its row runs, parameters, and `query_arrow`.
#[test]
fn column_less_rows_are_counted_on_every_route() {
    let dir = temp_dir();
    let mut c = connect(&dir, "bare.hyper");
    let sql = "SELECT FROM generate_series(1, 3)";
    let runs: Vec<_> = (0..3)
        .map(|_| count(c.execute_query(sql).unwrap()))
        .collect();
    assert_eq!(
        runs,
        vec![
            (ReadRoute::Arrow, 3),
            (ReadRoute::DataRows, 3),
            (ReadRoute::DataRows, 3)
        ]
    );
    let params = "SELECT FROM generate_series(1, 3) WHERE $1 = 1";
    assert_eq!(
        count(c.execute_query_params(params, &[&1i32]).unwrap()).1,
        3
    );
    let batches: Vec<RecordBatch> = c
        .query_arrow("SELECT FROM generate_series(1, 70000)")
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        70_000
    );
}

/// A NUL byte in the SQL, which no message can carry, is refused before
/// anything is sent with the offset in the caller's text on every route
/// (the Arrow route wraps the text in a COPY, and reported 6 bytes more).
#[test]
fn nul_bytes_are_refused_at_their_offset_on_every_route() {
    let dir = temp_dir();
    let mut c = connect(&dir, "nul.hyper");
    let sql = "SELECT 1\0";
    let errors = [
        c.execute_query(sql).map(drop).unwrap_err(),
        c.execute_query_by(sql, ReadRoute::Arrow)
            .map(drop)
            .unwrap_err(),
        c.execute_query_by(sql, ReadRoute::DataRows)
            .map(drop)
            .unwrap_err(),
        c.execute_query_params(sql, &[]).map(drop).unwrap_err(),
        c.execute_command(sql).unwrap_err(),
        c.query_arrow(sql).map(drop).unwrap_err(),
    ];
    for e in &errors {
        assert!(e.to_string().contains("NUL byte at offset 8"), "{e}");
    }
    assert_eq!(c.query_scalar::<i32>("SELECT 2").unwrap(), 2);
}

/// A statement learnt as a safe Arrow read (no date or time column), then
/// its table made again on this connection with a TIMESTAMP holding
/// `infinity`: inside a transaction it went as Arrow, which hyperd refused
/// (22008), failing the transaction (the caller saw 25P02 and lost its
/// insert). The DDL makes the book forget; the read goes as rows.
#[test]
fn a_table_made_again_is_learnt_afresh_in_a_transaction() {
    let dir = temp_dir();
    let mut c = connect(&dir, "remade_route.hyper");
    c.execute_command("CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 100000) s(g)")
        .unwrap();
    c.execute_command("CREATE TABLE log (x INT)").unwrap();
    for _ in 0..3 {
        assert_eq!(
            count(c.execute_query("SELECT * FROM t").unwrap()).1,
            100_000
        );
    }
    c.execute_command("DROP TABLE t").unwrap();
    c.execute_command("CREATE TABLE t (x TIMESTAMP)").unwrap();
    c.execute_command("INSERT INTO t VALUES ('infinity')")
        .unwrap();
    let mut tx = c.transaction().unwrap();
    tx.execute_command("INSERT INTO log VALUES (1)").unwrap();
    let (route, n) = count(tx.execute_query("SELECT * FROM t").unwrap());
    assert_eq!((route, n), (ReadRoute::DataRows, 1));
    tx.commit().unwrap();
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM log").unwrap(),
        1
    );
}
