//! A row's values read in column order: the fast way into a tuple.
//!
//! Looking a value up by column ([`Row::try_get`]) needs to know where each
//! field lies, so a `DataRow` is indexed before it is read. A reader that
//! takes every value in order needs no index: [`RowValues`] walks the row's
//! length words as it decodes, one pass over bytes that are already in
//! cache. `query_as` and `next_as` read this way for every [`FromRow`]
//! type with an in-order reader (the tuples have one).
//!
//! [`FromRow`]: crate::FromRow

use std::sync::Arc;

use hyperdb_api_core::protocol::backend::RowFields;
use hyperdb_api_core::types::FromHyperBinary;

use crate::error::Result;
use crate::rows::row::{column_not_found, decode};
use crate::rows::{Row, Schema};

/// The values of one `DataRow`, read front to back with
/// [`read`](Self::read): what [`FromRow::from_values`] reads.
///
/// [`FromRow::from_values`]: crate::FromRow::from_values
#[derive(Debug)]
pub struct RowValues<'a> {
    row: &'a Row,
    fields: RowFields<'a>,
    /// The column `read` reads next.
    next: usize,
}

impl<'a> RowValues<'a> {
    /// The values of `row`, a `DataRow` (its block came off the wire).
    #[inline]
    pub(super) fn new(row: &'a Row) -> Result<RowValues<'a>> {
        Ok(RowValues {
            row,
            fields: row.block.wire.fields(row.index)?,
            next: 0,
        })
    }

    /// The result's columns.
    pub fn schema(&self) -> &Arc<Schema> {
        self.row.schema()
    }

    /// The next column's value as `T`, with [`Row::try_get`]'s errors.
    /// After an error the next call reads the column after it.
    #[inline(always)]
    pub fn read<T: FromHyperBinary<'a>>(&mut self) -> Result<T> {
        let block = &*self.row.block;
        let index = self.next;
        let Some(col) = block.columns.get(index) else {
            return Err(column_not_found(&index, block.schema.len()));
        };
        let raw = self.fields.next_field()?;
        self.next += 1;
        decode!(T, &block.schema, col, index, Some(raw))
    }

    /// Checks the fields not read and that nothing follows them; a
    /// protocol error when the row is malformed anywhere, including where a
    /// `read` already failed (the fields stay where they failed).
    #[inline]
    pub(super) fn finish(self) -> Result<()> {
        Ok(self.fields.finish()?)
    }
}
