//! Errors cross to JavaScript as one JSON payload in the message, which
//! `lib/errors.ts` turns into a `HyperError` with `code` (always a SQLSTATE,
//! see `hyperdb_api::Error::sqlstate`), `detail`, `hint`, `position`,
//! `column` (`hyperdb_api::Error::column`), `row` and `cause`. Why JSON: a
//! napi error carries only a status and a message across an async
//! boundary, and every field must survive it.

use serde_json::{json, Map, Value as Json};

pub(crate) type Result<T> = napi::Result<T>;

/// The error as JavaScript will see it.
pub(crate) fn to_napi(e: hyperdb_api::Error) -> napi::Error {
    let mut payload = Map::new();
    payload.insert("code".into(), json!(e.sqlstate()));
    payload.insert("message".into(), json!(message(&e)));
    if let Some(db) = e.db_error() {
        insert(&mut payload, "detail", db.detail.as_deref());
        insert(&mut payload, "hint", db.hint.as_deref());
        if let Some(p) = db.position {
            payload.insert("position".into(), json!(p));
        }
        if let Some(s) = db.severity.as_ref() {
            payload.insert("severity".into(), json!(format!("{s:?}").to_uppercase()));
        }
    }
    if let hyperdb_api::Error::InvalidRow { row, .. } = &e {
        payload.insert("row".into(), json!(row));
    }
    insert(&mut payload, "column", e.column());
    let causes = causes(&e);
    if !causes.is_empty() {
        payload.insert("cause".into(), json!(causes));
    }
    napi::Error::from_reason(Json::Object(payload).to_string())
}

/// A failure of the binding itself (a panic caught at the boundary): XX000.
pub(crate) fn internal(message: &str) -> napi::Error {
    napi::Error::from_reason(json!({ "code": "XX000", "message": message }).to_string())
}

/// An argument the binding refused before anything was sent.
pub(crate) fn invalid(what: &str, message: &str) -> napi::Error {
    to_napi(hyperdb_api::Error::InvalidArgument {
        what: what.to_owned(),
        message: message.to_owned(),
    })
}

/// `Ok` or the error as JavaScript will see it.
pub(crate) fn js<T>(r: hyperdb_api::Result<T>) -> Result<T> {
    r.map_err(to_napi)
}

/// The server's message, or for a query timeout (which the server reports
/// as a cancel) the client's, which says that a timeout expired.
fn message(e: &hyperdb_api::Error) -> String {
    match e.db_error() {
        Some(db) if !e.is_timeout() => db.message.clone(),
        _ => e.to_string(),
    }
}

fn insert(payload: &mut Map<String, Json>, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        payload.insert(key.into(), json!(v));
    }
}

/// The messages of the error's sources, outermost first.
fn causes(e: &hyperdb_api::Error) -> Vec<String> {
    let mut out = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push(s.to_string());
        source = s.source();
    }
    out
}
