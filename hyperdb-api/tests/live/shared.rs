//! `SharedConnection`: an owned, cloneable async connection whose result
//! streams own their place on it. Both routes (hyperd's Arrow stream and
//! DataRows gathered into batches) give one schema and the same values, raw
//! IPC decodes to the same batches, errors carry their SQLSTATE, and streams
//! abandoned, interleaved (spilled), cancelled or run concurrently leave the
//! connection usable and every result exact.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, Time64MicrosecondType};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Date64Array,
    Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    IntervalMonthDayNanoArray, RecordBatch, StringArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, UInt32Array,
};
use arrow_buffer::IntervalMonthDayNano;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use hyperdb_api::arrow::arrow_schema;
use hyperdb_api::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use hyperdb_api::{
    AsyncInserter, ConnectOptions, CreateMode, Error, ResultStream, SharedConnection, Value,
};
use tokio::time::timeout;

use crate::common::{server, temp_dir, RssGrowth};

/// The end-of-stream marker every IPC stream ends with.
const EOS: [u8; 8] = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
const DAY_MS: i64 = 86_400_000;
/// Generous: none of these waits should take more than a second or two.
const NO_DEADLOCK: Duration = Duration::from_secs(60);

fn options() -> ConnectOptions {
    ConnectOptions::new(server().endpoint().clone())
}

async fn connect() -> SharedConnection {
    SharedConnection::connect_with(&options()).await.unwrap()
}

async fn connect_db(dir: &tempfile::TempDir, file: &str) -> SharedConnection {
    let options = options().with_database(dir.path().join(file), CreateMode::CreateIfNotExists);
    SharedConnection::connect_with(&options).await.unwrap()
}

/// The rest of a stream's batches (each checked against the stream's
/// schema), or its error.
async fn drain(mut s: ResultStream<RecordBatch>) -> hyperdb_api::Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    while let Some(b) = s.next().await {
        let b = b?;
        assert_eq!(
            b.schema(),
            *s.schema(),
            "every batch has the stream's schema"
        );
        out.push(b);
    }
    Ok(out)
}

/// A query's result as one batch (empty when it has no rows).
async fn query(conn: &SharedConnection, sql: &str, params: Vec<Value>) -> RecordBatch {
    let s = conn.query_arrow(sql, params).await.unwrap();
    let schema = s.schema().clone();
    concat(&schema, &drain(s).await.unwrap())
}

/// A query's raw IPC stream and the schema the stream reported up front.
async fn query_ipc(conn: &SharedConnection, sql: &str, params: Vec<Value>) -> (SchemaRef, Vec<u8>) {
    let mut s = conn.query_arrow_ipc(sql, params).await.unwrap();
    let schema = s.schema().clone();
    let mut bytes = Vec::new();
    while let Some(chunk) = s.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    (schema, bytes)
}

/// Decodes one IPC stream, which must end with exactly one end-of-stream
/// marker and nothing after it.
fn decode_ipc(bytes: &[u8]) -> (SchemaRef, Vec<RecordBatch>) {
    assert!(bytes.ends_with(&EOS), "the stream ends with the EOS marker");
    let mut cursor = std::io::Cursor::new(bytes);
    let reader = arrow_ipc::reader::StreamReader::try_new(&mut cursor, None).unwrap();
    let schema = reader.schema();
    let batches = reader.map(|b| b.unwrap()).collect();
    assert_eq!(
        cursor.position() as usize,
        bytes.len(),
        "the reader stopped at the EOS marker, which is the last thing"
    );
    (schema, batches)
}

fn concat(schema: &SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(schema, batches).unwrap()
}

/// Equal field names, data types and metadata, and equal column data.
/// Nullability is not compared: hyperd's Arrow stream marks NOT NULL
/// columns and non-null expressions non-nullable, a `DataRow` result says
/// nothing about it (see `both_routes_agree_on_nullability`).
fn assert_same(got: &RecordBatch, want: &RecordBatch, what: &str) {
    assert_same_fields(&got.schema(), &want.schema(), what);
    assert_eq!(got.num_rows(), want.num_rows(), "{what}: rows");
    for (i, field) in want.schema().fields().iter().enumerate() {
        assert_eq!(
            got.column(i).to_data(),
            want.column(i).to_data(),
            "{what}: column {}",
            field.name()
        );
    }
}

fn assert_same_fields(got: &Schema, want: &Schema, what: &str) {
    let fields = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| {
                (
                    f.name().clone(),
                    f.data_type().clone(),
                    f.metadata().clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(got), fields(want), "{what}: fields");
    assert_eq!(got.metadata(), want.metadata(), "{what}: schema metadata");
}

/// `batch` with TIMESTAMPTZ columns in hyperd's own spelling of UTC
/// (`"Utc"`, what the Arrow route's raw IPC bytes carry) spelled as the
/// record batches spell it (`"+00:00"`); see
/// `ipc_bytes_carry_the_streams_schema`.
fn utc_as_offset(batch: &RecordBatch) -> RecordBatch {
    let retype = |dt: &DataType| match dt {
        DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == "Utc" => {
            DataType::Timestamp(*unit, Some("+00:00".into()))
        }
        other => other.clone(),
    };
    let schema = batch.schema();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_data_type(retype(f.data_type())))
        .collect();
    let columns = batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data().into_builder().data_type(retype(c.data_type()));
            make_array(data.build().unwrap())
        })
        .collect();
    let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

/// The integer in the first column of row `row`.
fn int_at(b: &RecordBatch, row: usize) -> i64 {
    let c = b.column(0);
    match c.data_type() {
        DataType::Int32 => i64::from(c.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => c.as_primitive::<Int64Type>().value(row),
        other => panic!("an integer column, got {other}"),
    }
}

/// `sql`'s single integer, through `query_arrow`.
async fn scalar(conn: &SharedConnection, sql: &str) -> i64 {
    let b = query(conn, sql, vec![]).await;
    assert_eq!(b.num_rows(), 1, "{sql}");
    int_at(&b, 0)
}

/// Count and sums of results `SELECT i, i * 2 AS j FROM generate_series(1, n)`.
#[derive(Debug, Default, PartialEq)]
struct Series {
    rows: i64,
    sum_i: i64,
    sum_j: i64,
}

impl Series {
    fn add(&mut self, b: &RecordBatch) {
        self.rows += b.num_rows() as i64;
        let i = b.column(0).as_primitive::<Int32Type>();
        let j = b.column(1).as_primitive::<Int32Type>();
        assert_eq!(i.null_count() + j.null_count(), 0);
        self.sum_i += i.values().iter().map(|v| i64::from(*v)).sum::<i64>();
        self.sum_j += j.values().iter().map(|v| i64::from(*v)).sum::<i64>();
    }

    fn expect(n: i64) -> Series {
        Series {
            rows: n,
            sum_i: n * (n + 1) / 2,
            sum_j: n * (n + 1),
        }
    }
}

fn series_sql(n: i64, salt: i64) -> String {
    format!("SELECT i, i * 2 AS j FROM generate_series(1, {n}) g(i) WHERE i > {salt} - {salt}")
}

/// The same with a parameter: the DataRow route.
fn series_sql_param(n: i64) -> String {
    format!("SELECT i, i * 2 AS j FROM generate_series(1, {n}) g(i) WHERE i > $1")
}

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

/// More values, multi-batch results with NULLs: the `DataRow` route
/// without parameters (a leading comment makes a query not plain) gives
/// what the Arrow route gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_values_agree_across_routes() {
    let conn = connect().await;
    for sql in [
        "SELECT 'ab'::char(5) AS c5, 'x'::char(1) AS c1, 'abc'::varchar(4) AS v, ''::text AS e",
        "SELECT NULL::int AS n, 1.5::numeric(10,3) AS d, (-0.5)::numeric(38,6) AS d38",
        "SELECT 'infinity'::timestamp AS inf, '-infinity'::timestamp AS ninf, \
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

// --- 3. Parameters -------------------------------------------------------

fn p(s: &str) -> Numeric {
    s.parse().unwrap()
}

fn dec(v: i128, precision: u8, scale: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(vec![v])
            .with_precision_and_scale(precision, scale)
            .unwrap(),
    )
}

/// Each `Value` variant (some twice, into other column types), the SQL type
/// it is bound as, and the one-row column it reads back as.
fn every_value() -> Vec<(Value, &'static str, ArrayRef)> {
    let date = Date::from_ymd(1850, 2, 28).unwrap();
    let time = Time::from_hms_micro(23, 59, 59, 1).unwrap();
    let ts = Timestamp::new(Date::from_ymd(2150, 1, 1).unwrap(), time).unwrap();
    let tstz = TimestampTz::from_utc(Timestamp::new(date, time).unwrap());
    vec![
        (
            Value::Bool(true),
            "BOOL",
            Arc::new(BooleanArray::from(vec![true])),
        ),
        (
            Value::SmallInt(i16::MIN),
            "SMALLINT",
            Arc::new(Int16Array::from(vec![i16::MIN])),
        ),
        (
            Value::Int(i32::MAX),
            "INT",
            Arc::new(Int32Array::from(vec![i32::MAX])),
        ),
        (
            Value::BigInt(i64::MIN),
            "BIGINT",
            Arc::new(Int64Array::from(vec![i64::MIN])),
        ),
        (
            Value::Oid(u32::MAX),
            "OID",
            Arc::new(UInt32Array::from(vec![u32::MAX])),
        ),
        (
            Value::Real(f32::MIN_POSITIVE),
            "REAL",
            Arc::new(Float32Array::from(vec![f32::MIN_POSITIVE])),
        ),
        (
            Value::Double(-f64::MAX),
            "DOUBLE PRECISION",
            Arc::new(Float64Array::from(vec![-f64::MAX])),
        ),
        (
            Value::Text("grüße ✓ 🎉 'q'".into()),
            "TEXT",
            Arc::new(StringArray::from(vec!["grüße ✓ 🎉 'q'"])),
        ),
        (
            Value::Text("0123456789".into()),
            "VARCHAR(10)",
            Arc::new(StringArray::from(vec!["0123456789"])),
        ),
        (
            Value::Text("ü✓€ab".into()),
            "CHAR(5)",
            Arc::new(StringArray::from(vec!["ü✓€ab"])),
        ),
        (
            Value::Text("é".into()),
            "CHAR(1)",
            Arc::new(StringArray::from(vec!["é"])),
        ),
        (
            Value::Text(r#"{"a":[1,2]}"#.into()),
            "JSON",
            Arc::new(StringArray::from(vec![r#"{"a":[1,2]}"#])),
        ),
        (
            Value::Bytes(vec![0, 1, 255, b'\\']),
            "BYTEA",
            Arc::new(BinaryArray::from(vec![&[0u8, 1, 255, b'\\'][..]])),
        ),
        (
            Value::Numeric(p("-12345.678")),
            "NUMERIC(18,3)",
            dec(-12_345_678, 18, 3),
        ),
        (
            Value::Numeric(p("123456789012345678901234567890123.12345")),
            "NUMERIC(38,5)",
            dec(12_345_678_901_234_567_890_123_456_789_012_312_345, 38, 5),
        ),
        (
            Value::Date(date),
            "DATE",
            Arc::new(Date64Array::from(vec![date.unix_days() * DAY_MS])),
        ),
        (
            Value::Time(time),
            "TIME",
            Arc::new(Time64MicrosecondArray::from(vec![time.micros()])),
        ),
        (
            Value::Timestamp(ts),
            "TIMESTAMP",
            Arc::new(TimestampMicrosecondArray::from(vec![ts
                .unix_micros()
                .unwrap()])),
        ),
        (
            Value::TimestampTz(tstz),
            "TIMESTAMPTZ",
            Arc::new(
                TimestampMicrosecondArray::from(vec![tstz.unix_micros().unwrap()])
                    .with_timezone("+00:00"),
            ),
        ),
        (
            Value::Interval(Interval::new(13, -2, 3_600_000_001)),
            "INTERVAL",
            Arc::new(IntervalMonthDayNanoArray::from(vec![
                IntervalMonthDayNano::new(13, -2, 3_600_000_001_000),
            ])),
        ),
        (Value::Null, "INT", new_null_array(&DataType::Int32, 1)),
        (Value::Null, "TEXT", new_null_array(&DataType::Utf8, 1)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_value_variant_binds_and_reads_back() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "params.hyper").await;
    let cases = every_value();

    // One query binding them all.
    let select = (1..=cases.len())
        .map(|i| format!("${i}::{} AS c{i}", cases[i - 1].1))
        .collect::<Vec<_>>()
        .join(", ");
    let params: Vec<Value> = cases.iter().map(|c| c.0.clone()).collect();
    let got = query(&conn, &format!("SELECT {select}"), params.clone()).await;
    assert_eq!(got.num_rows(), 1);
    for (i, (value, ty, want)) in cases.iter().enumerate() {
        assert_eq!(got.column(i).to_data(), want.to_data(), "{value:?} as {ty}");
    }

    // Each alone, without a cast: the type comes from the value's own.
    // (Not NUMERIC: it is bound with type OID 0, as hyperd requires, so an
    // uncast `$1` is taken for TEXT. Nor the other text types: a TEXT value
    // stays TEXT.)
    for (value, ty, want) in &cases {
        if ty.starts_with("NUMERIC") || matches!(value, Value::Text(_)) && *ty != "TEXT" {
            continue;
        }
        let got = query(&conn, "SELECT $1 AS v", vec![value.clone()]).await;
        if matches!(value, Value::Null) {
            assert!(got.column(0).is_null(0), "untyped NULL");
            continue;
        }
        assert_eq!(got.column(0).to_data(), want.to_data(), "{value:?} uncast");
    }

    // Into a table through execute_command: one row of values, one of NULLs.
    let columns = cases
        .iter()
        .enumerate()
        .map(|(i, c)| format!("c{} {}", i + 1, c.1))
        .collect::<Vec<_>>()
        .join(", ");
    conn.execute_command(&format!("CREATE TABLE p (id INT, {columns})"), &[])
        .await
        .unwrap();
    let placeholders = (2..=cases.len() + 1)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let insert = format!("INSERT INTO p VALUES ($1, {placeholders})");
    let mut row = vec![Value::Int(1)];
    row.extend(params.iter().cloned());
    assert_eq!(conn.execute_command(&insert, &row).await.unwrap(), 1);
    let mut nulls = vec![Value::Int(2)];
    nulls.extend(cases.iter().map(|_| Value::Null));
    assert_eq!(conn.execute_command(&insert, &nulls).await.unwrap(), 1);
    // Filtered by parameters of each kind, too.
    assert_eq!(
        conn.execute_command(
            "UPDATE p SET c1 = $1 WHERE id = $2 AND c4 = $3 AND c8 = $4",
            &[
                Value::Bool(false),
                Value::Int(1),
                Value::BigInt(i64::MIN),
                Value::Text("grüße ✓ 🎉 'q'".into())
            ],
        )
        .await
        .unwrap(),
        1
    );
    for arrow_route in [true, false] {
        let got = if arrow_route {
            query(&conn, "SELECT * FROM p ORDER BY id", vec![]).await
        } else {
            query(
                &conn,
                "SELECT * FROM p WHERE id > $1 ORDER BY id",
                vec![Value::Int(0)],
            )
            .await
        };
        assert_eq!(got.num_rows(), 2);
        for (i, (value, ty, want)) in cases.iter().enumerate() {
            let want = if i == 0 {
                Arc::new(BooleanArray::from(vec![false])) as ArrayRef
            } else {
                want.clone()
            };
            let want = arrow_select::concat::concat(&[
                want.as_ref(),
                new_null_array(want.data_type(), 1).as_ref(),
            ])
            .unwrap();
            assert_eq!(
                got.column(i + 1).to_data(),
                want.to_data(),
                "{value:?} into {ty} (Arrow route: {arrow_route})"
            );
        }
    }
}

// --- 4. Errors -----------------------------------------------------------

/// The first error of a query: from starting it or from its stream.
async fn query_error(conn: &SharedConnection, sql: &str, params: Vec<Value>) -> Error {
    match conn.query_arrow(sql, params).await {
        Err(e) => e,
        Ok(s) => drain(s).await.expect_err(sql),
    }
}

async fn ipc_error(conn: &SharedConnection, sql: &str, params: Vec<Value>) -> Error {
    match conn.query_arrow_ipc(sql, params).await {
        Err(e) => e,
        Ok(mut s) => loop {
            match s.next().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => break e,
                None => panic!("{sql}: no error"),
            }
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_their_sqlstate_and_leave_the_connection_usable() {
    let conn = connect().await;
    let cases: [(&str, Vec<Value>, &str); 8] = [
        ("SELECT FROM WHERE", vec![], "42601"),
        ("SELECT $1::int FROM WHERE", vec![Value::Int(1)], "42601"),
        ("SELEC 1", vec![], "42601"),
        ("SELECT * FROM no_such_table", vec![], "42P01"),
        (
            "SELECT * FROM no_such_table WHERE $1",
            vec![Value::Bool(true)],
            "42P01",
        ),
        // Fails while rows are produced.
        (
            "SELECT 1 / (i - 150000) FROM generate_series(1, 200000) g(i)",
            vec![],
            "22012",
        ),
        (
            "SELECT 1 / (i - $1) FROM generate_series(1, 200000) g(i)",
            vec![Value::Int(150_000)],
            "22012",
        ),
        ("SELECT $1::int", vec![Value::Text("x".into())], "22P02"),
    ];
    for (n, (sql, params, code)) in cases.into_iter().enumerate() {
        let e = query_error(&conn, sql, params.clone()).await;
        assert_eq!(e.sqlstate(), code, "query_arrow {sql}: {e:?}");
        assert_eq!(
            scalar(&conn, &format!("SELECT {n} + 1")).await,
            n as i64 + 1
        );
        let e = ipc_error(&conn, sql, params.clone()).await;
        assert_eq!(e.sqlstate(), code, "query_arrow_ipc {sql}: {e:?}");
        assert_eq!(
            scalar(&conn, &format!("SELECT {n} + 2")).await,
            n as i64 + 2
        );
        let e = conn.execute_command(sql, &params).await.unwrap_err();
        assert_eq!(e.sqlstate(), code, "execute_command {sql}: {e:?}");
        assert_eq!(conn.execute_command("SELECT 1", &[]).await.unwrap(), 1);
    }
    // Message and position (into the caller's SQL) agree across routes.
    let arrow = query_error(&conn, "SELECT * FROM no_such_table", vec![]).await;
    let rows = query_error(
        &conn,
        "SELECT * FROM no_such_table WHERE $1",
        vec![Value::Bool(true)],
    )
    .await;
    let (arrow, rows) = (arrow.db_error().unwrap(), rows.db_error().unwrap());
    assert_eq!(arrow.message, rows.message);
    assert_eq!(arrow.position, rows.position);
    assert_eq!(rows.position, Some(15), "{rows:?}");
}

// --- 5. Abandoned streams ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_streams_free_the_connection() {
    let conn = connect().await;
    const TEN_M: &str = "SELECT i FROM generate_series(1, 10000000) g(i)";
    for (n, how) in ["arrow", "datarows", "ipc", "ipc datarows", "closed"]
        .iter()
        .enumerate()
    {
        let params = if how.contains("datarows") {
            vec![Value::Int(0)]
        } else {
            vec![]
        };
        let sql = if params.is_empty() {
            format!("{TEN_M} WHERE i > {n}")
        } else {
            format!("{TEN_M} WHERE i > $1 + {n}")
        };
        let started = Instant::now();
        if how.starts_with("ipc") {
            let mut s = conn.query_arrow_ipc(&sql, params).await.unwrap();
            assert!(!s.next().await.unwrap().unwrap().is_empty());
            drop(s);
        } else {
            let mut s = conn.query_arrow(&sql, params).await.unwrap();
            assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
            if *how == "closed" {
                s.close();
            } else {
                drop(s);
            }
        }
        let dropped = Instant::now();
        let answer = timeout(
            Duration::from_secs(30),
            scalar(&conn, &format!("SELECT 41 + {n}")),
        )
        .await
        .expect("the next query runs within 30 s");
        assert_eq!(answer, 41 + n as i64);
        let rows = conn
            .execute_command(
                &format!("SELECT i FROM generate_series(1, {}) g(i)", 3 + n),
                &[],
            )
            .await
            .unwrap();
        assert_eq!(rows, 3 + n as u64);
        eprintln!(
            "abandoned 10M-row stream ({how}): first batch after {:?}, next query done {:?} after the drop",
            dropped - started,
            dropped.elapsed()
        );
    }
}

/// An abandoned stream is drained to its end
/// by the next call, however long the server takes to produce it: after
/// dropping a stream over an hour-long result, the next call waits an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoning_an_endless_stream_frees_the_connection() {
    const ENDLESS: &str = "SELECT i FROM generate_series(1, 100000000000) g(i) WHERE i > $1";
    let conn = connect().await;
    for params in [vec![], vec![Value::Int(0)]] {
        let sql = if params.is_empty() {
            ENDLESS.replace("$1", "1")
        } else {
            ENDLESS.to_owned()
        };
        let mut s = conn.query_arrow(&sql, params).await.unwrap();
        assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
        drop(s);
        let started = Instant::now();
        let answer = timeout(Duration::from_secs(15), scalar(&conn, "SELECT 43"))
            .await
            .unwrap_or_else(|_| panic!("{sql}: the next query waited 15 s"));
        assert_eq!(answer, 43);
        eprintln!(
            "abandoned endless stream: next query after {:?}",
            started.elapsed()
        );
    }
}

// --- 6. Interleaving: spill ---------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_while_a_stream_is_open_spills_it() {
    let conn = connect().await;
    const N: i64 = 1_000_000;
    for arrow_route in [true, false] {
        let started = Instant::now();
        let (sql, params) = if arrow_route {
            (series_sql(N, 11), vec![])
        } else {
            (series_sql_param(N), vec![Value::Int(0)])
        };
        let mut a = conn.query_arrow(&sql, params).await.unwrap();
        let mut tally = Series::default();
        tally.add(&a.next().await.unwrap().unwrap());
        assert!(tally.rows < N, "one batch is not the whole result");

        // From the same task: must not deadlock.
        let rows = timeout(NO_DEADLOCK, conn.execute_command("SELECT 1", &[]))
            .await
            .expect("execute_command while a stream is open")
            .unwrap();
        assert_eq!(rows, 1);
        // A second stream, itself interleaved with a third call.
        let mut b = timeout(NO_DEADLOCK, conn.query_arrow(&series_sql(1000, 12), vec![]))
            .await
            .expect("query_arrow while a stream is open")
            .unwrap();
        let mut b_tally = Series::default();
        b_tally.add(&b.next().await.unwrap().unwrap());
        let c = timeout(NO_DEADLOCK, scalar(&conn, "SELECT 7 * 6"))
            .await
            .expect("a query while two streams are open");
        assert_eq!(c, 42);
        while let Some(batch) = b.next().await {
            b_tally.add(&batch.unwrap());
        }
        assert_eq!(b_tally, Series::expect(1000));

        // All of A's rest was read into memory before the connection
        // moved on: it is there without waiting.
        let mut in_memory = 0;
        while let Some(batch) = a.try_next() {
            let batch = batch.unwrap();
            in_memory += batch.num_rows() as i64;
            tally.add(&batch);
        }
        assert_eq!(tally, Series::expect(N), "Arrow route: {arrow_route}");
        assert!(a.next().await.is_none());
        assert!(in_memory > 0);
        eprintln!(
            "spill (Arrow route: {arrow_route}): {in_memory} rows buffered, all in {:?}",
            started.elapsed()
        );
    }

    // The same for raw IPC.
    let mut a = conn
        .query_arrow_ipc(&series_sql(N, 13), vec![])
        .await
        .unwrap();
    let mut bytes = a.next().await.unwrap().unwrap().to_vec();
    assert_eq!(
        timeout(NO_DEADLOCK, scalar(&conn, "SELECT 5"))
            .await
            .unwrap(),
        5
    );
    while let Some(chunk) = a.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    let mut tally = Series::default();
    for b in decode_ipc(&bytes).1 {
        tally.add(&b);
    }
    assert_eq!(tally, Series::expect(N), "IPC");
}

// --- 7. Concurrency ------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_queue_in_order() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "fifo.hyper").await;
    conn.execute_command("CREATE TABLE log (k INT, pos BIGINT)", &[])
        .await
        .unwrap();
    let guard = conn.lock().await.unwrap();
    let mut tasks = Vec::new();
    for k in 0..8 {
        let c = conn.clone();
        tasks.push(tokio::spawn(async move {
            c.execute_command(
                "INSERT INTO log SELECT $1, count(*) FROM log",
                &[Value::Int(k)],
            )
            .await
            .unwrap()
        }));
        // Time for the task to queue before the next one.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(guard);
    for t in tasks {
        assert_eq!(t.await.unwrap(), 1);
    }
    let log = query(&conn, "SELECT k, pos FROM log ORDER BY pos", vec![]).await;
    let ks: Vec<i32> = log.column(0).as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(
        ks,
        (0..8).collect::<Vec<_>>(),
        "calls ran in the order made"
    );
}

/// `k`'s query: a salted series, on the Arrow route for even `k`.
async fn tagged(conn: SharedConnection, k: i32) {
    const N: i64 = 100_000;
    let (sql, params) = if k % 2 == 0 {
        (
            format!("SELECT i, i * 2 AS j, {k} AS k FROM generate_series(1, {N}) g(i)"),
            vec![],
        )
    } else {
        (
            format!("SELECT i, i * 2 AS j, $1 AS k FROM generate_series(1, {N}) g(i)"),
            vec![Value::Int(k)],
        )
    };
    let s = conn.query_arrow(&sql, params).await.unwrap();
    let mut tally = Series::default();
    for b in drain(s).await.unwrap() {
        tally.add(&b);
        let ks = b.column(2).as_primitive::<Int32Type>();
        assert!(
            ks.values().iter().all(|v| *v == k),
            "task {k} got another's rows"
        );
    }
    assert_eq!(tally, Series::expect(N), "task {k}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tasks_on_one_and_on_several_connections() {
    let started = Instant::now();
    let conn = connect().await;
    let tasks: Vec<_> = (0..8)
        .map(|k| tokio::spawn(tagged(conn.clone(), k)))
        .collect();
    for t in tasks {
        timeout(NO_DEADLOCK, t).await.expect("no deadlock").unwrap();
    }
    eprintln!("8 tasks on one connection: {:?}", started.elapsed());
    assert_eq!(scalar(&conn, "SELECT 3").await, 3);

    let started = Instant::now();
    let mut conns = Vec::new();
    for _ in 0..4 {
        conns.push(connect().await);
    }
    let tasks: Vec<_> = (0..16)
        .map(|k| tokio::spawn(tagged(conns[k as usize % 4].clone(), 100 + k)))
        .collect();
    for t in tasks {
        timeout(NO_DEADLOCK, t).await.expect("no deadlock").unwrap();
    }
    eprintln!("16 tasks on 4 connections: {:?}", started.elapsed());
}

// --- 8. close() ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_every_handle() {
    let conn = connect().await;
    let other = conn.clone();
    assert!(!conn.is_closed());
    assert_eq!(scalar(&other, "SELECT 1").await, 1);
    conn.close().await.unwrap();
    assert!(conn.is_closed() && other.is_closed());
    let check = |e: Error, what: &str| {
        assert!(e.is_closed(), "{what}: {e:?}");
        assert_eq!(e.sqlstate(), "08006", "{what}: {e:?}");
    };
    check(
        other.execute_command("SELECT 1", &[]).await.unwrap_err(),
        "execute_command",
    );
    check(
        other
            .execute_command("SELECT $1", &[Value::Int(1)])
            .await
            .unwrap_err(),
        "execute_command with parameters",
    );
    check(
        other.query_arrow("SELECT 1", vec![]).await.unwrap_err(),
        "query_arrow",
    );
    check(
        other.query_arrow_ipc("SELECT 1", vec![]).await.unwrap_err(),
        "query_arrow_ipc",
    );
    check(other.lock().await.unwrap_err(), "lock");
    conn.close().await.unwrap();
    other.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_waits_for_an_open_stream() {
    let conn = connect().await;
    const N: i64 = 1_000_000;
    let mut a = conn.query_arrow(&series_sql(N, 21), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    let closer = {
        let conn = conn.clone();
        tokio::spawn(async move { conn.close().await })
    };
    // The stream still reads to its end, whether or not it spilled.
    while let Some(b) = timeout(NO_DEADLOCK, a.next())
        .await
        .expect("the stream goes on")
    {
        tally.add(&b.unwrap());
    }
    assert_eq!(tally, Series::expect(N));
    timeout(NO_DEADLOCK, closer)
        .await
        .expect("close finishes once the stream ended")
        .unwrap()
        .unwrap();
    assert!(conn.is_closed());
}

/// Every other call makes an open stream
/// spill so that it runs; `close()` waits for the stream to be read to its
/// end or dropped, so a stream held but no longer read blocks it forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_while_a_stream_is_held_but_not_read() {
    const N: i64 = 1_000_000;
    let conn = connect().await;
    let mut a = conn.query_arrow(&series_sql(N, 22), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    timeout(Duration::from_secs(10), conn.close())
        .await
        .expect("close() while a stream is held and not read")
        .unwrap();
    while let Some(b) = a.next().await {
        tally.add(&b.unwrap());
    }
    assert_eq!(
        tally,
        Series::expect(N),
        "the stream spilled before the close"
    );
}

// --- 9. cancel() ---------------------------------------------------------

/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_running_query() {
    let conn = connect().await;
    for (how, params) in [
        ("arrow", vec![]),
        ("datarows", vec![Value::Int(3)]),
        ("ipc", vec![]),
        ("handle", vec![]),
    ] {
        let sql = if params.is_empty() {
            LONG_QUERY.to_owned()
        } else {
            LONG_QUERY.replace("= 3", "= $1")
        };
        let c = conn.clone();
        let ipc = how == "ipc";
        let running = tokio::spawn(async move {
            if ipc {
                let mut s = c.query_arrow_ipc(&sql, params).await?;
                while let Some(chunk) = s.next().await {
                    chunk?;
                }
            } else {
                drain(c.query_arrow(&sql, params).await?).await?;
            }
            Ok::<_, Error>(())
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at = Instant::now();
        if how == "handle" {
            let handle = conn.cancel_handle();
            std::thread::spawn(move || handle.cancel().unwrap())
                .join()
                .unwrap();
        } else {
            conn.cancel().await.unwrap();
        }
        let e = timeout(Duration::from_secs(30), running)
            .await
            .expect("the query ends once cancelled")
            .unwrap()
            .unwrap_err();
        eprintln!(
            "cancel ({how}): the query ended {:?} after the cancel",
            at.elapsed()
        );
        assert!(e.is_cancelled(), "{how}: {e:?}");
        assert!(
            !e.is_timeout(),
            "{how}: a caller's cancel is no timeout: {e:?}"
        );
        assert_eq!(e.sqlstate(), "57014", "{how}: {e:?}");
        assert_eq!(scalar(&conn, "SELECT 11").await, 11, "{how}: usable after");
    }
}

/// "Cancels the statement running on the
/// connection now, if any": with none running, the CancelRequest (sent
/// and not waited for) lands on whatever call comes next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_idle_leaves_the_next_call_alone() {
    let conn = connect().await;
    let mut cancelled = Vec::new();
    for n in 0..20 {
        conn.cancel().await.unwrap();
        let sql = format!("SELECT {n} AS n");
        let result = match conn.query_arrow(&sql, vec![]).await {
            Ok(s) => drain(s).await.map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            assert_eq!(e.sqlstate(), "57014", "{e:?}");
            cancelled.push(n);
        }
    }
    assert!(
        cancelled.is_empty(),
        "an idle cancel() cancelled the next query in runs {cancelled:?} of 20"
    );
}

/// About two seconds of work (hyperd, 2 cores); `r` in 1..=6 salts it.
fn two_seconds(r: i64) -> String {
    format!("SELECT count(*) FROM generate_series(1, 1000000000) g(i) WHERE i % 7 = {r}")
}
const TWO_SECONDS_COUNT: i64 = 142_857_143;

/// `ResultStream::cancel` (through its `canceller()`, from another task)
/// ends that stream with 57014 while it is read from the connection; once
/// the stream no longer reads from it (read to its end, or spilled), it
/// must not cancel the call that runs next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streams_canceller_cancels_only_its_own_statement() {
    const ENDLESS: &str = "SELECT i FROM generate_series(1, 100000000000) g(i) WHERE i > $1";
    let conn = connect().await;
    for params in [vec![], vec![Value::Int(0)]] {
        let sql = if params.is_empty() {
            ENDLESS.replace("$1", "2")
        } else {
            ENDLESS.to_owned()
        };
        let mut s = conn.query_arrow(&sql, params).await.unwrap();
        assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
        let canceller = s.canceller();
        let at = Instant::now();
        tokio::spawn(async move { canceller.cancel().await })
            .await
            .unwrap()
            .unwrap();
        let e = timeout(Duration::from_secs(30), async {
            loop {
                match s.next().await {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break e,
                    None => panic!("{sql}: ended without an error"),
                }
            }
        })
        .await
        .expect("the stream ends once cancelled");
        eprintln!("stream cancel: the stream ended {:?} after", at.elapsed());
        assert!(e.is_cancelled(), "{sql}: {e:?}");
        assert_eq!(e.sqlstate(), "57014", "{sql}: {e:?}");
        assert_eq!(scalar(&conn, "SELECT 14").await, 14);
    }

    // Read to its end: cancelling it later leaves the next call alone.
    let s = conn
        .query_arrow(&series_sql(1000, 31), vec![])
        .await
        .unwrap();
    let canceller = s.canceller();
    assert_eq!(drain(s).await.unwrap().len(), 1);
    let next = {
        let conn = conn.clone();
        tokio::spawn(async move { scalar(&conn, &two_seconds(1)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    canceller.cancel().await.unwrap();
    assert_eq!(next.await.unwrap(), TWO_SECONDS_COUNT, "not cancelled");

    // Spilled: it reads no more from the connection either.
    const N: i64 = 1_000_000;
    let mut a = conn.query_arrow(&series_sql(N, 32), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    let next = {
        let conn = conn.clone();
        tokio::spawn(async move { scalar(&conn, &two_seconds(2)).await })
    };
    // Time for the spill (~0.1 s for 1M rows) and for the call to start.
    tokio::time::sleep(Duration::from_millis(700)).await;
    a.cancel().await.unwrap();
    assert_eq!(next.await.unwrap(), TWO_SECONDS_COUNT, "not cancelled");
    while let Some(b) = a.next().await {
        tally.add(&b.unwrap());
    }
    assert_eq!(tally, Series::expect(N), "the spilled stream is whole");
}

/// A query timeout (`ConnectOptions::with_query_timeout`) ends a shared
/// stream with HYT00, told apart from a caller's cancel; the connection
/// stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_timeout_ends_a_shared_stream() {
    let options = options().with_query_timeout(Some(Duration::from_millis(400)));
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    for params in [vec![], vec![Value::Int(3)]] {
        let sql = if params.is_empty() {
            LONG_QUERY.to_owned()
        } else {
            LONG_QUERY.replace("= 3", "= $1")
        };
        let started = Instant::now();
        let e = timeout(Duration::from_secs(30), query_error(&conn, &sql, params))
            .await
            .expect("the timeout fires");
        eprintln!(
            "query timeout: the query ended after {:?}",
            started.elapsed()
        );
        assert!(e.is_timeout(), "{e:?}");
        assert_eq!(e.sqlstate(), "HYT00", "{e:?}");
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert_eq!(scalar(&conn, "SELECT 15").await, 15);
    }
}

// --- 10. Bounded memory --------------------------------------------------

/// Count, checksums and value checks over the `m` table's batches, with
/// the peak RSS growth.
struct Tally {
    rows: i64,
    ids: i64,
    sensors: i64,
    bad: usize,
    rss: RssGrowth,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            rows: 0,
            ids: 0,
            sensors: 0,
            bad: 0,
            rss: RssGrowth::new(),
        }
    }

    fn add(&mut self, b: &RecordBatch) {
        let ids = b.column(0).as_primitive::<Int32Type>();
        let sensors = b.column(1).as_primitive::<Int32Type>();
        let values = b.column(2).as_primitive::<Float64Type>();
        let ts = b.column(3).as_primitive::<Int64Type>();
        self.rows += b.num_rows() as i64;
        for i in 0..b.num_rows() {
            let id = ids.value(i);
            self.ids += i64::from(id);
            self.sensors += i64::from(sensors.value(i));
            if values.value(i) != f64::from(id) * 2.5
                || ts.value(i) != 1_700_000_000_000 + i64::from(id) * 1000
            {
                self.bad += 1;
            }
        }
        self.rss.sample();
    }

    fn check(&self, n: i64, what: &str) {
        assert_eq!(
            (self.rows, self.ids, self.sensors, self.bad),
            (n, n * (n - 1) / 2, 45 * n / 10, 0),
            "{what}"
        );
        assert!(
            self.rss.peak() < 200 << 20,
            "{what}: RSS grew by {} MiB",
            self.rss.peak() >> 20
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_million_rows_in_bounded_memory() {
    const N: i64 = 10_000_000;
    let dir = temp_dir();
    let conn = connect_db(&dir, "m.hyper").await;
    conn.execute_command(
        "CREATE TABLE m (id INT NOT NULL, sensor INT, value DOUBLE PRECISION, ts BIGINT)",
        &[],
    )
    .await
    .unwrap();
    let started = Instant::now();
    let inserted = conn
        .execute_command(
            &format!(
                "INSERT INTO m SELECT i, i % 10, i * CAST(2.5 AS DOUBLE PRECISION), \
                 1700000000000 + i::bigint * 1000 FROM generate_series(0, {}) g(i)",
                N - 1
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(inserted, N as u64);
    eprintln!(
        "10M rows inserted with INSERT ... SELECT in {:?}",
        started.elapsed()
    );

    for arrow_route in [true, false] {
        let (sql, params) = if arrow_route {
            ("SELECT * FROM m", vec![])
        } else {
            ("SELECT * FROM m WHERE id >= $1", vec![Value::Int(0)])
        };
        let started = Instant::now();
        let mut tally = Tally::new();
        let mut s = conn.query_arrow(sql, params).await.unwrap();
        while let Some(b) = s.next().await {
            tally.add(&b.unwrap());
            // A slow reader on the Arrow route: the read-ahead must stay
            // bounded while the server could send much more.
            if arrow_route {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        eprintln!(
            "10M rows through query_arrow (Arrow route: {arrow_route}) in {:?}, RSS +{} MiB",
            started.elapsed(),
            tally.rss.peak() >> 20
        );
        tally.check(N, &format!("Arrow route: {arrow_route}"));
    }
}
