//! HyperBinary encode/decode throughput for the 4-column benchmark table
//! `measurements(id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION,
//! timestamp BIGINT)`, 1M rows per iteration, one reused buffer. Row
//! decoding is measured on bare DataRow bodies and, as the drivers see it,
//! on whole backend messages parsed off a buffer. The same paths through the
//! public API and a socket are in `hyperdb-api/benches/hot_paths.rs`.
//!
//! Run: `cargo bench -p hyperdb-api-core --bench hyperbinary`.

use std::hint::black_box;

use bytes::{Buf, BufMut, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hyperdb_api_core::protocol::backend::{self, FieldSpan, Message};
use hyperdb_api_core::protocol::Limits;
use hyperdb_api_core::types::hyperbinary::put_copy_header;
use hyperdb_api_core::types::{
    decode_field, encode_column, encode_row, ColumnType, SqlType, ToHyperBinary,
};
use hyperdb_api_core::Result;

const ROWS: usize = 1_000_000;

const SCHEMA: [ColumnType; 4] = [
    ColumnType::not_null(SqlType::Int),
    ColumnType::nullable(SqlType::Int),
    ColumnType::nullable(SqlType::Double),
    ColumnType::nullable(SqlType::BigInt),
];

/// Row `i`: every tenth sensor_id is NULL.
fn row(i: usize) -> (i32, Option<i32>, Option<f64>, Option<i64>) {
    let id = i as i32;
    let sensor = (!i.is_multiple_of(10)).then_some((i % 1000) as i32);
    (
        id,
        sensor,
        Some(i as f64 * 0.25),
        Some(1_700_000_000_000_000 + i as i64),
    )
}

fn encode_typed(buf: &mut BytesMut) -> Result<()> {
    buf.clear();
    put_copy_header(buf);
    for i in 0..ROWS {
        let (id, sensor, value, ts) = row(i);
        encode_column(&id, &SCHEMA[0], buf)?;
        encode_column(&sensor, &SCHEMA[1], buf)?;
        encode_column(&value, &SCHEMA[2], buf)?;
        encode_column(&ts, &SCHEMA[3], buf)?;
    }
    Ok(())
}

fn encode_dyn_rows(buf: &mut BytesMut) -> Result<()> {
    buf.clear();
    put_copy_header(buf);
    for i in 0..ROWS {
        let (id, sensor, value, ts) = row(i);
        let values: [&dyn ToHyperBinary; 4] = [&id, &sensor, &value, &ts];
        encode_row(&SCHEMA, &values, buf)?;
    }
    Ok(())
}

/// The same rows as result DataRow bodies with format code 2: i16 field
/// count, then per field an i32 length (-1 for NULL) and the value. With
/// `framed`, each body is a whole backend message (`'D'`, i32 length).
fn data_rows(framed: bool) -> Vec<u8> {
    let mut out = BytesMut::with_capacity(ROWS * 45);
    let mut value = BytesMut::with_capacity(8);
    for i in 0..ROWS {
        let (id, sensor, v, ts) = row(i);
        let start = out.len();
        if framed {
            out.put_u8(b'D');
            out.put_i32(0);
        }
        out.put_i16(4);
        let fields: [(&dyn ToHyperBinary, bool); 4] = [
            (&id, false),
            (&sensor, sensor.is_none()),
            (&v, false),
            (&ts, false),
        ];
        for (col, (field, null)) in SCHEMA.iter().zip(fields) {
            if null {
                out.put_i32(-1);
                continue;
            }
            value.clear();
            field
                .encode_hyper(&col.sql_type, &mut value)
                .expect("bench data encodes");
            out.put_i32(value.len() as i32);
            out.extend_from_slice(&value);
        }
        if framed {
            let len = (out.len() - start - 1) as i32;
            out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        }
    }
    out.to_vec()
}

fn next_field<'a>(rows: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = rows.get_i32();
    if len < 0 {
        return None;
    }
    let (field, rest) = rows.split_at(len as usize);
    *rows = rest;
    Some(field)
}

/// Decodes one row's four fields, in order, from `field(i)`, and folds
/// them into `checksum`.
#[inline]
fn fold_row<'a>(checksum: i64, mut field: impl FnMut(usize) -> Option<&'a [u8]>) -> Result<i64> {
    let id: i32 = decode_field(&SCHEMA[0].sql_type, field(0))?;
    let sensor: Option<i32> = decode_field(&SCHEMA[1].sql_type, field(1))?;
    let value: Option<f64> = decode_field(&SCHEMA[2].sql_type, field(2))?;
    let ts: Option<i64> = decode_field(&SCHEMA[3].sql_type, field(3))?;
    Ok(checksum
        .wrapping_add(i64::from(id))
        .wrapping_add(i64::from(sensor.unwrap_or(0)))
        .wrapping_add(value.unwrap_or(0.0) as i64)
        .wrapping_add(ts.unwrap_or(0)))
}

fn decode_all(mut rows: &[u8]) -> Result<i64> {
    let mut checksum = 0i64;
    while !rows.is_empty() {
        let _count = rows.get_i16();
        checksum = fold_row(checksum, |_| next_field(&mut rows))?;
    }
    Ok(checksum)
}

/// The client's receive path: `messages` arrive a read window at a time
/// (the drivers' default 1 MiB), and each time every complete message at
/// the front of the buffer is parsed (rows a block at a time), and each row
/// is indexed and its values decoded, as the row cursor does.
fn parse_and_decode(messages: &[u8], buf: &mut BytesMut) -> Result<i64> {
    const READ_WINDOW: usize = 1 << 20;
    let limits = Limits::default();
    let mut checksum = 0i64;
    let mut spans = Vec::new();
    for window in messages.chunks(READ_WINDOW) {
        buf.extend_from_slice(window);
        while let Some(msg) = backend::parse(buf, &limits)? {
            let Message::DataRows(block) = msg else {
                continue;
            };
            spans.resize(block.columns(), FieldSpan::default());
            for r in 0..block.len() {
                block.index_row(r, &mut spans)?;
                checksum = fold_row(checksum, |i| block.value(spans[i]).flatten())?;
            }
        }
    }
    Ok(checksum)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("measurements_1M");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(20);

    let mut buf = BytesMut::with_capacity(ROWS * 32);
    group.bench_function("encode_column", |b| {
        b.iter(|| {
            encode_typed(&mut buf).expect("encode");
            black_box(buf.len())
        })
    });
    group.bench_function("encode_row_dyn", |b| {
        b.iter(|| {
            encode_dyn_rows(&mut buf).expect("encode");
            black_box(buf.len())
        })
    });
    let rows = data_rows(false);
    group.bench_function("decode_data_rows", |b| {
        b.iter(|| black_box(decode_all(black_box(&rows)).expect("decode")))
    });
    let messages = data_rows(true);
    let mut buf = BytesMut::with_capacity(2 << 20);
    group.bench_function("parse_and_decode_data_row_messages", |b| {
        b.iter(|| black_box(parse_and_decode(&messages, &mut buf).expect("decode")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
