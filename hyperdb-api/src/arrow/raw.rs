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
//!
//! hyperd checks no NOT NULL column of an Arrow COPY until the end, and
//! then fails it with XX001 "Arrow format corruption", naming nothing. The
//! record batch headers carry each column's null count, so a batch with
//! NULLs in a NOT NULL column is caught here, before any of it is sent;
//! only then is its body decoded, to name the first such row.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_ipc::writer::{write_message, DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_ipc::{root_as_message, MessageHeader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use super::ipc_messages::{Layout, CONTINUATION_MARKER};
use crate::error::{Error, Result, RowErrorKind};
use crate::table_definition::TableDefinition;

#[derive(Debug)]
enum State {
    /// Collecting a message's length prefix and flatbuffer header in `head`.
    Header,
    /// Passing body bytes through (`drop`: the message is not forwarded).
    Body { remaining: u64, drop: bool },
    /// Holding, not sending, the body of a record batch with NULLs in a
    /// NOT NULL column, to name the row once it is whole.
    Refused {
        remaining: u64,
        batch: Box<RefusedBatch>,
    },
}

/// A record batch on its way to [`Error::InvalidRow`].
#[derive(Debug)]
struct RefusedBatch {
    /// Its length prefix and flatbuffer header.
    head: Vec<u8>,
    prefix: usize,
    body: Vec<u8>,
    /// The field with NULLs, in the caller's schema.
    field: usize,
    /// Rows of the stream before this batch.
    rows_before: u64,
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
                State::Refused {
                    ref mut remaining,
                    ref mut batch,
                } if !input.is_empty() => {
                    let n = usize::try_from(*remaining).map_or(input.len(), |r| r.min(input.len()));
                    batch.body.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    *remaining -= n as u64;
                    if *remaining == 0 {
                        return Err(null_in_not_null(self.first_schema.as_ref(), batch));
                    }
                }
                State::Body { .. } | State::Refused { .. } => return Ok(()),
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
                let rows_before = self.rows;
                self.rows += u64::try_from(batch.length())
                    .map_err(|_| corrupt("a negative row count".into()))?;
                if let Some(field) = self.nulls_in_not_null(batch) {
                    // The header goes with the batch: nothing more of this
                    // stream is sent.
                    let held = RefusedBatch {
                        head,
                        prefix,
                        body: Vec::new(),
                        field,
                        rows_before,
                    };
                    if body == 0 {
                        return Err(null_in_not_null(self.first_schema.as_ref(), &held));
                    }
                    self.state = State::Refused {
                        remaining: body,
                        batch: Box::new(held),
                    };
                    return Ok(());
                }
            }
            other => {
                return Err(corrupt(format!(
                    "{other:?} messages are not supported (hyperd takes no dictionaries)"
                )))
            }
        }
        if !drop {
            emit_current_framing(&head, prefix, emit);
        }
        self.head = head;
        self.head.clear();
        self.state = match body {
            0 => State::Header,
            remaining => State::Body { remaining, drop },
        };
        Ok(())
    }

    /// The first field the sent schema makes NOT NULL whose node in
    /// `batch` counts NULLs. Nodes list every field depth-first.
    fn nulls_in_not_null(&self, batch: arrow_ipc::RecordBatch<'_>) -> Option<usize> {
        let schema = self.sent_schema.as_ref()?;
        let nodes = batch.nodes()?;
        let mut node = 0;
        for (i, field) in schema.fields().iter().enumerate() {
            if node >= nodes.len() {
                return None;
            }
            if !field.is_nullable() && nodes.get(node).null_count() > 0 {
                return Some(i);
            }
            node += field_nodes(field);
        }
        None
    }
}

/// Emits a message header (`prefix` bytes of length prefix, then the
/// flatbuffer) in the current framing, which the schema message sent
/// before it started and the only one hyperd reads: a pre-1.0 header (a
/// bare 4-byte length, as pyarrow's `use_legacy_format` and arrow-rs's
/// `write_legacy_ipc_format` write) gets the continuation marker, and 4
/// bytes of padding after its flatbuffer so that the body stays where the
/// writer aligned it, on 8 bytes.
fn emit_current_framing(head: &[u8], prefix: usize, emit: &mut dyn FnMut(&[u8])) {
    if prefix == 8 {
        emit(head);
        return;
    }
    let meta = &head[prefix..];
    // A header of at most `MAX_HEADER` bytes (`Layout::of`): it fits.
    let len = u32::try_from(meta.len() + 4).unwrap_or(u32::MAX);
    emit(&CONTINUATION_MARKER);
    emit(&len.to_le_bytes());
    emit(meta);
    emit(&[0; 4]);
}

/// The error for a whole batch with NULLs in a NOT NULL column: its first
/// NULL row, read by decoding the batch with the caller's (nullable)
/// `schema`; if it cannot be decoded, the batch's first row and its range.
fn null_in_not_null(schema: Option<&Schema>, batch: &RefusedBatch) -> Error {
    let column = schema.map(|s| s.field(batch.field).name().clone());
    let (row, message) = match first_null_row(schema, batch) {
        Some(row) => (row, "NULL; nothing was inserted".to_owned()),
        None => (
            0,
            format!(
                "NULLs in record batch rows {}.. (the batch could not be decoded to \
                 name the row); nothing was inserted",
                batch.rows_before
            ),
        ),
    };
    Error::InvalidRow {
        row: batch.rows_before + row as u64,
        column,
        kind: RowErrorKind::NullInNotNull,
        message,
    }
}

/// The row of the first NULL of `batch`'s refused field, decoding it with
/// the caller's schema.
fn first_null_row(schema: Option<&Schema>, batch: &RefusedBatch) -> Option<usize> {
    let message = root_as_message(&batch.head[batch.prefix..]).ok()?;
    let header = message.header_as_record_batch()?;
    let body = arrow_buffer::Buffer::from(batch.body.as_slice());
    let decoded = arrow_ipc::reader::read_record_batch(
        &body,
        header,
        Arc::new(schema?.clone()),
        &HashMap::new(),
        None,
        &message.version(),
    )
    .ok()?;
    let column = decoded.column(batch.field);
    (0..column.len()).find(|&i| column.is_null(i))
}

/// How many field nodes `field` takes in a record batch header: its own
/// and its children's.
fn field_nodes(field: &Field) -> usize {
    1 + match field.data_type() {
        DataType::List(child)
        | DataType::LargeList(child)
        | DataType::ListView(child)
        | DataType::LargeListView(child)
        | DataType::FixedSizeList(child, _)
        | DataType::Map(child, _) => field_nodes(child),
        DataType::Struct(children) => children.iter().map(|c| field_nodes(c)).sum(),
        DataType::Union(children, _) => children.iter().map(|(_, c)| field_nodes(c)).sum(),
        DataType::RunEndEncoded(ends, values) => field_nodes(ends) + field_nodes(values),
        _ => 0,
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

    /// One stream of batches whose `id` (NOT NULL in the table) holds these.
    fn stream_of(batches: &[&[Option<i32>]]) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("v", DataType::Int32, true),
        ]));
        let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
        for ids in batches {
            let id = Arc::new(Int32Array::from(ids.to_vec()));
            let v = Arc::new(Int32Array::from(vec![7; ids.len()]));
            w.write(&RecordBatch::try_new(schema.clone(), vec![id, v]).unwrap())
                .unwrap();
        }
        w.finish().unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn a_null_in_a_not_null_column_is_named_before_its_batch_is_sent() {
        let good: &[Option<i32>] = &[Some(1), Some(2), Some(3)];
        let input = stream_of(&[good, &[Some(4), Some(5), None, Some(6)]]);
        let (clean, _) = run(&stream_of(&[good]), usize::MAX).unwrap();
        for step in [1, 5, 64, input.len()] {
            let mut f = IpcFramer::new();
            let mut out = Vec::new();
            let e = input
                .chunks(step)
                .try_for_each(|piece| f.push(&table(), piece, &mut |b| out.extend_from_slice(b)))
                .unwrap_err();
            let Error::InvalidRow {
                row, column, kind, ..
            } = &e
            else {
                panic!("step {step}: {e:?}");
            };
            assert_eq!(
                (*row, column.as_deref(), kind),
                (5, Some("id"), &RowErrorKind::NullInNotNull)
            );
            assert_eq!(e.sqlstate(), "23502");
            // The refused batch sent nothing: what went out is the first
            // batch alone (the clean stream less its end-of-stream marker).
            assert!(clean.starts_with(&out), "step {step}");
            assert_eq!(out.len(), clean.len(), "step {step}");
        }
        // NULLs in a nullable column pass through.
        let nullable = TableDefinition::new("t")
            .with_not_null_column("id", SqlType::Int)
            .with_column("v", SqlType::Int);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("v", DataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(Int32Array::from(vec![None, Some(3)])),
            ],
        )
        .unwrap();
        let mut w = StreamWriter::try_new(Vec::new(), &schema).unwrap();
        w.write(&batch).unwrap();
        let bytes = w.into_inner().unwrap();
        let mut f = IpcFramer::new();
        f.push(&nullable, &bytes, &mut |_| {}).unwrap();
        assert_eq!(f.rows(), 2);
    }

    #[test]
    fn nested_fields_take_a_node_per_child() {
        let leaf = |n: &str| Field::new(n, DataType::Int32, true);
        let pair = DataType::Struct(vec![leaf("a"), leaf("b")].into());
        let list = Field::new(
            "l",
            DataType::List(Arc::new(Field::new("item", pair, true))),
            true,
        );
        assert_eq!(field_nodes(&leaf("x")), 1);
        assert_eq!(field_nodes(&list), 4);
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
