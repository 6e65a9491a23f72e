//! Owned result streams: a task that holds the connection and reads a
//! borrowing stream into a channel.
//!
//! Why a task: the borrowing streams (`AsyncArrowIpcChunks<'c>`, ...) live
//! inside the task's future, so nothing is self-referential, and the task
//! reads the next item while the consumer handles the last one.
//!
//! Memory stays bounded: the task sends an item once it holds credits for
//! its bytes, and the consumer returns them as it takes the item (at most
//! [`READ_AHEAD_BYTES`] in flight, and the item being read). Bytes, not
//! items: hyperd's Arrow batches of one integer column are ~40 KB, and a
//! window of 32 of them left a 1M-row result unread in the socket, where
//! it holds a hyperd thread (see DEVELOPMENT.md, "Arrow results left
//! unread").
//! Two exceptions, both by design:
//! - *spill*: when another call waits for the connection, the task stops
//!   waiting for credits and reads the rest of the result into the channel,
//!   so the waiting call runs (one connection, two interleaved streams:
//!   the first is buffered instead of deadlocking the second);
//! - nothing else: an abandoned stream (consumer dropped) stops reading at
//!   once, and the task settles what was left before it lets go of the
//!   connection (a long rest is cancelled, not read; see `begin` in core).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::SchemaRef;
use hyperdb_api_core::client::CancelHandle;
use tokio::sync::{mpsc, oneshot, RwLock, Semaphore};

use super::cancel::Unheard;
use super::{CancelToken, ConnectionGuard, Inner};
use crate::error::{Error, Result};
use crate::AsyncConnection;

/// Bytes read ahead of the consumer.
pub(crate) const READ_AHEAD_BYTES: usize = 16 << 20;

/// What each item weighs besides its bytes (its structs and allocations),
/// so that many tiny items are bounded too (at most 16K in flight).
const ITEM_OVERHEAD: usize = 1 << 10;

/// What an item weighs against [`READ_AHEAD_BYTES`].
pub(crate) trait Weigh {
    fn bytes(&self) -> usize;
}

impl Weigh for bytes::Bytes {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl Weigh for arrow_array::RecordBatch {
    /// The bytes its rows take, not the allocations they lie in: the
    /// columns of a batch decoded from hyperd's Arrow share one message.
    fn bytes(&self) -> usize {
        self.columns()
            .iter()
            .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0))
            .sum()
    }
}

/// An item and the credits it holds.
type Charged<T> = Result<(T, u32)>;

/// How [`ResultStream::gather`] groups items, for a consumer that pays a
/// fixed price per call whatever it carries (a binding's round trip
/// between a runtime worker and its own thread): the first item is waited
/// for, then up to `min` in all while `window` has not passed since the
/// first arrived, then whatever else has arrived, up to `max`.
///
/// The window keeps a slow result streaming (its items are handed over as
/// they come, not `min` at a time) while a fast one fills each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gather {
    /// Items waited for, unless the window passes or the result ends.
    pub min: usize,
    /// Items taken at most (`min` is capped by it; the first item is
    /// always taken).
    pub max: usize,
    /// How long after the first item the rest of `min` is waited for.
    pub window: Duration,
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A borrowing stream, as the pump task reads it.
pub(crate) trait Source<T>: Send {
    fn next_item(&mut self) -> BoxFuture<'_, Option<Result<T>>>;

    /// The route of a PostgreSQL-protocol result (for
    /// [`ResultStream::read_route`]).
    fn read_route(&self) -> Option<crate::ReadRoute> {
        None
    }
}

/// A started result: its schema and the stream of its items.
pub(crate) type Started<'c, T> = (SchemaRef, Box<dyn Source<T> + 'c>);

/// Starts a result on a connection.
pub(crate) type Start<Q, T> =
    for<'c> fn(&'c mut AsyncConnection, Q) -> BoxFuture<'c, Result<Started<'c, T>>>;

/// A result stream that owns its place on a [`crate::SharedConnection`].
///
/// Dropping it (or [`ResultStream::close`]) abandons the rest of the
/// result: the connection is free for the next call at once.
#[derive(Debug)]
pub struct ResultStream<T> {
    schema: SchemaRef,
    route: Option<crate::ReadRoute>,
    items: mpsc::UnboundedReceiver<Charged<T>>,
    credits: Arc<Semaphore>,
    done: bool,
    canceller: StreamCanceller,
}

/// Cancels one [`ResultStream`]'s statement from anywhere; see
/// [`ResultStream::cancel`].
#[derive(Debug, Clone)]
pub struct StreamCanceller {
    /// True while the task still reads the result. A cancel holds the read
    /// lock until the server has taken it, and the task takes the write
    /// lock to clear it before it lets go of the connection: so a cancel
    /// that saw `true` has landed before anyone else's statement can run.
    reading: Arc<RwLock<bool>>,
    how: CancelBy,
    /// The connection's count of requests its server left unanswered,
    /// which the call holding it gives up on ([`Unheard`]); `None` for
    /// gRPC, whose cancel is a call of its own.
    unheard: Option<Arc<Unheard>>,
}

#[derive(Debug, Clone)]
enum CancelBy {
    /// A CancelRequest on the PostgreSQL protocol.
    Wire(CancelHandle),
    /// `CancelQuery` for the gRPC connection's query.
    #[cfg(feature = "grpc")]
    Grpc(Box<hyperdb_api_core::grpc::GrpcCancelHandle>),
}

impl StreamCanceller {
    /// Starts `token` for a call with no stream (a command) that runs on
    /// `guard`'s connection; [`finish`](Self::finish) the canceller it
    /// gives when the call has ended. `Err` when the token was cancelled
    /// before.
    pub(crate) fn for_command(
        guard: &ConnectionGuard,
        token: &CancelToken,
    ) -> Result<StreamCanceller> {
        let canceller = StreamCanceller {
            reading: Arc::new(RwLock::new(true)),
            how: CancelBy::Wire(guard.inner.cancel.clone()),
            unheard: Some(guard.inner.unheard.clone()),
        };
        token.start(canceller.clone())?;
        Ok(canceller)
    }

    /// Cancels `handle`'s query (a gRPC one's own) until the stream made
    /// with it ([`ResultStream::read_ahead`]) no longer reads, or
    /// [`StreamCanceller::finish`]: taken before the result's schema is
    /// known, so that a cancel meanwhile reaches the query.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc(handle: hyperdb_api_core::grpc::GrpcCancelHandle) -> StreamCanceller {
        StreamCanceller {
            reading: Arc::new(RwLock::new(true)),
            how: CancelBy::Grpc(Box::new(handle)),
            unheard: None,
        }
    }

    /// Its call has ended without a stream: later cancels do nothing (a
    /// cancel sent before has landed when this returns).
    pub(crate) async fn finish(&self) {
        *self.reading.write().await = false;
    }

    /// `outcome`, its call [`finish`](Self::finish)ed when it failed.
    #[cfg(feature = "grpc")]
    pub(crate) async fn ended_if_failed<T>(&self, outcome: Result<T>) -> Result<T> {
        if outcome.is_err() {
            self.finish().await;
        }
        outcome
    }

    /// See [`ResultStream::cancel`].
    pub async fn cancel(&self) -> Result<()> {
        if self.send_if_reading().await? && matches!(self.how, CancelBy::Wire(_)) {
            // A CancelRequest that reaches hyperd before the statement is
            // dropped; gRPC's names the query the server already runs.
            let again = self.clone();
            super::cancel::repeat_in_background(move || {
                let again = again.clone();
                async move { again.send_if_reading().await }
            });
        }
        Ok(())
    }

    /// Sends the request if the stream still reads its result; whether it
    /// did.
    async fn send_if_reading(&self) -> Result<bool> {
        let reading = self.reading.read().await;
        if !*reading {
            return Ok(false);
        }
        match &self.how {
            CancelBy::Wire(handle) => super::cancel::send(handle, self.unheard.as_deref()).await?,
            #[cfg(feature = "grpc")]
            CancelBy::Grpc(handle) => handle.cancel().await?,
        }
        Ok(true)
    }
}

impl<T: Send + 'static> ResultStream<T> {
    /// Runs `start` on the connection in a new task and waits until the
    /// result's schema (or its error) is known.
    pub(crate) async fn spawn<Q: Send + 'static>(
        guard: ConnectionGuard,
        query: Q,
        start: Start<Q, T>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<T>>
    where
        T: Weigh,
    {
        let (first_tx, first_rx) = oneshot::channel();
        let (ends, end) = Ends::new();
        let cancel = StreamCanceller {
            reading: ends.reading.clone(),
            how: CancelBy::Wire(guard.inner.cancel.clone()),
            unheard: Some(guard.inner.unheard.clone()),
        };
        if let Some(token) = token {
            token.start(cancel.clone())?;
        }
        // Counted while the connection is held: later requests are this
        // call's.
        let since = guard.inner.unheard.count();
        // Started here: the query is sent before this returns, also from a
        // thread outside the runtime (see `started`).
        tokio::spawn(super::started(async move {
            let mut guard = guard;
            let mut first_tx = first_tx;
            let inner = guard.inner.clone();
            let in_transaction = guard.in_transaction();
            // A caller that stops waiting for the schema (its future
            // dropped) ends the start too, and the settling below cancels
            // the statement instead of waiting for its first rows. In a
            // block of its own: what `start` gives borrows the connection,
            // which the settling needs back.
            //
            // A cancel the server leaves unanswered gives the connection
            // up (see `Unheard`).
            let mut given_up = false;
            {
                let started = tokio::select! {
                    biased;
                    started = start(guard.conn(), query) => Some(started),
                    () = first_tx.closed() => None,
                    () = inner.unheard.given_up(since) => {
                        given_up = true;
                        Some(Err(Unheard::error().into()))
                    }
                };
                match started {
                    None => {}
                    Some(Err(e)) => {
                        let e = super::cancel::blamed_on_cancel(in_transaction, e);
                        let _ = first_tx.send(Err(e));
                    }
                    Some(Ok((schema, source))) => {
                        let route = source.read_route();
                        if first_tx.send(Ok((schema, route))).is_ok() {
                            let watched = Some((&*inner, since));
                            given_up = pump(source, &end.tx, &end.credits, watched).await;
                        }
                    }
                }
            }
            if given_up {
                guard.conn().client().mark_broken(Unheard::error());
            }
            // What the consumer abandoned is settled while the connection
            // is still held, the way any next request would (a long rest
            // is cancelled, `begin` in core): the next call neither waits
            // for the rest to be produced nor meets a cancel meant for it.
            if let Err(e) = guard.conn().client().settle().await {
                tracing::debug!("settling an abandoned result stream: {e}");
            }
            end.done().await;
        }));
        let (schema, route) = first_rx.await.map_err(|_| task_gone())??;
        Ok(ends.stream(schema, route, cancel))
    }

    /// Reads a result that holds no connection lock (a gRPC result) ahead
    /// of its consumer, in a new task.
    /// `canceller` ([`StreamCanceller::grpc`]) is the stream's own.
    #[cfg(feature = "grpc")]
    pub(crate) fn read_ahead(
        schema: SchemaRef,
        source: impl Source<T> + 'static,
        canceller: StreamCanceller,
    ) -> ResultStream<T>
    where
        T: Weigh,
    {
        let (ends, pump) = Ends::with_reading(canceller.reading.clone());
        tokio::spawn(async move { pump.run(Box::new(source)).await });
        ends.stream(schema, None, canceller)
    }

    /// The result's Arrow schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The route a PostgreSQL-protocol result takes (`None` for gRPC).
    /// Not an API: for the tests of the route choice.
    #[doc(hidden)]
    pub fn read_route(&self) -> Option<crate::ReadRoute> {
        self.route
    }

    /// The next item, or `None` at the end. An error ends the stream.
    pub async fn next(&mut self) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let item = self.items.recv().await;
        self.took(item)
    }

    /// The next item if one has already arrived, without waiting.
    pub fn try_next(&mut self) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        match self.items.try_recv() {
            Ok(item) => self.took(Some(item)),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => self.took(None),
        }
    }

    /// The items that have arrived, grouped as `how` says (see
    /// [`Gather`]); empty at the end of the result. An error ends the
    /// stream, and the items gathered before it are dropped with it.
    pub async fn gather(&mut self, how: Gather) -> Result<Vec<T>> {
        let Some(first) = self.next().await else {
            return Ok(Vec::new());
        };
        let mut items = vec![first?];
        let min = how.min.min(how.max);
        let until = tokio::time::Instant::now() + how.window;
        let filled = tokio::time::timeout_at(until, async {
            while items.len() < min {
                match self.next().await {
                    Some(item) => items.push(item?),
                    None => break,
                }
            }
            Ok::<(), Error>(())
        })
        .await;
        if let Ok(result) = filled {
            result?;
        }
        while items.len() < how.max {
            match self.try_next() {
                Some(item) => items.push(item?),
                None => break,
            }
        }
        Ok(items)
    }

    /// Whether the result has ended: read to its end, failed, or closed;
    /// nothing more will come.
    pub fn ended(&self) -> bool {
        self.done
    }

    fn took(&mut self, item: Option<Charged<T>>) -> Option<Result<T>> {
        match item {
            Some(Ok((item, charge))) => {
                self.credits.add_permits(charge as usize);
                Some(Ok(item))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            None => {
                self.done = true;
                None
            }
        }
    }

    /// Asks the server to cancel this result's statement, if it is still
    /// being read from the connection (once it was read to the end, the
    /// connection may run another call, which this must not cancel). The
    /// stream then ends with the server's 57014 error, unless the result
    /// ended first.
    pub async fn cancel(&self) -> Result<()> {
        self.canceller.cancel().await
    }

    /// A handle that cancels this stream's statement while the stream is
    /// busy elsewhere.
    pub fn canceller(&self) -> StreamCanceller {
        self.canceller.clone()
    }

    /// Abandons the rest of the result (as dropping does).
    pub fn close(self) {}
}

/// Reads `source` into `tx`, an item's bytes in credits, until the end, an
/// error, or the consumer goes away. With `watched`, the connection's inner
/// state and its [`Unheard`] count when the call took it: it spills when
/// another call waits for that connection, and gives up when a cancel
/// request the server left unanswered is followed by
/// [`CANCEL_GRACE`](hyperdb_api_core::client::CANCEL_GRACE) without an
/// item (the consumer gets the error; `true`: the caller must mark the
/// connection broken, its read dropped mid-message).
async fn pump<T: Weigh>(
    mut source: Box<dyn Source<T> + '_>,
    tx: &mpsc::UnboundedSender<Charged<T>>,
    credits: &Semaphore,
    watched: Option<(&Inner, u64)>,
) -> bool {
    let someone_waits = async {
        match watched {
            Some((inner, _)) => inner.someone_waits().await,
            None => std::future::pending().await,
        }
    };
    let given_up = || async move {
        match watched {
            Some((inner, since)) => inner.unheard.given_up(since).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(someone_waits);
    let mut spilled = false;
    loop {
        // A consumer that goes away while the next item is awaited ends
        // the pump too: its task then settles the rest (cancelling a long
        // one) rather than wait for an item nobody takes, for ever if the
        // server has gone silent. Dropping the read loses nothing the
        // settling needs: received bytes stay in the session.
        let next = tokio::select! {
            biased;
            next = source.next_item() => next,
            () = tx.closed() => return false,
            () = given_up() => {
                let _ = tx.send(Err(Unheard::error().into()));
                return true;
            }
        };
        let item = match next {
            None => return false,
            Some(Err(e)) => {
                let _ = tx.send(Err(e));
                return false;
            }
            Some(Ok(item)) => item,
        };
        // A spilled item holds no credits: its consumer returns none.
        let mut charge = 0;
        if !spilled {
            let want = (item.bytes() + ITEM_OVERHEAD).min(READ_AHEAD_BYTES) as u32;
            tokio::select! {
                biased;
                () = tx.closed() => break,
                permit = credits.acquire_many(want) => match permit {
                    Ok(p) => {
                        p.forget();
                        charge = want;
                    }
                    Err(_) => break,
                },
                () = &mut someone_waits => spilled = true,
            }
        }
        if tx.send(Ok((item, charge))).is_err() {
            break;
        }
    }
    false
}

/// The consumer's end of a new stream, before its schema is known.
struct Ends<T> {
    items: mpsc::UnboundedReceiver<Charged<T>>,
    credits: Arc<Semaphore>,
    reading: Arc<RwLock<bool>>,
}

/// The task's end: what `pump` reads into.
struct PumpEnd<T> {
    tx: mpsc::UnboundedSender<Charged<T>>,
    credits: Arc<Semaphore>,
    reading: Arc<RwLock<bool>>,
}

impl<T> Ends<T> {
    fn new() -> (Ends<T>, PumpEnd<T>) {
        Ends::with_reading(Arc::new(RwLock::new(true)))
    }

    /// With the flag of a canceller taken before the stream was made.
    fn with_reading(reading: Arc<RwLock<bool>>) -> (Ends<T>, PumpEnd<T>) {
        let (tx, items) = mpsc::unbounded_channel();
        let credits = Arc::new(Semaphore::new(READ_AHEAD_BYTES));
        let pump = PumpEnd {
            tx,
            credits: credits.clone(),
            reading: reading.clone(),
        };
        (
            Ends {
                items,
                credits,
                reading,
            },
            pump,
        )
    }

    /// The stream, cancelled by `canceller`, which holds these ends'
    /// `reading` flag.
    fn stream(
        self,
        schema: SchemaRef,
        route: Option<crate::ReadRoute>,
        canceller: StreamCanceller,
    ) -> ResultStream<T> {
        debug_assert!(Arc::ptr_eq(&self.reading, &canceller.reading));
        ResultStream {
            schema,
            route,
            items: self.items,
            credits: self.credits,
            done: false,
            canceller,
        }
    }
}

impl<T> PumpEnd<T> {
    /// Pumps `source` (which holds no connection), then marks the result
    /// no longer read (after any cancel of it in flight has landed; see
    /// `StreamCanceller`).
    #[cfg(feature = "grpc")]
    async fn run(self, source: Box<dyn Source<T> + '_>)
    where
        T: Weigh,
    {
        // No connection: nothing to give up.
        pump(source, &self.tx, &self.credits, None).await;
        self.done().await;
    }

    /// Nothing more is read from the connection for this result.
    async fn done(self) {
        *self.reading.write().await = false;
    }
}

fn task_gone() -> Error {
    Error::invalid_argument("result stream", "the task reading the result ended early")
}
