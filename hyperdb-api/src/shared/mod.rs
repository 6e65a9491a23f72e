//! [`SharedConnection`]: an [`AsyncConnection`] that can be owned by many
//! places at once, with results that own their place on it.
//!
//! Why: the borrowing API (`AsyncRows<'c>` borrows `&'c mut
//! AsyncConnection`) is what Rust code wants, but a handle kept in an object
//! of another runtime (a Node.js class), or moved between tasks, needs
//! `'static` values. Here the connection sits behind a fair async mutex:
//! calls queue in the order they were made, and a result stream holds the
//! connection until it ends or is dropped (see [`ResultStream`] for what
//! happens when another call comes while a stream is open).

mod cancel;
#[cfg(feature = "grpc")]
mod grpc;
mod insert;
mod line;
mod sources;
mod started;
mod stream;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use hyperdb_api_core::client::CancelHandle;
use hyperdb_api_core::protocol::backend::TransactionStatus;
use tokio::sync::{Mutex, Notify, OwnedMutexGuard};

pub use cancel::CancelToken;
pub use insert::{InsertPiece, InsertSink};
pub use line::Place;
pub use started::{started, Started};
pub use stream::{Gather, ResultStream, StreamCanceller};

use line::Line;

use crate::arrow::from_rows::PastArrow;
use crate::error::{Error, Result};
use crate::options::ConnectOptions;
use crate::value::Value;
use crate::{AsyncConnection, TableDefinition, TableName};

/// A cloneable, `'static` handle to one async connection.
#[derive(Debug, Clone)]
pub struct SharedConnection {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// `None` once closed.
    conn: Arc<Mutex<Option<AsyncConnection>>>,
    cancel: CancelHandle,
    /// Calls waiting for the connection; an open stream spills when > 0.
    waiting: AtomicUsize,
    waiting_changed: Notify,
    /// The order calls were made in.
    line: std::sync::Mutex<Line>,
    /// Wakes places when the place served changes.
    turn: Notify,
    /// [`SharedConnection::cancel`] calls so far, and their wake-up: an
    /// insert's feed task ends its COPY on one (`insert::feed`), since the
    /// server's cancel alone reaches the client only at the COPY's end, and
    /// the producer would go on handing over rows until then.
    pub(crate) cancels: std::sync::atomic::AtomicU64,
    pub(crate) cancelled: Notify,
    /// A close was asked for: an open insert ends (nothing stored) rather
    /// than hold the connection from it; `cancelled` wakes it.
    pub(crate) closing: std::sync::atomic::AtomicBool,
    /// The place holding the connection, plus one (0: none); set and
    /// read under the line's lock, so a cancel either finds the call
    /// that holds the connection or marks the one about to.
    pub(crate) holder: AtomicU64,
    /// A place, plus one, that fails with [`Error::Cancelled`] when it
    /// gets the connection: the call a [`SharedConnection::cancel`] found
    /// about to run (0: none).
    pub(crate) cancel_on_turn: AtomicU64,
    /// Held while a cancel request is checked and sent; see
    /// `cancel::cancel_running`.
    pub(crate) sending_cancel: Mutex<()>,
    /// Cancel requests the server left unanswered, which the call holding
    /// the connection gives up on (see [`cancel::Unheard`]).
    pub(crate) unheard: Arc<cancel::Unheard>,
}

impl Inner {
    pub(crate) fn line(&self) -> std::sync::MutexGuard<'_, Line> {
        // The line's state is valid after any panic (plain counters).
        self.line.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Resolves once some call waits for the connection.
    pub(crate) async fn someone_waits(&self) {
        loop {
            let changed = self.waiting_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.waiting.load(Ordering::Acquire) > 0 {
                return;
            }
            changed.await;
        }
    }
}

/// Exclusive use of a [`SharedConnection`]'s connection, until dropped.
#[derive(Debug)]
pub struct ConnectionGuard {
    guard: OwnedMutexGuard<Option<AsyncConnection>>,
    inner: Arc<Inner>,
}

impl ConnectionGuard {
    /// The connection.
    pub fn conn(&mut self) -> &mut AsyncConnection {
        match self.guard.as_mut() {
            Some(conn) => conn,
            // `lock` hands out guards only over an open connection, and
            // only `close` (which holds the guard) empties it.
            None => unreachable!("a ConnectionGuard over a closed connection"),
        }
    }

    /// Whether the connection is in a transaction that has not failed:
    /// read before a statement is sent, for [`cancel::blamed_on_cancel`].
    pub(crate) fn in_transaction(&mut self) -> bool {
        self.conn().transaction_status() == TransactionStatus::InTransaction
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        // Under the line's lock, as `cancel_running` reads it.
        let _line = self.inner.line();
        self.inner.holder.store(0, Ordering::SeqCst);
    }
}

/// Counts a waiting call for as long as it waits.
struct Waiting<'a>(&'a Inner);

impl<'a> Waiting<'a> {
    fn new(inner: &'a Inner) -> Waiting<'a> {
        inner.waiting.fetch_add(1, Ordering::AcqRel);
        inner.waiting_changed.notify_waiters();
        Waiting(inner)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A query and its parameters, owned so they can move into a task.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub(crate) sql: String,
    pub(crate) params: Vec<Value>,
    pub(crate) past_arrow: PastArrow,
}

impl SharedConnection {
    /// Connects with `options`.
    pub async fn connect_with(options: &ConnectOptions) -> Result<SharedConnection> {
        Ok(SharedConnection::new(
            AsyncConnection::connect_with(options).await?,
        ))
    }

    /// Shares an open connection.
    pub fn new(conn: AsyncConnection) -> SharedConnection {
        SharedConnection {
            inner: Arc::new(Inner {
                cancel: conn.cancel_handle(),
                conn: Arc::new(Mutex::new(Some(conn))),
                waiting: AtomicUsize::new(0),
                waiting_changed: Notify::new(),
                line: std::sync::Mutex::new(Line::default()),
                turn: Notify::new(),
                cancels: std::sync::atomic::AtomicU64::new(0),
                cancelled: Notify::new(),
                closing: std::sync::atomic::AtomicBool::new(false),
                holder: AtomicU64::new(0),
                cancel_on_turn: AtomicU64::new(0),
                sending_cancel: Mutex::new(()),
                unheard: Arc::default(),
            }),
        }
    }

    /// Takes the next place in line for the connection, now. Calls made
    /// through places run in the order the places were taken.
    pub fn place(&self) -> Place {
        let id = self.inner.line().take();
        Place {
            inner: self.inner.clone(),
            id,
            used: false,
        }
    }

    /// Waits for exclusive use of the connection, after every call made
    /// before this one. An open [`ResultStream`] on it reads the rest of its
    /// result into memory so that this call runs.
    pub async fn lock(&self) -> Result<ConnectionGuard> {
        self.place().lock().await
    }

    /// Runs SQL (one statement; hyperd refuses several in one call);
    /// returns the affected row count.
    pub async fn execute_command(&self, sql: &str, params: &[Value]) -> Result<u64> {
        self.place().execute_command(sql, params, None).await
    }

    /// Runs a query and streams its result as record batches: a plain query
    /// without parameters by the route its earlier runs showed to be faster
    /// (hyperd's Arrow stream, or its rows for a small result, as
    /// [`crate::Connection::execute_query`] does), its rows gathered into
    /// batches otherwise. The schema is the same either way, except that
    /// rows carry no nullability: on the row route every field is nullable,
    /// unless the statement ran as Arrow before on this connection (its
    /// schema from then is kept; should a field it declared NOT NULL hold
    /// a NULL now, the table made again since, that field is nullable in
    /// the batches from then on, and the statement is learnt afresh). A
    /// statement without a result gives an empty schema and no batch. A TIMESTAMP or TIMESTAMPTZ after
    /// 294247-01-10 04:00:54.775807, which Arrow's `i64` microseconds since
    /// 1970 cannot hold (hyperd's `infinity` among them), fails the read
    /// with 22008 on either route, as hyperd's Arrow stream does;
    /// [`Place::query_row_batches`] carries it for readers of rows.
    pub async fn query_arrow(
        &self,
        sql: &str,
        params: Vec<Value>,
    ) -> Result<ResultStream<RecordBatch>> {
        self.place().query_arrow(sql, params, None).await
    }

    /// [`SharedConnection::query_arrow`] as raw Arrow IPC stream bytes: one
    /// stream, schema first, ending with the end-of-stream marker. On the
    /// Arrow route they are hyperd's bytes as they came, TIMESTAMPTZ spelled
    /// with hyperd's time zone `"Utc"` (`schema()` says `"+00:00"`).
    pub async fn query_arrow_ipc(
        &self,
        sql: &str,
        params: Vec<Value>,
    ) -> Result<ResultStream<Bytes>> {
        self.place().query_arrow_ipc(sql, params, None).await
    }

    /// See [`Place::insert_sink`].
    pub async fn insert_sink(
        &self,
        table: impl Into<TableName>,
        expected: Option<&TableDefinition>,
    ) -> Result<InsertSink> {
        self.place().insert_sink(table.into(), expected).await
    }

    /// Cancels the call running on the connection now, made before this
    /// one: its statement fails with 57014. If no call holds the
    /// connection but one made before this is about to (its turn has come),
    /// that call fails with 57014 without being sent. Calls made after this
    /// one, and calls still waiting behind the running one, run as usual.
    /// The future is made now, so "before" is the order of the calls, not of
    /// when the futures first run.
    pub fn cancel(&self) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        cancel::cancel_running(self.inner.clone())
    }

    /// A handle that cancels the running statement from anywhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.inner.cancel.clone()
    }

    /// Closes the connection once the calls made before this one are
    /// done; later calls fail with a closed-connection error. Closing twice
    /// is fine. An insert still open ([`SharedConnection::insert_sink`])
    /// ends at once, storing nothing: its producer may never finish it,
    /// and the close would wait for it forever.
    pub async fn close(&self) -> Result<()> {
        self.place().close().await
    }

    /// Whether [`SharedConnection::close`] has run.
    pub fn is_closed(&self) -> bool {
        match self.inner.conn.try_lock() {
            Ok(guard) => guard.is_none(),
            Err(_) => false,
        }
    }
}

impl Place {
    /// Waits for this place's turn, then for exclusive use of the
    /// connection. While it waits, an open [`ResultStream`] spills.
    pub async fn lock(self) -> Result<ConnectionGuard> {
        let inner = self.inner.clone();
        let (guard, cancelled) = self.wait().await;
        let guard = ConnectionGuard { guard, inner };
        if guard.guard.is_none() {
            return Err(closed());
        }
        if cancelled {
            return Err(Error::Cancelled);
        }
        // A cancel request meant for the call before lands before this
        // call sends anything.
        drop(guard.inner.sending_cancel.lock().await);
        Ok(guard)
    }

    /// The connection, and whether a cancel marked this place while it
    /// waited (see [`Inner::cancel_on_turn`]).
    async fn wait(mut self) -> (OwnedMutexGuard<Option<AsyncConnection>>, bool) {
        let _waiting = Waiting::new(&self.inner);
        loop {
            let turn = self.inner.turn.notified();
            tokio::pin!(turn);
            turn.as_mut().enable();
            if self.inner.line().is_turn_of(self.id) {
                break;
            }
            turn.await;
        }
        let guard = self.inner.conn.clone().lock_owned().await;
        self.used = true;
        let cancelled = {
            let mut line = self.inner.line();
            line.advance_past(self.id);
            self.inner.holder.store(self.id + 1, Ordering::SeqCst);
            let me = self.id + 1;
            let mark = &self.inner.cancel_on_turn;
            mark.compare_exchange(me, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        };
        self.inner.turn.notify_waiters();
        (guard, cancelled)
    }

    /// `COMMIT` in this place: a transaction hyperd rolled back instead,
    /// because a statement in it had failed, is an error (25P02), as
    /// [`crate::Transaction::commit`] reports it.
    pub async fn commit(self) -> Result<()> {
        let mut guard = self.lock().await?;
        crate::async_connection::commit(guard.conn()).await
    }

    /// The columns `sql` would return with `params`, as batches of it
    /// declare them ([`Place::query_row_batches`]). A query (`SELECT`,
    /// `WITH`, `VALUES`, `TABLE`) is started and abandoned once its schema
    /// is known: a read changes nothing, and its schema says which columns
    /// are NOT NULL. Any other statement is only described by the server
    /// (`Parse`, `Describe`), never run, so describing a `DELETE` deletes
    /// nothing; its columns are nullable, as a description does not say.
    pub async fn describe(self, sql: &str, params: &[Value]) -> Result<arrow_schema::SchemaRef> {
        if crate::rows::arrow_eligible(sql) {
            let stream = self.query_row_batches(sql, params.to_vec(), None).await?;
            return Ok(stream.schema().clone());
        }
        let mut guard = self.lock().await?;
        let conn = guard.conn();
        // The parameters' types are what a description needs of them.
        let types: Vec<u32> = Value::as_params(params)
            .iter()
            .map(|p| p.param_type_oid())
            .collect();
        let statement = conn.prepare_oids(sql, &types).await?;
        let batcher =
            crate::arrow::from_rows::RowBatcher::new(statement.schema(), PastArrow::Wrap)?;
        Ok(batcher.schema().clone())
    }

    /// [`SharedConnection::execute_command`] in this place; `token`
    /// cancels it whether it still waits for its turn or already runs.
    pub async fn execute_command(
        self,
        sql: &str,
        params: &[Value],
        token: Option<&CancelToken>,
    ) -> Result<u64> {
        let mut guard = self.lock().await?;
        let unheard = guard.inner.unheard.clone();
        let since = unheard.count();
        let canceller = token
            .map(|token| StreamCanceller::for_command(&guard, token))
            .transpose()?;
        let in_transaction = guard.in_transaction();
        let done = {
            let conn = guard.conn();
            let run = async move {
                if params.is_empty() {
                    conn.execute_command(sql).await
                } else {
                    // Encoded before the future runs: no `&dyn` is held across an await.
                    let command = conn.execute_command_params(sql, &Value::as_params(params));
                    command.await
                }
            };
            tokio::select! {
                biased;
                done = run => Some(done),
                () = unheard.given_up(since) => None,
            }
        };
        if let Some(canceller) = canceller {
            // A cancel sent meanwhile lands before the next call runs.
            canceller.finish().await;
        }
        let Some(done) = done else {
            // Dropped mid-exchange: the connection cannot serve another call.
            let given_up = cancel::Unheard::error();
            guard.conn().client().mark_broken(&given_up);
            return Err(given_up.into());
        };
        done.map_err(|e| cancel::blamed_on_cancel(in_transaction, e))
    }

    /// [`SharedConnection::query_arrow`] in this place; `token` cancels it
    /// whether it still waits for its turn or already runs.
    pub async fn query_arrow(
        self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<RecordBatch>> {
        self.query_batches(sql, params, token, PastArrow::Refuse)
            .await
    }

    /// [`Place::query_arrow`] for a caller that reads the batches as rows
    /// (a binding that builds its rows from them). A TIMESTAMP or
    /// TIMESTAMPTZ after 294247-01-10 04:00:54.775807, past Arrow's `i64`
    /// microseconds since 1970, is carried instead of refused: wrapped
    /// around `i64`, below hyperd's least timestamp (4713-01-01 00:00:00
    /// BC, -210,863,520,000,000,000 microseconds since 1970), so that
    /// adding 2^64 to such a value gives the true one. hyperd's Arrow
    /// stream refuses such values, so they come only on the row route:
    /// one in a later batch of an Arrow result still fails it (22008).
    pub async fn query_row_batches(
        self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<RecordBatch>> {
        self.query_batches(sql, params, token, PastArrow::Wrap)
            .await
    }

    async fn query_batches(
        self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
        past_arrow: PastArrow,
    ) -> Result<ResultStream<RecordBatch>> {
        let guard = self.lock().await?;
        let query = Query {
            sql: sql.to_owned(),
            params,
            past_arrow,
        };
        ResultStream::spawn(guard, query, sources::start_batches, token).await
    }

    /// [`SharedConnection::query_arrow_ipc`] in this place; see
    /// [`Place::query_arrow`] for `token`.
    pub async fn query_arrow_ipc(
        self,
        sql: &str,
        params: Vec<Value>,
        token: Option<&CancelToken>,
    ) -> Result<ResultStream<Bytes>> {
        let guard = self.lock().await?;
        let query = Query {
            sql: sql.to_owned(),
            params,
            past_arrow: PastArrow::Refuse,
        };
        ResultStream::spawn(guard, query, sources::start_ipc, token).await
    }

    /// [`SharedConnection::close`] in this place.
    pub async fn close(self) -> Result<()> {
        self.inner.closing.store(true, Ordering::SeqCst);
        self.inner.cancelled.notify_waiters();
        let inner = self.inner.clone();
        // A close is not cancelled: it ends what a cancel would.
        let (guard, _) = self.wait().await;
        let mut guard = ConnectionGuard { guard, inner };
        match guard.guard.take() {
            Some(conn) => conn.close().await,
            None => Ok(()),
        }
    }
}

fn closed() -> Error {
    Error::closed("the connection was closed")
}
