//! gRPC against the real server: the listener, every type read over gRPC
//! equal to the PostgreSQL-protocol read, each transfer mode on small and
//! ten-million-row results with bounded memory, cancel, errors, parameters,
//! settings, row limits; TLS in `grpc/tls.rs`.

mod async_errors;
mod overlap;
mod tls;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use hyperdb_api::arrow_array::cast::AsArray;
use hyperdb_api::arrow_array::types::Int32Type;
use hyperdb_api::arrow_array::RecordBatch;
use hyperdb_api::types::{Date, Interval, Numeric, Timestamp};
use hyperdb_api::{
    AsyncGrpcConnection, Connection, CreateMode, GrpcConnectOptions, GrpcConnection, HyperProcess,
    HyperProcessOptions, Inserter, Listen, SqlState, TransferMode,
};

use crate::common::{cancel_soon, rss, runs_here_alone, temp_dir};
use crate::insert::{all_types_table, read, rows, same, values, SELECT_ALL};

const MODES: [TransferMode; 3] = [
    TransferMode::Sync,
    TransferMode::Async,
    TransferMode::Adaptive,
];

/// The shared server with a gRPC listener beside a TCP PostgreSQL-protocol
/// one (no password: see `grpc_needs_a_server_without_a_password`), which
/// persists results so that every transfer mode works.
pub fn server() -> &'static HyperProcess {
    static SERVER: OnceLock<HyperProcess> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = HyperProcessOptions::default()
            .with_listen(Listen::Tcp)
            .with_grpc()
            .with_param("grpc_persist_results", "true");
        match HyperProcess::new(options) {
            Ok(server) => server,
            Err(e) => panic!("starting the shared gRPC hyperd: {e}"),
        }
    })
}

/// A PostgreSQL-protocol connection to the shared server's `path`.
fn pg_connect(path: &std::path::Path, mode: CreateMode) -> Connection {
    Connection::connect_with(&server().connect_options().with_database(path, mode)).unwrap()
}

fn endpoint() -> &'static str {
    server().grpc_endpoint().unwrap()
}

fn options(mode: TransferMode) -> GrpcConnectOptions {
    GrpcConnectOptions::from_endpoint(endpoint())
        .unwrap()
        .with_transfer_mode(mode)
}

fn connect(mode: TransferMode) -> GrpcConnection {
    GrpcConnection::connect_with(&options(mode)).unwrap()
}

#[test]
fn listeners_are_reported() {
    let uri = endpoint();
    assert!(uri.starts_with("http://127.0.0.1:"), "{uri}");
    // The PostgreSQL listener beside it still works.
    let mut pg = Connection::connect_with(&server().connect_options()).unwrap();
    assert_eq!(pg.query_scalar::<i32>("SELECT 1").unwrap(), 1);

    // gRPC alone, and gRPC beside a Unix socket.
    let alone =
        HyperProcess::new(HyperProcessOptions::default().with_listen(Listen::Grpc)).unwrap();
    let c = GrpcConnection::connect(alone.grpc_endpoint().unwrap()).unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 42").unwrap(), 42);
    let unix = HyperProcess::new(
        HyperProcessOptions::default()
            .with_listen(Listen::Unix)
            .with_grpc(),
    )
    .unwrap();
    assert!(unix.endpoint().unix_path().is_some());
    let c = GrpcConnection::connect(unix.grpc_endpoint().unwrap()).unwrap();
    assert_eq!(c.query_scalar::<i32>("SELECT 43").unwrap(), 43);
    let mut pg =
        Connection::connect_with(&hyperdb_api::ConnectOptions::new(unix.endpoint().clone()))
            .unwrap();
    assert_eq!(pg.query_scalar::<i32>("SELECT 44").unwrap(), 44);
    assert!(HyperProcess::start().unwrap().grpc_endpoint().is_none());
}

/// hyperd's gRPC takes only trusted sessions: with a password on the
/// initial user every call fails with 42501. So a TCP server with gRPC
/// gets no generated password (the shared one works over both), and a
/// given password leaves gRPC unusable.
#[test]
fn grpc_needs_a_server_without_a_password() {
    assert_eq!(server().password(), None, "a password beside gRPC");
    let with_password = HyperProcess::new(
        HyperProcessOptions::default()
            .with_grpc()
            .with_password("pw"),
    )
    .unwrap();
    let e = GrpcConnection::connect(with_password.grpc_endpoint().unwrap())
        .and_then(|c| c.query_scalar::<i32>("SELECT 1"))
        .unwrap_err();
    assert_eq!(e.sqlstate(), "42501", "{e:?}");
    let detail = e.db_error().and_then(|d| d.detail.as_deref());
    assert!(
        detail.is_some_and(|d| d.contains("trusted authentication")),
        "{e:?}"
    );
}

/// Inserted over the PostgreSQL protocol with `Inserter`, read over gRPC
/// in every mode: rows equal to what was inserted and to the
/// PostgreSQL-protocol read, column types equal, Arrow batches equal to
/// `query_arrow` over the PostgreSQL protocol.
#[test]
fn every_type_round_trips() {
    let dir = temp_dir();
    let path = dir.path().join("types.hyper");
    let mut c = pg_connect(&path, CreateMode::Create);
    let table = all_types_table();
    c.execute_command(&table.create_table_sql(false).unwrap())
        .unwrap();
    let want = rows();
    let mut ins = Inserter::new(&mut c, &table).unwrap();
    for r in &want {
        ins.add_row(&values(r)).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), want.len() as u64);
    let pg_rows = c.execute_query(SELECT_ALL).unwrap();
    let pg_columns = pg_rows.schema().columns().to_vec();
    let pg: Vec<_> = pg_rows.map(|r| read(&r.unwrap())).collect();
    let pg_batches: Vec<RecordBatch> = c
        .query_arrow(SELECT_ALL)
        .unwrap()
        .map(Result::unwrap)
        .collect();

    for mode in MODES {
        let g = GrpcConnection::connect_with(&options(mode).with_database(&path).unwrap()).unwrap();
        let rows = g.execute_query(SELECT_ALL).unwrap();
        let columns = rows.schema().columns().to_vec();
        let got: Vec<_> = rows.map(|r| read(&r.unwrap())).collect();
        assert_eq!(got.len(), want.len(), "{mode:?}");
        for ((g, w), p) in got.iter().zip(&want).zip(&pg) {
            assert!(same(g, w), "{mode:?}\n got {g:?}\nwant {w:?}");
            assert!(same(g, p), "{mode:?}\n got {g:?}\n  pg {p:?}");
        }
        for (gc, pc) in columns.iter().zip(&pg_columns) {
            assert_eq!(gc.name(), pc.name());
            assert_eq!(gc.sql_type(), pc.sql_type(), "column {}", pc.name());
        }
        let batches: Vec<RecordBatch> = g
            .query_arrow(SELECT_ALL)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(batches, pg_batches, "{mode:?}");
    }
}

#[tokio::test]
async fn async_connection_reads_rows_and_batches() {
    let c = AsyncGrpcConnection::connect(endpoint()).await.unwrap();
    let mut rows = c
        .execute_query("SELECT i, 'v' || i AS s FROM generate_series(1, 3) g(i)")
        .await
        .unwrap();
    let mut got = Vec::new();
    while let Some(row) = rows.next_as::<(i32, String)>().await {
        got.push(row.unwrap());
    }
    assert_eq!(got, [(1, "v1".into()), (2, "v2".into()), (3, "v3".into())]);
    assert_eq!(rows.row_count(), Some(3));
    // Lent: the text borrows from the row.
    let mut rows = c
        .execute_query("SELECT i, 'v' || i AS s FROM generate_series(1, 3) g(i)")
        .await
        .unwrap();
    let mut lent = Vec::new();
    while let Some(row) = rows.next_as::<(i32, &str)>().await {
        let (i, s) = row.unwrap();
        lent.push((i, s.to_owned()));
    }
    assert_eq!(lent, got);
    let mut batches = c.query_arrow("SELECT 5 AS x").await.unwrap();
    assert_eq!(batches.schema().field(0).name(), "x");
    let batch = batches.next().await.unwrap().unwrap();
    assert_eq!(batch.column(0).as_primitive::<Int32Type>().value(0), 5);
    assert!(batches.next().await.is_none());
    assert_eq!(c.query_scalar::<i64>("SELECT 7::bigint").await.unwrap(), 7);
}

#[test]
fn small_results_in_every_mode() {
    for mode in MODES {
        let c = connect(mode);
        let rows: Vec<(i32, i64)> = c
            .query_as("SELECT i, i * 2::bigint FROM generate_series(1, 10) g(i) ORDER BY i")
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), 10, "{mode:?}");
        assert_eq!(rows[9], (10, 20));
        // An empty result still has its schema.
        let batches = c.query_arrow("SELECT 1 AS a WHERE false").unwrap();
        assert_eq!(batches.schema().field(0).name(), "a");
        assert_eq!(batches.map(|b| b.unwrap().num_rows()).sum::<usize>(), 0);
        // Raw IPC bytes form one complete stream.
        let ipc: Vec<u8> = c
            .query_arrow_ipc("SELECT 3 AS a")
            .unwrap()
            .flat_map(|b| b.unwrap().to_vec())
            .collect();
        assert_eq!(&ipc[ipc.len() - 8..], &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    }
}

const N: i64 = 10_000_000;
/// RSS growth allowed while streaming: far below the ~80 MB of Arrow data.
const RSS_BUDGET: u64 = 64 << 20;

/// Ten million rows; `salt` keeps hyperd's result cache from answering.
fn big_query(salt: usize) -> String {
    format!("SELECT i, i * 2 AS j FROM generate_series(1, {N}) g(i) WHERE i <> -{salt}")
}

/// Count and checksum exact, memory bounded, in every mode, as Arrow.
#[test]
fn ten_million_rows_as_arrow_in_every_mode() {
    if !runs_here_alone("grpc::ten_million_rows_as_arrow_in_every_mode") {
        return;
    }
    for (salt, mode) in MODES.into_iter().enumerate() {
        let c = connect(mode);
        let base = rss();
        let mut peak = 0;
        let (mut n, mut sum_i, mut sum_j) = (0i64, 0i64, 0i64);
        let started = Instant::now();
        let mut batches = c.query_arrow(&big_query(salt)).unwrap();
        for batch in batches.by_ref() {
            let batch = batch.unwrap();
            n += batch.num_rows() as i64;
            let i = batch.column(0).as_primitive::<Int32Type>();
            let j = batch.column(1).as_primitive::<Int32Type>();
            sum_i += i.values().iter().map(|&v| i64::from(v)).sum::<i64>();
            sum_j += j.values().iter().map(|&v| i64::from(v)).sum::<i64>();
            peak = peak.max(rss().saturating_sub(base));
        }
        let took = started.elapsed();
        assert_eq!(n, N, "{mode:?}");
        assert_eq!(sum_i, N * (N + 1) / 2);
        assert_eq!(sum_j, N * (N + 1));
        assert_eq!(batches.row_count(), Some(N as u64));
        assert!(
            peak < RSS_BUDGET,
            "{mode:?}: RSS grew by {} MiB",
            peak >> 20
        );
        eprintln!(
            "gRPC {mode:?}: 10M rows as Arrow in {took:?} ({:.1} M rows/s), RSS +{} MiB",
            N as f64 / took.as_secs_f64() / 1e6,
            peak >> 20
        );
    }
}

/// The same as typed rows, through `Row::try_get`.
#[test]
fn ten_million_typed_rows() {
    if !runs_here_alone("grpc::ten_million_typed_rows") {
        return;
    }
    for (salt, mode) in [TransferMode::Adaptive, TransferMode::Async]
        .into_iter()
        .enumerate()
    {
        let c = connect(mode);
        let base = rss();
        let mut peak = 0;
        let (mut n, mut sum_i, mut sum_j) = (0i64, 0i64, 0i64);
        let started = Instant::now();
        for row in c.execute_query(&big_query(10 + salt)).unwrap() {
            let row = row.unwrap();
            n += 1;
            sum_i += i64::from(row.try_get::<i32>(0).unwrap());
            sum_j += i64::from(row.try_get::<i32>("j").unwrap());
            if n % 1_000_000 == 0 {
                peak = peak.max(rss().saturating_sub(base));
            }
        }
        let took = started.elapsed();
        assert_eq!(
            (n, sum_i, sum_j),
            (N, N * (N + 1) / 2, N * (N + 1)),
            "{mode:?}"
        );
        assert!(
            peak < RSS_BUDGET,
            "{mode:?}: RSS grew by {} MiB",
            peak >> 20
        );
        eprintln!(
            "gRPC {mode:?}: 10M typed rows in {took:?} ({:.1} M rows/s)",
            N as f64 / took.as_secs_f64() / 1e6
        );
    }
}

/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

#[test]
fn cancel_from_another_thread_in_every_mode() {
    for mode in MODES {
        let c = connect(mode);
        let handle = c.cancel_handle();
        let canceller = cancel_soon(move || handle.cancel().unwrap());
        let e = c.query_scalar::<i64>(LONG_QUERY).unwrap_err();
        let done = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        assert!(e.is_cancelled(), "{mode:?}: {e:?}");
        let took = done.saturating_duration_since(cancelled_at);
        assert!(
            took < Duration::from_secs(1),
            "{mode:?}: cancel took {took:?}"
        );
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_from_another_task() {
    let c = AsyncGrpcConnection::connect(endpoint()).await.unwrap();
    let handle = c.cancel_handle();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at = Instant::now();
        handle.cancel().await.unwrap();
        at
    });
    let e = c.query_scalar::<i64>(LONG_QUERY).await.unwrap_err();
    let took = Instant::now().saturating_duration_since(canceller.await.unwrap());
    assert!(e.is_cancelled(), "{e:?}");
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
}

/// A query timeout ends a query that runs past it with a timeout error,
/// in every mode, and the connection runs the next query. (A link that
/// stops answering: `faults::matrix`, through the fault proxy.)
#[test]
fn query_timeout_ends_a_long_query_in_every_mode() {
    for mode in MODES {
        let options = GrpcConnectOptions::from_endpoint(endpoint())
            .unwrap()
            .with_query_timeout(Some(Duration::from_millis(300)))
            .with_transfer_mode(mode);
        let c = GrpcConnection::connect_with(&options).unwrap();
        let start = Instant::now();
        let e = c.query_scalar::<i64>(LONG_QUERY).unwrap_err();
        let took = start.elapsed();
        assert!(e.is_timeout(), "{mode:?}: {e:?}");
        assert_eq!(e.sqlstate(), "HYT00", "{mode:?}");
        assert!(e.to_string().contains("300ms"), "{mode:?}: {e}");
        assert!(took >= Duration::from_millis(300), "{mode:?}: {took:?}");
        assert!(took < Duration::from_secs(10), "{mode:?}: {took:?}");
        assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1, "{mode:?}");
    }
}

/// The HTTP/2 options take effect without changing what is read: a
/// 300,000-row result (several messages) arrives whole in every mode with
/// small windows, adaptive flow control and large frames; values outside
/// HTTP/2's limits fail the connect with a config error naming the value.
#[tokio::test]
async fn http2_options_read_the_same_and_bad_values_are_refused() {
    let sql = "SELECT i, i * 2 AS j FROM generate_series(1, 300000) g(i)";
    let base = hyperdb_api::GrpcConfig::new(endpoint()).unwrap();
    let tuned = [
        base.clone()
            .with_stream_window(65_535)
            .with_connection_window(65_535),
        base.clone().with_adaptive_window(true),
        base.clone()
            .with_stream_window(64 << 20)
            .with_connection_window(128 << 20)
            .with_max_frame_size(Some((1 << 24) - 1)),
    ];
    for config in tuned {
        for mode in MODES {
            let options = GrpcConnectOptions::new(config.clone()).with_transfer_mode(mode);
            let c = AsyncGrpcConnection::connect_with(&options).await.unwrap();
            let mut batches = c.query_arrow(sql).await.unwrap();
            let (mut rows, mut sum) = (0usize, 0i64);
            while let Some(batch) = batches.next().await {
                let batch = batch.unwrap();
                rows += batch.num_rows();
                let j = batch.column(1).as_primitive::<Int32Type>();
                sum += j.iter().map(|v| i64::from(v.unwrap())).sum::<i64>();
            }
            assert_eq!(rows, 300_000, "{mode:?} {config:?}");
            assert_eq!(sum, 300_000 * 300_001, "{mode:?} {config:?}");
        }
    }
    for (bad, value) in [
        (base.clone().with_stream_window(65_534), "65534"),
        (base.clone().with_connection_window(u32::MAX), "4294967295"),
        (base.clone().with_max_frame_size(Some(1024)), "1024"),
    ] {
        let e = AsyncGrpcConnection::connect_with(&GrpcConnectOptions::new(bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), Some(hyperdb_api::ErrorKind::Config), "{e:?}");
        assert!(e.to_string().contains(value), "{e}");
    }
}

/// A result dropped half-read leaves the connection usable.
#[test]
fn dropping_a_result_early_is_fine() {
    for (salt, mode) in MODES.into_iter().enumerate() {
        let c = connect(mode);
        let mut batches = c.query_arrow(&big_query(20 + salt)).unwrap();
        assert!(batches.next().unwrap().unwrap().num_rows() > 0);
        drop(batches);
        assert_eq!(c.query_scalar::<i32>("SELECT 2").unwrap(), 2, "{mode:?}");
    }
}

#[test]
fn errors_carry_sqlstate_and_server_message() {
    let mut pg = Connection::connect_with(&server().connect_options()).unwrap();
    let pg_err = pg.execute_query("SELEC 1").unwrap_err();
    for mode in MODES {
        let c = connect(mode);
        let e = c.execute_query("SELEC 1").unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::SYNTAX_ERROR), "{mode:?}: {e:?}");
        assert_eq!(
            e.db_error().unwrap().message,
            pg_err.db_error().unwrap().message
        );
        assert_eq!(
            e.db_error().unwrap().position,
            pg_err.db_error().unwrap().position
        );
        assert_eq!(
            e.db_error().unwrap().detail,
            pg_err.db_error().unwrap().detail
        );
        assert!(e.db_error().unwrap().detail.is_some(), "{e:?}");
        let e = c.execute_query("SELECT * FROM nowhere").unwrap_err();
        assert_eq!(e.code(), Some(&SqlState::UNDEFINED_TABLE), "{mode:?}");
        // An error while the result streams (in ASYNC: while polling).
        let e = c
            .query_as::<(i32,)>("SELECT 10 / (i - 5) FROM generate_series(1, 10) g(i)")
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("22012"), "{mode:?}: {e:?}");
        assert_eq!(c.query_scalar::<i32>("SELECT 3").unwrap(), 3);
    }
}

#[test]
fn parameters_settings_and_row_limits() {
    let c = connect(TransferMode::Adaptive);
    let n = Numeric::new(-12345, 2).unwrap();
    let d = Date::from_ymd(2024, 2, 29).unwrap();
    let ts = Timestamp::from_micros_since_2000(123_456_789);
    let iv = Interval::new(1, 2, 3);
    let none: Option<i64> = None;
    let params: [&dyn hyperdb_api::types::ToPgBinary; 8] =
        [&41i32, &"x", &n, &d, &ts, &iv, &none, &true];
    // The cast lets the PostgreSQL protocol infer the NUMERIC scale too.
    let sql = "SELECT $1 + 1, $2 || 'y', $3::numeric(10, 2) * 2, $4 + 1, $5, $6, $7, NOT $8";
    type Out = (
        i32,
        String,
        Numeric,
        Date,
        Timestamp,
        Interval,
        Option<i64>,
        bool,
    );
    let mut rows = c.execute_query_params(sql, &params).unwrap();
    let row = rows.next().unwrap().unwrap();
    let read = |row: &hyperdb_api::Row| -> Out {
        (
            row.try_get(0).unwrap(),
            row.try_get(1).unwrap(),
            row.try_get(2).unwrap(),
            row.try_get(3).unwrap(),
            row.try_get(4).unwrap(),
            row.try_get(5).unwrap(),
            row.try_get(6).unwrap(),
            row.try_get(7).unwrap(),
        )
    };
    let got = read(&row);
    assert_eq!(got.0, 42);
    assert_eq!(got.1, "xy");
    assert_eq!(got.2, Numeric::new(-24690, 2).unwrap());
    assert_eq!(got.3, Date::from_ymd(2024, 3, 1).unwrap());
    assert_eq!((got.4, got.5, got.6, got.7), (ts, iv, None, false));
    // The same parameters over the PostgreSQL protocol give the same row.
    let mut pg = Connection::connect_with(&server().connect_options()).unwrap();
    let pg_row = pg
        .execute_query_params(sql, &params)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(read(&pg_row), got);

    // Settings travel with the query and are validated.
    let date_of = |c: &GrpcConnection| c.query_scalar::<Date>("SELECT '01/02/2000'::date").unwrap();
    let mut c = connect(TransferMode::Adaptive);
    assert_eq!(date_of(&c), Date::from_ymd(2000, 1, 2).unwrap());
    c.set_setting("date_style", "DMY");
    assert_eq!(date_of(&c), Date::from_ymd(2000, 2, 1).unwrap());
    c.set_setting("no_such_setting", "1");
    assert!(c.query_scalar::<i32>("SELECT 1").is_err());

    // The session defaults travel too, and give what the PostgreSQL
    // protocol gives (tests/live/interop.rs compares that with Tableau's).
    let c = connect(TransferMode::Adaptive);
    for sql in [
        "SELECT (0.1::DOUBLE PRECISION + 0.2::DOUBLE PRECISION)::TEXT",
        "SELECT '01/02/50'::DATE::TEXT",
    ] {
        let ours = c.query_scalar::<String>(sql).unwrap();
        assert_eq!(ours, pg.query_scalar::<String>(sql).unwrap(), "{sql}");
        assert!(
            ["0.30000000000000004", "1950-01-02"].contains(&ours.as_str()),
            "{sql}: {ours}"
        );
    }

    let mut c = connect(TransferMode::Sync);
    c.set_row_limit(Some(3));
    let rows = c
        .execute_query("SELECT i FROM generate_series(1, 100) g(i)")
        .unwrap();
    assert_eq!(rows.count(), 3);
}

#[test]
fn attached_databases_by_alias() {
    let dir = temp_dir();
    let path = dir.path().join("other.hyper");
    let mut pg = pg_connect(&path, CreateMode::Create);
    pg.execute_command("CREATE TABLE t AS SELECT 5 AS v")
        .unwrap();
    pg.close().unwrap();
    let mut c = connect(TransferMode::Adaptive);
    c.attach_database(&path, "o").unwrap();
    assert_eq!(
        c.query_scalar::<i32>(r#"SELECT v FROM "o"."public"."t""#)
            .unwrap(),
        5
    );
    c.detach_database("o").unwrap();
    assert!(c
        .query_scalar::<i32>(r#"SELECT v FROM "o"."public"."t""#)
        .is_err());
    assert!(c.detach_database("o").is_err());
}

/// hyperd persists gRPC results (`grpc_persist_results`, which ASYNC and
/// ADAPTIVE need) as `shared_storage_<pid>_*` in its temporary directory
/// and may leave them there when it exits: a benchmark once left 12 GB in
/// `/tmp`. `HyperProcess` points hyperd's `TMPDIR` into its private
/// directory, so the results live there and go with the server.
#[test]
fn persisted_grpc_results_go_with_the_server() {
    let hyper = HyperProcess::new(
        HyperProcessOptions::default()
            .with_grpc()
            .with_param("grpc_persist_results", "true"),
    )
    .unwrap();
    let pid = hyper.pid();
    let prefix = format!("shared_storage_{pid}_");
    let private = hyper.log_dir().to_path_buf();
    let opts = GrpcConnectOptions::from_endpoint(hyper.grpc_endpoint().unwrap())
        .unwrap()
        .with_transfer_mode(TransferMode::Adaptive);
    let c = GrpcConnection::connect_with(&opts).unwrap();
    assert_eq!(arrow_rows(&c, LARGE_RESULT).unwrap(), 2_000_000);
    let spooled = spooled_bytes(&private, &prefix);
    assert!(spooled > 1 << 20, "only {spooled} bytes of results on disk");
    let in_dir = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            })
            .unwrap_or(false)
    };
    assert!(
        in_dir(&private),
        "no {prefix}* in the private directory {}",
        private.display()
    );
    assert!(
        !in_dir(&std::env::temp_dir()),
        "{prefix}* in the system temp dir"
    );
    drop(c);
    drop(hyper);
    assert!(
        !private.exists(),
        "{} outlived the server",
        private.display()
    );
    assert!(
        !in_dir(&std::env::temp_dir()),
        "{prefix}* left in the system temp dir"
    );
}

/// `with_grpc` alone does not persist results: SYNC (the default mode)
/// reads a result of many chunks and writes nothing to disk; ASYNC and
/// ADAPTIVE, which fetch results back from that storage, fail on it with
/// 55000 naming the setting, and ADAPTIVE still reads a small result.
#[test]
fn without_persisted_results_sync_reads_and_the_others_say_why_not() {
    let hyper = HyperProcess::new(HyperProcessOptions::default().with_grpc()).unwrap();
    let prefix = format!("shared_storage_{}_", hyper.pid());
    let uri = hyper.grpc_endpoint().unwrap();
    let sync = GrpcConnection::connect(uri).unwrap();
    assert_eq!(arrow_rows(&sync, LARGE_RESULT).unwrap(), 2_000_000);
    let spooled = spooled_bytes(hyper.log_dir(), &prefix);
    assert!(spooled < 1 << 20, "{spooled} bytes of results on disk");
    for mode in [TransferMode::Async, TransferMode::Adaptive] {
        let opts = GrpcConnectOptions::from_endpoint(uri)
            .unwrap()
            .with_transfer_mode(mode);
        let c = GrpcConnection::connect_with(&opts).unwrap();
        let e = arrow_rows(&c, LARGE_RESULT).unwrap_err();
        assert_eq!(e.sqlstate(), "55000", "{mode:?}: {e:?}");
        assert!(
            format!("{e:?}").contains("grpc_persist_results"),
            "{mode:?}: {e:?}"
        );
        // ASYNC fetches every result from that storage, so even a small
        // one fails the same way; ADAPTIVE gets a small one inline.
        let small = c.query_scalar::<i32>("SELECT 7");
        match mode {
            TransferMode::Async => assert_eq!(small.unwrap_err().sqlstate(), "55000"),
            _ => assert_eq!(small.unwrap(), 7, "{mode:?}"),
        }
    }
    assert_eq!(sync.query_scalar::<i32>("SELECT 8").unwrap(), 8);
}

/// ~30 MB of Arrow in 2M rows: more than one chunk, so ADAPTIVE fetches
/// the rest from persisted results.
const LARGE_RESULT: &str = "SELECT g, g::text AS t FROM generate_series(1, 2000000) g";

/// The rows of `sql` read as Arrow batches.
fn arrow_rows(c: &GrpcConnection, sql: &str) -> hyperdb_api::Result<usize> {
    c.query_arrow(sql)?.map(|b| b.map(|b| b.num_rows())).sum()
}

/// Bytes under the entries of `dir` whose names start with `prefix`.
fn spooled_bytes(dir: &std::path::Path, prefix: &str) -> u64 {
    fn size(path: &std::path::Path) -> u64 {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => std::fs::read_dir(path)
                .map(|d| d.flatten().map(|e| size(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .map(|e| size(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

/// Statements that write are refused before anything is sent (hyperd's
/// gRPC runs them, then answers with a result that does not match: a
/// caller that retried would write twice); queries and misspelt words go.
#[test]
fn statements_that_write_are_refused_before_sending() {
    let dir = crate::common::temp_dir();
    let path = dir.path().join("grpc_writes.hyper");
    let mut pg = Connection::connect_with(
        &server()
            .connect_options()
            .with_database(&path, hyperdb_api::CreateMode::Create),
    )
    .unwrap();
    pg.execute_command("CREATE TABLE t (id INT)").unwrap();
    let c =
        GrpcConnection::connect_with(&options(TransferMode::Sync).with_database(&path).unwrap())
            .unwrap();
    for sql in [
        "INSERT INTO t VALUES (1), (2)",
        "  /* a note */ delete from t",
        "CREATE TABLE u (x INT)",
        "(UPDATE t SET id = 3)",
        "DROP TABLE t",
        "WITH q AS (SELECT 1) INSERT INTO t SELECT 1 FROM q",
        "with q as (select 1) delete from t",
        "WITH d AS (DELETE FROM t RETURNING id) SELECT count(*) FROM d",
        "WITH q AS (SELECT 1), u AS MATERIALIZED ( update t SET id = 4 RETURNING id) TABLE u",
    ] {
        let e = c.query_scalar::<i64>(sql).unwrap_err();
        assert_eq!(e.sqlstate(), "22023", "{sql}: {e}");
        assert!(e.to_string().contains("gRPC runs queries"), "{e}");
    }
    pg.execute_command("INSERT INTO t VALUES (7)").unwrap();
    assert_eq!(c.query_scalar::<i64>("SELECT count(*) FROM t").unwrap(), 1);
    // A WITH that only reads goes, also with a column named like a write.
    assert_eq!(
        c.query_scalar::<i32>("WITH q AS (SELECT id AS update FROM t) SELECT \"update\" FROM q")
            .unwrap(),
        7
    );
    assert!(!pg.catalog().has_table("u").unwrap());
    let typo = c.query_scalar::<i64>("SELEC 1").unwrap_err();
    assert_eq!(typo.sqlstate(), "42601", "{typo}");
}

/// A write behind a character hyperd skips before a keyword (a BOM from a
/// `.sql` file, U+00A0, U+2028, U+3000, a zero-width space, a vertical
/// tab, an empty statement), or behind a comment ended where hyperd ends
/// it, is refused like any other: each of these deleted the row over
/// gRPC. A statement starting with a character that is no keyword's is
/// refused too; the same spaces before a query are read past.
#[test]
fn writes_behind_what_hyperd_skips_are_refused() {
    let dir = crate::common::temp_dir();
    let path = dir.path().join("grpc_skipped.hyper");
    let mut pg = pg_connect(&path, CreateMode::Create);
    pg.execute_command("CREATE TABLE a (id INT)").unwrap();
    pg.execute_command("INSERT INTO a VALUES (1), (2)").unwrap();
    let c =
        GrpcConnection::connect_with(&options(TransferMode::Sync).with_database(&path).unwrap())
            .unwrap();
    let spaces = [
        '\u{FEFF}', '\u{A0}', '\u{2028}', '\u{3000}', '\u{200B}', '\u{B}', '\u{2000}', '\u{200F}',
    ];
    let mut writes: Vec<String> = spaces
        .iter()
        .map(|c| format!("{c}DELETE FROM a WHERE id = 1"))
        .collect();
    writes.extend(
        [
            ";DELETE FROM a WHERE id = 1",
            "-- note\rDELETE FROM a WHERE id = 1",
            "/* a /* b */ DELETE FROM a WHERE id = 1",
            "WITH q AS (SELECT 1)\u{3000}DELETE FROM a WHERE id = 1",
            "WITH q AS (SELECT text$q$--$q$) DELETE FROM a WHERE id = 1",
            "\u{85}DELETE FROM a WHERE id = 1",
        ]
        .map(String::from),
    );
    for sql in &writes {
        let e = c.query_scalar::<i64>(sql).unwrap_err();
        assert_eq!(e.sqlstate(), "22023", "{sql:?}: {e}");
        assert!(e.to_string().contains("gRPC runs queries"), "{e}");
    }
    assert_eq!(
        pg.query_scalar::<i64>("SELECT count(*) FROM a").unwrap(),
        2,
        "a write went"
    );
    for space in spaces {
        let n = c
            .query_scalar::<i64>(&format!("{space}SELECT count(*) FROM a"))
            .unwrap();
        assert_eq!(n, 2, "{space:?}");
    }
}
