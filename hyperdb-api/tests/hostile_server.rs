//! The client against a hostile server (`test_support/fake_hyperd.rs`
//! scripted to misbehave): huge and negative declared lengths, counts that
//! disagree, unknown tags, floods, a stream cut off mid-message. Each case
//! asserts the typed error, that the client's heap stayed small (a counting
//! allocator, per thread: the fake server runs on its own), and, where the
//! stream is lost, that the connection is broken: the next call fails at
//! once with `ErrorKind::Closed`. `fuzz/` (the `session` target) runs the
//! same client against arbitrary bytes.

#![allow(clippy::unwrap_used)]

#[path = "../test_support/counting_alloc.rs"]
mod counting_alloc;
#[path = "../test_support/fake_hyperd.rs"]
mod fake_hyperd;

use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use hyperdb_api::{ConnectOptions, Connection, Endpoint, Error, ErrorKind, Limits};

use counting_alloc::{peak_during, Counting};
use fake_hyperd::{accept_login, complete_and_ready, message, read_message, read_startup};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The client's buffers (64 KiB each way, a 1 MiB read window) and what a
/// query holds, with room to spare; every hostile length below is far
/// larger.
const HEAP_BOUND: usize = 8 << 20;

/// What the fake server does after it has answered the first request.
#[derive(Clone, Copy, PartialEq)]
enum Then {
    /// Keep reading (and answering every later request with `SELECT 0`).
    Serve,
    /// Close the socket at once.
    Close,
}

/// A server that logs the client in, answers its first request (a simple
/// `Query`, or an extended query at its `Sync`) with `reply`, then does
/// `then`. Returns the endpoint and how many requests it saw.
fn hostile(reply: Vec<u8>, then: Then) -> (Endpoint, JoinHandle<()>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let endpoint = Endpoint::tcp("127.0.0.1", listener.local_addr().unwrap().port());
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        read_startup(&mut s).unwrap();
        let mut out = BytesMut::new();
        accept_login(&mut out, (7, 8));
        s.write_all(&out).unwrap();
        let mut replied = false;
        // Errors here are the client hanging up, which is what it should do.
        while let Ok(Some((tag, _))) = read_message(&mut s) {
            if !matches!(tag, b'Q' | b'S') {
                continue;
            }
            seen.fetch_add(1, Ordering::Relaxed);
            if !replied {
                replied = true;
                if s.write_all(&reply).is_err() || then == Then::Close {
                    return;
                }
            } else {
                out.clear();
                complete_and_ready(&mut out, "SELECT 0");
                if s.write_all(&out).is_err() {
                    return;
                }
            }
        }
    });
    (endpoint, server, requests)
}

fn connect(endpoint: Endpoint) -> Connection {
    Connection::connect_with(&ConnectOptions::new(endpoint)).unwrap()
}

fn kind(e: &Error) -> Option<ErrorKind> {
    e.kind()
}

/// The stream is lost: the next call fails at once with `Closed`, and
/// sends the server nothing.
fn assert_broken(conn: &mut Connection, requests: &AtomicUsize) {
    let before = requests.load(Ordering::Relaxed);
    let start = Instant::now();
    let e = conn.execute_command("SELECT 1").unwrap_err();
    assert_eq!(kind(&e), Some(ErrorKind::Closed), "{e}");
    assert!(e.to_string().contains("unusable"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(1));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        requests.load(Ordering::Relaxed),
        before,
        "a request was sent"
    );
}

/// Runs the DataRow path (`SHOW` is not served from Arrow) to its end.
fn read_all_rows(conn: &mut Connection) -> Result<usize, Error> {
    let mut rows = conn.execute_query("SHOW everything")?;
    let mut n = 0;
    for row in rows.by_ref() {
        row?;
        n += 1;
    }
    Ok(n)
}

fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    message(&mut out, tag, body);
    out.to_vec()
}

/// A message header alone: `tag` and a declared length.
fn header(tag: u8, len: i32) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&len.to_be_bytes());
    v
}

/// The extended query's replies up to its `RowDescription` (`columns` INT
/// columns).
fn described(columns: usize) -> Vec<u8> {
    let mut out = BytesMut::new();
    message(&mut out, b'1', b"");
    message(&mut out, b'2', b"");
    let fields: Vec<(String, u32, i16)> = (0..columns).map(|i| (format!("c{i}"), 23, 4)).collect();
    let fields: Vec<(&str, u32, i16)> = fields
        .iter()
        .map(|(n, o, l)| (n.as_str(), *o, *l))
        .collect();
    fake_hyperd::row_description(&mut out, &fields);
    out.to_vec()
}

/// A `DataRow` of INT fields (`None`: NULL).
fn data_row(fields: &[Option<i32>]) -> Vec<u8> {
    let mut body = BytesMut::new();
    body.put_i16(fields.len() as i16);
    for f in fields {
        match f {
            Some(v) => {
                body.put_i32(4);
                body.put_slice(&v.to_le_bytes());
            }
            None => body.put_i32(-1),
        }
    }
    frame(b'D', &body)
}

/// Declared lengths past the caps (1 MiB for control messages by default;
/// rows and COPY data capped here at 256 MiB, by the caller's `Limits`)
/// are refused from the header alone: a protocol error, nothing
/// allocated, the connection broken.
#[test]
fn huge_declared_lengths_are_refused_from_the_header() {
    let capped = Limits {
        max_data_message: 256 << 20,
        ..Limits::default()
    };
    for (reply, limits) in [
        (header(b'T', i32::MAX), Limits::default()),
        (header(b'E', (1 << 20) + 5), Limits::default()),
        (header(b'D', (256 << 20) + 5), capped),
        ([described(1), header(b'D', i32::MAX)].concat(), capped),
    ] {
        let (endpoint, server, requests) = hostile(reply, Then::Serve);
        let mut conn =
            Connection::connect_with(&ConnectOptions::new(endpoint).with_limits(limits)).unwrap();
        let (e, heap) = peak_during(|| read_all_rows(&mut conn).unwrap_err());
        assert_eq!(kind(&e), Some(ErrorKind::Protocol), "{e}");
        assert!(e.to_string().contains("limit"), "{e}");
        assert!(heap < HEAP_BOUND, "{heap} bytes of heap");
        assert_broken(&mut conn, &requests);
        drop(conn);
        server.join().unwrap();
    }
}

/// Lengths under the caps that the server never fills (by default rows
/// and COPY data may declare all a length word can: hyperd sends values of
/// up to ~1.5 GB): what arrived is all that is held, then the cut-off
/// stream is a `Closed` error. Rows (DataRow path) and COPY data (the
/// Arrow path of a plain query, read into a buffer aligned for Arrow)
/// alike.
#[test]
fn large_declared_lengths_allocate_only_what_arrives() {
    let copy_out = [
        frame(b'H', &[0, 0, 0]),
        header(b'd', 250 << 20),
        vec![0; 1000],
    ]
    .concat();
    for (reply, arrow) in [
        (
            [described(1), header(b'D', 250 << 20), vec![0; 1000]].concat(),
            false,
        ),
        (
            [described(1), header(b'D', i32::MAX), vec![0; 1000]].concat(),
            false,
        ),
        (copy_out, true),
    ] {
        let (endpoint, server, requests) = hostile(reply, Then::Close);
        let mut conn = connect(endpoint);
        let (e, heap) = peak_during(|| {
            if arrow {
                conn.query_arrow("SELECT 1")
                    .and_then(|mut b| b.next().transpose())
                    .unwrap_err()
            } else {
                read_all_rows(&mut conn).unwrap_err()
            }
        });
        assert_eq!(kind(&e), Some(ErrorKind::Closed), "{e}");
        assert!(e.to_string().contains("closed"), "{e}");
        assert!(heap < HEAP_BOUND, "arrow {arrow}: {heap} bytes of heap");
        assert_broken(&mut conn, &requests);
        server.join().unwrap();
    }
}

/// The control-message cap is exact: a notice of 1 MiB is read, one byte
/// more is refused. With smaller limits of the caller's choosing, the same.
#[test]
fn the_control_message_cap_is_exact() {
    // A NoticeResponse body: "SNOTICE\0", then "M", the text and a NUL,
    // then the terminating NUL: 11 bytes and the text.
    let notice = |body_len: usize| {
        let text = "n".repeat(body_len - 11);
        [
            frame(b'N', format!("SNOTICE\0M{text}\0\0").as_bytes()),
            frame(b'C', b"SELECT 0\0"),
            frame(b'Z', b"I"),
        ]
        .concat()
    };
    let (endpoint, server, _) = hostile(notice(1 << 20), Then::Serve);
    let mut conn = connect(endpoint);
    assert_eq!(conn.execute_command("SELECT 0").unwrap(), 0);
    conn.execute_command("SELECT 0").unwrap();
    drop(conn);
    server.join().unwrap();

    let (endpoint, server, requests) = hostile(notice((1 << 20) + 1), Then::Serve);
    let mut conn = connect(endpoint);
    let e = conn.execute_command("SELECT 0").unwrap_err();
    assert_eq!(kind(&e), Some(ErrorKind::Protocol), "{e}");
    assert!(
        e.to_string()
            .contains("1048577 bytes, over the 1048576-byte limit"),
        "{e}"
    );
    assert_broken(&mut conn, &requests);
    drop(conn);
    server.join().unwrap();

    let limits = Limits {
        max_control_message: 100,
        max_data_message: 1 << 20,
    };
    let (endpoint, server, _) = hostile(notice(101), Then::Serve);
    let mut conn =
        Connection::connect_with(&ConnectOptions::new(endpoint).with_limits(limits)).unwrap();
    let e = conn.execute_command("SELECT 0").unwrap_err();
    assert!(e.to_string().contains("over the 100-byte limit"), "{e}");
    drop(conn);
    server.join().unwrap();
}

/// A negative length, of a message or of a field (other than -1, NULL):
/// protocol errors, the connection broken.
#[test]
fn negative_lengths_are_protocol_errors() {
    let mut negative_field = BytesMut::new();
    negative_field.put_i16(1);
    negative_field.put_i32(-2);
    for (reply, what) in [
        (header(b'C', -1), "declares length -1"),
        (header(b'D', i32::MIN), "declares length"),
        (
            [described(1), frame(b'D', &negative_field)].concat(),
            "negative field length",
        ),
    ] {
        let (endpoint, server, requests) = hostile(reply, Then::Serve);
        let mut conn = connect(endpoint);
        let e = read_all_rows(&mut conn).unwrap_err();
        assert_eq!(kind(&e), Some(ErrorKind::Protocol), "{e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
        assert_broken(&mut conn, &requests);
        drop(conn);
        server.join().unwrap();
    }
}

/// Counts that disagree: rows with more or fewer fields than described, a
/// row whose field count promises more than it holds, a description that
/// promises more columns than it carries, rows changing their count.
#[test]
fn counts_that_disagree_are_protocol_errors() {
    let mut short = BytesMut::new();
    short.put_i16(3);
    short.put_i32(4);
    short.put_slice(&7i32.to_le_bytes());
    let mut few_columns = BytesMut::new();
    few_columns.put_i16(500);
    few_columns.put_slice(b"only\0");
    let ok = |n| data_row(&vec![Some(1); n]);
    for (reply, what) in [
        (
            [described(2), data_row(&[Some(1), Some(2), Some(3)])].concat(),
            "3 fields",
        ),
        ([described(2), data_row(&[Some(1)])].concat(), "1 fields"),
        ([described(3), frame(b'D', &short)].concat(), "DataRow"),
        (frame(b'T', &few_columns), "truncated"),
        (
            [described(2), ok(2), ok(2), ok(3), ok(2)].concat(),
            "3 fields",
        ),
    ] {
        let (endpoint, server, requests) = hostile(reply, Then::Serve);
        let mut conn = connect(endpoint);
        let e = read_all_rows(&mut conn).unwrap_err();
        assert_eq!(kind(&e), Some(ErrorKind::Protocol), "{e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
        assert_broken(&mut conn, &requests);
        drop(conn);
        server.join().unwrap();
    }
}

/// A tag the protocol does not have, or one out of place.
#[test]
fn unknown_and_misplaced_tags_are_protocol_errors() {
    for (reply, what) in [
        (frame(b'?', b""), "unknown message tag '?'"),
        (frame(b'Q', b"SELECT 1\0"), "unknown message tag 'Q'"),
        (frame(b'n', b""), "unexpected NoData"),
        (frame(b'2', b""), "unexpected BindComplete"),
    ] {
        let (endpoint, server, requests) = hostile(reply, Then::Serve);
        let mut conn = connect(endpoint);
        let e = conn.execute_command("SELECT 1").unwrap_err();
        assert_eq!(kind(&e), Some(ErrorKind::Protocol), "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
        assert_broken(&mut conn, &requests);
        drop(conn);
        server.join().unwrap();
    }
}

/// Floods: 200,000 notices, 200,000 parameter statuses with distinct
/// names (kept: at most 256), and an error whose fields fill the 1 MiB
/// cap. The client reads through them with its heap bounded, the request
/// succeeds (or fails with the server's error) and the connection stays
/// usable.
#[test]
fn floods_keep_memory_bounded_and_the_connection_usable() {
    let mut notices = BytesMut::new();
    for i in 0..200_000 {
        message(
            &mut notices,
            b'N',
            format!("SNOTICE\0Mnotice {i}\0\0").as_bytes(),
        );
    }
    complete_and_ready(&mut notices, "SELECT 0");
    let mut statuses = BytesMut::new();
    for i in 0..200_000 {
        message(
            &mut statuses,
            b'S',
            format!("flood_{i}\0value\0").as_bytes(),
        );
    }
    complete_and_ready(&mut statuses, "SELECT 0");
    let field = "x".repeat(200_000);
    let mut error = BytesMut::new();
    let body = format!("SERROR\0C42601\0M{field}\0D{field}\0H{field}\0W{field}\0q{field}\0\0");
    message(&mut error, b'E', body.as_bytes());
    message(&mut error, b'Z', b"I");
    for (reply, is_error) in [(notices, false), (statuses, false), (error, true)] {
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        let (endpoint, server, _) = hostile(reply.to_vec(), Then::Serve);
        let options = ConnectOptions::new(endpoint).with_notice_handler(move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        let mut conn = Connection::connect_with(&options).unwrap();
        let (outcome, heap) = peak_during(|| conn.execute_command("SELECT 0"));
        assert!(heap < HEAP_BOUND, "{heap} bytes of heap");
        match outcome {
            Ok(_) => assert!(!is_error),
            Err(e) => {
                assert!(is_error, "{e}");
                assert_eq!(kind(&e), Some(ErrorKind::Server), "{e}");
                assert_eq!(e.sqlstate(), "42601");
                assert!(e.to_string().len() >= 200_000);
            }
        }
        if seen.load(Ordering::Relaxed) > 0 {
            assert_eq!(seen.load(Ordering::Relaxed), 200_000);
        }
        // Usable: the next request is answered.
        assert_eq!(conn.execute_command("SELECT 0").unwrap(), 0);
        drop(conn);
        server.join().unwrap();
    }
}

/// The server closes in the middle of a message (a header, a row, a
/// description): `Closed`, and the connection is broken. A message whose
/// body ends before its fields do (a truncated message) is a protocol
/// error.
#[test]
fn a_stream_cut_off_or_truncated_breaks_the_connection() {
    let row = data_row(&[Some(1), Some(2)]);
    let desc = described(2);
    for (reply, then, want, what) in [
        (vec![b'C', 0, 0], Then::Close, ErrorKind::Closed, "closed"),
        (
            [desc.clone(), row[..row.len() - 3].to_vec()].concat(),
            Then::Close,
            ErrorKind::Closed,
            "closed",
        ),
        (
            desc[..desc.len() - 10].to_vec(),
            Then::Close,
            ErrorKind::Closed,
            "closed",
        ),
        (
            frame(b'C', b"SELECT 1"),
            Then::Serve,
            ErrorKind::Protocol,
            "truncated",
        ),
        (
            frame(b'Z', b""),
            Then::Serve,
            ErrorKind::Protocol,
            "truncated",
        ),
        (
            frame(b'K', &[0, 0, 0, 1]),
            Then::Serve,
            ErrorKind::Protocol,
            "truncated",
        ),
        (
            frame(b'E', b"SERROR\0Mno end"),
            Then::Serve,
            ErrorKind::Protocol,
            "truncated",
        ),
    ] {
        let (endpoint, server, requests) = hostile(reply, then);
        let mut conn = connect(endpoint);
        let e = read_all_rows(&mut conn).unwrap_err();
        assert_eq!(kind(&e), Some(want), "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
        assert_broken(&mut conn, &requests);
        drop(conn);
        server.join().unwrap();
    }
}
