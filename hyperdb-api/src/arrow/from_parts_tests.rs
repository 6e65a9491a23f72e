use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int64Type};
use arrow_array::{
    Array, BinaryArray, BooleanArray, Decimal128Array, Int32Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::{batch_from_arrow_parts, ArrowParts};
use crate::arrow::{decode_schema, encode_schema};
use crate::error::Error;

/// A column's validity, offsets and values, owned.
type Held = (Option<Vec<u8>>, Option<Vec<i32>>, Vec<u8>);

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("n", DataType::Decimal128(20, 2), true),
        Field::new("x", DataType::Binary, false),
    ]))
}

fn source() -> RecordBatch {
    let i = Int32Array::from(vec![
        Some(1),
        None,
        Some(3),
        Some(4),
        None,
        Some(6),
        Some(7),
        Some(8),
        Some(9),
        Some(10),
    ]);
    let b = BooleanArray::from(vec![
        Some(true),
        Some(false),
        None,
        Some(true),
        Some(true),
        Some(false),
        Some(true),
        None,
        Some(false),
        Some(true),
    ]);
    let s = StringArray::from(vec![
        Some("a"),
        Some("ßé"),
        None,
        Some(""),
        Some("🦀"),
        Some("x"),
        Some("yy"),
        None,
        Some("zzz"),
        Some("end"),
    ]);
    let n = Decimal128Array::from(vec![
        Some(1),
        Some(-2),
        Some(i128::MAX / 10),
        None,
        Some(5),
        Some(6),
        Some(7),
        Some(8),
        Some(9),
        Some(10),
    ])
    .with_precision_and_scale(20, 2)
    .unwrap();
    let x = BinaryArray::from_vec(vec![
        b"", b"\x00", b"ab", b"c", b"d", b"e", b"f", b"g", b"h", b"i",
    ]);
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(i),
            Arc::new(b),
            Arc::new(s),
            Arc::new(n),
            Arc::new(x),
        ],
    )
    .unwrap()
}

/// The parts of `batch` as an Arrow library holds them (row 0 first).
fn parts(batch: &RecordBatch) -> Vec<Held> {
    batch
        .columns()
        .iter()
        .map(|a| {
            let validity = a.nulls().map(|n| n.buffer().as_slice().to_vec());
            match a.data_type() {
                DataType::Boolean => (
                    validity,
                    None,
                    a.as_boolean().values().inner().as_slice().to_vec(),
                ),
                DataType::Utf8 => {
                    let s = a.as_string::<i32>();
                    (
                        validity,
                        Some(s.value_offsets().to_vec()),
                        s.values().as_slice().to_vec(),
                    )
                }
                DataType::Binary => {
                    let s = a.as_binary::<i32>();
                    (
                        validity,
                        Some(s.value_offsets().to_vec()),
                        s.values().as_slice().to_vec(),
                    )
                }
                _ => (validity, None, a.to_data().buffers()[0].as_slice().to_vec()),
            }
        })
        .collect()
}

fn inputs(parts: &[Held]) -> Vec<ArrowParts<'_>> {
    parts
        .iter()
        .map(|(v, o, values)| ArrowParts {
            bit_offset: 0,
            validity: v.as_deref(),
            offsets: o.as_deref(),
            values,
        })
        .collect()
}

#[test]
fn whole_batch_and_every_slice_round_trip() {
    let batch = source();
    let held = parts(&batch);
    let whole = batch_from_arrow_parts(&batch.schema(), 0, 10, &inputs(&held)).unwrap();
    assert_eq!(whole, batch);
    // Every slice, at bit offsets that are and are not byte aligned.
    for first in 0..10 {
        for rows in 0..=10 - first {
            let got = batch_from_arrow_parts(&batch.schema(), first, rows, &inputs(&held)).unwrap();
            assert_eq!(
                got,
                batch.slice(first, rows),
                "rows {first}..{}",
                first + rows
            );
        }
    }
    let n = whole.column(3).as_primitive::<Decimal128Type>();
    assert_eq!(n.value(2), i128::MAX / 10);
}

#[test]
fn bit_offset_addresses_bitmaps_only() {
    // An apache-arrow slice at row 3: values start at its row 0, bitmaps
    // keep their bits and say where row 0 is.
    let batch = source();
    let held = parts(&batch);
    let sliced: Vec<_> = held
        .iter()
        .zip(batch.columns())
        .map(|((v, o, values), a)| match a.data_type() {
            DataType::Boolean => (v.clone(), None, values.clone()),
            DataType::Utf8 | DataType::Binary => (
                v.clone(),
                o.as_ref().map(|o| o[3..].to_vec()),
                values.clone(),
            ),
            dt => {
                let w = dt.primitive_width().unwrap();
                (v.clone(), None, values[3 * w..].to_vec())
            }
        })
        .collect();
    let mut columns = inputs(&sliced);
    for c in &mut columns {
        c.bit_offset = 3;
    }
    let got = batch_from_arrow_parts(&batch.schema(), 2, 4, &columns).unwrap();
    assert_eq!(got, batch.slice(5, 4));
}

#[test]
fn short_buffers_are_refused_by_name() {
    let schema = Arc::new(Schema::new(vec![Field::new("big", DataType::Int64, true)]));
    let values = 7i64.to_le_bytes().repeat(3);
    let col = ArrowParts {
        bit_offset: 0,
        validity: None,
        offsets: None,
        values: &values,
    };
    let ok = batch_from_arrow_parts(&schema, 1, 2, &[col]).unwrap();
    assert_eq!(
        ok.column(0).as_primitive::<Int64Type>().values().to_vec(),
        vec![7, 7]
    );
    let err = batch_from_arrow_parts(&schema, 2, 2, &[col]).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { what, message } if what.contains("big") && message.contains("2..4")),
        "{err}"
    );
    let bitmap = [0xffu8];
    let with_nulls = ArrowParts {
        validity: Some(&bitmap),
        bit_offset: 6,
        ..col
    };
    assert!(
        batch_from_arrow_parts(&schema, 0, 3, &[with_nulls]).is_err(),
        "bits 6..9 of one byte"
    );
    assert!(
        batch_from_arrow_parts(&schema, 0, 1, &[col, col]).is_err(),
        "two columns for one field"
    );
}

#[test]
fn bad_offsets_and_utf8_are_errors_not_undefined_behaviour() {
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let text = b"abc\xff";
    let cases: [(&[i32], &str); 4] = [
        (&[0, 3, 2], "offsets going back"),
        (&[0, 3, 9], "offsets past the bytes"),
        (&[0, 2, 4], "invalid UTF-8"),
        (&[0], "too few offsets"),
    ];
    for (offsets, what) in cases {
        let col = ArrowParts {
            bit_offset: 0,
            validity: None,
            offsets: Some(offsets),
            values: text,
        };
        assert!(
            batch_from_arrow_parts(&schema, 0, 2, &[col]).is_err(),
            "{what}"
        );
    }
    let col = ArrowParts {
        bit_offset: 0,
        validity: None,
        offsets: Some(&[0, 3]),
        values: text,
    };
    let ok = batch_from_arrow_parts(&schema, 0, 1, &[col]).unwrap();
    assert_eq!(ok.column(0).as_string::<i32>().value(0), "abc");
}

#[test]
fn types_without_a_flat_layout_are_refused() {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "d",
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        true,
    )]));
    let col = ArrowParts {
        bit_offset: 0,
        validity: None,
        offsets: None,
        values: &[0; 4],
    };
    let err = batch_from_arrow_parts(&schema, 0, 1, &[col]).unwrap_err();
    assert!(
        err.to_string().contains("cannot be taken from buffers"),
        "{err}"
    );
}

#[test]
fn schema_messages_round_trip() {
    let schema = schema();
    let message = encode_schema(&schema).unwrap();
    assert_eq!(*decode_schema(&message).unwrap(), *schema);
    assert!(decode_schema(&message[..6]).is_err());
}
