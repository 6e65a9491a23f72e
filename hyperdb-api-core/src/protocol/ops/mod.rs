//! Each request's reply handling, written once for every driver.
//!
//! A request is queued with its `send` function (which appends the frontend
//! messages to the session's write buffer and records the `ReadyForQuery` it
//! will owe) and its reply is consumed by an [`Operation`]: the driver feeds it
//! messages from [`Session::next_message`] until it returns `Some(output)`.
//! Drivers never interpret messages themselves.

mod command;
mod copy_in;
mod copy_out;
mod prepare;
mod query;
mod startup;

pub use command::{affected_rows, Command, Drain};
pub use copy_in::{CopyInFinish, CopyInStart};
pub use copy_out::{CopyOut, CopyOutEvent};
pub use prepare::{BoundStart, Ping, Prepare};
pub use query::{
    NextRow, QueryRequest, QueryStart, RowEvent, SimpleQueryStart, FORMAT_BINARY,
    FORMAT_HYPER_BINARY, FORMAT_TEXT,
};
pub use startup::Startup;

use crate::error::{Error, Result};
use crate::protocol::backend::Message;
use crate::protocol::Session;

/// The reply half of one request, driven by messages.
pub trait Operation {
    type Output;

    /// Handles one message; `Some` ends the operation. An `Err` of any kind
    /// other than a server error breaks the connection (the driver marks it).
    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<Self::Output>>;
}

/// The error for a message an operation does not expect at this point.
pub(crate) fn unexpected(op: &str, msg: &Message) -> Error {
    let mut name = format!("{msg:?}");
    name.truncate(name.find(['(', ' ', '{']).unwrap_or(name.len()));
    Error::protocol(format!("{op}: unexpected {name} from server"))
}
