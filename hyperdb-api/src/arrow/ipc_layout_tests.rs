use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Decimal128Array, DictionaryArray, FixedSizeBinaryArray,
    Int64Array, LargeStringArray, RecordBatch, StringArray, StringViewArray, StructArray,
};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field};
use bytes::Bytes;

use crate::arrow::decoder::ArrowDecoder;
use crate::error::Error;

fn ipc(batch: &RecordBatch) -> Vec<u8> {
    let mut w = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    w.write(batch).unwrap();
    w.into_inner().unwrap()
}

/// Decodes `bytes` as a caller's input; the batches or the first error.
fn decode(bytes: &[u8]) -> Result<Vec<RecordBatch>, Error> {
    let mut d = ArrowDecoder::repeating();
    d.push(Bytes::copy_from_slice(bytes));
    let mut out = Vec::new();
    while let Some(b) = d.next_batch()? {
        out.push(b);
    }
    d.end_input()?;
    Ok(out)
}

/// `batch` as IPC bytes, with the declared length of buffer `index` of
/// its record batch message rewritten from `was` (asserted) to `now`.
fn with_buffer_length(batch: &RecordBatch, index: usize, was: i64, now: u64) -> Vec<u8> {
    let mut bytes = ipc(batch);
    // Each message: 0xFFFFFFFF, the metadata length, the metadata, the body.
    let schema_len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let start = 8 + schema_len + 8;
    let message = arrow_ipc::root_as_message(&bytes[start..]).unwrap();
    let entry = message
        .header_as_record_batch()
        .unwrap()
        .buffers()
        .unwrap()
        .get(index);
    assert_eq!(entry.length(), was);
    // The entry lies in `bytes`: its length field is its second 8 bytes.
    let at = std::ptr::from_ref(entry) as usize - bytes.as_ptr() as usize + 8;
    bytes[at..at + 8].copy_from_slice(&now.to_le_bytes());
    bytes
}

/// The error decoding `bytes` as a caller's input gives.
fn refusal(bytes: &[u8]) -> String {
    decode(bytes).unwrap_err().to_string()
}

fn batch_of(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

#[test]
fn well_formed_batches_of_every_layout_pass() {
    let mut list = ListBuilder::new(StringBuilder::new());
    list.values().append_value("a");
    list.append(true);
    list.append(false);
    list.values().append_value("bc");
    list.values().append_null();
    list.append(true);
    let strukt = StructArray::from(vec![
        (
            Arc::new(Field::new("x", DataType::Int64, true)),
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("y", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("p"), Some("q"), None])) as ArrayRef,
        ),
    ]);
    let dictionary: DictionaryArray<Int32Type> =
        vec![Some("x"), None, Some("x")].into_iter().collect();
    let full = batch_of(vec![
        (
            "bool",
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])) as ArrayRef,
        ),
        (
            "decimal",
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None, Some(-1)])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
        ),
        (
            "text",
            Arc::new(StringArray::from(vec![Some("één"), None, Some("")])),
        ),
        (
            "large",
            Arc::new(LargeStringArray::from(vec!["a", "b", "c"])),
        ),
        (
            "bytes",
            Arc::new(BinaryArray::from(vec![&b"\x00"[..], b"", b"xyz"])),
        ),
        (
            "view",
            Arc::new(StringViewArray::from(vec![
                Some("short"),
                None,
                Some("a string longer than twelve"),
            ])),
        ),
        (
            "fixed",
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(vec![[1u8, 2], [3, 4], [5, 6]].into_iter())
                    .unwrap(),
            ),
        ),
        ("list", Arc::new(list.finish())),
        ("struct", Arc::new(strukt)),
        ("dictionary", Arc::new(dictionary)),
    ]);
    for batch in [full.slice(0, 0), full.slice(1, 2), full] {
        let bytes = ipc(&batch);
        assert_eq!(decode(&bytes).unwrap(), vec![batch]);
    }
}

#[test]
fn a_values_buffer_shorter_than_its_rows_is_an_error_naming_the_column() {
    // Three NUMERIC(5,2) values need 48 bytes; the buffer says 16.
    let values = Decimal128Array::from(vec![1, 2, 3])
        .with_precision_and_scale(5, 2)
        .unwrap();
    let batch = batch_of(vec![("price", Arc::new(values) as ArrayRef)]);
    let bytes = with_buffer_length(&batch, 1, 48, 16);
    let e = decode(&bytes).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Arrow(_)), "{e:?}");
    assert!(
        text.contains("column `price`: a values buffer of 16 bytes where its rows need 48"),
        "{text}"
    );
}

#[test]
fn short_offsets_and_validity_are_errors() {
    let batch = batch_of(vec![(
        "name",
        Arc::new(StringArray::from(vec![
            Some("a"),
            None,
            Some("c"),
            Some("d"),
        ])) as ArrayRef,
    )]);
    // Validity (1 byte), 5 offsets of 4 bytes, the text.
    let text = refusal(&with_buffer_length(&batch, 1, 20, 12));
    assert!(
        text.contains("column `name`: an offsets buffer of 12 bytes where its rows need 20"),
        "{text}"
    );
    let text = refusal(&with_buffer_length(&batch, 0, 1, 0));
    assert!(
        text.contains("a validity buffer of 0 bytes where its rows need 1"),
        "{text}"
    );
}

#[test]
fn a_nested_field_is_named_with_its_column() {
    let strukt = StructArray::from(vec![(
        Arc::new(Field::new("inner", DataType::Int64, false)),
        Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
    )]);
    let batch = batch_of(vec![("outer", Arc::new(strukt) as ArrayRef)]);
    // The struct's validity, then the child's validity and values.
    let text = refusal(&with_buffer_length(&batch, 2, 16, 8));
    assert!(
        text.contains("column `outer` (its field `inner`): a values buffer of 8 bytes"),
        "{text}"
    );
}

#[test]
fn a_server_stream_is_checked_too() {
    let batch = batch_of(vec![(
        "n",
        Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
    )]);
    let mut d = ArrowDecoder::default();
    d.push(Bytes::from(with_buffer_length(&batch, 1, 24, 8)));
    let text = d.next_batch().unwrap_err().to_string();
    assert!(
        text.contains("column `n`: a values buffer of 8 bytes where its rows need 24"),
        "{text}"
    );
}
