//! Query results: column metadata, rows decoded lazily from the receive
//! buffer, and the sync row iterator.

use std::sync::Arc;

use hyperdb_api_core::client::Client;
use hyperdb_api_core::protocol::backend::{DataRow, FieldDescription};
use hyperdb_api_core::protocol::ops::RowEvent;

use crate::error::{Error, Result};

/// One result column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    name: String,
    type_oid: u32,
    type_modifier: i32,
}

impl Column {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// PostgreSQL type OID as reported by hyperd.
    pub fn type_oid(&self) -> u32 {
        self.type_oid
    }

    /// Type modifier (length, precision/scale), -1 when none.
    pub fn type_modifier(&self) -> i32 {
        self.type_modifier
    }
}

/// The columns of a result, shared by all its rows.
#[derive(Debug, PartialEq, Eq)]
pub struct Schema {
    columns: Vec<Column>,
}

impl Schema {
    pub(crate) fn from_fields(fields: Vec<FieldDescription>) -> Arc<Schema> {
        Arc::new(Schema {
            columns: fields
                .into_iter()
                .map(|f| Column {
                    name: f.name,
                    type_oid: f.type_oid,
                    type_modifier: f.type_modifier,
                })
                .collect(),
        })
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Index of the first column called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// One result row; values stay in the received bytes until asked for.
#[derive(Clone, Debug)]
pub struct Row {
    schema: Arc<Schema>,
    data: DataRow,
}

impl Row {
    pub(crate) fn new(schema: Arc<Schema>, data: DataRow) -> Row {
        Row { schema, data }
    }

    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The raw HyperBinary bytes of column `index`; `None` is SQL NULL.
    pub fn raw(&self, index: usize) -> Result<Option<&[u8]>> {
        let n = self.data.len();
        self.data
            .fields()
            .nth(index)
            .ok_or_else(|| Error::invalid_argument("column index", format!("{index} is out of range: the row has {n} columns")))?
            .map_err(Error::from)
    }
}

/// A streaming result: rows arrive as the iterator advances, so memory stays
/// constant whatever the row count. Dropping it early is fine: the connection
/// discards the rest before its next request.
#[derive(Debug)]
pub struct Rows<'c> {
    client: &'c mut Client,
    schema: Arc<Schema>,
    affected: Option<u64>,
}

impl<'c> Rows<'c> {
    pub(crate) fn new(client: &'c mut Client, schema: Arc<Schema>) -> Rows<'c> {
        Rows {
            client,
            schema,
            affected: None,
        }
    }

    /// The result's columns, known before the first row.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// Rows the server reported once the stream is exhausted.
    pub fn affected_rows(&self) -> Option<u64> {
        self.affected
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Row>;

    #[inline]
    fn next(&mut self) -> Option<Result<Row>> {
        if self.affected.is_some() {
            return None;
        }
        match self.client.next_row() {
            Ok(RowEvent::Row(data)) => Some(Ok(Row::new(self.schema.clone(), data))),
            Ok(RowEvent::Done { affected }) => {
                self.affected = Some(affected);
                None
            }
            Err(e) => {
                self.affected = Some(0);
                Some(Err(e.into()))
            }
        }
    }
}
