//! The lookup every inserter makes before its COPY, answered as hyperd
//! answers it: for the fake servers of the benches and tests that insert
//! (included with `#[path]` next to `fake_hyperd.rs`).

#![allow(dead_code)]

use bytes::BytesMut;
use hyperdb_api::arrow::{arrow_schema, encode_schema};
use hyperdb_api::types::SqlType;
use hyperdb_api::{ColumnDefinition, TableDefinition};

use crate::fake_hyperd::{complete_and_ready, copy_in_response, is_catalog_query, message};

/// Arrow IPC's end-of-stream marker (continuation, then a zero length).
const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// The reply to the lookup (`COPY (SELECT * FROM t LIMIT 0\n) TO STDOUT
/// WITH (FORMAT ARROWSTREAM)`) for a table of `columns`: name, type OID
/// (no modifier), NOT NULL. The result is the Arrow stream's schema and
/// its end-of-stream marker, no batch.
pub fn catalog_reply(columns: &[(&str, u32, bool)]) -> Vec<u8> {
    let mut table = TableDefinition::new("t");
    for &(name, oid, not_null) in columns {
        let ty = SqlType::from_oid_typmod(oid, -1).expect("a type the fake knows");
        table.add_column(if not_null {
            ColumnDefinition::not_null(name, ty)
        } else {
            ColumnDefinition::nullable(name, ty)
        });
    }
    let schema = arrow_schema(&table).expect("an Arrow schema");
    let mut stream = encode_schema(&schema).expect("the schema message");
    stream.extend_from_slice(&END_OF_STREAM);
    let mut out = BytesMut::new();
    message(&mut out, b'H', &[0, 0, 0]);
    message(&mut out, b'd', &stream);
    message(&mut out, b'c', b"");
    complete_and_ready(&mut out, "COPY 0");
    out.to_vec()
}

/// What an insert test logs a frontend message as: a query by its text,
/// COPY messages by name.
pub fn logged(tag: u8, body: &[u8]) -> String {
    match tag {
        b'Q' => String::from_utf8_lossy(body.strip_suffix(b"\0").unwrap_or(body)).into_owned(),
        b'd' => "CopyData".to_owned(),
        b'c' => "CopyDone".to_owned(),
        b'f' => "CopyFail".to_owned(),
        other => format!("message {}", other as char),
    }
}

/// Appends hyperd's answer to a message of an insert into `t (id INT NOT
/// NULL, v BIGINT)` whose COPY stores `rows` rows: the lookup's reply, a
/// `CopyInResponse`, the COPY's count after `CopyDone`, 57014 after
/// `CopyFail`, and any other query's command tag; nothing to CopyData.
pub fn answer_insert(out: &mut BytesMut, tag: u8, body: &[u8], rows: u64) {
    let text = logged(tag, body);
    match tag {
        b'Q' if is_catalog_query(body) => {
            out.extend_from_slice(&catalog_reply(&[("id", 23, true), ("v", 20, false)]));
        }
        b'Q' if text.starts_with("COPY") => copy_in_response(out, 2),
        b'Q' => complete_and_ready(out, text.split(' ').next().unwrap_or("")),
        b'c' => complete_and_ready(out, &format!("COPY {rows}")),
        b'f' => {
            message(out, b'E', b"SERROR\0C57014\0Mcopy failed\0\0");
            message(out, b'Z', b"I");
        }
        _ => {}
    }
}
