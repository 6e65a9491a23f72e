//! The PostgreSQL v3 protocol as Hyper speaks it, with no I/O.
//!
//! * [`frontend`]: free functions appending client messages to a buffer.
//! * [`backend`]: [`backend::parse`] takes server messages off a buffer.
//! * [`auth`]: cleartext, MD5 and SCRAM-SHA-256 as pure state machines.
//! * [`Session`]: connection state (buffers, transaction status, what the
//!   server still owes us) and the one place the rules of message order live.
//! * [`ssl`]: what the answer to `SSLRequest` means under each `SslMode`.
//! * [`ops`]: each request's reply handling, as a message-driven
//!   [`ops::Operation`]. The sync and async drivers run these same operations
//!   and differ only in how bytes move.

pub mod auth;
pub mod backend;
pub mod frontend;
pub mod ops;
mod result_stream;
mod session;
pub mod ssl;
mod statements;

pub(crate) use session::BackendKey;
pub use session::{
    NoticeHandler, Session, MAX_PARAMETERS, MAX_PARAMETER_NAME, MAX_PARAMETER_VALUE,
};
pub(crate) use statements::retry_after;
pub use statements::{
    keeps_catalog, reads_only, CachedStatement, CloseQueue, StatementCache, StatementDescription,
    Statements,
};

/// Caps on what the server may make us buffer.
///
/// A message's declared length is checked against these before any byte of
/// its body is awaited; the receive buffer grows only as bytes arrive
/// whatever the cap, so a broken or hostile server cannot make the client
/// reserve gigabytes by sending a length word alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest control message (errors, descriptions, statuses): 1 MiB.
    pub max_control_message: usize,
    /// Largest `DataRow` or `CopyData` message. By default all a length
    /// word can declare: hyperd sends text values of up to ~1.5 GB, which
    /// a smaller cap would refuse with the connection broken. Lower it to
    /// bound what one row may make the client hold.
    pub max_data_message: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_control_message: 1 << 20,
            max_data_message: i32::MAX as usize,
        }
    }
}
