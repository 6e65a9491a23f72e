//! A row's values read in column order: the fast way into a tuple.
//!
//! Looking a value up by column ([`Row::try_get`]) needs to know where each
//! field lies, so a `DataRow` is indexed before it is read. A reader that
//! takes every value in order needs no index: [`RowValues`] walks the row's
//! length words as it decodes, one pass over bytes that are already in
//! cache. `query_as`, `Rows::typed` and `next_as` read this way for every
//! [`FromRow`] type with an in-order reader (the tuples have one).
//!
//! [`FromRow`]: crate::FromRow

use std::sync::Arc;

use hyperdb_api_core::protocol::backend::RowFields;
use hyperdb_api_core::types::FromHyperBinary;

use crate::error::Result;
use crate::rows::row::{column_not_found, decode, BlockColumn};
use crate::rows::{Row, Schema};

/// The values of one `DataRow`, read front to back with
/// [`read`](Self::read): what [`FromRow::from_values`] reads.
///
/// [`FromRow::from_values`]: crate::FromRow::from_values
#[derive(Debug)]
pub struct RowValues<'a> {
    schema: &'a Arc<Schema>,
    /// The block's columns, held here so a read does not go through the
    /// row's `Arc` for each value.
    columns: &'a [BlockColumn],
    fields: RowFields<'a>,
    /// The column `read` reads next.
    next: usize,
}

impl<'a> RowValues<'a> {
    /// The values of `row`, a `DataRow` (its block came off the wire).
    #[inline]
    pub(super) fn new(row: &'a Row) -> Result<RowValues<'a>> {
        let block = &*row.block;
        Ok(RowValues {
            schema: &block.schema,
            columns: &block.columns,
            fields: block.wire.fields(row.index)?,
            next: 0,
        })
    }

    /// The result's columns.
    pub fn schema(&self) -> &Arc<Schema> {
        self.schema
    }

    /// The next column's value as `T`, with [`Row::try_get`]'s errors.
    /// After a value's error the next call reads the column after it; in a
    /// malformed row (a protocol error) every later call fails too.
    #[inline(always)]
    pub fn read<T: FromHyperBinary<'a>>(&mut self) -> Result<T> {
        let index = self.next;
        let Some(col) = self.columns.get(index) else {
            return Err(column_not_found(&index, self.schema.len()));
        };
        let raw = self.fields.next_field()?;
        self.next += 1;
        decode!(T, self.schema, col, index, Some(raw))
    }

    /// The next column's value as `T`, or `None` where [`read`](Self::read)
    /// would fail: for [`FromRow::try_from_values`], which leaves the
    /// error to a second, checked read.
    ///
    /// [`FromRow::try_from_values`]: crate::FromRow::try_from_values
    #[inline(always)]
    pub fn try_read<T: FromHyperBinary<'a>>(&mut self) -> Option<T> {
        let col = self.columns.get(self.next)?;
        let raw = self.fields.try_next_field()?;
        self.next += 1;
        let ty = col.sql_type.as_ref().filter(|ty| T::accepts(ty))?;
        match raw {
            Some(raw) => T::decode_hyper(ty, raw).ok(),
            None => T::decode_hyper_null(ty).ok(),
        }
    }

    /// The bytes of the fields not read yet, for
    /// [`FromRow::from_plain_fields`](crate::FromRow::from_plain_fields).
    #[inline(always)]
    pub(super) fn unread(&self) -> &'a [u8] {
        self.fields.unread()
    }

    /// Whether every field was read and nothing follows them: the row is
    /// well-formed, no [`finish`](Self::finish) needed.
    #[inline(always)]
    pub(super) fn is_complete(&self) -> bool {
        self.next == self.columns.len() && self.fields.is_empty()
    }

    /// Checks the fields not read and that nothing follows them; a
    /// protocol error when the row is malformed anywhere, including where a
    /// `read` already failed (the fields stay where they failed).
    #[inline]
    pub(super) fn finish(self) -> Result<()> {
        // `read` never goes past the last column.
        Ok(self
            .fields
            .finish(self.columns.len().saturating_sub(self.next))?)
    }
}
