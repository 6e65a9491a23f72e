//! The benchmark suite: every ingest and query path of hyperdb-api against
//! hyperd's own ceilings, measured in the same run, on one schema.
//!
//! ```text
//! cargo run -p hyperdb-api --release --example benchmark_suite -- [ROWS] [WORKERS]
//! make bench        # 2M rows, 2 workers: fits a 2-core machine
//! ```
//!
//! Environment: `BENCH_TRANSPORT=tcp|ipc` (default tcp; ipc = Unix domain
//! socket), `BENCH_REPEAT=K` (a warm-up, then K runs per workload, median
//! reported), `BENCH_FILTER=text` (only workloads whose
//! "workload | variant | flavor" contains it; ceilings always run),
//! `BENCH_OUT_DIR` (default `test_results/` of the repository the suite
//! runs in, found at run time: see `paths.rs`). Writes
//! `benchmark_suite.{md,json}` (tcp) or `benchmark_suite_ipc.{md,json}`.
//! `BENCH_SCALE=1e5,1e6,1e7` runs the scale sweep instead (`sweep.rs`,
//! `make bench-scale`): the headline paths at each size, ROWS ignored,
//! into `benchmark_suite_scale.{md,json,svg}`.
//! Every workload checks its result; a wrong answer exits non-zero and
//! writes nothing. docs/BENCHMARKS.md explains how to read the output.

#[cfg(feature = "arrow")]
mod arrow;
mod ceiling;
mod data;
#[cfg(test)]
mod data_tests;
mod env;
#[cfg(feature = "grpc")]
mod grpc;
mod host;
mod insert;
mod lineitem;
mod lineitem_data;
mod mix;
#[cfg(feature = "arrow")]
mod mix_paths;
mod query;
mod report;
#[cfg(feature = "arrow")]
mod rss;
mod suite;
mod svg;
#[cfg(feature = "arrow")]
mod svg_scale;
#[cfg(feature = "arrow")]
mod sweep;
#[cfg(feature = "arrow")]
mod sweep_report;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use hyperdb_api::{Connection, CreateMode, HyperProcess, HyperProcessOptions, Listen};

use data::Result;
pub use env::Env;

/// Command line and environment.
#[derive(Debug)]
struct Args {
    rows: u64,
    workers: usize,
    transport: &'static str,
    listen: Listen,
    grpc: bool,
    repeat: Option<usize>,
    filter: Option<String>,
    out_dir: PathBuf,
    /// `BENCH_SCALE`: the sweep's sizes, ascending.
    scale: Option<Vec<u64>>,
}

/// `BENCH_SCALE`, parsed; the sweep needs the `arrow` feature.
fn scale_from_env() -> Result<Option<Vec<u64>>> {
    #[cfg(feature = "arrow")]
    return Ok(sweep::from_env()?);
    #[cfg(not(feature = "arrow"))]
    match std::env::var("BENCH_SCALE") {
        Ok(v) if !v.trim().is_empty() => {
            Err("BENCH_SCALE: the sweep needs the `arrow` feature".into())
        }
        _ => Ok(None),
    }
}

impl Args {
    fn parse() -> Result<Args> {
        let mut args = std::env::args().skip(1);
        let num = |s: Option<String>, what: &str, default: u64| -> Result<u64> {
            s.map_or(Ok(default), |s| {
                s.replace(['_', ','], "")
                    .parse()
                    .map_err(|_| format!("{what}: `{s}` is not a number").into())
            })
        };
        let rows = num(args.next(), "ROWS", 10_000_000)?;
        let workers = num(args.next(), "WORKERS", 4)? as usize;
        if !(1_000..=i32::MAX as u64).contains(&rows) {
            return Err("ROWS must be between 1000 and 2^31-1 (ids are INT)".into());
        }
        if !(1..=64).contains(&workers) {
            return Err("WORKERS must be between 1 and 64".into());
        }
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let (transport, listen, grpc) = env::transport()?;
        let repeat = match var("BENCH_REPEAT") {
            None => None,
            Some(k) => match k.parse::<usize>() {
                Ok(k) if k >= 1 => Some(k),
                _ => return Err(format!("BENCH_REPEAT=`{k}`: a count of at least 1").into()),
            },
        };
        Ok(Args {
            rows,
            workers,
            transport,
            listen,
            grpc,
            repeat,
            filter: var("BENCH_FILTER"),
            out_dir: env::paths::out_dir(),
            scale: scale_from_env()?,
        })
    }

    fn command(&self) -> String {
        let mut env = String::new();
        if self.transport != "tcp" {
            env += &format!("BENCH_TRANSPORT={} ", self.transport);
        }
        if let Some(k) = self.repeat {
            env += &format!("BENCH_REPEAT={k} ");
        }
        if let Some(f) = &self.filter {
            env += &format!("BENCH_FILTER='{f}' ");
        }
        if let Some(sizes) = &self.scale {
            let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
            env += &format!("BENCH_SCALE={} ", sizes.join(","));
        }
        format!(
            "{env}cargo run -p hyperdb-api --release --example benchmark_suite -- {} {}",
            self.rows, self.workers
        )
    }

    /// `benchmark_suite` for tcp, `benchmark_suite_ipc` for ipc.
    fn artifact_stem(&self) -> String {
        match self.transport {
            "tcp" => "benchmark_suite".into(),
            t => format!("benchmark_suite_{t}"),
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchmark_suite: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args = Args::parse()?;
    let db = env::data_dir()?.join(format!("{}.hyper", args.artifact_stem()));

    // One server and one runtime per run; the runtime (and every async
    // connection on it) goes before the server.
    let mut options = HyperProcessOptions::default().with_listen(args.listen);
    if args.grpc {
        options = options.with_grpc();
        if grpc::mode()?.0.needs_persisted_results() {
            options = options.with_param("grpc_persist_results", "true");
        }
    }
    let hyper = HyperProcess::new(options)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers.max(2))
        .enable_all()
        .build()?;
    let mut host = host::Host::collect(hyper.hyperd_path(), args.transport);
    let settings = report::Settings {
        rows: args
            .scale
            .as_ref()
            .and_then(|s| s.last().copied())
            .unwrap_or(args.rows),
        workers: args.workers,
        repeat: args.repeat.unwrap_or(1),
        warmup: args.repeat.is_some(),
        command: args.command(),
    };
    println!("hyperdb-api benchmark suite");
    println!("  {}", settings.command);
    println!(
        "  {} rows per workload, {} workers, transport {} ({}), {} run(s) per workload{}",
        args.scale
            .as_ref()
            .map_or(args.rows.to_string(), |s| format!("{s:?}")),
        args.workers,
        args.transport,
        hyper.endpoint(),
        settings.repeat,
        settings.warmup_note()
    );
    println!("Host:");
    for (label, value) in host.fields() {
        println!("  {label}: {value}");
    }

    #[cfg(feature = "arrow")]
    let peaks = sweep::Peaks::default();
    let outcome = (|| {
        let server = hyper.connect_options();
        let mut conn = Connection::connect_with(
            &server
                .clone()
                .with_database(&db, CreateMode::CreateAndReplace),
        )?;
        let mut env = Env {
            conn: &mut conn,
            rt: &rt,
            server: &server,
            db: &db,
            rows: args.rows,
            workers: args.workers,
            grpc: hyper.grpc_endpoint(),
        };
        let mut suite = suite::Suite::new(settings.repeat, settings.warmup, args.filter.clone());
        match &args.scale {
            #[cfg(feature = "arrow")]
            Some(sizes) => sweep::run(&mut suite, &mut env, sizes, &peaks)?,
            _ => suite::run_all(&mut suite, &mut env)?,
        }
        conn.close()?;
        Ok::<_, data::BoxError>(suite.into_records())
    })();

    drop(rt);
    hyper.shutdown(Duration::from_secs(10))?;
    let _ = std::fs::remove_file(&db);
    let mut records = outcome?;
    host.finish();
    let stem = args.out_dir.join(args.artifact_stem());
    #[cfg(feature = "arrow")]
    if let Some(sizes) = &args.scale {
        let [md, json, svg] =
            sweep_report::write(&stem, &host, &settings, &mut records, sizes, &peaks)?;
        println!(
            "wrote {}, {} and {}",
            md.display(),
            json.display(),
            svg.display()
        );
        return Ok(());
    }

    report::fill_percentages(&mut records);
    println!("\n{}", report::table(&records));
    if records.iter().any(|r| r.kind.is_mix()) {
        println!("{}", report::mix_table(&records));
        println!("{}", report::route_table(&report::route_checks(&records)));
    }
    let (md, json) = (stem.with_extension("md"), stem.with_extension("json"));
    report::write(&md, &report::markdown(&host, &settings, &records))?;
    let json_text = serde_json::to_string_pretty(&report::json(&host, &settings, &records))?;
    report::write(&json, &(json_text + "\n"))?;
    let svg_path = stem.with_extension("svg");
    let title = format!(
        "{}: % of hyperd's ceiling, {} rows, {}",
        args.artifact_stem(),
        args.rows,
        args.transport
    );
    report::write(&svg_path, &svg::chart(&title, &svg::bars(&records))?)?;
    println!(
        "wrote {}, {} and {}",
        md.display(),
        json.display(),
        svg_path.display()
    );
    Ok(())
}
