//! Query results: column metadata, rows decoded lazily from the receive
//! buffer, and the sync row iterator.

use std::marker::PhantomData;
use std::sync::Arc;

use hyperdb_api_core::client::Client;
use hyperdb_api_core::protocol::backend::{DataRow, FieldDescription};
use hyperdb_api_core::protocol::ops::RowEvent;
use hyperdb_api_core::types::{FromHyperBinary, SqlType};

use crate::error::{Error, Result};
use crate::from_row::FromRow;

/// One result column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    name: String,
    type_oid: u32,
    type_modifier: i32,
    /// `None` for a type this client does not know; typed reads then fail.
    sql_type: Option<SqlType>,
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

    /// The column's SQL type, if this client knows it.
    pub fn sql_type(&self) -> Option<&SqlType> {
        self.sql_type.as_ref()
    }
}

/// Something that names a column: its index or its name.
pub trait ColumnIndex: sealed::Sealed + std::fmt::Display {
    /// The index in `schema`, if the column exists.
    fn index_in(&self, schema: &Schema) -> Option<usize>;
}

impl ColumnIndex for usize {
    #[inline]
    fn index_in(&self, schema: &Schema) -> Option<usize> {
        (*self < schema.len()).then_some(*self)
    }
}

impl ColumnIndex for &str {
    fn index_in(&self, schema: &Schema) -> Option<usize> {
        schema.index_of(self)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for usize {}
    impl Sealed for &str {}
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
                    sql_type: SqlType::from_oid_typmod(f.type_oid, f.type_modifier).ok(),
                    name: f.name,
                    type_oid: f.type_oid,
                    type_modifier: f.type_modifier,
                })
                .collect(),
        })
    }

    /// Columns by name and SQL type (results read as Arrow, e.g. over
    /// gRPC); a column without a type gets OID 0 and typed reads of it fail.
    #[cfg(feature = "grpc")]
    pub(crate) fn from_sql_types(
        columns: impl IntoIterator<Item = (String, Option<SqlType>)>,
    ) -> Arc<Schema> {
        Arc::new(Schema {
            columns: columns
                .into_iter()
                .map(|(name, sql_type)| Column {
                    name,
                    type_oid: sql_type.map_or(0, |t| t.oid()),
                    type_modifier: sql_type.map_or(-1, |t| t.typmod()),
                    sql_type,
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

    /// The value of a column, by index or name, as `T`.
    ///
    /// Errors tell apart a missing column ([`Error::ColumnNotFound`]), a NULL
    /// read into a non-`Option` ([`Error::UnexpectedNull`]), a type that
    /// cannot be read as `T` ([`Error::TypeMismatch`]) and a value that does
    /// not fit ([`Error::Conversion`]).
    #[inline]
    pub fn try_get<'a, T: FromHyperBinary<'a>>(&'a self, column: impl ColumnIndex) -> Result<T> {
        let index = column
            .index_in(&self.schema)
            .ok_or_else(|| Error::ColumnNotFound {
                column: column.to_string(),
                count: self.schema.len(),
            })?;
        let col = &self.schema.columns[index];
        let Some(ty) = col.sql_type.as_ref() else {
            return Err(Error::TypeMismatch {
                column: col.name.clone(),
                sql_type: format!("oid {} (unknown to this client)", col.type_oid),
                rust_type: std::any::type_name::<T>(),
            });
        };
        if !T::accepts(ty) {
            return Err(Error::TypeMismatch {
                column: col.name.clone(),
                sql_type: ty.to_string(),
                rust_type: std::any::type_name::<T>(),
            });
        }
        match self.raw(index)? {
            Some(raw) => T::decode_hyper(ty, raw).map_err(|source| Error::Conversion {
                column: col.name.clone(),
                source,
            }),
            None => T::decode_hyper_null(ty).map_err(|_| Error::UnexpectedNull {
                column: col.name.clone(),
            }),
        }
    }

    /// The raw HyperBinary bytes of column `index`; `None` is SQL NULL.
    #[inline]
    pub fn raw(&self, index: usize) -> Result<Option<&[u8]>> {
        match self.data.field(index) {
            Some(field) => field.map_err(Error::from),
            None => Err(Error::ColumnNotFound {
                column: index.to_string(),
                count: self.data.len(),
            }),
        }
    }
}

/// A streaming result: rows arrive as the iterator advances, so memory stays
/// constant whatever the row count. Dropping it early is fine: the connection
/// discards the rest before its next request.
///
/// Plain queries are served from hyperd's Arrow stream (3-4x cheaper for the
/// server to produce than rows), re-encoded per batch into the same row
/// layout; everything else from `DataRow`s. Values, types and errors are the
/// same either way.
#[derive(Debug)]
pub struct Rows<'c> {
    source: RowSource<'c>,
    schema: Arc<Schema>,
    affected: Option<u64>,
}

// One per result, not moved while rows are read: boxing the Arrow side
// would only add an allocation per query.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum RowSource<'c> {
    Wire(&'c mut Client),
    #[cfg(feature = "arrow")]
    Arrow {
        batches: crate::arrow::ArrowBatches<'c>,
        rows: crate::arrow::row_encoder::BatchRows,
    },
}

impl<'c> Rows<'c> {
    pub(crate) fn new(client: &'c mut Client, schema: Arc<Schema>) -> Rows<'c> {
        Rows {
            source: RowSource::Wire(client),
            schema,
            affected: None,
        }
    }

    #[cfg(feature = "arrow")]
    pub(crate) fn from_arrow(batches: crate::arrow::ArrowBatches<'c>) -> Rows<'c> {
        Rows {
            schema: crate::arrow::row_encoder::row_schema(&batches.schema()),
            source: RowSource::Arrow {
                batches,
                rows: Default::default(),
            },
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

    /// The same stream, each row converted to `T`.
    pub fn typed<T: FromRow>(self) -> TypedRows<'c, T> {
        TypedRows {
            rows: self,
            _t: PhantomData,
        }
    }
}

/// [`Rows`] converted to `T` row by row; see [`crate::Connection::query_as`].
#[derive(Debug)]
pub struct TypedRows<'c, T> {
    rows: Rows<'c>,
    _t: PhantomData<fn() -> T>,
}

impl<T> TypedRows<'_, T> {
    pub fn schema(&self) -> &Arc<Schema> {
        self.rows.schema()
    }
}

impl<T: FromRow> Iterator for TypedRows<'_, T> {
    type Item = Result<T>;

    #[inline]
    fn next(&mut self) -> Option<Result<T>> {
        self.rows
            .next()
            .map(|r| r.and_then(|row| T::from_row(&row)))
    }
}

/// Whether `sql` can be served through `COPY (sql) TO STDOUT` as Arrow: a
/// plain query (its first word is SELECT, WITH, VALUES or TABLE). Anything
/// else (SHOW, EXPLAIN, a leading comment, ...) takes the `DataRow` path.
#[cfg(feature = "arrow")]
pub(crate) fn arrow_eligible(sql: &str) -> bool {
    let head = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let word: String = head.chars().take_while(char::is_ascii_alphabetic).collect();
    ["select", "with", "values", "table"]
        .iter()
        .any(|k| word.eq_ignore_ascii_case(k))
}

impl Iterator for Rows<'_> {
    type Item = Result<Row>;

    #[inline]
    fn next(&mut self) -> Option<Result<Row>> {
        if self.affected.is_some() {
            return None;
        }
        match &mut self.source {
            RowSource::Wire(client) => {
                let step = client.next_row();
                next_item(&self.schema, &mut self.affected, step)
            }
            #[cfg(feature = "arrow")]
            RowSource::Arrow { batches, rows } => loop {
                if let Some(row) = rows.next(&self.schema) {
                    return Some(Ok(row));
                }
                let fetched = batches.next();
                if let Some(out) =
                    rows.advance(fetched, &self.schema, &mut self.affected, || batches.rows())
                {
                    return out;
                }
            },
        }
    }
}

/// One step of the wire's row stream as the next item of a row stream
/// (sync or async): a row, the end (recording the affected count), or an
/// error, after which the stream ends.
#[inline]
pub(crate) fn next_item(
    schema: &Arc<Schema>,
    affected: &mut Option<u64>,
    step: hyperdb_api_core::Result<RowEvent>,
) -> Option<Result<Row>> {
    match step {
        Ok(RowEvent::Row(data)) => Some(Ok(Row::new(schema.clone(), data))),
        Ok(RowEvent::Done { affected: n }) => {
            *affected = Some(n);
            None
        }
        Err(e) => {
            *affected = Some(0);
            Some(Err(e.into()))
        }
    }
}

#[cfg(all(test, feature = "arrow"))]
mod tests {
    use super::arrow_eligible;

    #[test]
    fn plain_queries_are_arrow_eligible() {
        for sql in [
            "SELECT 1",
            "  select x from t",
            "(SELECT 1) UNION (SELECT 2)",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "VALUES (1)",
            "TABLE t",
        ] {
            assert!(arrow_eligible(sql), "{sql}");
        }
        for sql in [
            "SHOW lc_time",
            "EXPLAIN SELECT 1",
            "-- c\nSELECT 1",
            "INSERT INTO t VALUES (1)",
            "selectx",
            "",
        ] {
            assert!(!arrow_eligible(sql), "{sql}");
        }
    }
}
