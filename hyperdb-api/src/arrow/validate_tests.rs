use std::sync::Arc;

use arrow_array::{
    make_array, Array, ArrayRef, BinaryArray, Int32Array, LargeStringArray, ListArray, StringArray,
};
use arrow_buffer::Buffer;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Field, Schema};
use bytes::Bytes;

use super::*;
use crate::arrow::ArrowDecoder;
use crate::arrow::EOS;

/// Array data of `ty` over `offsets` and `values`, not checked by arrow.
fn unchecked(ty: DataType, offsets: Buffer, values: &[u8], len: usize) -> ArrayData {
    // SAFETY: test data meant to be invalid; only `array` reads it, and it
    // calls `validate` (buffer sizes) before reading offsets or values.
    unsafe {
        ArrayData::new_unchecked(
            ty,
            len,
            Some(0),
            None,
            0,
            vec![offsets, Buffer::from(values)],
            vec![],
        )
    }
}

fn utf8_data(offsets: &[i32], values: &[u8]) -> ArrayData {
    let len = offsets.len().saturating_sub(1);
    unchecked(DataType::Utf8, Buffer::from_slice_ref(offsets), values, len)
}

fn err(data: &ArrayData) -> String {
    array(data).expect_err("invalid data accepted").to_string()
}

#[test]
fn valid_text_passes_ascii_or_not() {
    for (offsets, values) in [
        (&[0, 2, 2, 5][..], "abcde"),
        (&[0, 2, 3, 6, 10][..], "éa€😀"),
        (&[3, 3][..], "abc"),
        (&[][..], ""),
    ] {
        array(&utf8_data(offsets, values.as_bytes())).expect(values);
    }
    let large = LargeStringArray::from(vec![Some("ü"), None, Some("x")]);
    array(&large.to_data()).expect("large utf8");
}

#[test]
fn invalid_utf8_is_refused_with_arrows_message() {
    let e = err(&utf8_data(&[0, 1, 3], b"a\xff\xfe"));
    assert!(e.contains("Invalid UTF8 sequence at string index 1"), "{e}");
}

#[test]
fn an_offset_inside_a_character_is_refused() {
    // "é" is two bytes; an offset between them cuts it.
    let e = err(&utf8_data(&[0, 1, 2], "é".as_bytes()));
    assert!(e.contains("utf-8") || e.contains("UTF8"), "{e}");
}

#[test]
fn offsets_going_back_or_past_the_data_are_refused() {
    let e = err(&utf8_data(&[0, 3, 2, 4], b"abcd"));
    assert!(e.contains("non-monotonic"), "{e}");
    let e = err(&utf8_data(&[0, 2, 9], b"abcd"));
    assert!(e.contains("out of bounds") || e.contains("offset"), "{e}");
    let e = err(&utf8_data(&[-1, 2], b"abcd"));
    assert!(e.contains("offset"), "{e}");
    let offsets = Buffer::from_slice_ref([0i64, 5, 1]);
    let e = err(&unchecked(DataType::LargeUtf8, offsets, b"abcde", 2));
    assert!(e.contains("non-monotonic"), "{e}");
}

#[test]
fn binary_offsets_are_checked_and_values_are_not() {
    let ok = BinaryArray::from(vec![&b"\xff\x00"[..], b""]);
    array(&ok.to_data()).expect("any bytes");
    let offsets = Buffer::from_slice_ref([0i32, 4, 3]);
    let e = err(&unchecked(
        DataType::Binary,
        offsets,
        b"\xff\xfe\xfd\xfc",
        2,
    ));
    assert!(e.contains("non-monotonic"), "{e}");
}

#[test]
fn a_short_offsets_buffer_is_refused_before_it_is_read() {
    // Three values need four offsets.
    let data = utf8_data(&[0, 1, 2], b"abc").into_builder().len(3);
    // SAFETY: test data meant to be invalid; `array` checks it first.
    let e = err(&unsafe { data.build_unchecked() });
    assert!(e.contains("isn't large enough"), "{e}");
}

#[test]
fn a_wrong_null_count_is_refused() {
    // Two values, the second NULL (validity bits 0b01), declared with two.
    // SAFETY: test data meant to be invalid; `array` checks it first.
    let data = unsafe {
        ArrayData::new_unchecked(
            DataType::Utf8,
            2,
            Some(2),
            Some(Buffer::from([0b01u8])),
            0,
            vec![Buffer::from_slice_ref([0i32, 1, 1]), Buffer::from(b"a")],
            vec![],
        )
    };
    let e = err(&data);
    assert!(e.contains("null_count"), "{e}");
}

#[test]
fn children_are_checked() {
    let child = utf8_data(&[0, 1, 3], b"a\xff\xfe");
    let list_type = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    // SAFETY: test data meant to be invalid; `array` checks it first.
    let list = unsafe {
        ArrayData::new_unchecked(
            list_type,
            1,
            Some(0),
            None,
            0,
            vec![Buffer::from_slice_ref([0i32, 2])],
            vec![child],
        )
    };
    let e = err(&list);
    assert!(e.contains("child #0 invalid"), "{e}");
    let good =
        ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(vec![Some(vec![
            Some(1),
        ])]);
    array(&good.to_data()).expect("valid list");
}

#[test]
fn a_batch_names_the_bad_column_and_checks_lengths() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let bad: ArrayRef = make_array(utf8_data(&[0, 1, 3], b"a\xff\xfe"));
    let ids: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    // SAFETY: test data meant to be invalid; `batch` checks it first.
    let b = unsafe { RecordBatch::new_unchecked(schema.clone(), vec![ids.clone(), bad], 2) };
    let e = batch(&b).expect_err("bad text").to_string();
    assert!(e.contains("column 1 (`name`)"), "{e}");
    let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
    // SAFETY: as above.
    let b = unsafe { RecordBatch::new_unchecked(schema.clone(), vec![ids.clone(), names], 2) };
    batch(&b).expect_err("a column longer than the batch");
    let nulls: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
    let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    // SAFETY: as above.
    let b = unsafe { RecordBatch::new_unchecked(schema, vec![nulls, names], 2) };
    batch(&b).expect_err("a NULL in a NOT NULL column");
}

/// The decoder, which skips arrow's validation, refuses invalid text
/// coming over the wire, and takes valid text whole.
#[test]
fn the_decoder_refuses_invalid_text_from_the_server() {
    let schema = Arc::new(Schema::new(vec![Field::new("t", DataType::Utf8, true)]));
    let text: ArrayRef = Arc::new(StringArray::from(vec!["plain", "MARK€", "end"]));
    let good = RecordBatch::try_new(schema.clone(), vec![text]).unwrap();
    let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
    w.write(&good).unwrap();
    let mut bytes = w.into_inner().unwrap();
    // As hyperd sends it: no end-of-stream marker.
    bytes.truncate(bytes.len() - EOS.len());

    let decode = |bytes: Vec<u8>| {
        let mut d = ArrowDecoder::default();
        d.push(Bytes::from(bytes));
        let first = d.next_batch()?;
        d.end_input().map(|()| first)
    };
    let ok = decode(bytes.clone()).unwrap().expect("a batch");
    assert_eq!(ok, good);

    // The same stream with the euro sign's last byte turned into 0xFF.
    let at = bytes
        .windows(4)
        .position(|w| w == "MARK".as_bytes())
        .unwrap()
        + 6;
    assert_eq!(bytes[at], 0xAC);
    let mut bad = bytes;
    bad[at] = 0xFF;
    let e = decode(bad).expect_err("invalid UTF-8 decoded").to_string();
    assert!(e.contains("Invalid UTF8"), "{e}");
}
