//! The fault matrix: every request kind, sync and async, through the fault
//! proxy under every fault, against the real hyperd.
//!
//! * delay and 1-byte splits (the whole session, from the handshake on):
//!   the request succeeds with exactly the rows it should have;
//! * a stall of either direction: a timeout error
//!   ([`hyperdb_api::Error::is_timeout`]) within the query timeout plus
//!   the cancel's grace; a PostgreSQL-protocol connection is then broken
//!   and its next call fails at once with a closed error, a gRPC one runs
//!   its next query once the link flows again;
//! * a cut (FIN) or reset (RST): a closed error; the same for what
//!   follows.
//!
//! The fault lands inside the request: `arm_at` picks the byte. One test
//! per request kind runs its twelve cases (six faults, sync and async) at
//! once, each on its own proxy, so the stalls' waits overlap. Each prints
//! its row of the matrix (`--nocapture`); DEVELOPMENT.md has the table.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hyperdb_api::arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use hyperdb_api::{
    ArrowInserter, AsyncArrowInserter, AsyncConnection, AsyncInserter, ConnectOptions, Connection,
    CreateMode, Error, Inserter,
};

use super::{select, table, Tally};
use crate::common::{self, within};
use crate::fault_proxy::{Direction, Fault, FaultProxy};

/// Rows of a request a fault lands inside: its bytes are many times
/// [`MID`] in either format.
const ROWS: u32 = 50_000;
/// Rows under delays and 1-byte splits, which are slow by design.
const FEW_ROWS: u32 = 2_000;
/// Where a fault lands inside a long request or reply.
const MID: u64 = 16 << 10;
/// The query timeout of the stalled requests.
const STALL_TIMEOUT: Duration = Duration::from_millis(1000);
/// The query timeout of every other case: only a hang reaches it.
const SAFETY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long after its query timeout a stalled PostgreSQL-protocol request
/// may fail: the cancel request waits up to 2 s for hyperd to take it
/// (`CANCEL_ACK_WAIT`, through the stalled proxy too), the driver then 5 s
/// for the server's answer, and the box is busy. gRPC does not wait.
const STALL_MARGIN: Duration = Duration::from_secs(20);
/// A cut or reset is seen at the next read or write.
const LOST_WITHIN: Duration = Duration::from_secs(15);
/// A broken connection's next call fails without touching the network.
const FAILS_FAST: Duration = Duration::from_secs(2);

const FAULTS: [Fault; 6] = [
    Fault::Delay(Duration::from_millis(2)),
    Fault::Split,
    Fault::Stall(Direction::ToServer),
    Fault::Stall(Direction::ToClient),
    Fault::Cut,
    Fault::Reset,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `execute_query_params`: rows as `DataRow`s.
    Query,
    /// `execute_command` of an `INSERT ... SELECT`.
    Command,
    /// `Inserter` (COPY in).
    Inserter,
    /// `ArrowInserter` (COPY in, Arrow).
    ArrowInserter,
    /// `query_arrow` (COPY out, Arrow).
    QueryArrow,
    /// `GrpcConnection::query_arrow`.
    #[cfg(feature = "grpc")]
    Grpc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Sync,
    Async,
}

impl Kind {
    fn copy_in(self) -> bool {
        matches!(self, Kind::Inserter | Kind::ArrowInserter)
    }

    fn writes(self) -> bool {
        self.copy_in() || self == Kind::Command
    }

    /// Where `fault` lands: after how many bytes in which direction,
    /// counted from when it is armed (before the request; for the
    /// inserters once `new` returned, the COPY statement queued to go out
    /// with the first frame). A stall lands after the first
    /// byte, so that it is in place long before the query timeout however
    /// slow the box; a cut or reset (under a long timeout) lands in the
    /// middle of a long request or reply.
    fn arm_at(self, fault: Fault) -> (Direction, u64) {
        match fault {
            Fault::Stall(dir) => (dir, 1),
            _ if self.copy_in() => (Direction::ToServer, MID),
            _ if self == Kind::Command => (Direction::ToClient, 1),
            _ => (Direction::ToClient, MID),
        }
    }
}

/// One case's outcome, for the printed matrix.
struct Outcome {
    api: Api,
    fault: Fault,
    text: String,
}

/// The database a writing case uses, created directly (not through the
/// proxy) with [`table`] in it.
fn database(dir: &tempfile::TempDir) -> PathBuf {
    common::db_with_table(dir, "faults.hyper", &table())
        .close()
        .unwrap();
    dir.path().join("faults.hyper")
}

fn options(proxy: &FaultProxy, db: Option<&PathBuf>, fault: Fault) -> ConnectOptions {
    let timeout = match fault {
        Fault::Stall(_) => STALL_TIMEOUT,
        _ => SAFETY_TIMEOUT,
    };
    let options = ConnectOptions::new(proxy.endpoint())
        .with_password(common::tcp_server().password().unwrap())
        .with_query_timeout(Some(timeout));
    match db {
        Some(db) => options.with_database(db, CreateMode::DoNotCreate),
        None => options,
    }
}

/// Rows 1..=rows of [`table`], ten thousand per batch.
fn batches(rows: u32) -> Vec<RecordBatch> {
    let schema = std::sync::Arc::new(hyperdb_api::arrow::arrow_schema(&table()).unwrap());
    (1..=rows)
        .collect::<Vec<_>>()
        .chunks(10_000)
        .map(|ids| {
            let id: ArrayRef =
                std::sync::Arc::new(Int32Array::from_iter_values(ids.iter().map(|&i| i as i32)));
            let s: ArrayRef = std::sync::Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("v{i}")),
            ));
            RecordBatch::try_new(schema.clone(), vec![id, s]).unwrap()
        })
        .collect()
}

/// `kind`'s request on `$c` over the PostgreSQL protocol, written once
/// for both APIs (`;` for sync, `; .await` for async); `$arm` is called
/// where the fault belongs. Writing kinds read back what was stored.
macro_rules! pg_request {
    ($c:ident, $kind:ident, $rows:ident, $arm:ident, $Inserter:ident, $ArrowInserter:ident; $($aw:tt)*) => {{
        let mut tally = Tally::default();
        match $kind {
            Kind::Query => {
                $arm();
                let sql = select($rows);
                let mut rows = $c.execute_query_params(&sql, &[]) $($aw)* ?;
                while let Some(row) = rows.next() $($aw)* {
                    tally.add(row?.try_get::<i32>(0)?);
                }
                return Ok(tally);
            }
            Kind::QueryArrow => {
                $arm();
                let mut batches = $c.query_arrow(&select($rows)) $($aw)* ?;
                while let Some(batch) = batches.next() $($aw)* {
                    tally.add_batch(&batch?);
                }
                return Ok(tally);
            }
            Kind::Command => {
                $arm();
                let sql = format!("INSERT INTO faults {}", select($rows));
                assert_eq!($c.execute_command(&sql) $($aw)* ?, u64::from($rows));
            }
            Kind::Inserter => {
                let mut ins = $Inserter::new(&mut *$c, &table()) $($aw)* ?;
                $arm();
                for i in 1..=$rows as i32 {
                    let s = format!("v{i}");
                    ins.add_row(&[&i, &s]) $($aw)* ?;
                }
                assert_eq!(ins.execute() $($aw)* ?, u64::from($rows));
            }
            Kind::ArrowInserter => {
                let batches = batches($rows);
                let mut ins = $ArrowInserter::new(&mut *$c, &table()) $($aw)* ?;
                $arm();
                for batch in batches {
                    ins.insert_batch(&batch) $($aw)* ?;
                }
                assert_eq!(ins.finish() $($aw)* ?, u64::from($rows));
            }
            #[cfg(feature = "grpc")]
            Kind::Grpc => unreachable!("gRPC has its own runner"),
        }
        tally.rows = $c.query_scalar::<i64>("SELECT count(*) FROM faults") $($aw)* ? as u64;
        tally.sum = $c
            .query_scalar::<i64>("SELECT coalesce(sum(id), 0)::BIGINT FROM faults") $($aw)* ?;
        Ok(tally)
    }};
}

fn sync_request(c: &mut Connection, kind: Kind, rows: u32, arm: &dyn Fn()) -> Result<Tally, Error> {
    pg_request!(c, kind, rows, arm, Inserter, ArrowInserter;)
}

async fn async_request(
    c: &mut AsyncConnection,
    kind: Kind,
    rows: u32,
    arm: &dyn Fn(),
) -> Result<Tally, Error> {
    pg_request!(c, kind, rows, arm, AsyncInserter, AsyncArrowInserter; .await)
}

/// A current-thread runtime for one async case.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// What the connection does after the fault: `usable` runs a query,
/// `broken` fails fast with a closed error.
fn after_fault(next: Result<i32, Error>, took: Duration) -> &'static str {
    match next {
        Ok(1) => "usable",
        Ok(other) => panic!("SELECT 1 gave {other}"),
        Err(e) => {
            assert!(e.is_closed(), "a broken connection says so: {e:?}");
            let message = e.to_string();
            assert!(
                ["unusable", "closed", "broken"]
                    .iter()
                    .any(|word| message.contains(word)),
                "a clear message: {e}"
            );
            assert!(took < FAILS_FAST, "the next call took {took:?}");
            "broken"
        }
    }
}

/// Checks a failed request's error against its fault; returns how it
/// failed for the matrix.
fn check_failure(fault: Fault, e: &Error, took: Duration, limit: Duration) -> String {
    match fault {
        Fault::Stall(_) => {
            assert!(e.is_timeout(), "{fault:?}: a timeout, got {e:?}");
            assert!(took >= STALL_TIMEOUT, "{fault:?}: before the timeout");
            assert!(took < limit, "{fault:?}: took {took:?}");
            format!("timeout ({:.1} s)", took.as_secs_f64())
        }
        _ => {
            assert!(e.is_closed(), "{fault:?}: connection lost, got {e:?}");
            assert_eq!(e.sqlstate(), "08006", "{e:?}");
            assert!(took < LOST_WITHIN, "{fault:?}: took {took:?}");
            "closed".to_owned()
        }
    }
}

/// One PostgreSQL-protocol case.
fn pg_case(kind: Kind, api: Api, fault: Fault) -> String {
    let dir = common::temp_dir();
    let db = kind.writes().then(|| database(&dir));
    let proxy = FaultProxy::to_endpoint(common::tcp_server().endpoint()).unwrap();
    let options = options(&proxy, db.as_ref(), fault);
    let slow = matches!(fault, Fault::Delay(_) | Fault::Split);
    let rows = if slow { FEW_ROWS } else { ROWS };
    let (dir_, bytes) = kind.arm_at(fault);
    let arm = || {
        if !slow {
            proxy.arm(dir_, bytes, fault);
        }
    };
    if slow {
        proxy.set(fault);
    }
    let start = Instant::now();
    let (result, next, next_took) = match api {
        Api::Sync => {
            let mut c = Connection::connect_with(&options).unwrap();
            let result = sync_request(&mut c, kind, rows, &arm);
            let t = Instant::now();
            let next = c.query_scalar::<i32>("SELECT 1");
            (result, next, t.elapsed())
        }
        Api::Async => runtime().block_on(async {
            let mut c = AsyncConnection::connect_with(&options).await.unwrap();
            let result = async_request(&mut c, kind, rows, &arm).await;
            let t = Instant::now();
            let next = c.query_scalar::<i32>("SELECT 1").await;
            (result, next, t.elapsed())
        }),
    };
    let took = start.elapsed();
    let text = match result {
        Ok(tally) => {
            assert!(slow, "{fault:?} did not fail the request");
            assert_eq!(tally, Tally::of(rows), "{fault:?}");
            assert_eq!(after_fault(next, next_took), "usable");
            "ok".to_owned()
        }
        Err(e) => {
            assert!(!slow, "{fault:?} failed the request: {e:?}");
            assert!(!proxy.armed(), "{fault:?}: failed before the fault: {e:?}");
            let how = check_failure(fault, &e, took, STALL_TIMEOUT + STALL_MARGIN);
            let state = after_fault(next, next_took);
            assert_eq!(state, "broken", "{fault:?}: after {e:?}");
            format!("{how}, {state}")
        }
    };
    // hyperd and the proxy are unharmed, and a failed write stored nothing.
    proxy.set(Fault::None);
    let mut c = Connection::connect_with(&options).unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 2").unwrap(), 2);
    if kind.copy_in() && !slow {
        let stored = c
            .query_scalar::<i64>("SELECT count(*) FROM faults")
            .unwrap();
        assert_eq!(stored, 0, "{fault:?}: a failed insert stored rows");
    }
    text
}

/// One gRPC case: the same faults, on `GrpcConnection` or
/// `AsyncGrpcConnection`; the connection is expected to run its next query
/// once the link flows again (tonic reconnects a lost HTTP/2 connection).
#[cfg(feature = "grpc")]
fn grpc_case(api: Api, fault: Fault) -> String {
    use hyperdb_api::{AsyncGrpcConnection, GrpcConfig, GrpcConnectOptions, GrpcConnection};

    let upstream = crate::grpc::server()
        .grpc_endpoint()
        .unwrap()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let proxy = FaultProxy::start(upstream).unwrap();
    let slow = matches!(fault, Fault::Delay(_) | Fault::Split);
    let timeout = match fault {
        Fault::Stall(_) => STALL_TIMEOUT,
        _ => SAFETY_TIMEOUT,
    };
    let options = GrpcConnectOptions::new(
        GrpcConfig::new(&proxy.grpc_uri())
            .unwrap()
            .with_query_timeout(Some(timeout)),
    );
    let rows = if slow { FEW_ROWS } else { ROWS };
    let (dir_, bytes) = Kind::Grpc.arm_at(fault);
    if slow {
        proxy.set(fault);
    } else {
        proxy.arm(dir_, bytes, fault);
    }
    let sql = select(rows);
    let start = Instant::now();
    // The request, then (fault lifted) the next one on the same connection.
    let (result, next) = match api {
        Api::Sync => {
            let c = GrpcConnection::connect_with(&options).unwrap();
            let read = |sql: &str| -> Result<Tally, Error> {
                let mut tally = Tally::default();
                for batch in c.query_arrow(sql)? {
                    tally.add_batch(&batch?);
                }
                Ok(tally)
            };
            let result = read(&sql);
            let lost = (start.elapsed(), !proxy.armed());
            proxy.set(Fault::None);
            (result.map_err(|e| (e, lost)), read(&select(10)))
        }
        Api::Async => runtime().block_on(async {
            let c = AsyncGrpcConnection::connect_with(&options).await.unwrap();
            let read = |sql: String| {
                let c = &c;
                async move {
                    let mut tally = Tally::default();
                    let mut batches = c.query_arrow(&sql).await?;
                    while let Some(batch) = batches.next().await {
                        tally.add_batch(&batch?);
                    }
                    Ok::<_, Error>(tally)
                }
            };
            let result = read(sql.clone()).await;
            let lost = (start.elapsed(), !proxy.armed());
            proxy.set(Fault::None);
            (result.map_err(|e| (e, lost)), read(select(10)).await)
        }),
    };
    let next = next.unwrap_or_else(|e| panic!("{fault:?}: the next query failed: {e:?}"));
    assert_eq!(next, Tally::of(10), "{fault:?}: the next query's rows");
    match result {
        Ok(tally) => {
            assert!(slow, "{fault:?} did not fail the request");
            assert_eq!(tally, Tally::of(rows), "{fault:?}");
            "ok".to_owned()
        }
        Err((e, (took, fired))) => {
            assert!(!slow, "{fault:?} failed the request: {e:?}");
            assert!(fired, "{fault:?}: failed before the fault: {e:?}");
            let limit = STALL_TIMEOUT + LOST_WITHIN;
            format!("{}, usable", check_failure(fault, &e, took, limit))
        }
    }
}

/// Runs `kind`'s twelve cases at once; prints its rows of the matrix and
/// fails with every case that failed.
fn matrix_rows(kind: Kind) {
    let outcomes = within(Duration::from_secs(300), move || {
        let cases: Vec<_> = [Api::Sync, Api::Async]
            .into_iter()
            .flat_map(|api| FAULTS.map(|fault| (api, fault)))
            .map(|(api, fault)| {
                let case = std::thread::spawn(move || match kind {
                    #[cfg(feature = "grpc")]
                    Kind::Grpc => grpc_case(api, fault),
                    _ => pg_case(kind, api, fault),
                });
                (api, fault, case)
            })
            .collect();
        cases
            .into_iter()
            .map(|(api, fault, case)| Outcome {
                api,
                fault,
                text: case.join().unwrap_or_else(|panic| {
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    format!("FAILED: {why}")
                }),
            })
            .collect::<Vec<_>>()
    });
    for api in [Api::Sync, Api::Async] {
        let cells: Vec<_> = outcomes
            .iter()
            .filter(|o| o.api == api)
            .map(|o| o.text.as_str())
            .collect();
        eprintln!("| {kind:?} | {api:?} | {} |", cells.join(" | "));
    }
    let failed: Vec<_> = outcomes
        .iter()
        .filter(|o| o.text.starts_with("FAILED"))
        .map(|o| format!("{kind:?} {:?} {:?}: {}", o.api, o.fault, o.text))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn query_under_faults() {
    matrix_rows(Kind::Query);
}

#[test]
fn command_under_faults() {
    matrix_rows(Kind::Command);
}

#[test]
fn inserter_under_faults() {
    matrix_rows(Kind::Inserter);
}

#[test]
fn arrow_inserter_under_faults() {
    matrix_rows(Kind::ArrowInserter);
}

#[test]
fn query_arrow_under_faults() {
    matrix_rows(Kind::QueryArrow);
}

#[cfg(feature = "grpc")]
#[test]
fn grpc_under_faults() {
    matrix_rows(Kind::Grpc);
}
