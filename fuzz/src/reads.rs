//! A result row read every way the API reads one: by index as each Rust
//! type, and whole as tuples by each typed reader, which must agree.

use hyperdb_api::fuzzing::TypedReads;
use hyperdb_api::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use hyperdb_api::{Error, Row};

/// The tuples rows are read as: a plain one (fixed widths, read with the
/// types checked once per result) and a mixed one.
pub(crate) type Plain = (i32, Option<f64>, bool);
pub(crate) type Mixed = (Option<i64>, Option<String>, Option<Numeric>);

/// Each column of `row` as every Rust type `try_get` reads, rendered, so
/// that two routes to the same row can be compared. Every read ends in a
/// value or in a typed error.
pub(crate) fn read_row(row: &Row) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..row.len() {
        out.push(render(row.try_get::<Option<bool>>(i)));
        out.push(render(row.try_get::<Option<i16>>(i)));
        out.push(render(row.try_get::<Option<i32>>(i)));
        out.push(render(row.try_get::<Option<i64>>(i)));
        out.push(render(row.try_get::<Option<u32>>(i)));
        out.push(render(row.try_get::<Option<f32>>(i)));
        out.push(render(row.try_get::<Option<f64>>(i)));
        out.push(render(row.try_get::<Option<&str>>(i)));
        out.push(render(row.try_get::<Option<&[u8]>>(i)));
        out.push(render(row.try_get::<Option<Numeric>>(i)));
        out.push(render(row.try_get::<Option<Date>>(i)));
        out.push(render(row.try_get::<Option<Time>>(i)));
        out.push(render(row.try_get::<Option<Timestamp>>(i)));
        out.push(render(row.try_get::<Option<TimestampTz>>(i)));
        out.push(render(row.try_get::<Option<Interval>>(i)));
        out.push(render(row.try_get::<i64>(i)));
        out.push(render(row.raw(i).map(|r| r.map(<[u8]>::to_vec))));
    }
    let past = row.try_get::<Option<i32>>(row.len());
    assert!(
        matches!(past, Err(Error::ColumnNotFound { .. })),
        "{past:?}"
    );
    out
}

fn render<T: std::fmt::Debug>(read: hyperdb_api::Result<T>) -> String {
    match read {
        Ok(v) => format!("{v:?}"),
        Err(e) => {
            assert!(
                matches!(
                    e,
                    Error::Conversion { .. }
                        | Error::TypeMismatch { .. }
                        | Error::UnexpectedNull { .. }
                ),
                "untyped error from try_get: {e:?}"
            );
            format!("error: {e}")
        }
    }
}

/// The typed readers of one row agree: the error-free first read, when it
/// reads the row, reads what the checked read does, and the checked read
/// gives what `from_row` gives on the indexed row (the same value, or an
/// error of the same kind).
/// Values are compared as rendered: a NaN equals itself there.
pub(crate) fn agree<T: std::fmt::Debug>(reads: &TypedReads<T>) {
    if let Some(v) = &reads.unchecked {
        let checked = reads.checked.as_ref().map(|c| format!("{c:?}"));
        assert_eq!(checked.ok(), Some(format!("{v:?}")), "unchecked vs checked");
    }
    match (&reads.checked, &reads.by_index) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "checked vs from_row"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "checked vs from_row"),
        (a, b) => panic!("checked read {a:?}, from_row {b:?}"),
    }
}
