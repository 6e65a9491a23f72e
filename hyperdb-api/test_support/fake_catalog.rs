//! The catalog lookup every inserter makes before its COPY, answered as
//! hyperd answers it: for the fake servers of the benches and tests that
//! insert (included with `#[path]` next to `fake_hyperd.rs`).

#![allow(dead_code)]

use bytes::BytesMut;

use crate::fake_hyperd::{complete_and_ready, message};

/// The reply to the catalog lookup through hyperd's Arrow stream, for a
/// table of `columns`: name, type OID, NOT NULL (no modifier, no
/// collation).
pub fn catalog_copy_reply(columns: &[(&str, u32, bool)]) -> Vec<u8> {
    use std::sync::Arc;

    use hyperdb_api::arrow_array::{
        ArrayRef, BooleanArray, Int32Array, RecordBatch, StringArray, UInt32Array,
    };
    use hyperdb_api::types::SqlType;
    use hyperdb_api::TableDefinition;

    let result = TableDefinition::new("catalog")
        .with_column("attname", SqlType::Text)
        .with_column("atttypid", SqlType::Oid)
        .with_column("atttypmod", SqlType::Int)
        .with_column("attnotnull", SqlType::Bool)
        .with_column("collname", SqlType::Text);
    let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&result).expect("schema"));
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(columns.iter().map(|c| c.0))),
        Arc::new(UInt32Array::from_iter_values(columns.iter().map(|c| c.1))),
        Arc::new(Int32Array::from(vec![-1; columns.len()])),
        Arc::new(BooleanArray::from(
            columns.iter().map(|c| c.2).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(vec![None::<&str>; columns.len()])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), arrays).expect("batch");
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("writer");
    w.write(&batch).expect("write");
    let mut ipc = w.into_inner().expect("finish");
    // Without the end-of-stream marker, as hyperd sends it.
    ipc.truncate(ipc.len() - 8);
    let mut out = BytesMut::new();
    message(&mut out, b'H', &[0, 0, 0]);
    message(&mut out, b'd', &ipc);
    message(&mut out, b'c', b"");
    complete_and_ready(&mut out, &format!("COPY {}", columns.len()));
    out.to_vec()
}
