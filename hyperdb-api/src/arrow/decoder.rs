//! Arrow IPC stream bytes, in pieces of any size, into record batches,
//! without I/O: the one decoder of every batch stream (PostgreSQL
//! protocol, sync and async, and gRPC).
//!
//! Each piece is an `arrow_buffer::Buffer` over received memory, and a
//! message that arrives in one piece is decoded in place: batches point
//! into what was received instead of a copy. [`IpcMessages`] cuts the
//! messages, arrow-ipc's `FileDecoder` decodes them with arrow's
//! validation off, and [`validate::batch`] checks every batch (the same
//! invariants, text in bulk) before it leaves.

use std::sync::Arc;

use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use arrow_ipc::{Block, MessageHeader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use bytes::Bytes;

use super::ipc_layout;
use super::ipc_messages::{Frame, IpcMessages, RawMessage};
use super::schema::UTC;
use super::validate;
use crate::error::{Error, Result};

/// Decodes IPC stream pieces into record batches; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct ArrowDecoder {
    messages: IpcMessages,
    /// Set by the schema message.
    decoder: Option<FileDecoder>,
    input: Buffer,
    /// The stream's schema as batches carry it (see `retyped`).
    schema: Option<SchemaRef>,
    /// Columns whose time zone is rewritten (hyperd's `"Utc"` -> [`UTC`]).
    retyped: Vec<(usize, DataType)>,
    /// A batch decoded while looking for the schema.
    ready: Option<RecordBatch>,
    /// An end-of-stream marker was read.
    eos: bool,
    /// The input ended; `end_input` ran.
    ended: bool,
    /// Nothing more comes out: the stream ended or failed.
    done: bool,
    /// Streams may follow each other (see [`ArrowDecoder::repeating`]).
    repeats: bool,
    /// The schema message's schema, as sent.
    first: Option<SchemaRef>,
}

impl ArrowDecoder {
    /// A decoder for a caller's IPC bytes into an insert, which may hold
    /// several streams of one schema in a row (as the raw pass-through
    /// takes them): a repeated schema message continues the stream, with
    /// or without an end-of-stream marker before it. Server results are
    /// one stream: there a second schema is an error.
    pub(crate) fn repeating() -> ArrowDecoder {
        ArrowDecoder {
            repeats: true,
            ..ArrowDecoder::default()
        }
    }

    pub(crate) fn schema(&self) -> Option<&SchemaRef> {
        self.schema.as_ref()
    }

    /// Hands over the next payload; call after `next_batch` returned `None`.
    pub(crate) fn push(&mut self, data: Bytes) {
        self.input = Buffer::from(data);
    }

    /// The next complete batch, or `None` when more input is needed.
    pub(crate) fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if let Some(batch) = self.ready.take() {
            return Ok(Some(batch));
        }
        while let Some(frame) = self.messages.next(&mut self.input)? {
            let message = match frame {
                Frame::Message(m) if !self.eos || self.repeats => {
                    self.eos = false;
                    m
                }
                Frame::Message(_) => {
                    return Err(ipc_error("a message after the end-of-stream marker"))
                }
                Frame::End => {
                    self.eos = true;
                    continue;
                }
            };
            if let Some(batch) = self.decode_caught(&message)? {
                return self.retype(batch).map(Some);
            }
        }
        Ok(None)
    }

    /// Like `next_batch`, but keeps the batch for later: for reading ahead
    /// to the schema.
    pub(crate) fn read_ahead(&mut self) -> Result<()> {
        if self.ready.is_none() {
            self.ready = self.next_batch()?;
        }
        Ok(())
    }

    /// The input ended: errors if it stopped inside a message. (hyperd
    /// sends no end-of-stream marker; none is needed.)
    pub(crate) fn end_input(&mut self) -> Result<()> {
        self.ended = true;
        if self.input.is_empty() && self.messages.between_messages() {
            Ok(())
        } else {
            Err(truncated())
        }
    }

    /// The stream's next item if it needs no more input: a batch, an
    /// error, or `None` at the end. `None` here means: push the next
    /// payload, or call `end_input` if there is none. The one read step of
    /// every batch stream.
    pub(crate) fn next_ready(&mut self) -> Option<Option<Result<RecordBatch>>> {
        if self.done {
            return Some(None);
        }
        match self.next_batch() {
            Ok(Some(batch)) => Some(Some(Ok(batch))),
            Ok(None) if self.ended => {
                self.done = true;
                Some(None)
            }
            Ok(None) => None,
            Err(e) => Some(Some(Err(self.fail(e)))),
        }
    }

    /// Ends the stream with `e` (from the decoder or from its source).
    pub(crate) fn fail(&mut self, e: Error) -> Error {
        self.done = true;
        e
    }

    /// Decodes `message`, a panic turned into the stream's error: arrow-ipc
    /// 60.1 panics on some malformed messages (a buffer declared longer
    /// than the message body: "the offset of the new Buffer cannot exceed
    /// the existing length", found by the `arrow` fuzz target; a values
    /// buffer shorter than its rows), and neither a server's bytes nor a
    /// caller's may panic the client. `ipc_layout` refuses the malformed
    /// sizes it knows of before arrow-ipc sees them; this catches what it
    /// does not (a dictionary batch's sizes). After a panic the
    /// decoder's state is unknown, so the rest of the input is dropped;
    /// every caller ends the stream on the error. (With `panic = "abort"`
    /// nothing can be caught.)
    fn decode_caught(&mut self, message: &RawMessage) -> Result<Option<RecordBatch>> {
        let decode = std::panic::AssertUnwindSafe(|| self.decode(message));
        match std::panic::catch_unwind(decode) {
            Ok(decoded) => decoded,
            Err(panic) => {
                self.input = Buffer::from(&[][..]);
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                let from = if self.repeats {
                    "in the input"
                } else {
                    "from the server"
                };
                Err(ipc_error(&format!(
                    "malformed Arrow IPC message {from}: {why}"
                )))
            }
        }
    }

    /// One message: the schema, a dictionary, or a checked batch.
    fn decode(&mut self, raw: &RawMessage) -> Result<Option<RecordBatch>> {
        let message = arrow_ipc::root_as_message(raw.metadata())
            .map_err(|e| ipc_error(&format!("unreadable IPC message header: {e}")))?;
        let block = Block::new(0, raw.header_len as i32, message.bodyLength());
        match (message.header_type(), &mut self.decoder) {
            (MessageHeader::Schema, None) => {
                let schema = Arc::new(schema_of(&message)?);
                // SAFETY: the flag lets arrow-ipc build arrays without
                // checking them. Until checked they are only constructed,
                // which slices buffers with bounds assertions (a panic,
                // caught in `decode_caught`) and reads no value. Each batch
                // goes through `validate::batch` (arrow's `validate_full`
                // and `RecordBatch::try_new` checks, text in bulk) below,
                // before anything can read it; tested in `validate_tests.rs`
                // and `decoder_tests.rs`, and by the `arrow` fuzz target.
                let decoder = unsafe {
                    FileDecoder::new(schema.clone(), message.version()).with_skip_validation(true)
                };
                self.decoder = Some(decoder);
                self.on_schema(&schema);
                self.first = Some(schema);
                Ok(None)
            }
            (MessageHeader::Schema, Some(_)) if self.repeats => {
                if self.first.as_deref() == Some(&schema_of(&message)?) {
                    Ok(None)
                } else {
                    Err(ipc_error("a stream with another schema than the first"))
                }
            }
            (MessageHeader::Schema, Some(_)) => Err(ipc_error("a second schema message")),
            (MessageHeader::DictionaryBatch, Some(decoder)) => {
                if let Some(dictionary) = message.header_as_dictionary_batch() {
                    ipc_layout::check_dictionary_batch(dictionary, raw.body_len())?;
                }
                decoder.read_dictionary(&block, &raw.bytes)?;
                Ok(None)
            }
            (MessageHeader::RecordBatch, Some(decoder)) => {
                if let (Some(batch), Some(schema)) = (message.header_as_record_batch(), &self.first)
                {
                    let body = raw.body_len();
                    ipc_layout::check_record_batch(batch, schema, message.version(), body)?;
                }
                let batch = decoder.read_record_batch(&block, &raw.bytes)?;
                if let Some(batch) = &batch {
                    validate::batch(batch)?;
                }
                Ok(batch)
            }
            (MessageHeader::NONE, _) => Ok(None),
            (MessageHeader::RecordBatch | MessageHeader::DictionaryBatch, None) => {
                Err(ipc_error("a record batch before the schema"))
            }
            (other, _) => Err(ipc_error(&format!("an IPC message of type {other:?}"))),
        }
    }

    /// Takes over the stream's schema, hyperd's `"Utc"` zone rewritten.
    fn on_schema(&mut self, schema: &SchemaRef) {
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| match f.data_type() {
                DataType::Timestamp(unit, Some(tz)) if tz.as_ref() != UTC => {
                    let dt = DataType::Timestamp(*unit, Some(UTC.into()));
                    self.retyped.push((i, dt.clone()));
                    f.as_ref().clone().with_data_type(dt)
                }
                _ => f.as_ref().clone(),
            })
            .collect();
        self.schema = Some(if self.retyped.is_empty() {
            schema.clone()
        } else {
            Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
        });
    }

    fn retype(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let Some(schema) = self.schema.clone() else {
            return Err(ipc_error("record batch before the schema"));
        };
        if self.retyped.is_empty() {
            return Ok(batch);
        }
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for (i, dt) in &self.retyped {
            let data = columns[*i].to_data().into_builder().data_type(dt.clone());
            columns[*i] = make_array(data.build()?);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            schema, columns, &options,
        )?)
    }
}

fn ipc_error(what: &str) -> Error {
    Error::Arrow(ArrowError::IpcError(what.into()))
}

/// The schema a schema message carries.
fn schema_of(message: &arrow_ipc::Message<'_>) -> Result<Schema> {
    let fb = message
        .header_as_schema()
        .ok_or_else(|| ipc_error("a schema message without a schema"))?;
    Ok(arrow_ipc::convert::try_fb_to_schema(fb)?)
}

pub(crate) fn truncated() -> Error {
    ipc_error("the Arrow result ends inside a message")
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
