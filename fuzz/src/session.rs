//! The client's state machine against a scripted server: the real sync
//! driver (`client::Client`: startup, the request surface of
//! `client/requests.rs`, the session's rules and every operation) over an
//! in-memory transport that plays arbitrary server bytes, cut into
//! arbitrary reads.
//!
//! Invariants: every error is typed (server, protocol, authentication,
//! closed); an error other than a server's breaks the connection, and a
//! broken connection fails the next call at once without reading; a
//! server error leaves it idle and usable; memory stays in proportion to
//! what the server sent.

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use hyperdb_api_core::client::{Client, Config, Endpoint, SocketOptions, Transport};
use hyperdb_api_core::error::{Error, ErrorKind};
use hyperdb_api_core::protocol::auth::AuthMethods;
use hyperdb_api_core::protocol::frontend;
use hyperdb_api_core::protocol::ops::{CopyOutEvent, QueryRequest, RowEvent};
use hyperdb_api_core::protocol::Limits;

use crate::alloc::{assert_bounded, peak_during};
use crate::{chunks, Input};

/// What the client may do, one per script byte.
#[derive(Clone, Copy, Debug)]
enum Op {
    Execute,
    Query,
    /// A query whose rows are left unread: the next call drains them.
    AbandonQuery,
    CopyIn,
    CopyInFail,
    CopyOut,
    EnqueueCommand,
    Settle,
    Close,
}

const OPS: [Op; 9] = [
    Op::Execute,
    Op::Query,
    Op::AbandonQuery,
    Op::CopyIn,
    Op::CopyInFail,
    Op::CopyOut,
    Op::EnqueueCommand,
    Op::Settle,
    Op::Close,
];

/// The most steps a row or COPY loop takes per call: enough to read any
/// input that fits a fuzz run, a bound for a server that never ends.
const MAX_STEPS: usize = 1 << 16;

/// A server that says what the script says and ignores what it is sent.
struct Scripted<'a> {
    reads: Vec<&'a [u8]>,
    next: usize,
    /// Bytes handed to the client so far.
    delivered: Arc<AtomicUsize>,
}

impl Write for Scripted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for Scripted<'_> {
    fn read_into(&mut self, buf: &mut BytesMut, window: usize) -> io::Result<usize> {
        let Some(read) = self.reads.get_mut(self.next) else {
            return Ok(0);
        };
        let (now, later) = read.split_at(window.min(read.len()));
        buf.extend_from_slice(now);
        *read = later;
        if later.is_empty() {
            self.next += 1;
        }
        self.delivered.fetch_add(now.len(), Ordering::Relaxed);
        Ok(now.len())
    }

    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    fn set_write_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

pub fn check(data: &[u8]) {
    let (_, peak) = peak_during(|| run(data));
    assert_bounded("client session", peak, data.len());
}

fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let setup = input.byte();
    let script: Vec<Op> = input
        .short()
        .iter()
        .map(|&b| OPS[usize::from(b) % OPS.len()])
        .collect();
    let sizes = input.bytes(4);
    let server = input.rest();
    let delivered = Arc::new(AtomicUsize::new(0));
    let transport = Scripted {
        reads: chunks(server, sizes, 1 + usize::from(setup >> 4) * 64),
        next: 0,
        delivered: delivered.clone(),
    };
    let mut config = Config::new(Endpoint::tcp("127.0.0.1", 1))
        .with_user("fuzz")
        .with_socket_options(SocketOptions {
            // The smallest window the driver takes, or the default.
            read_window: if setup & 1 == 0 {
                hyperdb_api_core::client::MIN_READ_WINDOW
            } else {
                SocketOptions::default().read_window
            },
            ..SocketOptions::default()
        });
    if setup & 2 != 0 {
        config = config.with_password("fuzz-password");
    }
    if setup & 4 != 0 {
        config = config.with_require_auth(AuthMethods::SCRAM_SHA_256 | AuthMethods::TRUST);
    }
    if setup & 8 != 0 {
        config = config.with_limits(Limits {
            max_control_message: 256,
            max_data_message: 4096,
        });
    }
    let mut client = match Client::handshake(transport, &config, None) {
        Ok(client) => client,
        Err(e) => {
            assert_typed(&e);
            return;
        }
    };
    for op in script {
        let broken_before = client.session().is_broken();
        let delivered_before = delivered.load(Ordering::Relaxed);
        if let Op::Close = op {
            let _ = client.close();
            return;
        }
        let outcome = step(&mut client, op);
        if broken_before {
            // A broken connection fails at once, before any read (queuing a
            // command for later, as `Drop` does, reads nothing either).
            assert_eq!(
                delivered.load(Ordering::Relaxed),
                delivered_before,
                "{op:?} read"
            );
            if let Op::EnqueueCommand = op {
                continue;
            }
            let e = outcome.expect_err("a call on a broken connection succeeded");
            assert_eq!(
                e.kind(),
                ErrorKind::Closed,
                "{op:?} on a broken connection: {e}"
            );
            continue;
        }
        if let Err(e) = outcome {
            assert_typed(&e);
            if e.kind() == ErrorKind::Server && !client.session().is_broken() {
                assert_eq!(client.session().outstanding(), 0, "{op:?}: {e}");
            } else {
                assert!(client.session().is_broken(), "{op:?}: {e} left it usable");
            }
        }
    }
}

/// Errors a server can cause.
fn assert_typed(e: &Error) {
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Server | ErrorKind::Protocol | ErrorKind::Auth | ErrorKind::Closed
        ),
        "untyped error: {:?}: {e}",
        e.kind()
    );
}

fn step(client: &mut Client<Scripted<'_>>, op: Op) -> Result<(), Error> {
    match op {
        Op::Execute => client.execute("SELECT 1").map(drop),
        Op::Query | Op::AbandonQuery => {
            client.query(&QueryRequest::new("SELECT 1"))?;
            if let Op::Query = op {
                for _ in 0..MAX_STEPS {
                    if let RowEvent::Done { .. } = client.next_rows()? {
                        break;
                    }
                }
            }
            Ok(())
        }
        Op::CopyIn | Op::CopyInFail => {
            client.copy_in("COPY t FROM STDIN")?;
            frontend::copy_data(client.copy_buf(), b"row")?;
            if let Op::CopyInFail = op {
                client.queue_copy_fail("fuzz");
                client.settle()
            } else {
                client.copy_in_finish().map(drop)
            }
        }
        Op::CopyOut => {
            client.copy_out("COPY (SELECT 1) TO STDOUT")?;
            for _ in 0..MAX_STEPS {
                if let CopyOutEvent::Done { .. } = client.next_copy_out()? {
                    break;
                }
            }
            Ok(())
        }
        Op::EnqueueCommand => client.enqueue_command("ROLLBACK"),
        Op::Settle => client.settle(),
        Op::Close => Ok(()),
    }
}
