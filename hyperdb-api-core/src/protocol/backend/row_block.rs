//! `DataRow`s taken off the receive buffer a block at a time.
//!
//! A result is nearly all `DataRow` messages, tens of millions of them. Taking
//! them one message at a time costs a reference count, an enum move and a
//! dispatch per row; taking every complete row at the front of the buffer in
//! one pass costs one `Bytes` split per block and leaves an offset table, so
//! a value is found in O(1) without walking the length words before it. The
//! row framing is validated here, once, so reading a value cannot fail.

use bytes::{Bytes, BytesMut};

use crate::error::{Error, Result};
use crate::protocol::backend::HEADER;
use crate::protocol::Limits;

/// Where one field's value lies in a [`RowBlock`]'s buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FieldSpan {
    start: u32,
    /// Length in bytes; -1 is SQL NULL.
    len: i32,
}

/// Consecutive `DataRow`s of one result, all with the same field count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowBlock {
    /// The messages as received, framing included.
    buf: Bytes,
    rows: usize,
    columns: usize,
    /// Row-major: `columns` spans per row.
    fields: Vec<FieldSpan>,
}

impl RowBlock {
    /// Rows in the block.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fields per row.
    #[inline]
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Field `column` of row `row`: `Some(None)` is SQL NULL, `None` means
    /// no such row or column.
    #[inline]
    pub fn field(&self, row: usize, column: usize) -> Option<Option<&[u8]>> {
        if column >= self.columns {
            return None;
        }
        let span = *self.fields.get(row * self.columns + column)?;
        if span.len < 0 {
            return Some(None);
        }
        let start = span.start as usize;
        // Validated when the block was taken; `get` keeps a bad offset a
        // `None` rather than a panic all the same.
        self.buf.get(start..start + span.len as usize).map(Some)
    }
}

/// Takes every complete `DataRow` at the front of `buf` (the caller has
/// checked the first one's header against `limits` and seen it complete).
/// Stops at the first other message, at an incomplete one, at one whose
/// header breaks `limits` (the next `parse` reports it), or before the block
/// would outgrow 32-bit offsets.
pub(crate) fn take(buf: &mut BytesMut, limits: &Limits) -> Result<RowBlock> {
    let max_end = buf.len().min(u32::MAX as usize);
    let mut fields = Vec::new();
    let mut columns = None;
    let mut rows = 0;
    let mut pos = 0;
    while let Some(&[b'D', a, b, c, d]) = buf.get(pos..pos + HEADER) {
        let len = i32::from_be_bytes([a, b, c, d]);
        let Some(body) = usize::try_from(len).ok().and_then(|l| l.checked_sub(4)) else {
            break;
        };
        let end = pos + HEADER + body;
        if body > limits.max_data_message || end > max_end {
            break;
        }
        let count = index_row(&buf[pos + HEADER..end], end, &mut fields)?;
        match columns {
            None => {
                // Rows of a result are alike: size the table once from the
                // first, instead of growing it row by row.
                fields.reserve((buf.len() / (end - pos) + 1) * count);
                columns = Some(count);
            }
            Some(c) if c != count => return Err(field_count_changed(c, count)),
            Some(_) => {}
        }
        rows += 1;
        pos = end;
    }
    Ok(RowBlock {
        buf: buf.split_to(pos).freeze(),
        rows,
        columns: columns.unwrap_or(0),
        fields,
    })
}

#[cold]
#[inline(never)]
fn field_count_changed(before: usize, now: usize) -> Error {
    Error::protocol(format!(
        "DataRow with {now} fields after rows with {before}"
    ))
}

/// Appends the spans of the row whose body is `body`, which ends at offset
/// `end` of the block; returns its field count. The body must hold exactly
/// the fields it declares.
#[inline(always)]
fn index_row(body: &[u8], end: usize, fields: &mut Vec<FieldSpan>) -> Result<usize> {
    let Some((count, mut rest)) = body.split_first_chunk::<2>() else {
        return Err(malformed("shorter than its field count"));
    };
    let count = u16::from_be_bytes(*count) as usize;
    fields.reserve(count);
    for _ in 0..count {
        fields.push(next_span(&mut rest, end)?);
    }
    if !rest.is_empty() {
        return Err(malformed("longer than its fields"));
    }
    Ok(count)
}

/// Takes one field's length word (and value) off `rest`, which ends at
/// offset `end` of the block.
#[inline(always)]
fn next_span(rest: &mut &[u8], end: usize) -> Result<FieldSpan> {
    let Some((len, after)) = rest.split_first_chunk::<4>() else {
        return Err(malformed("truncated in a field length"));
    };
    let len = i32::from_be_bytes(*len);
    // `end` fits in u32 (checked by the caller), so every offset does.
    let start = (end - after.len()) as u32;
    *rest = match usize::try_from(len) {
        Ok(n) => match after.get(n..) {
            Some(rest) => rest,
            None => return Err(malformed("with a field longer than the row")),
        },
        Err(_) if len == -1 => after,
        Err(_) => return Err(malformed("with a negative field length other than -1")),
    };
    Ok(FieldSpan { start, len })
}

#[cold]
#[inline(never)]
fn malformed(what: &str) -> Error {
    Error::protocol(format!("DataRow {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    fn row(fields: &[Option<&[u8]>]) -> Vec<u8> {
        let mut body = (fields.len() as i16).to_be_bytes().to_vec();
        for f in fields {
            match f {
                None => body.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    body.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    body.extend_from_slice(v);
                }
            }
        }
        let mut m = vec![b'D'];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(&body);
        m
    }

    fn take_all(bytes: &[u8]) -> (Result<RowBlock>, BytesMut) {
        let mut buf = BytesMut::from(bytes);
        let block = take(&mut buf, &Limits::default());
        (block, buf)
    }

    #[test]
    fn takes_consecutive_rows_and_stops_at_other_messages() {
        let mut bytes = row(&[Some(b"ab"), None]);
        bytes.extend(row(&[Some(b""), Some(b"xyz")]));
        bytes.extend([b'C', 0, 0, 0, 5, 0]);
        let (block, rest) = take_all(&bytes);
        let block = block.unwrap();
        assert_eq!((block.len(), block.columns()), (2, 2));
        assert_eq!(block.field(0, 0), Some(Some(&b"ab"[..])));
        assert_eq!(block.field(0, 1), Some(None));
        assert_eq!(block.field(1, 0), Some(Some(&b""[..])));
        assert_eq!(block.field(1, 1), Some(Some(&b"xyz"[..])));
        assert_eq!(block.field(2, 0), None);
        assert_eq!(block.field(0, 2), None);
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
                    for r in 0..b.len() {
                        got.push(
                            (0..3)
                                .map(|c| b.field(r, c).unwrap().map(<[u8]>::to_vec))
                                .collect::<Vec<_>>(),
                        );
                    }
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
        assert_eq!(block.field(0, 0), None);
    }

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
            // A different field count from the rows before.
            [row(&[None]), row(&[None, None])].concat(),
        ];
        for (i, bytes) in bad.iter().enumerate() {
            let err = take_all(bytes).0.expect_err(&format!("case {i}"));
            assert_eq!(err.kind(), crate::error::ErrorKind::Protocol, "case {i}");
        }
    }
}
