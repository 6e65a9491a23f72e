//! Row validation, HyperBinary encoding and CopyData framing, without I/O.
//! Every inserter (sync, async, chunked) is this plus a way to move bytes.

use bytes::BytesMut;
use hyperdb_api_core::error::ErrorKind;
use hyperdb_api_core::protocol::frontend;
use hyperdb_api_core::types::{encode_column, put_copy_header, ColumnType, ToHyperBinary};

use crate::error::{Error, Result, RowErrorKind};
use crate::table_definition::TableDefinition;

/// Default size of one CopyData frame, and so of one socket write.
pub const DEFAULT_FLUSH_THRESHOLD: usize = 4 << 20;

/// `COPY "t" ("a", ...) FROM STDIN WITH (FORMAT HYPERBINARY)`.
pub(crate) fn copy_sql(table: &TableDefinition, format: &str) -> Result<String> {
    table.validate()?;
    let columns = crate::escape::identifier_list(table.columns().iter().map(|c| c.name()))?;
    Ok(format!(
        "COPY {} ({columns}) FROM STDIN WITH (FORMAT {format})",
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

    /// Leaves only whole CopyData frames in `buf`.
    fn close_frame(&mut self, buf: &mut BytesMut) -> Result<()>;

    /// Puts everything still held, and the end of the stream, into `buf`.
    fn finish(&mut self, buf: &mut BytesMut) -> Result<()>;

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

/// Validates rows against a table definition and hands their values to a
/// [`RowSink`]. A rejected row leaves nothing behind in the sink.
#[derive(Debug, Clone)]
pub(crate) struct RowEncoder<S = HyperBinaryFrames> {
    types: Vec<ColumnType>,
    names: Vec<String>,
    rows: u64,
    /// Next column of a row built with `add`; 0 when no row is pending.
    next_col: usize,
    sink: S,
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
        self.sink.set_flush_threshold(bytes.max(1));
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

    /// Leaves only whole CopyData frames in `buf` (a half-built row is dropped).
    pub(crate) fn close_frame(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.discard_partial(buf);
        self.sink.close_frame(buf)
    }

    /// Ends the stream: every row held and the stream's end go into `buf`.
    pub(crate) fn finish(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.discard_partial(buf);
        self.sink.finish(buf)
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
        let kind = match e.kind() {
            ErrorKind::TypeMismatch => RowErrorKind::WrongType,
            _ if value.is_null() => RowErrorKind::NullInNotNull,
            _ => RowErrorKind::OutOfRange,
        };
        self.row_error(Some(i), kind, e.message().to_owned())
    }

    fn row_error(&self, column: Option<usize>, kind: RowErrorKind, message: String) -> Error {
        Error::InvalidRow {
            row: self.rows,
            column: column.map(|i| self.names[i].clone()),
            kind,
            message,
        }
    }
}

/// HyperBinary rows straight into the caller's buffer (the connection's
/// send buffer, or a chunk's), in CopyData frames of about the flush
/// threshold: no per-row allocation, and a rejected row is truncated away.
#[derive(Debug, Clone)]
pub(crate) struct HyperBinaryFrames {
    row_start: usize,
    /// Offset of the open CopyData frame's header, if one is open.
    frame_start: Option<usize>,
    flush_threshold: usize,
}

impl HyperBinaryFrames {
    pub(crate) fn new() -> HyperBinaryFrames {
        HyperBinaryFrames {
            row_start: 0,
            frame_start: None,
            flush_threshold: DEFAULT_FLUSH_THRESHOLD,
        }
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
    fn close_frame(&mut self, buf: &mut BytesMut) -> Result<()> {
        if let Some(start) = self.frame_start.take() {
            if buf.len() == start + 5 {
                buf.truncate(start);
            } else {
                frontend::end_copy_data(buf, start)?;
            }
        }
        Ok(())
    }

    /// HyperBinary has no trailer: the last frame is closed and that is all.
    fn finish(&mut self, buf: &mut BytesMut) -> Result<()> {
        self.close_frame(buf)
    }

    fn set_flush_threshold(&mut self, bytes: usize) {
        self.flush_threshold = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyperdb_api_core::types::SqlType;

    fn table() -> TableDefinition {
        TableDefinition::new("m")
            .with_not_null_column("id", SqlType::Int)
            .with_column("v", SqlType::Double)
    }

    fn encoder(buf: &mut BytesMut) -> RowEncoder {
        let mut e = RowEncoder::new(&table()).unwrap();
        e.start_stream(buf);
        e
    }

    #[test]
    fn rows_are_framed_and_encoded() {
        let mut buf = BytesMut::new();
        let mut e = encoder(&mut buf);
        e.add_row(&mut buf, &[&1i32, &Some(0.5f64)]).unwrap();
        e.add_row(&mut buf, &[&2i32, &None::<f64>]).unwrap();
        e.close_frame(&mut buf).unwrap();
        let mut want = vec![b'd'];
        let mut body = b"HPRCPY".to_vec();
        body.extend_from_slice(&[0; 13]);
        body.extend_from_slice(&1i32.to_le_bytes());
        body.push(0);
        body.extend_from_slice(&0.5f64.to_le_bytes());
        body.extend_from_slice(&2i32.to_le_bytes());
        body.push(1);
        want.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        want.extend_from_slice(&body);
        assert_eq!(&buf[..], &want[..]);
        assert_eq!(e.rows(), 2);
    }

    #[test]
    fn bad_rows_leave_nothing_behind() {
        let mut buf = BytesMut::new();
        let mut e = encoder(&mut buf);
        e.add_row(&mut buf, &[&1i32, &1.0f64]).unwrap();
        let len = buf.len();
        let cases: Vec<(Vec<&dyn ToHyperBinary>, RowErrorKind)> = vec![
            (vec![&1i32], RowErrorKind::ColumnCount),
            (vec![&None::<i32>, &1.0f64], RowErrorKind::NullInNotNull),
            (vec![&"x", &1.0f64], RowErrorKind::WrongType),
            (vec![&5_000_000_000i64, &1.0f64], RowErrorKind::OutOfRange),
        ];
        for (values, want) in cases {
            match e.add_row(&mut buf, &values) {
                Err(Error::InvalidRow { row, kind, .. }) => {
                    assert_eq!(kind, want);
                    assert_eq!(row, 1);
                }
                other => panic!("{want:?}: {other:?}"),
            }
            assert_eq!(buf.len(), len, "{want:?} left bytes");
        }
        let err = e.add_row(&mut buf, &[&None::<i32>, &1.0f64]).unwrap_err();
        assert!(err.to_string().contains("column `id`"), "{err}");
        assert_eq!(e.rows(), 1);
    }

    #[test]
    fn column_by_column_rows() {
        let mut buf = BytesMut::new();
        let mut e = encoder(&mut buf);
        e.add(&mut buf, &7i32).unwrap();
        assert!(
            e.add_row(&mut buf, &[&1i32, &1.0f64]).is_err(),
            "partial row pending"
        );
        e.add(&mut buf, &None::<f64>).unwrap();
        assert!(e.add(&mut buf, &1i32).is_err(), "row is full");
        e.end_row(&mut buf).unwrap();
        let len = buf.len();
        e.add(&mut buf, &8i32).unwrap();
        assert!(e.end_row(&mut buf).is_err());
        assert_eq!(buf.len(), len, "short row discarded");
        e.add(&mut buf, &9i32).unwrap();
        assert!(e.add(&mut buf, &"no").is_err());
        assert_eq!(buf.len(), len, "bad value discards the partial row");
        assert_eq!(e.rows(), 1);
    }

    #[test]
    fn frames_fill_to_the_threshold() {
        let mut buf = BytesMut::new();
        let mut e = encoder(&mut buf);
        e.set_flush_threshold(64);
        let mut frames = 0;
        for i in 0..100 {
            e.add_row(&mut buf, &[&i, &1.0f64]).unwrap();
            if e.frame_full(&buf) {
                e.close_frame(&mut buf).unwrap();
                frames += 1;
            }
        }
        e.close_frame(&mut buf).unwrap();
        assert!(frames > 10, "{frames}");
        // Every frame is well-formed.
        let mut at = 0;
        while at < buf.len() {
            assert_eq!(buf[at], b'd');
            let len = i32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
            at += 1 + len;
        }
        assert_eq!(at, buf.len());
    }

    #[test]
    fn copy_statement_quotes_everything() {
        let t = TableDefinition::new(crate::TableName::new("my t").with_schema("s\"x"))
            .with_column("a b", SqlType::Int);
        assert_eq!(
            copy_sql(&t, "HYPERBINARY").unwrap(),
            "COPY \"s\"\"x\".\"my t\" (\"a b\") FROM STDIN WITH (FORMAT HYPERBINARY)"
        );
    }
}
