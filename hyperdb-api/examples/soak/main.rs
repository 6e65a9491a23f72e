//! The soak (issue 18): writers and readers on one hyperd, through the
//! fault proxy (`test_support/fault_proxy.rs`), faults injected every
//! couple of seconds, hyperd killed with SIGKILL and started again a few
//! times. At the end every acknowledged row must be there exactly once,
//! no batch in part, no unexpected error (a desync would be one), and the
//! client's RSS and open file descriptors flat.
//!
//! `make soak` (10 minutes, writes `test_results/soak.md`) or
//! `make soak-short` (2 minutes, part of `make test`). Environment:
//! `SOAK_SECONDS` (600), `SOAK_WRITERS` (4), `SOAK_READERS` (2: one sync
//! on `DataRow`s, one async on Arrow, alternately), `SOAK_KILLS` (3),
//! `SOAK_FAULTS` (some of `delay,split,stall-to-server,stall-to-client,
//! cut,reset`; all by default), `SOAK_REPORT` (a file for the Markdown
//! report; stdout always).
//!
//! **Acknowledged** means durable. hyperd 0.0.26963 writes a database's
//! commits to its file only when no session has it attached (measured;
//! DEVELOPMENT.md): a kill loses every commit since the database was last
//! released. So the soak runs in epochs of a few seconds, each ending at a
//! barrier where every worker closes its connection and the coordinator
//! waits until hyperd lists no session; the batches committed on the
//! running hyperd before it are then acknowledged. Batches committed in an
//! epoch a kill cut short must come back whole or not at all.

#[path = "../../test_support/fault_proxy.rs"]
mod fault_proxy;
mod hyperd;
mod work;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use fault_proxy::{socket_addr, Direction, Fault, FaultProxy};
use hyperd::{Server, PASSWORD};
use hyperdb_api::{ConnectOptions, Connection, CreateMode, HyperProcess};
use work::{Phase, Shared, BATCH};

/// One epoch of work between barriers.
const EPOCH: Duration = Duration::from_secs(5);
/// A fault every this often; each lasts at most [`FAULT_LENGTH`].
const FAULT_EVERY: Duration = Duration::from_millis(1500);
const FAULT_LENGTH: Duration = Duration::from_millis(1200);
/// The faults, in turn (`SOAK_FAULTS=delay,split,...` picks some).
const FAULTS: [Fault; 6] = [
    Fault::Delay(Duration::from_millis(3)),
    Fault::Stall(Direction::ToServer),
    Fault::Split,
    Fault::Stall(Direction::ToClient),
    Fault::Cut,
    Fault::Reset,
];
/// Growth allowed between the first and the last sample of the client's
/// resources (generous: allocator caches, thread stacks).
const RSS_SLACK: u64 = 64 << 20;
const FD_SLACK: u64 = 16;

/// The faults `SOAK_FAULTS` names (all by default).
fn faults() -> Vec<Fault> {
    let Ok(names) = std::env::var("SOAK_FAULTS") else {
        return FAULTS.to_vec();
    };
    FAULTS
        .into_iter()
        .filter(|f| {
            let name = match f {
                Fault::Delay(_) => "delay",
                Fault::Split => "split",
                Fault::Stall(Direction::ToServer) => "stall-to-server",
                Fault::Stall(Direction::ToClient) => "stall-to-client",
                Fault::Cut => "cut",
                Fault::Reset => "reset",
                _ => "",
            };
            names.split(',').any(|n| n.trim() == name)
        })
        .collect()
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The client's resident memory and open descriptors.
fn resources() -> (u64, u64) {
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024;
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    (rss, fds)
}

/// Figures for the report.
#[derive(Debug, Default)]
struct Tallies {
    faults: u64,
    kills: u64,
    stuck_sessions: u64,
    clean_restarts: u64,
    epochs: u64,
    samples: Vec<(u64, u64)>,
}

/// How long sessions may take to end at a barrier before they count as
/// stuck (see [`barrier`]).
const SESSIONS_END_WITHIN: Duration = Duration::from_secs(5);

/// The coordinator's side of a barrier: waits for every worker to close
/// its connection, cuts whatever the proxy still holds, and waits until
/// hyperd lists no session but its own; then the batches committed on this
/// hyperd are durable.
///
/// hyperd 0.0.26963 keeps a session whose connection was reset (RST) while
/// it waited for COPY data, forever (measured: a FIN ends it, an RST does
/// not; a cancel request does not either). Such a session keeps the
/// database attached, so nothing would be written again; and it holds the
/// table's lock. When sessions are left after [`SESSIONS_END_WITHIN`],
/// hyperd is therefore shut down cleanly (which writes every commit) and
/// started again: counted as a stuck-session restart in the report.
fn barrier(
    shared: &Shared,
    proxy: &FaultProxy,
    server: &mut Server,
    epoch: u64,
    workers: usize,
    done: bool,
    t: &mut Tallies,
) -> Result<(), String> {
    *shared
        .arrived
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = 0;
    shared.set_phase(Phase::Barrier(epoch));
    let start = Instant::now();
    {
        let mut arrived = shared
            .arrived
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while *arrived < workers {
            if start.elapsed() > Duration::from_secs(120) {
                return Err(format!(
                    "only {} of {workers} workers reached barrier {epoch}",
                    *arrived
                ));
            }
            arrived = shared
                .arrivals
                .wait_timeout(arrived, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
    proxy.set(Fault::Cut);
    let mut c = server
        .connect_direct(shared, proxy)
        .map_err(|e| format!("barrier {epoch}: connecting: {e}"))?;
    let endpoint = server.current()?.endpoint().clone();
    let waiting = Instant::now();
    loop {
        let sessions = c
            .query_scalar::<i64>("SELECT count(*) FROM pg_stat_activity")
            .map_err(|e| format!("barrier {epoch}: {e}{}", server.state()))?;
        if sessions <= 1 {
            let _ = c.close();
            // An attach waits for a release still under way; then it is
            // written.
            let attach = ConnectOptions::new(endpoint)
                .with_password(PASSWORD)
                .with_database(&shared.db, CreateMode::DoNotCreate);
            Connection::connect_with(&attach)
                .and_then(Connection::close)
                .map_err(|e| format!("barrier {epoch}: attaching: {e}"))?;
            break;
        }
        if waiting.elapsed() > SESSIONS_END_WITHIN {
            eprintln!(
                "barrier {epoch}: {} sessions left ({}); restarting hyperd cleanly",
                sessions - 1,
                sessions_list(&mut c)
            );
            let _ = c.close();
            t.stuck_sessions += sessions as u64 - 1;
            t.clean_restarts += 1;
            server
                .restart_cleanly(proxy)
                .map_err(|e| format!("barrier {epoch}: {e}"))?;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let generation = shared.generation.load(Ordering::SeqCst);
    let mut acked_rows = 0;
    for commits in shared
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values_mut()
    {
        for commit in commits
            .iter_mut()
            .filter(|c| !c.acked && c.generation == generation)
        {
            commit.acked = true;
            acked_rows += BATCH as u64;
        }
    }
    shared
        .counters
        .rows_acked
        .fetch_add(acked_rows, Ordering::Relaxed);
    if !done {
        shared.set_phase(Phase::Running(epoch + 1));
    }
    Ok(())
}

/// What hyperd lists in `pg_stat_activity`, for an error message.
fn sessions_list(c: &mut Connection) -> String {
    let sql = "SELECT procpid::TEXT, application_name, state, client_port::TEXT, current_query \
               FROM pg_stat_activity";
    let rows = match c.execute_query_params(sql, &[]) {
        Ok(rows) => rows,
        Err(e) => return format!("(listing them failed: {e})"),
    };
    let mut list = Vec::new();
    for row in rows {
        match row {
            Ok(r) => list.push(
                (0..5)
                    .map(|i| {
                        r.try_get::<Option<String>>(i)
                            .ok()
                            .flatten()
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Err(e) => list.push(format!("(error: {e})")),
        }
    }
    list.join("; ")
}

/// Reads back every writer's batches and checks them against the ledger.
struct Verdict {
    acked_rows: u64,
    lost_rows: u64,
    partial_batches: u64,
    duplicate_rows: u64,
    unacked_whole: u64,
    killed_commits_back: u64,
    killed_commits_gone: u64,
}

fn verify(shared: &Shared, server: &HyperProcess, db: &Path) -> Result<Verdict, String> {
    let options = server
        .connect_options()
        .with_database(db, CreateMode::DoNotCreate);
    let mut c = Connection::connect_with(&options).map_err(|e| format!("verify: {e}"))?;
    let sql = "SELECT writer, batch, count(*), count(DISTINCT seq), min(seq), max(seq) \
               FROM soak GROUP BY writer, batch";
    let mut stored: BTreeMap<(i32, i64), (i64, i64, i64, i64)> = BTreeMap::new();
    let rows = c.execute_query(sql).map_err(|e| format!("verify: {e}"))?;
    for row in rows {
        let read = row.and_then(|r| {
            Ok((
                (r.try_get(0)?, r.try_get(1)?),
                (r.try_get(2)?, r.try_get(3)?, r.try_get(4)?, r.try_get(5)?),
            ))
        });
        let (key, value) = read.map_err(|e| format!("verify: {e}"))?;
        stored.insert(key, value);
    }
    let mut v = Verdict {
        acked_rows: 0,
        lost_rows: 0,
        partial_batches: 0,
        duplicate_rows: 0,
        unacked_whole: 0,
        killed_commits_back: 0,
        killed_commits_gone: 0,
    };
    for (&(w, batch), &(n, distinct, min, max)) in &stored {
        let whole =
            n == BATCH && distinct == BATCH && min == batch * BATCH && max == min + BATCH - 1;
        if !whole {
            if n > distinct {
                v.duplicate_rows += (n - distinct) as u64;
            } else {
                v.partial_batches += 1;
            }
            shared.unexpected(format!(
                "writer {w} batch {batch}: {n} rows, {distinct} sequence numbers, {min}..={max}"
            ));
        }
    }
    let ledger = shared.ledger.lock().unwrap_or_else(PoisonError::into_inner);
    let mut known = std::collections::BTreeSet::new();
    for (&w, commits) in ledger.iter() {
        for commit in commits {
            known.insert((w, commit.batch));
            let present = stored.contains_key(&(w, commit.batch));
            match (commit.acked, present) {
                (true, true) => v.acked_rows += BATCH as u64,
                (true, false) => {
                    v.lost_rows += BATCH as u64;
                    shared.unexpected(format!(
                        "writer {w} batch {}: acknowledged, not stored",
                        commit.batch
                    ));
                }
                (false, true) => v.killed_commits_back += 1,
                (false, false) => v.killed_commits_gone += 1,
            }
        }
    }
    // Batches stored that no writer saw committed: a commit whose reply
    // was lost and that the writer then found stored is in the ledger, so
    // these can only be whole batches from a lookup that raced the end.
    v.unacked_whole = stored.keys().filter(|k| !known.contains(k)).count() as u64;
    let _ = c.close();
    Ok(v)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, String> {
    let seconds = env("SOAK_SECONDS", 600);
    let writers = env("SOAK_WRITERS", 4) as i32;
    let readers = env("SOAK_READERS", 2) as usize;
    let kills = env("SOAK_KILLS", 3);
    let duration = Duration::from_secs(seconds);

    let dir = tempfile::Builder::new()
        .prefix("hyperdb-soak-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let db = dir.path().join("soak.hyper");
    let mut server = Server::start()?;
    {
        let mut c = Connection::connect_with(
            &server
                .current()?
                .connect_options()
                .with_database(&db, CreateMode::Create),
        )
        .map_err(|e| format!("creating the database: {e}"))?;
        c.execute_command(
            &work::table()
                .create_table_sql(false)
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        c.close().map_err(|e| e.to_string())?;
    }
    let upstream = socket_addr(server.current()?.endpoint()).map_err(|e| e.to_string())?;
    let proxy = FaultProxy::start(upstream).map_err(|e| format!("fault proxy: {e}"))?;
    let shared = Arc::new(Shared {
        phase: Mutex::new(Phase::Running(0)),
        changed: Condvar::new(),
        arrived: Mutex::new(0),
        arrivals: Condvar::new(),
        generation: AtomicU64::new(0),
        proxy_endpoint: proxy.endpoint(),
        db: db.clone(),
        ledger: Mutex::new(BTreeMap::new()),
        unexpected: Mutex::new(Vec::new()),
        counters: work::Counters::default(),
    });
    let mut threads = Vec::new();
    for w in 0..writers {
        let shared = Arc::clone(&shared);
        threads.push(std::thread::spawn(move || work::writer(shared, w)));
    }
    for r in 0..readers {
        let shared = Arc::clone(&shared);
        threads.push(std::thread::spawn(move || {
            if r % 2 == 0 {
                work::reader(shared, r);
            } else {
                work::async_reader(shared, r);
            }
        }));
    }
    let workers = threads.len();

    // Kills at even spacing, each a little into its epoch.
    let kill_at: Vec<Duration> = (1..=kills)
        .map(|k| duration * k as u32 / (kills as u32 + 1))
        .collect();
    let faults = faults();
    let began = Instant::now();
    let mut t = Tallies::default();
    let mut epoch = 0u64;
    let mut next_fault = began + FAULT_EVERY;
    loop {
        let epoch_start = Instant::now();
        while epoch_start.elapsed() < EPOCH {
            let now = Instant::now();
            if now >= next_fault && !faults.is_empty() {
                let fault = faults[(t.faults % faults.len() as u64) as usize];
                proxy.set(fault);
                if !matches!(fault, Fault::Cut | Fault::Reset) {
                    std::thread::sleep(FAULT_LENGTH);
                    // A stall ends as a dead link does: the connections it
                    // held are closed, never delivered late.
                    proxy.set(if matches!(fault, Fault::Stall(_)) {
                        Fault::Cut
                    } else {
                        Fault::None
                    });
                }
                t.faults += 1;
                next_fault = Instant::now() + FAULT_EVERY;
            }
            if kill_at
                .get(t.kills as usize)
                .is_some_and(|at| began.elapsed() >= *at)
            {
                server.kill_and_restart(&shared, &proxy)?;
                t.kills += 1;
                eprintln!("killed and restarted hyperd ({} of {kills})", t.kills);
            }
            server.restart_if_aborted(&shared, &proxy)?;
            std::thread::sleep(Duration::from_millis(20));
        }
        let done = began.elapsed() >= duration;
        barrier(&shared, &proxy, &mut server, epoch, workers, done, &mut t)?;
        t.epochs += 1;
        t.samples.push(resources());
        let c = &shared.counters;
        eprintln!(
            "epoch {epoch}: {:.0} s, {} rows acknowledged, {} faults, {} kills, {} reads",
            began.elapsed().as_secs_f64(),
            c.rows_acked.load(Ordering::Relaxed),
            t.faults,
            t.kills,
            c.reads.load(Ordering::Relaxed)
        );
        if done {
            break;
        }
        epoch += 1;
    }
    let elapsed = began.elapsed();
    shared.set_phase(Phase::Done);
    for thread in threads {
        if thread.join().is_err() {
            shared.unexpected("a worker panicked".to_owned());
        }
    }
    let verdict = verify(&shared, server.current()?, &db)?;
    report(
        &shared,
        &t,
        server.aborts,
        &verdict,
        elapsed,
        writers,
        readers,
    )
}

fn report(
    shared: &Shared,
    t: &Tallies,
    aborts: u64,
    v: &Verdict,
    elapsed: Duration,
    writers: i32,
    readers: usize,
) -> Result<bool, String> {
    let c = &shared.counters;
    let unexpected = shared
        .unexpected
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    // Resources from the second barrier on (the first includes warm-up).
    let first = t
        .samples
        .get(1)
        .or(t.samples.first())
        .copied()
        .unwrap_or_default();
    let last = t.samples.last().copied().unwrap_or_default();
    let peak = t
        .samples
        .iter()
        .skip(1)
        .fold((0, 0), |m, s| (m.0.max(s.0), m.1.max(s.1)));
    let rss_flat = last.0 <= first.0 + RSS_SLACK;
    let fds_flat = last.1 <= first.1 + FD_SLACK;
    let ok = unexpected.is_empty()
        && v.lost_rows == 0
        && v.partial_batches == 0
        && v.duplicate_rows == 0
        && rss_flat
        && fds_flat
        && v.acked_rows > 0;
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    let mut md = String::new();
    md.push_str(&format!(
        "# Soak: {} ({:.0} s, {writers} writers, {readers} readers)\n\n",
        if ok { "passed" } else { "FAILED" },
        elapsed.as_secs_f64()
    ));
    md.push_str("Generated by `make soak` (`hyperdb-api/examples/soak/`); see DEVELOPMENT.md, \"Fault campaign\".\n\n");
    md.push_str("| figure | value |\n|---|---|\n");
    let rows = [
        (
            "acknowledged rows (durable, checked present once)",
            v.acked_rows.to_string(),
        ),
        (
            "acknowledged rows/s",
            format!("{:.0}", v.acked_rows as f64 / elapsed.as_secs_f64()),
        ),
        (
            "**rows lost** (acknowledged, not stored)",
            v.lost_rows.to_string(),
        ),
        ("batches stored in part", v.partial_batches.to_string()),
        ("rows stored twice", v.duplicate_rows.to_string()),
        (
            "unexpected errors (desync, wrong results, ...)",
            unexpected.len().to_string(),
        ),
        ("faults injected and survived", t.faults.to_string()),
        ("hyperd killed (SIGKILL) and restarted", t.kills.to_string()),
        (
            "hyperd aborts on a reset during its handshake (its bug), restarted",
            aborts.to_string(),
        ),
        (
            "sessions hyperd kept after an RST mid-COPY / clean restarts to end them",
            format!("{} / {}", t.stuck_sessions, t.clean_restarts),
        ),
        (
            "epochs (barriers: every session closed)",
            t.epochs.to_string(),
        ),
        (
            "batches committed",
            c.batches_committed.load(Ordering::Relaxed).to_string(),
        ),
        (
            "commits a kill cut short (not yet released): gone / back whole",
            format!("{} / {}", v.killed_commits_gone, v.killed_commits_back),
        ),
        (
            "whole batches stored that no writer saw committed",
            v.unacked_whole.to_string(),
        ),
        (
            "commits whose reply was lost, then found stored",
            c.late_acks.load(Ordering::Relaxed).to_string(),
        ),
        (
            "batches retried after a failure (found absent)",
            c.retries.load(Ordering::Relaxed).to_string(),
        ),
        (
            "errors a fault or kill explains (closed, timeout, refused)",
            c.expected_errors.load(Ordering::Relaxed).to_string(),
        ),
        (
            "connections opened by writers",
            c.reconnects.load(Ordering::Relaxed).to_string(),
        ),
        (
            "consistency reads",
            c.reads.load(Ordering::Relaxed).to_string(),
        ),
        (
            "client RSS, MiB: second barrier / end / peak",
            format!(
                "{:.1} / {:.1} / {:.1}",
                mib(first.0),
                mib(last.0),
                mib(peak.0)
            ),
        ),
        (
            "client open fds: second barrier / end / peak",
            format!("{} / {} / {}", first.1, last.1, peak.1),
        ),
    ];
    for (name, value) in rows {
        md.push_str(&format!("| {name} | {value} |\n"));
    }
    if !unexpected.is_empty() {
        md.push_str("\nUnexpected:\n\n");
        for u in unexpected.iter().take(20) {
            md.push_str(&format!("- {u}\n"));
        }
    }
    print!("{md}");
    if let Ok(path) = std::env::var("SOAK_REPORT") {
        std::fs::write(&path, &md).map_err(|e| format!("writing {path}: {e}"))?;
    }
    Ok(ok)
}
