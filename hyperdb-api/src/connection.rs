//! The blocking connection.

use std::path::Path;
use std::time::Duration;

use hyperdb_api_core::client::{CancelHandle, Client, Endpoint, TlsInfo};
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::protocol::ops::QueryRequest;

use hyperdb_api_core::types::{FromHyperBinary, SqlType, ToPgBinary};

use crate::error::Result;
use crate::from_row::FromRow;
use crate::options::{
    attach_sql, connect_client, detach_sql, run_setup, ConnectOptions, CreateMode, IN_USE_POLL,
};
use crate::params::Params;
use crate::rows::{Rows, Schema, TypedRows};
use crate::statement::{
    declared_types, Bound, Statement, StatementRef, ToStatement, RESULT_FORMAT,
};
use crate::trace::{ConnectTrace, StatementTrace};
use crate::transaction::Transaction;

/// A blocking connection to hyperd, usually with one `.hyper` database attached.
///
/// ```no_run
/// use hyperdb_api::{Connection, CreateMode, HyperProcess};
/// let hyper = HyperProcess::start()?;
/// let mut conn = Connection::connect(hyper.endpoint(), "example.hyper", CreateMode::CreateAndReplace)?;
/// conn.execute_command("CREATE TABLE t (x INT)")?;
/// assert_eq!(conn.execute_command("INSERT INTO t VALUES (1), (2)")?, 2);
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
#[derive(Debug)]
pub struct Connection {
    client: Client,
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

impl Connection {
    /// Connects to `endpoint` and opens `database` according to `mode`.
    pub fn connect(
        endpoint: &Endpoint,
        database: impl AsRef<Path>,
        mode: CreateMode,
    ) -> Result<Connection> {
        Connection::connect_with(
            &ConnectOptions::new(endpoint.clone()).with_database(database, mode),
        )
    }

    /// Connects with full options.
    pub fn connect_with(options: &ConnectOptions) -> Result<Connection> {
        let trace = ConnectTrace::start(options);
        let connected = trace.span().in_scope(|| {
            let plan = options.plan()?;
            let mut client = connect_client!(
                Client::connect_with_notices(&plan.config, plan.notices.clone()),
                pause: std::thread::sleep(IN_USE_POLL)
            )?;
            run_setup!(plan, sql => client.execute(sql), pause: std::thread::sleep(IN_USE_POLL));
            let detach_on_close = plan.alias.as_deref().map(detach_sql).transpose()?;
            let setup_changes = client.session().catalog_changes();
            Ok(Connection {
                client,
                detach_on_close: detach_on_close.into_iter().collect(),
                #[cfg(feature = "arrow")]
                routes: crate::route::RouteBook::default(),
                slow: options.slow_statement_threshold(),
                last_insert: Default::default(),
                setup_changes,
            })
        });
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
    pub fn execute_command(&mut self, sql: &str) -> Result<u64> {
        let trace = self.trace("execute_command", sql, 0);
        let sql = crate::transaction::ending(self.transaction_status(), sql);
        trace.result(self.client.execute(sql).map_err(Into::into), |n| Some(*n))
    }

    /// Runs a query and streams its rows. A plain query (SELECT, WITH,
    /// VALUES, TABLE) goes the way its earlier runs on this connection
    /// showed to be faster: hyperd's Arrow stream for results of many
    /// values, `DataRow`s of a cached prepared statement for few (see
    /// DEVELOPMENT.md, "Choosing the read route"); other statements as
    /// `DataRow`s. The rows, types and errors are the same (see [`Rows`]).
    pub fn execute_query(&mut self, sql: &str) -> Result<Rows<'_>> {
        let mut trace = self.trace("execute_query", sql, 0);
        #[cfg(feature = "arrow")]
        if crate::rows::arrow_eligible(sql) {
            return self.routed_query(sql, trace);
        }
        // Not a plain query, so possibly a COMMIT: of a failed transaction,
        // sent as ROLLBACK (see `execute_command`).
        let sql = crate::transaction::ending(self.transaction_status(), sql);
        let fields = trace.check(
            self.client
                .query(&QueryRequest::new(sql))
                .map_err(Into::into),
        )?;
        Ok(Rows::new(
            &mut self.client,
            Schema::from_fields(fields),
            trace,
        ))
    }

    /// A plain query, by the route its statement's book entry chooses;
    /// `trace` follows the whole statement, an Arrow attempt refused before
    /// its first batch included.
    #[cfg(feature = "arrow")]
    fn routed_query(&mut self, sql: &str, mut trace: StatementTrace) -> Result<Rows<'_>> {
        use crate::arrow::{arrow_cannot_express, ArrowBatches};
        use crate::route::{key, Learn, ReadRoute};
        let key = key(sql);
        if self.routes.choose_in(key, self.client.session()) == ReadRoute::Arrow {
            let start = std::time::Instant::now();
            match ArrowBatches::start(&mut self.client, sql, &mut trace) {
                Ok(started) if !started.rows_read_every_column() => {
                    // Read as rows; the COPY is settled by the query below.
                    self.routes.arrow_unreadable_as_rows(key);
                    trace = started.into_trace();
                }
                Ok(started) => {
                    let batches = ArrowBatches::resume(&mut self.client, started);
                    let secs = start.elapsed().as_secs_f64();
                    self.routes.arrow_started(key, secs, &batches.schema());
                    let learn = Learn::new(&mut self.routes, key);
                    return Ok(Rows::from_arrow(batches).learning(learn));
                }
                Err(e) if arrow_cannot_express(&e) => self.routes.arrow_refused(key),
                Err(e) => return trace.result(Err(e), |_| None),
            }
        }
        let fields = match self.client.query_simple(sql) {
            Ok(fields) => fields,
            Err(e) => {
                // What the entry says may be why (see `Learn::failed`).
                self.routes.forget(key);
                return trace.result(Err(e.into()), |_| None);
            }
        };
        let rows = Rows::new(&mut self.client, Schema::from_fields(fields), trace);
        Ok(rows.learning(Learn::new(&mut self.routes, key)))
    }

    /// Runs a plain query by `route`, whatever its statement's earlier runs
    /// showed, and tells nobody how it went. Not an API: for the benchmark
    /// suite, which times both routes against `execute_query`'s choice.
    #[cfg(feature = "arrow")]
    #[doc(hidden)]
    pub fn execute_query_by(&mut self, sql: &str, route: crate::ReadRoute) -> Result<Rows<'_>> {
        let mut trace = self.trace("execute_query", sql, 0);
        match route {
            crate::ReadRoute::Arrow => {
                match crate::arrow::ArrowBatches::new(&mut self.client, sql, &mut trace) {
                    Ok(batches) => Ok(Rows::from_arrow(batches)),
                    Err(e) => trace.result(Err(e), |_| None),
                }
            }
            crate::ReadRoute::DataRows => self.simple_rows(sql, trace),
        }
    }

    /// `sql` as a simple `Query`, its rows as `DataRow`s, outside the
    /// route book: for the crate's own lookups (the catalog's, an
    /// inserter's table check), whose results are a few rows. Routed, the
    /// first run of each went as an Arrow COPY, which hyperd plans afresh
    /// (10 ms for the inserter's check against 2 ms, then 0.9 against 0.7
    /// at every re-probe), and each filled the book.
    pub(crate) fn simple_rows(&mut self, sql: &str, mut trace: StatementTrace) -> Result<Rows<'_>> {
        let fields = trace.check(self.client.query_simple(sql).map_err(Into::into))?;
        Ok(Rows::new(
            &mut self.client,
            Schema::from_fields(fields),
            trace,
        ))
    }

    /// The first column of the first row as `T` ([`crate::Error::NoRows`]
    /// when there is none); the rest of the result is read and discarded
    /// (an error in it too), so that its size informs the next run's route.
    pub fn query_scalar<T>(&mut self, sql: &str) -> Result<T>
    where
        T: for<'a> FromHyperBinary<'a>,
    {
        let mut rows = self.execute_query(sql)?;
        let value = match rows.next() {
            Some(row) => row?.try_get(0),
            None => return Err(crate::Error::NoRows),
        };
        rows.skip_rest();
        value
    }

    /// Runs a query with bound parameters (`$1`, `$2`, ... in `sql`) and
    /// streams its rows. Parameters travel in binary; NUMERIC values should
    /// carry the scale of the column they are compared with or stored in.
    pub fn execute_query_params(
        &mut self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> Result<Rows<'_>> {
        let mut trace = self.trace("execute_query_params", sql, params.len());
        let params = trace.check(Params::encode(params))?;
        self.query_text(sql, &params, trace)
    }

    /// Runs `sql` with encoded `params` through the statement cache (a
    /// `COMMIT` of a failed transaction as `ROLLBACK`, as
    /// [`execute_command`](Self::execute_command) sends it).
    fn query_text(
        &mut self,
        sql: &str,
        params: &Params,
        mut trace: StatementTrace,
    ) -> Result<Rows<'_>> {
        let sql = crate::transaction::ending(self.transaction_status(), sql);
        let slices = params.slices();
        let request = trace.check(params.request(sql, &slices))?;
        let fields = trace.check(self.client.query_cached(&request).map_err(Into::into))?;
        Ok(Rows::new(
            &mut self.client,
            Schema::from_fields(fields),
            trace,
        ))
    }

    /// Runs a statement with bound parameters; returns the affected rows.
    pub fn execute_command_params(&mut self, sql: &str, params: &[&dyn ToPgBinary]) -> Result<u64> {
        let mut rows = self.execute_query_params(sql, params)?;
        for row in rows.by_ref() {
            row?;
        }
        Ok(rows.affected_rows().unwrap_or(0))
    }

    /// Runs a query and streams its rows as `T` (a tuple, or your
    /// [`FromRow`](crate::FromRow) type).
    pub fn query_as<T: for<'r> FromRow<'r>>(&mut self, sql: &str) -> Result<TypedRows<'_, T>> {
        Ok(self.execute_query(sql)?.typed())
    }

    /// Prepares `sql` on the server: parsed and planned once, then run
    /// with [`query`](Self::query), [`execute`](Self::execute) or
    /// [`query_as_params`](Self::query_as_params) as often as needed. Every
    /// `$n` parameter's type is left to hyperd to infer from its use (see
    /// [`prepare_typed`](Self::prepare_typed) to declare them).
    ///
    /// ```no_run
    /// # fn f(conn: &mut hyperdb_api::Connection) -> hyperdb_api::Result<()> {
    /// let lookup = conn.prepare("SELECT name FROM people WHERE id = $1")?;
    /// assert_eq!(lookup.columns()[0].name(), "name");
    /// for id in [1i32, 2, 3] {
    ///     for row in conn.query(&lookup, &[&id])? {
    ///         let name: String = row?.try_get(0)?;
    ///         println!("{id}: {name}");
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// A parameter hyperd infers takes values of any type: a run that binds
    /// one to a value in binary form goes as the statement's text, declared
    /// by the values, through the statement cache (hyperd would read the
    /// bytes as the type it inferred: an `i64` into DOUBLE PRECISION was
    /// stored as 2.5e-323). [`prepare_typed`](Self::prepare_typed) runs the
    /// prepared statement itself.
    ///
    /// The statement lives until the last clone of the returned handle
    /// is dropped (its `Close` then travels with this connection's next
    /// request). hyperd plans a prepared statement again when a table it
    /// reads changed, but keeps describing it as first planned: when its
    /// rows no longer fit [`Statement::columns`] the run fails with SQLSTATE
    /// 0A000 ("cached plan must not change result type") and the statement
    /// must be prepared again. A command on this connection that may have
    /// changed the catalog (DDL, `SET`, `ATTACH`, ...) is seen: later runs
    /// go as the statement's text, described afresh (see
    /// [`Statement::columns`] for the first description). A change that
    /// keeps the column count but not the types made by another session
    /// (a table dropped there and created with other types under the same
    /// name) cannot be seen by the client.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.prepare_typed(sql, &[])
    }

    /// [`prepare`](Self::prepare) declaring the first `types.len()`
    /// parameters' types; the rest are inferred. Values bound later must
    /// fit the declared types (an `i32` fits INT and BIGINT, an `i64`
    /// only BIGINT; text fits the text types, JSON, CHAR(1) and GEOGRAPHY,
    /// which hyperd takes as WKT text only; a NULL fits every type).
    pub fn prepare_typed(&mut self, sql: &str, types: &[SqlType]) -> Result<Statement> {
        let trace = self.trace("prepare", sql, 0);
        let prepared = declared_types(sql, types).and_then(|oids| {
            let name = self.client.statements().next_name("s");
            let description = self.client.prepare(&name, sql, &oids)?;
            Ok((name, description))
        });
        let (name, description) = trace.result(prepared, |_| None)?;
        Ok(Statement::new(
            name,
            sql,
            self.client.session(),
            description,
        ))
    }

    /// Runs a statement, prepared or SQL text, with bound parameters
    /// (`$1`, `$2`, ...) and streams its rows. SQL text goes through the
    /// connection's statement cache, as the other `*_params` calls do
    /// ([`ConnectOptions::with_statement_cache_capacity`]).
    pub fn query<S: ToStatement + ?Sized>(
        &mut self,
        statement: &S,
        params: &[&dyn ToPgBinary],
    ) -> Result<Rows<'_>> {
        let stmt = match statement.to_statement() {
            StatementRef::Sql(sql) => return self.execute_query_params(sql, params),
            StatementRef::Prepared(stmt) => stmt,
        };
        let mut trace = self.trace("query_prepared", stmt.sql(), params.len());
        if crate::transaction::ending(self.transaction_status(), stmt.sql()) != stmt.sql() {
            // A prepared COMMIT of a failed transaction would commit the
            // writes around the failure: it goes as ROLLBACK.
            let none = trace.check(Params::encode(&[]))?;
            return self.query_text(stmt.sql(), &none, trace);
        }
        let params = match trace.check(stmt.bind(self.client.session(), params))? {
            Bound::Statement(params) => params,
            Bound::Text(params) => return self.query_text(stmt.sql(), &params, trace),
        };
        let slices = params.slices();
        trace.check(
            self.client
                .query_prepared(
                    stmt.name(),
                    stmt.described(),
                    &slices,
                    params.formats(),
                    RESULT_FORMAT,
                )
                .map_err(Into::into),
        )?;
        Ok(Rows::new(&mut self.client, stmt.schema().clone(), trace))
    }

    /// Runs a statement, prepared or SQL text, with bound parameters;
    /// returns the affected rows.
    pub fn execute<S: ToStatement + ?Sized>(
        &mut self,
        statement: &S,
        params: &[&dyn ToPgBinary],
    ) -> Result<u64> {
        let mut rows = self.query(statement, params)?;
        for row in rows.by_ref() {
            row?;
        }
        Ok(rows.affected_rows().unwrap_or(0))
    }

    /// [`query`](Self::query) with each row read as `T` (a tuple, or your
    /// [`FromRow`](crate::FromRow) type).
    pub fn query_as_params<T: for<'r> FromRow<'r>, S: ToStatement + ?Sized>(
        &mut self,
        statement: &S,
        params: &[&dyn ToPgBinary],
    ) -> Result<TypedRows<'_, T>> {
        Ok(self.query(statement, params)?.typed())
    }

    /// One round trip to the server that runs nothing (a bare protocol
    /// `Sync`, cheaper than `SELECT 1`): `Ok` while the connection works,
    /// an error with [`Error::is_closed`](crate::Error::is_closed) once it
    /// does not (server gone, socket broken).
    pub fn ping(&mut self) -> Result<()> {
        Ok(self.client.ping()?)
    }

    /// Attaches another database file under `alias`.
    pub fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        let detach = detach_sql(alias)?;
        self.execute_command(&attach_sql(path.as_ref(), alias)?)?;
        self.detach_on_close.push(detach);
        Ok(())
    }

    /// Detaches the database known as `alias`.
    pub fn detach_database(&mut self, alias: &str) -> Result<()> {
        let detach = detach_sql(alias)?;
        self.execute_command(&detach)?;
        self.detach_on_close.retain(|d| *d != detach);
        Ok(())
    }

    /// Schemas, tables and databases: create, list, inspect, drop.
    pub fn catalog(&mut self) -> crate::Catalog<'_> {
        crate::Catalog::new(self)
    }

    /// Starts a transaction; it rolls back unless committed. A rollback
    /// undoes rows, not DDL: hyperd makes a `CREATE TABLE` or `DROP TABLE`
    /// in a transaction take effect at once.
    ///
    /// A transaction already open on the connection (a guard's, or a
    /// `BEGIN` sent by hand) is 25001: hyperd has no savepoints, so a
    /// transaction inside another would be the same one, and the inner
    /// end would end both.
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        Transaction::begin(self)
    }

    /// The transaction state after the last completed request.
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

    /// A handle that cancels this connection's running statement from any
    /// thread.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.client.cancel_handle()
    }

    /// A server parameter reported at startup (e.g. `server_version`).
    pub fn server_parameter(&self, name: &str) -> Option<&str> {
        self.client.session().parameter(name)
    }

    /// The TLS this connection negotiated (see [`crate::SslMode`]); `None`
    /// when it runs in plain.
    pub fn tls_info(&self) -> Option<TlsInfo> {
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

    /// Closes the connection cleanly: detaches the files it attached, then
    /// ends the session. When this returns, hyperd has closed those files,
    /// so another session may drop or replace them at once (dropping a
    /// `Connection` only closes its socket, and hyperd releases its files a
    /// moment later).
    ///
    /// This is also when commits reach the disk: hyperd writes a
    /// database's commits to its file only once no session has it attached
    /// (measured; a hyperd killed before that loses them). So when no
    /// other connection holds the file, what this connection committed is
    /// on disk once `close` returns.
    pub fn close(mut self) -> Result<()> {
        for detach in std::mem::take(&mut self.detach_on_close).iter().rev() {
            // Best effort: a file the user detached by SQL, or a session in
            // a failed transaction, still ends with the Terminate below.
            let _ = self.client.execute(detach);
        }
        Ok(self.client.close()?)
    }

    /// The wire client, for inserters and result streams in this crate.
    pub(crate) fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    pub(crate) fn last_insert(&mut self) -> &mut crate::insert::copy_tx::LastInsert {
        &mut self.last_insert
    }

    /// [`ConnectOptions::with_slow_statement_threshold`] of this connection.
    pub(crate) fn slow_statement_threshold(&self) -> Option<Duration> {
        self.slow
    }
}

/// Arrow results; see [`crate::arrow`].
#[cfg(feature = "arrow")]
impl Connection {
    /// Runs `sql` and streams its result as Arrow record batches; the
    /// schema is known before the first batch.
    ///
    /// hyperd refuses to send some values as Arrow and answers SQLSTATE
    /// 22008 (measured): a TIMESTAMP or TIMESTAMPTZ after
    /// 294247-01-10 04:00:54.775807 (Arrow's `i64` microseconds since 1970
    /// end there; hyperd's greatest, 294276-12-31 23:59:59.999999, is also
    /// its `infinity`), TIME 24:00:00, and an INTERVAL with more than 2^63
    /// nanoseconds (~292 years) of time. The error comes before the first
    /// batch, or after the batches before the value. The row API
    /// ([`Connection::execute_query`], `query_scalar`, `query_as`) then reads
    /// the result from `DataRow`s instead when the refusal came before the
    /// first batch; [`Connection::execute_query_params`] always does. The
    /// default [`crate::Inserter`] stores these values (as HyperBinary).
    pub fn query_arrow(&mut self, sql: &str) -> Result<crate::arrow::ArrowBatches<'_>> {
        let mut trace = self.trace("query_arrow", sql, 0);
        match crate::arrow::ArrowBatches::new(&mut self.client, sql, &mut trace) {
            Ok(batches) => Ok(batches),
            Err(e) => trace.result(Err(e), |_| None),
        }
    }

    /// Runs `sql` and streams its result as raw Arrow IPC stream bytes.
    pub fn query_arrow_ipc(&mut self, sql: &str) -> Result<crate::arrow::ArrowIpcChunks<'_>> {
        let trace = self.trace("query_arrow_ipc", sql, 0);
        crate::arrow::ArrowIpcChunks::new(&mut self.client, sql, trace)
    }
}
