//! An in-process TCP proxy that the fault tests and the soak put between a
//! client and hyperd, and break on purpose: delay, split into 1-byte
//! writes, stall either direction, cut (FIN to both sides) or reset (RST to
//! both sides). A fault is switched on at once ([`FaultProxy::set`]) or
//! after a given number of bytes has passed in one direction
//! ([`FaultProxy::arm`]), so a test can land it mid-COPY or mid-stream.
//!
//! Plain std threads: two per proxied connection, one per direction, each
//! reading a chunk and deciding under one lock what to do with it. A
//! stalled direction simply stops reading, so the sender's kernel buffers
//! fill as they would behind a dead link. Included with `#[path]` by the
//! live tests and the soak example; not part of the library.

#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread;
use std::time::Duration;

use hyperdb_api::Endpoint;

/// Which way bytes travel through the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to hyperd: requests, COPY data.
    ToServer,
    /// hyperd to client: replies, rows, COPY OUT data.
    ToClient,
}

impl Direction {
    fn index(self) -> usize {
        match self {
            Direction::ToServer => 0,
            Direction::ToClient => 1,
        }
    }
}

/// What the proxy does to the bytes it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Pass everything through unchanged.
    None,
    /// Hold every chunk this long before passing it on.
    Delay(Duration),
    /// Pass every byte on in a write of its own.
    Split,
    /// Pass nothing more in this direction (held, not dropped) until the
    /// fault is changed; applies to connections opened meanwhile too.
    Stall(Direction),
    /// Pass nothing in either direction until the fault is changed.
    StallBoth,
    /// Close every open connection on both sides (the peers read EOF);
    /// connections opened afterwards pass through.
    Cut,
    /// Reset every open connection on both sides (`SO_LINGER` 0, then
    /// close: the peers get `ECONNRESET`); later connections pass through.
    Reset,
}

impl Fault {
    /// Whether bytes going `dir` must wait.
    fn stalls(self, dir: Direction) -> bool {
        match self {
            Fault::Stall(d) => d == dir,
            Fault::StallBoth => true,
            _ => false,
        }
    }
}

/// A fault waiting for `left` more bytes to pass in `dir`.
#[derive(Debug)]
struct Armed {
    dir: Direction,
    left: u64,
    fault: Fault,
}

/// One proxied connection; the pumps hold it, the proxy only a `Weak`, so
/// the sockets close when both pumps have ended.
#[derive(Debug)]
struct Conn {
    client: TcpStream,
    server: TcpStream,
    /// Cut or reset: the pumps stop, and send nothing on their way out.
    dead: AtomicBool,
}

impl Conn {
    fn cut(&self) {
        self.dead.store(true, Ordering::SeqCst);
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }

    /// Sends RST both ways at once: the socket is disconnected in place
    /// (below), so the reset lands right after the bytes that armed it,
    /// not once both pump threads have woken and dropped the sockets, which
    /// on a loaded machine can be milliseconds later. The read shutdown
    /// wakes a pump still blocked; `SO_LINGER` 0 keeps the last close from
    /// sending a FIN should the disconnect fail.
    fn reset(&self) {
        self.dead.store(true, Ordering::SeqCst);
        for s in [&self.server, &self.client] {
            let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
            disconnect(s);
            let _ = s.shutdown(Shutdown::Read);
        }
    }
}

/// `connect` to an `AF_UNSPEC` address: Linux disconnects a connected TCP
/// socket in place, sending RST (`tcp_disconnect`), while the descriptor
/// stays open for the threads that share it.
fn disconnect(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero `sockaddr` is a valid value of the plain C struct.
    let mut addr: libc::sockaddr = unsafe { std::mem::zeroed() };
    addr.sa_family = libc::AF_UNSPEC as libc::sa_family_t;
    let len = std::mem::size_of::<libc::sockaddr>() as libc::socklen_t;
    // SAFETY: `addr` is initialised and outlives the call, `len` is its
    // size, and the descriptor is open while `s` is borrowed.
    let _ = unsafe { libc::connect(s.as_raw_fd(), &addr, len) };
}

#[derive(Debug)]
struct State {
    mode: Fault,
    armed: Option<Armed>,
    upstream: SocketAddr,
    conns: Vec<Weak<Conn>>,
    closed: bool,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    forwarded: [AtomicU64; 2],
    accepted: AtomicU64,
}

/// What a pump does with the chunk it holds.
enum Action {
    Forward {
        len: usize,
        delay: Option<Duration>,
        split: bool,
        then: Option<Fault>,
    },
    Stop,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decides, waiting while `dir` is stalled, what to do with a chunk of
    /// `len` bytes.
    fn next_action(&self, conn: &Conn, dir: Direction, len: usize) -> Action {
        let Some(mut state) = self.flowing(conn, dir) else {
            return Action::Stop;
        };
        let (delay, split) = match state.mode {
            Fault::Delay(d) => (Some(d), false),
            Fault::Split => (None, true),
            _ => (None, false),
        };
        let mut len = len;
        let mut then = None;
        if let Some(armed) = state.armed.as_mut().filter(|a| a.dir == dir) {
            if len as u64 >= armed.left {
                // Exactly the armed number of bytes pass; the rest of the
                // chunk meets the fault.
                len = armed.left as usize;
                then = state.armed.take().map(|a| a.fault);
            } else {
                armed.left -= len as u64;
            }
        }
        Action::Forward {
            len,
            delay,
            split,
            then,
        }
    }

    /// The state once `dir` is not stalled, or `None` once `conn` is cut,
    /// reset or the proxy closed.
    fn flowing(&self, conn: &Conn, dir: Direction) -> Option<MutexGuard<'_, State>> {
        let mut state = self.lock();
        loop {
            if conn.dead.load(Ordering::SeqCst) || state.closed {
                return None;
            }
            if !state.mode.stalls(dir) {
                return Some(state);
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn apply(&self, fault: Fault) {
        let mut state = self.lock();
        self.apply_locked(&mut state, fault);
    }

    fn apply_locked(&self, state: &mut State, fault: Fault) {
        state.armed = None;
        match fault {
            Fault::Cut | Fault::Reset => {
                for conn in state.conns.iter().filter_map(Weak::upgrade) {
                    if fault == Fault::Cut {
                        conn.cut();
                    } else {
                        conn.reset();
                    }
                }
                state.conns.clear();
                state.mode = Fault::None;
            }
            other => state.mode = other,
        }
        self.changed.notify_all();
    }

    /// Moves one direction of `conn` until either side ends or the
    /// connection is cut or reset.
    fn pump(&self, conn: &Conn, dir: Direction) {
        let (mut src, mut dst) = match dir {
            Direction::ToServer => (&conn.client, &conn.server),
            Direction::ToClient => (&conn.server, &conn.client),
        };
        let mut buf = vec![0u8; 64 << 10];
        'read: loop {
            let n = match src.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut chunk = &buf[..n];
            while !chunk.is_empty() {
                let Action::Forward {
                    len,
                    delay,
                    split,
                    then,
                } = self.next_action(conn, dir, chunk.len())
                else {
                    break 'read;
                };
                if let Some(d) = delay {
                    thread::sleep(d);
                }
                let (now, rest) = chunk.split_at(len);
                let sent = if split {
                    now.chunks(1).try_for_each(|b| dst.write_all(b))
                } else {
                    dst.write_all(now)
                };
                if sent.is_err() {
                    break 'read;
                }
                self.forwarded[dir.index()].fetch_add(len as u64, Ordering::Relaxed);
                chunk = rest;
                if let Some(fault) = then {
                    self.apply(fault);
                }
            }
        }
        // Pass an orderly end on once this direction flows (a stall holds
        // it back like data); a cut or reset connection needs nothing more.
        if self.flowing(conn, dir).is_some() {
            let _ = dst.shutdown(Shutdown::Write);
        }
    }
}

/// The proxy: listens on 127.0.0.1, forwards to an upstream address that
/// can change (a restarted hyperd listens on a new port). Dropping it
/// cuts every connection.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FaultProxy {
    /// A proxy to `upstream` on a free local port, passing everything.
    pub fn start(upstream: SocketAddr) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                mode: Fault::None,
                armed: None,
                upstream,
                conns: Vec::new(),
                closed: false,
            }),
            changed: Condvar::new(),
            forwarded: [AtomicU64::new(0), AtomicU64::new(0)],
            accepted: AtomicU64::new(0),
        });
        let accepting = Arc::clone(&shared);
        thread::Builder::new()
            .name("fault-proxy-accept".into())
            .spawn(move || accept_loop(&listener, &accepting))?;
        Ok(FaultProxy { addr, shared })
    }

    /// A proxy in front of a TCP `endpoint` (hyperd's, usually).
    pub fn to_endpoint(endpoint: &Endpoint) -> io::Result<FaultProxy> {
        FaultProxy::start(socket_addr(endpoint)?)
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// [`Self::addr`] as a PostgreSQL-protocol endpoint.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::tcp("127.0.0.1", self.addr.port())
    }

    /// [`Self::addr`] as a gRPC URI.
    pub fn grpc_uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// Where new connections go from now on (open ones stay where they are).
    pub fn set_upstream(&self, upstream: SocketAddr) {
        self.shared.lock().upstream = upstream;
    }

    /// Switches `fault` on now (and forgets an armed one). `Cut` and
    /// `Reset` act on the connections the proxy has accepted so far (one
    /// whose client has only just connected may not be among them yet),
    /// then new ones pass through again; the others last until the next
    /// call.
    pub fn set(&self, fault: Fault) {
        self.shared.apply(fault);
    }

    /// Switches `fault` on once `bytes` more bytes have passed in `dir`
    /// (counted over all connections): exactly that many pass first.
    pub fn arm(&self, dir: Direction, bytes: u64, fault: Fault) {
        if bytes == 0 {
            return self.set(fault);
        }
        self.shared.lock().armed = Some(Armed {
            dir,
            left: bytes,
            fault,
        });
    }

    /// Whether an armed fault is still waiting for its bytes.
    pub fn armed(&self) -> bool {
        self.shared.lock().armed.is_some()
    }

    /// Bytes passed on in `dir` since the proxy started.
    pub fn forwarded(&self, dir: Direction) -> u64 {
        self.shared.forwarded[dir.index()].load(Ordering::Relaxed)
    }

    /// Connections accepted since the proxy started.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.closed = true;
            self.shared.apply_locked(&mut state, Fault::Cut);
        }
        // Wake the accept loop so it sees `closed` and ends.
        let _ = TcpStream::connect(self.addr);
    }
}

/// The socket address of a TCP endpoint.
pub fn socket_addr(endpoint: &Endpoint) -> io::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    match endpoint {
        Endpoint::Tcp { host, port } => (host.as_str(), *port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("{endpoint} resolves to no address"))),
        other => Err(io::Error::other(format!(
            "the fault proxy needs a TCP endpoint, not {other}"
        ))),
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        let upstream = {
            let state = shared.lock();
            if state.closed {
                return;
            }
            state.upstream
        };
        let Ok(client) = client else { continue };
        shared.accepted.fetch_add(1, Ordering::Relaxed);
        // An upstream that is down (hyperd restarting) closes the client's
        // connection at once, as a refused connect would.
        let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(5)) else {
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let conn = Arc::new(Conn {
            client,
            server,
            dead: AtomicBool::new(false),
        });
        {
            let mut state = shared.lock();
            state.conns.retain(|c| c.strong_count() > 0);
            state.conns.push(Arc::downgrade(&conn));
        }
        for dir in [Direction::ToServer, Direction::ToClient] {
            let pumped = Arc::clone(&conn);
            let shared = Arc::clone(shared);
            let spawned = thread::Builder::new()
                .name(format!("fault-proxy-{dir:?}"))
                .spawn(move || shared.pump(&pumped, dir));
            if spawned.is_err() {
                conn.cut();
            }
        }
    }
}
