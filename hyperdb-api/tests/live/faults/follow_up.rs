//! Every kind of error, each followed by every kind of request on the same
//! connection, sync and async: the follow-up must run and return exactly
//! what it would have without the error before it.
//!
//! Each error kind has its own connection and database (the kinds run at
//! once, on the shared hyperd); on it the error is provoked anew before
//! each follow-up, so every pair runs in turn.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use hyperdb_api::types::SqlType;
use hyperdb_api::{
    AsyncConnection, AsyncInserter, ConnectOptions, Connection, CreateMode, Error, Inserter,
    SqlState, TableDefinition,
};

use super::{table, Tally};
use crate::common::{self, cancel_soon, within};

/// Rows of [`table`] every follow-up expects to find.
const BASE: u32 = 100;
/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";
/// Runs for well under a second: the statement of a dropped future, which
/// the next request waits out.
const SHORT_QUERY: &str = "SELECT count(*) FROM generate_series(1, 20000000) g(i)";
/// The query timeout of the timeout case's connection (its follow-ups run
/// under it too, on a busy box).
const TIMEOUT: Duration = Duration::from_millis(2500);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// 42601 from the server.
    Syntax,
    /// 23502: NULL into a NOT NULL column, from the server.
    Constraint,
    /// A text value read as an integer, with the rest of the result unread.
    Type,
    /// A NULL read into a non-`Option`, with the rest unread.
    Null,
    /// 22P02 from the server in the middle of a COPY.
    MidCopy,
    /// 57014: cancelled from another thread.
    Cancel,
    /// The connection's query timeout.
    Timeout,
    /// An inserter dropped with frames sent and no `execute()`.
    DroppedInserter,
    /// A result dropped after a thousand of its two million rows.
    DroppedStream,
    /// A transaction with an insert, dropped uncommitted.
    DroppedTransaction,
    /// A future dropped while its statement runs (async only).
    DroppedFuture,
}

const FAILURES: [Failure; 11] = [
    Failure::Syntax,
    Failure::Constraint,
    Failure::Type,
    Failure::Null,
    Failure::MidCopy,
    Failure::Cancel,
    Failure::Timeout,
    Failure::DroppedInserter,
    Failure::DroppedStream,
    Failure::DroppedTransaction,
    Failure::DroppedFuture,
];

#[derive(Clone, Copy, Debug)]
enum FollowUp {
    Query,
    Command,
    Insert,
    ArrowRead,
    Transaction,
    Catalog,
}

const FOLLOW_UPS: [FollowUp; 6] = [
    FollowUp::Query,
    FollowUp::Command,
    FollowUp::Insert,
    FollowUp::ArrowRead,
    FollowUp::Transaction,
    FollowUp::Catalog,
];

/// Where the follow-ups write, and empty again after each.
fn scratch() -> TableDefinition {
    TableDefinition::new("scratch")
        .with_not_null_column("id", SqlType::Int)
        .with_column("s", SqlType::Text)
}

/// JSON that only the server validates.
fn docs() -> TableDefinition {
    TableDefinition::new("docs")
        .with_not_null_column("id", SqlType::Int)
        .with_column("doc", SqlType::Json)
}

/// A database holding [`table`] with ids 1..=BASE, and empty
/// [`scratch`] and [`docs`] tables.
fn database(dir: &tempfile::TempDir) -> PathBuf {
    let mut c = common::connect(dir, "follow.hyper");
    for t in [table(), scratch(), docs()] {
        c.execute_command(&t.create_table_sql(false).unwrap())
            .unwrap();
    }
    let sql = format!("INSERT INTO faults {}", super::select(BASE));
    assert_eq!(c.execute_command(&sql).unwrap(), u64::from(BASE));
    c.close().unwrap();
    dir.path().join("follow.hyper")
}

fn options(path: &PathBuf, failure: Failure) -> ConnectOptions {
    let options = ConnectOptions::new(common::server().endpoint().clone())
        .with_database(path, CreateMode::DoNotCreate);
    match failure {
        Failure::Timeout => options.with_query_timeout(Some(TIMEOUT)),
        _ => options,
    }
}

/// Provokes `$failure` on `$c` and checks it is the error expected; for
/// both APIs (`;` or `; .await`). Not `DroppedFuture`, which only async
/// code has.
macro_rules! provoke {
    ($c:ident, $failure:ident, $Inserter:ident; $($aw:tt)*) => {{
        match $failure {
            Failure::Syntax => {
                let e = $c.execute_command("SELECT 1 FROM WHERE") $($aw)* .unwrap_err();
                assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR), "{e:?}");
            }
            Failure::Constraint => {
                let e = $c
                    .execute_command("INSERT INTO faults VALUES (NULL, 'x')") $($aw)*
                    .unwrap_err();
                assert_eq!(e.sqlstate(), "23502", "{e:?}");
            }
            Failure::Type => {
                let mut rows = $c.execute_query("SELECT s FROM faults") $($aw)* .unwrap();
                let row = rows.next() $($aw)* .unwrap().unwrap();
                let e = row.try_get::<i32>(0).unwrap_err();
                assert!(matches!(e, Error::TypeMismatch { .. }), "{e:?}");
            }
            Failure::Null => {
                let mut rows = $c.execute_query("SELECT NULL::INT FROM faults") $($aw)* .unwrap();
                let row = rows.next() $($aw)* .unwrap().unwrap();
                let e = row.try_get::<i32>(0).unwrap_err();
                assert!(matches!(e, Error::UnexpectedNull { .. }), "{e:?}");
            }
            Failure::MidCopy => {
                let mut ins = $Inserter::new(&mut $c, &docs()) $($aw)* .unwrap();
                for i in 0..50_000i32 {
                    let doc = if i == 40_000 { "{" } else { "{\"a\":1}" };
                    ins.add_row(&[&i, &doc]) $($aw)* .unwrap();
                }
                let e = ins.execute() $($aw)* .unwrap_err();
                assert_eq!(e.sqlstate(), "22P02", "{e:?}");
            }
            Failure::Cancel => {
                let handle = $c.cancel_handle();
                let canceller = cancel_soon(move || handle.cancel().unwrap());
                let e = $c.query_scalar::<i64>(LONG_QUERY) $($aw)* .unwrap_err();
                canceller.join().unwrap();
                assert!(e.is_cancelled() && !e.is_timeout(), "{e:?}");
            }
            Failure::Timeout => {
                let e = $c.query_scalar::<i64>(LONG_QUERY) $($aw)* .unwrap_err();
                assert!(e.is_timeout(), "{e:?}");
            }
            Failure::DroppedInserter => {
                let mut ins = $Inserter::new(&mut $c, &table()) $($aw)*
                    .unwrap()
                    .with_flush_threshold(4096);
                for i in 0..100_000i32 {
                    ins.add_row(&[&(i + 1000), &"dropped"]) $($aw)* .unwrap();
                }
            }
            Failure::DroppedStream => {
                let sql = "SELECT i FROM generate_series(1, 2000000) g(i)";
                let mut rows = $c.execute_query_params(sql, &[]) $($aw)* .unwrap();
                for _ in 0..1000 {
                    rows.next() $($aw)* .unwrap().unwrap();
                }
            }
            Failure::DroppedTransaction => {
                let mut tx = $c.transaction() $($aw)* .unwrap();
                let sql = "INSERT INTO faults VALUES (100000, 'rolled back')";
                assert_eq!(tx.execute_command(sql) $($aw)* .unwrap(), 1);
            }
            Failure::DroppedFuture => unreachable!("async only: see async_pairs"),
        }
    }};
}

/// Runs `$follow` on `$c` and checks its result.
macro_rules! follow_up {
    ($c:ident, $follow:ident, $Inserter:ident; $($aw:tt)*) => {{
        let mut tally = Tally::default();
        match $follow {
            FollowUp::Query => {
                let sql = "SELECT id FROM faults";
                let mut rows = $c.execute_query_params(sql, &[]) $($aw)* .unwrap();
                while let Some(row) = rows.next() $($aw)* {
                    tally.add(row.unwrap().try_get::<i32>(0).unwrap());
                }
                assert_eq!(tally, Tally::of(BASE));
            }
            FollowUp::Command => {
                let sql = "INSERT INTO scratch SELECT * FROM faults WHERE id <= 10";
                assert_eq!($c.execute_command(sql) $($aw)* .unwrap(), 10);
                assert_eq!($c.execute_command("DELETE FROM scratch") $($aw)* .unwrap(), 10);
            }
            FollowUp::Insert => {
                let mut ins = $Inserter::new(&mut $c, &scratch()) $($aw)* .unwrap();
                for i in 1..=10i32 {
                    ins.add_row(&[&i, &"new"]) $($aw)* .unwrap();
                }
                assert_eq!(ins.execute() $($aw)* .unwrap(), 10);
                assert_eq!($c.execute_command("DELETE FROM scratch") $($aw)* .unwrap(), 10);
            }
            FollowUp::ArrowRead => {
                let mut batches = $c.query_arrow("SELECT id, s FROM faults") $($aw)* .unwrap();
                while let Some(batch) = batches.next() $($aw)* {
                    tally.add_batch(&batch.unwrap());
                }
                assert_eq!(tally, Tally::of(BASE));
            }
            FollowUp::Transaction => {
                let mut tx = $c.transaction() $($aw)* .unwrap();
                let sql = "INSERT INTO scratch SELECT * FROM faults WHERE id <= 5";
                assert_eq!(tx.execute_command(sql) $($aw)* .unwrap(), 5);
                let seen = tx.query_scalar::<i64>("SELECT count(*) FROM scratch") $($aw)*;
                assert_eq!(seen.unwrap(), 5);
                tx.commit() $($aw)* .unwrap();
                assert_eq!($c.execute_command("DELETE FROM scratch") $($aw)* .unwrap(), 5);
            }
            FollowUp::Catalog => {
                let mut catalog = $c.catalog();
                let def = catalog.get_table_definition("faults") $($aw)* .unwrap();
                assert_eq!(def.columns(), table().columns());
                assert!(catalog.has_table("scratch") $($aw)* .unwrap());
                assert!(!catalog.has_table("nope") $($aw)* .unwrap());
            }
        }
    }};
}

fn sync_pairs(failure: Failure) {
    let dir = common::temp_dir();
    let path = database(&dir);
    let mut c = Connection::connect_with(&options(&path, failure)).unwrap();
    for follow in FOLLOW_UPS {
        eprintln!("sync: {failure:?}, then {follow:?}");
        provoke!(c, failure, Inserter;);
        follow_up!(c, follow, Inserter;);
    }
}

async fn async_pairs(failure: Failure) {
    let dir = common::temp_dir();
    let path = database(&dir);
    let mut c = AsyncConnection::connect_with(&options(&path, failure))
        .await
        .unwrap();
    for follow in FOLLOW_UPS {
        eprintln!("async: {failure:?}, then {follow:?}");
        if failure == Failure::DroppedFuture {
            // Polled once (the query goes out), then dropped: no clock, so a
            // busy machine cannot let it finish first.
            let pending = {
                let mut running = std::pin::pin!(c.query_scalar::<i64>(SHORT_QUERY));
                std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(running.as_mut().poll(cx).is_pending())
                })
                .await
            };
            assert!(pending, "the statement ended in its first poll");
        } else {
            provoke!(c, failure, AsyncInserter; .await);
        }
        follow_up!(c, follow, AsyncInserter; .await);
    }
}

/// Every failure kind at once, each on a thread named after it (which
/// the panic message shows); fails with every kind that failed.
fn run(asynchronous: bool) {
    within(Duration::from_secs(300), move || {
        let runs: Vec<_> = FAILURES
            .into_iter()
            .filter(|&f| asynchronous || f != Failure::DroppedFuture)
            .map(|failure| {
                let name = format!(
                    "{}-{failure:?}",
                    if asynchronous { "async" } else { "sync" }
                );
                let run = std::thread::Builder::new().name(name).spawn(move || {
                    if asynchronous {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .unwrap()
                            .block_on(async_pairs(failure));
                    } else {
                        sync_pairs(failure);
                    }
                });
                (failure, run.unwrap())
            })
            .collect();
        let failed: Vec<_> = runs
            .into_iter()
            .filter_map(|(failure, run)| run.join().is_err().then_some(failure))
            .collect();
        assert!(failed.is_empty(), "follow-ups failed after {failed:?}");
    });
}

#[test]
fn every_error_then_every_request() {
    run(false);
}

#[test]
fn every_error_then_every_request_async() {
    run(true);
}
