//! Tests of `data.rs`'s checks (no server). Apart from it because the
//! dig-deeper benches include `data.rs` by path, without a test harness.

use crate::data::{row, sum_tenths, tenths, Answer, Check, Query, Span};

/// Row `id` as four columns, `n` rows from `start`.
fn columns(start: i32, n: i32) -> (Vec<i32>, Vec<i32>, Vec<f64>, Vec<i64>) {
    let rows: Vec<_> = (start..start + n).map(row).collect();
    (
        rows.iter().map(|r| r.0).collect(),
        rows.iter().map(|r| r.1).collect(),
        rows.iter().map(|r| r.2).collect(),
        rows.iter().map(|r| r.3).collect(),
    )
}

#[test]
fn the_columnar_check_is_the_row_check() {
    // Ids near the top of a 10M-row table, over several 1024-value
    // chunks and a remainder.
    let (ids, sensors, values, ts) = columns(9_990_001, 5_761);
    let mut by_rows = Check::default();
    for i in 0..ids.len() {
        by_rows.add(ids[i], Some(sensors[i]), Some(values[i]), Some(ts[i]));
    }
    let mut by_columns = Check::default();
    let half = ids.len() / 2;
    by_columns.add_columns(&ids[..half], &sensors[..half], &values[..half], &ts[..half]);
    by_columns.add_columns(&ids[half..], &sensors[half..], &values[half..], &ts[half..]);
    assert_eq!(by_columns, by_rows);
    assert_eq!(by_rows.sum_tenths, by_rows.sum_id);
    assert_eq!(by_rows.sampled, 360);
    assert_eq!(by_rows.bad, 0);
    assert_eq!(
        sum_tenths(&values),
        values.iter().map(|&v| tenths(v)).sum::<i64>()
    );
}

#[test]
fn a_wrong_value_fails_the_check() {
    let span = Span::new(0, 64);
    let Answer::Scan(want) = Query::FullScan.expected(span) else {
        panic!("a scan's answer")
    };
    for (id, column) in [(32, 1), (32, 2), (32, 3), (33, 1), (33, 2), (33, 3)] {
        let (ids, mut sensors, mut values, mut ts) = columns(0, 64);
        let i = id as usize;
        match column {
            1 => sensors[i] += 1,
            2 => values[i] += 0.1,
            _ => ts[i] += 1,
        }
        // Sampled (32): the row is bad; unsampled (33): the sums differ.
        let fails = |got: &Check| *got != want && (id == 33 || got.bad == 1);
        let mut by_columns = Check::default();
        by_columns.add_columns(&ids, &sensors, &values, &ts);
        assert!(fails(&by_columns), "columns: {id} {column}");
        let mut by_rows = Check::default();
        for i in 0..ids.len() {
            by_rows.add(ids[i], Some(sensors[i]), Some(values[i]), Some(ts[i]));
        }
        assert!(fails(&by_rows), "rows: {id} {column}");
    }
    let mut null = Check::default();
    null.add(7, Some(7), None, Some(row(7).3));
    assert_eq!(null.sum_tenths, -1);
}
