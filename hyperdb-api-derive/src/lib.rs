//! Derive macros for [`hyperdb-api`](https://docs.rs/hyperdb-api), used
//! through its re-exports (feature `derive`, on by default):
//! `hyperdb_api::FromRow` and `hyperdb_api::Table`.
//!
//! Both read `#[hyper(...)]` attributes. On the struct: `table = "name"`
//! (or `"schema.name"`, `"database.schema.name"`; `Table`),
//! `by_position` (`FromRow`), `crate = "path"` (where `hyperdb_api` is,
//! for a renamed dependency). On a field: `rename = "column"`, `flatten`,
//! `try_from = "Type"` (`FromRow`), `into = "Type"` and
//! `sql_type = "NUMERIC(18,2)"` (`Table`). A key one derive does not use
//! is left to the other: a struct usually derives both.

mod attr;
mod from_row;
mod table;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Reads a struct from a query's row: `query_as::<T>`, `Rows::typed`,
/// `next_as`, or `T::from_row(&row)`.
///
/// * A struct with named fields reads each field from the column of its
///   name (`#[hyper(rename = "col")]` for another name), wherever it is in
///   the result; a typed stream finds the columns once per result, and
///   when they are the fields in order reads rows as fast as a tuple.
/// * A tuple struct, or a struct marked `#[hyper(by_position)]`, reads
///   its `k`-th field from column `k`.
/// * `Option<T>` reads NULL as `None`; any other field type rejects a
///   NULL ([`Error::Field`] around [`Error::UnexpectedNull`]).
/// * `#[hyper(flatten)]`: the field is a `#[derive(FromRow)]` struct of
///   its own, read from the same row (by name: its own names; by
///   position: the next columns).
/// * `#[hyper(try_from = "i64")]`: the column is read as that type and
///   converted with `TryFrom` (newtypes, enums stored as text or codes).
///   On an `Option<T>` field the `Some` is converted. A conversion that
///   fails is an [`Error::Conversion`] whose source is the `TryFrom` error.
/// * A struct with one lifetime, `struct Line<'r> { name: &'r str, .. }`,
///   borrows its `&'r str` / `&'r [u8]` fields from the row: the impl is
///   `FromRow<'r>` for that lifetime (a struct without one implements
///   `FromRow<'r>` for every `'r`). Read it with the lending `next_as`,
///   which needs no allocation per text value. Two lifetimes are an
///   error.
///
/// Every error of a field is an [`Error::Field`] naming the struct and
/// the field, around the column's own error.
///
/// [`Error::Field`]: https://docs.rs/hyperdb-api/latest/hyperdb_api/enum.Error.html#variant.Field
/// [`Error::UnexpectedNull`]: https://docs.rs/hyperdb-api/latest/hyperdb_api/enum.Error.html#variant.UnexpectedNull
/// [`Error::Conversion`]: https://docs.rs/hyperdb-api/latest/hyperdb_api/enum.Error.html#variant.Conversion
///
/// ```
/// use hyperdb_api::FromRow;
///
/// #[derive(FromRow)]
/// struct Reading {
///     id: i32,
///     #[hyper(rename = "reading")]
///     value: Option<f64>,
///     #[hyper(try_from = "i32")]
///     sensor: SensorId,
/// }
///
/// struct SensorId(u16);
///
/// impl TryFrom<i32> for SensorId {
///     type Error = std::num::TryFromIntError;
///     fn try_from(v: i32) -> Result<Self, Self::Error> {
///         u16::try_from(v).map(SensorId)
///     }
/// }
///
/// #[derive(FromRow)]
/// struct Pair(i64, String);
/// ```
#[proc_macro_derive(FromRow, attributes(hyper))]
pub fn derive_from_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    from_row::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A struct with named fields as the rows of a table: implements
/// `TableRow`, which gives the table's definition
/// (`T::table_definition()`, for `create_table` and the inserters) and
/// lets an inserter take a whole value (`ins.add_struct(&row)`).
///
/// * The table is `#[hyper(table = "schema.name")]`, else the struct's
///   name in snake_case; the columns are the fields, in order, named as
///   they are or by `#[hyper(rename = "col")]`.
/// * A column's type comes from its field's Rust type (`HasSqlType`:
///   `i32` is INTEGER, `String` TEXT, `f64` DOUBLE PRECISION, ...), NOT
///   NULL unless the field is an `Option`. `#[hyper(sql_type = "..")]`
///   gives another (`"NUMERIC(18,2)"`, `"VARCHAR(40)"`), checked at
///   compile time.
/// * `#[hyper(into = "i64")]` writes the field converted with `Into` (a
///   clone of it first: free for `Copy` newtypes), and takes that type's
///   column type.
/// * `#[hyper(flatten)]` puts a `#[derive(Table)]` struct's columns in
///   its place.
///
/// ```
/// use hyperdb_api::Table;
/// use hyperdb_api::types::Numeric;
///
/// #[derive(Table)]
/// #[hyper(table = "sales.orders")]
/// struct Order {
///     id: i64,
///     customer: String,
///     #[hyper(sql_type = "NUMERIC(18,2)")]
///     total: Numeric,
///     note: Option<String>,
/// }
///
/// let table = <Order as hyperdb_api::TableRow>::table_definition();
/// assert_eq!(table.column_count(), 4);
/// ```
#[proc_macro_derive(Table, attributes(hyper))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    table::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
