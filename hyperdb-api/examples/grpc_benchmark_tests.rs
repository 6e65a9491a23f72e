//! Where gRPC reads spend their time: a dig-deeper bench beside the suite.
//!
//! `cargo run -p hyperdb-api --release --example grpc_benchmark_tests -- [ROWS] [REPS]`
//! (default 10M rows of the suite's `measurements` shape, 5 runs each).
//! `GRPC_BENCH_SERVER=0` skips the part that restarts hyperd with other
//! message and chunk sizes.
//!
//! Starts its own hyperd (PostgreSQL wire and gRPC), fills a table, and
//! prints per variant the median time, rows/s, the share of the PG-wire
//! `query_arrow` (each run paired with a PG-wire run just before it; the
//! median of the pairs' ratios), and the CPU seconds of the client
//! (all threads, and its busiest thread) and of hyperd in the median run
//! (from `/proc`, clock ticks of 10 ms). Variants: the transfer modes;
//! receiving the IPC bytes without decoding them; decoding on another task
//! than the one receiving; HTTP/2 windows, adaptive window and frame size;
//! N range queries on one channel and on N channels; a current-thread
//! runtime; hyperd's `grpc_result_target_message_size` and
//! `result_target_chunk_size`. Nothing is written into the repository.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Instant;

use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use bytes::Bytes;
use hyperdb_api::grpc::{GrpcConfig, TransferMode};
use hyperdb_api::{
    AsyncConnection, AsyncGrpcConnection, Connection, CreateMode, GrpcConnectOptions, HyperProcess,
    HyperProcessOptions,
};

type BoxError = Box<dyn StdError + Send + Sync>;
type Res<T> = std::result::Result<T, BoxError>;
type Run<'a> = Pin<Box<dyn Future<Output = Res<u64>> + 'a>>;

const TABLE: &str = "measurements";
const COLUMNS: &str = "id, sensor_id, value, timestamp";

/// What one variant measured: its median run.
struct Figure {
    name: String,
    secs: f64,
    rows: u64,
    client_cpu: f64,
    busiest_thread: f64,
    server_cpu: f64,
    /// Median of PG-wire time / this time over interleaved pairs.
    share: Option<f64>,
}

/// CPU seconds from `/proc`: the process, each of its threads, and hyperd.
#[derive(Clone, Default)]
struct Cpu {
    process: f64,
    threads: BTreeMap<String, f64>,
    server: f64,
}

/// utime + stime of a `/proc/.../stat` file, in seconds (100 ticks/s, the
/// Linux default).
fn stat_secs(path: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

impl Cpu {
    fn sample(server_pid: u32) -> Cpu {
        let mut threads = BTreeMap::new();
        if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
            for task in dir.flatten() {
                if let Some(secs) = stat_secs(&task.path().join("stat")) {
                    threads.insert(task.file_name().to_string_lossy().into_owned(), secs);
                }
            }
        }
        Cpu {
            process: stat_secs(Path::new("/proc/self/stat")).unwrap_or(0.0),
            threads,
            server: stat_secs(&PathBuf::from(format!("/proc/{server_pid}/stat"))).unwrap_or(0.0),
        }
    }

    /// (client, busiest client thread, server) seconds since `before`.
    fn since(&self, before: &Cpu) -> (f64, f64, f64) {
        let busiest = self
            .threads
            .iter()
            .map(|(id, s)| s - before.threads.get(id).copied().unwrap_or(0.0))
            .fold(0.0, f64::max);
        (
            self.process - before.process,
            busiest,
            self.server - before.server,
        )
    }
}

/// The server and table every variant reads.
struct Bench {
    rows: u64,
    reps: usize,
    db: PathBuf,
    /// `None` only while one server is replaced by the next.
    hyper: Option<HyperProcess>,
    /// The PG-wire `query_arrow` run each measured run is paired with.
    reference: Option<hyperdb_api::ConnectOptions>,
}

impl Bench {
    /// A hyperd with gRPC that persists results, which the ASYNC and
    /// ADAPTIVE variants need (`with_grpc` alone does not). hyperd keeps
    /// every persisted gRPC result on disk for
    /// `query_result_storage_lifetime` (3 days by default, 240 MB per scan
    /// here, the SYNC ones too): a minute keeps a long run of the bench
    /// from filling the disk before the server (and its private directory)
    /// goes.
    fn start(params: &[(&str, &str)]) -> Res<HyperProcess> {
        let mut options = HyperProcessOptions::default()
            .with_grpc()
            .with_param("grpc_persist_results", "true")
            .with_param("query_result_storage_lifetime", "1min");
        for (name, value) in params {
            options = options.with_param(*name, *value);
        }
        Ok(HyperProcess::new(options)?)
    }

    /// Replaces the server (which frees its persisted results); the next
    /// starts once the previous one let go of the database file. The PG
    /// runs of the pairs then go to the new server.
    fn restart(&mut self, params: &[(&str, &str)]) -> Res<()> {
        self.stop();
        let hyper = Bench::start(params)?;
        if self.reference.is_some() {
            self.reference = Some(pg_options(&hyper, &self.db));
        }
        self.hyper = Some(hyper);
        Ok(())
    }

    /// Stops the server; its persisted results go with its private
    /// directory (hyperd's `TMPDIR`).
    fn stop(&mut self) {
        self.hyper = None;
    }

    fn hyper(&self) -> Res<&HyperProcess> {
        self.hyper
            .as_ref()
            .ok_or_else(|| "no hyperd running".into())
    }

    fn grpc_options(&self, mode: TransferMode, config: GrpcConfig) -> Res<GrpcConnectOptions> {
        Ok(GrpcConnectOptions::new(config)
            .with_database(&self.db)?
            .with_transfer_mode(mode))
    }

    fn config(&self) -> Res<GrpcConfig> {
        let endpoint = self
            .hyper()?
            .grpc_endpoint()
            .ok_or("hyperd started without gRPC")?;
        Ok(GrpcConfig::new(endpoint)?)
    }

    /// Runs [`Bench::measure_runs`]; a variant that fails is reported in
    /// its row (with infinite time) and the bench goes on.
    fn measure(
        &mut self,
        rt: &tokio::runtime::Runtime,
        name: impl Into<String>,
        run: impl FnMut() -> Run<'static>,
    ) -> Res<f64> {
        let name = name.into();
        match self.measure_runs(rt, name.clone(), run) {
            Ok(secs) => Ok(secs),
            Err(e) => {
                println!("| {name:<52} | failed: {e}");
                Ok(f64::INFINITY)
            }
        }
    }

    /// Runs `run` `reps` times on `rt` and records the median run. With a
    /// reference set, each run follows a PG-wire `query_arrow` run, and the
    /// share is the median of the per-pair ratios: the load of a shared box
    /// changes by the second, and a pair sees the same load.
    fn measure_runs(
        &mut self,
        rt: &tokio::runtime::Runtime,
        name: impl Into<String>,
        mut run: impl FnMut() -> Run<'static>,
    ) -> Res<f64> {
        let name = name.into();
        let pid = self.hyper()?.pid();
        let mut runs = Vec::with_capacity(self.reps);
        let mut ratios = Vec::with_capacity(self.reps);
        for rep in 0..self.reps {
            // The PG run goes first in even pairs and second in odd ones,
            // so neither side always follows the other's after-effects.
            let pg_run = || match &self.reference {
                Some(options) => timed(rt, self.rows, pg_arrow(options.clone())).map(Some),
                None => Ok(None),
            };
            let mut pg = if rep % 2 == 0 { pg_run()? } else { None };
            let before = Cpu::sample(pid);
            let secs = timed(rt, self.rows, run()).map_err(|e| format!("{name}: {e}"))?;
            let cpu = Cpu::sample(pid).since(&before);
            if rep % 2 == 1 {
                pg = pg_run()?;
            }
            if let Some(pg) = pg {
                ratios.push(pg / secs);
            }
            runs.push((secs, cpu));
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        ratios.sort_by(f64::total_cmp);
        let (secs, (client_cpu, busiest_thread, server_cpu)) = runs[runs.len() / 2];
        let figure = Figure {
            name,
            secs,
            rows: self.rows,
            client_cpu,
            busiest_thread,
            server_cpu,
            share: ratios.get(ratios.len() / 2).copied(),
        };
        print(&figure);
        Ok(secs)
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `run` once; its seconds, checking the row count.
fn timed(
    rt: &tokio::runtime::Runtime,
    expected: u64,
    run: impl Future<Output = Res<u64>>,
) -> Res<f64> {
    let start = Instant::now();
    let rows = rt.block_on(run)?;
    let secs = start.elapsed().as_secs_f64();
    if rows != expected {
        return Err(format!("{rows} rows arrived, expected {expected}").into());
    }
    Ok(secs)
}

fn print(f: &Figure) {
    let share = f
        .share
        .map_or_else(|| "ref".to_owned(), |r| format!("{:.0}%", r * 100.0));
    println!(
        "| {:<52} | {:>7.3} | {:>7.2} | {:>5} | {:>5.0}% | {:>5.0}% | {:>5.0}% |",
        f.name,
        f.secs,
        f.rows as f64 / f.secs / 1e6,
        share,
        f.client_cpu / f.secs * 100.0,
        f.busiest_thread / f.secs * 100.0,
        f.server_cpu / f.secs * 100.0,
    );
}

fn header(title: &str) {
    println!("\n{title} (uptime: {})", uptime());
    println!(
        "| {:<52} | {:>7} | {:>7} | {:>5} | {:>6} | {:>6} | {:>6} |",
        "variant", "s", "M rows/s", "of PG", "client", "thread", "hyperd"
    );
    println!(
        "|{:-<54}|{:-<9}|{:-<10}|{:-<7}|{:-<8}|{:-<8}|{:-<8}|",
        "", "", "", "", "", "", ""
    );
}

fn uptime() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| {
            let load: Vec<&str> = s.split_whitespace().take(3).collect();
            format!("load average {}", load.join(", "))
        })
        .unwrap_or_default()
}

fn scan_sql(range: Option<(u64, u64)>) -> String {
    match range {
        None => format!("SELECT {COLUMNS} FROM {TABLE}"),
        Some((lo, hi)) => format!("SELECT {COLUMNS} FROM {TABLE} WHERE id >= {lo} AND id < {hi}"),
    }
}

/// PG wire: `query_arrow`, every batch counted.
async fn pg_arrow(options: hyperdb_api::ConnectOptions) -> Res<u64> {
    let mut conn = AsyncConnection::connect_with(&options).await?;
    let mut rows = 0;
    {
        let mut batches = conn.query_arrow(&scan_sql(None)).await?;
        while let Some(batch) = batches.next().await {
            rows += batch?.num_rows() as u64;
        }
    }
    conn.close().await?;
    Ok(rows)
}

/// gRPC `query_arrow` over `range` (all rows when `None`).
async fn grpc_arrow(conn: AsyncGrpcConnection, range: Option<(u64, u64)>) -> Res<u64> {
    let mut rows = 0;
    let mut batches = conn.query_arrow(&scan_sql(range)).await?;
    while let Some(batch) = batches.next().await {
        rows += batch?.num_rows() as u64;
    }
    Ok(rows)
}

/// gRPC bytes only: the IPC chunks as they arrive, nothing decoded; the
/// row count is the server's.
async fn grpc_receive(conn: AsyncGrpcConnection, aligned: &mut [u64; 2]) -> Res<u64> {
    let mut chunks = conn.query_arrow_ipc(&scan_sql(None)).await?;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        aligned[usize::from((chunk.as_ptr() as usize).is_multiple_of(16))] += 1;
    }
    Ok(chunks.row_count().unwrap_or(0))
}

/// gRPC with the IPC bytes received on a task of their own and decoded
/// here, so receiving and decoding can run on two cores.
async fn grpc_decode_elsewhere(conn: AsyncGrpcConnection) -> Res<u64> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(8);
    let mut chunks = conn.query_arrow_ipc(&scan_sql(None)).await?;
    let receiver = tokio::spawn(async move {
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| e.to_string())?;
            if tx.send(chunk).await.is_err() {
                break;
            }
        }
        Ok::<_, String>(())
    });
    let mut decoder = StreamDecoder::new();
    let mut rows = 0;
    while let Some(chunk) = rx.recv().await {
        let mut buffer = Buffer::from(chunk);
        while !buffer.is_empty() {
            if let Some(batch) = decoder.decode(&mut buffer)? {
                rows += batch.num_rows() as u64;
            }
        }
    }
    receiver.await??;
    decoder.finish()?;
    Ok(rows)
}

fn runtime(multi: bool) -> Res<tokio::runtime::Runtime> {
    let mut builder = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    Ok(builder.enable_all().build()?)
}

const MODES: [(TransferMode, &str); 3] = [
    (TransferMode::Sync, "sync"),
    (TransferMode::Async, "async"),
    (TransferMode::Adaptive, "adaptive"),
];

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let rows: u64 = args.next().map_or(Ok(10_000_000), |s| s.parse())?;
    let reps: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let server_sizes = std::env::var("GRPC_BENCH_SERVER").map_or(true, |v| v != "0");
    if rows == 0 || reps == 0 {
        return Err("ROWS and REPS must be at least 1".into());
    }
    let dir = std::env::temp_dir().join(format!("hyperdb-grpc-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("grpc_bench.hyper");
    let outcome = run_all(rows, reps, &db, server_sizes);
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn run_all(rows: u64, reps: usize, db: &Path, server_sizes: bool) -> Res<()> {
    let hyper = Bench::start(&[])?;
    let load = Instant::now();
    let mut setup = Connection::connect_with(
        &hyper
            .connect_options()
            .with_database(db, CreateMode::CreateAndReplace),
    )?;
    setup.execute_command(&format!(
        "CREATE TABLE {TABLE} (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)"
    ))?;
    setup.execute_command(&format!(
        "INSERT INTO {TABLE} SELECT i, i % 10, i * 0.1, 1700000000000 + i::bigint * 1000 \
         FROM generate_series(0, {}) i",
        rows - 1
    ))?;
    setup.close()?;
    println!(
        "gRPC read bench: {rows} rows x 4 columns (24 bytes/row), median of {reps}, table in {:.1} s",
        load.elapsed().as_secs_f64()
    );
    println!(
        "client/thread/hyperd = CPU seconds / wall seconds of the median run (client: all its \
         threads; thread: its busiest one)"
    );
    let mut bench = Bench {
        rows,
        reps,
        db: db.to_owned(),
        hyper: Some(hyper),
        reference: None,
    };
    let rt = runtime(true)?;

    header("Transfer modes (multi-thread runtime, default HTTP/2 settings)");
    let best = modes(&mut bench, &rt)?;
    let best_name = MODES.iter().find(|m| m.0 == best).map_or("?", |m| m.1);

    bench.restart(&[])?;
    header(&format!("Where the time goes ({best_name})"));
    pipeline(&mut bench, &rt, best, best_name)?;

    bench.restart(&[])?;
    header(&format!("HTTP/2 flow control ({best_name}, query_arrow)"));
    flow_control(&mut bench, &rt, best)?;

    bench.restart(&[])?;
    header(&format!(
        "1 vs N streams ({best_name}, query_arrow over id ranges)"
    ));
    streams(&mut bench, &rt, best)?;

    bench.restart(&[])?;
    header("Runtime flavour");
    let current = runtime(false)?;
    reference(
        &mut bench,
        &current,
        "PG wire query_arrow, current-thread runtime",
    )?;
    let opts = bench.grpc_options(best, bench.config()?)?;
    bench.measure(
        &current,
        format!("gRPC {best_name} query_arrow, current-thread"),
        || {
            let opts = opts.clone();
            Box::pin(async move {
                grpc_arrow(AsyncGrpcConnection::connect_with(&opts).await?, None).await
            })
        },
    )?;

    if server_sizes {
        server_settings(bench, &rt, best)?;
    }
    Ok(())
}

fn pg_options(hyper: &HyperProcess, db: &Path) -> hyperdb_api::ConnectOptions {
    hyper
        .connect_options()
        .with_database(db, CreateMode::DoNotCreate)
}

/// Measures the PG-wire `query_arrow`, the 100 % of what follows.
fn reference(bench: &mut Bench, rt: &tokio::runtime::Runtime, name: &str) -> Res<()> {
    bench.reference = None;
    let options = pg_options(bench.hyper()?, &bench.db);
    bench.measure(rt, name, || Box::pin(pg_arrow(options.clone())))?;
    bench.reference = Some(options);
    Ok(())
}

/// The PG-wire reference, then `query_arrow` in each transfer mode;
/// returns the fastest mode.
fn modes(bench: &mut Bench, rt: &tokio::runtime::Runtime) -> Res<TransferMode> {
    reference(bench, rt, "PG wire query_arrow (reference)")?;
    let mut best = (f64::MAX, TransferMode::Adaptive);
    for (mode, name) in MODES {
        bench.restart(&[])?;
        let opts = bench.grpc_options(mode, bench.config()?)?;
        let secs = bench.measure(rt, format!("gRPC {name} query_arrow"), || {
            let opts = opts.clone();
            Box::pin(async move {
                grpc_arrow(AsyncGrpcConnection::connect_with(&opts).await?, None).await
            })
        })?;
        if secs < best.0 {
            best = (secs, mode);
        }
    }
    Ok(best.1)
}

/// Receiving without decoding, and decoding on another task.
fn pipeline(
    bench: &mut Bench,
    rt: &tokio::runtime::Runtime,
    best: TransferMode,
    best_name: &str,
) -> Res<()> {
    for (mode, name) in MODES {
        bench.restart(&[])?;
        let opts = bench.grpc_options(mode, bench.config()?)?;
        let aligned = std::sync::Arc::new(std::sync::Mutex::new([0u64; 2]));
        bench.measure(rt, format!("gRPC {name} receive only (no decode)"), || {
            let (opts, aligned) = (opts.clone(), aligned.clone());
            Box::pin(async move {
                let mut counts = [0u64; 2];
                let rows =
                    grpc_receive(AsyncGrpcConnection::connect_with(&opts).await?, &mut counts)
                        .await?;
                let mut total = aligned.lock().map_err(|_| "poisoned")?;
                total[0] += counts[0];
                total[1] += counts[1];
                Ok(rows)
            })
        })?;
        let counts = *aligned.lock().map_err(|_| "poisoned")?;
        println!(
            "|   {:<50} |         |          |       |        |        |        |",
            format!(
                "chunks 16-byte aligned: {} of {}",
                counts[1],
                counts[0] + counts[1]
            )
        );
    }
    let opts = bench.grpc_options(best, bench.config()?)?;
    bench.measure(
        rt,
        format!("gRPC {best_name} decode on another task"),
        || {
            let opts = opts.clone();
            Box::pin(async move {
                grpc_decode_elsewhere(AsyncGrpcConnection::connect_with(&opts).await?).await
            })
        },
    )?;
    Ok(())
}

/// Windows (stream / connection), adaptive window, frame size.
fn flow_control(bench: &mut Bench, rt: &tokio::runtime::Runtime, best: TransferMode) -> Res<()> {
    const KIB: u32 = 1 << 10;
    const MIB: u32 = 1 << 20;
    type Tune = Box<dyn Fn(GrpcConfig) -> GrpcConfig>;
    let variants: Vec<(String, Tune)> = {
        let mut v: Vec<(String, Tune)> = Vec::new();
        for (stream, conn) in [
            (64 * KIB, 64 * KIB),
            (MIB, 2 * MIB),
            (8 * MIB, 16 * MIB),
            (32 * MIB, 64 * MIB),
            (128 * MIB, 256 * MIB),
        ] {
            v.push((
                format!("windows {} / {} KiB", stream / KIB, conn / KIB),
                Box::new(move |c: GrpcConfig| {
                    c.with_stream_window(stream).with_connection_window(conn)
                }),
            ));
        }
        v.push((
            "adaptive window (from 64 KiB)".into(),
            Box::new(|c: GrpcConfig| {
                c.with_stream_window(64 * KIB - 1)
                    .with_connection_window(64 * KIB - 1)
                    .with_adaptive_window(true)
            }),
        ));
        v.push((
            "adaptive window (from 8 / 16 MiB)".into(),
            Box::new(|c: GrpcConfig| c.with_adaptive_window(true)),
        ));
        v.push((
            "max frame size 16 KiB (HTTP/2's own)".to_owned(),
            Box::new(|c: GrpcConfig| c.with_max_frame_size(None)),
        ));
        for frame in [64 * KIB, 256 * KIB, MIB, 16 * MIB - 1] {
            v.push((
                format!("max frame size {} KiB", frame / KIB),
                Box::new(move |c: GrpcConfig| c.with_max_frame_size(Some(frame))),
            ));
        }
        v
    };
    for (name, tune) in variants {
        // A fresh server per variant: its persisted results go with it.
        bench.restart(&[])?;
        let opts = bench.grpc_options(best, tune(bench.config()?))?;
        bench.measure(rt, name, || {
            let opts = opts.clone();
            Box::pin(async move {
                grpc_arrow(AsyncGrpcConnection::connect_with(&opts).await?, None).await
            })
        })?;
    }
    Ok(())
}

/// N queries over id ranges at once: on one channel, and on N channels.
fn streams(bench: &mut Bench, rt: &tokio::runtime::Runtime, best: TransferMode) -> Res<()> {
    let rows = bench.rows;
    for n in [1u64, 2, 4] {
        for shared in [true, false] {
            if n == 1 && !shared {
                continue;
            }
            bench.restart(&[])?;
            let opts = bench.grpc_options(best, bench.config()?)?;
            let what = if shared { "1 channel" } else { "N channels" };
            let opts = opts.clone();
            bench.measure(rt, format!("{n} streams, {what}"), move || {
                let opts = opts.clone();
                Box::pin(async move {
                    let one = AsyncGrpcConnection::connect_with(&opts).await?;
                    let mut tasks = Vec::new();
                    for i in 0..n {
                        let conn = if shared {
                            one.clone()
                        } else {
                            AsyncGrpcConnection::connect_with(&opts).await?
                        };
                        let range = (rows * i / n, rows * (i + 1) / n);
                        tasks.push(tokio::spawn(async move {
                            grpc_arrow(conn, Some(range))
                                .await
                                .map_err(|e| e.to_string())
                        }));
                    }
                    let mut total = 0;
                    for task in tasks {
                        total += task.await??;
                    }
                    Ok(total)
                })
            })?;
        }
    }
    Ok(())
}

/// hyperd restarted with other message and chunk sizes (global settings:
/// the client cannot choose them per query).
fn server_settings(mut bench: Bench, rt: &tokio::runtime::Runtime, best: TransferMode) -> Res<()> {
    let sets: [&[(&str, &str)]; 5] = [
        &[],
        &[("grpc_persist_results", "false")],
        &[("grpc_result_target_message_size", "1m")],
        &[("grpc_result_target_message_size", "16m")],
        &[("result_target_chunk_size", "64m")],
    ];
    for params in sets {
        bench.restart(params)?;
        let persist = !params.contains(&("grpc_persist_results", "false"));
        let shown: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
        header(&format!(
            "hyperd {}",
            if shown.is_empty() {
                "defaults".to_owned()
            } else {
                shown.join(" ")
            }
        ));
        reference(&mut bench, rt, "PG wire query_arrow (reference)")?;
        for (mode, name) in MODES {
            if mode.needs_persisted_results() && (mode != best || !persist) {
                continue;
            }
            let opts = bench.grpc_options(mode, bench.config()?)?;
            bench.measure(rt, format!("gRPC {name} query_arrow"), || {
                let opts = opts.clone();
                Box::pin(async move {
                    grpc_arrow(AsyncGrpcConnection::connect_with(&opts).await?, None).await
                })
            })?;
        }
    }
    Ok(())
}
