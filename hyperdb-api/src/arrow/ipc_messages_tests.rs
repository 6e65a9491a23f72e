use std::sync::Arc;

use arrow_array::{Decimal128Array, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};

use super::*;

/// A schema message, two batch messages and the end-of-stream marker.
fn stream() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "d",
        DataType::Decimal128(12, 2),
        false,
    )]));
    let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
    for n in [3, 1000] {
        let values = Decimal128Array::from_iter_values(0..n)
            .with_precision_and_scale(12, 2)
            .unwrap();
        w.write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap())
            .unwrap();
    }
    w.into_inner().unwrap()
}

/// Every frame of `bytes` fed in pieces of `step`, as (bytes, header length).
fn cut(bytes: &[u8], step: usize) -> Vec<Option<(Buffer, usize)>> {
    let mut m = IpcMessages::default();
    let mut out = Vec::new();
    for piece in bytes.chunks(step) {
        let mut input = Buffer::from(piece);
        while let Some(frame) = m.next(&mut input).unwrap() {
            out.push(match frame {
                Frame::Message(raw) => Some((raw.bytes, raw.header_len)),
                Frame::End => None,
            });
        }
        assert!(input.is_empty(), "a piece used up");
    }
    assert!(m.between_messages());
    out
}

#[test]
fn any_piece_size_gives_the_same_messages() {
    let bytes = stream();
    let whole = cut(&bytes, bytes.len());
    assert_eq!(whole.len(), 4);
    assert!(whole[3].is_none(), "the end-of-stream marker");
    let total: usize = whole.iter().flatten().map(|(b, _)| b.len()).sum();
    assert_eq!(total + 8, bytes.len());
    for step in [1, 3, 8, 100, 1000] {
        let pieces = cut(&bytes, step);
        let flat = |v: &[Option<(Buffer, usize)>]| -> Vec<Option<(Vec<u8>, usize)>> {
            v.iter()
                .map(|f| f.as_ref().map(|(b, h)| (b.to_vec(), *h)))
                .collect()
        };
        assert_eq!(flat(&pieces), flat(&whole), "step {step}");
    }
}

#[test]
fn a_message_in_one_piece_is_not_copied() {
    let bytes = stream();
    let mut input = Buffer::from(bytes.as_slice());
    let (start, end) = (
        input.as_ptr() as usize,
        input.as_ptr() as usize + input.len(),
    );
    let mut m = IpcMessages::default();
    while let Some(Frame::Message(raw)) = m.next(&mut input).unwrap() {
        let at = raw.bytes.as_ptr() as usize;
        assert!(
            at >= start && at + raw.bytes.len() <= end,
            "a slice of the input"
        );
    }
}

#[test]
fn a_body_gathered_from_pieces_starts_aligned() {
    let bytes = stream();
    for step in [1, 5, 13, 64] {
        for (b, header_len) in cut(&bytes, step).into_iter().flatten() {
            let body = b.as_ptr() as usize + header_len;
            assert_eq!(body % BODY_ALIGN, 0, "step {step}");
        }
    }
}

#[test]
fn the_old_four_byte_prefix_is_read() {
    let bytes = stream();
    // Without the continuation marker, each length stands alone.
    let mut old = Vec::new();
    let mut rest = &bytes[..];
    while rest.len() > 8 {
        let len = u32::from_le_bytes(rest[4..8].try_into().unwrap()) as usize;
        let message = arrow_ipc::root_as_message(&rest[8..8 + len]).unwrap();
        let total = 8 + len + message.bodyLength() as usize;
        old.extend_from_slice(&rest[4..total]);
        rest = &rest[total..];
    }
    old.extend_from_slice(&[0; 4]);
    let frames = cut(&old, 7);
    assert_eq!(frames.len(), 4);
    assert!(frames[3].is_none());
}

#[test]
fn an_absurd_header_length_is_an_error() {
    let mut bytes = vec![0xff; 4];
    bytes.extend_from_slice(&(MAX_HEADER as u32 + 1).to_le_bytes());
    let mut input = Buffer::from(bytes.as_slice());
    let e = IpcMessages::default().next(&mut input).unwrap_err();
    assert!(e.to_string().contains("header of"), "{e}");
}

#[test]
fn garbage_in_a_header_is_an_error() {
    let mut bytes = vec![0xff; 4];
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&[0xAB; 16]);
    let mut input = Buffer::from(bytes.as_slice());
    let e = IpcMessages::default().next(&mut input).unwrap_err();
    assert!(
        e.to_string().contains("unreadable IPC message header"),
        "{e}"
    );
}

#[test]
fn input_ending_inside_a_message_is_not_between_messages() {
    let bytes = stream();
    let mut m = IpcMessages::default();
    let mut input = Buffer::from(&bytes[..bytes.len() / 2]);
    while m.next(&mut input).unwrap().is_some() {}
    assert!(!m.between_messages());
}
