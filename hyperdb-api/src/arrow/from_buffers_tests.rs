use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date64Type, Decimal128Type, Float64Type, Int32Type, Int64Type, IntervalMonthDayNanoType,
};
use arrow_array::Array;
use arrow_schema::SchemaRef;

use super::{batch_from_buffers, ColumnBuffer, ColumnInput};
use crate::error::{Error, RowErrorKind};
use crate::types::SqlType;
use crate::TableDefinition;

fn schema(table: &TableDefinition) -> SchemaRef {
    Arc::new(crate::arrow::arrow_schema(table).unwrap())
}

fn le<T: Copy, const N: usize>(values: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| f(v)).collect()
}

fn utf16(values: &[&str]) -> (Vec<u16>, Vec<u32>) {
    let mut units = Vec::new();
    let mut offsets = vec![0u32];
    for v in values {
        units.extend(v.encode_utf16());
        offsets.push(units.len() as u32);
    }
    (units, offsets)
}

fn fixed(bytes: &[u8]) -> ColumnInput<'_> {
    ColumnInput {
        values: ColumnBuffer::Fixed(bytes),
        validity: None,
    }
}

fn row_error(e: Error) -> (u64, Option<String>, RowErrorKind) {
    match e {
        Error::InvalidRow {
            row, column, kind, ..
        } => (row, column, kind),
        other => panic!("expected InvalidRow, got {other:?}"),
    }
}

#[test]
fn fixed_width_text_and_nulls() {
    let table = TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("v", SqlType::Double)
        .with_column("big", SqlType::BigInt)
        .with_column("name", SqlType::Text)
        .with_column("ok", SqlType::Bool)
        .with_column("day", SqlType::Date);
    let ids = le(&[1i32, 2, 3], i32::to_le_bytes);
    let vs = le(&[0.5f64, -1.0, 0.0], f64::to_le_bytes);
    let bigs = le(&[i64::MIN, 0, i64::MAX], i64::to_le_bytes);
    let (units, offsets) = utf16(&["a", "", "żółw 🐢"]);
    let days = le(&[0i64, 86_400_000, -86_400_000], i64::to_le_bytes);
    let validity = [1u8, 0, 1];
    let columns = [
        fixed(&ids),
        ColumnInput {
            values: ColumnBuffer::Fixed(&vs),
            validity: Some(&validity),
        },
        fixed(&bigs),
        ColumnInput {
            values: ColumnBuffer::Utf16 {
                units: &units,
                offsets: &offsets,
            },
            validity: Some(&validity),
        },
        fixed(&[1, 0, 7]),
        fixed(&days),
    ];
    let batch = batch_from_buffers(&schema(&table), 3, 0, &columns).unwrap();
    assert_eq!(batch.num_rows(), 3);
    assert_eq!(
        batch.column(0).as_primitive::<Int32Type>().values(),
        &[1, 2, 3]
    );
    let v = batch.column(1).as_primitive::<Float64Type>();
    assert!(v.is_null(1) && v.value(0) == 0.5 && v.value(2) == 0.0);
    assert_eq!(
        batch.column(2).as_primitive::<Int64Type>().values(),
        &[i64::MIN, 0, i64::MAX]
    );
    let names = batch.column(3).as_string::<i32>();
    assert_eq!(
        (names.value(0), names.is_null(1), names.value(2)),
        ("a", true, "żółw 🐢")
    );
    let ok = batch.column(4).as_boolean();
    assert!(ok.value(0) && !ok.value(1) && ok.value(2));
    assert_eq!(
        batch.column(5).as_primitive::<Date64Type>().values(),
        &[0, 86_400_000, -86_400_000]
    );
}

#[test]
fn numeric_is_exact_or_an_error() {
    let table = TableDefinition::new("t").with_column("n", SqlType::numeric(5, 2).unwrap());
    let s = schema(&table);
    let (units, offsets) = utf16(&["123.4", "-0.01", "999.99"]);
    let input = [ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &offsets,
        },
        validity: None,
    }];
    let batch = batch_from_buffers(&s, 3, 0, &input).unwrap();
    assert_eq!(
        batch.column(0).as_primitive::<Decimal128Type>().values(),
        &[12340, -1, 99999]
    );
    for (bad, kind) in [
        ("1.001", RowErrorKind::OutOfRange),
        ("1000", RowErrorKind::OutOfRange),
        ("1e3", RowErrorKind::OutOfRange),
        ("1e", RowErrorKind::InvalidText),
        ("abc", RowErrorKind::InvalidText),
        ("12.3.4", RowErrorKind::InvalidText),
        ("", RowErrorKind::InvalidText),
        ("1e40", RowErrorKind::OutOfRange),
    ] {
        let (units, offsets) = utf16(&["1", bad]);
        let input = [ColumnInput {
            values: ColumnBuffer::Utf16 {
                units: &units,
                offsets: &offsets,
            },
            validity: None,
        }];
        let err = batch_from_buffers(&s, 2, 10, &input).unwrap_err();
        assert!(
            err.to_string().contains(&format!("'{bad}'")) || err.to_string().contains(bad),
            "{err}"
        );
        assert_eq!(row_error(err), (11, Some("n".into()), kind), "{bad}");
    }
}

#[test]
fn interval_micros_become_nanos() {
    let table = TableDefinition::new("t").with_column("i", SqlType::Interval);
    let mut bytes = Vec::new();
    bytes.extend(1i32.to_le_bytes());
    bytes.extend((-2i32).to_le_bytes());
    bytes.extend(3_000_001i64.to_le_bytes());
    let batch = batch_from_buffers(&schema(&table), 1, 0, &[fixed(&bytes)]).unwrap();
    let v = batch
        .column(0)
        .as_primitive::<IntervalMonthDayNanoType>()
        .value(0);
    assert_eq!((v.months, v.days, v.nanoseconds), (1, -2, 3_000_001_000));
}

#[test]
fn lone_surrogate_is_refused_with_its_row() {
    let table = TableDefinition::new("t").with_column("s", SqlType::Text);
    let units = [0x61u16, 0xD800, 0x62];
    let offsets = [0u32, 1, 3];
    let input = [ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &offsets,
        },
        validity: None,
    }];
    let err = batch_from_buffers(&schema(&table), 2, 5, &input).unwrap_err();
    assert!(err.to_string().contains("D800"), "{err}");
    assert_eq!(
        row_error(err),
        (6, Some("s".into()), RowErrorKind::WrongType)
    );
}

#[test]
fn wrong_sizes_and_kinds_are_refused() {
    let table = TableDefinition::new("t").with_column("id", SqlType::Int);
    let s = schema(&table);
    // 3 rows need 12 bytes.
    let short = [0u8; 8];
    let err = batch_from_buffers(&s, 3, 0, &[fixed(&short)]).unwrap_err();
    assert_eq!(row_error(err).2, RowErrorKind::ColumnCount);
    // Text for an INT column.
    let (units, offsets) = utf16(&["1"]);
    let text = ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &offsets,
        },
        validity: None,
    };
    let err = batch_from_buffers(&s, 1, 0, &[text]).unwrap_err();
    assert_eq!(row_error(err).2, RowErrorKind::WrongType);
    // NULL in the NOT NULL column `id` of `fixed_width_text_and_nulls`.
    let table = TableDefinition::new("t").with_not_null_column("id", SqlType::Int);
    let ids = [0u8; 8];
    let nulls = ColumnInput {
        values: ColumnBuffer::Fixed(&ids),
        validity: Some(&[1, 0]),
    };
    let err = batch_from_buffers(&schema(&table), 2, 7, &[nulls]).unwrap_err();
    assert_eq!(
        row_error(err),
        (8, Some("id".into()), RowErrorKind::NullInNotNull)
    );
    // No columns at all.
    let err = batch_from_buffers(&s, 1, 0, &[]).unwrap_err();
    assert_eq!(row_error(err).2, RowErrorKind::ColumnCount);
    // Offsets past the data.
    let table = TableDefinition::new("t").with_column("b", SqlType::Bytea);
    let bad = ColumnInput {
        values: ColumnBuffer::Binary {
            data: b"ab",
            offsets: &[0, 3],
        },
        validity: None,
    };
    assert!(batch_from_buffers(&schema(&table), 1, 0, &[bad]).is_err());
}

#[test]
fn null_numeric_and_text_slots_are_not_parsed() {
    let table = TableDefinition::new("t")
        .with_column("n", SqlType::numeric(10, 2).unwrap())
        .with_column("s", SqlType::Text);
    let (units, offsets) = utf16(&["", "2"]);
    let text = ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &offsets,
        },
        validity: Some(&[0, 1]),
    };
    let batch = batch_from_buffers(&schema(&table), 2, 0, &[text, text]).unwrap();
    let n = batch.column(0).as_primitive::<Decimal128Type>();
    assert!(n.is_null(0) && n.value(1) == 200);
    assert!(batch.column(1).is_null(0));
}

#[test]
fn time_of_day_must_be_below_midnight() {
    let table = TableDefinition::new("t").with_column("t", SqlType::Time);
    let ok = le(&[0i64, 86_399_999_999, 86_400_000_000], i64::to_le_bytes);
    let null_midnight = ColumnInput {
        values: ColumnBuffer::Fixed(&ok),
        validity: Some(&[1, 1, 0]),
    };
    assert!(batch_from_buffers(&schema(&table), 3, 0, &[null_midnight]).is_ok());
    let err = batch_from_buffers(&schema(&table), 3, 4, &[fixed(&ok)]).unwrap_err();
    assert_eq!(
        row_error(err),
        (6, Some("t".into()), RowErrorKind::DateTimeOutOfRange)
    );
}

/// A row count the buffers do not back is refused before anything is
/// sized by it: text and NUMERIC columns reserved their values by the row
/// count first (the `arrow` fuzz target: 18 GB reserved for 37 bytes of
/// input; a larger count overflowed the reservation and panicked).
#[test]
fn a_row_count_the_buffers_do_not_back_allocates_nothing() {
    let (units, offsets) = utf16(&["1.5"]);
    let column = ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &offsets,
        },
        validity: None,
    };
    for ty in [SqlType::Text, SqlType::numeric(10, 2).unwrap()] {
        let schema = schema(&TableDefinition::new("t").with_column("c", ty));
        for rows in [usize::MAX / 2, u32::MAX as usize] {
            let e = batch_from_buffers(&schema, rows, 0, &[column]).unwrap_err();
            let (_, name, kind) = row_error(e);
            assert_eq!(name.as_deref(), Some("c"), "{ty}");
            assert_eq!(kind, RowErrorKind::ColumnCount, "{ty}");
        }
        let batch = batch_from_buffers(&schema, 1, 0, &[column]).unwrap();
        assert_eq!(batch.num_rows(), 1);
    }
    // Fixed widths: a count whose byte size overflows is refused too.
    let schema = schema(&TableDefinition::new("t").with_column("i", SqlType::BigInt));
    let e = batch_from_buffers(&schema, usize::MAX / 2, 0, &[fixed(&[0; 8])]).unwrap_err();
    assert_eq!(row_error(e).2, RowErrorKind::ColumnCount);
}

/// Text may come as its UTF-8 bytes (the Node inserter's ASCII batches):
/// the same column as from UTF-16, and a value that is not UTF-8 on its
/// own is refused by its row.
#[test]
fn text_from_utf8_bytes() {
    let table = TableDefinition::new("t").with_column("s", SqlType::Text);
    let s = schema(&table);
    let words = ["ab", "", "é😀", "x"];
    let data: Vec<u8> = words.concat().into_bytes();
    let mut offsets = vec![0u32];
    for w in words {
        offsets.push(offsets.last().unwrap() + w.len() as u32);
    }
    let bytes = ColumnInput {
        values: ColumnBuffer::Binary {
            data: &data,
            offsets: &offsets,
        },
        validity: Some(&[1, 1, 1, 0]),
    };
    let (units, units_at) = utf16(&words);
    let text = ColumnInput {
        values: ColumnBuffer::Utf16 {
            units: &units,
            offsets: &units_at,
        },
        validity: Some(&[1, 1, 1, 0]),
    };
    let from_bytes = batch_from_buffers(&s, 4, 0, &[bytes]).unwrap();
    assert_eq!(from_bytes, batch_from_buffers(&s, 4, 0, &[text]).unwrap());
    assert_eq!(from_bytes.column(0).as_string::<i32>().value(2), "é😀");
    // Offsets that start past 0 are taken as they are.
    let shifted = ColumnInput {
        values: ColumnBuffer::Binary {
            data: b"..abc",
            offsets: &[2, 3, 5],
        },
        validity: None,
    };
    let batch = batch_from_buffers(&s, 2, 0, &[shifted]).unwrap();
    assert_eq!(batch.column(0).as_string::<i32>().value(1), "bc");
    // Bytes that are no UTF-8, and a value cut inside a character (whole,
    // the bytes are UTF-8): each refused naming its row.
    let cases: [(&[u8], &[u32], u64); 2] = [
        (b"ok\xff", &[0, 2, 3], 11),
        ("aé".as_bytes(), &[0, 2, 3], 11),
    ];
    for (data, offsets, row) in cases {
        let bad = ColumnInput {
            values: ColumnBuffer::Binary { data, offsets },
            validity: None,
        };
        let err = batch_from_buffers(&s, 2, 10, &[bad]).unwrap_err();
        assert_eq!(
            row_error(err),
            (row, Some("s".into()), RowErrorKind::InvalidText)
        );
    }
}
