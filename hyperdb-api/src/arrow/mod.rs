//! Arrow in and out (feature `arrow`, on by default).
//!
//! * [`ArrowInserter`] / [`AsyncArrowInserter`]: record batches (or raw IPC
//!   stream bytes) into a table through `COPY ... FROM STDIN WITH (FORMAT
//!   ARROWSTREAM)`.
//! * [`Connection::query_arrow`](crate::Connection::query_arrow) /
//!   [`AsyncConnection::query_arrow`](crate::AsyncConnection::query_arrow):
//!   a query result as a stream of [`RecordBatch`](arrow_array::RecordBatch)es
//!   through `COPY (query) TO STDOUT WITH (FORMAT ARROWSTREAM)`; `..._ipc`
//!   gives the raw IPC bytes instead.
//! * [`insert_batches_parallel`] / [`insert_batches_parallel_blocking`]: one
//!   load over several connections.
//! * [`arrow_schema()`] / [`table_definition`]: the type mapping below.
//!
//! # Types
//!
//! Measured on hyperd 0.0.26963. "Read as" is what a query returns and what
//! [`arrow_schema()`] builds; "accepted on insert" is every Arrow type
//! hyperd's COPY stores into the column. hyperd derives one SQL type from
//! each Arrow field and demands it equal the column's type exactly, so the
//! inserter declares the `hyper:*` metadata and the nullability from the
//! table itself: callers only need a compatible data type.
//!
//! | Hyper | read as | accepted on insert |
//! |---|---|---|
//! | BOOL | Boolean | Boolean |
//! | SMALLINT | Int16 | Int16, Int8, UInt8 |
//! | INTEGER | Int32 | Int32, UInt16 |
//! | BIGINT | Int64 | Int64, UInt32 |
//! | REAL | Float32 | Float32 |
//! | DOUBLE PRECISION | Float64 | Float64 |
//! | OID | UInt32 + `hyper:type=Oid` | UInt32 |
//! | NUMERIC(p,s) | Decimal128(p,s) | Decimal128(p,s), Decimal256(p,s) |
//! | TEXT | Utf8 | Utf8 |
//! | VARCHAR(n) | Utf8 + `hyper:max_string_length=n` | Utf8 |
//! | CHAR(n), n > 1 | Utf8 + `hyper:type=Char`, `hyper:max_string_length=n` (blank-padded) | Utf8 |
//! | CHAR(1) | Utf8 + `hyper:type=Char1` | Utf8 |
//! | JSON | Utf8 + `hyper:type=JSON` | Utf8 (the server checks the JSON) |
//! | BYTEA | Binary | Binary |
//! | GEOGRAPHY | Binary + `hyper:type=Geography` (Hyper's own encoding, not WKB) | Binary in that encoding |
//! | DATE | Date64 (milliseconds, whole days) | Date64 (whole days only), Date32 |
//! | TIME | Time64(Microsecond) | Time64(Microsecond), Time64(Nanosecond) (whole microseconds), Time32(Second/Millisecond) |
//! | TIMESTAMP | Timestamp(Microsecond, None) | Timestamp(Second/Millisecond/Microsecond, None) |
//! | TIMESTAMPTZ | Timestamp(Microsecond, "+00:00") | Timestamp(Second/Millisecond/Microsecond, any zone) |
//! | INTERVAL | Interval(MonthDayNano) | Interval(MonthDayNano) (whole microseconds) |
//!
//! Not storable, with the cast to apply first: Timestamp(Nanosecond) (to
//! Microsecond), LargeUtf8 / Utf8View (to Utf8), LargeBinary / BinaryView /
//! FixedSizeBinary (to Binary), dictionaries (to their value type), Float16,
//! UInt64, Decimal32/64, nested types.
//!
//! hyperd writes `"Utc"` as the zone of TIMESTAMPTZ columns, which common
//! Arrow libraries cannot parse; batches from `query_arrow` say
//! [`UTC`] (`"+00:00"`) instead. The raw IPC bytes are passed on as sent.
//!
//! # Insert checks
//!
//! Before anything is sent, the inserter's table definition is checked
//! against the table the COPY writes, and the insert runs all or nothing
//! (see [`crate::insert`]). Before a batch is queued: fields are matched to columns by name (each
//! column exactly once, no extra fields), types as in the table, no NULL in
//! a NOT NULL column, no VARCHAR(n)/CHAR(n) value longer than n characters
//! (hyperd would store it as is, or truncate CHAR(1)), except that a CHAR(n)
//! value longer only by trailing spaces is sent cut to n characters
//! ([`crate::types::SqlType::fit_text`]), no date or time hyperd's Arrow
//! reader refuses (a Date64 that is no whole day, a timestamp outside
//! 4713-01-01 00:00:00 BC to 294276-12-31 23:59:59.999999, a TIME outside
//! 00:00:00 up to 24:00:00: 22008, where hyperd would fail the COPY naming
//! no row), no TIME or INTERVAL with a fraction of a microsecond (22003,
//! where hyperd would cut it). A rejected batch is
//! not sent. After `finish()`, the row count the server reports must equal
//! the rows sent ([`crate::Error::RowCountMismatch`]): hyperd stores only
//! the first of several IPC streams in one COPY and still reports success,
//! so the inserter always sends exactly one.

mod decoder;
mod encoder;
mod from_buffers;
mod from_parts;
#[cfg(feature = "async")]
pub(crate) mod from_rows;
mod inserter;
mod ipc_layout;
mod ipc_messages;
mod layout;
mod parallel;
mod raw;
mod reader;
mod row_batch;
pub(crate) mod row_columns;
mod schema;
mod text_pieces;
mod validate;

/// The IPC end-of-stream marker: continuation, then a zero length. hyperd
/// ends its streams without one; the reader supplies it, forwarded raw
/// bytes get it, and the inserter sends it.
pub(crate) const EOS: [u8; 8] = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];

/// The IPC stream decoder, shared with the gRPC results and shared streams.
#[cfg(any(feature = "async", feature = "fuzzing"))]
pub(crate) use decoder::ArrowDecoder;
pub(crate) use encoder::copy_sql;
pub use encoder::DEFAULT_ARROW_FLUSH_THRESHOLD;
pub use from_buffers::{batch_from_buffers, ColumnBuffer, ColumnInput};
pub use from_parts::{batch_from_arrow_parts, ArrowParts};
pub use inserter::ArrowInserter;
#[cfg(feature = "async")]
pub use inserter::AsyncArrowInserter;
#[cfg(feature = "async")]
pub use parallel::insert_batches_parallel;
pub use parallel::insert_batches_parallel_blocking;
pub use raw::{decode_schema, encode_schema};
pub(crate) use reader::arrow_cannot_express;
#[cfg(feature = "grpc")]
pub(crate) use reader::record_batch_step;
pub use reader::{ArrowBatches, ArrowIpcChunks};
#[cfg(feature = "async")]
pub use reader::{AsyncArrowBatches, AsyncArrowIpcChunks};
pub(crate) use row_batch::ArrowRows;
pub(crate) use row_columns::row_schema;
pub(crate) use schema::every_field_has_sql_type;
pub use schema::{
    accepts, arrow_field, arrow_schema, sql_type, sql_type_name, table_definition,
    HYPER_MAX_LENGTH_KEY, HYPER_TYPE_KEY, UTC,
};
pub use text_pieces::text_pieces;
