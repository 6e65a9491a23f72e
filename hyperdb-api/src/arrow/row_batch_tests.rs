use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, IntervalMonthDayNanoType, TimestampMicrosecondType};
use arrow_array::Array;
use arrow_buffer::IntervalMonthDayNano;
use arrow_ipc::reader::StreamReader;

use super::super::encoder::tests::unframe;
use super::*;
use crate::error::RowErrorKind;
use crate::insert::encoder::RowEncoder;
use crate::types::{Date, Interval, Numeric, Timestamp};

/// The record batches of the Arrow stream framed in `buf`.
fn sent_batches(buf: &[u8]) -> Vec<RecordBatch> {
    StreamReader::try_new(&unframe(buf)[..], None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn table() -> TableDefinition {
    TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("b", SqlType::Bool)
        .with_column("txt", SqlType::Text)
        .with_column("d", SqlType::Date)
        .with_column("ts", SqlType::Timestamp)
        .with_column("iv", SqlType::Interval)
        .with_column(
            "n",
            SqlType::Numeric {
                precision: 10,
                scale: 2,
            },
        )
        .with_column(
            "big",
            SqlType::Numeric {
                precision: 30,
                scale: 0,
            },
        )
}

#[test]
fn rows_become_batches_with_arrow_values() {
    let table = table();
    let mut e = RowEncoder::with_sink(&table, ArrowRows::new(&table).unwrap()).unwrap();
    let mut buf = BytesMut::new();
    let rows = BATCH_ROWS + 10;
    let date = Date::from_ymd(1969, 12, 31).unwrap();
    let ts = Timestamp::from_micros_since_2000(-1);
    for i in 0..rows as i32 {
        let text = (i % 3 != 0).then(|| format!("r{i}"));
        let iv = Interval {
            months: 1,
            days: -2,
            micros: i64::from(i),
        };
        // A rejected row in the middle leaves nothing in any column.
        if i == 7 {
            let bad = e.add_row(
                &mut buf,
                &[
                    &i,
                    &Some(true),
                    &Some("x"),
                    &Some(date),
                    &Some(ts),
                    &Some(iv),
                    &"nan",
                    &None::<i32>,
                ],
            );
            assert!(matches!(
                bad,
                Err(Error::InvalidRow {
                    kind: RowErrorKind::WrongType,
                    ..
                })
            ));
        }
        let n = Numeric::new(i128::from(i) * -101, 2).unwrap();
        let big = Numeric::new(i128::from(i) * 10i128.pow(25), 0).unwrap();
        e.add_row(
            &mut buf,
            &[
                &i,
                &Some(i % 2 == 0),
                &text.as_deref(),
                &Some(date),
                &Some(ts),
                &Some(iv),
                &Some(n),
                &(i % 5 != 0).then_some(big),
            ],
        )
        .unwrap();
    }
    let sent_before_finish = !buf.is_empty();
    e.finish(&mut buf).unwrap();
    assert!(sent_before_finish, "a full batch goes out before finish");
    let batches = sent_batches(&buf);
    assert_eq!(
        batches
            .iter()
            .map(RecordBatch::num_rows)
            .collect::<Vec<_>>(),
        [BATCH_ROWS, 10]
    );
    for (k, batch) in batches.iter().enumerate() {
        for r in [0, 1, 2, 3, 5, batch.num_rows() - 1] {
            let i = (k * BATCH_ROWS + r) as i32;
            let col = |n: &str| batch.column_by_name(n).unwrap();
            assert_eq!(col("id").as_primitive::<Int32Type>().value(r), i);
            assert_eq!(col("b").as_boolean().value(r), i % 2 == 0);
            let txt = col("txt").as_string::<i32>();
            assert_eq!(txt.is_null(r), i % 3 == 0, "row {i}");
            if i % 3 != 0 {
                assert_eq!(txt.value(r), format!("r{i}"));
            }
            assert_eq!(col("d").as_primitive::<Date32Type>().value(r), -1);
            assert_eq!(
                col("ts")
                    .as_primitive::<TimestampMicrosecondType>()
                    .value(r),
                946_684_799_999_999
            );
            assert_eq!(
                col("iv")
                    .as_primitive::<IntervalMonthDayNanoType>()
                    .value(r),
                IntervalMonthDayNano::new(1, -2, i64::from(i) * 1000)
            );
            assert_eq!(
                col("n").as_primitive::<Decimal128Type>().value(r),
                i128::from(i) * -101
            );
            let big = col("big").as_primitive::<Decimal128Type>();
            assert_eq!(big.is_null(r), i % 5 == 0);
            if i % 5 != 0 {
                assert_eq!(big.value(r), i128::from(i) * 10i128.pow(25));
            }
        }
    }
}

#[test]
fn failures_are_typed_and_leave_no_trace() {
    let table = table();
    let mut e = RowEncoder::with_sink(&table, ArrowRows::new(&table).unwrap()).unwrap();
    let mut buf = BytesMut::new();
    let none = None::<i32>;
    let cases: Vec<(Vec<&dyn ToHyperBinary>, RowErrorKind)> = vec![
        (
            vec![&none, &none, &none, &none, &none, &none, &none, &none],
            RowErrorKind::NullInNotNull,
        ),
        (vec![&1i32], RowErrorKind::ColumnCount),
    ];
    for (values, want) in cases {
        match e.add_row(&mut buf, &values) {
            Err(Error::InvalidRow { kind, .. }) => assert_eq!(kind, want),
            other => panic!("{want:?}: {other:?}"),
        }
    }
    // Half a row, then a bad value: all of it is taken back.
    e.add(&mut buf, &2i32).unwrap();
    e.add(&mut buf, &Some(true)).unwrap();
    assert!(e.add(&mut buf, &5i64).is_err());
    e.add_row(
        &mut buf,
        &[
            &3i32,
            &none,
            &Some("only"),
            &none,
            &none,
            &none,
            &none,
            &none,
        ],
    )
    .unwrap();
    e.finish(&mut buf).unwrap();
    let batch = sent_batches(&buf).remove(0);
    assert_eq!(batch.num_rows(), 1);
    assert_eq!(batch.column(0).as_primitive::<Int32Type>().value(0), 3);
    assert_eq!(batch.column(2).as_string::<i32>().value(0), "only");
    assert_eq!(batch.column(1).null_count(), 1);
}

/// A batch with a value Arrow cannot carry is held back as exactly the
/// HyperBinary rows the HyperBinary wire would send, and the inserter
/// is told at once (`frame_full`); the next batch goes as Arrow again.
#[test]
fn a_batch_arrow_cannot_carry_is_held_as_hyperbinary() {
    let table = table();
    let mut e = RowEncoder::with_sink(&table, ArrowRows::new(&table).unwrap()).unwrap();
    let mut hb = RowEncoder::new(&table).unwrap();
    let (mut buf, mut want) = (BytesMut::new(), BytesMut::new());
    hb.start_stream(&mut want);
    let huge = Interval::new(0, 0, i64::MAX / 10);
    let latest: Timestamp = "294276-12-31 23:59:59.999999".parse().unwrap();
    let n = Some(Numeric::new(12_345, 2).unwrap());
    let big = Some(Numeric::new(7, 0).unwrap());
    let none = None::<i32>;
    let rows: [[&dyn ToHyperBinary; 8]; 3] = [
        [
            &1i32,
            &Some(true),
            &Some("a"),
            &none,
            &none,
            &none,
            &n,
            &none,
        ],
        [
            &2i32,
            &none,
            &none,
            &none,
            &Some(latest),
            &none,
            &none,
            &none,
        ],
        [&3i32, &none, &Some(""), &none, &none, &Some(huge), &n, &big],
    ];
    // A whole batch, with the latest timestamp in its second row.
    for i in 0..BATCH_ROWS {
        let row = &rows[i.min(2) % 2];
        e.add_row(&mut buf, row).unwrap();
        hb.add_row(&mut want, row).unwrap();
        assert_eq!(e.frame_full(&buf), i == BATCH_ROWS - 1, "row {i}");
    }
    let held = e.take_held().unwrap();
    assert!(!e.frame_full(&buf), "taken");
    assert_eq!(held.rows, BATCH_ROWS as u64);
    hb.close_frame(&mut want).unwrap();
    // `want`: CopyData frames of the flush threshold; the first holds
    // the 19-byte header.
    let frames = unframe(&want);
    assert_eq!(&held.data[..], &frames[19..]);
    assert!(buf.is_empty(), "nothing went as Arrow");
    // The huge interval: its batch (the last, one row) too.
    e.add_row(&mut buf, &rows[2]).unwrap();
    e.finish(&mut buf).unwrap();
    assert_eq!(e.take_held().map(|h| h.rows), Some(1));
    // Then a row Arrow carries, in a new stream.
    buf.clear();
    e.add_row(&mut buf, &rows[0]).unwrap();
    e.finish(&mut buf).unwrap();
    assert!(e.take_held().is_none());
    let batch = sent_batches(&buf).remove(0);
    assert_eq!(batch.num_rows(), 1);
    assert_eq!(batch.column(0).as_primitive::<Int32Type>().value(0), 1);
    assert_eq!(e.rows(), BATCH_ROWS as u64 + 2);
}

#[test]
fn batches_reuse_their_column_memory() {
    let table = TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("v", SqlType::Double);
    let types = table.column_types();
    let mut sink = ArrowRows::new(&table).unwrap();
    let mut buf = BytesMut::new();
    let mut after_each = Vec::new();
    for batch in 0..3 {
        for i in 0..BATCH_ROWS {
            sink.put(&mut buf, 0, &types[0], &(i as i32)).unwrap();
            sink.put(&mut buf, 1, &types[1], &Some(f64::from(batch)))
                .unwrap();
            sink.end_row(&mut buf).unwrap();
        }
        let ids = &sink.columns[0].values;
        assert!(ids.is_empty(), "batch {batch} went out");
        after_each.push((ids.as_ptr(), ids.capacity()));
    }
    // The same allocation, large enough for a batch, every time.
    assert!(
        after_each.iter().all(|a| *a == after_each[0]),
        "{after_each:?}"
    );
    assert!(after_each[0].1 >= BATCH_ROWS * 4);
    // Reusing it did not touch what was sent.
    sink.finish(&mut buf).unwrap();
    let batches = sent_batches(&buf);
    assert_eq!(batches.len(), 3);
    for (n, batch) in batches.iter().enumerate() {
        let ids = batch.column(0).as_primitive::<Int32Type>();
        let v = batch.column(1).as_primitive::<Float64Type>();
        assert!(ids
            .values()
            .iter()
            .enumerate()
            .all(|(i, id)| *id == i as i32));
        assert!(v.values().iter().all(|x| *x == n as f64), "batch {n}");
    }
}
