//! The soak's workers: writers that insert numbered batches and keep a
//! ledger of what was committed, and readers that check, while all this
//! goes on, that no batch is ever seen in part.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hyperdb_api::arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use hyperdb_api::types::SqlType;
use hyperdb_api::{
    ArrowInserter, AsyncConnection, ConnectOptions, Connection, CreateMode, Error, InsertFormat,
    Inserter, TableDefinition,
};

/// Rows per batch; a batch is one transaction.
pub const BATCH: i64 = 1000;
/// Every statement's query timeout: a stall is over it.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failed connection's server session may take to end.
const SESSION_END_WAIT: Duration = Duration::from_secs(60);

pub fn table() -> TableDefinition {
    TableDefinition::new("soak")
        .with_not_null_column("writer", SqlType::Int)
        .with_not_null_column("batch", SqlType::BigInt)
        .with_not_null_column("seq", SqlType::BigInt)
        .with_column("payload", SqlType::Text)
}

/// Where the workers are: working in an epoch, at the barrier that ends
/// one, or done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Running(u64),
    Barrier(u64),
    Done,
}

/// A committed batch, tagged with the hyperd generation its connection
/// was opened in (a kill starts a new generation).
#[derive(Clone, Copy, Debug)]
pub struct Commit {
    pub batch: i64,
    pub generation: u64,
    /// Durable: a barrier (every session closed) came after it on the
    /// same hyperd.
    pub acked: bool,
}

#[derive(Debug, Default)]
pub struct Counters {
    pub rows_acked: AtomicU64,
    pub batches_committed: AtomicU64,
    pub late_acks: AtomicU64,
    pub retries: AtomicU64,
    pub reconnects: AtomicU64,
    pub expected_errors: AtomicU64,
    pub reads: AtomicU64,
}

/// What every thread shares.
#[derive(Debug)]
pub struct Shared {
    pub phase: Mutex<Phase>,
    pub changed: Condvar,
    /// Workers at the current barrier, with their connections closed.
    pub arrived: Mutex<usize>,
    pub arrivals: Condvar,
    pub generation: AtomicU64,
    pub proxy_endpoint: hyperdb_api::Endpoint,
    pub db: std::path::PathBuf,
    pub ledger: Mutex<BTreeMap<i32, Vec<Commit>>>,
    pub unexpected: Mutex<Vec<String>>,
    pub counters: Counters,
}

impl Shared {
    pub fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn set_phase(&self, phase: Phase) {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner) = phase;
        self.changed.notify_all();
    }

    /// Called by a worker at a barrier (connection closed): waits for
    /// the next epoch; `false` when the soak is over.
    fn arrive_and_wait(&self, epoch: u64) -> bool {
        *self.arrived.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.arrivals.notify_all();
        let mut phase = self.phase.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match *phase {
                Phase::Running(e) if e > epoch => return true,
                Phase::Done => return false,
                _ => {}
            }
            phase = self
                .changed
                .wait(phase)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    pub fn unexpected(&self, what: String) {
        eprintln!("UNEXPECTED: {what}");
        self.unexpected
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(what);
    }

    /// An error a fault or a kill explains (the connection lost, a
    /// timeout, its cancel), counted; any other is a failure of the soak.
    fn failed(&self, who: &str, e: &Error) {
        if e.is_closed()
            || e.is_timeout()
            || e.is_cancelled()
            || e.kind().is_some_and(|k| k == hyperdb_api::ErrorKind::Io)
        {
            self.counters
                .expected_errors
                .fetch_add(1, Ordering::Relaxed);
        } else {
            self.unexpected(format!("{who}: {e:?}"));
        }
    }

    fn options(&self, name: &str) -> ConnectOptions {
        ConnectOptions::new(self.proxy_endpoint.clone())
            .with_password(crate::hyperd::PASSWORD)
            .with_database(&self.db, CreateMode::DoNotCreate)
            .with_query_timeout(Some(QUERY_TIMEOUT))
            .with_connect_timeout(Some(Duration::from_secs(5)))
            .with_param("application_name", name)
    }
}

/// A writer's open connection: its generation and its session's name.
struct Open {
    conn: Connection,
    generation: u64,
    name: String,
}

/// Writer `w`: batches of [`BATCH`] rows, `seq = batch * BATCH + i`, each
/// in one transaction, by four routes in turn. A batch whose outcome is
/// unknown (the connection failed around its commit) is looked up once
/// its old session has ended on the server, then retried only if absent.
pub fn writer(shared: Arc<Shared>, w: i32) {
    let mut batch = 0i64;
    let mut open: Option<Open> = None;
    // The session name of a connection that failed during `batch`.
    let mut unsure: Option<String> = None;
    let mut connections = 0u64;
    loop {
        match shared.phase() {
            Phase::Done => return,
            Phase::Barrier(epoch) => {
                if let Some(o) = open.take() {
                    let _ = o.conn.close();
                }
                if !shared.arrive_and_wait(epoch) {
                    return;
                }
                continue;
            }
            Phase::Running(_) => {}
        }
        let o = match open.as_mut() {
            Some(o) => o,
            None => {
                let generation = shared.generation.load(Ordering::SeqCst);
                connections += 1;
                let name = format!("soak-w{w}-{connections}");
                match Connection::connect_with(&shared.options(&name)) {
                    Ok(conn) => {
                        shared.counters.reconnects.fetch_add(1, Ordering::Relaxed);
                        open.insert(Open {
                            conn,
                            generation,
                            name,
                        })
                    }
                    Err(e) => {
                        shared.failed(&format!("writer {w} connect"), &e);
                        std::thread::sleep(Duration::from_millis(100));
                        continue;
                    }
                }
            }
        };
        if let Some(old) = unsure.take() {
            match resolve(&shared, &mut o.conn, &old, w, batch) {
                Ok(Some(true)) => {
                    shared.counters.late_acks.fetch_add(1, Ordering::Relaxed);
                    record(&shared, w, batch, o.generation);
                    batch += 1;
                    continue;
                }
                Ok(Some(false)) => shared.counters.retries.fetch_add(1, Ordering::Relaxed),
                Ok(None) => {
                    unsure = Some(old);
                    continue;
                }
                Err(e) => {
                    unsure = Some(old);
                    shared.failed(&format!("writer {w} lookup"), &e);
                    open = None;
                    continue;
                }
            };
        }
        match insert(&mut o.conn, w, batch) {
            Ok(()) => {
                record(&shared, w, batch, o.generation);
                batch += 1;
            }
            // Whatever failed, the connection goes, so that the session
            // to wait for before the lookup is never our own.
            Err(e) => {
                shared.failed(&format!("writer {w} batch {batch}"), &e);
                unsure = Some(o.name.clone());
                open = None;
            }
        }
    }
}

fn record(shared: &Shared, w: i32, batch: i64, generation: u64) {
    shared
        .counters
        .batches_committed
        .fetch_add(1, Ordering::Relaxed);
    shared
        .ledger
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(w)
        .or_default()
        .push(Commit {
            batch,
            generation,
            acked: false,
        });
}

/// Whether `batch` of writer `w` is stored, once the session `old` (whose
/// commit may still be under way) has ended: `Some(true)` whole,
/// `Some(false)` absent, `None` not known yet (the session still runs).
/// A batch found in part is a failure of the soak.
fn resolve(
    shared: &Shared,
    c: &mut Connection,
    old: &str,
    w: i32,
    batch: i64,
) -> Result<Option<bool>, Error> {
    let alive = format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = '{old}'");
    let start = Instant::now();
    while c.query_scalar::<i64>(&alive)? > 0 {
        if start.elapsed() > SESSION_END_WAIT {
            shared.unexpected(format!(
                "session {old} still on the server after {SESSION_END_WAIT:?}"
            ));
            return Ok(None);
        }
        if matches!(shared.phase(), Phase::Barrier(_) | Phase::Done) {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let n = c.query_scalar::<i64>(&format!(
        "SELECT count(*) FROM soak WHERE writer = {w} AND batch = {batch}"
    ))?;
    match n {
        0 => Ok(Some(false)),
        BATCH => Ok(Some(true)),
        other => {
            shared.unexpected(format!(
                "writer {w} batch {batch}: {other} of {BATCH} rows stored"
            ));
            Ok(Some(true))
        }
    }
}

/// Inserts one batch in one transaction; the route turns with the batch
/// number: `Inserter` (Arrow, then HyperBinary), `ArrowInserter`, and an
/// `INSERT ... SELECT` in an explicit transaction.
fn insert(c: &mut Connection, w: i32, batch: i64) -> Result<(), Error> {
    let first = batch * BATCH;
    let payload = format!("w{w}b{batch}");
    let stored = match batch % 4 {
        0 | 1 => {
            let format = if batch % 4 == 0 {
                InsertFormat::ArrowStream
            } else {
                InsertFormat::HyperBinary
            };
            let mut ins = Inserter::with_format(c, &table(), format)?;
            for seq in first..first + BATCH {
                ins.add_row(&[&w, &batch, &seq, &payload])?;
            }
            ins.execute()?
        }
        2 => {
            let schema = Arc::new(hyperdb_api::arrow::arrow_schema(&table())?);
            let n = BATCH as usize;
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int32Array::from(vec![w; n])),
                Arc::new(Int64Array::from(vec![batch; n])),
                Arc::new(Int64Array::from_iter_values(first..first + BATCH)),
                Arc::new(StringArray::from(vec![payload.as_str(); n])),
            ];
            let mut ins = ArrowInserter::new(c, &table())?;
            ins.insert_batch(&RecordBatch::try_new(schema, columns)?)?;
            ins.finish()?
        }
        _ => {
            let mut tx = c.transaction()?;
            let sql = format!(
                "INSERT INTO soak SELECT {w}, {batch}, s, '{payload}' \
                 FROM generate_series({first}, {}) g(s)",
                first + BATCH - 1
            );
            let n = tx.execute_command(&sql)?;
            tx.commit()?;
            n
        }
    };
    if stored != BATCH as u64 {
        return Err(Error::RowCountMismatch {
            sent: BATCH as u64,
            stored,
        });
    }
    Ok(())
}

/// What a reader checks on every read: each writer's rows are whole
/// batches with no sequence number twice.
const CHECK: &str = "SELECT writer, count(*), count(DISTINCT seq), \
     count(DISTINCT batch) FROM soak GROUP BY writer";

fn check_counts(shared: &Shared, who: &str, writer: i32, rows: i64, seqs: i64, batches: i64) {
    if rows != seqs || rows != batches * BATCH {
        shared.unexpected(format!(
            "{who}: writer {writer} has {rows} rows, {seqs} sequence numbers, {batches} batches"
        ));
    }
}

/// A reader on the sync API, reading `DataRow`s: [`CHECK`] over and over.
pub fn reader(shared: Arc<Shared>, r: usize) {
    let who = format!("reader {r}");
    let mut open: Option<Connection> = None;
    loop {
        match shared.phase() {
            Phase::Done => return,
            Phase::Barrier(epoch) => {
                if let Some(c) = open.take() {
                    let _ = c.close();
                }
                if !shared.arrive_and_wait(epoch) {
                    return;
                }
                continue;
            }
            Phase::Running(_) => {}
        }
        let c = match open.as_mut() {
            Some(c) => c,
            None => match Connection::connect_with(&shared.options(&format!("soak-r{r}"))) {
                Ok(c) => open.insert(c),
                Err(e) => {
                    shared.failed(&who, &e);
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        let read = (|| -> Result<(), Error> {
            for row in c.execute_query_params(CHECK, &[])? {
                let row = row?;
                check_counts(
                    &shared,
                    &who,
                    row.try_get(0)?,
                    row.try_get(1)?,
                    row.try_get(2)?,
                    row.try_get(3)?,
                );
            }
            Ok(())
        })();
        match read {
            Ok(()) => {
                shared.counters.reads.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                shared.failed(&who, &e);
                open = None;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A reader on the async API, reading Arrow (`query_arrow`), on a
/// current-thread runtime of its own.
pub fn async_reader(shared: Arc<Shared>, r: usize) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return shared.unexpected(format!("async reader {r}: runtime: {e}")),
    };
    runtime.block_on(async move {
        let who = format!("async reader {r}");
        let mut open: Option<AsyncConnection> = None;
        loop {
            match shared.phase() {
                Phase::Done => return,
                Phase::Barrier(epoch) => {
                    if let Some(c) = open.take() {
                        let _ = c.close().await;
                    }
                    // Blocking is fine: this runtime runs nothing else.
                    if !shared.arrive_and_wait(epoch) {
                        return;
                    }
                    continue;
                }
                Phase::Running(_) => {}
            }
            let c = match open.as_mut() {
                Some(c) => c,
                None => {
                    let options = shared.options(&format!("soak-a{r}"));
                    match AsyncConnection::connect_with(&options).await {
                        Ok(c) => open.insert(c),
                        Err(e) => {
                            shared.failed(&who, &e);
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                    }
                }
            };
            let read = async {
                let mut batches = c.query_arrow(CHECK).await?;
                while let Some(b) = batches.next().await {
                    let b = b?;
                    let col = |i: usize| {
                        b.column(i)
                            .as_any()
                            .downcast_ref::<Int64Array>()
                            .map(|a| a.values().to_vec())
                    };
                    let writers = b.column(0).as_any().downcast_ref::<Int32Array>();
                    let (Some(writers), Some(rows), Some(seqs), Some(batches)) =
                        (writers, col(1), col(2), col(3))
                    else {
                        shared
                            .unexpected(format!("{who}: unexpected Arrow types {:?}", b.schema()));
                        continue;
                    };
                    for i in 0..b.num_rows() {
                        check_counts(
                            &shared,
                            &who,
                            writers.value(i),
                            rows[i],
                            seqs[i],
                            batches[i],
                        );
                    }
                }
                Ok::<(), Error>(())
            }
            .await;
            match read {
                Ok(()) => {
                    shared.counters.reads.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    shared.failed(&who, &e);
                    open = None;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}
