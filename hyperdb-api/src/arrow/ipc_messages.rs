//! Cuts an Arrow IPC stream, arriving in pieces of any size, into whole
//! messages, without copying a message that arrives in one piece.
//!
//! arrow-ipc's `StreamDecoder` does this too, but it validates every
//! record batch it decodes even when told not to (in arrow-ipc 60.1 its
//! `with_skip_validation` reaches dictionaries only), and arrow's check of
//! text columns is the largest client cost of a wide read (`validate.rs`).
//! Cut here, the messages go to arrow-ipc's `FileDecoder`, which takes the
//! flag, and the batches to [`super::validate::batch`].

use arrow_buffer::{Buffer, MutableBuffer};
use arrow_schema::ArrowError;

/// Starts every message of the current IPC format (then a length).
pub(crate) const CONTINUATION_MARKER: [u8; 4] = [0xff; 4];

/// The first bytes of the Arrow IPC *file* format (`ARROW1`): read as a
/// stream, they are a header length no stream has.
const FILE_MAGIC: &[u8] = b"ARRO";

/// Largest message header taken: a sanity bound, far above any schema.
const MAX_HEADER: usize = 64 << 20;

/// Bytes reserved ahead for a message cut across pieces: its declared
/// size, but no more than this until the bytes arrive.
const MAX_RESERVE: usize = 64 << 20;

/// Where a message's body starts in a buffer of its own: arrow copies a
/// column buffer that is not aligned for its type (16 bytes for Decimal128).
const BODY_ALIGN: usize = 16;

/// One whole message: its length prefix and flatbuffer header (`header_len`
/// bytes, what the IPC file format's `Block::metaDataLength` counts), then
/// its body, in one buffer.
#[derive(Debug)]
pub(crate) struct RawMessage {
    pub(crate) bytes: Buffer,
    pub(crate) prefix_len: usize,
    pub(crate) header_len: usize,
}

impl RawMessage {
    /// The flatbuffer header, after the length prefix.
    pub(crate) fn metadata(&self) -> &[u8] {
        &self.bytes[self.prefix_len..self.header_len]
    }

    /// The body's length: what follows the header.
    pub(crate) fn body_len(&self) -> usize {
        self.bytes.len() - self.header_len
    }
}

/// What the bytes at a message's start say so far: one reading of the
/// framing, for this cutter and for the raw-IPC inserter's (`raw.rs`).
pub(crate) enum Layout {
    /// At least this many bytes are needed to say more.
    Need(usize),
    /// The end-of-stream marker, this many bytes long.
    End(usize),
    Message {
        prefix_len: usize,
        header_len: usize,
        body_len: usize,
    },
}

impl Layout {
    pub(crate) fn of(bytes: &[u8]) -> Result<Layout, ArrowError> {
        let prefix_len = match bytes.get(..4) {
            None => return Ok(Layout::Need(4)),
            Some(m) if m == CONTINUATION_MARKER => 8,
            // The pre-1.0 format: a bare length.
            Some(_) => 4,
        };
        let Some(len) = bytes.get(prefix_len - 4..prefix_len) else {
            return Ok(Layout::Need(prefix_len));
        };
        let meta_len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if meta_len == 0 {
            return Ok(Layout::End(prefix_len));
        }
        if prefix_len == 4 && bytes.starts_with(FILE_MAGIC) {
            return Err(ArrowError::IpcError(
                "these bytes start with ARROW1, the Arrow IPC file format; the IPC stream \
                 format is taken (apache-arrow: tableToIPC(table, 'stream'); arrow-rs: \
                 StreamWriter)"
                    .into(),
            ));
        }
        if meta_len > MAX_HEADER {
            return Err(ArrowError::IpcError(format!(
                "an IPC message header of {meta_len} bytes"
            )));
        }
        let header_len = prefix_len + meta_len;
        let Some(meta) = bytes.get(prefix_len..header_len) else {
            return Ok(Layout::Need(header_len));
        };
        let message = arrow_ipc::root_as_message(meta)
            .map_err(|e| ArrowError::IpcError(format!("unreadable IPC message header: {e}")))?;
        let body_len = usize::try_from(message.bodyLength()).map_err(|_| {
            ArrowError::IpcError(format!("IPC body length {}", message.bodyLength()))
        })?;
        Ok(Layout::Message {
            prefix_len,
            header_len,
            body_len,
        })
    }
}

/// One step of [`IpcMessages::next`].
#[derive(Debug)]
pub(crate) enum Frame {
    Message(RawMessage),
    /// The end-of-stream marker.
    End,
}

/// The message cutter; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct IpcMessages {
    /// The start of a message cut across pieces: exactly the bytes taken
    /// so far, from `pad` on (`pad` aligns the body once its place is known).
    partial: MutableBuffer,
    pad: usize,
    /// `partial` holds a whole header, placed for its body (`realign`).
    placed: bool,
}

impl IpcMessages {
    /// The next whole message, taken from the front of `input`, or `None`
    /// once `input` is used up inside a message (kept for the next call).
    pub(crate) fn next(&mut self, input: &mut Buffer) -> Result<Option<Frame>, ArrowError> {
        if self.partial.is_empty() {
            match Layout::of(input)? {
                Layout::End(n) => {
                    input.advance(n);
                    return Ok(Some(Frame::End));
                }
                Layout::Message {
                    prefix_len,
                    header_len,
                    body_len,
                } if input.len() >= header_len + body_len => {
                    let bytes = input.slice_with_length(0, header_len + body_len);
                    input.advance(header_len + body_len);
                    return Ok(Some(Frame::Message(RawMessage {
                        bytes,
                        prefix_len,
                        header_len,
                    })));
                }
                _ if input.is_empty() => return Ok(None),
                _ => {}
            }
        }
        // Cut across pieces: gather, up to what the layout asks for.
        loop {
            let taken = &self.partial.as_slice()[self.pad..];
            let want = match Layout::of(taken)? {
                Layout::Need(n) => n,
                Layout::End(n) if taken.len() == n => {
                    self.partial.clear();
                    self.pad = 0;
                    return Ok(Some(Frame::End));
                }
                Layout::End(n) => n,
                Layout::Message {
                    prefix_len,
                    header_len,
                    body_len,
                } => {
                    let total = header_len + body_len;
                    if taken.len() == total {
                        let bytes = Buffer::from(std::mem::take(&mut self.partial)).slice(self.pad);
                        self.pad = 0;
                        self.placed = false;
                        return Ok(Some(Frame::Message(RawMessage {
                            bytes,
                            prefix_len,
                            header_len,
                        })));
                    }
                    if !self.placed {
                        self.realign(header_len, total);
                    }
                    total
                }
            };
            if input.is_empty() {
                return Ok(None);
            }
            let n = (want - (self.partial.len() - self.pad)).min(input.len());
            self.partial.extend_from_slice(&input[..n]);
            input.advance(n);
        }
    }

    /// Moves the `header_len` bytes taken so far so that the body will
    /// start `BODY_ALIGN`-aligned, and reserves room for the message.
    fn realign(&mut self, header_len: usize, total: usize) {
        let pad = (BODY_ALIGN - header_len % BODY_ALIGN) % BODY_ALIGN;
        let mut moved = MutableBuffer::with_capacity(pad + total.min(MAX_RESERVE));
        moved.extend_zeros(pad);
        moved.extend_from_slice(&self.partial.as_slice()[self.pad..]);
        self.partial = moved;
        self.pad = pad;
        self.placed = true;
    }

    /// Whether the input so far ended between messages.
    pub(crate) fn between_messages(&self) -> bool {
        self.partial.is_empty()
    }
}

#[cfg(test)]
#[path = "ipc_messages_tests.rs"]
mod tests;
