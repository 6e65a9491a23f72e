//! The async (tokio) connection: the same surface as [`crate::Connection`].

use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_core::Stream;
use hyperdb_api_core::client::{AsyncClient, CancelHandle, Endpoint};
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::protocol::ops::QueryRequest;
use tracing::Instrument;

use hyperdb_api_core::types::{FromHyperBinary, SqlType, ToPgBinary};

use crate::error::Result;
use crate::from_row::FromRow;
use crate::options::{
    attach_sql, connect_client, detach_sql, run_setup, ConnectOptions, CreateMode, IN_USE_POLL,
};
use crate::params::Params;
use crate::rows::{fetched_from_wire, read_rows, refill_cursor, Row, RowCursor, Schema};
use crate::statement::{
    declared_types, Bound, Statement, StatementRef, ToStatement, RESULT_FORMAT,
};
use crate::trace::{ConnectTrace, StatementTrace};

/// An async connection to hyperd.
///
/// Cancel-safe: dropping any of its futures or streams midway leaves the
/// connection usable; the next request settles what was left. A result
/// dropped with more than 64 KiB of it still to come, or more than 20 ms
/// away, is cancelled rather than read to its end (50M rows: ~1-5 ms for
/// the next query instead of 0.5-5 s; an aggregate that runs for minutes:
/// the next query is not held for them), and the cancel completes before
/// anything else is sent, so it never reaches the next statement.
///
/// Cooperative: its reads, inserts and streams spend tokio's task budget
/// by the bytes they move and the rows they hand out or take, so a long
/// insert or scan yields to the other tasks of its runtime every ~1 MiB or
/// 8,192 rows even when the socket never makes it wait, and a
/// `tokio::time::timeout` around it fires on time.
#[derive(Debug)]
pub struct AsyncConnection {
    client: AsyncClient,
    /// `DETACH` statements for the files this connection attached, run by
    /// `close`.
    detach_on_close: Vec<String>,
    /// What plain queries' earlier results showed: their route.
    #[cfg(feature = "arrow")]
    routes: crate::route::RouteBook,
    /// [`ConnectOptions::with_slow_statement_threshold`].
    slow: Option<Duration>,
    /// The table the last insert wrote, for the next one (`copy_tx.rs`).
    last_insert: crate::insert::copy_tx::LastInsert,
    /// The session's catalog changes once set up (see [`Self::session_changed`]).
    setup_changes: u64,
}

impl AsyncConnection {
    /// Connects to `endpoint` and opens `database` according to `mode`.
    pub async fn connect(
        endpoint: &Endpoint,
        database: impl AsRef<Path>,
        mode: CreateMode,
    ) -> Result<AsyncConnection> {
        AsyncConnection::connect_with(
            &ConnectOptions::new(endpoint.clone()).with_database(database, mode),
        )
        .await
    }

    /// Connects with full options.
    pub async fn connect_with(options: &ConnectOptions) -> Result<AsyncConnection> {
        let trace = ConnectTrace::start(options);
        let connect = async {
            let plan = options.plan()?;
            let mut client = connect_client!(
                AsyncClient::connect_with_notices(&plan.config, plan.notices.clone()).await,
                pause: tokio::time::sleep(IN_USE_POLL).await
            )?;
            run_setup!(plan, sql => client.execute(sql).await, pause: tokio::time::sleep(IN_USE_POLL).await);
            let detach_on_close = plan.alias.as_deref().map(detach_sql).transpose()?;
            let setup_changes = client.session().catalog_changes();
            Ok(AsyncConnection {
                client,
                detach_on_close: detach_on_close.into_iter().collect(),
                #[cfg(feature = "arrow")]
                routes: crate::route::RouteBook::default(),
                slow: options.slow_statement_threshold(),
                last_insert: Default::default(),
                setup_changes,
            })
        };
        let connected = connect.instrument(trace.span().clone()).await;
        trace.result(connected)
    }

    /// Starts the trace of statement `sql` (see `trace.rs`); also for
    /// statements this crate runs through [`client`](Self::client) (an
    /// insert's COPY, a shared stream's read).
    #[inline]
    pub(crate) fn trace(&self, call: &'static str, sql: &str, params: usize) -> StatementTrace {
        StatementTrace::start(call, sql, params, self.slow)
    }

    /// Runs one SQL statement; returns the affected row count (0 for DDL).
    /// hyperd refuses several statements in one string (SQLSTATE 0A000,
    /// "multi-part queries are disabled").
    ///
    /// A `COMMIT` of a transaction in which a statement failed rolls it
    /// back, as PostgreSQL does (see [`crate::Transaction::commit`]).
    pub async fn execute_command(&mut self, sql: &str) -> Result<u64> {
        let trace = self.trace("execute_command", sql, 0);
        let sql = crate::transaction::ending(self.transaction_status(), sql);
        trace.result(self.client.execute(sql).await.map_err(Into::into), |n| {
            Some(*n)
        })
    }

    /// Runs a query and streams its rows: a plain query by the route its
    /// earlier runs showed to be faster, others from `DataRow`s (see
    /// [`crate::Connection::execute_query`] and [`crate::Rows`]).
    pub async fn execute_query(&mut self, sql: &str) -> Result<AsyncRows<'_>> {
        let mut trace = self.trace("execute_query", sql, 0);
        #[cfg(feature = "arrow")]
        if crate::rows::arrow_eligible(sql) {
            return self.routed_query(sql, trace).await;
        }
        // As in the sync `execute_query`: a COMMIT of a failed transaction
        // goes as ROLLBACK.
        let sql = crate::transaction::ending(self.transaction_status(), sql);
        let fields = trace.check(
            self.client
                .query(&QueryRequest::new(sql))
                .await
                .map_err(Into::into),
        )?;
        Ok(AsyncRows::wire(
            &mut self.client,
            Schema::from_fields(fields),
            trace,
        ))
    }

    /// A plain query, by the route its statement's book entry chooses
    /// (the same steps as the sync one, `trace` following the whole
    /// statement).
    #[cfg(feature = "arrow")]
    async fn routed_query(
        &mut self,
        sql: &str,
        mut trace: StatementTrace,
    ) -> Result<AsyncRows<'_>> {
        use crate::arrow::{arrow_cannot_express, AsyncArrowBatches};
        use crate::route::{key, Learn, ReadRoute};
        let key = key(sql);
        if self.routes.choose_in(key, self.client.session()) == ReadRoute::Arrow {
            let start = std::time::Instant::now();
            match AsyncArrowBatches::start(&mut self.client, sql, &mut trace).await {
                Ok(started) if !started.rows_read_every_column() => {
                    // Read as rows; the COPY is settled by the query below.
                    self.routes.arrow_unreadable_as_rows(key);
                    trace = started.into_trace();
                }
                Ok(started) => {
                    let batches = AsyncArrowBatches::resume(&mut self.client, started);
                    let secs = start.elapsed().as_secs_f64();
                    self.routes.arrow_started(key, secs, &batches.schema());
                    return Ok(AsyncRows {
                        cursor: RowCursor::new(crate::arrow::row_schema(&batches.schema()))
                            .cooperative(),
                        source: AsyncRowSource::Arrow(batches),
                        learn: Some(Learn::new(&mut self.routes, key)),
                    });
                }
                Err(e) if arrow_cannot_express(&e) => self.routes.arrow_refused(key),
                Err(e) => return trace.result(Err(e), |_| None),
            }
        }
        let fields = match self.client.query_simple(sql).await {
            Ok(fields) => fields,
            Err(e) => {
                self.routes.forget(key);
                return trace.result(Err(e.into()), |_| None);
            }
        };
        let rows = AsyncRows::wire(&mut self.client, Schema::from_fields(fields), trace);
        Ok(rows.learning(Learn::new(&mut self.routes, key)))
    }

    /// `sql` as a simple `Query` outside the route book (see
    /// [`crate::Connection`]'s twin).
    pub(crate) async fn simple_rows(
        &mut self,
        sql: &str,
        mut trace: StatementTrace,
    ) -> Result<AsyncRows<'_>> {
        let fields = trace.check(self.client.query_simple(sql).await.map_err(Into::into))?;
        Ok(AsyncRows::wire(
            &mut self.client,
            Schema::from_fields(fields),
            trace,
        ))
    }

    /// The first column of the first row as `T` ([`crate::Error::NoRows`]
    /// when there is none); the rest of the result is read and discarded
    /// (see [`crate::Connection::query_scalar`]).
    pub async fn query_scalar<T>(&mut self, sql: &str) -> Result<T>
    where
        T: for<'a> FromHyperBinary<'a>,
    {
        let mut rows = self.execute_query(sql).await?;
        let value = match rows.next().await {
            Some(row) => row?.try_get(0),
            None => return Err(crate::Error::NoRows),
        };
        rows.skip_rest().await;
        value
    }

    /// Runs a query with bound parameters (`$1`, ...) and streams its rows.
    ///
    /// The parameters are encoded before the returned future first runs, so
    /// the future is `Send` (spawnable) although `dyn ToPgBinary` is not.
    pub fn execute_query_params<'s>(
        &'s mut self,
        sql: &'s str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<AsyncRows<'s>>> + Send + 's {
        // SQL text goes as `query` sends it: one path, one trace name.
        self.query(sql, params)
    }

    /// Runs a statement with bound parameters; returns the affected rows.
    pub fn execute_command_params<'s>(
        &'s mut self,
        sql: &'s str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<u64>> + Send + 's {
        let rows = self.execute_query_params(sql, params);
        async move {
            let mut rows = rows.await?;
            while let Some(row) = rows.next().await {
                row?;
            }
            Ok(rows.affected_rows().unwrap_or(0))
        }
    }

    /// Prepares `sql` on the server; see [`crate::Connection::prepare`].
    /// The [`Statement`] is `Send + Sync + 'static`: keep it anywhere,
    /// run it with [`query`](Self::query) and friends on this connection.
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.prepare_typed(sql, &[]).await
    }

    /// [`prepare`](Self::prepare) declaring the first `types.len()`
    /// parameters' types; see [`crate::Connection::prepare_typed`].
    pub async fn prepare_typed(&mut self, sql: &str, types: &[SqlType]) -> Result<Statement> {
        let oids = declared_types(sql, types)?;
        self.prepare_oids(sql, &oids).await
    }

    /// [`prepare`](Self::prepare) with the parameters' type OIDs (0 for
    /// one the server infers).
    pub(crate) async fn prepare_oids(&mut self, sql: &str, oids: &[u32]) -> Result<Statement> {
        let trace = self.trace("prepare", sql, 0);
        let prepared = async {
            let name = self.client.statements().next_name("s");
            let description = self.client.prepare(&name, sql, oids).await?;
            Ok((name, description))
        };
        let (name, description) = trace.result(prepared.await, |_| None)?;
        Ok(Statement::new(
            name,
            sql,
            self.client.session(),
            description,
        ))
    }

    /// Runs a statement, prepared or SQL text (through the statement
    /// cache), with bound parameters and streams its rows; see
    /// [`crate::Connection::query`]. The parameters are encoded before the
    /// future first runs, so it is `Send`.
    pub fn query<'s, S: ToStatement + ?Sized>(
        &'s mut self,
        statement: &'s S,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<AsyncRows<'s>>> + Send + 's {
        let count = params.len();
        let (call, sql) = match statement.to_statement() {
            StatementRef::Sql(sql) => ("execute_query_params", sql),
            StatementRef::Prepared(stmt) => ("query_prepared", stmt.sql()),
        };
        let bound = match statement.to_statement() {
            StatementRef::Sql(sql) => Params::encode(params).map(|p| (p, Err(sql))),
            StatementRef::Prepared(stmt) => {
                stmt.bind(self.client.session(), params)
                    .map(|bound| match bound {
                        Bound::Statement(p) => (p, Ok(stmt.clone())),
                        Bound::Text(p) => (p, Err(stmt.sql())),
                    })
            }
        };
        async move {
            let mut trace = self.trace(call, sql, count);
            let (mut params, mut target) = trace.check(bound)?;
            // A COMMIT of a failed transaction goes as ROLLBACK, prepared or
            // not, as `execute_command` sends it.
            let status = self.transaction_status();
            if crate::transaction::ending(status, sql) != sql {
                params = trace.check(Params::encode(&[]))?;
                target = Err("ROLLBACK");
            }
            let slices = params.slices();
            let schema = match target {
                Ok(stmt) => {
                    trace.check(
                        self.client
                            .query_prepared(
                                stmt.name(),
                                stmt.described(),
                                &slices,
                                params.formats(),
                                RESULT_FORMAT,
                            )
                            .await
                            .map_err(Into::into),
                    )?;
                    stmt.schema().clone()
                }
                Err(sql) => {
                    let request = trace.check(params.request(sql, &slices))?;
                    Schema::from_fields(
                        trace
                            .check(self.client.query_cached(&request).await.map_err(Into::into))?,
                    )
                }
            };
            Ok(AsyncRows::wire(&mut self.client, schema, trace))
        }
    }

    /// Runs a statement, prepared or SQL text, with bound parameters;
    /// returns the affected rows.
    pub fn execute<'s, S: ToStatement + ?Sized>(
        &'s mut self,
        statement: &'s S,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<u64>> + Send + 's {
        let rows = self.query(statement, params);
        async move {
            let mut rows = rows.await?;
            while let Some(row) = rows.next_row().await {
                row?;
            }
            Ok(rows.affected_rows().unwrap_or(0))
        }
    }

    /// One round trip that runs nothing; see [`crate::Connection::ping`].
    pub async fn ping(&mut self) -> Result<()> {
        Ok(self.client.ping().await?)
    }

    pub async fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        let detach = detach_sql(alias)?;
        self.execute_command(&attach_sql(path.as_ref(), alias)?)
            .await?;
        self.detach_on_close.push(detach);
        Ok(())
    }

    pub async fn detach_database(&mut self, alias: &str) -> Result<()> {
        let detach = detach_sql(alias)?;
        self.execute_command(&detach).await?;
        self.detach_on_close.retain(|d| *d != detach);
        Ok(())
    }

    /// Schemas, tables and databases: create, list, inspect, drop.
    pub fn catalog(&mut self) -> crate::AsyncCatalog<'_> {
        crate::AsyncCatalog::new(self)
    }

    /// Starts a transaction; it rolls back unless committed. One already
    /// open is 25001: transactions do not nest (see
    /// [`crate::Connection::transaction`]).
    ///
    /// The guard exists before `BEGIN` goes out, so that this future
    /// dropped while it waits (a timeout, a lost `select!`) queues the
    /// `ROLLBACK` as a dropped guard does, rather than leave a block open
    /// that the connection's later writes would go into and be lost with.
    pub async fn transaction(&mut self) -> Result<AsyncTransaction<'_>> {
        // A dropped guard's ROLLBACK, if one is queued, ends its block first.
        self.client.settle().await?;
        crate::transaction::refuse_nested(self.transaction_status())?;
        let mut tx = AsyncTransaction {
            conn: self,
            open: true,
        };
        if let Err(e) = tx.conn.execute_command("BEGIN").await {
            // Nothing was begun (or the connection is gone): nothing to end.
            tx.open = false;
            return Err(e);
        }
        Ok(tx)
    }

    pub fn transaction_status(&self) -> TransactionStatus {
        self.client.session().transaction_status()
    }

    /// Whether a command since the connection was set up may have changed
    /// its session: a setting (`SET`, `RESET`, which in hyperd also resets
    /// the settings the connection started with), a database attached or
    /// detached, a temporary table, or other DDL: any statement that is
    /// not a read, a write or transaction control, by its tag or by its
    /// text (a `CREATE TABLE ... AS`, a `set_config`). Pools drop such a
    /// connection rather than hand its session to the next caller.
    pub fn session_changed(&self) -> bool {
        self.client.session().catalog_changes() != self.setup_changes
    }

    /// The connection can no longer be used (the server closed it, the
    /// socket failed, or the stream fell out of step): every call on it
    /// fails with [`Error::is_closed`](crate::Error::is_closed). Pools drop
    /// such connections.
    pub fn is_broken(&self) -> bool {
        self.client.session().is_broken()
    }

    /// A handle that cancels this connection's running statement; use
    /// [`CancelHandle::cancel_async`] from async code.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.client.cancel_handle()
    }

    pub fn server_parameter(&self, name: &str) -> Option<&str> {
        self.client.session().parameter(name)
    }

    /// The TLS this connection negotiated; `None` when it runs in plain.
    pub fn tls_info(&self) -> Option<hyperdb_api_core::client::TlsInfo> {
        self.client.tls_info()
    }

    /// The PostgreSQL version the server speaks for (`server_version`;
    /// hyperd 0.0.26963 reports 9.1.0).
    pub fn server_version(&self) -> Result<crate::ServerVersion> {
        crate::server_version::parse_parameter(
            "server_version",
            self.server_parameter("server_version"),
        )
    }

    /// hyperd's own version (`hyper_version`: `main.0.0.26963.r84171622`
    /// is 0.0.26963, the text kept); an error from a server that does not
    /// report one.
    pub fn hyper_version(&self) -> Result<crate::ServerVersion> {
        crate::server_version::parse_parameter(
            "hyper_version",
            self.server_parameter("hyper_version"),
        )
    }

    /// Closes cleanly; see [`crate::Connection::close`].
    pub async fn close(mut self) -> Result<()> {
        for detach in std::mem::take(&mut self.detach_on_close).iter().rev() {
            // Best effort, as in `Connection::close`.
            let _ = self.client.execute(detach).await;
        }
        Ok(self.client.close().await?)
    }

    /// The wire client and the route book, borrowed at once.
    #[cfg(feature = "arrow")]
    pub(crate) fn route_parts(&mut self) -> (&mut AsyncClient, &mut crate::route::RouteBook) {
        (&mut self.client, &mut self.routes)
    }

    pub(crate) fn client(&mut self) -> &mut AsyncClient {
        &mut self.client
    }

    pub(crate) fn last_insert(&mut self) -> &mut crate::insert::copy_tx::LastInsert {
        &mut self.last_insert
    }

    /// [`ConnectOptions::with_slow_statement_threshold`] of this connection.
    #[cfg(feature = "arrow")]
    pub(crate) fn slow_statement_threshold(&self) -> Option<Duration> {
        self.slow
    }
}

/// A streaming async result; see [`crate::Rows`] (same two sources, same
/// two ways to read: owned rows from [`AsyncRows::next`], lent rows from
/// [`AsyncRows::next_row`]).
///
/// It spends a unit of the task's budget every 64 rows it hands out, so a
/// loop over it yields at least every 8,192 rows (tokio's budget is 128
/// units), though the rows come from a buffer without awaiting the
/// network. Dropped before its end, the rest of the result is cancelled
/// by the connection's next request (see [`AsyncConnection`]).
#[derive(Debug)]
pub struct AsyncRows<'c> {
    source: AsyncRowSource<'c>,
    cursor: RowCursor,
    /// Tells the connection's route book how the result ended.
    #[cfg(feature = "arrow")]
    learn: Option<crate::route::Learn<'c>>,
}

// One per result, not moved while rows are read: boxing the Arrow side
// would only add an allocation per query.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum AsyncRowSource<'c> {
    Wire(&'c mut AsyncClient),
    #[cfg(feature = "arrow")]
    Arrow(crate::arrow::AsyncArrowBatches<'c>),
}

impl<'c> AsyncRows<'c> {
    /// `DataRow`s of the statement `trace` follows.
    pub(crate) fn wire(
        client: &'c mut AsyncClient,
        schema: Arc<Schema>,
        trace: StatementTrace,
    ) -> AsyncRows<'c> {
        AsyncRows {
            source: AsyncRowSource::Wire(client),
            cursor: RowCursor::traced(schema, trace).cooperative(),
            #[cfg(feature = "arrow")]
            learn: None,
        }
    }

    /// The same stream, reporting its end to `learn`.
    #[cfg(feature = "arrow")]
    pub(crate) fn learning(mut self, learn: crate::route::Learn<'c>) -> AsyncRows<'c> {
        self.learn = Some(learn);
        self
    }

    /// See [`crate::Rows::read_route`]. Not an API.
    #[cfg(feature = "arrow")]
    #[doc(hidden)]
    pub fn read_route(&self) -> crate::ReadRoute {
        match self.source {
            AsyncRowSource::Wire(_) => crate::ReadRoute::DataRows,
            AsyncRowSource::Arrow(_) => crate::ReadRoute::Arrow,
        }
    }

    /// Reports the result as failed to its route entry (the stream's
    /// reader found an error of its own).
    #[cfg(feature = "arrow")]
    pub(crate) fn learn_failed(&mut self) {
        if let Some(learn) = self.learn.take() {
            learn.failed();
        }
    }

    /// See [`crate::Rows`]'s `skip_rest`.
    pub(crate) async fn skip_rest(&mut self) {
        loop {
            self.cursor.skip_block();
            if !matches!(self.refill().await, Ok(true)) {
                return;
            }
        }
    }

    pub fn schema(&self) -> &Arc<Schema> {
        self.cursor.schema()
    }

    pub fn affected_rows(&self) -> Option<u64> {
        self.cursor.ended()
    }

    /// The next row, lent until the next call; `None` at the end. Rows of
    /// a block already received come back without awaiting the network.
    pub async fn next_row(&mut self) -> Option<Result<&Row>> {
        let step = read_rows!(
            self.cursor,
            self.cursor.index_current().map(Ok),
            self.refill().await,
            malformed(e) => self.broken(e)
        )?;
        Some(step.map(|()| self.cursor.row()))
    }

    /// Fetches the next block once the one at hand ran out; `false` once
    /// the stream has ended.
    async fn refill(&mut self) -> Result<bool> {
        let step = refill_cursor!(self.cursor, pause: crate::coop::pause().await, {
            let schema = self.cursor.schema();
            match &mut self.source {
                AsyncRowSource::Wire(client) => fetched_from_wire(schema, client.next_rows().await),
                #[cfg(feature = "arrow")]
                AsyncRowSource::Arrow(batches) => {
                    let step = batches.next().await;
                    crate::rows::fetched_from_arrow(schema, step, || batches.rows())
                }
            }
        });
        #[cfg(feature = "arrow")]
        crate::route::report_end(&mut self.learn, &self.cursor, &step);
        step
    }

    /// A malformed row broke the protocol: the connection is broken too.
    #[cold]
    fn broken(&mut self, e: crate::Error) -> crate::Error {
        match &mut self.source {
            AsyncRowSource::Wire(client) => client.mark_broken(&e),
            #[cfg(feature = "arrow")]
            AsyncRowSource::Arrow(_) => {}
        }
        e
    }

    /// The next row, or `None` at the end.
    ///
    /// A row of the block at hand is cloned here, before any await: going
    /// through `next_row`'s future passed every row through one more
    /// future's output, and the caller stalled reading it back (measured in
    /// DEVELOPMENT.md, "Owned rows on the async side"). `next_row`, which
    /// lends the row, stays the faster loop.
    pub async fn next(&mut self) -> Option<Result<Row>> {
        if self.cursor.advance() {
            return Some(match self.cursor.index_current() {
                Ok(()) => Ok(self.cursor.row().clone()),
                Err(e) => Err(self.broken(e)),
            });
        }
        self.next_row().await.map(|r| r.cloned())
    }

    /// The next row as `T` (a tuple or a [`FromRow`] type), lent until
    /// the next call like [`Rows::next_as`](crate::Rows::next_as): `T`
    /// may borrow from the row.
    pub async fn next_as<'r, T: FromRow<'r>>(&'r mut self) -> Option<Result<T>> {
        if let Err(e) = self.next_row().await? {
            return Some(Err(e));
        }
        Some(self.cursor.read_lent())
    }

    /// The rows as a `futures` [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<Row>> + 'c {
        futures_util::stream::unfold(self, |mut rows| async move {
            let item = rows.next().await?;
            Some((item, rows))
        })
    }
}

/// An open transaction on an [`AsyncConnection`]; rolls back on drop. hyperd
/// has no savepoints and does not undo DDL: see [`crate::Transaction`].
#[derive(Debug)]
pub struct AsyncTransaction<'c> {
    conn: &'c mut AsyncConnection,
    open: bool,
}

impl AsyncTransaction<'_> {
    /// Commits; a failed transaction is rolled back by hyperd and this
    /// returns 25P02 (see [`crate::Transaction::commit`]).
    ///
    /// Dropped before it is done, the transaction is rolled back if its
    /// `COMMIT` had not gone out yet (this first drains what an abandoned
    /// result still owed), and committed if it had: as with any statement,
    /// a dropped future does not say which; read the data to know.
    pub async fn commit(mut self) -> Result<()> {
        self.conn.client.settle().await?;
        self.open = false;
        committed(self.conn).await
    }

    /// Rolls back; dropped before it is done, the `ROLLBACK` still goes
    /// out with the connection's next request.
    pub async fn rollback(mut self) -> Result<()> {
        self.conn.client.settle().await?;
        self.open = false;
        // With nothing owed, the ROLLBACK is queued before the first await.
        self.conn.execute_command("ROLLBACK").await.map(drop)
    }
}

/// `COMMIT` on `conn`, which reports a transaction hyperd rolled back
/// instead (see [`crate::Transaction::commit`]).
#[cfg(feature = "arrow")] // for `shared`
pub(crate) async fn commit(conn: &mut AsyncConnection) -> Result<()> {
    conn.client.settle().await?;
    committed(conn).await
}

/// [`commit`] once nothing is owed: with nothing to drain, the `COMMIT`
/// is queued before the first await, so a future dropped from then on
/// has committed.
async fn committed(conn: &mut AsyncConnection) -> Result<()> {
    let before = conn.transaction_status();
    conn.execute_command("COMMIT").await?;
    crate::transaction::committed(before, conn.client.session())
}

impl Deref for AsyncTransaction<'_> {
    type Target = AsyncConnection;
    fn deref(&self) -> &AsyncConnection {
        self.conn
    }
}

impl DerefMut for AsyncTransaction<'_> {
    fn deref_mut(&mut self) -> &mut AsyncConnection {
        self.conn
    }
}

impl Drop for AsyncTransaction<'_> {
    fn drop(&mut self) {
        if self.open {
            if let Err(e) = self.conn.client.enqueue_command("ROLLBACK") {
                tracing::warn!("could not queue ROLLBACK for a dropped transaction: {e}");
            }
        }
    }
}

/// Arrow results; see [`crate::arrow`].
#[cfg(feature = "arrow")]
impl AsyncConnection {
    /// Runs `sql` and streams its result as Arrow record batches; the
    /// schema is known before the first batch. The values hyperd refuses to
    /// send as Arrow (22008) are listed at [`crate::Connection::query_arrow`].
    pub async fn query_arrow(&mut self, sql: &str) -> Result<crate::arrow::AsyncArrowBatches<'_>> {
        let mut trace = self.trace("query_arrow", sql, 0);
        match crate::arrow::AsyncArrowBatches::new(&mut self.client, sql, &mut trace).await {
            Ok(batches) => Ok(batches),
            Err(e) => trace.result(Err(e), |_| None),
        }
    }

    /// Runs `sql` and streams its result as raw Arrow IPC stream bytes.
    pub async fn query_arrow_ipc(
        &mut self,
        sql: &str,
    ) -> Result<crate::arrow::AsyncArrowIpcChunks<'_>> {
        let trace = self.trace("query_arrow_ipc", sql, 0);
        crate::arrow::AsyncArrowIpcChunks::new(&mut self.client, sql, trace).await
    }
}
