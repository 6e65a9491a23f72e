//! What `#[derive(FromRow)]` and `#[derive(Table)]` expand to: helpers the
//! generated code calls. Hidden, and not an API: it changes with the
//! derive crate, which is released with this one.

use std::any::type_name;

pub use hyperdb_api_core::types::{ColumnType, FromHyperBinary, SqlType, ToHyperBinary};

pub use crate::from_row::{plain_column, plain_field_len, plain_value};
pub use crate::rows::ColumnMap;
pub use crate::table_row::{column, column_of};

use crate::error::{Error, Result};
use crate::rows::{ColumnIndex, Row};

/// Implemented by `#[derive(FromRow)]` for each type: what a struct that
/// flattens it needs to know.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened into a row",
    label = "not a `#[derive(FromRow)]` type",
    note = "#[hyper(flatten)] takes a struct that derives FromRow"
)]
pub trait Flatten {
    /// The columns it reads, its own flattened fields' included.
    const COLUMNS: usize;
    /// Whether it reads them by name.
    const BY_NAME: bool;
}

/// Implemented by `#[derive(FromRow)]` for a struct read by name: a
/// struct read by name flattens only such structs (it finds their columns
/// by their names).
#[diagnostic::on_unimplemented(
    message = "`{Self}` reads its columns by position, so it cannot be flattened into a struct that reads by name",
    label = "a by-position struct",
    note = "flatten it into a `#[hyper(by_position)]` struct, or give it named fields read by name"
)]
pub trait ByName: Flatten {}

/// Checks at compile time that `T` reads by name.
#[inline(always)]
pub fn by_name<T: ByName>() {}

/// Implemented by `#[derive(Table)]` for each type: the flattened field's
/// type has rows of its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened into a table row",
    label = "not a `#[derive(Table)]` type",
    note = "#[hyper(flatten)] takes a struct that derives Table"
)]
pub trait FlattenTable: crate::TableRow {}

/// Checks at compile time that `T` derives `Table`.
#[inline(always)]
pub fn flatten_table<T: FlattenTable + ?Sized>() {}

/// `result`, its error naming the field it was read for.
#[inline(always)]
pub fn field<T>(result: Result<T>, rust_type: &'static str, field: &'static str) -> Result<T> {
    match result {
        Ok(value) => Ok(value),
        Err(e) => Err(field_error(e, rust_type, field)),
    }
}

/// `e` as [`Error::Field`] when it is about the column's value (missing,
/// NULL, of another type, not convertible); other errors (a malformed
/// row, a closed connection) as they are.
#[cold]
#[inline(never)]
pub fn field_error(e: Error, rust_type: &'static str, field: &'static str) -> Error {
    match e {
        Error::ColumnNotFound { .. }
        | Error::UnexpectedNull { .. }
        | Error::TypeMismatch { .. }
        | Error::Conversion { .. } => Error::Field {
            rust_type,
            field,
            source: Box::new(e),
        },
        e => e,
    }
}

/// `value`, read from `column` of `row`, converted to a field's type
/// (`#[hyper(try_from = "S")]`); a failure is that column's
/// [`Error::Conversion`], its source the conversion's own error.
#[inline]
pub fn convert<S, T>(value: S, row: &Row, column: impl ColumnIndex) -> Result<T>
where
    T: TryFrom<S>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    T::try_from(value).map_err(|e| conversion_error::<S, T>(e.into(), row, &column))
}

/// [`convert`] for an `Option` field: NULL stays `None`.
#[inline]
pub fn convert_option<S, T>(
    value: Option<S>,
    row: &Row,
    column: impl ColumnIndex,
) -> Result<Option<T>>
where
    T: TryFrom<S>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match value {
        None => Ok(None),
        Some(value) => T::try_from(value)
            .map(Some)
            .map_err(|e| conversion_error::<S, T>(e.into(), row, &column)),
    }
}

#[cold]
#[inline(never)]
fn conversion_error<S, T>(
    source: Box<dyn std::error::Error + Send + Sync>,
    row: &Row,
    column: &dyn ColumnIndex,
) -> Error {
    let schema = row.schema();
    let column = match column
        .index_in(schema)
        .and_then(|i| schema.columns().get(i))
    {
        Some(c) => c.name().to_owned(),
        None => column.to_string(),
    };
    Error::Conversion {
        column,
        source: hyperdb_api_core::Error::conversion(format!(
            "a {} value does not convert to {}",
            crate::error::RustType(type_name::<S>()),
            crate::error::RustType(type_name::<T>())
        ))
        .with_source(ConversionFailed(source)),
    }
}

/// A field type's own conversion error, as the source of a conversion
/// error (a boxed error is no `Error` itself).
#[derive(Debug)]
struct ConversionFailed(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for ConversionFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ConversionFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}
