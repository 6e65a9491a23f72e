//! The sizes an IPC record batch's metadata declares, checked against its
//! schema and body before arrow-ipc builds arrays from them.
//!
//! The decoder runs arrow-ipc with validation off (see `validate`), and
//! arrow-ipc then slices each buffer to the length the field node says
//! with a bounds *assertion*: a values buffer shorter than its rows (a
//! Decimal128 column of 3 rows with 16 bytes), or a buffer that reaches
//! past the message body, panicked inside it. The decoder catches that,
//! but the panic still printed a backtrace line from a library, and a
//! caller's malformed input must be an error like any other. So every
//! buffer a node's length implies is checked here, in the order arrow-ipc
//! reads them, and a shortfall is an error naming the column.
//!
//! What arrow-ipc reads without slicing to a length (text data, a child's
//! length against its parent's offsets, offsets' values) is left to
//! `validate::batch`, which runs after decoding.

use std::collections::VecDeque;

use arrow_ipc::MetadataVersion;
use arrow_schema::{ArrowError, DataType, Field, Schema};

/// Checks a record batch message's nodes and buffers against `schema` and
/// the `body_len` bytes of its body.
pub(crate) fn check_record_batch(
    batch: arrow_ipc::RecordBatch<'_>,
    schema: &Schema,
    version: MetadataVersion,
    body_len: usize,
) -> Result<(), ArrowError> {
    let lengths = buffer_lengths(batch.buffers().iter().flat_map(|b| b.iter()), body_len)?;
    // Compressed buffers declare their compressed size: only their place
    // in the body can be checked (arrow-ipc checks what they inflate to).
    if batch.compression().is_some() {
        return Ok(());
    }
    let mut walk = Walk {
        nodes: batch
            .nodes()
            .map(|n| n.iter().map(|n| (n.length(), n.null_count())).collect())
            .unwrap_or_default(),
        lengths,
        variadic: batch
            .variadicBufferCounts()
            .map(|v| v.iter().collect())
            .unwrap_or_default(),
        version,
        column: "",
    };
    for field in schema.fields() {
        walk.column = field.name();
        walk.field(field)?;
    }
    Ok(())
}

/// Checks a dictionary batch's buffers lie in its body. (Its sizes are
/// left to arrow-ipc's catch-all: a dictionary's value type is not at
/// hand here, and hyperd sends none.)
pub(crate) fn check_dictionary_batch(
    batch: arrow_ipc::DictionaryBatch<'_>,
    body_len: usize,
) -> Result<(), ArrowError> {
    let buffers = batch.data().and_then(|d| d.buffers());
    buffer_lengths(buffers.iter().flat_map(|b| b.iter()), body_len).map(drop)
}

/// Each buffer's length, if every buffer lies inside the body.
fn buffer_lengths<'a>(
    buffers: impl IntoIterator<Item = &'a arrow_ipc::Buffer>,
    body_len: usize,
) -> Result<VecDeque<usize>, ArrowError> {
    let inside = |b: &arrow_ipc::Buffer| {
        let (offset, length) = (b.offset(), b.length());
        let place = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(length).ok());
        match place {
            Some((o, l)) if o.checked_add(l).is_some_and(|end| end <= body_len) => Ok(l),
            _ => Err(ArrowError::IpcError(format!(
                "a buffer at offset {offset} of {length} bytes, past the message body of {body_len} bytes"
            ))),
        }
    };
    buffers.into_iter().map(inside).collect()
}

/// The message's nodes and buffer lengths, consumed as arrow-ipc reads them.
struct Walk<'a> {
    /// Each node's `(length, null count)`.
    nodes: VecDeque<(i64, i64)>,
    lengths: VecDeque<usize>,
    variadic: VecDeque<i64>,
    version: MetadataVersion,
    /// The top-level column being walked, for errors.
    column: &'a str,
}

impl Walk<'_> {
    fn field(&mut self, field: &Field) -> Result<(), ArrowError> {
        use DataType::*;
        let (length, null_count) = self
            .nodes
            .pop_front()
            .ok_or_else(|| self.error(field, "no field node".into()))?;
        let rows = usize::try_from(length)
            .map_err(|_| self.error(field, format!("a length of {length}")))?;
        let has_nulls = null_count > 0;
        match field.data_type() {
            Null => Ok(()),
            Utf8 | Binary | LargeUtf8 | LargeBinary => {
                let width = if matches!(field.data_type(), Utf8 | Binary) {
                    4
                } else {
                    8
                };
                self.offsets(field, rows, has_nulls, width)?;
                self.next_length(field).map(drop)
            }
            Utf8View | BinaryView => {
                let extra = self.variadic.pop_front().unwrap_or(0);
                self.validity(field, rows, has_nulls)?;
                self.buffer(field, "views", rows.checked_mul(16))?;
                for _ in 0..extra.max(0) {
                    self.next_length(field)?;
                }
                Ok(())
            }
            FixedSizeBinary(width) => {
                self.validity(field, rows, has_nulls)?;
                self.values(field, rows, usize::try_from(*width).ok())
            }
            List(child) | Map(child, _) | LargeList(child) => {
                let width = if matches!(field.data_type(), LargeList(_)) {
                    8
                } else {
                    4
                };
                self.offsets(field, rows, has_nulls, width)?;
                self.field(child)
            }
            ListView(child) | LargeListView(child) => {
                let width = if matches!(field.data_type(), ListView(_)) {
                    4
                } else {
                    8
                };
                self.validity(field, rows, has_nulls)?;
                self.buffer(field, "offsets", rows.checked_mul(width))?;
                self.buffer(field, "sizes", rows.checked_mul(width))?;
                self.field(child)
            }
            FixedSizeList(child, _) => {
                self.validity(field, rows, has_nulls)?;
                self.field(child)
            }
            Struct(children) => {
                self.validity(field, rows, has_nulls)?;
                children.iter().try_for_each(|c| self.field(c))
            }
            RunEndEncoded(run_ends, values) => {
                self.field(run_ends)?;
                self.field(values)
            }
            Dictionary(key, _) => {
                self.validity(field, rows, has_nulls)?;
                self.values(field, rows, key.primitive_width())
            }
            Union(children, mode) => {
                if self.version < MetadataVersion::V5 {
                    self.next_length(field)?;
                }
                self.buffer(field, "type ids", Some(rows))?;
                if *mode == arrow_schema::UnionMode::Dense {
                    self.buffer(field, "offsets", rows.checked_mul(4))?;
                }
                children.iter().try_for_each(|(_, c)| self.field(c))
            }
            Boolean => {
                self.validity(field, rows, has_nulls)?;
                self.buffer(field, "values", Some(rows.div_ceil(8)))
            }
            other => {
                self.validity(field, rows, has_nulls)?;
                self.values(field, rows, other.primitive_width())
            }
        }
    }

    /// The validity bitmap, read only when the node has nulls.
    fn validity(&mut self, field: &Field, rows: usize, has_nulls: bool) -> Result<(), ArrowError> {
        let need = if has_nulls { rows.div_ceil(8) } else { 0 };
        self.buffer(field, "validity", Some(need))
    }

    /// The validity bitmap, then offsets: one more than the rows (none at
    /// all for no rows).
    fn offsets(
        &mut self,
        field: &Field,
        rows: usize,
        has_nulls: bool,
        width: usize,
    ) -> Result<(), ArrowError> {
        self.validity(field, rows, has_nulls)?;
        let need = if rows == 0 {
            Some(0)
        } else {
            rows.checked_add(1).and_then(|n| n.checked_mul(width))
        };
        self.buffer(field, "offsets", need)
    }

    /// Values of `width` bytes each (unchecked for a type of no fixed
    /// width, which arrow-ipc refuses itself).
    fn values(
        &mut self,
        field: &Field,
        rows: usize,
        width: Option<usize>,
    ) -> Result<(), ArrowError> {
        match width {
            Some(width) => self.buffer(field, "values", rows.checked_mul(width)),
            None => self.next_length(field).map(drop),
        }
    }

    /// The next buffer, which must hold at least `need` bytes (`None`:
    /// more than any buffer can).
    fn buffer(&mut self, field: &Field, what: &str, need: Option<usize>) -> Result<(), ArrowError> {
        let len = self.next_length(field)?;
        match need {
            Some(need) if len >= need => Ok(()),
            Some(need) => Err(self.error(
                field,
                format!(
                    "{} buffer of {len} bytes where its rows need {need}",
                    article(what)
                ),
            )),
            None => Err(self.error(
                field,
                format!("more rows than {} buffer can hold", article(what)),
            )),
        }
    }

    fn next_length(&mut self, field: &Field) -> Result<usize, ArrowError> {
        self.lengths
            .pop_front()
            .ok_or_else(|| self.error(field, "fewer buffers than its fields need".into()))
    }

    fn error(&self, field: &Field, what: String) -> ArrowError {
        let inner = if field.name() == self.column {
            String::new()
        } else {
            format!(" (its field `{}`)", field.name())
        };
        ArrowError::IpcError(format!("column `{}`{inner}: {what}", self.column))
    }
}

/// "a values", "an offsets".
fn article(what: &str) -> String {
    let an = what.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {what}", if an { "an" } else { "a" })
}

#[cfg(test)]
#[path = "ipc_layout_tests.rs"]
mod tests;
