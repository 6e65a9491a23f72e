//! gRPC statuses and transport failures as the crate's [`Error`].
//!
//! Measured on hyperd 0.0.26963: a failed call carries a `google.rpc.Status`
//! in the `grpc-status-details-bin` trailer (tonic's `Status::details`)
//! whose `details` hold one `Any` of type
//! `type.googleapis.com/salesforce.hyperdb.grpc.v1.ErrorInfo`: the SQLSTATE,
//! the primary message, customer hint/detail, a position (0-based character
//! offsets) and the error source (`User`/`System`). A syntax error in
//! `SELEC 1` arrives as `INVALID_ARGUMENT` with SQLSTATE 42601 and the
//! caret picture of the query as its detail; a cancelled query as
//! `CANCELLED` (`FAILED_PRECONDITION` when polled with `GetQueryInfo`) with
//! SQLSTATE 57014.

use prost::Message;
use tonic::{Code, Status};

use super::proto::{ErrorInfo, RpcStatus};
use crate::error::{DbError, Error, ErrorKind, SqlState};

/// The type URL of hyperd's error details.
const ERROR_INFO_TYPE: &str = "salesforce.hyperdb.grpc.v1.ErrorInfo";

/// hyperd's error details from a status, if it sent any.
pub(crate) fn error_info(status: &Status) -> Option<ErrorInfo> {
    let details = status.details();
    if details.is_empty() {
        return None;
    }
    let rpc = RpcStatus::decode(details).ok()?;
    rpc.details
        .iter()
        .filter(|any| any.type_url.rsplit('/').next() == Some(ERROR_INFO_TYPE))
        .find_map(|any| ErrorInfo::decode(any.value.as_slice()).ok())
}

/// Maps a failed call to an [`Error`]: a server error with every field
/// hyperd sent when it sent [`ErrorInfo`], else a kind chosen by the status
/// code (`UNAVAILABLE` is a lost connection, `DEADLINE_EXCEEDED` a timeout,
/// `UNAUTHENTICATED`/`PERMISSION_DENIED` without details an auth failure).
pub fn status_to_error(status: Status) -> Error {
    if let Some(info) = error_info(&status) {
        return Error::server(db_error(info, &status));
    }
    let kind = match status.code() {
        Code::Unavailable => ErrorKind::Closed,
        Code::DeadlineExceeded => ErrorKind::Timeout,
        Code::Unauthenticated => ErrorKind::Auth,
        Code::Cancelled => {
            // A cancel without details (e.g. by a proxy) is still a cancel.
            let db = DbError::new(Some(SqlState::QUERY_CANCELED), status.message());
            return Error::server(db);
        }
        Code::Internal | Code::Unknown | Code::DataLoss if is_transport(&status) => {
            ErrorKind::Closed
        }
        _ => {
            let db = DbError::new(None, format!("{:?}: {}", status.code(), status.message()));
            return Error::server(db);
        }
    };
    let text = with_sources(
        format!("gRPC {:?}: {}", status.code(), status.message()),
        &status,
    );
    Error::new(kind, "gRPC call failed").with_source(Described {
        text,
        inner: Box::new(status),
    })
}

fn db_error(info: ErrorInfo, status: &Status) -> DbError {
    let message = if info.primary_message.is_empty() {
        status.message().to_owned()
    } else {
        info.primary_message
    };
    let mut db = DbError::new(SqlState::from_code(&info.sqlstate), message);
    db.hint = non_empty(info.customer_hint);
    // The detail is the caret picture of the query after a line break,
    // exactly as the PostgreSQL protocol sends it (measured).
    db.detail = non_empty(info.customer_detail).or_else(|| non_empty(info.system_detail));
    db.position = info
        .position
        .and_then(|p| u32::try_from(p.error_begin_character_offset).ok())
        .and_then(|p| p.checked_add(1));
    db
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Whether the status stands for a broken connection rather than a
/// server-side failure (tonic reports those with a source error).
fn is_transport(status: &Status) -> bool {
    std::error::Error::source(status).is_some()
}

/// A transport failure (connect, TLS handshake, HTTP/2) with its whole
/// cause chain in the message: tonic's own message is only
/// "transport error", while the reason (e.g. `invalid peer certificate:
/// UnknownIssuer`) sits several sources down.
pub(crate) fn transport_error(context: &str, e: tonic::transport::Error) -> Error {
    let text = with_sources(e.to_string(), &e);
    Error::new(ErrorKind::Io, context).with_source(Described {
        text,
        inner: Box::new(e),
    })
}

/// An error shown with its whole cause chain, keeping the original as
/// `source()`.
#[derive(Debug)]
struct Described {
    text: String,
    inner: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl std::fmt::Display for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Described {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.inner)
    }
}

fn with_sources(mut message: String, e: &(dyn std::error::Error + 'static)) -> String {
    let mut source = e.source();
    let mut last = String::new();
    while let Some(s) = source {
        let text = s.to_string();
        // Wrappers often repeat their source's text; say each reason once.
        if !text.is_empty() && !last.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        last = text;
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    /// `grpc-status-details-bin` of `SELECT * FROM nosuchtable`, as hyperd
    /// 0.0.26963 sent it.
    const UNDEFINED_TABLE: &str = "080312227461626c6520226e6f737563687461626c652220646f6573206e6f742065786973741ad0010a38747970652e676f6f676c65617069732e636f6d2f73616c6573666f7263652e687970657264622e677270632e76312e4572726f72496e666f1293010a227461626c6520226e6f737563687461626c652220646f6573206e6f7420657869737412053432503031225a0a6c696e6520312c20636f6c756d6e2031353a2053454c454354202a2046524f4d206e6f737563687461626c650a2020202020202020202020202020202020202020202020202020202020202020205e7e7e7e7e7e7e7e7e7e7e3204100e18193a0455736572";

    /// The same for a cancelled query.
    const CANCELED: &str = "0801121063616e63656c656420627920757365721a5b0a38747970652e676f6f676c65617069732e636f6d2f73616c6573666f7263652e687970657264622e677270632e76312e4572726f72496e666f121f0a1063616e63656c65642062792075736572120535373031343a0455736572";

    #[test]
    fn measured_error_details_map_to_a_server_error() {
        let status = Status::with_details(
            Code::InvalidArgument,
            "table \"nosuchtable\" does not exist",
            hex(UNDEFINED_TABLE).into(),
        );
        let e = status_to_error(status);
        assert_eq!(e.kind(), ErrorKind::Server);
        assert_eq!(e.code(), Some(&SqlState::UNDEFINED_TABLE));
        assert_eq!(e.message(), "table \"nosuchtable\" does not exist");
        let db = e.db_error().expect("db error");
        assert_eq!(db.position, Some(15));
        assert!(db
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with("\nline 1, column 15: SELECT")));
    }

    #[test]
    fn cancel_maps_to_query_canceled() {
        let status =
            Status::with_details(Code::Cancelled, "canceled by user", hex(CANCELED).into());
        let e = status_to_error(status);
        assert!(e.is_cancelled());
        assert_eq!(e.message(), "canceled by user");
        let bare = status_to_error(Status::cancelled("gone"));
        assert!(bare.is_cancelled());
    }

    #[test]
    fn statuses_without_details_keep_their_code() {
        let e = status_to_error(Status::unavailable("connection refused"));
        assert!(e.is_closed());
        assert_eq!(
            e.to_string(),
            "gRPC call failed: gRPC Unavailable: connection refused"
        );
        let e = status_to_error(Status::deadline_exceeded("slow"));
        assert!(e.is_timeout());
        let e = status_to_error(Status::invalid_argument(
            "header x-hyperdb-query-id is missing",
        ));
        assert_eq!(e.kind(), ErrorKind::Server);
        assert!(e.code().is_none());
        assert!(e.message().contains("x-hyperdb-query-id"), "{e}");
    }

    #[test]
    fn garbage_details_fall_back_to_the_status() {
        let status = Status::with_details(Code::InvalidArgument, "bad", vec![0xff, 0x01].into());
        let e = status_to_error(status);
        assert!(e.code().is_none());
        assert!(e.message().contains("bad"));
    }
}
