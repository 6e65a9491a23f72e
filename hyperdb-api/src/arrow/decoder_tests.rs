use arrow_array::{Int32Array, TimestampMicrosecondArray};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::TimeUnit;

use super::*;
use crate::arrow::EOS;

/// An IPC stream as hyperd sends it: no end-of-stream marker.
fn stream(batches: &[RecordBatch], schema: &Schema) -> Vec<u8> {
    let mut w = StreamWriter::try_new(Vec::new(), schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    // `into_inner` ends the stream; hyperd does not.
    let mut bytes = w.into_inner().unwrap();
    assert!(bytes.ends_with(&EOS));
    bytes.truncate(bytes.len() - EOS.len());
    bytes
}

fn ints(schema: &SchemaRef, values: Vec<i32>) -> RecordBatch {
    RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(values))]).unwrap()
}

/// Feeds `bytes` in pieces of `step`, then ends the input.
fn decode(bytes: &[u8], step: usize) -> (Option<SchemaRef>, Vec<RecordBatch>) {
    let mut d = ArrowDecoder::default();
    let mut out = Vec::new();
    for piece in bytes.chunks(step) {
        d.push(Bytes::copy_from_slice(piece));
        while let Some(b) = d.next_batch().unwrap() {
            out.push(b);
        }
    }
    d.end_input().unwrap();
    while let Some(b) = d.next_batch().unwrap() {
        out.push(b);
    }
    (d.schema().cloned(), out)
}

#[test]
fn schema_only_stream_yields_its_schema() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let bytes = stream(&[], &schema);
    let (got, batches) = decode(&bytes, bytes.len());
    assert_eq!(got.unwrap(), schema);
    assert!(batches.is_empty());
}

#[test]
fn any_framing_gives_the_same_batches() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let want = vec![
        ints(&schema, vec![1, 2]),
        ints(&schema, vec![]),
        ints(&schema, vec![3]),
    ];
    let bytes = stream(&want, &schema);
    for step in [1, 7, 64, bytes.len()] {
        let (got, batches) = decode(&bytes, step);
        assert_eq!(got.unwrap(), schema);
        assert_eq!(batches, want, "step {step}");
    }
    // An empty last batch (no body) still comes out.
    let tail = vec![ints(&schema, vec![4]), ints(&schema, vec![])];
    let bytes_tail = stream(&tail, &schema);
    assert_eq!(decode(&bytes_tail, bytes_tail.len()).1, tail);
    // A server that does end its stream: the extra marker is harmless.
    let mut ended = bytes.clone();
    ended.extend_from_slice(&EOS);
    assert_eq!(decode(&ended, 5).1, want);
}

/// A record batch whose values buffer claims more bytes than the message
/// body holds made arrow-ipc panic; the decoder reports an Arrow error
/// instead, whole or cut (the `arrow` fuzz target's finding).
#[test]
fn a_buffer_longer_than_its_body_is_an_error_not_a_panic() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
    let mut bytes = stream(&[ints(&schema, vec![1, 2, 3])], &schema);
    // The values buffer: offset 0, length 12, in the batch's metadata.
    let mut entry = [0u8; 16];
    entry[8] = 12;
    let at = bytes
        .windows(16)
        .position(|w| w == entry)
        .expect("the values buffer's entry");
    bytes[at + 8..at + 16].copy_from_slice(&0xffff_ffff_0000_0000u64.to_le_bytes());
    for step in [bytes.len(), 7] {
        let mut d = ArrowDecoder::default();
        let mut failed = None;
        for piece in bytes.chunks(step) {
            d.push(Bytes::copy_from_slice(piece));
            match d.next_batch() {
                Ok(_) => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let e = match failed {
            Some(e) => e,
            None => d
                .end_input()
                .and_then(|()| d.next_batch().map(drop))
                .unwrap_err(),
        };
        assert!(matches!(e, Error::Arrow(_)), "{e:?}");
        assert!(e.to_string().contains("past the message body"), "{e}");
    }
}

#[test]
fn truncated_stream_is_an_error() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let bytes = stream(&[ints(&schema, vec![1, 2, 3])], &schema);
    let mut d = ArrowDecoder::default();
    d.push(Bytes::copy_from_slice(&bytes[..bytes.len() - 4]));
    assert!(d.next_batch().unwrap().is_none());
    assert!(d.end_input().is_err());
}

#[test]
fn hyperd_utc_zone_is_rewritten() {
    let hyperd = Arc::new(Schema::new(vec![Field::new(
        "t",
        DataType::Timestamp(TimeUnit::Microsecond, Some("Utc".into())),
        true,
    )]));
    let batch = RecordBatch::try_new(
        hyperd.clone(),
        vec![Arc::new(
            TimestampMicrosecondArray::from(vec![Some(1), None]).with_timezone("Utc"),
        )],
    )
    .unwrap();
    let (schema, batches) = decode(&stream(&[batch], &hyperd), 1 << 20);
    let want = DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()));
    assert_eq!(schema.unwrap().field(0).data_type(), &want);
    assert_eq!(batches[0].column(0).data_type(), &want);
    assert_eq!(batches[0].column(0).null_count(), 1);
}

#[test]
fn dictionary_columns_decode() {
    use arrow_array::{types::Int32Type, Array, DictionaryArray};
    let values: DictionaryArray<Int32Type> = vec!["a", "b", "a", "é"].into_iter().collect();
    let schema = Arc::new(Schema::new(vec![Field::new(
        "d",
        values.data_type().clone(),
        false,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
    for step in [1, 1 << 20] {
        let (_, batches) = decode(&stream(std::slice::from_ref(&batch), &schema), step);
        assert_eq!(batches, vec![batch.clone()], "step {step}");
    }
}

#[test]
fn a_second_schema_or_a_message_after_the_end_is_an_error() {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let one = stream(&[ints(&schema, vec![1])], &schema);
    let feed = |bytes: Vec<u8>| {
        let mut d = ArrowDecoder::default();
        d.push(Bytes::from(bytes));
        let mut out = Vec::new();
        while let Some(b) = d.next_batch()? {
            out.push(b);
        }
        Ok::<_, Error>(out)
    };
    let twice = [one.clone(), one.clone()].concat();
    let e = feed(twice).unwrap_err();
    assert!(e.to_string().contains("a second schema message"), "{e}");
    let after_end = [one.clone(), EOS.to_vec(), one].concat();
    let e = feed(after_end).unwrap_err();
    assert!(
        e.to_string().contains("after the end-of-stream marker"),
        "{e}"
    );
}
