//! Row validation, HyperBinary encoding and CopyData framing, without I/O.
//! Every inserter (sync, async, chunked) is this plus a way to move bytes.

use bytes::BytesMut;
use hyperdb_api_core::error::ErrorKind;
use hyperdb_api_core::protocol::frontend;
use hyperdb_api_core::types::{encode_column, put_copy_header, ColumnType, SqlType, ToHyperBinary};

use crate::error::{Error, Result, RowErrorKind};
use crate::table_definition::TableDefinition;

/// Default size of one CopyData frame, and so of one socket write.
pub const DEFAULT_FLUSH_THRESHOLD: usize = 4 << 20;

/// The largest flush threshold an inserter takes; larger ones are lowered
/// to it. hyperd refuses a CopyData message over 150 MiB
/// ([`MAX_COPY_DATA`](hyperdb_api_core::protocol::frontend::MAX_COPY_DATA))
/// and then falls out of step with the connection; frames past 256 KiB
/// gain nothing measurable (DEVELOPMENT.md), and this leaves room for a
/// HyperBinary row or a held-back Arrow IPC header on top of a full frame.
pub const MAX_FLUSH_THRESHOLD: usize = 64 << 20;

/// Tag and length word of a CopyData message.
const FRAME_HEADER: usize = 5;

/// `COPY "t" ("a", ...) FROM STDIN WITH (FORMAT HYPERBINARY)`: HyperBinary
/// rows are positional, so the COPY names the columns in the definition's
/// order (Arrow's COPY names none: `crate::arrow::copy_sql`).
pub(crate) fn copy_sql(table: &TableDefinition) -> Result<String> {
    table.validate()?;
    let columns = crate::escape::identifier_list(table.columns().iter().map(|c| c.name()))?;
    Ok(format!(
        "COPY {} ({columns}) FROM STDIN WITH (FORMAT HYPERBINARY)",
        table.name().to_sql()?
    ))
}

/// Where a [`RowEncoder`] puts the values it has checked: HyperBinary
/// frames in the caller's buffer ([`HyperBinaryFrames`]) or Arrow columns
/// (`crate::arrow::ArrowRows`). Row bookkeeping and errors stay in the
/// encoder, so every wire checks rows identically.
pub(crate) trait RowSink {
    /// Puts what opens the stream into `buf` (HyperBinary's header; Arrow
    /// sends its schema with the first batch).
    fn start_stream(&mut self, buf: &mut BytesMut) {
        let _ = buf;
    }

    /// Before the first value of a row.
    fn begin_row(&mut self, buf: &mut BytesMut);

    /// Appends column `i`'s value; on error appends nothing.
    fn put(
        &mut self,
        buf: &mut BytesMut,
        i: usize,
        column: &ColumnType,
        value: &dyn ToHyperBinary,
    ) -> hyperdb_api_core::Result<()>;

    /// Removes the current row's first `values` values.
    fn discard_row(&mut self, buf: &mut BytesMut, values: usize);

    /// After the last value of a row.
    fn end_row(&mut self, buf: &mut BytesMut) -> Result<()>;

    /// True when `buf` should be written out (after [`RowSink::close_frame`]).
    fn frame_full(&self, buf: &BytesMut) -> bool;

    /// Leaves only whole CopyData frames in `buf`, or refuses the last row
    /// ([`FrameError::RowTooLarge`], the frame left open).
    fn close_frame(&mut self, buf: &mut BytesMut) -> Result<(), FrameError>;

    /// Puts everything still held, and the end of the stream, into `buf`.
    fn finish(&mut self, buf: &mut BytesMut) -> Result<(), FrameError>;

    fn set_flush_threshold(&mut self, bytes: usize);

    /// Rows this wire could not carry, taken out to go in a HyperBinary
    /// COPY of their own; see [`HeldRows`].
    fn take_held(&mut self) -> Option<HeldRows> {
        None
    }

    /// Ends the stream so far in `buf`, so that its COPY can end before
    /// held rows go; the next row starts a new stream.
    fn end_stream(&mut self, buf: &mut BytesMut) -> Result<()> {
        let _ = buf;
        Ok(())
    }

    /// The insert failed while held rows went out (no COPY runs now):
    /// nothing may go into the send buffer any more.
    fn abandon(&mut self) {}
}

/// Rows a sink held back from its format because a value in them cannot
/// be carried by it (Arrow: hyperd's latest timestamps, TIME 24:00:00, an
/// interval over ~292 years), as HyperBinary rows without the header.
/// HyperBinary stores every value, so they go in a COPY of that format of
/// their own, in the inserter's transaction.
#[derive(Debug)]
pub(crate) struct HeldRows {
    pub(crate) rows: u64,
    pub(crate) data: BytesMut,
}

impl HeldRows {
    /// The rows, after the HyperBinary header, as one CopyData frame.
    pub(crate) fn put(&self, buf: &mut BytesMut) -> Result<()> {
        let start = frontend::begin_copy_data(buf);
        put_copy_header(buf);
        buf.extend_from_slice(&self.data);
        Ok(frontend::end_copy_data(buf, start)?)
    }
}

/// Why a [`RowSink`] could not close its frame.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// The last row, at `row_start..` in the buffer, is larger than one
    /// CopyData message may carry (`max` bytes): the encoder refuses it
    /// and has the sink discard it. Nothing of it was sent.
    RowTooLarge {
        row_start: usize,
        max: usize,
    },
    Failed(Error),
}

impl From<Error> for FrameError {
    fn from(e: Error) -> FrameError {
        FrameError::Failed(e)
    }
}

impl From<hyperdb_api_core::Error> for FrameError {
    fn from(e: hyperdb_api_core::Error) -> FrameError {
        FrameError::Failed(e.into())
    }
}

/// Validates rows against a table definition and hands their values to a
/// [`RowSink`]. A rejected row leaves nothing behind in the sink.
#[derive(Debug, Clone)]
pub(crate) struct RowEncoder<S = HyperBinaryFrames> {
    pub(super) types: Vec<ColumnType>,
    pub(super) names: Vec<String>,
    pub(super) rows: u64,
    /// Next column of a row built with `add`; 0 when no row is pending.
    next_col: usize,
    pub(super) sink: S,
}

impl RowEncoder<HyperBinaryFrames> {
    pub(crate) fn new(table: &TableDefinition) -> Result<RowEncoder> {
        RowEncoder::with_sink(table, HyperBinaryFrames::new())
    }

    /// Forgets all rows (the caller clears the buffer too).
    pub(crate) fn reset(&mut self) {
        self.rows = 0;
        self.next_col = 0;
        self.sink.reset();
    }

    /// Lowers the CopyData limit, so tests need no 150 MiB rows.
    #[cfg(test)]
    fn set_max_payload(&mut self, bytes: usize) {
        self.sink.max_payload = bytes;
    }
}

impl<S: RowSink> RowEncoder<S> {
    pub(crate) fn with_sink(table: &TableDefinition, sink: S) -> Result<RowEncoder<S>> {
        table.validate()?;
        Ok(RowEncoder {
            types: table.column_types(),
            names: table
                .columns()
                .iter()
                .map(|c| c.name().to_owned())
                .collect(),
            rows: 0,
            next_col: 0,
            sink,
        })
    }

    /// Puts what opens the stream into `buf`, before the first row.
    pub(crate) fn start_stream(&mut self, buf: &mut BytesMut) {
        self.sink.start_stream(buf);
    }

    pub(crate) fn set_flush_threshold(&mut self, bytes: usize) {
        self.sink
            .set_flush_threshold(bytes.clamp(1, MAX_FLUSH_THRESHOLD));
    }

    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    pub(crate) fn types(&self) -> &[ColumnType] {
        &self.types
    }

    /// Appends one whole row.
    #[inline]
    pub(crate) fn add_row(
        &mut self,
        buf: &mut BytesMut,
        values: &[&dyn ToHyperBinary],
    ) -> Result<()> {
        if self.next_col != 0 {
            return Err(self.row_error(
                None,
                RowErrorKind::ColumnCount,
                format!(
                    "{} of {} values were added with add(); finish that row with end_row() first",
                    self.next_col,
                    self.types.len()
                ),
            ));
        }
        if values.len() != self.types.len() {
            return Err(self.row_error(
                None,
                RowErrorKind::ColumnCount,
                format!("{} values for {} columns", values.len(), self.types.len()),
            ));
        }
        self.sink.begin_row(buf);
        for (i, value) in values.iter().enumerate() {
            if let Err(e) = self.sink.put(buf, i, &self.types[i], *value) {
                self.sink.discard_row(buf, i);
                return Err(self.value_error(i, *value, &e));
            }
        }
        self.rows += 1;
        self.sink.end_row(buf)
    }

    /// Appends the next column of the current row. On error the partial row
    /// is discarded.
    #[inline]
    pub(crate) fn add(&mut self, buf: &mut BytesMut, value: &dyn ToHyperBinary) -> Result<()> {
        let i = self.next_col;
        if i == self.types.len() {
            return Err(self.row_error(
                None,
                RowErrorKind::ColumnCount,
                format!("all {} columns are set; call end_row()", self.types.len()),
            ));
        }
        if i == 0 {
            self.sink.begin_row(buf);
        }
        if let Err(e) = self.sink.put(buf, i, &self.types[i], value) {
            self.discard_partial(buf);
            return Err(self.value_error(i, value, &e));
        }
        self.next_col += 1;
        Ok(())
    }

    /// Completes a row built with `add`.
    pub(crate) fn end_row(&mut self, buf: &mut BytesMut) -> Result<()> {
        if self.next_col != self.types.len() {
            let err = self.row_error(
                None,
                RowErrorKind::ColumnCount,
                format!(
                    "{} of {} columns set; the row was discarded",
                    self.next_col,
                    self.types.len()
                ),
            );
            self.discard_partial(buf);
            return Err(err);
        }
        self.next_col = 0;
        self.rows += 1;
        self.sink.end_row(buf)
    }

    /// A sink could not close its frame. When the last row is too large
    /// for any frame it is taken back: un-counted and removed, and the
    /// error names it (this runs before the caller writes anything out,
    /// and callers check `frame_full` after every row, so it is that row
    /// which took the frame past the limit).
    #[cold]
    fn frame_error(&mut self, buf: &mut BytesMut, e: FrameError) -> Result<()> {
        match e {
            FrameError::Failed(e) => Err(e),
            FrameError::RowTooLarge { row_start, max } => {
                self.rows = self.rows.saturating_sub(1);
                let row = &buf[row_start..];
                let largest = largest_value(row, &self.types);
                let message = format!(
                    "the row is {} bytes in HyperBinary, more than the {max} one CopyData \
                     message may carry (hyperd's limit){}; nothing of it was sent. \
                     InsertFormat::ArrowStream splits rows across messages",
                    row.len(),
                    largest
                        .map(|(_, bytes)| format!(", {bytes} of them this column's value"))
                        .unwrap_or_default()
                );
                let err = self.row_error(largest.map(|(i, _)| i), RowErrorKind::TooLarge, message);
                self.sink.discard_row(buf, self.types.len());
                Err(err)
            }
        }
    }

    /// Drops a row started with `add` and not ended.
    pub(crate) fn discard_partial(&mut self, buf: &mut BytesMut) {
        if self.next_col != 0 {
            self.sink.discard_row(buf, self.next_col);
            self.next_col = 0;
        }
    }

    pub(crate) fn has_partial_row(&self) -> bool {
        self.next_col != 0
    }

    /// True when `buf` should be written out (and no row is half-built):
    /// close the frame first.
    #[inline]
    pub(crate) fn frame_full(&self, buf: &BytesMut) -> bool {
        self.next_col == 0 && self.sink.frame_full(buf)
    }

    /// Leaves only whole CopyData frames in `buf` (a half-built row is
    /// dropped). A row too large for any frame is refused here
    /// ([`RowErrorKind::TooLarge`]); the frame is then left open, holding
    /// the rows before it.
    pub(crate) fn close_frame(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.discard_partial(buf);
        match self.sink.close_frame(buf) {
            Ok(()) => Ok(()),
            Err(e) => self.frame_error(buf, e),
        }
    }

    /// Ends the stream: every row held and the stream's end go into `buf`.
    pub(crate) fn finish(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.discard_partial(buf);
        match self.sink.finish(buf) {
            Ok(()) => Ok(()),
            Err(e) => self.frame_error(buf, e),
        }
    }

    /// Rows the sink held back from its format, if any.
    pub(crate) fn take_held(&mut self) -> Option<HeldRows> {
        self.sink.take_held()
    }

    /// Ends the stream so far (before held rows go in a COPY of their own).
    pub(crate) fn end_stream(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.sink.end_stream(buf)
    }

    /// See [`RowSink::abandon`].
    pub(crate) fn abandon(&mut self) {
        self.sink.abandon();
    }

    #[cold]
    fn value_error(
        &self,
        i: usize,
        value: &dyn ToHyperBinary,
        e: &hyperdb_api_core::Error,
    ) -> Error {
        value_error(&self.names, &self.types[i], self.rows, i, value, e)
    }

    fn row_error(&self, column: Option<usize>, kind: RowErrorKind, message: String) -> Error {
        row_error(&self.names, self.rows, column, kind, message)
    }
}

/// Row `rows`' value for column `i` was refused: why, by the codec's error.
#[cold]
pub(super) fn value_error(
    names: &[String],
    column: &ColumnType,
    rows: u64,
    i: usize,
    value: &dyn ToHyperBinary,
    e: &hyperdb_api_core::Error,
) -> Error {
    let kind = match e.kind() {
        ErrorKind::TypeMismatch => RowErrorKind::WrongType,
        _ if value.is_null() => RowErrorKind::NullInNotNull,
        // A text value the codec refuses for a bounded column: too long.
        _ if matches!(column.sql_type, SqlType::Varchar(_) | SqlType::Char(_)) => {
            RowErrorKind::TooLong
        }
        _ if matches!(
            column.sql_type,
            SqlType::Time | SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz
        ) =>
        {
            RowErrorKind::DateTimeOutOfRange
        }
        _ => RowErrorKind::OutOfRange,
    };
    row_error(names, rows, Some(i), kind, e.message().to_owned())
}

pub(super) fn row_error(
    names: &[String],
    rows: u64,
    column: Option<usize>,
    kind: RowErrorKind,
    message: String,
) -> Error {
    Error::InvalidRow {
        row: rows,
        column: column.and_then(|i| names.get(i).cloned()),
        kind,
        message,
    }
}

/// The column and size of the largest value of a HyperBinary row (`row`:
/// its bytes, the columns' values in order). `None` if the bytes do not
/// walk (they always do: the encoder wrote them).
fn largest_value(row: &[u8], types: &[ColumnType]) -> Option<(usize, usize)> {
    let mut at = 0usize;
    let mut largest: Option<(usize, usize)> = None;
    for (i, ty) in types.iter().enumerate() {
        if ty.is_nullable() {
            let null = *row.get(at)?;
            at += 1;
            if null != 0 {
                continue;
            }
        }
        let len = match ty.sql_type.fixed_width() {
            Some(width) => width,
            None => {
                let prefix: [u8; 4] = row.get(at..at + 4)?.try_into().ok()?;
                at += 4;
                u32::from_le_bytes(prefix) as usize
            }
        };
        at = at.checked_add(len)?;
        if largest.is_none_or(|(_, most)| len > most) {
            largest = Some((i, len));
        }
    }
    (at == row.len()).then_some(largest).flatten()
}

/// HyperBinary rows straight into the caller's buffer (the connection's
/// send buffer, or a chunk's), in CopyData frames of about the flush
/// threshold: no per-row allocation, and a rejected row is truncated away.
///
/// A frame never exceeds hyperd's limit ([`frontend::MAX_COPY_DATA`]).
/// Frames are cut only between rows (a row is the unit this sink can
/// undo), and checked when they are closed: the flush threshold is at most
/// [`MAX_FLUSH_THRESHOLD`], far below the limit, and callers close a full
/// frame after every row, so only the last row can take a frame past the
/// limit. It then goes into a frame of its own, or, larger than the limit,
/// is refused ([`FrameError::RowTooLarge`]) before any of it is sent. One
/// compare per frame, nothing per row.
#[derive(Debug, Clone)]
pub(crate) struct HyperBinaryFrames {
    row_start: usize,
    /// Offset of the open CopyData frame's header, if one is open.
    frame_start: Option<usize>,
    flush_threshold: usize,
    /// The largest frame payload: [`frontend::MAX_COPY_DATA`] (lowered by
    /// tests).
    max_payload: usize,
}

impl HyperBinaryFrames {
    pub(crate) fn new() -> HyperBinaryFrames {
        HyperBinaryFrames {
            row_start: 0,
            frame_start: None,
            flush_threshold: DEFAULT_FLUSH_THRESHOLD,
            max_payload: frontend::MAX_COPY_DATA,
        }
    }

    /// The last row took the open frame (at `start`) past the limit: it
    /// moves to a frame of its own, or is refused if even that is too
    /// small.
    #[cold]
    fn make_room(&mut self, buf: &mut BytesMut, start: usize) -> Result<(), FrameError> {
        if buf.len() - self.row_start > self.max_payload {
            return Err(FrameError::RowTooLarge {
                row_start: self.row_start,
                max: self.max_payload,
            });
        }
        let next = frontend::split_copy_data(buf, start, self.row_start)?;
        self.frame_start = Some(next);
        self.row_start = next + FRAME_HEADER;
        Ok(())
    }

    /// Forgets the open frame (its buffer was cleared).
    fn reset(&mut self) {
        self.frame_start = None;
    }

    #[inline]
    fn open_frame(&mut self, buf: &mut BytesMut) {
        if self.frame_start.is_none() {
            self.frame_start = Some(frontend::begin_copy_data(buf));
        }
    }
}

impl RowSink for HyperBinaryFrames {
    /// Opens the first frame with the HyperBinary header.
    fn start_stream(&mut self, buf: &mut BytesMut) {
        self.open_frame(buf);
        put_copy_header(buf);
    }

    #[inline]
    fn begin_row(&mut self, buf: &mut BytesMut) {
        self.open_frame(buf);
        self.row_start = buf.len();
    }

    #[inline(always)]
    fn put(
        &mut self,
        buf: &mut BytesMut,
        _: usize,
        column: &ColumnType,
        value: &dyn ToHyperBinary,
    ) -> hyperdb_api_core::Result<()> {
        // `encode_column` checks NULL against the column's nullability itself;
        // telling the failures apart costs only on the error path.
        encode_column(value, column, buf)
    }

    fn discard_row(&mut self, buf: &mut BytesMut, _: usize) {
        buf.truncate(self.row_start);
    }

    #[inline]
    fn end_row(&mut self, _: &mut BytesMut) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn frame_full(&self, buf: &BytesMut) -> bool {
        self.frame_start
            .is_some_and(|s| buf.len() - s >= self.flush_threshold)
    }

    /// Patches the open frame's length; an empty frame is removed.
    fn close_frame(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        if let Some(start) = self.frame_start {
            if buf.len() - start - FRAME_HEADER > self.max_payload {
                self.make_room(buf, start)?;
            }
        }
        if let Some(start) = self.frame_start.take() {
            if buf.len() == start + FRAME_HEADER {
                buf.truncate(start);
            } else {
                frontend::end_copy_data(buf, start)?;
            }
        }
        Ok(())
    }

    /// HyperBinary has no trailer: the last frame is closed and that is all.
    fn finish(&mut self, buf: &mut BytesMut) -> Result<(), FrameError> {
        self.close_frame(buf)
    }

    fn set_flush_threshold(&mut self, bytes: usize) {
        self.flush_threshold = bytes;
    }
}

#[cfg(test)]
#[path = "encoder_tests.rs"]
mod tests;
