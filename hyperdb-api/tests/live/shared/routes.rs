//! Both routes (hyperd's Arrow stream, DataRows gathered into batches)
//! give one schema and the same values; raw IPC decodes to the same batches.

use super::*;

// --- 1. Both routes agree -------------------------------------------------

/// A database holding `all_types` with the inserter tests' four rows: low
/// and high extremes (NaN, infinities, min/max, 28-digit numerics, dates
/// 1066 and 9999), mostly NULL, all NULL.
async fn all_types_db(dir: &tempfile::TempDir) -> SharedConnection {
    let conn = connect_db(dir, "types.hyper").await;
    let table = crate::insert::all_types_table();
    let rows = crate::insert::rows();
    let mut guard = conn.lock().await.unwrap();
    let c = guard.conn();
    c.execute_command(&table.create_table_sql(false).unwrap())
        .await
        .unwrap();
    let mut ins = AsyncInserter::new(c, &table).await.unwrap();
    for r in &rows {
        ins.add_row(&crate::insert::values(r)).await.unwrap();
    }
    assert_eq!(ins.execute().await.unwrap(), rows.len() as u64);
    drop(guard);
    conn
}

/// Every column, a GEOGRAPHY, NUMERIC(38,5) and computed columns.
const EVERY_TYPE: &str = "SELECT *, \
     CASE WHEN id <= 2 THEN CAST('POINT(1 2)' AS TABLEAU.TABGEOGRAPHY) END AS g, \
     n38::numeric(38,5) AS n38_5, id * 2 AS twice, 'lit' AS lit, \
     CAST(NULL AS DATE) AS no_date FROM all_types";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_routes_agree_on_every_type() {
    let dir = temp_dir();
    let conn = all_types_db(&dir).await;
    let arrow = query(&conn, &format!("{EVERY_TYPE} ORDER BY id"), vec![]).await;
    let rows = query(
        &conn,
        &format!("{EVERY_TYPE} WHERE $1::int = 1 ORDER BY id"),
        vec![Value::Int(1)],
    )
    .await;
    // Not a plain query (a leading comment): DataRows without parameters.
    let commented = query(&conn, &format!("-- rows\n{EVERY_TYPE} ORDER BY id"), vec![]).await;
    assert_eq!(arrow.num_rows(), 4);
    assert_same(&rows, &arrow, "DataRow route with a parameter");
    assert_same(&commented, &arrow, "DataRow route without parameters");

    // The table's columns have the schema hyperd's Arrow stream has.
    let table = arrow_schema(&crate::insert::all_types_table()).unwrap();
    let first = Schema::new(rows.schema().fields()[..table.fields().len()].to_vec());
    assert_same_fields(&first, &table, "the table's columns");
    let field = |name: &str| rows.schema().field_with_name(name).unwrap().clone();
    assert_eq!(field("date").data_type(), &DataType::Date64);
    assert_eq!(field("no_date").data_type(), &DataType::Date64);
    assert_eq!(
        field("g").metadata().get("hyper:type").map(String::as_str),
        Some("Geography")
    );
    assert_eq!(field("n38_5").data_type(), &DataType::Decimal128(38, 5));

    // Values, spot-checked (1066-10-14 and 9999-12-31 in days since 1970).
    let date = rows
        .column_by_name("date")
        .unwrap()
        .as_primitive::<arrow_array::types::Date64Type>();
    assert_eq!(date.value(0), -329_893 * DAY_MS, "1066-10-14");
    assert_eq!(date.value(1), 2_932_896 * DAY_MS, "9999-12-31");
    assert!(date.is_null(2) && date.is_null(3));
    let n38 = rows
        .column_by_name("n38")
        .unwrap()
        .as_primitive::<arrow_array::types::Decimal128Type>();
    assert_eq!(n38.value(2), 10i128.pow(38) - 1);
    let r = rows
        .column_by_name("r")
        .unwrap()
        .as_primitive::<arrow_array::types::Float32Type>();
    assert_eq!(r.value(0), f32::NEG_INFINITY);
    assert!(r.value(1).is_nan());
    let t = rows.column_by_name("t").unwrap().as_string::<i32>();
    assert_eq!(t.value(1), "héllo wörld ✓ 🎉 \"quoted\" 'single' \\ back");
    assert_eq!(rows.column_by_name("no_date").unwrap().null_count(), 4);
}

/// A `DataRow` result carries no nullability, so the `DataRow` route
/// marks every field nullable (documented on `SharedConnection::query_arrow`),
/// while hyperd's Arrow stream marks NOT NULL columns (`id`) and non-null
/// expressions non-nullable. Everything else about the fields agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_routes_agree_on_nullability() {
    let dir = temp_dir();
    let conn = all_types_db(&dir).await;
    let arrow = conn
        .query_arrow(&format!("{EVERY_TYPE} ORDER BY id"), vec![])
        .await
        .unwrap();
    let rows = conn
        .query_arrow(
            &format!("{EVERY_TYPE} WHERE $1::int = 1 ORDER BY id"),
            vec![Value::Int(1)],
        )
        .await
        .unwrap();
    let nullable = |s: &SchemaRef| {
        s.fields()
            .iter()
            .map(|f| (f.name().clone(), f.is_nullable()))
            .collect::<Vec<_>>()
    };
    assert!(
        rows.schema().fields().iter().all(|f| f.is_nullable()),
        "the DataRow route cannot know a column is NOT NULL"
    );
    assert!(
        arrow.schema().fields().iter().any(|f| !f.is_nullable()),
        "hyperd's Arrow stream says which columns are NOT NULL"
    );
    let relaxed = |s: &SchemaRef| {
        nullable(s)
            .into_iter()
            .map(|(name, _)| name)
            .zip(s.fields().iter().map(|f| f.data_type().clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(relaxed(rows.schema()), relaxed(arrow.schema()));
}

/// A `DataRow` run takes the nullability of the statement's Arrow run,
/// which may be out of date: the table made again with a nullable column.
/// The NULL is read (its field nullable in the batch), not refused; the
/// read failed, and so did every later run of the statement on the
/// connection. Found by a user-style probe through Node's `queryAll`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_under_an_out_of_date_not_null_is_read_not_refused() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "relax.hyper").await;
    const SQL: &str = "SELECT a FROM relax";
    conn.execute_command("CREATE TABLE relax (a INT NOT NULL)", &[])
        .await
        .unwrap();
    conn.execute_command("INSERT INTO relax VALUES (1)", &[])
        .await
        .unwrap();
    let mut routes = Vec::new();
    for _ in 0..3 {
        let s = conn.query_arrow(SQL, vec![]).await.unwrap();
        routes.push(s.read_route());
        assert_eq!(drain(s).await.unwrap()[0].num_rows(), 1);
    }
    assert!(
        routes.contains(&Some(hyperdb_api::ReadRoute::DataRows)),
        "{routes:?}: a one-row result goes as rows once learnt"
    );
    conn.execute_command("DROP TABLE relax", &[]).await.unwrap();
    conn.execute_command("CREATE TABLE relax (a INT)", &[])
        .await
        .unwrap();
    conn.execute_command("INSERT INTO relax VALUES (NULL), (2)", &[])
        .await
        .unwrap();
    for run in 0..3 {
        let s = conn
            .query_arrow(&format!("{SQL} ORDER BY a"), vec![])
            .await
            .unwrap();
        drop(s);
        let mut s = conn.query_arrow(SQL, vec![]).await.unwrap();
        let route = s.read_route();
        // Not `drain`: a batch's field may be nullable where the stream's
        // (announced before the NULL came) is not.
        let mut batches = Vec::new();
        while let Some(b) = s.next().await {
            batches.push(b.unwrap_or_else(|e| panic!("run {run} on {route:?}: {e}")));
        }
        let nulls: usize = batches.iter().map(|b| b.column(0).null_count()).sum();
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!((rows, nulls), (2, 1), "run {run} on {route:?}");
        assert!(batches.iter().all(|b| b.schema().field(0).is_nullable()));
    }
}

/// More values, multi-batch results with NULLs: the `DataRow` route
/// without parameters (a leading comment makes a query not plain) gives
/// what the Arrow route gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_values_agree_across_routes() {
    let conn = connect().await;
    for sql in [
        "SELECT 'ab'::char(5) AS c5, 'x'::char(1) AS c1, 'abc'::varchar(4) AS v, ''::text AS e",
        "SELECT NULL::int AS n, 1.5::numeric(10,3) AS d, (-0.5)::numeric(38,6) AS d38",
        // `'infinity'::timestamp` has no Arrow form: refused on both routes
        // (`timestamps_past_arrow_are_refused_as_arrow_and_wrapped_for_rows`).
        "SELECT '-infinity'::timestamp AS ninf, \
         'NaN'::double precision AS nan, 'infinity'::date AS dinf",
        "SELECT '{\"a\":1}'::json AS j, 7::oid AS o, 'x'::char(1) AS c",
        "WITH t(x) AS (VALUES (1), (2)) SELECT x, x > 1 AS big, x / 2.0 AS q, \
         x::double precision AS f FROM t ORDER BY x",
        "SELECT i, i::text AS s, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 1.5 END AS n, \
         CASE WHEN i % 5 = 0 THEN NULL ELSE DATE '2000-01-01' + i END AS d \
         FROM generate_series(1, 30000) g(i) ORDER BY i",
    ] {
        let arrow = query(&conn, sql, vec![]).await;
        let rows = query(&conn, &format!("-- rows\n{sql}"), vec![]).await;
        assert!(arrow.num_rows() > 0, "{sql}");
        assert_same(&rows, &arrow, sql);
    }
}

/// A value hyperd cannot send as Arrow (`TIME '24:00:00'`): the Arrow
/// route falls back to `DataRow`s, for batches and for IPC bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_arrow_cannot_express_fall_back_to_rows() {
    let conn = connect().await;
    for (sql, params) in [
        ("SELECT TIME '24:00:00' AS t, 1 AS i", vec![]),
        ("SELECT TIME '24:00:00' AS t, $1 AS i", vec![Value::Int(1)]),
    ] {
        let b = query(&conn, sql, params.clone()).await;
        assert_eq!(b.num_rows(), 1, "{sql}");
        let t = b.column(0).as_primitive::<Time64MicrosecondType>();
        assert_eq!(t.value(0), 86_400_000_000, "{sql}");
        assert_eq!(b.column(1).as_primitive::<Int32Type>().value(0), 1);
        let (schema, bytes) = query_ipc(&conn, sql, params).await;
        assert_eq!(schema, b.schema(), "{sql}");
        let (_, decoded) = decode_ipc(&bytes);
        assert_same(&concat(&schema, &decoded), &b, sql);
    }
    assert_eq!(scalar(&conn, "SELECT 12").await, 12);
}

/// A result may repeat a column name (each side's `id` in a join), which
/// a table may not: both routes, batches and IPC, keep both columns under
/// that name. The row route used to fail ("column \"id\" appears twice").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_column_names_on_both_routes() {
    let conn = connect().await;
    let sql = "SELECT a.id, b.id, a.v FROM (VALUES (1, 'x')) a(id, v) \
               JOIN (VALUES (1), (2)) b(id) ON b.id >= a.id ORDER BY b.id";
    let arrow = query(&conn, sql, vec![]).await;
    let names: Vec<_> = arrow
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["id", "id", "v"]);
    for (sql, params) in [
        (format!("-- rows\n{sql}"), vec![]),
        (
            sql.replace("ON b.id >= a.id", "ON b.id >= a.id + $1"),
            vec![Value::Int(0)],
        ),
    ] {
        let rows = query(&conn, &sql, params.clone()).await;
        assert_same(&rows, &arrow, &sql);
        let (schema, bytes) = query_ipc(&conn, &sql, params).await;
        assert_eq!(schema, rows.schema(), "{sql}");
        let (_, decoded) = decode_ipc(&bytes);
        assert_same(&concat(&schema, &decoded), &rows, &sql);
    }
    let b = arrow.column(1).as_primitive::<Int32Type>();
    assert_eq!((b.value(0), b.value(1)), (1, 2));
}

/// Timestamps past Arrow's `i64` microseconds since 1970 (hyperd's
/// `infinity` among them): `query_arrow` and the IPC bytes refuse them with
/// hyperd's own 22008 on either route, naming the column and the value,
/// and the connection goes on; `query_row_batches` carries them wrapped,
/// 2^64 below the true value, and the last one Arrow holds as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_past_arrow_are_refused_as_arrow_and_wrapped_for_rows() {
    const LAST_ARROW: &str = "294247-01-10 04:00:54.775807";
    // Microseconds since 1970 of hyperd's greatest timestamp and of the
    // first one past `i64::MAX`.
    let infinity: i128 = 9_224_318_015_999_999_999;
    let past: i128 = i128::from(i64::MAX) + 1;
    let conn = connect().await;
    for ty in ["TIMESTAMP", "TIMESTAMPTZ"] {
        for (params, cond) in [(vec![], ""), (vec![Value::Int(1)], " WHERE $1 = 1")] {
            let sql = format!(
                "SELECT 'infinity'::{ty} AS inf, {ty} '294247-01-10 04:00:54.775808' AS past, \
                 {ty} '{LAST_ARROW}' AS last, 1 AS i{cond}"
            );
            let err = match conn.query_arrow(&sql, params.clone()).await {
                Ok(s) => drain(s).await.unwrap_err(),
                Err(e) => e,
            };
            assert_eq!(err.sqlstate(), "22008", "{sql}: {err}");
            let text = err.to_string();
            assert!(
                text.contains("\"inf\"") && text.contains("294276-12-31"),
                "{text}"
            );
            let err = match conn.query_arrow_ipc(&sql, params.clone()).await {
                Ok(mut s) => loop {
                    match s.next().await {
                        Some(Ok(_)) => {}
                        Some(Err(e)) => break e,
                        None => panic!("{sql}: IPC bytes carried a timestamp past Arrow"),
                    }
                },
                Err(e) => e,
            };
            assert_eq!(err.sqlstate(), "22008", "{sql}: {err}");
            assert_eq!(scalar(&conn, "SELECT 12").await, 12, "usable after {sql}");

            let s = conn
                .place()
                .query_row_batches(&sql, params, None)
                .await
                .unwrap();
            let schema = s.schema().clone();
            let b = concat(&schema, &drain(s).await.unwrap());
            assert_eq!(b.num_rows(), 1, "{sql}");
            let micros = |c: usize| {
                let v = b
                    .column(c)
                    .as_primitive::<TimestampMicrosecondType>()
                    .value(0);
                let least = -210_863_520_000_000_000_i64;
                i128::from(v) + if v < least { 1_i128 << 64 } else { 0 }
            };
            assert_eq!(micros(0), infinity, "{sql}");
            assert_eq!(micros(1), past, "{sql}");
            assert_eq!(micros(2), i128::from(i64::MAX), "{sql}");
        }
    }
    assert_eq!(scalar(&conn, "SELECT 12").await, 12);
}

/// A statement without a result (CREATE
/// TABLE, INSERT) goes to the `DataRow` route, runs, and is then reported
/// as failed ("table \"result\" has no columns"): a caller retrying it
/// inserts twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_without_a_result_through_query_arrow() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "stmts.hyper").await;
    let created = conn
        .query_arrow("CREATE TABLE x (a INT)", vec![])
        .await
        .map(|_| ());
    let exists = conn.execute_command("SELECT * FROM x", &[]).await.is_ok();
    assert!(
        created.is_ok(),
        "CREATE TABLE through query_arrow: {created:?}, table created: {exists}"
    );
    let mut count = 0;
    for (sql, params, rows) in [
        ("INSERT INTO x VALUES (1), (2)", vec![], 2),
        ("INSERT INTO x VALUES ($1)", vec![Value::Int(3)], 1),
    ] {
        let result = match conn.query_arrow(sql, params).await {
            Ok(s) => {
                assert!(s.schema().fields().is_empty(), "{sql}: no columns");
                drain(s).await
            }
            Err(e) => Err(e),
        };
        count += rows;
        let stored = scalar(&conn, "SELECT count(*) FROM x").await;
        assert!(
            result.as_ref().is_ok_and(Vec::is_empty),
            "{sql}: {result:?}, yet the table has {stored} rows"
        );
        assert_eq!(stored, count);
    }
    let (schema, bytes) = query_ipc(&conn, "INSERT INTO x VALUES (4)", vec![]).await;
    assert!(schema.fields().is_empty());
    assert!(decode_ipc(&bytes).1.is_empty());
    assert_eq!(scalar(&conn, "SELECT count(*) FROM x").await, count + 1);
}

/// A `SELECT` of no columns has rows all the same: batches of no columns
/// that count them, on either route, in batches and in IPC bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_less_rows_are_counted_on_both_routes() {
    let conn = connect().await;
    let rows = |batches: &[RecordBatch]| batches.iter().map(RecordBatch::num_rows).sum::<usize>();
    for (sql, params) in [
        ("SELECT FROM generate_series(1, 70000)", vec![]),
        (
            "SELECT FROM generate_series(1, 70000) WHERE $1 = 1",
            vec![Value::Int(1)],
        ),
    ] {
        let stream = conn.query_arrow(sql, params.clone()).await.unwrap();
        let route = stream.read_route();
        assert!(stream.schema().fields().is_empty(), "{sql}");
        let batches = drain(stream).await.unwrap();
        assert_eq!(rows(&batches), 70_000, "{sql} on {route:?}");
        assert!(batches.iter().all(|b| b.num_columns() == 0));
        let (schema, bytes) = query_ipc(&conn, sql, params).await;
        assert!(schema.fields().is_empty());
        assert_eq!(rows(&decode_ipc(&bytes).1), 70_000, "{sql} as IPC");
    }
}

// --- 2. Raw IPC ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipc_bytes_decode_to_the_same_batches() {
    let dir = temp_dir();
    let conn = all_types_db(&dir).await;
    let every = format!("{EVERY_TYPE} WHERE id > $1 ORDER BY id");
    let many =
        "SELECT i, 'v' || i AS s, i % 3 = 0 AS b FROM generate_series(1, 200000) g(i) WHERE i > $1 ORDER BY i";
    for (sql, rows) in [(every.as_str(), 4), (many, 200_000)] {
        for arrow_route in [true, false] {
            let (sql, params) = if arrow_route {
                (sql.replace("$1", "0"), vec![])
            } else {
                (sql.to_owned(), vec![Value::Int(0)])
            };
            let what = format!("{sql} (Arrow route: {arrow_route})");
            let batches = conn.query_arrow(&sql, params.clone()).await.unwrap();
            let schema = batches.schema().clone();
            let want = concat(&schema, &drain(batches).await.unwrap());
            let (ipc_schema, bytes) = query_ipc(&conn, &sql, params).await;
            assert_eq!(ipc_schema, schema, "{what}: the IPC stream's schema");
            let (_, decoded) = decode_ipc(&bytes);
            let decoded: Vec<RecordBatch> = decoded.iter().map(utc_as_offset).collect();
            let got = concat(&schema, &decoded);
            assert_eq!(got.schema(), schema, "{what}: the decoded schema");
            assert_same(&got, &want, &what);
            assert_eq!(want.num_rows(), rows, "{what}");
        }
    }
}

/// An empty result's first (and only) chunk on the Arrow route holds just
/// the schema message, which a stream decoder completes only once it sees
/// more input: `query_arrow_ipc` must still know the schema up front (it
/// failed with "the first chunk of the Arrow result holds no schema").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_results_have_their_schema_on_every_stream() {
    let dir = temp_dir();
    let conn = all_types_db(&dir).await;
    let sql = format!("{EVERY_TYPE} WHERE id < $1");
    let want = conn
        .query_arrow(&format!("{EVERY_TYPE} WHERE id > 0"), vec![])
        .await
        .unwrap()
        .schema()
        .clone();
    for arrow_route in [true, false] {
        let (sql, params) = if arrow_route {
            (sql.replace("$1", "0"), vec![])
        } else {
            (sql.clone(), vec![Value::Int(0)])
        };
        let what = format!("{sql} (Arrow route: {arrow_route})");
        let s = conn.query_arrow(&sql, params.clone()).await.unwrap();
        assert_same_fields(s.schema(), &want, &what);
        let batches = drain(s).await.unwrap();
        assert!(batches.iter().all(|b| b.num_rows() == 0), "{what}");
        let s = conn
            .query_arrow_ipc(&sql, params)
            .await
            .unwrap_or_else(|e| panic!("query_arrow_ipc {what}: {e:?}"));
        assert_same_fields(s.schema(), &want, &what);
        let mut bytes = Vec::new();
        let mut s = s;
        while let Some(chunk) = s.next().await {
            bytes.extend_from_slice(&chunk.unwrap());
        }
        let (schema, batches) = decode_ipc(&bytes);
        assert_eq!(schema.fields().len(), want.fields().len(), "{what}");
        assert!(batches.iter().all(|b| b.num_rows() == 0), "{what}");
    }
    assert_eq!(scalar(&conn, "SELECT 13").await, 13);
}

/// On the Arrow route the IPC bytes are hyperd's as they came, so their
/// TIMESTAMPTZ is `Timestamp(µs, "Utc")`, hyperd's spelling, where the
/// stream's `schema()`, `query_arrow`'s batches and the `DataRow` route's
/// bytes say `"+00:00"` (documented on `SharedConnection::query_arrow_ipc`,
/// as on `AsyncConnection::query_arrow_ipc`). Otherwise the schemas agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipc_bytes_carry_the_streams_schema() {
    let sql = "SELECT TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tstz, 1 AS i WHERE $1";
    let conn = connect().await;
    for (sql, params) in [
        (sql.replace("$1", "true"), vec![]),
        (sql.to_owned(), vec![Value::Bool(true)]),
    ] {
        let (schema, bytes) = query_ipc(&conn, &sql, params.clone()).await;
        let (decoded, _) = decode_ipc(&bytes);
        let tz = |s: &arrow_schema::Schema| match s.field(0).data_type() {
            arrow_schema::DataType::Timestamp(_, tz) => tz.as_deref().map(str::to_owned),
            other => panic!("{other}"),
        };
        let spelled = tz(&decoded).unwrap();
        assert!(spelled == "Utc" || spelled == "+00:00", "{sql}: {spelled}");
        assert_eq!(tz(&schema).as_deref(), Some("+00:00"), "{sql}");
        let batches = conn.query_arrow(&sql, params).await.unwrap();
        assert_eq!(
            schema,
            *batches.schema(),
            "{sql}: the stream's schema is query_arrow's"
        );
        assert_eq!(decoded.fields().len(), schema.fields().len());
        assert_eq!(decoded.field(1), schema.field(1), "{sql}");
    }
}
