//! `SharedConnection`: an owned, cloneable async connection whose result
//! streams own their place on it. Both routes (hyperd's Arrow stream and
//! DataRows gathered into batches) give one schema and the same values, raw
//! IPC decodes to the same batches, errors carry their SQLSTATE, and streams
//! abandoned, interleaved (spilled), cancelled or run concurrently leave the
//! connection usable and every result exact.

mod cancel;
mod gather;
mod lifecycle;
mod params;
mod routes;
mod started;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float64Type, Int32Type, Int64Type, Time64MicrosecondType, TimestampMicrosecondType,
};
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

use crate::common::{runs_here_alone, server, temp_dir, RssGrowth};

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

/// `sql`'s single integer, through `query_arrow` (the shared-connection
/// tests' own, and the inserts' through `InsertSink`).
pub(crate) async fn scalar(conn: &SharedConnection, sql: &str) -> i64 {
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
