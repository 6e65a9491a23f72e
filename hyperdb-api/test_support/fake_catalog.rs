//! The catalog lookup every inserter makes before its COPY, answered as
//! hyperd answers it: for the fake servers of the benches and tests that
//! insert (included with `#[path]` next to `fake_hyperd.rs`).

#![allow(dead_code)]

use bytes::{BufMut, BytesMut};

use crate::fake_hyperd::{complete_and_ready, message, row_description};

/// The reply to the catalog lookup (a simple `Query`, rows in HyperBinary)
/// for a table of `columns`: name, type OID, NOT NULL (no modifier, no
/// collation).
pub fn catalog_reply(columns: &[(&str, u32, bool)]) -> Vec<u8> {
    let mut out = BytesMut::new();
    row_description(
        &mut out,
        &[
            ("attname", 25, -1),
            ("atttypid", 26, 4),
            ("atttypmod", 23, 4),
            ("attnotnull", 16, 1),
            ("collname", 25, -1),
        ],
    );
    for &(name, oid, not_null) in columns {
        // A DataRow field: its length, then the value (HyperBinary: fixed
        // widths little-endian, text as its bytes).
        let mut row = BytesMut::new();
        row.put_i16(5);
        row.put_i32(i32::try_from(name.len()).expect("name length"));
        row.put_slice(name.as_bytes());
        row.put_i32(4);
        row.put_u32_le(oid);
        row.put_i32(4);
        row.put_i32_le(-1);
        row.put_i32(1);
        row.put_u8(u8::from(not_null));
        row.put_i32(-1);
        message(&mut out, b'D', &row);
    }
    complete_and_ready(&mut out, &format!("SELECT {}", columns.len()));
    out.to_vec()
}
