//! Hyper's SQL types, Rust value types for them, and their binary codecs.
//!
//! * [`SqlType`] / [`ColumnType`]: column types, their SQL spellings, and
//!   the OIDs and type modifiers hyperd reports.
//! * Value types with exact conversions: [`Date`], [`Time`], [`Timestamp`],
//!   [`TimestampTz`], [`Interval`], [`Numeric`] (with `chrono` conversions
//!   behind the `chrono` feature).
//! * [`hyperbinary`]: Hyper's little-endian format for COPY and results,
//!   through [`ToHyperBinary`] / [`FromHyperBinary`].
//! * [`pg_binary`]: PostgreSQL's big-endian binary format for bound
//!   parameters, through [`ToPgBinary`] / [`FromPgBinary`].
//!
//! Nothing here does I/O.

mod calendar;
#[cfg(feature = "chrono")]
mod chrono_impls;
mod date;
pub mod hyperbinary;
mod hyperbinary_impls;
mod interval;
mod numeric;
pub mod pg_binary;
mod pg_numeric;
mod sql_type;
mod time;
mod timestamp;

pub use date::Date;
pub use hyperbinary::{
    decode_field, encode_column, encode_row, encode_value_or_null, put_copy_header,
    FromHyperBinary, ToHyperBinary, COPY_HEADER,
};
pub use interval::Interval;
pub use numeric::Numeric;
pub use pg_binary::{put_param, FromPgBinary, IsNull, ToPgBinary};
pub use sql_type::{oid, ColumnType, Nullability, SqlType, MAX_NUMERIC_PRECISION};
pub use time::Time;
pub use timestamp::{Timestamp, TimestampTz};
