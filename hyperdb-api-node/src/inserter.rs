//! `NativeInserter`: a `hyperdb_api::InsertSink` held by a JS inserter.
//! JS gathers a batch of rows into typed arrays and hands it over in one
//! call; `batch_from_buffers` copies it into an Arrow batch at once (so JS
//! may reuse its arrays), and the sink's task encodes and sends it while JS
//! gathers the next.

use std::sync::{Arc, OnceLock};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use hyperdb_api::arrow::{
    batch_from_arrow_parts, batch_from_buffers, decode_schema, ArrowParts, ColumnBuffer,
    ColumnInput,
};
use hyperdb_api::{InsertPiece, InsertSink, Place, TableDefinition, TableName};
use napi::bindgen_prelude::{AsyncBlock, Int32Array, Uint32Array, Uint8Array, Utf16String};
use napi::Env;
use napi_derive::napi;
use tokio::sync::{oneshot, watch, Mutex};

use crate::call::{promise, spawn_started};
use crate::catalog::TableDef;
use crate::error::{invalid, js, Result};

/// One column of a batch (see `hyperdb_api::arrow::ColumnBuffer`): exactly
/// one of `fixed`, `text` or `bytes`, with `offsets` for the last two.
#[napi(object)]
pub struct NativeColumn {
    /// Fixed-width values, little-endian (the bytes of a typed array).
    pub fixed: Option<Uint8Array>,
    /// Text (or NUMERIC as decimal text), all values back to back.
    pub text: Option<Utf16String>,
    /// Bytes, all values back to back.
    pub bytes: Option<Uint8Array>,
    /// `rows + 1` offsets into `text` (UTF-16 units) or `bytes`.
    pub offsets: Option<Uint32Array>,
    /// One byte a row, 0 for NULL; absent when no row is NULL.
    pub validity: Option<Uint8Array>,
}

/// One column of an apache-arrow batch (its `Data`), addressed as
/// `hyperdb_api::arrow::ArrowParts` says.
#[napi(object)]
pub struct NativeArrowColumn {
    /// Where row 0 is in the bitmaps (`Data.offset`).
    pub bit_offset: u32,
    pub validity: Option<Uint8Array>,
    pub offsets: Option<Int32Array>,
    /// The bytes of `Data.values`.
    pub values: Uint8Array,
}

/// Where an insert stands.
enum State {
    /// The COPY is being started (the place in line was taken at creation).
    Opening(oneshot::Receiver<hyperdb_api::Result<InsertSink>>),
    Open(InsertSink),
    /// Finished, aborted or failed.
    Ended,
}

impl State {
    fn sink(&mut self, opened: Option<hyperdb_api::Result<InsertSink>>) -> Result<&mut InsertSink> {
        if let Some(opened) = opened {
            *self = State::Open(js(opened)?);
        }
        match self {
            State::Open(sink) => Ok(sink),
            _ => Err(ended()),
        }
    }

    /// The start of the COPY still to be waited for, if any.
    fn opening(&mut self) -> Option<oneshot::Receiver<hyperdb_api::Result<InsertSink>>> {
        match std::mem::replace(self, State::Ended) {
            State::Opening(rx) => Some(rx),
            other => {
                *self = other;
                None
            }
        }
    }

    /// The sink, waiting for the COPY to start (off the JS thread).
    async fn open(&mut self) -> Result<&mut InsertSink> {
        let opened = match self.opening() {
            Some(rx) => Some(rx.await.unwrap_or(Err(hyperdb_api::Error::Cancelled))),
            None => None,
        };
        self.sink(opened)
    }

    /// The sink, blocking this (JS) thread until the COPY has started.
    fn open_blocking(&mut self) -> Result<&mut InsertSink> {
        let opened = self.opening().map(|rx| {
            rx.blocking_recv()
                .unwrap_or(Err(hyperdb_api::Error::Cancelled))
        });
        self.sink(opened)
    }
}

/// An insert: rows go in batch by batch; nothing is stored before
/// `finish`, and nothing at all after `abort` or any error.
#[napi]
pub struct NativeInserter {
    state: Arc<Mutex<State>>,
    /// The table's Arrow schema, set once the COPY has started.
    schema: Arc<OnceLock<SchemaRef>>,
    /// Rows handed over so far: where the next batch starts, for errors.
    rows: u64,
    /// The last Arrow schema message `sendArrow` decoded, and its schema.
    arrow_schema: Option<(Vec<u8>, SchemaRef)>,
    /// Turns true (or loses its sender) once the COPY has stopped taking
    /// rows, or failed to start.
    stopped: watch::Receiver<bool>,
}

impl NativeInserter {
    /// Starts the COPY in `place` in the background.
    pub(crate) fn start(
        place: Place,
        table: TableName,
        expected: Option<TableDefinition>,
    ) -> Result<NativeInserter> {
        let (tx, rx) = oneshot::channel();
        let (stop, stopped) = watch::channel(false);
        let schema = Arc::new(OnceLock::new());
        let cell = schema.clone();
        spawn_started(async move {
            let opened = place.insert_sink(table, expected.as_ref()).await;
            let running = opened.as_ref().ok().map(|sink| {
                let _ = cell.set(sink.schema().clone());
                sink.stopped()
            });
            // Dropped unopened: the sink drops here and aborts.
            let _ = tx.send(opened);
            if let Some(running) = running {
                running.await;
            }
            let _ = stop.send(true);
        })?;
        Ok(NativeInserter {
            state: Arc::new(Mutex::new(State::Opening(rx))),
            schema,
            rows: 0,
            arrow_schema: None,
            stopped,
        })
    }

    /// `columns` as an Arrow batch of `schema`; the rows count as handed over.
    fn batch(
        &mut self,
        schema: &SchemaRef,
        rows: u32,
        columns: &[ColumnInput<'_>],
    ) -> Result<RecordBatch> {
        let batch = js(batch_from_buffers(
            schema,
            rows as usize,
            self.rows,
            columns,
        ))?;
        self.rows += u64::from(rows);
        Ok(batch)
    }
}

#[napi]
impl NativeInserter {
    /// Waits until the COPY has started; the table as the server defines
    /// it (what values must fit).
    #[napi(ts_return_type = "Promise<TableDef>")]
    pub fn opened(&self, env: &Env) -> Result<AsyncBlock<TableDef>> {
        let state = self.state.clone();
        promise(env, async move {
            let mut state = state.lock().await;
            Ok(TableDef::from_rust(state.open().await?.definition()))
        })
    }

    /// Hands over `rows` rows and queues them, blocking while the COPY
    /// starts or the queue is full (a producer faster than the server
    /// waits here, about one batch's sending time).
    #[napi]
    pub fn push(&mut self, rows: u32, columns: Vec<NativeColumn>) -> Result<()> {
        let state = self.state.clone();
        let mut state = state.blocking_lock();
        let sink = state.open_blocking()?;
        let batch = self.batch(&sink.schema().clone(), rows, &inputs(&columns)?)?;
        let sent = sink.blocking_send(InsertPiece::Batch(batch));
        if sent.is_err() {
            *state = State::Ended;
        }
        js(sent)
    }

    /// `push` without blocking: resolves once the batch is queued. The
    /// columns are copied before this returns, so JS may reuse its arrays.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn send(
        &mut self,
        env: &Env,
        rows: u32,
        columns: Vec<NativeColumn>,
    ) -> Result<AsyncBlock<()>> {
        let ready = self.ready(rows, &columns)?;
        promise(
            env,
            queue(self.state.clone(), move |sink| ready.piece(sink)),
        )
    }

    /// `rows` rows of `columns`, copied out of JS memory: as a batch once
    /// the schema is known, else as columns to build it from.
    fn ready(&mut self, rows: u32, columns: &[NativeColumn]) -> Result<Ready> {
        Ok(match self.schema.get().cloned() {
            Some(schema) => Ready::Batch(self.batch(&schema, rows, &inputs(columns)?)?),
            // Not open yet: the batch is built once the schema is known.
            None => {
                let first = self.rows;
                self.rows += u64::from(rows);
                Ready::Columns(OwnedColumns::copy(columns), rows, first)
            }
        })
    }

    /// Queues rows `first..first + rows` of an Arrow batch whose schema is
    /// the IPC schema message `schema`, copied before this returns. The
    /// batch is checked against the table as an IPC stream's would be.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn send_arrow(
        &mut self,
        env: &Env,
        schema: Uint8Array,
        first: u32,
        rows: u32,
        columns: Vec<NativeArrowColumn>,
    ) -> Result<AsyncBlock<()>> {
        let schema = match &self.arrow_schema {
            Some((message, decoded)) if message[..] == schema[..] => decoded.clone(),
            _ => {
                let decoded = js(decode_schema(&schema))?;
                self.arrow_schema = Some((schema.to_vec(), decoded.clone()));
                decoded
            }
        };
        let parts: Vec<ArrowParts<'_>> = columns
            .iter()
            .map(|c| ArrowParts {
                bit_offset: c.bit_offset as usize,
                validity: c.validity.as_deref(),
                offsets: c.offsets.as_deref(),
                values: &c.values,
            })
            .collect();
        let batch = js(batch_from_arrow_parts(
            &schema,
            first as usize,
            rows as usize,
            &parts,
        ))?;
        promise(
            env,
            queue(self.state.clone(), move |_| Ok(InsertPiece::Batch(batch))),
        )
    }

    /// Queues bytes of the insert's one Arrow IPC stream (split anywhere;
    /// not to be mixed with `push`/`send`). Copied before this returns.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn send_ipc(&self, env: &Env, bytes: Uint8Array) -> Result<AsyncBlock<()>> {
        let bytes = bytes::Bytes::copy_from_slice(&bytes);
        promise(
            env,
            queue(self.state.clone(), |_| Ok(InsertPiece::Ipc(bytes))),
        )
    }

    /// Commits; the rows stored. `rows` rows of `columns`, when given, are
    /// the last batch, queued first: one call for both, where `send` and
    /// then `finish` cross into Rust and back twice.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn finish(
        &mut self,
        env: &Env,
        rows: Option<u32>,
        columns: Option<Vec<NativeColumn>>,
    ) -> Result<AsyncBlock<f64>> {
        let last = match (rows, columns) {
            (Some(rows), Some(columns)) if rows > 0 => Some(self.ready(rows, &columns)?),
            _ => None,
        };
        let state = self.state.clone();
        promise(env, async move {
            let mut state = state.lock().await;
            if let Some(last) = last {
                send_into(&mut state, |sink| last.piece(sink)).await?;
            }
            let stored = state.open().await?.finish().await;
            *state = State::Ended;
            Ok(js(stored)? as f64)
        })
    }

    /// What settles once the COPY has stopped taking rows (see
    /// [`NativeStopSignal::wait`]). A separate object, so that waiting on
    /// it does not hold a borrow of this inserter while rows are sent.
    #[napi]
    pub fn stop_signal(&self) -> NativeStopSignal {
        NativeStopSignal {
            stopped: self.stopped.clone(),
            // Weak: a pending wait must not keep a forgotten insert open.
            state: Arc::downgrade(&self.state),
        }
    }

    /// Ends the insert storing nothing; resolves when the connection is
    /// free again. Aborting twice, or after `finish`, does nothing.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn abort(&self, env: &Env) -> Result<AsyncBlock<()>> {
        let state = self.state.clone();
        promise(env, async move {
            let mut state = state.lock().await;
            let aborted = match state.open().await {
                Ok(_) => match std::mem::replace(&mut *state, State::Ended) {
                    State::Open(sink) => js(sink.abort().await),
                    _ => Ok(()),
                },
                // Never opened, or already ended: nothing to undo.
                Err(_) => Ok(()),
            };
            *state = State::Ended;
            aborted
        })
    }
}

/// Where an inserter's COPY stands, to wait on beside the rows' source.
#[napi]
pub struct NativeStopSignal {
    stopped: watch::Receiver<bool>,
    state: std::sync::Weak<Mutex<State>>,
}

#[napi]
impl NativeStopSignal {
    /// Settles once the COPY has stopped taking rows: rejects with its
    /// error when it failed while open (a query timeout, `conn.cancel()`,
    /// the server), resolves otherwise. A producer awaits it beside its
    /// source, so a source that stalls does not hide the failure.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn wait(&self, env: &Env) -> Result<AsyncBlock<()>> {
        let mut stopped = self.stopped.clone();
        let state = self.state.clone();
        promise(env, async move {
            // An error means the sender is gone: stopped too.
            let _ = stopped.wait_for(|stopped| *stopped).await;
            let Some(state) = state.upgrade() else {
                return Ok(());
            };
            let mut state = state.lock().await;
            match &mut *state {
                State::Open(sink) => {
                    let failure = sink.failure().await;
                    *state = State::Ended;
                    js(Err(failure))
                }
                _ => Ok(()),
            }
        })
    }
}

/// Queues the piece `make` gives once the COPY has started; after a
/// failure the insert has ended.
async fn queue(
    state: Arc<Mutex<State>>,
    make: impl FnOnce(&InsertSink) -> Result<InsertPiece>,
) -> Result<()> {
    send_into(&mut *state.lock().await, make).await
}

/// [`queue`] with the state already locked (`finish` sends its last batch
/// and commits under one lock).
async fn send_into(
    state: &mut State,
    make: impl FnOnce(&InsertSink) -> Result<InsertPiece>,
) -> Result<()> {
    let sink = state.open().await?;
    let piece = make(sink)?;
    let sent = sink.send(piece).await;
    if sent.is_err() {
        *state = State::Ended;
    }
    js(sent)
}

/// A batch for `send`: built, or its columns copied for building later.
enum Ready {
    Batch(RecordBatch),
    Columns(OwnedColumns, u32, u64),
}

impl Ready {
    /// The piece to queue into `sink`, built now if it waited for the schema.
    fn piece(self, sink: &InsertSink) -> Result<InsertPiece> {
        Ok(match self {
            Ready::Batch(batch) => InsertPiece::Batch(batch),
            Ready::Columns(owned, rows, first) => InsertPiece::Batch(js(batch_from_buffers(
                sink.schema(),
                rows as usize,
                first,
                &owned.inputs()?,
            ))?),
        })
    }
}

/// A batch's columns copied out of JS memory.
struct OwnedColumns(Vec<OwnedColumn>);

struct OwnedColumn {
    fixed: Option<Vec<u8>>,
    text: Option<Vec<u16>>,
    bytes: Option<Vec<u8>>,
    offsets: Option<Vec<u32>>,
    validity: Option<Vec<u8>>,
}

impl OwnedColumns {
    fn copy(columns: &[NativeColumn]) -> OwnedColumns {
        let owned = columns.iter().map(|c| {
            let s = c.slices();
            OwnedColumn {
                fixed: s.fixed.map(<[u8]>::to_vec),
                text: s.text.map(<[u16]>::to_vec),
                bytes: s.bytes.map(<[u8]>::to_vec),
                offsets: s.offsets.map(<[u32]>::to_vec),
                validity: s.validity.map(<[u8]>::to_vec),
            }
        });
        OwnedColumns(owned.collect())
    }

    fn inputs(&self) -> Result<Vec<ColumnInput<'_>>> {
        let slices = self.0.iter().map(|c| Slices {
            fixed: c.fixed.as_deref(),
            text: c.text.as_deref(),
            bytes: c.bytes.as_deref(),
            offsets: c.offsets.as_deref(),
            validity: c.validity.as_deref(),
        });
        slices
            .enumerate()
            .map(|(i, s)| column_input(i, s))
            .collect()
    }
}

impl NativeColumn {
    fn slices(&self) -> Slices<'_> {
        Slices {
            fixed: self.fixed.as_deref(),
            text: self.text.as_deref(),
            bytes: self.bytes.as_deref(),
            offsets: self.offsets.as_deref(),
            validity: self.validity.as_deref(),
        }
    }
}

/// A column's buffers, wherever they live.
struct Slices<'a> {
    fixed: Option<&'a [u8]>,
    text: Option<&'a [u16]>,
    bytes: Option<&'a [u8]>,
    offsets: Option<&'a [u32]>,
    validity: Option<&'a [u8]>,
}

fn inputs(columns: &[NativeColumn]) -> Result<Vec<ColumnInput<'_>>> {
    let slices = columns.iter().map(NativeColumn::slices);
    slices
        .enumerate()
        .map(|(i, s)| column_input(i, s))
        .collect()
}

fn column_input(i: usize, c: Slices<'_>) -> Result<ColumnInput<'_>> {
    let values = match (c.fixed, c.text, c.bytes, c.offsets) {
        (Some(fixed), None, None, None) => ColumnBuffer::Fixed(fixed),
        (None, Some(units), None, Some(offsets)) => ColumnBuffer::Utf16 { units, offsets },
        (None, None, Some(data), Some(offsets)) => ColumnBuffer::Binary { data, offsets },
        _ => {
            return Err(invalid(
                &format!("column {}", i + 1),
                "give fixed, or text or bytes with offsets",
            ))
        }
    };
    Ok(ColumnInput {
        values,
        validity: c.validity,
    })
}

fn ended() -> napi::Error {
    invalid(
        "inserter",
        "the insert has ended (finished, aborted or failed)",
    )
}
