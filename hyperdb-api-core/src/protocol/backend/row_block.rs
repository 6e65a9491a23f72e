//! `DataRow`s taken off the receive buffer a block at a time.
//!
//! A result is nearly all `DataRow` messages, tens of millions of them. Taking
//! them one message at a time costs a reference count, an enum move and a
//! dispatch per row; taking every complete row at the front of the buffer in
//! one pass costs one `Bytes` split per block and leaves one offset per row.
//!
//! A row's fields are found when the row is read, not when the block is
//! taken: [`RowBlock::index_row`] walks the row's length words (checking
//! that they fill the row exactly) into a few spans the reader keeps, and
//! each value is then an O(1) lookup. Indexing the whole block up front
//! wrote a span per field for every row, 32 bytes a row for the measurements
//! schema, and read them back a pass later, after the block had left the
//! cache; indexed as it is read, a row is walked while its bytes are hot
//! and its spans never leave L1. A reader that takes the values in column
//! order (a tuple) needs no spans at all: [`RowBlock::fields`] hands it the
//! row's fields one after another, checked as they are read.

use bytes::{Bytes, BytesMut};

use crate::error::{Error, Result};
use crate::protocol::backend::HEADER;
use crate::protocol::Limits;

/// Where one field's value lies in a [`RowBlock`]'s buffer; made by
/// [`RowBlock::index_row`], read with [`RowBlock::value`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldSpan {
    start: u32,
    /// Length in bytes; -1 is SQL NULL, [`FieldSpan::MISSING`] no value.
    len: i32,
}

impl FieldSpan {
    /// Where a malformed row's fields are (nowhere).
    const MISSING: FieldSpan = FieldSpan {
        start: 0,
        len: i32::MIN,
    };
}

/// Consecutive `DataRow`s of one result, all with the same field count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowBlock {
    /// The messages as received, framing included.
    buf: Bytes,
    columns: usize,
    /// Per row, the offset of its body (the field count word).
    rows: Vec<u32>,
}

impl RowBlock {
    /// Rows in the block.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The block's size as received: its messages, framing included.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    /// Fields per row.
    #[inline]
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Row `row`'s fields, to read front to back; there are
    /// [`columns`](Self::columns) of them. Fails with a protocol error when
    /// there is no such row.
    #[inline]
    pub fn fields(&self, row: usize) -> Result<RowFields<'_>> {
        let (rest, _) = self.field_bytes(row)?;
        Ok(RowFields { rest })
    }

    /// Finds where each field of row `row` lies, one span per column into
    /// `spans` (exactly [`columns`](Self::columns) long). Fails with a
    /// protocol error when the row's length words do not fill it exactly
    /// (or there is no such row); `spans` then holds nothing to rely on.
    #[inline(always)]
    pub fn index_row(&self, row: usize, spans: &mut [FieldSpan]) -> Result<()> {
        if spans.len() != self.columns {
            return Err(Error::protocol(format!(
                "{} spans for a row of {} fields",
                spans.len(),
                self.columns
            )));
        }
        let (mut rest, end) = self.field_bytes(row)?;
        // The same checks as `split_field`, spelled out: through it, the
        // cursor's step cost 3 more instructions a field (callgrind).
        for slot in spans.iter_mut() {
            let Some((word, after)) = rest.split_first_chunk::<4>() else {
                return Err(malformed("truncated in a field length"));
            };
            let len = i32::from_be_bytes(*word);
            let size = match usize::try_from(len) {
                Ok(n) if n <= after.len() => n,
                Ok(_) => return Err(malformed("with a field longer than the row")),
                Err(_) if len == -1 => 0,
                Err(_) => return Err(malformed("with a negative field length other than -1")),
            };
            // The block fits in u32 (checked when it was taken).
            *slot = FieldSpan {
                start: (end - after.len()) as u32,
                len,
            };
            rest = &after[size..];
        }
        if !rest.is_empty() {
            return Err(malformed("longer than its fields"));
        }
        Ok(())
    }

    /// The value at `span` (made by [`index_row`](Self::index_row) or
    /// [`index_all`](Self::index_all) on this block): `Some(None)` is SQL
    /// NULL, `None` a malformed row's or a span from elsewhere.
    #[inline]
    pub fn value(&self, span: FieldSpan) -> Option<Option<&[u8]>> {
        match span.len {
            -1 => Some(None),
            len if len < 0 => None,
            len => {
                let start = span.start as usize;
                self.buf.get(start..start + len as usize).map(Some)
            }
        }
    }

    /// The spans of every row, row-major (`columns` per row), for reading
    /// rows in any order; [`index_row`](Self::index_row) gives one row's.
    /// A malformed row's spans lead nowhere ([`value`](Self::value) is
    /// `None`).
    pub fn index_all(&self) -> Vec<FieldSpan> {
        let mut all = Vec::with_capacity(self.len() * self.columns);
        let mut spans = vec![FieldSpan::default(); self.columns];
        for row in 0..self.len() {
            match self.index_row(row, &mut spans) {
                Ok(()) => all.extend_from_slice(&spans),
                Err(_) => all.extend(std::iter::repeat_n(FieldSpan::MISSING, self.columns)),
            }
        }
        all
    }

    /// Row `row`'s fields (its body after the field count, checked when
    /// the block was taken) and where the row ends in the buffer.
    #[inline(always)]
    fn field_bytes(&self, row: usize) -> Result<(&[u8], usize)> {
        let Some(body) = self.body(row) else {
            return Err(malformed("index out of the block"));
        };
        match self.buf.get(body.start + 2..body.end) {
            Some(rest) => Ok((rest, body.end)),
            None => Err(malformed("shorter than its field count")),
        }
    }

    /// Where row `row`'s body lies: rows are contiguous, so a body ends
    /// where the next row's header starts.
    #[inline]
    fn body(&self, row: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.rows.get(row)? as usize;
        let end = match self.rows.get(row + 1) {
            Some(&next) => next as usize - HEADER,
            None => self.buf.len(),
        };
        Some(start..end)
    }
}

/// One `DataRow`'s fields, read front to back ([`RowBlock::fields`]):
/// each length word is checked against what is left of the row as it is
/// read, and [`finish`](Self::finish) checks that the fields fill the row
/// exactly. Reading values in column order this way is one pass over the
/// row's bytes, with nothing written but the values. The reader keeps the
/// count (a row has [`RowBlock::columns`] fields): a count here, kept in
/// step on every read, cost a typed scan 4-5 instructions a field.
#[derive(Clone, Debug)]
pub struct RowFields<'a> {
    /// The row's bytes from the next length word on.
    rest: &'a [u8],
}

impl<'a> RowFields<'a> {
    /// The next field's bytes; `None` is SQL NULL. A protocol error when
    /// the row is malformed there, or every field was read. After an
    /// error the reader stays where it failed, so every later call (and
    /// [`finish`](Self::finish)) fails the same way.
    #[inline(always)]
    pub fn next_field(&mut self) -> Result<Option<&'a [u8]>> {
        let (value, after) = split_field(self.rest)?;
        self.rest = after;
        Ok(value)
    }

    /// [`next_field`](Self::next_field) without the error: `None` where
    /// it would fail (and the reader stays there), for a reader that
    /// reports errors by reading the row again.
    #[inline(always)]
    pub fn try_next_field(&mut self) -> Option<Option<&'a [u8]>> {
        // `split_field`'s checks, spelled out once more: with both built on
        // one `Option` splitter (the error found again, out of line), the
        // typed scan took 2-3 more instructions a row (callgrind).
        let (word, after) = self.rest.split_first_chunk::<4>()?;
        let len = i32::from_be_bytes(*word);
        let (value, after) = match usize::try_from(len) {
            Ok(n) => {
                let (value, after) = after.split_at_checked(n)?;
                (Some(value), after)
            }
            Err(_) if len == -1 => (None, after),
            Err(_) => return None,
        };
        self.rest = after;
        Some(value)
    }

    /// The bytes of the fields not read yet, length words included: for a
    /// reader that knows the row's layout in advance and checks it whole.
    #[inline(always)]
    pub fn unread(&self) -> &'a [u8] {
        self.rest
    }

    /// Whether the fields read so far fill the row: with every field
    /// read, the row is well-formed and [`finish`](Self::finish) has
    /// nothing to check.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Walks the `unread` fields the reader left (the row's field count
    /// less those it read) and checks that nothing follows them: a
    /// protocol error when the row is malformed anywhere from here on, or
    /// its bytes do not hold `unread` more fields.
    #[inline(always)]
    pub fn finish(self, unread: usize) -> Result<()> {
        // Readers mostly read every field: then this is two comparisons.
        if unread == 0 && self.is_empty() {
            return Ok(());
        }
        self.finish_rest(unread)
    }

    #[inline(never)]
    fn finish_rest(mut self, unread: usize) -> Result<()> {
        for _ in 0..unread {
            self.next_field()?;
        }
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(malformed("longer than its fields"))
        }
    }
}

/// Splits the field at the front of `rest` (a row's fields from a length
/// word on) off it: its bytes (`None`: NULL) and what follows them; a
/// protocol error when the length word does not fit.
#[inline(always)]
fn split_field(rest: &[u8]) -> Result<(Option<&[u8]>, &[u8])> {
    let Some((word, after)) = rest.split_first_chunk::<4>() else {
        return Err(malformed("truncated in a field length"));
    };
    let len = i32::from_be_bytes(*word);
    match usize::try_from(len) {
        Ok(n) => match after.split_at_checked(n) {
            Some((value, after)) => Ok((Some(value), after)),
            None => Err(malformed("with a field longer than the row")),
        },
        Err(_) if len == -1 => Ok((None, after)),
        Err(_) => Err(malformed("with a negative field length other than -1")),
    }
}

/// Takes every complete `DataRow` at the front of `buf` (the caller has
/// checked the first one's header against `limits` and seen it complete).
/// Stops at the first other message, at an incomplete one, at one whose
/// header breaks `limits` (the next `parse` reports it), before the block
/// would outgrow 32-bit offsets, and before a row with another field count
/// than the block's first (it starts the next block) or too short for a
/// field count (the next `parse` reports it). So the rows and errors that
/// come out do not depend on how the bytes were cut into reads (the
/// `backend` fuzz target found that they did); whoever reads the rows
/// checks each block's count against the result's columns (`NextRow`,
/// `Block::wire`). The fields themselves are checked as each row is
/// indexed.
pub(crate) fn take(buf: &mut BytesMut, limits: &Limits) -> Result<RowBlock> {
    let data = &buf[..buf.len().min(u32::MAX as usize)];
    let mut rows = Vec::new();
    let mut columns = None;
    let mut pos = 0;
    while let Some(&[b'D', a, b, c, d]) = data.get(pos..pos + HEADER) {
        let len = i32::from_be_bytes([a, b, c, d]);
        let Some(body_len) = usize::try_from(len).ok().and_then(|l| l.checked_sub(4)) else {
            break;
        };
        if body_len > limits.max_data_message || data.len() - pos - HEADER < body_len {
            break;
        }
        let Some(&count) = data[pos + HEADER..pos + HEADER + body_len].first_chunk::<2>() else {
            if rows.is_empty() {
                return Err(malformed("shorter than its field count"));
            }
            break;
        };
        let count = usize::from(u16::from_be_bytes(count));
        match columns {
            None => {
                // Rows of a result are alike: size the table once from the
                // first, instead of growing it row by row.
                rows.reserve(data.len() / (HEADER + body_len) + 1);
                columns = Some(count);
            }
            Some(c) if c != count => break,
            Some(_) => {}
        }
        rows.push((pos + HEADER) as u32);
        pos += HEADER + body_len;
    }
    Ok(RowBlock {
        buf: buf.split_to(pos).freeze(),
        columns: columns.unwrap_or(0),
        rows,
    })
}

#[cold]
#[inline(never)]
fn malformed(what: &str) -> Error {
    Error::protocol(format!("DataRow {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::backend::tests::{data_row, frame};
    use bytes::BufMut;

    /// A whole `DataRow` message.
    fn row(fields: &[Option<&[u8]>]) -> Vec<u8> {
        frame(b'D', &data_row(fields))
    }

    fn take_all(bytes: &[u8]) -> (Result<RowBlock>, BytesMut) {
        let mut buf = BytesMut::from(bytes);
        let block = take(&mut buf, &Limits::default());
        (block, buf)
    }

    /// Every row of `block` through `index_row` and `value`, checked
    /// against `index_all` on the way.
    fn read_rows(block: &RowBlock) -> Result<Vec<Vec<Option<Vec<u8>>>>> {
        let all = block.index_all();
        assert_eq!(all.len(), block.len() * block.columns());
        let mut spans = vec![FieldSpan::default(); block.columns()];
        let mut rows = Vec::new();
        for r in 0..block.len() {
            block.index_row(r, &mut spans)?;
            assert_eq!(spans[..], all[r * block.columns()..][..block.columns()]);
            let row: Vec<_> = spans
                .iter()
                .map(|&s| block.value(s).unwrap().map(<[u8]>::to_vec))
                .collect();
            let mut fields = block.fields(r)?;
            for want in &row {
                assert_eq!(fields.next_field()?.map(<[u8]>::to_vec), *want);
            }
            assert!(fields.is_empty());
            assert!(fields.clone().next_field().is_err(), "past the last field");
            assert_eq!(fields.clone().try_next_field(), None, "past the last field");
            fields.finish(0)?;
            // The unchecked read reads the same fields.
            let mut fields = block.fields(r)?;
            for want in &row {
                let got = fields.try_next_field().expect("a well-formed field");
                assert_eq!(got.map(<[u8]>::to_vec), *want);
            }
            assert!(fields.is_empty());
            rows.push(row);
        }
        Ok(rows)
    }

    #[test]
    fn takes_consecutive_rows_and_stops_at_other_messages() {
        let mut bytes = row(&[Some(b"ab"), None]);
        bytes.extend(row(&[Some(b""), Some(b"xyz")]));
        bytes.extend([b'C', 0, 0, 0, 5, 0]);
        let (block, rest) = take_all(&bytes);
        let block = block.unwrap();
        assert_eq!((block.len(), block.columns()), (2, 2));
        assert_eq!(
            read_rows(&block).unwrap(),
            vec![
                vec![Some(b"ab".to_vec()), None],
                vec![Some(vec![]), Some(b"xyz".to_vec())],
            ]
        );
        assert!(block.index_row(2, &mut [FieldSpan::default(); 2]).is_err());
        // Spans for another field count are refused, not half filled.
        assert!(block.index_row(0, &mut [FieldSpan::default(); 3]).is_err());
        assert_eq!(&rest[..], &[b'C', 0, 0, 0, 5, 0]);
    }

    #[test]
    fn every_split_point_yields_the_same_rows() {
        let want: Vec<Vec<Option<Vec<u8>>>> = (0..5u8)
            .map(|i| vec![Some(vec![i; i as usize % 4]), None, Some(vec![i])])
            .collect();
        let all: Vec<u8> = want
            .iter()
            .flat_map(|r| row(&r.iter().map(Option::as_deref).collect::<Vec<_>>()))
            .collect();
        for split in 0..all.len() {
            let mut buf = BytesMut::from(&all[..split]);
            let mut got = Vec::new();
            let mut drain = |buf: &mut BytesMut| {
                if buf.first() == Some(&b'D') {
                    let b = take(buf, &Limits::default()).unwrap();
                    got.extend(read_rows(&b).unwrap());
                }
            };
            drain(&mut buf);
            buf.put_slice(&all[split..]);
            drain(&mut buf);
            assert!(buf.is_empty(), "split {split}");
            assert_eq!(got, want, "split {split}");
        }
    }

    #[test]
    fn rows_without_fields_are_counted() {
        let bytes = [row(&[]), row(&[])].concat();
        let block = take_all(&bytes).0.unwrap();
        assert_eq!((block.len(), block.columns()), (2, 0));
        assert_eq!(read_rows(&block).unwrap(), vec![vec![], vec![]]);
    }

    /// A malformed row fails when the block is taken (its field count) or
    /// when the row is indexed (its fields); `index_all` leaves its spans
    /// leading nowhere, never past the row.
    #[test]
    fn malformed_rows_are_protocol_errors() {
        let bad: Vec<Vec<u8>> = vec![
            // Shorter than its field count.
            vec![b'D', 0, 0, 0, 5, 0],
            // A length word cut short.
            vec![b'D', 0, 0, 0, 8, 0, 1, 0, 0],
            // A field longer than the row.
            vec![b'D', 0, 0, 0, 11, 0, 1, 0, 0, 0, 9, b'x'],
            // A negative length other than -1.
            vec![b'D', 0, 0, 0, 10, 0, 1, 0xff, 0xff, 0xff, 0xfe],
            // Bytes after the declared fields.
            vec![b'D', 0, 0, 0, 7, 0, 0, 9],
            // A field running into the next row.
            [
                vec![b'D', 0, 0, 0, 11, 0, 1, 0, 0, 0, 9, b'x'],
                row(&[Some(b"12345678")]),
            ]
            .concat(),
        ];
        for (i, bytes) in bad.iter().enumerate() {
            let (block, _) = take_all(bytes);
            let err = block
                .and_then(|b| {
                    // No bad row's first field has more than a byte.
                    if let Some(Some(v)) = b.index_all().first().and_then(|&s| b.value(s)) {
                        assert!(v.len() <= 1, "case {i}: read past the row");
                    }
                    read_rows(&b)
                })
                .expect_err(&format!("case {i}"));
            assert_eq!(err.kind(), crate::error::ErrorKind::Protocol, "case {i}");
            // Read in order, the same rows fail (a block that was taken).
            if let (Ok(b), _) = take_all(bytes) {
                let in_order = (0..b.len()).try_for_each(|r| {
                    let mut fields = b.fields(r)?;
                    for _ in 0..b.columns() {
                        fields.next_field()?;
                    }
                    fields.finish(0)
                });
                let err = in_order.expect_err(&format!("case {i} in order"));
                assert_eq!(err.kind(), crate::error::ErrorKind::Protocol, "case {i}");
                // Unchecked, some row stops short or is not filled.
                let whole = (0..b.len()).all(|r| {
                    let Ok(mut fields) = b.fields(r) else {
                        return false;
                    };
                    (0..b.columns()).all(|_| fields.try_next_field().is_some()) && fields.is_empty()
                });
                assert!(!whole, "case {i} read unchecked as well-formed");
            }
        }
    }

    /// A row with another field count than the rows before it, or too
    /// short for a field count, ends the block: it comes out of the next
    /// `take` (a block of its own, or the error), so the rows before it
    /// come out the same whether they arrived with it or in an earlier
    /// read (found by the `backend` fuzz target: whole, the error came
    /// first and the rows before it were lost).
    #[test]
    fn a_block_ends_before_a_row_unlike_it() {
        let bytes = [row(&[None]), row(&[None]), row(&[None, None]), row(&[None])].concat();
        let mut buf = BytesMut::from(&bytes[..]);
        let mut blocks = Vec::new();
        while !buf.is_empty() {
            let block = take(&mut buf, &Limits::default()).unwrap();
            blocks.push((block.len(), block.columns()));
        }
        assert_eq!(blocks, [(2, 1), (1, 2), (1, 1)]);

        let bytes = [row(&[None]), vec![b'D', 0, 0, 0, 5, 0]].concat();
        let mut buf = BytesMut::from(&bytes[..]);
        let block = take(&mut buf, &Limits::default()).unwrap();
        assert_eq!((block.len(), block.columns()), (1, 1));
        let err = take(&mut buf, &Limits::default()).unwrap_err();
        assert!(
            err.to_string().contains("shorter than its field count"),
            "{err}"
        );
    }

    /// A reader may stop early: `finish` walks and checks the rest.
    #[test]
    fn finish_checks_the_fields_not_read() {
        let good = row(&[Some(b"a"), None, Some(b"bc")]);
        let block = take_all(&good).0.unwrap();
        let mut fields = block.fields(0).unwrap();
        assert_eq!(fields.next_field().unwrap(), Some(&b"a"[..]));
        assert!(!fields.is_empty());
        fields.clone().finish(2).unwrap();
        assert!(fields.clone().finish(1).is_err(), "a field left over");
        assert!(fields.finish(3).is_err(), "a field too many");
        // The last field claims 9 bytes of 2.
        let mut bad = good.clone();
        let at = bad.len() - 6;
        bad[at..at + 4].copy_from_slice(&9i32.to_be_bytes());
        let block = take_all(&bad).0.unwrap();
        let mut fields = block.fields(0).unwrap();
        assert_eq!(fields.next_field().unwrap(), Some(&b"a"[..]));
        let err = fields.finish(2).expect_err("field longer than the row");
        assert!(err.to_string().contains("longer than the row"), "{err}");
        // A failed read sticks: the reader does not move past it.
        let mut fields = block.fields(0).unwrap();
        fields.next_field().unwrap();
        fields.next_field().unwrap();
        assert_eq!(fields.try_next_field(), None);
        assert!(fields.next_field().is_err());
        let err = fields.finish(1).expect_err("still malformed");
        assert!(err.to_string().contains("longer than the row"), "{err}");
    }
}
