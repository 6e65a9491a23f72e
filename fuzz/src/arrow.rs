//! The Arrow readers: a query's Arrow result (`COPY ... TO STDOUT WITH
//! (FORMAT ARROWSTREAM)` payloads) decoded and read as rows exactly as
//! `execute_query` reads it, whole and cut into arbitrary payloads (the
//! same rows either way); and `batch_from_buffers`, which turns a
//! binding's column buffers into a batch of a table's schema.

use std::sync::{Arc, Once};

use bytes::Bytes;
use hyperdb_api::arrow::{arrow_schema, batch_from_buffers, ColumnBuffer, ColumnInput};
use hyperdb_api::fuzzing::arrow_rows;
use hyperdb_api::{Error, TableDefinition};

use crate::alloc::{assert_bounded, assert_bounded_with, peak_during};
use crate::hyperbinary::sql_type;
use crate::reads::{agree, read_row, Mixed, Plain};
use crate::{chunks, Input};

/// Rows read per input: a batch may declare millions of NULL-type rows in
/// a few bytes, and reading each is the same code.
const MAX_ROWS: usize = 4096;

/// Lets panics raised inside the arrow crates unwind to the reader, which
/// turns them into errors (`decode_caught` in `arrow/decoder.rs`):
/// libFuzzer's panic hook aborts at any panic, caught or not. A panic
/// nobody catches still ends the run (libfuzzer-sys aborts when one
/// reaches it), and every other panic goes to the hook as before.
fn let_arrow_panics_unwind() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let next = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_arrow = info
                .location()
                .is_some_and(|l| l.file().contains("/arrow-"));
            if !in_arrow {
                next(info);
            }
        }));
    });
}

/// What the decoder reserves for a message cut across payloads, declared
/// longer than what has arrived (`MAX_RESERVE` in `arrow/ipc_messages.rs`,
/// as arrow-ipc's `StreamDecoder` did before): a server can make it
/// reserve this much with a few bytes (found by this target; kept in
/// `regressions/arrow/`). Bounded and not touched until written, so
/// allowed here; what more it reserves is a finding (reserving it twice
/// was: `regressions/arrow/cut-header-reserved-twice`).
const ARROW_IPC_PREALLOC: usize = 64 << 20;

pub fn check(data: &[u8]) {
    let_arrow_panics_unwind();
    let mut input = Input::new(data);
    if input.byte() & 1 == 0 {
        let (_, peak) = peak_during(|| ipc_stream(input));
        assert_bounded_with("Arrow result", peak, data.len(), ARROW_IPC_PREALLOC);
    } else {
        let (_, peak) = peak_during(|| from_buffers(input));
        assert_bounded("batch_from_buffers", peak, data.len());
    }
}

fn ipc_stream(mut input: Input<'_>) {
    let sizes = input.bytes(4).to_vec();
    let ipc = input.rest();
    let whole = read(&[ipc]);
    let cut = read(&chunks(ipc, &sizes, 7));
    assert_eq!(whole, cut, "cut as {sizes:?}");
}

/// The rows as read, and whether the stream ended in an error.
fn read(payloads: &[&[u8]]) -> (Vec<Vec<String>>, Result<bool, String>) {
    let payloads: Vec<Bytes> = payloads.iter().map(|p| Bytes::copy_from_slice(p)).collect();
    let mut rows = Vec::new();
    let plain = arrow_rows::<Plain>(payloads.clone(), |row, reads| {
        agree(&reads);
        rows.push(read_row(row));
        rows.len() < MAX_ROWS
    });
    let mut again = 0;
    let mixed = arrow_rows::<Mixed>(payloads, |_, reads| {
        agree(&reads);
        again += 1;
        again < MAX_ROWS
    });
    assert_eq!(again, rows.len());
    let ended = match (plain, mixed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            Ok(a.is_some())
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert!(matches!(a, Error::Arrow(_)), "untyped error: {a:?}");
            Err("error".to_owned())
        }
        (a, b) => panic!("read as Plain: {a:?}, as Mixed: {b:?}"),
    };
    (rows, ended)
}

/// One column's buffers, owned; `kind` picks the `ColumnBuffer` variant.
struct Buffers {
    kind: u8,
    bytes: Vec<u8>,
    units: Vec<u16>,
    offsets: Vec<u32>,
    validity: Option<Vec<u8>>,
}

/// Column buffers as a binding hands them over, for a table of up to
/// three columns: any row count, any buffers.
fn from_buffers(mut input: Input<'_>) {
    let mut table = TableDefinition::new("t");
    for i in 0..input.byte() % 4 {
        if let Some(ty) = sql_type(&mut input) {
            table = table.with_column(format!("c{i}"), ty);
        }
    }
    let Ok(schema) = arrow_schema(&table) else {
        return;
    };
    let schema = Arc::new(schema);
    let rows = if input.byte() & 1 == 0 {
        usize::from(input.byte())
    } else {
        input.u32() as usize
    };
    let owned: Vec<Buffers> = (0..input.byte() % 5)
        .map(|_| {
            let kind = input.byte();
            Buffers {
                kind,
                bytes: input.short().to_vec(),
                units: input
                    .short()
                    .chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c.get(1).copied().unwrap_or(0)]))
                    .collect(),
                offsets: input.short().iter().map(|&o| u32::from(o)).collect(),
                validity: (kind & 4 != 0).then(|| input.short().to_vec()),
            }
        })
        .collect();
    let columns: Vec<ColumnInput<'_>> = owned
        .iter()
        .map(|b| ColumnInput {
            values: match b.kind % 3 {
                0 => ColumnBuffer::Fixed(&b.bytes),
                1 => ColumnBuffer::Utf16 {
                    units: &b.units,
                    offsets: &b.offsets,
                },
                _ => ColumnBuffer::Binary {
                    data: &b.bytes,
                    offsets: &b.offsets,
                },
            },
            validity: b.validity.as_deref(),
        })
        .collect();
    match batch_from_buffers(&schema, rows, 0, &columns) {
        Ok(batch) => {
            assert_eq!(batch.num_rows(), rows);
            assert_eq!(batch.schema(), schema);
        }
        Err(e) => assert!(
            matches!(e, Error::InvalidRow { .. } | Error::Arrow(_)),
            "untyped error: {e:?}"
        ),
    }
}
