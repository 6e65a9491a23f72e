//! A small seed corpus per target, made by code rather than kept as
//! binary files: well-formed inputs the fuzzer starts from (a hyperd
//! session, rows of every type, an Arrow result, a SCRAM exchange).
//! `bin/seeds.rs` writes them out for `scripts/fuzz.sh`; the regression
//! test replays them.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// The seeds of target `name`.
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    match name {
        "backend" => backend(),
        "session" => session(),
        "hyperbinary" => hyperbinary(),
        "arrow" => arrow(),
        "scram" => scram(),
        "escape" => escape(),
        _ => Vec::new(),
    }
}

fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// A `DataRow` body: the field count and each field (None: NULL).
fn row(fields: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = (fields.len() as i16).to_be_bytes().to_vec();
    for f in fields {
        match f {
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
        }
    }
    b
}

fn row_description(columns: &[(&str, u32)]) -> Vec<u8> {
    let mut d = (columns.len() as i16).to_be_bytes().to_vec();
    for (name, oid) in columns {
        d.extend_from_slice(name.as_bytes());
        d.push(0);
        d.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        d.extend_from_slice(&oid.to_be_bytes());
        d.extend_from_slice(&[0, 4, 255, 255, 255, 255, 0, 2]);
    }
    d
}

fn login() -> Vec<u8> {
    let mut s = frame(b'R', &0i32.to_be_bytes());
    for (name, value) in [("server_version", "9.1.0"), ("client_encoding", "UTF8")] {
        s.extend(frame(b'S', format!("{name}\0{value}\0").as_bytes()));
    }
    s.extend(frame(b'K', &[0, 0, 0, 7, 0, 0, 0, 9]));
    s.extend(frame(b'Z', b"I"));
    s
}

fn done(tag: &str) -> Vec<u8> {
    let mut s = frame(b'C', format!("{tag}\0").as_bytes());
    s.extend(frame(b'Z', b"I"));
    s
}

/// A result: description, three rows, completion.
fn result() -> Vec<u8> {
    let mut s = frame(b'1', b"");
    s.extend(frame(b'2', b""));
    s.extend(frame(b'T', &row_description(&[("id", 23), ("s", 25)])));
    for i in 0..3i32 {
        s.extend(frame(b'D', &row(&[Some(&i.to_le_bytes()), Some(b"text")])));
    }
    s.extend(frame(b'D', &row(&[None, None])));
    s.extend(done("SELECT 4"));
    s
}

fn backend() -> Vec<Vec<u8>> {
    let mut stream = login();
    stream.extend(result());
    stream.extend(frame(
        b'E',
        b"SERROR\0VERROR\0C42601\0Msyntax error\0Dmore\0Hfix it\0P8\0\0",
    ));
    stream.extend(frame(b'N', b"SWARNING\0Mcareful\0\0"));
    stream.extend(frame(b'G', &[0, 0, 2, 0, 0, 0, 0]));
    stream.extend(frame(b'H', &[1, 0, 1, 0, 1]));
    stream.extend(frame(b'd', b"payload"));
    stream.extend(frame(b'c', b""));
    stream.extend(frame(b't', &[0, 2, 0, 0, 0, 23, 0, 0, 0, 25]));
    stream.extend(frame(b'A', b"\0\0\0\x05chan\0payload\0"));
    stream.extend(frame(b'v', b"\0\0\0\0\0\0\0\x01_pq_.x\0"));
    stream.extend(frame(b'R', b"\0\0\0\x0aSCRAM-SHA-256\0\0"));
    stream.extend(frame(b'R', b"\0\0\0\x0br=abc,s=xyz,i=4096"));
    stream.extend(frame(b'R', &[0, 0, 0, 5, 1, 2, 3, 4]));
    stream.extend(frame(b'Z', b"T"));
    let mut seeds = Vec::new();
    for (limits, sizes) in [
        (0u8, [0u8, 0, 0, 0]),
        (0, [3, 7, 200, 255]),
        (0x81, [9, 1, 2, 3]),
    ] {
        let mut seed = vec![limits];
        seed.extend_from_slice(&sizes);
        seed.extend_from_slice(&stream);
        seeds.push(seed);
    }
    seeds
}

/// `setup`, the operations (`session::OPS` indices), read sizes, then
/// the server's bytes.
fn session_seed(setup: u8, ops: &[u8], sizes: [u8; 4], server: &[u8]) -> Vec<u8> {
    let mut seed = vec![setup, ops.len() as u8];
    seed.extend_from_slice(ops);
    seed.extend_from_slice(&sizes);
    seed.extend_from_slice(server);
    seed
}

fn session() -> Vec<Vec<u8>> {
    let mut server = login();
    // Execute, Query, CopyIn, CopyOut, AbandonQuery + Settle, Close.
    server.extend(done("SELECT 1"));
    server.extend(result());
    server.extend(frame(b'G', &[0, 0, 0]));
    server.extend(done("COPY 1"));
    server.extend(frame(b'H', &[0, 0, 0]));
    server.extend(frame(b'd', b"chunk one"));
    server.extend(frame(b'd', b"chunk two"));
    server.extend(frame(b'c', b""));
    server.extend(done("COPY 2"));
    server.extend(result());
    let ops = [0, 1, 3, 5, 2, 7, 8];
    let mut failing = login();
    failing.extend(frame(b'E', b"SERROR\0C42P01\0Mno such table\0\0"));
    failing.extend(frame(b'Z', b"I"));
    failing.extend(done("SELECT 1"));
    let mut fatal = login();
    fatal.extend(frame(b'E', b"SFATAL\0VFATAL\0C57P01\0Mshutdown\0\0"));
    vec![
        session_seed(0x01, &ops, [255, 255, 255, 255], &server),
        session_seed(0x10, &ops, [0, 3, 1, 250], &server),
        session_seed(0x00, &[0, 0], [20, 20, 20, 20], &failing),
        session_seed(0x01, &[0, 0], [255, 255, 255, 255], &fatal),
    ]
}

/// Column count, each column's type (`hyperbinary::sql_type`'s three
/// bytes), then `DataRow` bodies, each after its length.
fn hyperbinary() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let seed = |types: &[[u8; 3]], rows: &[Vec<u8>]| {
        let mut s = vec![types.len() as u8 - 1];
        for t in types {
            s.extend_from_slice(t);
        }
        for r in rows {
            s.push(r.len() as u8);
            s.extend_from_slice(r);
        }
        s
    };
    // INT, TEXT, DOUBLE.
    seeds.push(seed(
        &[[2, 0, 0], [8, 0, 0], [5, 0, 0]],
        &[
            row(&[
                Some(&7i32.to_le_bytes()),
                Some(b"seven"),
                Some(&7.5f64.to_le_bytes()),
            ]),
            row(&[None, None, None]),
        ],
    ));
    // NUMERIC(10,2), DATE, TIMESTAMP.
    seeds.push(seed(
        &[[7, 10, 2], [13, 0, 0], [15, 0, 0]],
        &[row(&[
            Some(&12345i64.to_le_bytes()),
            Some(&2_451_545i32.to_le_bytes()),
            Some(&63_000_000_000_000_000i64.to_le_bytes()),
        ])],
    ));
    // INT, DOUBLE, BOOL: the plain tuple's own types.
    seeds.push(seed(
        &[[2, 0, 0], [5, 0, 0], [0, 0, 0]],
        &[row(&[
            Some(&1i32.to_le_bytes()),
            Some(&0.5f64.to_le_bytes()),
            Some(&[1]),
        ])],
    ));
    // BIGINT, VARCHAR(8), NUMERIC(30,4), INTERVAL.
    seeds.push(seed(
        &[[3, 0, 0], [9, 8, 0], [7, 30, 4], [17, 0, 0]],
        &[row(&[
            Some(&(-5i64).to_le_bytes()),
            Some(b"abc"),
            Some(&123_456_789i128.to_le_bytes()),
            Some(&[1; 16]),
        ])],
    ));
    seeds
}

fn arrow() -> Vec<Vec<u8>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("x", DataType::Float64, true),
        Field::new("b", DataType::Boolean, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![1, 2, 3])),
        Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")])),
        Arc::new(Float64Array::from(vec![Some(0.5), Some(f64::NAN), None])),
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("a batch");
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema).expect("a writer");
    writer.write(&batch).expect("written");
    writer.write(&batch).expect("written");
    let mut ipc = writer.into_inner().expect("finished");
    // Without the end-of-stream marker, as hyperd sends it.
    ipc.truncate(ipc.len() - 8);
    let mut whole = vec![0, 255, 255, 255, 255];
    whole.extend_from_slice(&ipc);
    let mut cut = vec![0, 3, 40, 1, 90];
    cut.extend_from_slice(&ipc);
    // batch_from_buffers: two INT columns, three rows, fixed buffers.
    let mut buffers = vec![1, 2, 2, 0, 0, 2, 0, 0, 0, 3, 2];
    for _ in 0..2 {
        buffers.extend_from_slice(&[0, 12]);
        buffers.extend_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        buffers.extend_from_slice(&[0, 0]);
    }
    vec![whole, cut, buffers]
}

fn scram() -> Vec<Vec<u8>> {
    // A whole exchange as raw messages, the signature computed as the
    // server would (the target's own oracle checks it again).
    let salt = b"salty";
    let nonce = "fuzzclientnonceSERVER";
    let first = format!("r={nonce},s={},i=16", BASE64.encode(salt));
    let signature = crate::scram::server_signature(salt, 16, &first, nonce);
    let last = format!("v={}", BASE64.encode(signature));
    let mut raw = vec![0, first.len() as u8];
    raw.extend_from_slice(first.as_bytes());
    raw.extend_from_slice(last.as_bytes());
    // Built: suffix, salt, iterations, extension, how to spoil the final.
    let built = vec![
        1, 3, b'a', b'b', b'c', 4, 1, 2, 3, 4, 16, 0, 2, b'x', b'=', 0,
    ];
    // Requests: SASL, then server-first, then Ok.
    let mut requests = vec![2, 0, 0, 3 | 8, 0, 4, first.len() as u8];
    requests.extend_from_slice(first.as_bytes());
    requests.extend_from_slice(&[0, 0]);
    vec![raw, built, requests]
}

fn escape() -> Vec<Vec<u8>> {
    vec![
        b"my table\xffit's\xffa\"b".to_vec(),
        [
            "\u{e4}\u{1F600} \"quoted\" 'x'".as_bytes(),
            &[0xff, 0xff],
            b"public",
        ]
        .concat(),
        b"a\0b\xffc".to_vec(),
        b"\\' OR 1=1 --\xff\"; DROP TABLE t; --".to_vec(),
    ]
}
