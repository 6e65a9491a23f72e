//! Large rows and batch boundaries: Arrow rows crossing 64Ki-row batches
//! intact, and values past hyperd's 150 MiB message limit refused before
//! they are sent (HyperBinary) or sent as Arrow.

use std::time::{Duration, Instant};

use hyperdb_api::error::RowErrorKind;
use hyperdb_api::types::{Interval, Numeric, SqlType};
use hyperdb_api::{Connection, Error, InsertFormat, Inserter, TableDefinition};

use crate::common::{db_with_table, temp_dir, within};

/// Rows sent as Arrow cross batch boundaries (64Ki rows) intact: rejected
/// rows and abandoned half rows leave no value behind in any column, NULL
/// text keeps the offsets in step, and an INTERVAL Arrow cannot carry is a
/// typed error for that row alone.
#[test]
fn arrow_rows_cross_batches_intact() {
    let dir = temp_dir();
    let table = TableDefinition::new("wide")
        .with_not_null_column("id", SqlType::Int)
        .with_column("t", SqlType::Text)
        .with_column("iv", SqlType::Interval)
        .with_not_null_column("n", SqlType::numeric(10, 2).unwrap());
    let mut c = db_with_table(&dir, "wide.hyper", &table);
    let mut ins = Inserter::with_format(&mut c, &table, InsertFormat::ArrowStream).unwrap();
    let n: i32 = 150_000;
    let num = Numeric::new(125, 2).unwrap();
    let (mut want_len, mut want_texts) = (0i64, 0i64);
    for id in 0..n {
        let text = (id % 7 != 0).then(|| "é".repeat((id % 5) as usize));
        let iv = Interval {
            months: 0,
            days: id % 3,
            micros: i64::from(id),
        };
        if id % 1000 == 0 {
            // Fails at the last column: three values to take back.
            let e = ins
                .add_row(&[&id, &text.as_deref(), &Some(iv), &"not a number"])
                .unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::InvalidRow {
                        kind: RowErrorKind::WrongType,
                        ..
                    }
                ),
                "{e:?}"
            );
        }
        if id % 1001 == 0 {
            ins.add(&id).unwrap();
            ins.add(&text.as_deref()).unwrap();
            assert!(ins.add(&5i32).is_err(), "INT into INTERVAL");
        }
        if id == 70_000 {
            // Refused at the third column: two values to take back. (An
            // interval too long for Arrow is stored: insert_arrow_range.rs.)
            let e = ins
                .add_row(&[&id, &None::<&str>, &"1 day", &num])
                .unwrap_err();
            match e {
                Error::InvalidRow { kind, column, .. } => {
                    assert_eq!(kind, RowErrorKind::WrongType);
                    assert_eq!(column.as_deref(), Some("iv"));
                }
                other => panic!("{other:?}"),
            }
        }
        if let Some(t) = &text {
            want_len += t.chars().count() as i64;
            want_texts += 1;
        }
        ins.add_row(&[&id, &text.as_deref(), &Some(iv), &num])
            .unwrap();
    }
    assert_eq!(ins.execute().unwrap(), n as u64);
    let stats = "SELECT count(*), count(t), sum(length(t)), sum(id::bigint), \
                 sum(extract(day from iv))::bigint, sum(n)::text FROM wide";
    let mut rows = c.execute_query(stats).unwrap();
    let row = rows.next().unwrap().unwrap();
    assert_eq!(row.try_get::<i64>(0).unwrap(), i64::from(n));
    assert_eq!(row.try_get::<i64>(1).unwrap(), want_texts);
    assert_eq!(row.try_get::<i64>(2).unwrap(), want_len);
    assert_eq!(
        row.try_get::<i64>(3).unwrap(),
        i64::from(n) * i64::from(n - 1) / 2
    );
    assert_eq!(
        row.try_get::<i64>(4).unwrap(),
        (0..i64::from(n)).map(|i| i % 3).sum::<i64>()
    );
    assert_eq!(row.try_get::<String>(5).unwrap(), "187500.00");
    drop(rows);
    // Spot check one row's exact values on the far side of a batch boundary.
    let mut rows = c
        .execute_query("SELECT t, iv FROM wide WHERE id = 65537")
        .unwrap();
    let row = rows.next().unwrap().unwrap();
    assert_eq!(
        row.try_get::<Option<String>>(0).unwrap().as_deref(),
        Some("éé")
    );
    assert_eq!(
        row.try_get::<Interval>(1).unwrap(),
        Interval {
            months: 0,
            days: 65537 % 3,
            micros: 65537
        }
    );
}

/// More than hyperd's 150 MiB CopyData limit.
const OVERSIZED: usize = 160 << 20;
/// Less than the limit, but more than it with a flush threshold's worth of
/// rows in front.
const NEARLY_OVERSIZED: usize = 149 << 20;

fn blobs() -> TableDefinition {
    TableDefinition::new("blobs")
        .with_not_null_column("id", SqlType::Int)
        .with_column("b", SqlType::Bytea)
}

fn blob_stats(c: &mut Connection) -> (i64, Option<i64>) {
    let mut rows = c
        .query_as::<(i64, Option<i64>)>("SELECT count(*), max(length(b))::BIGINT FROM blobs")
        .unwrap();
    rows.next().unwrap().unwrap()
}

/// hyperd refuses a CopyData message over 150 MiB (54000) and then reads
/// the rest of it as new messages: the session is out of step and the
/// next request hangs. A HyperBinary row that large can go in no frame, so
/// it is refused before any of it is sent, naming row and column; the
/// insert goes on without it and the connection stays in step. A row that
/// fits alone but not behind the rows already framed gets a frame of its
/// own.
#[test]
fn oversized_hyperbinary_rows_are_refused_before_they_are_sent() {
    within(Duration::from_secs(240), || {
        let dir = temp_dir();
        let mut c = db_with_table(&dir, "huge.hyper", &blobs());
        let mut ins = Inserter::with_format(&mut c, &blobs(), InsertFormat::HyperBinary).unwrap();
        ins.add_row(&[&1i32, &Some(vec![1u8; 10])]).unwrap();
        let started = Instant::now();
        let e = ins
            .add_row(&[&2i32, &Some(vec![2u8; OVERSIZED])])
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "refused at once"
        );
        match &e {
            Error::InvalidRow {
                row: 1,
                column: Some(column),
                kind: RowErrorKind::TooLarge,
                ..
            } if column == "b" => {}
            other => panic!("not the oversized row's error: {other:?}"),
        }
        assert_eq!(e.sqlstate(), "54000", "{e}");
        assert!(e.to_string().contains("column `b`"), "{e}");
        ins.add_row(&[&3i32, &Some(vec![3u8; 20])]).unwrap();
        assert_eq!(ins.execute().unwrap(), 2);
        assert_eq!(blob_stats(&mut c), (2, Some(20)), "nothing of row 1");

        // A frame that would grow past the limit is split before the row.
        let mut ins = Inserter::with_format(&mut c, &blobs(), InsertFormat::HyperBinary).unwrap();
        for id in 10..13 {
            ins.add_row(&[&id, &Some(vec![0u8; 1 << 20])]).unwrap();
        }
        ins.add_row(&[&13i32, &Some(vec![4u8; NEARLY_OVERSIZED])])
            .unwrap();
        assert_eq!(ins.execute().unwrap(), 4);
        assert_eq!(blob_stats(&mut c), (6, Some(NEARLY_OVERSIZED as i64)));
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    });
}

/// Arrow streams are cut into frames anywhere, so an Arrow insert (the
/// row inserters' default) stores a value of any size hyperd takes.
#[test]
fn oversized_values_go_in_as_arrow() {
    within(Duration::from_secs(240), || {
        let dir = temp_dir();
        let mut c = db_with_table(&dir, "huge_arrow.hyper", &blobs());
        let mut ins = Inserter::with_format(&mut c, &blobs(), InsertFormat::ArrowStream).unwrap();
        ins.add_row(&[&1i32, &Some(vec![1u8; OVERSIZED])]).unwrap();
        assert_eq!(ins.execute().unwrap(), 1);
        assert_eq!(blob_stats(&mut c), (1, Some(OVERSIZED as i64)));
    });
}
