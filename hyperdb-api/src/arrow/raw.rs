//! Caller-supplied Arrow IPC stream bytes, checked and passed through
//! without decoding the data. (Into a table with VARCHAR(n)/CHAR(n)
//! columns `ArrowEncoder` decodes them instead, to check the values.)
//!
//! Only the message headers are parsed: enough to check the schema against
//! the table before anything is sent, to count rows for the row-count
//! check, and to keep the COPY one IPC stream. hyperd silently ignores
//! everything after the first end-of-stream marker (a second stream's rows
//! are lost while it reports success), so end-of-stream markers are dropped
//! here, and a repeated stream with the same schema continues the first
//! (with or without an end-of-stream marker before it).

use std::sync::Arc;

use arrow_ipc::writer::{write_message, DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_ipc::{root_as_message, MessageHeader};
use arrow_schema::{ArrowError, Schema, SchemaRef};

use super::ipc_messages::Layout;
use crate::error::{Error, Result};
use crate::table_definition::TableDefinition;

#[derive(Debug)]
enum State {
    /// Collecting a message's length prefix and flatbuffer header in `head`.
    Header,
    /// Passing body bytes through (`drop`: the message is not forwarded).
    Body { remaining: u64, drop: bool },
}

/// Parses IPC stream framing incrementally; see the module docs.
#[derive(Debug)]
pub(crate) struct IpcFramer {
    state: State,
    head: Vec<u8>,
    /// The caller's first schema, to recognise it when repeated.
    first_schema: Option<Schema>,
    /// The schema declared to hyperd, once the first schema was checked.
    sent_schema: Option<Schema>,
    after_eos: bool,
    rows: u64,
}

impl IpcFramer {
    pub(crate) fn new() -> IpcFramer {
        IpcFramer {
            state: State::Header,
            head: Vec::with_capacity(1024),
            first_schema: None,
            sent_schema: None,
            after_eos: false,
            rows: 0,
        }
    }

    /// Rows in the record batches seen so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The schema sent to hyperd, if a schema message has been seen.
    pub(crate) fn sent_schema(&self) -> Option<&Schema> {
        self.sent_schema.as_ref()
    }

    /// Feeds `input`; `emit` receives the bytes to send, in order. On error
    /// some bytes may have been emitted already: the COPY must be aborted.
    pub(crate) fn push(
        &mut self,
        table: &TableDefinition,
        mut input: &[u8],
        emit: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        loop {
            match self.state {
                State::Body { remaining, drop } if !input.is_empty() => {
                    let n = usize::try_from(remaining).map_or(input.len(), |r| r.min(input.len()));
                    if !drop {
                        emit(&input[..n]);
                    }
                    input = &input[n..];
                    self.state = match remaining - n as u64 {
                        0 => State::Header,
                        remaining => State::Body { remaining, drop },
                    };
                }
                State::Body { .. } => return Ok(()),
                // The framing is read as the decoder reads it (`Layout`).
                State::Header => match Layout::of(&self.head).map_err(invalid)? {
                    Layout::Need(_) if input.is_empty() => return Ok(()),
                    Layout::Need(want) => {
                        let n = (want - self.head.len()).min(input.len());
                        self.head.extend_from_slice(&input[..n]);
                        input = &input[n..];
                    }
                    Layout::End(_) => {
                        self.after_eos = true;
                        self.head.clear();
                    }
                    Layout::Message {
                        prefix_len,
                        body_len,
                        ..
                    } => self.on_message(table, prefix_len, body_len as u64, emit)?,
                },
            }
        }
    }

    /// Errors unless the input ended between messages.
    pub(crate) fn finish(&self) -> Result<()> {
        match self.state {
            State::Header if self.head.is_empty() => Ok(()),
            _ => Err(corrupt("the stream ends inside a message".into())),
        }
    }

    /// A complete header is in `head`: check it, forward it, set up the body.
    fn on_message(
        &mut self,
        table: &TableDefinition,
        prefix: usize,
        body: u64,
        emit: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        let head = std::mem::take(&mut self.head);
        let meta = &head[prefix..];
        let message = root_as_message(meta)
            .map_err(|e| corrupt(format!("unreadable message header: {e}")))?;
        let mut drop = false;
        match message.header_type() {
            MessageHeader::Schema => {
                let fb = message
                    .header_as_schema()
                    .ok_or_else(|| corrupt("a schema message without a schema".into()))?;
                let schema = arrow_ipc::convert::try_fb_to_schema(fb)?;
                if let Some(first) = &self.first_schema {
                    // The start of another stream, whether or not the last
                    // one was ended: it continues this one if it matches.
                    if *first != schema {
                        return Err(Error::invalid_argument(
                            "Arrow IPC stream",
                            "a second stream with a different schema follows the first",
                        ));
                    }
                } else {
                    let sent = super::encoder::ingest_schema(table, &schema)?.0;
                    emit(&encode_schema(&sent)?);
                    self.first_schema = Some(schema);
                    self.sent_schema = Some(sent);
                }
                drop = true;
                self.after_eos = false;
            }
            MessageHeader::RecordBatch => {
                if self.first_schema.is_none() || self.after_eos {
                    return Err(corrupt("a record batch before the schema".into()));
                }
                let batch = message
                    .header_as_record_batch()
                    .ok_or_else(|| corrupt("a record batch message without a header".into()))?;
                self.rows += u64::try_from(batch.length())
                    .map_err(|_| corrupt("a negative row count".into()))?;
            }
            other => {
                return Err(corrupt(format!(
                    "{other:?} messages are not supported (hyperd takes no dictionaries)"
                )))
            }
        }
        if !drop {
            emit(&head);
        }
        self.head = head;
        self.head.clear();
        self.state = match body {
            0 => State::Header,
            remaining => State::Body { remaining, drop },
        };
        Ok(())
    }
}

/// The schema of the schema message at the head of `bytes` (an IPC
/// stream's start): how a binding's Arrow library says what its batches'
/// buffers hold (see [`crate::arrow::batch_from_arrow_parts`]).
pub fn decode_schema(bytes: &[u8]) -> Result<SchemaRef> {
    Ok(Arc::new(arrow_ipc::convert::try_schema_from_ipc_buffer(
        bytes,
    )?))
}

/// One schema message, framed as in an IPC stream: what an Arrow reader
/// needs to know a schema without any batch (bindings hand it to their
/// language's Arrow library once per result, then the batches' buffers).
pub fn encode_schema(schema: &Schema) -> Result<Vec<u8>> {
    let options = IpcWriteOptions::default();
    let encoded = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
        schema,
        &mut DictionaryTracker::new(false),
        &options,
    );
    let mut out = Vec::new();
    write_message(&mut out, encoded, &options)?;
    Ok(out)
}

/// `Layout::of`'s error, worded as this module's.
fn invalid(e: ArrowError) -> Error {
    match e {
        ArrowError::IpcError(message) => corrupt(message),
        other => Error::Arrow(other),
    }
}

fn corrupt(message: String) -> Error {
    Error::Arrow(ArrowError::IpcError(format!(
        "invalid Arrow IPC stream: {message}"
    )))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, RecordBatch};
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field};

    use super::*;
    use crate::types::SqlType;

    fn table() -> TableDefinition {
        TableDefinition::new("t")
            .with_not_null_column("id", SqlType::Int)
            .with_column("v", SqlType::Int)
    }

    fn stream(rows: &[i32], eos: bool) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("v", DataType::Int32, true),
        ]));
        let col = Arc::new(Int32Array::from(rows.to_vec()));
        let batch = RecordBatch::try_new(schema.clone(), vec![col.clone(), col]).unwrap();
        let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
        w.write(&batch).unwrap();
        if eos {
            w.finish().unwrap();
        }
        w.into_inner().unwrap()
    }

    /// Feeds `input` in pieces of `step` bytes; returns what was emitted.
    fn run(input: &[u8], step: usize) -> Result<(Vec<u8>, u64)> {
        let mut f = IpcFramer::new();
        let mut out = Vec::new();
        for piece in input.chunks(step) {
            f.push(&table(), piece, &mut |b| out.extend_from_slice(b))?;
        }
        f.finish()?;
        Ok((out, f.rows()))
    }

    #[test]
    fn any_split_gives_the_same_bytes() {
        let input = stream(&[1, 2, 3], true);
        let (whole, rows) = run(&input, input.len()).unwrap();
        assert_eq!(rows, 3);
        for step in [1, 3, 7, 64] {
            assert_eq!(run(&input, step).unwrap().0, whole, "step {step}");
        }
        // The end-of-stream marker is dropped; the schema is ours (NOT NULL id).
        assert!(!whole.ends_with(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
        let mut decoder = arrow_ipc::reader::StreamDecoder::new();
        let mut buf = arrow_buffer::Buffer::from(whole);
        let batch = decoder.decode(&mut buf).unwrap().unwrap();
        assert!(!batch.schema().field(0).is_nullable());
        assert_eq!(batch.num_rows(), 3);
    }

    #[test]
    fn repeated_streams_become_one() {
        let mut input = stream(&[1, 2], true);
        input.extend(stream(&[3], true));
        input.extend(stream(&[4, 5, 6], false));
        let (out, rows) = run(&input, 5).unwrap();
        assert_eq!(rows, 6);
        let mut decoder = arrow_ipc::reader::StreamDecoder::new();
        let mut buf = arrow_buffer::Buffer::from(out);
        let mut total = 0;
        while !buf.is_empty() {
            if let Some(b) = decoder.decode(&mut buf).unwrap() {
                total += b.num_rows();
            }
        }
        assert_eq!(total, 6, "one stream carrying every batch");
    }

    #[test]
    fn bad_input_is_refused() {
        let input = stream(&[1], true);
        let e = run(&input[..input.len() - 12], 100).unwrap_err();
        assert!(e.to_string().contains("ends inside a message"), "{e}");
        let e = run(b"garbage!garbage!", 4).unwrap_err();
        assert!(matches!(e, Error::Arrow(_)), "{e}");
        let other = TableDefinition::new("t").with_column("x", SqlType::Int);
        let mut f = IpcFramer::new();
        let e = f.push(&other, &input, &mut |_| {}).unwrap_err();
        assert!(matches!(e, Error::SchemaMismatch { .. }), "{e}");
    }
}
