//! Criterion micro-benches of the text, NUMERIC and DATE value paths, the
//! ones the wide `lineitem` table (benchmark suite) spends its client time
//! in, 1M values per iteration, no hyperd needed:
//!
//! * `encode/*`: one value type into HyperBinary through `encode_column`
//!   (what every inserter's `add_row` does per value): `&str` into CHAR(25)
//!   and VARCHAR(44), `Numeric` into NUMERIC(12,2), `Date`;
//! * `decode/*`: the same values back through `FromHyperBinary` (what
//!   `Row::try_get` and typed rows do per value): text as `&str` and as
//!   `String`, `Numeric`, `Date`;
//! * `lineitem_rows/insert_chunk_encode`: whole 16-column lineitem rows
//!   through `InsertChunk::add_row` (the HyperBinary inserters' encode).
//!
//! Run: `cargo bench -p hyperdb-api --bench text_paths`.

#[path = "benchmark_suite/data.rs"]
#[allow(dead_code)]
mod data;
#[path = "benchmark_suite/lineitem_data.rs"]
#[allow(dead_code)]
mod lineitem_data;

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hyperdb_api::types::{
    encode_column, ColumnType, Date, FromHyperBinary, Numeric, SqlType, ToHyperBinary,
};
use hyperdb_api::InsertChunk;

use lineitem_data as li;

const VALUES: usize = 1_000_000;
const ROWS: u64 = 100_000;

const NUMERIC: SqlType = SqlType::Numeric {
    precision: 12,
    scale: 2,
};

/// Appends every value of `values` for `ty` (nullable column).
fn encode_all<T: ToHyperBinary>(buf: &mut BytesMut, ty: SqlType, values: &[T]) {
    let column = ColumnType::nullable(ty);
    buf.clear();
    for v in values {
        encode_column(v, &column, buf).expect("encode");
    }
}

/// Value `i` of `make` for `i` in `0..VALUES`, made before timing.
fn values<T>(make: impl Fn(i64) -> T) -> Vec<T> {
    (0..VALUES as i64).map(make).collect()
}

/// The values of `make` as a result carries them (no null byte, no
/// length word), each a slice of one buffer, made before timing.
fn raw_values<T: ToHyperBinary>(
    ty: SqlType,
    make: impl Fn(i64) -> T,
) -> (Vec<u8>, Vec<(usize, usize)>) {
    let column = ColumnType::not_null(ty);
    let mut buf = BytesMut::new();
    let mut spans = Vec::with_capacity(VALUES);
    for i in 0..VALUES as i64 {
        let start = buf.len();
        encode_column(&make(i), &column, &mut buf).expect("encode");
        let skip = if ty.fixed_width().is_some() { 0 } else { 4 };
        spans.push((start + skip, buf.len() - start - skip));
    }
    (buf.to_vec(), spans)
}

fn decode_all<'a, T: FromHyperBinary<'a>>(
    ty: SqlType,
    (bytes, spans): &'a (Vec<u8>, Vec<(usize, usize)>),
    mut fold: impl FnMut(T),
) {
    for &(at, len) in spans {
        fold(T::decode_hyper(&ty, &bytes[at..at + len]).expect("decode"));
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("text_values_1M");
    group.throughput(Throughput::Elements(VALUES as u64));
    group.sample_size(10);
    let mut buf = BytesMut::with_capacity(64 << 20);
    let instruct = |i: i64| li::row(i).shipinstruct;
    let comment = |i: i64| li::row(i).comment;
    let numeric = |i: i64| li::numeric(li::row(i).extendedprice);
    let date = |i: i64| li::row(i).shipdate;

    let (instructs, comments) = (values(instruct), values(comment));
    let (numerics, dates_in) = (values(numeric), values(date));
    group.bench_function("encode/char25_str", |b| {
        b.iter(|| encode_all(&mut buf, SqlType::Char(25), &instructs))
    });
    group.bench_function("encode/varchar44_str", |b| {
        b.iter(|| encode_all(&mut buf, SqlType::Varchar(44), &comments))
    });
    group.bench_function("encode/numeric12_2", |b| {
        b.iter(|| encode_all(&mut buf, NUMERIC, &numerics))
    });
    group.bench_function("encode/date", |b| {
        b.iter(|| encode_all(&mut buf, SqlType::Date, &dates_in))
    });

    let text = raw_values(SqlType::Varchar(44), comment);
    let nums = raw_values(NUMERIC, numeric);
    let dates = raw_values(SqlType::Date, date);
    group.bench_function("decode/varchar44_str", |b| {
        b.iter(|| {
            let mut n = 0;
            decode_all::<&str>(SqlType::Varchar(44), &text, |s| n += s.len());
            black_box(n)
        })
    });
    group.bench_function("decode/varchar44_string", |b| {
        b.iter(|| {
            let mut n = 0;
            decode_all::<String>(SqlType::Varchar(44), &text, |s| n += s.len());
            black_box(n)
        })
    });
    group.bench_function("decode/numeric12_2", |b| {
        b.iter(|| {
            let mut n = 0i128;
            decode_all::<Numeric>(NUMERIC, &nums, |v| n += v.unscaled());
            black_box(n)
        })
    });
    group.bench_function("decode/date", |b| {
        b.iter(|| {
            let mut n = 0i64;
            decode_all::<Date>(SqlType::Date, &dates, |d| n += i64::from(d.julian_day()));
            black_box(n)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("lineitem_rows_100K");
    group.throughput(Throughput::Elements(ROWS));
    group.sample_size(10);
    let table = li::table("lineitem");
    group.bench_function("insert_chunk_encode", |b| {
        let mut chunk = InsertChunk::new(&table).expect("chunk");
        b.iter(|| {
            chunk = InsertChunk::new(&table).expect("chunk");
            for i in 0..ROWS as i64 {
                li::with_values(i, |values| chunk.add_row(values)).expect("row");
            }
            black_box(chunk.rows())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
