//! Criterion micro-benches of the client's hot paths on the benchmark
//! schema, 1M rows per iteration, no hyperd needed:
//!
//! * `insert_chunk_encode`: rows into HyperBinary through `InsertChunk::add_row`
//!   (the encode path of `Inserter` and the chunk senders);
//! * `inserter/hyperbinary`, `inserter/arrow`: rows through `Inserter` in
//!   each [`InsertFormat`], sent to the fake server (encode, batch
//!   conversion, IPC framing, socket writes);
//! * `rows_try_get` / `rows_try_get_async`: a full result read through
//!   `Connection::execute_query` / `AsyncConnection::execute_query` (served
//!   from Arrow) with every value decoded by `Row::try_get`; `rows_next_row`
//!   the same with lent rows; `rows_try_get_data_rows` and
//!   `rows_next_row_data_rows` the same over `DataRow`s
//!   (`execute_query_params`); `rows_typed_data_rows` those rows read as
//!   tuples (`Rows::typed`, in column order);
//! * `derive/*` (feature `derive`): the same paths with derived structs,
//!   each next to its hand-written twin: `ins.add_struct(&row)` against
//!   `add_row` (`insert_chunk_encode`, `inserter/*`), and `query_as` /
//!   `typed` into `#[derive(FromRow)]` structs (by name, by position)
//!   against tuples, from `DataRow`s and from Arrow;
//! * `arrow_ipc_decode` (feature `arrow`): the same rows as an Arrow IPC
//!   stream, decoded by arrow-ipc's `StreamReader` alone (the reference) and
//!   through `Connection::query_arrow`.
//!
//! The inserter and result benches talk to an in-process fake server on a Unix
//! socket that answers every query with canned bytes, so they measure the
//! client's socket reads, framing and decoding, and nothing of hyperd.
//! Codec-level benches (no sockets) are in `hyperdb-api-core/benches/hyperbinary.rs`.
//!
//! Run: `cargo bench -p hyperdb-api --bench hot_paths`.

#[cfg(feature = "arrow")]
#[path = "../test_support/fake_catalog.rs"]
mod fake_catalog;
#[path = "../test_support/fake_hyperd.rs"]
mod fake_hyperd;

use std::hint::black_box;
use std::os::unix::net::UnixListener;
use std::path::Path;

use bytes::{BufMut, BytesMut};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use fake_hyperd::{
    complete_and_ready, copy_in_response, is_catalog_query, message, row_description,
};
use hyperdb_api::types::SqlType;
use hyperdb_api::{
    ConnectOptions, Connection, Endpoint, InsertChunk, InsertFormat, Inserter, TableDefinition,
};

const ROWS: i32 = 1_000_000;
const TS_BASE: i64 = 1_700_000_000_000;

fn table() -> TableDefinition {
    TableDefinition::new("measurements")
        .with_not_null_column("id", SqlType::Int)
        .with_column("sensor_id", SqlType::Int)
        .with_column("value", SqlType::Double)
        .with_column("timestamp", SqlType::BigInt)
}

fn row(id: i32) -> (i32, i32, f64, i64) {
    (
        id,
        id % 10,
        f64::from(id) * 0.1,
        TS_BASE + i64::from(id) * 1000,
    )
}

/// The reply to Parse/Bind/Describe/Execute/Sync: every row as a
/// HyperBinary DataRow, as hyperd sends it.
fn rows_reply() -> Vec<u8> {
    let mut out = BytesMut::with_capacity(ROWS as usize * 40);
    message(&mut out, b'1', b"");
    message(&mut out, b'2', b"");
    row_description(
        &mut out,
        &[
            ("id", 23, 4),
            ("sensor_id", 23, 4),
            ("value", 701, 8),
            ("timestamp", 20, 8),
        ],
    );
    for id in 0..ROWS {
        let (id, sensor, value, ts) = row(id);
        out.put_u8(b'D');
        out.put_i32(4 + 2 + 4 * 4 + 24);
        out.put_i16(4);
        out.put_i32(4);
        out.put_i32_le(id);
        out.put_i32(4);
        out.put_i32_le(sensor);
        out.put_i32(8);
        out.put_f64_le(value);
        out.put_i32(8);
        out.put_i64_le(ts);
    }
    complete_and_ready(&mut out, &format!("SELECT {ROWS}"));
    out.to_vec()
}

/// `measurements` as the catalog query an inserter checks its definition
/// with reads it: name, type OID, modifier, NOT NULL, no collation.
const CATALOG: [(&str, u32, bool); 4] = [
    ("id", 23, true),
    ("sensor_id", 23, false),
    ("value", 701, false),
    ("timestamp", 20, false),
];

/// A fake hyperd: trusts everyone, answers a `Sync` with `rows`, a
/// `COPY ... FROM STDIN` by taking the data (and reporting [`ROWS`] rows), a
/// `COPY ... TO STDOUT` with `copy`, the catalog query with [`CATALOG`],
/// and other queries (BEGIN, COMMIT) with an empty result.
fn serve(listener: UnixListener, rows: Vec<u8>, copy: Vec<u8>) {
    let catalog = fake_catalog::catalog_reply(&CATALOG);
    for stream in listener.incoming() {
        let Ok(s) = stream else { return };
        let (rows, copy, catalog) = (rows.clone(), copy.clone(), catalog.clone());
        std::thread::spawn(move || {
            let (mut parsed, mut described) = (false, false);
            fake_hyperd::serve_session(s, |tag, body, out| match tag {
                b'P' => parsed = true,
                b'D' => described = true,
                b'S' => as_asked(
                    &rows,
                    std::mem::take(&mut parsed),
                    std::mem::take(&mut described),
                    out,
                ),
                b'Q' if body.windows(10).any(|w| w == b"FROM STDIN") => {
                    copy_in_response(out, CATALOG.len() as u16);
                }
                b'c' => complete_and_ready(out, &format!("COPY {ROWS}")),
                b'Q' if is_catalog_query(body) => out.extend_from_slice(&catalog),
                b'Q' if copy.is_empty() || !body.starts_with(b"COPY") => {
                    complete_and_ready(out, "SELECT 0");
                }
                b'Q' => out.extend_from_slice(&copy),
                _ => {}
            })
        });
    }
}

/// `rows` (ParseComplete, BindComplete, RowDescription, rows) as hyperd
/// answers what was sent since the last `Sync`: ParseComplete only after a
/// Parse, the RowDescription only after a Describe (a cached statement
/// sends Bind and Execute alone).
fn as_asked(rows: &[u8], parsed: bool, described: bool, out: &mut BytesMut) {
    let description = 1 + u32::from_be_bytes([rows[11], rows[12], rows[13], rows[14]]) as usize;
    if parsed {
        out.extend_from_slice(&rows[..5]);
    }
    out.extend_from_slice(&rows[5..10]);
    if described {
        out.extend_from_slice(&rows[10..10 + description]);
    }
    out.extend_from_slice(&rows[10 + description..]);
}

const SCAN: &str = "SELECT id, sensor_id, value, timestamp FROM measurements";

/// Every value of a row through `Row::try_get`.
#[inline]
fn checksum(r: &hyperdb_api::Row) -> i64 {
    i64::from(r.try_get::<i32>(0).expect("id"))
        + i64::from(r.try_get::<Option<i32>>(1).expect("sensor").unwrap_or(0))
        + r.try_get::<Option<f64>>(2).expect("value").unwrap_or(0.0) as i64
        + r.try_get::<Option<i64>>(3).expect("ts").unwrap_or(0)
}

fn connect(socket: &Path) -> Connection {
    Connection::connect_with(&ConnectOptions::new(Endpoint::unix(socket))).expect("fake server")
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("fake");
    let listener = UnixListener::bind(&socket).expect("bind");
    let (rows, copy) = (rows_reply(), arrow::copy_reply());
    std::thread::spawn(move || serve(listener, rows, copy));

    let mut group = c.benchmark_group("measurements_1M");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(10);

    let table = table();
    let mut chunk = InsertChunk::new(&table).expect("chunk");
    group.bench_function("insert_chunk_encode", |b| {
        b.iter(|| {
            chunk.clear();
            for id in 0..ROWS {
                let (id, sensor, value, ts) = row(id);
                chunk
                    .add_row(&[&id, &Some(sensor), &Some(value), &Some(ts)])
                    .expect("row");
            }
            black_box(chunk.encoded_len())
        })
    });

    let mut conn = connect(&socket);
    for (name, format) in [
        ("inserter/hyperbinary", InsertFormat::HyperBinary),
        #[cfg(feature = "arrow")]
        ("inserter/arrow", InsertFormat::ArrowStream),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut ins = Inserter::with_format(&mut conn, &table, format).expect("copy");
                for id in 0..ROWS {
                    let (id, sensor, value, ts) = row(id);
                    ins.add_row(&[&id, &Some(sensor), &Some(value), &Some(ts)])
                        .expect("row");
                }
                black_box(ins.execute().expect("execute"))
            })
        });
    }
    group.bench_function("rows_try_get", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            for r in conn.execute_query(SCAN).expect("query") {
                sum += checksum(&r.expect("row"));
            }
            black_box(sum)
        })
    });
    group.bench_function("rows_next_row", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            let mut rows = conn.execute_query(SCAN).expect("query");
            while let Some(r) = rows.next_row() {
                sum += checksum(r.expect("row"));
            }
            black_box(sum)
        })
    });
    group.bench_function("rows_try_get_data_rows", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            for r in conn.execute_query_params(SCAN, &[]).expect("query") {
                sum += checksum(&r.expect("row"));
            }
            black_box(sum)
        })
    });
    group.bench_function("rows_next_row_data_rows", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            let mut rows = conn.execute_query_params(SCAN, &[]).expect("query");
            while let Some(r) = rows.next_row() {
                sum += checksum(r.expect("row"));
            }
            black_box(sum)
        })
    });
    group.bench_function("rows_typed_data_rows", |b| {
        b.iter(|| {
            let mut sum = 0i64;
            let rows = conn.execute_query_params(SCAN, &[]).expect("query");
            for r in rows.typed::<(i32, Option<i32>, Option<f64>, Option<i64>)>() {
                let (id, sensor, value, ts) = r.expect("row");
                sum += i64::from(id)
                    + i64::from(sensor.unwrap_or(0))
                    + value.unwrap_or(0.0) as i64
                    + ts.unwrap_or(0);
            }
            black_box(sum)
        })
    });
    rows_async(&mut group, &socket);
    derived::bench(&mut group, &mut conn, &table);
    arrow::bench(&mut group, &mut conn);
    group.finish();
}

/// `rows_try_get` through `AsyncConnection` on a current-thread runtime:
/// the async driver's own cost per row, without cross-thread wake-ups.
#[cfg(feature = "async")]
fn rows_async(group: &mut BenchmarkGroup<'_, WallTime>, socket: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let options = ConnectOptions::new(Endpoint::unix(socket));
    let mut conn = rt
        .block_on(hyperdb_api::AsyncConnection::connect_with(&options))
        .expect("fake server");
    group.bench_function("rows_try_get_async", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut sum = 0i64;
                let mut rows = conn.execute_query(SCAN).await.expect("query");
                while let Some(r) = rows.next().await {
                    sum += checksum(&r.expect("row"));
                }
                black_box(sum)
            })
        })
    });
}

#[cfg(not(feature = "async"))]
fn rows_async(_: &mut BenchmarkGroup<'_, WallTime>, _: &Path) {}

#[cfg(feature = "arrow")]
mod arrow {
    use std::hint::black_box;
    use std::sync::Arc;

    use bytes::BytesMut;
    use criterion::measurement::WallTime;
    use criterion::BenchmarkGroup;
    use hyperdb_api::arrow_array::cast::AsArray;
    use hyperdb_api::arrow_array::types::Int32Type;
    use hyperdb_api::arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch};
    use hyperdb_api::Connection;

    use super::{complete_and_ready, message, row, table, ROWS};

    const BATCH: usize = 10_240;

    /// The rows as one Arrow IPC stream of 10,240-row batches (hyperd's
    /// batch size) without the end-of-stream marker (hyperd sends none),
    /// cut where hyperd cuts it: one frame per message.
    fn ipc_frames() -> Vec<Vec<u8>> {
        let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&table()).expect("schema"));
        let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("writer");
        let mut cuts = vec![0];
        for start in (0..ROWS).step_by(BATCH) {
            let ids: Vec<i32> = (start..(start + BATCH as i32).min(ROWS)).collect();
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from(ids.clone())),
                Arc::new(Int32Array::from_iter_values(ids.iter().map(|&i| row(i).1))),
                Arc::new(Float64Array::from_iter_values(
                    ids.iter().map(|&i| row(i).2),
                )),
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|&i| row(i).3))),
            ];
            let batch = RecordBatch::try_new(schema.clone(), columns).expect("batch");
            w.write(&batch).expect("write");
            cuts.push(w.get_ref().len());
        }
        let bytes = w.into_inner().expect("finish");
        // The schema travels with the first batch, as from hyperd.
        cuts.remove(1);
        cuts.windows(2)
            .map(|c| bytes[c[0]..c[1]].to_vec())
            .collect()
    }

    /// The reply to `COPY (...) TO STDOUT WITH (FORMAT ARROWSTREAM)`.
    pub fn copy_reply() -> Vec<u8> {
        let mut out = BytesMut::new();
        message(&mut out, b'H', &[0, 0, 0]);
        for frame in ipc_frames() {
            message(&mut out, b'd', &frame);
        }
        message(&mut out, b'c', b"");
        complete_and_ready(&mut out, &format!("COPY {ROWS}"));
        out.to_vec()
    }

    fn sum_ids(batch: &RecordBatch) -> i64 {
        let ids = batch.column(0).as_primitive::<Int32Type>();
        ids.values().iter().map(|&i| i64::from(i)).sum()
    }

    pub fn bench(group: &mut BenchmarkGroup<'_, WallTime>, conn: &mut Connection) {
        let ipc = ipc_frames().concat();
        group.bench_function("arrow_ipc_decode/arrow_ipc_StreamReader", |b| {
            b.iter(|| {
                let reader =
                    arrow_ipc::reader::StreamReader::try_new(&ipc[..], None).expect("reader");
                let sum: i64 = reader.map(|batch| sum_ids(&batch.expect("batch"))).sum();
                black_box(sum)
            })
        });
        group.bench_function("arrow_ipc_decode/query_arrow", |b| {
            b.iter(|| {
                let batches = conn
                    .query_arrow("SELECT id FROM measurements")
                    .expect("query");
                let sum: i64 = batches.map(|batch| sum_ids(&batch.expect("batch"))).sum();
                black_box(sum)
            })
        });
    }
}

#[cfg(not(feature = "arrow"))]
mod arrow {
    pub fn copy_reply() -> Vec<u8> {
        Vec::new()
    }

    pub fn bench<C>(_: &mut super::BenchmarkGroup<'_, super::WallTime>, _: &mut C) {}
}

#[cfg(feature = "derive")]
mod derived {
    use std::hint::black_box;

    use criterion::measurement::WallTime;
    use criterion::BenchmarkGroup;
    use hyperdb_api::{
        Connection, FromRow, InsertChunk, InsertFormat, Inserter, Table, TableDefinition, TableRow,
    };

    use super::{row, ROWS, SCAN};

    /// The benchmark table's row, read by name.
    #[derive(Table, FromRow)]
    #[hyper(table = "measurements")]
    struct Measurement {
        id: i32,
        sensor_id: Option<i32>,
        value: Option<f64>,
        timestamp: Option<i64>,
    }

    /// The same row read by position.
    #[derive(FromRow)]
    struct MeasurementTuple(i32, Option<i32>, Option<f64>, Option<i64>);

    /// The same row, its fields in another order than the columns.
    #[derive(FromRow)]
    struct Reordered {
        timestamp: Option<i64>,
        value: Option<f64>,
        sensor_id: Option<i32>,
        id: i32,
    }

    type Tuple = (i32, Option<i32>, Option<f64>, Option<i64>);

    fn measurement(id: i32) -> Measurement {
        let (id, sensor, value, ts) = row(id);
        Measurement {
            id,
            sensor_id: Some(sensor),
            value: Some(value),
            timestamp: Some(ts),
        }
    }

    impl Measurement {
        fn sum(&self) -> i64 {
            i64::from(self.id)
                + i64::from(self.sensor_id.unwrap_or(0))
                + self.value.unwrap_or(0.0) as i64
                + self.timestamp.unwrap_or(0)
        }
    }

    fn tuple_sum(&(id, sensor, value, ts): &Tuple) -> i64 {
        i64::from(id)
            + i64::from(sensor.unwrap_or(0))
            + value.unwrap_or(0.0) as i64
            + ts.unwrap_or(0)
    }

    pub fn bench(
        group: &mut BenchmarkGroup<'_, WallTime>,
        conn: &mut Connection,
        table: &TableDefinition,
    ) {
        assert_eq!(
            &Measurement::table_definition(),
            table,
            "the bench's own table"
        );
        let mut chunk = InsertChunk::new(table).expect("chunk");
        group.bench_function("derive/insert_chunk_encode/add_struct", |b| {
            b.iter(|| {
                chunk.clear();
                for id in 0..ROWS {
                    chunk.add_struct(&measurement(id)).expect("row");
                }
                black_box(chunk.encoded_len())
            })
        });
        for (name, format) in [
            (
                "derive/inserter/hyperbinary/add_struct",
                InsertFormat::HyperBinary,
            ),
            #[cfg(feature = "arrow")]
            (
                "derive/inserter/arrow/add_struct",
                InsertFormat::ArrowStream,
            ),
        ] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut ins = Inserter::with_format(conn, table, format).expect("copy");
                    for id in 0..ROWS {
                        ins.add_struct(&measurement(id)).expect("row");
                    }
                    black_box(ins.execute().expect("execute"))
                })
            });
        }
        group.bench_function("derive/typed_data_rows/by_name", |b| {
            b.iter(|| {
                let rows = conn.execute_query_params(SCAN, &[]).expect("query");
                let sum: i64 = rows
                    .typed::<Measurement>()
                    .map(|r| r.expect("row").sum())
                    .sum();
                black_box(sum)
            })
        });
        group.bench_function("derive/typed_data_rows/by_position", |b| {
            b.iter(|| {
                let rows = conn.execute_query_params(SCAN, &[]).expect("query");
                let sum: i64 = rows
                    .typed::<MeasurementTuple>()
                    .map(|r| {
                        let MeasurementTuple(a, b, c, d) = r.expect("row");
                        tuple_sum(&(a, b, c, d))
                    })
                    .sum();
                black_box(sum)
            })
        });
        // Fields in another order than the columns: found once, then read
        // through the map.
        group.bench_function("derive/typed_data_rows/by_name_reordered", |b| {
            b.iter(|| {
                let rows = conn.execute_query_params(SCAN, &[]).expect("query");
                let sum: i64 = rows
                    .typed::<Reordered>()
                    .map(|r| {
                        let r = r.expect("row");
                        tuple_sum(&(r.id, r.sensor_id, r.value, r.timestamp))
                    })
                    .sum();
                black_box(sum)
            })
        });
        group.bench_function("derive/query_as/tuple", |b| {
            b.iter(|| {
                let rows = conn.query_as::<Tuple>(SCAN).expect("query");
                let sum: i64 = rows.map(|r| tuple_sum(&r.expect("row"))).sum();
                black_box(sum)
            })
        });
        group.bench_function("derive/query_as/by_name", |b| {
            b.iter(|| {
                let rows = conn.query_as::<Measurement>(SCAN).expect("query");
                let sum: i64 = rows.map(|r| r.expect("row").sum()).sum();
                black_box(sum)
            })
        });
    }
}

#[cfg(not(feature = "derive"))]
mod derived {
    pub fn bench<C, T>(_: &mut super::BenchmarkGroup<'_, super::WallTime>, _: &mut C, _: &T) {}
}

criterion_group!(benches, bench);
criterion_main!(benches);
