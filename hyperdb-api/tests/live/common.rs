//! Shared fixtures for the live tests.
//!
//! One hyperd per transport serves the whole binary: starting a server per
//! test would dominate the run time. The statics are never dropped; hyperd
//! still exits when this test process does, because the kernel closes the
//! callback connection that `HyperProcess` holds.

#![allow(dead_code)]

use std::sync::OnceLock;

use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, Error, HyperProcess,
    HyperProcessOptions, Listen, Rows, TableDefinition,
};

/// The shared server with default options: a Unix socket in a private
/// directory, no password (what `HyperProcess::start` gives).
pub fn server() -> &'static HyperProcess {
    static SERVER: OnceLock<HyperProcess> = OnceLock::new();
    SERVER.get_or_init(|| start(HyperProcessOptions::default(), "default"))
}

/// The shared TCP server, which requires the password it generated.
pub fn tcp_server() -> &'static HyperProcess {
    static SERVER: OnceLock<HyperProcess> = OnceLock::new();
    SERVER.get_or_init(|| {
        start(
            HyperProcessOptions::default().with_listen(Listen::Tcp),
            "TCP",
        )
    })
}

/// Options to connect to each shared server (password included), the
/// default first: tests that loop over this cover both transports with one
/// body.
pub fn transports() -> Vec<ConnectOptions> {
    vec![server().connect_options(), tcp_server().connect_options()]
}

fn start(options: HyperProcessOptions, which: &str) -> HyperProcess {
    match HyperProcess::new(options) {
        Ok(server) => server,
        Err(e) => panic!("starting the shared {which} hyperd: {e}"),
    }
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    match tempfile::Builder::new().prefix("hyperdb-test-").tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("creating a temporary directory: {e}"),
    }
}

/// This process's resident set size, for tests that bound client memory.
pub fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// The environment variable naming the one test a child process of this
/// binary runs (see [`runs_here_alone`]).
const ALONE: &str = "HYPERDB_TEST_ALONE";

/// Whether the test `name` (its path in this binary) is to do its work in
/// this process; called first by every test that bounds RSS growth.
///
/// RSS is per process, and the other tests of this binary allocate
/// hundreds of MiB while they run beside it: measured among them, a
/// streaming test's growth was the large-value tests' (89-256 MiB against
/// a 64 MiB bound), and the suite passed only by how its tests happened
/// to be scheduled. So in the test run this runs `name` alone in a child
/// process of this binary, asserts that it passed there (forwarding its
/// output) and returns `false`; in that child it returns `true`.
pub fn runs_here_alone(name: &str) -> bool {
    if std::env::var(ALONE).as_deref() == Ok(name) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(ALONE, name)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{name} did not run:\n{stdout}");
    eprint!("{stderr}");
    false
}

/// The most this process's RSS grew by since `new`, over the samples taken:
/// what the bounded-memory tests assert on.
#[derive(Debug)]
pub struct RssGrowth {
    base: u64,
    peak: u64,
}

impl RssGrowth {
    pub fn new() -> RssGrowth {
        RssGrowth {
            base: rss(),
            peak: 0,
        }
    }

    pub fn sample(&mut self) {
        self.peak = self.peak.max(rss().saturating_sub(self.base));
    }

    /// The largest growth sampled, in bytes. Panics outside a test's own
    /// process: beside other tests the figure would be theirs too (see
    /// [`runs_here_alone`]).
    pub fn peak(&self) -> u64 {
        assert!(
            std::env::var_os(ALONE).is_some(),
            "RssGrowth measures the whole process: start the test with runs_here_alone"
        );
        self.peak
    }
}

/// Runs `cancel` on another thread 300 ms from now (time for the statement
/// to start); joining gives the instant it was sent.
pub fn cancel_soon(
    cancel: impl FnOnce() + Send + 'static,
) -> std::thread::JoinHandle<std::time::Instant> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let at = std::time::Instant::now();
        cancel();
        at
    })
}

/// A connection to database `file` in `dir` (created if missing).
pub fn connect(dir: &tempfile::TempDir, file: &str) -> Connection {
    Connection::connect(
        server().endpoint(),
        dir.path().join(file),
        CreateMode::CreateIfNotExists,
    )
    .unwrap()
}

/// [`connect`] for async tests.
pub async fn connect_async(dir: &tempfile::TempDir, file: &str) -> AsyncConnection {
    AsyncConnection::connect(
        server().endpoint(),
        dir.path().join(file),
        CreateMode::CreateIfNotExists,
    )
    .await
    .unwrap()
}

/// A connection to a new database `file` in `dir` that holds `table`.
pub fn db_with_table(dir: &tempfile::TempDir, file: &str, table: &TableDefinition) -> Connection {
    let mut c = connect(dir, file);
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    c
}

/// [`db_with_table`] for async tests.
pub async fn async_db_with_table(
    dir: &tempfile::TempDir,
    file: &str,
    table: &TableDefinition,
) -> AsyncConnection {
    let mut c = connect_async(dir, file).await;
    c.execute_command(&table.create_table_sql(false).unwrap())
        .await
        .unwrap();
    c
}

/// Runs `test` on a thread of its own and fails once it has run for
/// `limit`: a connection that hangs fails its test instead of the run.
/// A panic in `test` is passed on.
pub fn within<T: Send + 'static>(
    limit: std::time::Duration,
    test: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, outcome) = std::sync::mpsc::channel();
    let runner = std::thread::spawn(move || {
        let _ = done.send(test());
    });
    match outcome.recv_timeout(limit) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}: hung")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match runner.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the runner sends before it returns"),
        },
    }
}

/// An error's SQLSTATE, or `"none"`.
pub fn code(e: &Error) -> &str {
    e.code().map_or("none", |c| c.code())
}

/// Types and raw HyperBinary values of a result.
pub type Raw = (Vec<Option<String>>, Vec<Vec<Option<Vec<u8>>>>);

/// A whole result as its column types and every value's raw bytes (what
/// two read paths must agree on to the byte).
pub fn types_and_raw(rows: Rows<'_>) -> Raw {
    let types = rows
        .schema()
        .columns()
        .iter()
        .map(|c| c.sql_type().map(|t| t.to_string()))
        .collect();
    let values = rows
        .map(|r| {
            let r = r.unwrap();
            (0..r.len())
                .map(|i| r.raw(i).unwrap().map(<[u8]>::to_vec))
                .collect()
        })
        .collect();
    (types, values)
}
