//! The columns of a result, shared by all its rows.

use std::sync::Arc;

use hyperdb_api_core::protocol::backend::FieldDescription;
use hyperdb_api_core::types::{oid, SqlType};

/// How an error names the type of a column this client has no
/// [`SqlType`] for, with the way to read it anyway.
pub(super) fn unmapped_type_name(oid: u32) -> String {
    const AS_TEXT: &str = "read it as text: `col::TEXT` in the query";
    match oid {
        oid::UUID => format!("UUID ({AS_TEXT})"),
        _ => format!("oid {oid} (unknown to this client; {AS_TEXT})"),
    }
}

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
    #[cfg(any(feature = "arrow", test))]
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
