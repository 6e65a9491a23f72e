//! Result streams as JavaScript sees them: each `next()` is one call across
//! the boundary for everything that has arrived (at least one item), so a
//! fast producer costs one Promise per few batches, not per batch.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use hyperdb_api::{Gather, ResultStream, StreamCanceller};
use napi::bindgen_prelude::{ToNapiValue, Uint8Array};
use napi::sys;
use napi_derive::napi;
use tokio::sync::Mutex;

use crate::arrow_batches::{arrow_batches, ArrowBatches};
use crate::columns::{carries_text, column_batches, column_infos, ColumnBatches, ColumnInfo};
use crate::error::{js, Result};
use crate::handover::let_v8_weigh_young_buffers;

/// How a `next()` gathers batches that carry text (TEXT, JSON, NUMERIC
/// columns). Each call is a round trip between the JS thread and a tokio
/// worker, so fewer, larger handovers leave both more time for their own
/// work; bounded above because the handover makes each text column's JS
/// string on the JS thread, synchronous work the event loop waits for (a
/// few milliseconds at most).
const ROWS: Gather = Gather {
    min: 4,
    max: 8,
    window: GATHER_WINDOW,
};

/// How a `next()` gathers items that JavaScript only wraps: Arrow
/// batches, IPC chunks, and column batches without text, whose rows and
/// column vectors are made a batch at a time as they are read, not at the
/// handover. Wrapping costs per buffer, not per row, so a handover may
/// carry four times more. Measured on 10M-row reads of four numeric
/// columns: `queryArrow` client CPU 104 ms a read at 4-8 batches a call,
/// 93 ms at 16-32; `queryColumns` 115-118 against 91-106 ms, `query` 971-990
/// against 922 ms; wall times within noise of each other.
const BUFFERS: Gather = Gather {
    min: 16,
    max: 32,
    window: GATHER_WINDOW,
};

/// How long a call waits for more batches after the first: a result
/// that trickles is handed over as it comes, not a handover's worth at a
/// time (hyperd sends a full scan's batches ~0.15 ms apart).
const GATHER_WINDOW: Duration = Duration::from_millis(2);

/// A result stream held by a JS object: `next()` calls take turns on it,
/// `close()` drops it, `cancel()` reaches it while a `next()` waits.
/// Both go when the result ends or is closed, not when V8 collects the
/// object: a gRPC result's canceller holds a clone of its channel, and
/// a closed `GrpcConnection` kept its socket until then (measured).
struct Slot<T> {
    stream: Arc<Mutex<Option<ResultStream<T>>>>,
    canceller: std::sync::Mutex<Option<StreamCanceller>>,
}

impl<T: Send + 'static> Slot<T> {
    fn new(stream: ResultStream<T>) -> Slot<T> {
        Slot {
            canceller: std::sync::Mutex::new(Some(stream.canceller())),
            stream: Arc::new(Mutex::new(Some(stream))),
        }
    }

    /// The canceller, while the result may still run.
    fn canceller(&self) -> std::sync::MutexGuard<'_, Option<StreamCanceller>> {
        // Plain data: valid after any panic.
        self.canceller
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The items that have arrived, gathered as `how` says; empty at the
    /// end. The stream is dropped once it has ended.
    async fn next(&self, how: Gather) -> hyperdb_api::Result<Vec<T>> {
        let mut guard = self.stream.lock().await;
        let Some(stream) = guard.as_mut() else {
            return Ok(Vec::new());
        };
        let items = stream.gather(how).await;
        if stream.ended() {
            *guard = None;
            self.canceller().take();
        }
        items
    }

    async fn cancel(&self) -> Result<()> {
        let canceller = self.canceller().clone();
        match canceller {
            Some(c) => js(c.cancel().await),
            None => Ok(()),
        }
    }

    /// Whether the result was read to its end (or failed): `next()` would
    /// answer nothing more, so JavaScript need not ask.
    fn ended(&self) -> bool {
        self.stream.try_lock().is_ok_and(|guard| guard.is_none())
    }

    /// Drops the stream now if no `next()` holds it, else as that call ends.
    fn close(&self) {
        self.canceller().take();
        match self.stream.try_lock() {
            Ok(mut guard) => *guard = None,
            Err(_) => {
                let stream = self.stream.clone();
                napi::bindgen_prelude::spawn(async move {
                    *stream.lock().await = None;
                });
            }
        }
    }
}

/// A result as batches of columns.
#[napi]
pub struct NativeBatchStream {
    slot: Slot<RecordBatch>,
    /// `None` when a column has no form as JavaScript columns (an ARRAY,
    /// which only `queryArrow` reads): [`NativeBatchStream::columns`] then
    /// fails with why.
    columns: Option<Vec<ColumnInfo>>,
    schema: SchemaRef,
    /// How `next()` gathers: by the result's columns, see [`ROWS`].
    gather: Gather,
    /// The first `next()`'s batches, read before the stream was handed
    /// over (`take_first`).
    first: std::sync::Mutex<Option<hyperdb_api::Result<Vec<RecordBatch>>>>,
}

impl NativeBatchStream {
    /// The stream of `stream`, its first batches already read. Why: each
    /// call across the boundary is a round trip between a tokio worker and
    /// the JS thread (~60-100 us on a 2-core box); a small result then
    /// takes one, its open, where it took three (open, batches, end). The
    /// open gathers as for rows: it cannot know yet which form JavaScript
    /// will ask for, and the smaller handover is the safer one.
    pub(crate) async fn open(stream: ResultStream<RecordBatch>) -> Result<NativeBatchStream> {
        let (columns, schema) = (column_infos(stream.schema()).ok(), stream.schema().clone());
        let gather = if columns.iter().flatten().any(carries_text) {
            ROWS
        } else {
            BUFFERS
        };
        let slot = Slot::new(stream);
        let first = slot.next(ROWS).await;
        Ok(NativeBatchStream {
            slot,
            columns,
            schema,
            gather,
            first: std::sync::Mutex::new(Some(first)),
        })
    }

    /// The batches read at the open, once (`None` after that).
    fn take_first_batches(&self) -> Result<Option<Vec<RecordBatch>>> {
        // A panic while it was held left nothing half-written: an Option.
        let mut first = self
            .first
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        first.take().map(js).transpose()
    }
}

#[napi]
impl NativeBatchStream {
    /// The result's columns; fails (0A000) when one has no form as
    /// JavaScript columns (an ARRAY).
    #[napi(getter)]
    pub fn columns(&self) -> Result<Vec<ColumnInfo>> {
        match &self.columns {
            Some(columns) => Ok(columns.clone()),
            None => column_infos(&self.schema),
        }
    }

    /// The batches read while the stream opened, as `next()` gives them;
    /// `null` once taken. Synchronous: no round trip.
    #[napi]
    pub fn take_first(&self) -> Result<Option<ColumnBatches>> {
        self.take_first_batches()?
            .map(|b| column_batches(&b))
            .transpose()
    }

    /// [`NativeBatchStream::take_first`] in Arrow's own layout.
    #[napi]
    pub fn take_first_arrow(&self) -> Result<Option<ArrowBatches>> {
        self.take_first_batches()?
            .map(|b| arrow_batches(&b))
            .transpose()
    }

    /// Whether the result has ended (or failed): `next()` would give
    /// nothing more.
    #[napi(getter)]
    pub fn ended(&self) -> bool {
        self.slot.ended()
    }

    /// The batches that have arrived (waiting for at least one) as
    /// columns; none at the end of the result.
    #[napi]
    pub async fn next(&self) -> Result<ColumnBatches> {
        let batches = js(self.slot.next(self.gather).await)?;
        column_batches(&batches)
    }

    /// [`NativeBatchStream::next`] in Arrow's own layout (`queryArrow`).
    #[napi]
    pub async fn next_arrow(&self) -> Result<ArrowBatches> {
        let batches = js(self.slot.next(BUFFERS).await)?;
        arrow_batches(&batches)
    }

    /// The result's schema as one Arrow IPC schema message.
    #[napi]
    pub fn arrow_schema(&self) -> Result<Uint8Array> {
        let message = js(hyperdb_api::arrow::encode_schema(&self.schema))?;
        Ok(Uint8Array::new(message))
    }

    /// Cancels this result's statement if it is still running; the stream
    /// then ends with a 57014 error.
    #[napi]
    pub async fn cancel(&self) -> Result<()> {
        self.slot.cancel().await
    }

    /// Abandons the rest of the result; the connection is free at once.
    #[napi]
    pub fn close(&self) {
        self.slot.close();
    }
}

/// A result as raw Arrow IPC stream bytes.
#[napi]
pub struct NativeIpcStream {
    slot: Slot<Bytes>,
}

impl NativeIpcStream {
    pub(crate) fn new(stream: ResultStream<Bytes>) -> NativeIpcStream {
        NativeIpcStream {
            slot: Slot::new(stream),
        }
    }
}

#[napi]
impl NativeIpcStream {
    /// The IPC chunks that have arrived (waiting for at least one), over
    /// the received bytes without a copy; empty at the end.
    #[napi(ts_return_type = "Promise<Array<Uint8Array>>")]
    pub async fn next(&self) -> Result<IpcChunks> {
        Ok(IpcChunks(js(self.slot.next(BUFFERS).await)?))
    }

    /// Cancels this result's statement if it is still running; the stream
    /// then ends with a 57014 error.
    #[napi]
    pub async fn cancel(&self) -> Result<()> {
        self.slot.cancel().await
    }

    /// Abandons the rest of the result; the connection is free at once.
    #[napi]
    pub fn close(&self) {
        self.slot.close();
    }
}

/// IPC chunks, handed to JavaScript as an array of `Uint8Array`s over the
/// received bytes, after which V8 is let weigh them (they are all
/// external; see `handover.rs` for why that matters).
pub struct IpcChunks(Vec<Bytes>);

impl ToNapiValue for IpcChunks {
    unsafe fn to_napi_value(env: sys::napi_env, val: IpcChunks) -> napi::Result<sys::napi_value> {
        let arrays: Vec<Uint8Array> = val.0.into_iter().map(bytes_array).collect();
        // SAFETY: napi calls this conversion with its live env, on the JS
        // thread, which is what both calls need.
        unsafe {
            let value = Vec::<Uint8Array>::to_napi_value(env, arrays)?;
            let_v8_weigh_young_buffers(env)?;
            Ok(value)
        }
    }
}

/// A `Uint8Array` over the received bytes.
fn bytes_array(bytes: Bytes) -> Uint8Array {
    if bytes.is_empty() {
        return Uint8Array::new(Vec::new());
    }
    let ptr = bytes.as_ptr().cast_mut();
    let len = bytes.len();
    // SAFETY: `ptr` points at `len` bytes owned by `bytes`, which the
    // finalizer keeps alive until the JS array is collected. `Bytes` is a
    // read-only view and no other holder reads this range after it was
    // handed out, so JS writing into it races with nothing.
    unsafe { Uint8Array::with_external_data(ptr, len, move |_, _| drop(bytes)) }
}
