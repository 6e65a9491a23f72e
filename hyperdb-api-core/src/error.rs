//! The crate's one error type.
//!
//! Server errors keep every field of the PostgreSQL `ErrorResponse` (SQLSTATE,
//! message, detail, hint, position, ...) so callers can branch on
//! [`Error::code`] instead of parsing strings.

use std::fmt;
use std::io;

use crate::protocol::auth::{AuthMethod, AuthMethodRefused};

/// A five-character SQLSTATE code, as sent by the server.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// `42601`: syntax error.
    pub const SYNTAX_ERROR: SqlState = SqlState(*b"42601");
    /// `57014`: the query was cancelled (CancelRequest or statement timeout).
    pub const QUERY_CANCELED: SqlState = SqlState(*b"57014");
    /// `42P01`: relation does not exist.
    pub const UNDEFINED_TABLE: SqlState = SqlState(*b"42P01");
    /// `42P07`: relation already exists.
    pub const DUPLICATE_TABLE: SqlState = SqlState(*b"42P07");
    /// `25P02`: the transaction is aborted; commands ignored until its end.
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState(*b"25P02");
    /// `55000`: object not in prerequisite state (hyperd over gRPC: a
    /// result it did not persist, or a chunk of a query that failed).
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState(*b"55000");
    /// `25001`: a transaction is already open (they do not nest).
    pub const ACTIVE_SQL_TRANSACTION: SqlState = SqlState(*b"25001");
    /// `25P01`: no transaction is open (one to commit was ended before).
    pub const NO_ACTIVE_SQL_TRANSACTION: SqlState = SqlState(*b"25P01");
    /// `23502`: NULL in a NOT NULL column.
    pub const NOT_NULL_VIOLATION: SqlState = SqlState(*b"23502");
    /// `22P02`: invalid text representation.
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState(*b"22P02");
    /// `28P01`: wrong password.
    pub const INVALID_PASSWORD: SqlState = SqlState(*b"28P01");
    /// `55006`: the object (e.g. a database file) is in use by another session.
    pub const OBJECT_IN_USE: SqlState = SqlState(*b"55006");
    /// `57P01`: the server is shutting down.
    pub const ADMIN_SHUTDOWN: SqlState = SqlState(*b"57P01");
    /// `54000`: a program limit was exceeded (hyperd: a `CopyData` over
    /// 150 MiB, "packet too large").
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState(*b"54000");
    /// `0A000`: feature not supported; PostgreSQL's code (and this
    /// client's) for "cached plan must not change result type".
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState(*b"0A000");
    /// `40001`: serialization failure; hyperd's code for "the referenced
    /// schema object is no longer valid", e.g. a prepared statement over a
    /// table dropped and created again.
    pub const T_R_SERIALIZATION_FAILURE: SqlState = SqlState(*b"40001");
    /// `08003`: the connection does not exist (closed by its owner).
    pub const CONNECTION_DOES_NOT_EXIST: SqlState = SqlState(*b"08003");
    /// `26000`: no prepared statement of that name.
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState(*b"26000");

    /// Builds a code from its five ASCII characters; `None` when `code` is not
    /// five ASCII alphanumerics.
    pub fn from_code(code: &str) -> Option<SqlState> {
        let b = code.as_bytes();
        if b.len() != 5 || !b.iter().all(u8::is_ascii_alphanumeric) {
            return None;
        }
        let mut out = [0u8; 5];
        out.copy_from_slice(b);
        Some(SqlState(out))
    }

    /// The code as text, e.g. `"42601"`.
    pub fn code(&self) -> &str {
        // Constructed only from ASCII alphanumerics.
        std::str::from_utf8(&self.0).unwrap_or("?????")
    }
}

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlState({})", self.code())
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Severity of a server error or notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Severity {
    Error,
    Fatal,
    Panic,
    Warning,
    Notice,
    Debug,
    Info,
    Log,
}

impl Severity {
    pub(crate) fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "ERROR" => Severity::Error,
            "FATAL" => Severity::Fatal,
            "PANIC" => Severity::Panic,
            "WARNING" => Severity::Warning,
            "NOTICE" => Severity::Notice,
            "DEBUG" => Severity::Debug,
            "INFO" => Severity::Info,
            "LOG" => Severity::Log,
            _ => return None,
        })
    }
}

/// Every field of a server `ErrorResponse` or `NoticeResponse`.
///
/// Unknown field codes are ignored, as the protocol asks.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DbError {
    pub severity: Option<Severity>,
    pub code: Option<SqlState>,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query text.
    pub position: Option<u32>,
    pub internal_position: Option<u32>,
    pub internal_query: Option<String>,
    pub context: Option<String>,
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub data_type: Option<String>,
    pub constraint: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub routine: Option<String>,
}

impl DbError {
    /// An error with only a message; used by tests and by the gRPC mapping.
    pub fn new(code: Option<SqlState>, message: impl Into<String>) -> DbError {
        DbError {
            severity: Some(Severity::Error),
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            internal_position: None,
            internal_query: None,
            context: None,
            schema: None,
            table: None,
            column: None,
            data_type: None,
            constraint: None,
            file: None,
            line: None,
            routine: None,
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(code) = &self.code {
            write!(f, "[{code}] ")?;
        }
        f.write_str(&self.message)?;
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL: {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT: {h}")?;
        }
        Ok(())
    }
}

/// What went wrong, coarsely; see [`Error::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with an `ErrorResponse`; see [`Error::db_error`].
    Server,
    /// Reading or writing the socket failed.
    Io,
    /// The server sent bytes that break the protocol; the connection is broken.
    Protocol,
    /// Authentication failed or used an unsupported method.
    Auth,
    /// The caller passed a value the protocol cannot carry (NUL byte, too long, ...).
    InvalidInput,
    /// A value could not be converted to or from its wire form (out of
    /// range, too long, malformed bytes).
    Conversion,
    /// A Rust type cannot be written to or read from a column's SQL type.
    TypeMismatch,
    /// The connection is closed or broken and can no longer be used.
    Closed,
    /// A connect or query timeout expired.
    Timeout,
    /// Bad configuration (endpoint, parameter name, ...).
    Config,
    /// TLS could not be set up as the connection's `SslMode` demands: the
    /// server refused TLS, the handshake failed, or its certificate was not
    /// trusted or not for the host.
    Tls,
}

/// The error type of `hyperdb-api-core`.
#[derive(thiserror::Error)]
#[error("{}", self.render())]
pub struct Error {
    kind: ErrorKind,
    message: String,
    db: Option<Box<DbError>>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind);
        if !self.message.is_empty() {
            d.field("message", &self.message);
        }
        if let Some(db) = &self.db {
            d.field("db", db);
        }
        if let Some(s) = &self.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            db: None,
            source: None,
        }
    }

    /// A server error carrying all `ErrorResponse` fields.
    pub fn server(db: DbError) -> Error {
        Error {
            kind: ErrorKind::Server,
            message: String::new(),
            db: Some(Box::new(db)),
            source: None,
        }
    }

    /// A prepared statement's rows no longer have the shape it was
    /// described with: hyperd re-plans a named statement against the
    /// current catalog when it runs, but describes it as first planned. The
    /// statement ran (a write took effect), its rows were discarded, and
    /// the connection is idle; SQLSTATE 0A000 and
    /// the message PostgreSQL gives for the same case.
    pub fn stale_statement(statement: &str, described: Option<usize>, sent: usize) -> Error {
        let described = match described {
            Some(n) => format!("{n} result columns"),
            None => "no result rows".to_owned(),
        };
        let mut db = DbError::new(
            Some(SqlState::FEATURE_NOT_SUPPORTED),
            "cached plan must not change result type",
        );
        db.detail = Some(format!(
            "statement `{statement}` was described with {described}, but hyperd sent rows of \
             {sent} fields: a table it reads changed since it was prepared; it ran, and \
             its rows were discarded"
        ));
        db.hint = Some("prepare the statement again".to_owned());
        Error::server(db)
    }

    /// The server or peer violated the protocol.
    pub fn protocol(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Protocol, message)
    }

    /// The caller passed something that cannot be sent.
    pub fn invalid_input(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidInput, message)
    }

    /// A value could not be converted.
    pub fn conversion(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conversion, message)
    }

    /// A Rust type and a SQL type do not go together.
    pub fn type_mismatch(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::TypeMismatch, message)
    }

    /// Authentication failed.
    pub fn auth(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Auth, message)
    }

    /// Bad configuration.
    pub fn config(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Config, message)
    }

    /// TLS could not be set up (see [`ErrorKind::Tls`]).
    pub fn tls(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Tls, message)
    }

    /// The connection can no longer be used.
    pub fn closed(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Closed, message)
    }

    /// A timeout expired.
    pub fn timeout(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Timeout, message)
    }

    /// The server's cancellation (57014) of a statement whose query
    /// timeout expired, as a [`ErrorKind::Timeout`] that keeps the server's
    /// fields: `is_timeout()` holds, `code()` is still 57014.
    /// Its message says so: the server's own words ("canceled by user")
    /// would have a caller look for a cancel nobody made.
    pub(crate) fn into_timeout(mut self, limit: Option<std::time::Duration>) -> Error {
        self.kind = ErrorKind::Timeout;
        self.message = match limit {
            Some(limit) => {
                format!("query timeout ({limit:?}) expired, so the statement was cancelled")
            }
            None => "query timeout expired, so the statement was cancelled".into(),
        };
        self
    }

    /// Wraps an I/O error, naming what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Error {
        let kind = match source.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorKind::Timeout,
            _ => ErrorKind::Io,
        };
        Error {
            kind,
            message: context.into(),
            db: None,
            source: Some(Box::new(source)),
        }
    }

    /// The socket of an established connection failed: the connection is
    /// gone (kind [`ErrorKind::Closed`]), the I/O error is kept as source.
    pub fn connection_lost(context: impl Into<String>, source: io::Error) -> Error {
        Error {
            kind: ErrorKind::Closed,
            message: format!("connection lost while {}", context.into()),
            db: None,
            source: Some(Box::new(source)),
        }
    }

    /// Attaches an underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.source = Some(Box::new(source));
        self
    }

    /// For a server error about SQL the client wrapped in `chars` characters
    /// of its own (e.g. `COPY (`), moves the reported position back onto the
    /// caller's text; a position inside the wrapper is dropped.
    pub fn shift_position(mut self, chars: u32) -> Error {
        if let Some(db) = self.db.as_deref_mut() {
            db.position = db
                .position
                .and_then(|p| p.checked_sub(chars))
                .filter(|p| *p > 0);
        }
        self
    }

    /// The coarse category.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The server's error fields, when the server reported this error.
    pub fn db_error(&self) -> Option<&DbError> {
        self.db.as_deref()
    }

    /// The SQLSTATE, when the server reported this error.
    pub fn code(&self) -> Option<&SqlState> {
        self.db.as_ref().and_then(|d| d.code.as_ref())
    }

    /// The error message: the server's primary message for server errors.
    pub fn message(&self) -> &str {
        match &self.db {
            Some(db) => &db.message,
            None => &self.message,
        }
    }

    /// The authentication method the server asked for and the connection
    /// refused (`Config::with_require_auth`); `None` for every other error.
    pub fn refused_auth_method(&self) -> Option<AuthMethod> {
        let source = self.source.as_deref()?;
        source.downcast_ref::<AuthMethodRefused>().map(|r| r.method)
    }

    /// The connection is closed or broken; open a new one.
    pub fn is_closed(&self) -> bool {
        matches!(self.kind, ErrorKind::Closed | ErrorKind::Protocol)
            || self.code() == Some(&SqlState::ADMIN_SHUTDOWN)
    }

    /// The statement was cancelled (SQLSTATE 57014).
    pub fn is_cancelled(&self) -> bool {
        self.code() == Some(&SqlState::QUERY_CANCELED)
    }

    /// A connect or query timeout expired.
    pub fn is_timeout(&self) -> bool {
        self.kind == ErrorKind::Timeout
    }

    fn render(&self) -> String {
        match (&self.db, &self.source) {
            (Some(db), _) if self.kind == ErrorKind::Timeout && !self.message.is_empty() => {
                format!("{} ({db})", self.message)
            }
            (Some(db), _) => db.to_string(),
            (None, Some(src)) if !self.message.is_empty() => format!("{}: {src}", self.message),
            (None, Some(src)) => src.to_string(),
            (None, None) => self.message.clone(),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstate_parses_and_rejects() {
        assert_eq!(SqlState::from_code("42601"), Some(SqlState::SYNTAX_ERROR));
        assert_eq!(SqlState::from_code("4260"), None);
        assert_eq!(SqlState::from_code("42 01"), None);
        assert_eq!(SqlState::QUERY_CANCELED.to_string(), "57014");
    }

    #[test]
    fn server_error_exposes_fields() {
        let mut db = DbError::new(
            Some(SqlState::SYNTAX_ERROR),
            "syntax error at or near \"SELEC\"",
        );
        db.position = Some(1);
        db.hint = Some("check the spelling".into());
        let e = Error::server(db);
        assert_eq!(e.kind(), ErrorKind::Server);
        assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR));
        assert_eq!(e.db_error().and_then(|d| d.position), Some(1));
        assert!(e.to_string().contains("HINT: check the spelling"));
        assert!(!e.is_closed());
    }

    #[test]
    fn positions_shift_back_onto_the_callers_text() {
        let mut db = DbError::new(Some(SqlState::SYNTAX_ERROR), "bad");
        db.position = Some(10);
        let e = Error::server(db.clone()).shift_position(6);
        assert_eq!(e.db_error().and_then(|d| d.position), Some(4));
        db.position = Some(3);
        let e = Error::server(db).shift_position(6);
        assert_eq!(e.db_error().and_then(|d| d.position), None);
        let e = Error::protocol("x").shift_position(6);
        assert!(e.db_error().is_none());
    }

    #[test]
    fn a_timeouts_cancel_says_that_a_timeout_expired() {
        let e = Error::server(DbError::new(
            Some(SqlState::QUERY_CANCELED),
            "canceled by user",
        ))
        .into_timeout(Some(std::time::Duration::from_millis(200)));
        assert!(e.is_timeout() && e.is_cancelled());
        assert_eq!(e.code(), Some(&SqlState::QUERY_CANCELED));
        assert_eq!(e.message(), "canceled by user", "the server's own message");
        assert_eq!(
            e.to_string(),
            "query timeout (200ms) expired, so the statement was cancelled ([57014] canceled by user)"
        );
    }

    #[test]
    fn io_errors_keep_their_source() {
        let e = Error::io(
            "reading from server",
            io::Error::new(io::ErrorKind::TimedOut, "t"),
        );
        assert!(e.is_timeout());
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(e.to_string(), "reading from server: t");
    }
}
