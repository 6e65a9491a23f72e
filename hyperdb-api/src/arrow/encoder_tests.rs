use arrow_array::{Int32Array, StringArray};
use arrow_ipc::reader::StreamDecoder;
use arrow_schema::Field;

use super::*;

fn table() -> TableDefinition {
    TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Varchar(3))
}

fn batch(ids: Vec<Option<i32>>, names: Vec<Option<&str>>, reversed: bool) -> RecordBatch {
    let id: ArrayRef = Arc::new(Int32Array::from(ids));
    let name: ArrayRef = Arc::new(StringArray::from(names));
    let (fields, columns) = if reversed {
        (
            vec![
                Field::new("name", DataType::Utf8, true),
                Field::new("id", DataType::Int32, true),
            ],
            vec![name, id],
        )
    } else {
        (
            vec![
                Field::new("id", DataType::Int32, true),
                Field::new("name", DataType::Utf8, true),
            ],
            vec![id, name],
        )
    };
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

use arrow_array::ArrayRef;

/// Unwraps the CopyData frames in `buf` into the IPC stream they carry.
pub(crate) fn unframe(buf: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        assert_eq!(buf[at], b'd');
        let len = i32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
        out.extend_from_slice(&buf[at + 5..at + 1 + len]);
        at += 1 + len;
    }
    out
}

fn decode_all(stream: Vec<u8>) -> (Vec<RecordBatch>, bool) {
    let mut decoder = StreamDecoder::new();
    let mut buf = Buffer::from(stream);
    let mut out = Vec::new();
    while !buf.is_empty() {
        if let Some(b) = decoder.decode(&mut buf).unwrap() {
            out.push(b);
        }
    }
    (out, decoder.finish().is_ok())
}

fn drain(enc: &mut ArrowEncoder, buf: &mut BytesMut, wire: &mut Vec<u8>) {
    while enc.write_pending(buf).unwrap() {
        wire.extend_from_slice(buf);
        buf.clear();
    }
}

#[test]
fn one_stream_in_bounded_frames() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    enc.set_flush_threshold(100);
    let (mut buf, mut wire) = (BytesMut::new(), Vec::new());
    for i in 0..10 {
        let b = batch(vec![Some(i); 20], vec![Some("ab"); 20], i % 2 == 1);
        enc.push_batch(&b).unwrap();
        drain(&mut enc, &mut buf, &mut wire);
        assert!(buf.len() < 100 + 5);
    }
    enc.finish().unwrap();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    assert_eq!(enc.rows(), 200);
    let stream = unframe(&wire);
    assert!(stream.ends_with(&EOS));
    let (batches, complete) = decode_all(stream);
    assert!(complete);
    assert_eq!(batches.len(), 10);
    let schema = batches[0].schema();
    assert!(!schema.field(0).is_nullable(), "NOT NULL declared");
    assert_eq!(schema.field(1).metadata()["hyper:max_string_length"], "3");
    // Field order of the first batch; later batches in another order are
    // sent in that same order.
    assert_eq!(schema.field(0).name(), "id");
    assert!(batches.iter().all(|b| b.schema() == schema));
}

#[test]
fn rejected_batches_leave_nothing_queued() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let mut buf = BytesMut::new();
    let e = enc
        .push_batch(&batch(vec![Some(1), None], vec![None, None], false))
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRow { row: 1, kind: RowErrorKind::NullInNotNull, column: Some(c), .. } if c == "id"),
        "{e}"
    );
    let e = enc
        .push_batch(&batch(
            vec![Some(1), Some(2)],
            vec![Some("äöü"), Some("abcd")],
            false,
        ))
        .unwrap_err();
    assert!(
        matches!(
            &e,
            Error::InvalidRow {
                row: 1,
                kind: RowErrorKind::OutOfRange,
                ..
            }
        ),
        "{e}"
    );
    assert!(!enc.write_pending(&mut buf).unwrap());
    assert!(buf.is_empty());
    assert_eq!(enc.rows(), 0);
    // Raw bytes cannot follow batches.
    enc.push_batch(&batch(vec![Some(1)], vec![None], false))
        .unwrap();
    assert!(enc.push_ipc(&[0xff; 8], &mut buf).is_err());
}

#[test]
fn no_batches_is_an_empty_stream() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let (mut buf, mut wire) = (BytesMut::new(), Vec::new());
    enc.finish().unwrap();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    let stream = unframe(&wire);
    let mut decoder = StreamDecoder::new();
    let mut b = Buffer::from(stream);
    assert!(decoder.decode(&mut b).unwrap().is_none());
    assert_eq!(decoder.schema().unwrap().fields().len(), 2);
    assert!(decoder.finish().is_ok(), "the schema, then end-of-stream");
}

#[test]
fn copy_statement_quotes_names() {
    let t = TableDefinition::new(crate::TableName::new("my t").with_schema("s\"x"))
        .with_column("a b", SqlType::Int);
    assert_eq!(
        copy_sql(&t).unwrap(),
        "COPY \"s\"\"x\".\"my t\" (\"a b\") FROM STDIN WITH (FORMAT ARROWSTREAM)"
    );
}
