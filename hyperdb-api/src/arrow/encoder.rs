//! Checking record batches against a table and framing one IPC stream into
//! CopyData, without I/O: every Arrow inserter is this plus a way to move
//! bytes.
//!
//! A batch is checked completely before any of it is queued, so a rejected
//! batch leaves nothing behind. Encoding shares the batch's buffers
//! (`StreamEncoder`), so the only copy is into the send buffer.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow_buffer::Buffer;
use arrow_ipc::writer::StreamEncoder;
use arrow_schema::{DataType, Schema, SchemaRef};
use bytes::BytesMut;
use hyperdb_api_core::protocol::frontend;

use super::decoder::ArrowDecoder;
use super::raw::{encode_schema, IpcFramer};
use super::schema::{arrow_schema, ingest_field, mismatch};
use super::EOS;
use crate::error::{Error, Result, RowErrorKind};
use crate::table_definition::TableDefinition;
use crate::types::SqlType;

/// Default bytes buffered before they are written to the socket.
pub const DEFAULT_ARROW_FLUSH_THRESHOLD: usize = 4 << 20;

/// `COPY "t" FROM STDIN WITH (FORMAT ARROWSTREAM)`: without a column
/// list, so that hyperd matches the stream's fields to every column of the
/// table by name (a column without a field is refused, 42P10; with the list
/// it would be filled with NULLs), and its answer counts the table's
/// columns (`copy_tx::LastInsert` relies on both). The stream always has a
/// field for each column of the definition.
pub(crate) fn copy_sql(table: &TableDefinition) -> Result<String> {
    table.validate()?;
    Ok(format!(
        "COPY {} FROM STDIN WITH (FORMAT ARROWSTREAM)",
        table.name().to_sql()?
    ))
}

/// The schema to declare to hyperd for data with `input`'s fields: the
/// caller's order and data types, the table's metadata and nullability.
/// Also returns, per field, the column index in `table`.
pub(crate) fn ingest_schema(
    table: &TableDefinition,
    input: &Schema,
) -> Result<(Schema, Vec<usize>)> {
    let mut fields = Vec::with_capacity(input.fields().len());
    let mut columns = Vec::with_capacity(input.fields().len());
    for field in input.fields() {
        let index = table
            .column_index(field.name())
            .ok_or_else(|| Error::SchemaMismatch {
                column: field.name().clone(),
                expected: format!("no such column (table {} has none)", table.name()),
                found: format!("Arrow {}", field.data_type()),
            })?;
        if columns.contains(&index) {
            return Err(Error::SchemaMismatch {
                column: field.name().clone(),
                expected: "one field per column".into(),
                found: "two fields with this name".into(),
            });
        }
        fields.push(ingest_field(&table.columns()[index], field.data_type())?);
        columns.push(index);
    }
    if let Some(missing) = (0..table.column_count()).find(|i| !columns.contains(i)) {
        let column = &table.columns()[missing];
        return Err(Error::SchemaMismatch {
            column: column.name().to_owned(),
            expected: format!("a {} field", column.sql_type()),
            found: "no field with this name".into(),
        });
    }
    Ok((Schema::new(fields), columns))
}

/// What the stream carries so far.
#[derive(Debug)]
enum Mode {
    /// Nothing yet: the first batch or raw bytes decide.
    Idle,
    Batches(Box<BatchMode>),
    Raw(IpcFramer),
}

struct BatchMode {
    encoder: StreamEncoder,
    /// The schema declared to hyperd.
    sent: SchemaRef,
    /// The caller's schema it was derived from; equal schemas skip the check.
    input: SchemaRef,
    /// Per field of `input`: the table column it fills.
    columns: Vec<usize>,
    /// Per field of `sent`: the `input` column that carries it.
    order: Vec<usize>,
}

impl std::fmt::Debug for BatchMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchMode")
            .field("sent", &self.sent)
            .field("columns", &self.columns)
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

/// Validates batches and frames one Arrow IPC stream into CopyData messages.
#[derive(Debug)]
pub(crate) struct ArrowEncoder {
    table: TableDefinition,
    mode: Mode,
    /// Encoded buffers not yet copied into the send buffer.
    pending: VecDeque<Buffer>,
    /// Bytes of `pending[0]` already copied.
    offset: usize,
    rows: u64,
    flush_threshold: usize,
    /// Set once raw bytes were half-forwarded when an error struck: only an
    /// abort is possible then.
    poisoned: bool,
    /// Raw IPC bytes for a table with VARCHAR(n)/CHAR(n) columns, decoded
    /// so that their values are checked (and CHAR padding cut) like
    /// batches': passed through, an over-long value would be stored as it
    /// is. Set by the first such bytes.
    decoding: Option<Box<ArrowDecoder>>,
}

impl ArrowEncoder {
    pub(crate) fn new(table: &TableDefinition) -> Result<ArrowEncoder> {
        table.validate()?;
        arrow_schema(table)?;
        Ok(ArrowEncoder {
            table: table.clone(),
            mode: Mode::Idle,
            pending: VecDeque::new(),
            offset: 0,
            rows: 0,
            flush_threshold: DEFAULT_ARROW_FLUSH_THRESHOLD,
            poisoned: false,
            decoding: None,
        })
    }

    pub(crate) fn set_flush_threshold(&mut self, bytes: usize) {
        self.flush_threshold = bytes.clamp(1, crate::insert::MAX_FLUSH_THRESHOLD);
    }

    pub(crate) fn flush_threshold(&self) -> usize {
        self.flush_threshold
    }

    pub(crate) fn rows(&self) -> u64 {
        match &self.mode {
            Mode::Raw(f) => f.rows(),
            _ => self.rows,
        }
    }

    /// Checks `batch` and queues its encoding. A rejected batch queues nothing.
    pub(crate) fn push_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.decoding.is_some() {
            return Err(mixed());
        }
        self.push(batch, true)
    }

    /// Queues a batch built from rows that `RowEncoder` has already checked
    /// value by value (`ArrowRows`): the schema is still matched, the values
    /// are not walked a second time.
    pub(crate) fn push_checked_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.push(batch, false)
    }

    fn push(&mut self, batch: &RecordBatch, check: bool) -> Result<()> {
        self.check_usable()?;
        if matches!(self.mode, Mode::Idle) {
            let (sent, columns) = ingest_schema(&self.table, &batch.schema())?;
            let sent = Arc::new(sent);
            self.mode = Mode::Batches(Box::new(BatchMode {
                encoder: StreamEncoder::try_new(&sent)?,
                order: (0..columns.len()).collect(),
                sent,
                input: batch.schema(),
                columns,
            }));
        }
        let Mode::Batches(mode) = &mut self.mode else {
            return Err(mixed());
        };
        if !Arc::ptr_eq(&mode.input, batch.schema_ref()) && *mode.input != *batch.schema() {
            let (sent, columns) = ingest_schema(&self.table, &batch.schema())?;
            mode.order = same_fields(&mode.sent, &sent)?;
            mode.input = batch.schema();
            mode.columns = columns;
        }
        let fitted;
        let batch = if check {
            fitted = check_values(&self.table, &mode.columns, batch, self.rows)?;
            fitted.as_ref().unwrap_or(batch)
        } else {
            batch
        };
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let columns = mode
            .order
            .iter()
            .map(|i| batch.column(*i).clone())
            .collect();
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let batch = RecordBatch::try_new_with_options(mode.sent.clone(), columns, &options)?;
        self.pending.extend(mode.encoder.encode(&batch)?);
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Checks and frames raw IPC stream bytes straight into `buf` (CopyData
    /// messages). Bytes may be split anywhere across calls.
    pub(crate) fn push_ipc(&mut self, bytes: &[u8], buf: &mut BytesMut) -> Result<()> {
        self.check_usable()?;
        if self.decoding.is_some()
            || (matches!(self.mode, Mode::Idle) && unchecked_by_hyperd(&self.table))
        {
            return self.push_ipc_decoded(bytes);
        }
        match self.mode {
            Mode::Idle => self.mode = Mode::Raw(IpcFramer::new()),
            Mode::Raw(_) => {}
            Mode::Batches(_) => return Err(mixed()),
        }
        let Mode::Raw(framer) = &mut self.mode else {
            return Err(mixed());
        };
        let start = frontend::begin_copy_data(buf);
        let res = framer.push(&self.table, bytes, &mut |b| buf.extend_from_slice(b));
        let res = res.and_then(|()| close_frame(buf, start));
        if res.is_err() {
            // Nothing of this call is sent. Before a schema was accepted the
            // caller may start over; after, the stream is broken for good.
            buf.truncate(start);
            if framer.sent_schema().is_some() {
                self.poisoned = true;
            } else {
                self.mode = Mode::Idle;
            }
        }
        res
    }

    /// [`Self::push_ipc`] through the decoder: each batch is checked as
    /// [`Self::push_batch`] checks it and queued re-encoded. An error
    /// before any row was accepted lets the caller start over; after, the
    /// stream is broken for good, as on the pass-through path.
    fn push_ipc_decoded(&mut self, bytes: &[u8]) -> Result<()> {
        let mut decoder = self
            .decoding
            .take()
            .unwrap_or_else(|| Box::new(ArrowDecoder::repeating()));
        decoder.push(bytes::Bytes::copy_from_slice(bytes));
        let res = loop {
            match decoder.next_batch() {
                Ok(Some(batch)) => {
                    if let Err(e) = self.push(&batch, true) {
                        break Err(e);
                    }
                }
                // The schema is checked as soon as it is read, as the
                // pass-through checks it: before any data is sent.
                Ok(None) => match (&self.mode, decoder.schema()) {
                    (Mode::Idle, Some(schema)) => {
                        break ingest_schema(&self.table, schema).map(drop)
                    }
                    _ => break Ok(()),
                },
                Err(e) => break Err(e),
            }
        };
        if res.is_err() {
            if self.rows == 0 {
                self.mode = Mode::Idle;
                return res;
            }
            self.poisoned = true;
        }
        self.decoding = Some(decoder);
        res
    }

    /// Copies queued bytes into CopyData frames in `buf`; returns true when
    /// `buf` holds at least the flush threshold: write it out, then call
    /// again until it returns false.
    pub(crate) fn write_pending(&mut self, buf: &mut BytesMut) -> Result<bool> {
        if self.pending.is_empty() {
            return Ok(buf.len() >= self.flush_threshold);
        }
        let start = frontend::begin_copy_data(buf);
        while let Some(front) = self.pending.front() {
            let room = self
                .flush_threshold
                .saturating_sub(buf.len() - start)
                .max(1);
            let piece = &front[self.offset..];
            let n = piece.len().min(room);
            buf.extend_from_slice(&piece[..n]);
            self.offset += n;
            if self.offset == front.len() {
                self.pending.pop_front();
                self.offset = 0;
            }
            if buf.len() - start >= self.flush_threshold {
                break;
            }
        }
        close_frame(buf, start)?;
        Ok(buf.len() >= self.flush_threshold)
    }

    /// Copies everything queued into `buf`, in frames of at most the flush
    /// threshold.
    pub(crate) fn write_all_pending(&mut self, buf: &mut BytesMut) -> Result<()> {
        while !self.pending.is_empty() {
            self.write_pending(buf)?;
        }
        Ok(())
    }

    /// Queues the end of the stream (with the schema first if no data was
    /// given, since hyperd rejects an input without one); then drain with
    /// `write_pending`.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.check_usable()?;
        if let Some(decoder) = &mut self.decoding {
            decoder.end_input()?;
            let schema = decoder.schema().cloned().ok_or_else(|| {
                Error::invalid_argument("Arrow IPC stream", "the stream has no schema message")
            })?;
            // A stream of no batches is still checked against the table.
            ingest_schema(&self.table, &schema)?;
        }
        match std::mem::replace(&mut self.mode, Mode::Idle) {
            Mode::Idle => {
                let schema = arrow_schema(&self.table)?;
                self.pending
                    .push_back(Buffer::from(encode_schema(&schema)?));
                self.pending.push_back(Buffer::from(EOS.to_vec()));
            }
            Mode::Batches(mode) => self.pending.extend(mode.encoder.finish()?),
            Mode::Raw(framer) => {
                framer.finish()?;
                if framer.sent_schema().is_none() {
                    return Err(Error::invalid_argument(
                        "Arrow IPC stream",
                        "the stream has no schema message",
                    ));
                }
                self.rows = framer.rows();
                self.pending.push_back(Buffer::from(EOS.to_vec()));
            }
        }
        Ok(())
    }

    /// Forgets what is queued (for an abort).
    pub(crate) fn discard(&mut self) {
        self.pending.clear();
        self.offset = 0;
    }

    fn check_usable(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::invalid_argument(
                "ArrowInserter",
                "an earlier error broke the IPC stream; drop the inserter (nothing is stored)",
            ));
        }
        Ok(())
    }
}

/// Patches the frame's length; an empty frame is removed.
fn close_frame(buf: &mut BytesMut, start: usize) -> Result<()> {
    if buf.len() == start + 5 {
        buf.truncate(start);
        return Ok(());
    }
    Ok(frontend::end_copy_data(buf, start)?)
}

/// Whether `table` has columns whose values hyperd stores changed or
/// unreadable rather than refuse (see [`check_values`]): VARCHAR(n) and
/// CHAR(n) (over-long text), NUMERIC (digits past the precision), TIME
/// and INTERVAL (fractions of a microsecond). Raw IPC into such a table is
/// decoded and checked; into any other it passes through.
fn unchecked_by_hyperd(table: &TableDefinition) -> bool {
    table.columns().iter().any(|c| {
        matches!(
            c.sql_type(),
            SqlType::Varchar(_)
                | SqlType::Char(_)
                | SqlType::Numeric { .. }
                | SqlType::Time
                | SqlType::Interval
        )
    })
}

fn mixed() -> Error {
    Error::invalid_argument(
        "ArrowInserter",
        "record batches and raw IPC bytes cannot be mixed in one insert",
    )
}

/// Where each field of `first` is in `next` (both cover the same columns:
/// `ingest_schema` checked that); one COPY has one schema, so types must
/// agree too.
fn same_fields(first: &Schema, next: &Schema) -> Result<Vec<usize>> {
    first
        .fields()
        .iter()
        .map(|f| {
            let (i, g) = next
                .fields()
                .find(f.name())
                .ok_or_else(|| Error::SchemaMismatch {
                    column: f.name().clone(),
                    expected: "a field as in the first batch".into(),
                    found: "none".into(),
                })?;
            if g.data_type() != f.data_type() {
                return Err(Error::SchemaMismatch {
                    column: f.name().clone(),
                    expected: format!(
                        "Arrow {} as in the first batch (one COPY, one schema)",
                        f.data_type()
                    ),
                    found: format!("Arrow {}", g.data_type()),
                });
            }
            Ok(i)
        })
        .collect()
}

/// The first valid value of a decimal column (Decimal128 or Decimal256)
/// with more digits than `precision`, and its digit count. Arrow does not
/// hold a decimal to its declared precision, and hyperd stores such a value
/// past its column's (100000 in a NUMERIC(5,2) column reads back as
/// 1000.00, measured; a 39-digit one in NUMERIC(38,2) then fails every
/// read, Tableau's too), where the row inserter refuses it.
fn past_precision(array: &dyn Array, precision: u8) -> Option<(usize, u32)> {
    use super::layout::first_valid;
    use arrow_array::types::{Decimal128Type, Decimal256Type};
    use arrow_buffer::i256;
    // NUMERIC's precision is at most 38, so the bound fits an i128.
    let bound = 10i128.checked_pow(u32::from(precision))?;
    if let Some(decimals) = array.as_primitive_opt::<Decimal128Type>() {
        let bound = bound.unsigned_abs();
        let row = first_valid(decimals, |v| v.unsigned_abs() >= bound)?;
        let digits = decimals.value(row).unsigned_abs().checked_ilog10();
        return Some((row, digits.map_or(1, |d| d + 1)));
    }
    let decimals = array.as_primitive_opt::<Decimal256Type>()?;
    let (high, low) = (i256::from_i128(bound), i256::from_i128(-bound));
    let row = first_valid(decimals, |v| v >= high || v <= low)?;
    let digits = decimals
        .value(row)
        .to_string()
        .trim_start_matches('-')
        .len();
    Some((row, digits as u32))
}

/// What hyperd does not check itself (measured): NULLs in NOT NULL columns
/// fail the whole COPY late, over-long VARCHAR/CHAR values are stored as
/// they are (CHAR(1) truncated), decimals past their precision are stored
/// past it ([`past_precision`]), and dates and times its Arrow reader
/// refuses fail the COPY naming neither row nor column
/// (`layout::refused_temporal`). Rejecting them here keeps the batch out.
/// CHAR(n) values that are longer only by trailing spaces are cut to n
/// characters ([`SqlType::fit_text`]): then the batch to send instead is
/// returned.
fn check_values(
    table: &TableDefinition,
    columns: &[usize],
    batch: &RecordBatch,
    rows_before: u64,
) -> Result<Option<RecordBatch>> {
    let mut fitted: Option<Vec<ArrayRef>> = None;
    for (at, (array, &index)) in batch.columns().iter().zip(columns).enumerate() {
        let column = &table.columns()[index];
        let error = |row: usize, kind, message: String| Error::InvalidRow {
            row: rows_before + row as u64,
            column: Some(column.name().to_owned()),
            kind,
            message: format!("{message}; the batch was not inserted"),
        };
        if !column.is_nullable() && array.null_count() > 0 {
            let row = (0..array.len()).find(|i| array.is_null(*i)).unwrap_or(0);
            return Err(error(row, RowErrorKind::NullInNotNull, "NULL".into()));
        }
        if let Some((row, kind, message)) = super::layout::refused_temporal(array.as_ref()) {
            return Err(error(row, kind, message));
        }
        let ty = column.sql_type();
        let limit = match ty {
            SqlType::Varchar(n) | SqlType::Char(n) => *n as usize,
            SqlType::Numeric { precision, scale } => {
                if let Some((row, digits)) = past_precision(array.as_ref(), *precision) {
                    return Err(error(
                        row,
                        RowErrorKind::OutOfRange,
                        format!("{digits} digits for {ty} (scale {scale})"),
                    ));
                }
                continue;
            }
            _ => continue,
        };
        if array.data_type() != &DataType::Utf8 {
            return Err(mismatch(column, array.data_type()));
        }
        let strings = array.as_string::<i32>();
        let offsets = strings.value_offsets();
        let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
        if ((last - first) as usize) <= limit {
            continue;
        }
        let mut cut = false;
        for (row, w) in offsets.windows(2).enumerate() {
            if (w[1] - w[0]) as usize > limit && !strings.is_null(row) {
                let value = strings.value(row);
                match ty.fit_text(value) {
                    Ok(fit) => cut |= fit.len() < value.len(),
                    Err(chars) => {
                        return Err(error(
                            row,
                            RowErrorKind::TooLong,
                            format!("{chars} characters for {ty}"),
                        ))
                    }
                }
            }
        }
        if cut {
            // Every value fits (checked above): keep what each stores.
            let cut: StringArray = strings
                .iter()
                .map(|v| v.map(|v| ty.fit_text(v).unwrap_or(v)))
                .collect();
            fitted.get_or_insert_with(|| batch.columns().to_vec())[at] = Arc::new(cut);
        }
    }
    match fitted {
        None => Ok(None),
        Some(columns) => Ok(Some(RecordBatch::try_new(batch.schema(), columns)?)),
    }
}

#[cfg(test)]
#[path = "encoder_tests.rs"]
pub(super) mod tests;
