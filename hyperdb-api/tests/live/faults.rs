//! The fault campaign (issue 18): requests through a proxy that delays,
//! splits, stalls, cuts and resets (`matrix`), hyperd killed with SIGKILL
//! (`kill`), and every kind of error followed by every kind of request
//! (`follow_up`). The proxy is `test_support/fault_proxy.rs`; its own
//! behaviour is checked here against a local echo server.

mod follow_up;
mod handshake_reset;
mod kill;
mod matrix;
mod silent;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::Int32Type;
use hyperdb_api::arrow_array::RecordBatch;
use hyperdb_api::types::SqlType;
use hyperdb_api::TableDefinition;

use crate::fault_proxy::{Direction, Fault, FaultProxy};

/// The table the campaign writes: an id per row and a little text.
pub fn table() -> TableDefinition {
    TableDefinition::new("faults")
        .with_not_null_column("id", SqlType::Int)
        .with_column("s", SqlType::Text)
}

/// Rows 1..=n of [`table`]'s shape, computed by hyperd.
pub fn select(n: u32) -> String {
    format!("SELECT i AS id, 'v' || i AS s FROM generate_series(1, {n}) g(i)")
}

/// What a request saw: how many rows, and the sum of their ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub rows: u64,
    pub sum: i64,
}

impl Tally {
    /// What rows 1..=n add up to.
    pub fn of(n: u32) -> Tally {
        let n = i64::from(n);
        Tally {
            rows: n as u64,
            sum: n * (n + 1) / 2,
        }
    }

    pub fn add(&mut self, id: i32) {
        self.rows += 1;
        self.sum += i64::from(id);
    }

    /// Adds a batch whose first column is the id.
    pub fn add_batch(&mut self, batch: &RecordBatch) {
        for id in batch.column(0).as_primitive::<Int32Type>().iter() {
            self.add(id.unwrap_or_default());
        }
    }
}

/// A server that echoes whatever it reads, on every connection.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn client(proxy: &FaultProxy) -> TcpStream {
    let s = TcpStream::connect(proxy.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads until `want` bytes arrived or the stream ends or fails.
fn read_up_to(s: &mut TcpStream, want: usize) -> (Vec<u8>, Option<ErrorKind>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < want {
        match s.read(&mut buf) {
            Ok(0) => return (got, None),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return (got, Some(e.kind())),
        }
    }
    (got, None)
}

/// The proxy itself: bytes pass unchanged (whole, delayed or split), an
/// armed fault lets exactly its bytes through first, a stall holds bytes
/// until lifted, a cut ends with EOF and a reset with `ECONNRESET`.
#[test]
fn the_proxy_does_what_it_is_told() {
    let proxy = FaultProxy::start(echo_server()).unwrap();
    let message: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    for fault in [
        Fault::None,
        Fault::Delay(Duration::from_millis(5)),
        Fault::Split,
    ] {
        proxy.set(fault);
        let mut s = client(&proxy);
        s.write_all(&message).unwrap();
        let (got, err) = read_up_to(&mut s, message.len());
        assert_eq!((got == message, err), (true, None), "{fault:?}");
    }

    // Armed: exactly 100 bytes come back, then the rest is held.
    proxy.set(Fault::None);
    let mut s = client(&proxy);
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    proxy.arm(Direction::ToClient, 100, Fault::Stall(Direction::ToClient));
    s.write_all(&message).unwrap();
    let (got, err) = read_up_to(&mut s, message.len());
    assert_eq!(got.len(), 100);
    assert_eq!(err, Some(ErrorKind::WouldBlock), "held, not closed");
    assert!(!proxy.armed());
    proxy.set(Fault::None);
    let (rest, _) = read_up_to(&mut s, message.len() - 100);
    assert_eq!([got, rest].concat(), message, "nothing lost while held");

    // Cut: EOF. Reset: ECONNRESET. New connections pass afterwards. (A
    // fault acts on connections the proxy has taken: a round trip first.)
    let mut s = client(&proxy);
    s.write_all(b"ping").unwrap();
    assert_eq!(read_up_to(&mut s, 4).0, b"ping");
    proxy.set(Fault::Cut);
    assert_eq!(read_up_to(&mut s, 1), (Vec::new(), None));
    let mut s = client(&proxy);
    s.write_all(b"ping").unwrap();
    assert_eq!(read_up_to(&mut s, 4).0, b"ping");
    proxy.set(Fault::Reset);
    let (got, err) = read_up_to(&mut s, 1);
    assert_eq!((got.len(), err), (0, Some(ErrorKind::ConnectionReset)));
    let mut s = client(&proxy);
    s.write_all(b"pong").unwrap();
    assert_eq!(read_up_to(&mut s, 4).0, b"pong");
    assert!(proxy.forwarded(Direction::ToServer) >= 40_000);
    assert_eq!(proxy.accepted(), 7);
}
