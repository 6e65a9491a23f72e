//! hyperd killed with SIGKILL while a connection is idle, in the middle of
//! a COPY and in the middle of a result stream, sync and async: the client
//! gets a closed error (never a short result that looks complete), and a
//! hyperd started anew on the same file opens it and finds exactly the
//! batches that were acknowledged before the kill.
//!
//! Acknowledged means committed *and released*: hyperd 0.0.26963 writes a
//! database's commits to its file only when no session has it attached
//! any more (measured, DEVELOPMENT.md), so a commit made on a connection
//! that is still open when hyperd dies is lost. Each acknowledged batch is
//! therefore inserted on a connection of its own that is closed after it;
//! one more batch is committed on the connection the kill interrupts, and
//! must come back whole or not at all (it comes back not at all).
//!
//! Each case has its own hyperd (on TCP, said explicitly): the kill takes
//! down every session on it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hyperdb_api::{
    AsyncConnection, AsyncInserter, ConnectOptions, Connection, CreateMode, Error, HyperProcess,
    HyperProcessOptions, Inserter, Listen,
};

use super::{table, Tally};
use crate::common::{temp_dir, within};

/// Rows per acknowledged insert.
const BATCH: u32 = 10_000;
/// Inserts acknowledged before the kill.
const ACKED: u32 = 3;
/// Rows of the insert the kill interrupts: far more than the socket
/// buffers hold, so it is still sending when hyperd dies.
const INTERRUPTED: u32 = 5_000_000;
/// A result far larger than the socket buffers hold.
const STREAM: &str = "SELECT i FROM generate_series(1, 100000000) g(i)";

#[derive(Clone, Copy, Debug)]
enum Moment {
    Idle,
    MidCopy,
    MidStream,
}

fn start() -> HyperProcess {
    HyperProcess::new(HyperProcessOptions::default().with_listen(Listen::Tcp))
        .unwrap_or_else(|e| panic!("starting hyperd: {e}"))
}

/// SIGKILL, and wait until the process is gone.
fn kill(server: &HyperProcess) {
    let pid = server.pid();
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -KILL {pid}: {status}");
    crate::process::assert_gone(pid, Duration::from_secs(10));
}

fn options(server: &HyperProcess, path: &Path, mode: CreateMode) -> ConnectOptions {
    server.connect_options().with_database(path, mode)
}

/// Ids `first..first + n`.
fn ids(first: u32, n: u32) -> impl Iterator<Item = i32> {
    (first..first + n).map(|i| i as i32)
}

/// The case, for both APIs: one batch committed on `$c` (not released),
/// then the kill at `moment`; returns the error the connection reported.
macro_rules! kill_case {
    ($c:ident, $server:ident, $moment:ident, $Inserter:ident; $($aw:tt)*) => {{
        let mut ins = $Inserter::new(&mut $c, &table()) $($aw)* .unwrap();
        for i in ids(ACKED * BATCH + 1, BATCH) {
            ins.add_row(&[&i, &"committed"]) $($aw)* .unwrap();
        }
        assert_eq!(ins.execute() $($aw)* .unwrap(), u64::from(BATCH));
        let e: Error = match $moment {
            Moment::Idle => {
                kill(&$server);
                $c.query_scalar::<i32>("SELECT 1") $($aw)* .unwrap_err()
            }
            Moment::MidCopy => {
                let mut ins = $Inserter::new(&mut $c, &table()) $($aw)* .unwrap();
                let mut failed = None;
                for i in ids((ACKED + 1) * BATCH + 1, INTERRUPTED) {
                    if i == ((ACKED + 1) * BATCH + 200_000) as i32 {
                        // Several frames are out by now.
                        kill(&$server);
                    }
                    if let Err(e) = ins.add_row(&[&i, &"interrupted"]) $($aw)* {
                        failed = Some(e);
                        break;
                    }
                }
                match failed {
                    Some(e) => e,
                    None => ins.execute() $($aw)* .unwrap_err(),
                }
            }
            Moment::MidStream => {
                let mut rows = $c.execute_query_params(STREAM, &[]) $($aw)* .unwrap();
                let mut read = 0u64;
                loop {
                    match rows.next() $($aw)* {
                        Some(Ok(_)) => read += 1,
                        Some(Err(e)) => break e,
                        None => panic!("the stream ended normally after {read} rows"),
                    }
                    if read == 1000 {
                        kill(&$server);
                    }
                }
            }
        };
        e
    }};
}

/// `ACKED` batches, each on a connection of its own that is closed after
/// it (released, so on disk), the first creating the table.
fn acknowledged(server: &HyperProcess, path: &Path) {
    for b in 0..ACKED {
        let mode = if b == 0 {
            CreateMode::Create
        } else {
            CreateMode::DoNotCreate
        };
        let mut c = Connection::connect_with(&options(server, path, mode)).unwrap();
        if b == 0 {
            c.execute_command(&table().create_table_sql(false).unwrap())
                .unwrap();
        }
        let mut ins = Inserter::new(&mut c, &table()).unwrap();
        for i in ids(b * BATCH + 1, BATCH) {
            ins.add_row(&[&i, &"acked"]).unwrap();
        }
        assert_eq!(ins.execute().unwrap(), u64::from(BATCH));
        c.close().unwrap();
    }
}

fn sync_case(server: &HyperProcess, path: &Path, moment: Moment) -> Error {
    let mut c = Connection::connect_with(&options(server, path, CreateMode::DoNotCreate)).unwrap();
    let e = kill_case!(c, server, moment, Inserter;);
    // Broken for good, and it says so at once.
    let t = Instant::now();
    assert!(c.query_scalar::<i32>("SELECT 1").unwrap_err().is_closed());
    assert!(t.elapsed() < Duration::from_secs(2));
    e
}

async fn async_case(server: &HyperProcess, path: &Path, moment: Moment) -> Error {
    let mut c = AsyncConnection::connect_with(&options(server, path, CreateMode::DoNotCreate))
        .await
        .unwrap();
    let e = kill_case!(c, server, moment, AsyncInserter; .await);
    let t = Instant::now();
    assert!(c
        .query_scalar::<i32>("SELECT 1")
        .await
        .unwrap_err()
        .is_closed());
    assert!(t.elapsed() < Duration::from_secs(2));
    e
}

/// Runs one case, then starts hyperd again on the same file and checks
/// what it holds.
fn case(moment: Moment, asynchronous: bool) {
    within(Duration::from_secs(300), move || {
        let dir = temp_dir();
        let path = dir.path().join("killed.hyper");
        let server = start();
        acknowledged(&server, &path);
        let e = if asynchronous {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async_case(&server, &path, moment))
        } else {
            sync_case(&server, &path, moment)
        };
        assert!(e.is_closed(), "{moment:?}: a closed error, got {e:?}");
        assert_eq!(e.sqlstate(), "08006", "{e:?}");
        drop(server);

        let server = start();
        let mut c = Connection::connect_with(&options(&server, &path, CreateMode::DoNotCreate))
            .unwrap_or_else(|e| panic!("{moment:?}: the file does not open after the kill: {e}"));
        let count = |c: &mut Connection, s: &str| {
            let sql = format!("SELECT count(*) FROM faults WHERE s = '{s}'");
            c.query_scalar::<i64>(&sql).unwrap()
        };
        let sum = c
            .query_scalar::<i64>(
                "SELECT coalesce(sum(id), 0)::BIGINT FROM faults WHERE s = 'acked'",
            )
            .unwrap();
        let distinct = c
            .query_scalar::<i64>("SELECT count(DISTINCT id) FROM faults")
            .unwrap();
        let acked = Tally {
            rows: count(&mut c, "acked") as u64,
            sum,
        };
        assert_eq!(
            acked,
            Tally::of(ACKED * BATCH),
            "{moment:?}: exactly the acknowledged rows"
        );
        let committed = count(&mut c, "committed");
        assert!(
            committed == 0 || committed == i64::from(BATCH),
            "{moment:?}: the unreleased commit came back in part: {committed} rows"
        );
        assert_eq!(count(&mut c, "interrupted"), 0, "{moment:?}");
        let total = c
            .query_scalar::<i64>("SELECT count(*) FROM faults")
            .unwrap();
        assert_eq!(total, distinct, "{moment:?}: no row twice");
        eprintln!("{moment:?}: the unreleased commit's {BATCH} rows: {committed} came back");
        c.close().unwrap();
    });
}

#[test]
fn killed_while_idle() {
    case(Moment::Idle, false);
}

#[test]
fn killed_while_idle_async() {
    case(Moment::Idle, true);
}

#[test]
fn killed_mid_copy() {
    case(Moment::MidCopy, false);
}

#[test]
fn killed_mid_copy_async() {
    case(Moment::MidCopy, true);
}

#[test]
fn killed_mid_stream() {
    case(Moment::MidStream, false);
}

#[test]
fn killed_mid_stream_async() {
    case(Moment::MidStream, true);
}
