//! The crate's one error type.
//!
//! Everything the wire can report (server errors with SQLSTATE, I/O, protocol
//! violations, timeouts) arrives as [`Error::Client`] wrapping
//! [`hyperdb_api_core::Error`]; the accessors below reach through it so callers
//! never need to match on the layers.

use std::path::PathBuf;

pub use hyperdb_api_core::error::{DbError, ErrorKind, Severity, SqlState};

/// The error type of `hyperdb-api`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From the wire: server errors (with SQLSTATE), I/O, protocol, timeouts.
    #[error(transparent)]
    Client(#[from] hyperdb_api_core::Error),

    /// No `hyperd` executable was found.
    #[error("hyperd not found: {0}")]
    HyperdNotFound(String),

    /// `hyperd` could not be started or did not come up.
    #[error("hyperd failed to start ({path}): {message}")]
    ProcessStart { path: PathBuf, message: String },

    /// An argument was rejected before anything was sent.
    #[error("invalid argument `{what}`: {message}")]
    InvalidArgument { what: String, message: String },

    /// A row has no such column (index out of range or unknown name).
    #[error("no column {column} in the result (it has {count} columns)")]
    ColumnNotFound { column: String, count: usize },

    /// A NULL was read into a non-`Option` type.
    #[error("column {column} is NULL; read it as an Option")]
    UnexpectedNull { column: String },

    /// The column's SQL type cannot be read as the requested Rust type.
    #[error(
        "column {column} has type {sql_type}, which cannot be read as {}",
        RustType(rust_type)
    )]
    TypeMismatch {
        column: String,
        sql_type: String,
        rust_type: &'static str,
    },

    /// A value could not be converted (out of range, malformed bytes).
    #[error("column {column}: {source}")]
    Conversion {
        column: String,
        #[source]
        source: hyperdb_api_core::Error,
    },

    /// A field of a `#[derive(FromRow)]` type could not be read: `source`
    /// says why ([`ColumnNotFound`](Error::ColumnNotFound),
    /// [`UnexpectedNull`](Error::UnexpectedNull),
    /// [`TypeMismatch`](Error::TypeMismatch) or
    /// [`Conversion`](Error::Conversion), naming the column).
    #[error("{rust_type}.{field}: {source}")]
    Field {
        /// The struct, as written in its definition.
        rust_type: &'static str,
        /// The field: its name, or its position in a tuple struct.
        field: &'static str,
        #[source]
        source: Box<Error>,
    },

    /// A row given to an inserter was rejected before anything was sent;
    /// the row was discarded and the inserter is still usable.
    #[error("row {row}{}: {kind}: {message}", column.as_ref().map(|c| format!(", column `{c}`")).unwrap_or_default())]
    InvalidRow {
        /// 0-based index the row would have had within this inserter: the
        /// rows accepted before it (rejected rows are not counted, so
        /// after a rejection it is not the caller's own count of rows
        /// given).
        row: u64,
        column: Option<String>,
        kind: RowErrorKind,
        message: String,
    },

    /// The server stored a different number of rows than were sent.
    #[error("the server stored {stored} rows but {sent} were sent")]
    RowCountMismatch { sent: u64, stored: u64 },

    /// A table definition given for rows does not match the table as the
    /// server defines it (a column missing, extra, renamed, or of another
    /// type or nullability): the rows would land in the wrong columns.
    /// `column` names the first column that differs (the table's name for
    /// it, else the definition's); `None` when only the number of columns
    /// is known to differ.
    #[error(
        "table {table}: {}the table has {actual}, the definition given has {given}",
        column_prefix(.column)
    )]
    DefinitionMismatch {
        table: String,
        column: Option<String>,
        actual: String,
        given: String,
    },

    /// Arrow data does not fit the table: a column is missing or extra, or
    /// its Arrow type cannot be stored in the column's SQL type.
    #[error("column `{column}`: the table needs {expected}, the Arrow data has {found}")]
    SchemaMismatch {
        column: String,
        expected: String,
        found: String,
    },

    /// A column type has no counterpart on the other side (an Arrow type
    /// Hyper cannot store, or a Hyper type this client cannot map).
    #[error("column `{column}`: {type_name} is not supported: {message}")]
    UnsupportedType {
        column: String,
        type_name: String,
        message: String,
    },

    /// Encoding or decoding Arrow IPC data failed.
    #[cfg(feature = "arrow")]
    #[error("Arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),

    /// The call was cancelled (by a `shared::CancelToken`) before it was
    /// sent; nothing ran.
    #[error("the query was cancelled before it started")]
    Cancelled,

    /// A cancel request reached hyperd while the transaction waited for the
    /// statement it was meant for: hyperd rolled the transaction back, and
    /// the statement did not run (its 25P02, put down to its cause).
    #[error(
        "the statement was cancelled before it started: the cancel reached the server \
         between statements and rolled back the transaction"
    )]
    CancelledTransaction,

    /// No pooled connection could be had in time: all were in use, or new
    /// ones failed to connect (`message` says which, with the last connect
    /// error).
    #[cfg(feature = "pool")]
    #[error("no pooled connection within {waited:?}: {message}")]
    PoolTimeout {
        waited: std::time::Duration,
        message: String,
    },

    /// The pool was closed; it hands out no more connections.
    #[cfg(feature = "pool")]
    #[error("the connection pool is closed")]
    PoolClosed,

    /// A query that must return a row returned none.
    #[error("the query returned no rows")]
    NoRows,

    /// A value read is larger than its consumer can hold (a text value past
    /// the longest string of the consumer's language).
    #[error("column `{column}`: a value of {bytes} bytes, over the {limit}-byte limit: {message}")]
    ValueTooLarge {
        column: String,
        bytes: usize,
        limit: usize,
        message: String,
    },

    /// An OS-level operation outside the wire protocol (spawning, files) failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Why an inserter rejected a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RowErrorKind {
    /// More or fewer values than the table has columns.
    ColumnCount,
    /// The value's Rust type cannot be written to the column's SQL type.
    WrongType,
    /// NULL for a NOT NULL column.
    NullInNotNull,
    /// The value does not fit the column (out of range).
    OutOfRange,
    /// A string longer than its VARCHAR(n) or CHAR(n) column.
    TooLong,
    /// A date or time hyperd does not take (a timestamp before 4713 BC or
    /// after 294276, a TIME of 24:00:00 or more, a Date64 that is not a
    /// whole day).
    DateTimeOutOfRange,
    /// The row is larger than one COPY message may carry (hyperd takes
    /// at most 150 MiB): a HyperBinary row is never split, so it cannot be
    /// sent. The column named holds the row's largest value.
    TooLarge,
    /// Text that does not read as the column's type (NUMERIC text that is
    /// no number).
    InvalidText,
}

impl std::fmt::Display for RowErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RowErrorKind::ColumnCount => "wrong number of values",
            RowErrorKind::WrongType => "wrong type",
            RowErrorKind::NullInNotNull => "NULL in a NOT NULL column",
            RowErrorKind::OutOfRange => "value does not fit",
            RowErrorKind::TooLong => "string too long",
            RowErrorKind::DateTimeOutOfRange => "date or time out of range",
            RowErrorKind::TooLarge => "row too large",
            RowErrorKind::InvalidText => "invalid text for the type",
        })
    }
}

/// What goes before a message about one column (its name); nothing when
/// none is named.
fn column_prefix(column: &Option<String>) -> String {
    column
        .as_deref()
        .map(|c| format!("column `{c}`: "))
        .unwrap_or_default()
}

impl Error {
    pub(crate) fn invalid_argument(what: impl Into<String>, message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            what: what.into(),
            message: message.into(),
        }
    }

    /// An error the client reports in the server's shape (SQLSTATE,
    /// message, hint, ...), so that callers check one code whether hyperd
    /// or this crate noticed.
    pub(crate) fn server(db: DbError) -> Error {
        Error::Client(hyperdb_api_core::Error::server(db))
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The server's error fields, when the server reported this error.
    pub fn db_error(&self) -> Option<&DbError> {
        match self {
            Error::Client(e) => e.db_error(),
            _ => None,
        }
    }

    /// Where in a COPY's input the server found bad data (a malformed
    /// CSV row, a NULL for a NOT NULL column), read from its message and
    /// detail, which stay as they were; `None` for other errors. See
    /// [`crate::files`].
    pub fn file_position(&self) -> Option<crate::files::FilePosition> {
        self.db_error()
            .and_then(crate::files::FilePosition::from_db_error)
    }

    /// The column the error is about, when it names one: a check's of
    /// this crate (a row's value, an Arrow field, a definition, a read),
    /// or the server's own `column` field.
    pub fn column(&self) -> Option<&str> {
        match self {
            Error::ColumnNotFound { column, .. }
            | Error::UnexpectedNull { column }
            | Error::TypeMismatch { column, .. }
            | Error::Conversion { column, .. }
            | Error::SchemaMismatch { column, .. }
            | Error::UnsupportedType { column, .. }
            | Error::ValueTooLarge { column, .. } => Some(column),
            Error::InvalidRow { column, .. } | Error::DefinitionMismatch { column, .. } => {
                column.as_deref()
            }
            Error::Field { source, .. } => source.column(),
            _ => self.db_error().and_then(|db| db.column.as_deref()),
        }
    }

    /// The SQLSTATE, when the server reported this error.
    pub fn code(&self) -> Option<&SqlState> {
        match self {
            Error::Client(e) => e.code(),
            _ => None,
        }
    }

    /// The wire-level kind, for errors that came from the client layer.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            Error::Client(e) => Some(e.kind()),
            _ => None,
        }
    }

    /// The authentication method the server asked for and the connection
    /// refused ([`crate::ConnectOptions::with_require_auth`]); `None` for
    /// every other error.
    pub fn refused_auth_method(&self) -> Option<crate::AuthMethod> {
        match self {
            Error::Client(e) => e.refused_auth_method(),
            _ => None,
        }
    }

    /// A call on a connection its owner closed (08003,
    /// [`Error::is_closed`]), for handles that outlive their connection.
    pub fn closed(message: impl Into<String>) -> Error {
        Error::Client(hyperdb_api_core::Error::closed(message))
    }

    /// The connection is closed or broken; open a new one.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Client(e) if e.is_closed())
    }

    /// The statement was cancelled (SQLSTATE 57014).
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Error::Cancelled | Error::CancelledTransaction)
            || matches!(self, Error::Client(e) if e.is_cancelled())
    }

    /// A connect, query or pool checkout timeout expired.
    pub fn is_timeout(&self) -> bool {
        #[cfg(feature = "pool")]
        if matches!(self, Error::PoolTimeout { .. }) {
            return true;
        }
        matches!(self, Error::Client(e) if e.is_timeout())
    }
}

impl Error {
    /// A SQLSTATE for every error: the server's own when it sent one, else
    /// the standard class that fits (so a caller, or a binding that exposes
    /// one `code`, can branch on a single field):
    ///
    /// | error | code |
    /// |---|---|
    /// | connection closed, broken or lost | `08006` connection_failure |
    /// | TLS refused or failed, certificate not trusted | `08001` sqlclient_unable_to_establish_sqlconnection |
    /// | connect or query timeout | `HYT00` timeout expired (ODBC's SQLSTATE) |
    /// | cancelled | `57014` query_canceled |
    /// | authentication | `28000` invalid_authorization_specification |
    /// | protocol violation by the server | `08P01` protocol_violation |
    /// | a value that does not fit, a bad row | `22023` / `22000` data exceptions |
    /// | text that is no value of its column's type (NUMERIC) | `22P02` invalid_text_representation |
    /// | a value read as the wrong type, a schema mismatch | `42804` datatype_mismatch |
    /// | an unknown column | `42703` undefined_column |
    /// | NULL where a value was required | `23502` / `22004` |
    /// | a row too large for one COPY message, a value read too large for its consumer | `54000` program_limit_exceeded |
    /// | no rows where one was required | `02000` no_data |
    /// | no pooled connection in time / pool closed | `HYT00` / `08003` |
    /// | a field of a derived row type ([`Error::Field`]) | its column error's |
    /// | hyperd missing or failing to start, other I/O | `58000` system_error |
    pub fn sqlstate(&self) -> &str {
        // Before the server's code: a timeout's cancellation is a 57014 too.
        if self.is_timeout() {
            return "HYT00";
        }
        if let Some(code) = self.code() {
            return code.code();
        }
        match self {
            Error::Field { source, .. } => source.sqlstate(),
            Error::Client(e) => match e.kind() {
                ErrorKind::Closed | ErrorKind::Io => "08006",
                ErrorKind::Tls => "08001",
                ErrorKind::Timeout => "HYT00",
                ErrorKind::Protocol => "08P01",
                ErrorKind::Auth => "28000",
                ErrorKind::TypeMismatch => "42804",
                ErrorKind::Conversion => "22000",
                ErrorKind::InvalidInput | ErrorKind::Config => "22023",
                _ => "XX000",
            },
            Error::InvalidArgument { .. } => "22023",
            Error::ColumnNotFound { .. } => "42703",
            Error::UnexpectedNull { .. } => "22004",
            Error::TypeMismatch { .. }
            | Error::SchemaMismatch { .. }
            | Error::DefinitionMismatch { .. } => "42804",
            Error::Conversion { .. } => "22000",
            Error::InvalidRow { kind, .. } => match kind {
                RowErrorKind::NullInNotNull => "23502",
                RowErrorKind::WrongType => "42804",
                RowErrorKind::ColumnCount => "22023",
                RowErrorKind::OutOfRange => "22003",
                RowErrorKind::TooLong => "22001",
                RowErrorKind::DateTimeOutOfRange => "22008",
                RowErrorKind::TooLarge => "54000",
                RowErrorKind::InvalidText => "22P02",
            },
            Error::RowCountMismatch { .. } => "XX000",
            Error::UnsupportedType { .. } => "0A000",
            #[cfg(feature = "arrow")]
            Error::Arrow(_) => "22000",
            Error::NoRows => "02000",
            Error::ValueTooLarge { .. } => "54000",
            #[cfg(feature = "pool")]
            Error::PoolTimeout { .. } => "HYT00",
            #[cfg(feature = "pool")]
            Error::PoolClosed => "08003",
            Error::Cancelled | Error::CancelledTransaction => "57014",
            Error::HyperdNotFound(_) | Error::ProcessStart { .. } | Error::Io { .. } => "58000",
        }
    }
}

/// A type as `std::any::type_name` spells it, shown the way it is written in
/// code: every path cut to its last segment (`Option<String>`, not
/// `core::option::Option<alloc::string::String>`), so a message names the
/// type the caller wrote rather than where the standard library keeps it.
pub(crate) struct RustType<'a>(pub(crate) &'a str);

impl std::fmt::Display for RustType<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.0;
        while !rest.is_empty() {
            // A run of path characters, then one character that ends it.
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = &rest[..end];
            f.write_str(path.rsplit("::").next().unwrap_or(path))?;
            let next = rest[end..].chars().next();
            if let Some(c) = next {
                f.write_str(&rest[end..end + c.len_utf8()])?;
            }
            rest = &rest[end + next.map_or(0, char::len_utf8)..];
        }
        Ok(())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_types_are_named_as_written() {
        let cases = [
            (std::any::type_name::<String>(), "String"),
            (std::any::type_name::<Option<String>>(), "Option<String>"),
            (std::any::type_name::<Option<&str>>(), "Option<&str>"),
            (std::any::type_name::<Vec<(i32, f64)>>(), "Vec<(i32, f64)>"),
            (std::any::type_name::<crate::types::Numeric>(), "Numeric"),
            ("[u8]", "[u8]"),
            ("", ""),
        ];
        for (full, short) in cases {
            assert_eq!(RustType(full).to_string(), short, "{full}");
        }
    }

    #[test]
    fn a_type_mismatch_names_the_type_the_caller_asked_for() {
        let e = Error::TypeMismatch {
            column: "name".into(),
            sql_type: "INTEGER".into(),
            rust_type: std::any::type_name::<Option<String>>(),
        };
        assert_eq!(
            e.to_string(),
            "column name has type INTEGER, which cannot be read as Option<String>"
        );
    }

    #[test]
    fn the_column_is_named_whichever_check_refused() {
        let schema = Error::SchemaMismatch {
            column: "id".into(),
            expected: "an Int32 field".into(),
            found: "Float64".into(),
        };
        assert_eq!(schema.column(), Some("id"));
        let field = Error::Field {
            rust_type: "Row",
            field: "n",
            source: Box::new(Error::UnexpectedNull { column: "n".into() }),
        };
        assert_eq!(field.column(), Some("n"));
        let mut db = DbError::new(SqlState::from_code("23502"), "null value");
        db.column = Some("c".into());
        assert_eq!(Error::server(db).column(), Some("c"));
        let plain = Error::invalid_argument("x", "y");
        assert_eq!(plain.column(), None);
    }
}
