//! The workload list, in run order, and the runner that repeats, times and
//! logs it.
//!
//! Workloads run in groups: the inserts with their ceiling, then per query
//! its two ceilings and every API over it. Within a group, runs are
//! interleaved (round 1 of every workload, then round 2, ...), so that load
//! from elsewhere on the machine spreads over a workload and the ceiling it
//! is read against instead of skewing one of them.

use std::time::Instant;

use crate::ceiling::{self, Drain};
use crate::data::{self, Answer, Query, Result};
use crate::report::{Kind, Record};
use crate::{insert, query, Env};

/// What one execution returns: seconds timed, and the rows of its result.
type Run = (f64, u64);

/// One execution of a workload: its own untimed setup and verification,
/// returning only the timed seconds.
type Exec<'p> = Box<dyn FnMut(&mut Env<'_>) -> Result<Run> + 'p>;

/// Each run executes a workload until it has been timed this long...
const MIN_RUN_SECS: f64 = 0.25;
/// ...or this many times.
const MAX_EXECUTIONS: usize = 10;

/// A workload of a group, with its results so far.
pub(crate) struct Item<'p> {
    pub(crate) kind: Kind,
    names: [String; 3],
    exec: Exec<'p>,
    runs: Vec<f64>,
    result_rows: u64,
}

impl Item<'_> {
    fn label(&self) -> String {
        self.names.join(" | ")
    }
}

/// Runs groups of workloads and collects their records.
#[derive(Debug)]
pub struct Suite {
    repeat: usize,
    warmup: bool,
    filter: Option<String>,
    started: Instant,
    records: Vec<Record>,
}

impl Suite {
    pub fn new(repeat: usize, warmup: bool, filter: Option<String>) -> Suite {
        Suite {
            repeat,
            warmup,
            filter,
            started: Instant::now(),
            records: Vec::new(),
        }
    }

    pub fn into_records(self) -> Vec<Record> {
        self.records
    }

    pub(crate) fn log(&self, line: &str) {
        eprintln!("[{:7.1}s] {line}", self.started.elapsed().as_secs_f64());
    }

    /// Adds a workload to `group` unless `BENCH_FILTER` leaves it out
    /// (ceilings always stay).
    pub(crate) fn add<'p>(
        &self,
        group: &mut Vec<Item<'p>>,
        kind: Kind,
        names: [&str; 3],
        exec: impl FnMut(&mut Env<'_>) -> Result<Run> + 'p,
    ) {
        let names = names.map(str::to_owned);
        if let Some(filter) = &self.filter {
            if !kind.is_ceiling() && !names.join(" | ").contains(filter.as_str()) {
                return;
            }
        }
        group.push(Item {
            kind,
            names,
            exec: Box::new(exec),
            runs: Vec::new(),
            result_rows: 0,
        });
    }

    /// Whether `BENCH_FILTER` keeps the workload labelled `label`
    /// ("workload | variant | flavor"), so untimed preparation for
    /// workloads it leaves out can be skipped.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn keeps(&self, label: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| label.contains(f))
    }

    /// A warm-up round when asked, then `repeat` rounds over the group;
    /// records every workload's times. A group that `BENCH_FILTER` left
    /// with ceilings only is skipped.
    pub(crate) fn run(&mut self, env: &mut Env<'_>, group: Vec<Item<'_>>) -> Result<()> {
        self.run_with(env, group, Executions::Batched(MAX_EXECUTIONS))
    }

    /// [`Suite::run`], executing each run's workloads as `how` says.
    fn run_with(
        &mut self,
        env: &mut Env<'_>,
        mut group: Vec<Item<'_>>,
        how: Executions,
    ) -> Result<()> {
        if self.filter.is_some() && group.iter().all(|i| i.kind.is_ceiling()) {
            return Ok(());
        }
        let rounds = self.repeat + usize::from(self.warmup);
        for round in 0..rounds {
            let warmup = self.warmup && round == 0;
            let tag = if warmup {
                "warm-up".to_owned()
            } else {
                format!(
                    "run {}/{}",
                    round + 1 - usize::from(self.warmup),
                    self.repeat
                )
            };
            // A short workload is executed again within the run until it
            // has been timed for MIN_RUN_SECS: one execution of a 10 ms
            // query says more about the scheduler than the query.
            let wants_more = |timed: &[f64], max: usize, secs: f64| {
                // A warm-up executes each workload once.
                (!warmup || timed.is_empty())
                    && timed.len() < max
                    && timed.iter().sum::<f64>() < secs
            };
            let mut timed = vec![Vec::new(); group.len()];
            match how {
                Executions::Batched(max) => {
                    for (item, timed) in group.iter_mut().zip(&mut timed) {
                        self.log(&format!("start {} ({tag})", item.label()));
                        while wants_more(timed, max, MIN_RUN_SECS) {
                            timed.push(execute(item, env, &tag)?);
                        }
                        self.log_done(env, item, &tag, timed);
                    }
                }
                Executions::Interleaved { max, secs } => {
                    let name = group.first().map_or("", |i| i.names[0].as_str());
                    self.log(&format!("start {name} ({tag}, interleaved)"));
                    // Each pass starts one workload further on, so that no
                    // path always runs right after the same neighbour (a
                    // drain, a path on another route): where a pass starts
                    // is not part of any path's figure.
                    let n = group.len();
                    let mut pass = 0;
                    while timed.iter().any(|t| wants_more(t, max, secs)) {
                        for i in (0..n).map(|k| (pass + k) % n) {
                            if wants_more(&timed[i], max, secs) {
                                timed[i].push(execute(&mut group[i], env, &tag)?);
                            }
                        }
                        pass += 1;
                    }
                    for (item, timed) in group.iter().zip(&timed) {
                        self.log_done(env, item, &tag, timed);
                    }
                }
            }
            if !warmup {
                for (item, timed) in group.iter_mut().zip(timed) {
                    item.runs.extend(timed);
                }
            }
        }
        for item in group {
            self.records.push(Record {
                kind: item.kind,
                workload: item.names[0].clone(),
                variant: item.names[1].clone(),
                flavor: item.names[2].clone(),
                rows: env.rows,
                result_rows: item.result_rows,
                runs: item.runs,
                pct_insert: None,
                pct_copy: None,
                pct_row: None,
                pct_arrow: None,
            });
        }
        Ok(())
    }

    fn log_done(&self, env: &Env<'_>, item: &Item<'_>, tag: &str, timed: &[f64]) {
        let median = median(&mut timed.to_vec());
        let rate = if item.kind.is_mix() {
            format!("{:.3} ms", median * 1e3)
        } else {
            format!("{:.2} M rows/s", env.rows as f64 / median / 1e6)
        };
        self.log(&format!(
            "done  {} ({tag}): {median:.3} s, {rate}, verified",
            item.label()
        ));
    }
}

/// How a run executes its group's workloads.
#[derive(Clone, Copy, Debug)]
enum Executions {
    /// Each workload's executions back to back, at most this many.
    Batched(usize),
    /// One execution of each workload in turn, until each has been timed
    /// for `secs` or executed `max` times: paths read against each other
    /// see the same load.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    Interleaved { max: usize, secs: f64 },
}

/// One execution of `item`, its errors labelled.
fn execute(item: &mut Item<'_>, env: &mut Env<'_>, tag: &str) -> Result<f64> {
    let (secs, rows) = (item.exec)(env).map_err(|e| format!("{} ({tag}): {e}", item.label()))?;
    item.result_rows = rows;
    Ok(secs)
}

fn median(t: &mut [f64]) -> f64 {
    t.sort_by(f64::total_cmp);
    t.get(t.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Every workload, in order: inserts and their ceiling, then per query its
/// two ceilings and every API over it.
pub fn run_all(suite: &mut Suite, env: &mut Env<'_>) -> Result<()> {
    let rows = env.rows;
    let w = env.workers;
    let xn = format!("async x{w}");
    let ins = |f: fn(&mut Env<'_>) -> Result<f64>| move |env: &mut Env<'_>| Ok((f(env)?, rows));

    #[cfg(feature = "arrow")]
    let prepared = {
        suite.log("building record batches (untimed)");
        crate::arrow::Prepared::new(env.span(), w)?
    };
    let mut group = Vec::new();
    let names = [
        "insert.ceiling",
        "INSERT ... SELECT generate_series",
        "server",
    ];
    suite.add(&mut group, Kind::InsertCeiling, names, |env| {
        Ok((ceiling::insert(env.conn, "measurements", env.span())?, rows))
    });
    #[cfg(feature = "arrow")]
    {
        let mut file = None;
        let names = [
            "insert.arrow_copy_ceiling",
            "COPY FROM a server-side Arrow file",
            "server",
        ];
        suite.add(&mut group, Kind::ArrowCopyCeiling, names, move |env| {
            let f = ceiling::ArrowFile::once(&mut file, env.db, env.span(), crate::arrow::batches)?;
            let secs = f.copy_into::<data::Measurements>(env.conn, "measurements", env.span())?;
            Ok((secs, rows))
        });
    }
    #[cfg(feature = "arrow")]
    {
        let names = ["insert.bulk", "Inserter", "sync, Arrow (default)"];
        suite.add(&mut group, Kind::Insert, names, |env| {
            let format = hyperdb_api::InsertFormat::ArrowStream;
            Ok((insert::inserter(env, format)?, rows))
        });
    }
    let names = ["insert.bulk", "Inserter", "sync, HyperBinary"];
    suite.add(&mut group, Kind::Insert, names, |env| {
        let format = hyperdb_api::InsertFormat::HyperBinary;
        Ok((insert::inserter(env, format)?, rows))
    });
    let encoders = format!("sync, {w} encoder threads");
    let names = ["insert.bulk", "ChunkSender::send_parallel", &encoders];
    suite.add(&mut group, Kind::Insert, names, ins(insert::chunk_sender));
    #[cfg(feature = "arrow")]
    {
        use crate::arrow;
        let p = &prepared;
        let names = ["insert.bulk", "ArrowInserter", "sync"];
        suite.add(&mut group, Kind::Insert, names, move |env| {
            Ok((arrow::sync_insert(env, p)?, rows))
        });
        let names = ["insert.bulk", "AsyncArrowInserter", "async"];
        suite.add(&mut group, Kind::Insert, names, move |env| {
            Ok((arrow::async_insert(env, p)?, rows))
        });
        let names = ["insert.bulk", "AsyncArrowInserter", &xn];
        suite.add(&mut group, Kind::Insert, names, move |env| {
            Ok((arrow::parallel_async_insert(env, p)?, rows))
        });
    }
    let names = ["insert.bulk", "AsyncChunkSender + spawn_blocking", &xn];
    suite.add(
        &mut group,
        Kind::Insert,
        names,
        ins(insert::async_chunk_senders),
    );
    suite.run(env, group)?;
    #[cfg(feature = "arrow")]
    drop(prepared);

    // `BENCH_FILTER=query.mix` runs the mix alone: nothing above or below
    // but it is left, so the scan tables need not be made.
    let mix_only = suite
        .filter
        .as_deref()
        .is_some_and(|f| f.contains("query.mix"));
    if !mix_only {
        prepare_scan_tables(suite, env)?;
    }

    let db = env.db.to_string_lossy().into_owned();
    for q in Query::ALL {
        let expect = q.expected(env.span()).result_rows();
        let workload = format!("query.{}", q.name());
        let mut group = Vec::new();
        for (kind, name, flavor, how) in [
            (
                Kind::RowCeiling(q),
                "query.row_ceiling",
                "DataRow drain",
                Drain::Rows,
            ),
            (
                Kind::ArrowCeiling(q),
                "query.ceiling",
                "Arrow IPC drain",
                Drain::Arrow,
            ),
        ] {
            let db = &db;
            suite.add(&mut group, kind, [name, q.name(), flavor], move |env| {
                let secs = ceiling::drain(env.server.config(), db, "measurements", q, how, expect)?;
                Ok((secs, expect))
            });
        }
        let api = |f: fn(&mut Env<'_>, Query) -> Result<(f64, Answer)>| {
            move |env: &mut Env<'_>| f(env, q).map(|(s, a)| (s, a.result_rows()))
        };
        #[cfg(feature = "grpc")]
        if env.grpc.is_some() {
            // Every query workload over gRPC; the table says so.
            let mode = crate::grpc::mode()?.1;
            for (kind, variant, arrow) in [
                (Kind::RowQuery(q), "execute_query", false),
                (Kind::ArrowQuery(q), "query_arrow", true),
            ] {
                let sync = format!("gRPC {mode}, sync");
                suite.add(
                    &mut group,
                    kind,
                    [workload.as_str(), variant, &sync],
                    move |env| crate::grpc::sync(env, q, arrow).map(|(s, a)| (s, a.result_rows())),
                );
                let single = format!("gRPC {mode}, async");
                suite.add(
                    &mut group,
                    kind,
                    [workload.as_str(), variant, &single],
                    move |env| {
                        crate::grpc::async_on(env, q, 1, arrow).map(|(s, a)| (s, a.result_rows()))
                    },
                );
                let many = format!("gRPC {mode}, {xn}");
                suite.add(
                    &mut group,
                    kind,
                    [workload.as_str(), variant, &many],
                    move |env| {
                        let n = env.workers;
                        crate::grpc::async_on(env, q, n, arrow).map(|(s, a)| (s, a.result_rows()))
                    },
                );
            }
            suite.run(env, group)?;
            continue;
        }
        let kind = Kind::RowQuery(q);
        let names = [workload.as_str(), "execute_query", "sync"];
        suite.add(&mut group, kind, names, api(query::sync));
        let names = [workload.as_str(), "execute_query_params", "sync, DataRows"];
        suite.add(&mut group, kind, names, api(query::sync_data_rows));
        let names = [
            workload.as_str(),
            "execute_query_params",
            "sync, DataRows, owned rows",
        ];
        suite.add(&mut group, kind, names, api(query::sync_data_rows_owned));
        let names = [
            workload.as_str(),
            "execute_query_params + typed",
            "sync, DataRows, tuples",
        ];
        suite.add(&mut group, kind, names, api(query::sync_data_rows_typed));
        let names = [workload.as_str(), "execute_query", "async"];
        suite.add(&mut group, kind, names, api(query::single_async));
        let names = [workload.as_str(), "execute_query", &xn];
        suite.add(&mut group, kind, names, api(query::parallel_async));
        #[cfg(feature = "arrow")]
        {
            use crate::arrow;
            let kind = Kind::ArrowQuery(q);
            let names = [workload.as_str(), "query_arrow", "sync"];
            suite.add(&mut group, kind, names, api(arrow::sync_query));
            let names = [workload.as_str(), "query_arrow", "async"];
            suite.add(&mut group, kind, names, api(arrow::async_query));
            let names = [workload.as_str(), "query_arrow", &xn];
            suite.add(&mut group, kind, names, api(arrow::parallel_async_query));
        }
        suite.run(env, group)?;
    }
    if env.grpc.is_none() && !mix_only {
        crate::lineitem::run(suite, env)?;
    }
    #[cfg(feature = "arrow")]
    if env.grpc.is_none() {
        run_mix(suite, env)?;
    }
    Ok(())
}

/// A mix workload is executed per run until timed this long, or this many
/// times: more executions than elsewhere, as routes within 5 % of each
/// other are told apart by their medians, and the p95 needs them.
#[cfg(feature = "arrow")]
const MIX_RUN_SECS: f64 = 0.5;
#[cfg(feature = "arrow")]
const MIX_MAX_EXECUTIONS: usize = 20;

/// `query.mix.*`: per query, its two drains and every read path, over the
/// mix's tables (made server-side, untimed). Not over gRPC, whose reads
/// have no routes.
#[cfg(feature = "arrow")]
fn run_mix(suite: &mut Suite, env: &mut Env<'_>) -> Result<()> {
    use std::cell::RefCell;

    use crate::ceiling::RawConn;
    use crate::mix::{self, MixPath, MixQuery};
    use crate::mix_paths::{self, AsyncRun};

    if let Some(filter) = &suite.filter {
        if !filter.contains("query.mix")
            && !MixPath::ALL.iter().any(|p| {
                let (v, f) = p.names();
                v.contains(filter.as_str()) || f.contains(filter.as_str())
            })
        {
            return Ok(());
        }
    }
    suite.log("making the query mix's tables server-side (untimed)");
    mix::create_tables(env.conn, env.rows)?;
    let db = env.db.to_string_lossy().into_owned();
    let (server, rt, db_path) = (env.server, env.rt, env.db);
    let asyncs = RefCell::new(AsyncRun {
        rt,
        open: Box::new(move || {
            let options = server
                .clone()
                .with_database(db_path, hyperdb_api::CreateMode::DoNotCreate);
            Ok(rt.block_on(hyperdb_api::AsyncConnection::connect_with(&options))?)
        }),
        conn: None,
    });
    for q in MixQuery::ALL {
        let sql = q.sql(env.rows)?;
        let want = q.expected(env.conn, env.rows)?;
        let workload = format!("query.mix.{}", q.name());
        let mut group = Vec::new();
        for (kind, name, flavor, how) in [
            (
                Kind::MixRowCeiling(q),
                "query.mix.row_ceiling",
                "DataRow drain",
                Drain::Rows,
            ),
            (
                Kind::MixArrowCeiling(q),
                "query.mix.ceiling",
                "Arrow IPC drain",
                Drain::Arrow,
            ),
        ] {
            let (db, sql) = (&db, &sql);
            let mut raw: Option<RawConn> = None;
            suite.add(&mut group, kind, [name, q.name(), flavor], move |env| {
                let raw = match &mut raw {
                    Some(raw) => raw,
                    None => raw.insert(RawConn::open(env.server.config(), db)?),
                };
                let drained = raw.drain(sql, how)?;
                drained.expect_rows(want.rows)?;
                Ok((drained.secs, want.rows))
            });
        }
        for path in MixPath::ALL {
            let (variant, flavor) = path.names();
            let (sql, asyncs) = (&sql, &asyncs);
            suite.add(
                &mut group,
                Kind::Mix(q, path),
                [workload.as_str(), variant, flavor],
                move |env| {
                    let mut asyncs = asyncs.borrow_mut();
                    let secs = mix_paths::run(path, env.conn, &mut asyncs, q, sql, &want)?;
                    Ok((secs, want.rows))
                },
            );
        }
        let how = Executions::Interleaved {
            max: MIX_MAX_EXECUTIONS,
            secs: MIX_RUN_SECS,
        };
        suite.run_with(env, group, how)?;
    }
    let closed = asyncs.borrow_mut().close();
    closed
}

/// Rebuilds `measurements` and the per-worker `measurements_{i}` server-side
/// (the insert workloads leave them in whatever state they wrote), so every
/// query reads the same data, made without the client.
fn prepare_scan_tables(suite: &Suite, env: &mut Env<'_>) -> Result<()> {
    suite.log("preparing the scan tables server-side (untimed)");
    let mut tables = vec![("measurements".to_owned(), env.span())];
    for (i, part) in env.span().split(env.workers).into_iter().enumerate() {
        tables.push((data::worker_table(i), part));
    }
    for (name, span) in tables {
        prepare_scan_table(env, &name, span)?;
    }
    Ok(())
}

/// Makes `name` server-side with the rows of `span`, checks it, and reads
/// it once, untimed.
pub fn prepare_scan_table(env: &mut Env<'_>, name: &str, span: data::Span) -> Result<()> {
    data::recreate(env.conn, name)?;
    env.conn.execute_command(&data::generate_sql(name, span)?)?;
    data::verify_table(env.conn, name, span)?;
    // One untimed read of every column, so that no timed run pays for
    // a cold table.
    let db = env.db.to_string_lossy().into_owned();
    ceiling::drain(
        env.server.config(),
        &db,
        name,
        Query::FullScan,
        Drain::Arrow,
        span.len(),
    )?;
    Ok(())
}
