//! The backend message decoder (`protocol::backend::parse`) on arbitrary
//! bytes, fed whole and in arbitrary chunks: the messages, rows and error
//! must not depend on how the bytes were cut. Each block of `DataRow`s is
//! read every way the row readers read it, and they must agree.

use bytes::BytesMut;
use hyperdb_api_core::error::ErrorKind;
use hyperdb_api_core::protocol::backend::{parse, FieldSpan, Message, RowBlock};
use hyperdb_api_core::protocol::Limits;

use crate::alloc::{assert_bounded, peak_during};
use crate::{chunks, Input};

/// What the decoder made of a stream, with blocks of rows flattened to
/// rows (where one block ends depends on the cut).
#[derive(Debug, PartialEq)]
enum Event {
    Message(Message),
    /// One `DataRow`: its field count and its fields' bytes.
    Row {
        columns: usize,
        fields: Vec<u8>,
    },
    Error {
        kind: ErrorKind,
        message: String,
    },
    /// The stream ended inside a message, this many bytes of it received.
    Pending(usize),
}

pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let limits = limits(input.byte());
    let sizes = input.bytes(4);
    let stream = input.rest();
    let ((whole, cut), peak) = peak_during(|| {
        (
            decode(&[stream], &limits),
            decode(&chunks(stream, sizes, 1), &limits),
        )
    });
    assert_eq!(whole, cut, "cut as {sizes:?}");
    assert_bounded("backend::parse", peak, data.len());
}

/// The limits to decode with: the defaults, or small ones so that the
/// checks at the limits are reached.
fn limits(choice: u8) -> Limits {
    if choice & 1 == 0 {
        return Limits::default();
    }
    let control = usize::from(choice >> 1) * 4;
    Limits {
        max_control_message: control,
        max_data_message: control * 2,
    }
}

fn decode(chunks: &[&[u8]], limits: &Limits) -> Vec<Event> {
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match parse(&mut buf, limits) {
                Ok(Some(Message::DataRows(block))) => {
                    check_block(&block);
                    for row in 0..block.len() {
                        let fields = block.fields(row).expect("a row of the block");
                        events.push(Event::Row {
                            columns: block.columns(),
                            fields: fields.unread().to_vec(),
                        });
                    }
                }
                Ok(Some(message)) => events.push(Event::Message(message)),
                Ok(None) => break,
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
                    events.push(Event::Error {
                        kind: e.kind(),
                        message: e.to_string(),
                    });
                    return events;
                }
            }
        }
    }
    if !buf.is_empty() {
        events.push(Event::Pending(buf.len()));
    }
    events
}

/// Every row read by index (`index_row`, `index_all` + `value`), in order
/// (`next_field` + `finish`) and unchecked (`try_next_field`): the same
/// fields, and the same rows malformed.
fn check_block(block: &RowBlock) {
    let columns = block.columns();
    let all = block.index_all();
    assert_eq!(all.len(), block.len() * columns);
    let mut spans = vec![FieldSpan::default(); columns];
    for row in 0..block.len() {
        let indexed = block.index_row(row, &mut spans).map(|()| {
            spans
                .iter()
                .map(|&s| block.value(s).expect("an indexed span").map(<[u8]>::to_vec))
                .collect::<Vec<_>>()
        });
        let from_all: Option<Vec<_>> = all[row * columns..][..columns]
            .iter()
            .map(|&s| block.value(s).map(|v| v.map(<[u8]>::to_vec)))
            .collect();
        let mut fields = block.fields(row).expect("a row of the block");
        let in_order: Result<Vec<_>, _> = (0..columns)
            .map(|_| fields.next_field().map(|v| v.map(<[u8]>::to_vec)))
            .collect();
        let in_order = in_order.and_then(|values| fields.finish(0).map(|()| values));
        let mut fields = block.fields(row).expect("a row of the block");
        let unchecked: Option<Vec<_>> = (0..columns)
            .map(|_| fields.try_next_field().map(|v| v.map(<[u8]>::to_vec)))
            .collect();
        let unchecked = unchecked.filter(|_| fields.is_empty());
        match &indexed {
            Ok(values) => {
                assert_eq!(from_all.as_ref(), Some(values), "row {row}: index_all");
                assert_eq!(in_order.as_ref().ok(), Some(values), "row {row}: in order");
                assert_eq!(unchecked.as_ref(), Some(values), "row {row}: unchecked");
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
                if columns > 0 {
                    assert_eq!(from_all, None, "row {row}: index_all of a malformed row");
                }
                assert!(in_order.is_err(), "row {row}: read in order as well-formed");
                assert_eq!(unchecked, None, "row {row}: read unchecked as well-formed");
            }
        }
    }
}
