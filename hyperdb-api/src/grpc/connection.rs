//! The async gRPC connection and its options.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use hyperdb_api_core::grpc::{
    GrpcCancelHandle, GrpcClient, GrpcConfig, GrpcDatabase, GrpcParameters, GrpcQuery, GrpcResult,
    TransferMode,
};
use hyperdb_api_core::types::{FromHyperBinary, ToPgBinary};

use super::params::arrow_parameters;
use super::results::{AsyncGrpcArrowBatches, AsyncGrpcArrowIpcChunks, AsyncGrpcRows, StartedArrow};
use crate::error::{Error, Result};
use crate::trace::StatementTrace;

/// Options for a gRPC connection, as a consuming builder.
///
/// gRPC calls are stateless: the databases, settings, transfer mode and
/// row limit travel with every query (and can be changed between queries
/// on the connection).
#[derive(Clone, Debug)]
pub struct GrpcConnectOptions {
    config: GrpcConfig,
    query: GrpcQuery,
    slow_statement: Option<Duration>,
}

impl GrpcConnectOptions {
    /// Options with the [`crate::SESSION_DEFAULTS`] settings, as a
    /// PostgreSQL-protocol connection starts with.
    pub fn new(config: GrpcConfig) -> GrpcConnectOptions {
        let mut query = GrpcQuery::default();
        for (name, value) in crate::SESSION_DEFAULTS {
            query.settings.insert(name.to_owned(), value.to_owned());
        }
        GrpcConnectOptions {
            config,
            query,
            slow_statement: None,
        }
    }

    /// Options for `endpoint` (`http://HOST:PORT`, `https://HOST:PORT`, or
    /// hyperd's `tcp.grpc://HOST:PORT`).
    pub fn from_endpoint(endpoint: &str) -> Result<GrpcConnectOptions> {
        Ok(GrpcConnectOptions::new(GrpcConfig::new(endpoint)?))
    }

    /// Attaches the database file `path` to every query, under its file
    /// stem as alias (as [`crate::Connection::connect`] does).
    pub fn with_database(self, path: impl AsRef<Path>) -> Result<GrpcConnectOptions> {
        let path = path.as_ref();
        let alias = crate::options::database_alias(path).ok_or_else(|| {
            Error::invalid_argument("database", format!("no file name in {}", path.display()))
        })?;
        self.with_attached_database(path, &alias)
    }

    /// Attaches the database file `path` under `alias` to every query.
    pub fn with_attached_database(
        mut self,
        path: impl AsRef<Path>,
        alias: &str,
    ) -> Result<GrpcConnectOptions> {
        self.query.databases.push(database(path.as_ref(), alias)?);
        Ok(self)
    }

    /// A query setting sent with every query (hyperd rejects unknown
    /// names); it replaces a [`crate::SESSION_DEFAULTS`] one of that name.
    pub fn with_setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.settings.insert(name.into(), value.into());
        self
    }

    /// How results are transferred ([`TransferMode::Sync`] by default;
    /// ASYNC and ADAPTIVE need a server that persists results).
    pub fn with_transfer_mode(mut self, mode: TransferMode) -> Self {
        self.query.transfer_mode = mode;
        self
    }

    /// At most this many rows per query.
    pub fn with_row_limit(mut self, limit: Option<u64>) -> Self {
        self.query.row_limit = limit;
        self
    }

    /// Logs a WARN event for each query slower than `threshold` (off by
    /// default); see [`crate::ConnectOptions::with_slow_statement_threshold`].
    pub fn with_slow_statement_threshold(mut self, threshold: Option<Duration>) -> Self {
        self.slow_statement = threshold;
        self
    }

    /// See [`GrpcConfig::with_connect_timeout`].
    pub fn with_connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config = self.config.with_connect_timeout(timeout);
        self
    }

    /// See [`GrpcConfig::with_query_timeout`].
    pub fn with_query_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config = self.config.with_query_timeout(timeout);
        self
    }

    pub fn config(&self) -> &GrpcConfig {
        &self.config
    }
}

fn database(path: &Path, alias: &str) -> Result<GrpcDatabase> {
    let path = path.to_str().ok_or_else(|| {
        Error::invalid_argument("database", format!("{} is not UTF-8", path.display()))
    })?;
    if alias.is_empty() {
        return Err(Error::invalid_argument("alias", "empty"));
    }
    Ok(GrpcDatabase {
        path: path.to_owned(),
        alias: alias.to_owned(),
    })
}

/// An async connection to hyperd's gRPC interface (feature `grpc`): reads
/// only, results as Arrow or as the same [`Row`](crate::Row)s the
/// PostgreSQL-protocol connection returns.
///
/// Queries take `&self`: several may run at once over the one HTTP/2
/// connection. Results own what they need (no borrow of the connection).
///
/// ```no_run
/// # async fn f() -> hyperdb_api::Result<()> {
/// use hyperdb_api::{AsyncGrpcConnection, GrpcConnectOptions};
/// let conn = AsyncGrpcConnection::connect_with(
///     &GrpcConnectOptions::from_endpoint("http://127.0.0.1:7484")?.with_database("example.hyper")?,
/// ).await?;
/// let mut rows = conn.execute_query_params("SELECT x FROM t WHERE x > $1", &[&1i32]).await?;
/// while let Some(row) = rows.next().await {
///     let x: i32 = row?.try_get(0)?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct AsyncGrpcConnection {
    client: GrpcClient,
    query: GrpcQuery,
    /// [`GrpcConnectOptions::with_slow_statement_threshold`].
    slow: Option<Duration>,
}

impl AsyncGrpcConnection {
    /// Connects to `endpoint` with default options.
    pub async fn connect(endpoint: &str) -> Result<AsyncGrpcConnection> {
        AsyncGrpcConnection::connect_with(&GrpcConnectOptions::from_endpoint(endpoint)?).await
    }

    /// Connects with full options.
    pub async fn connect_with(options: &GrpcConnectOptions) -> Result<AsyncGrpcConnection> {
        let client = GrpcClient::connect(&options.config).await?;
        Ok(AsyncGrpcConnection {
            client,
            query: options.query.clone(),
            slow: options.slow_statement,
        })
    }

    /// Runs a query and streams its result as Arrow record batches; the
    /// schema is known before the first batch.
    pub async fn query_arrow(&self, sql: &str) -> Result<AsyncGrpcArrowBatches> {
        let query = self.prepare("grpc_query_arrow", sql, &[])?;
        self.batches(query).await
    }

    /// [`Self::query_arrow`] with bound parameters (`$1`, `$2`, ...).
    ///
    /// The parameters are encoded before the returned future first runs, so
    /// the future is `Send` (spawnable) although `dyn ToPgBinary` is not.
    pub fn query_arrow_params(
        &self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<AsyncGrpcArrowBatches>> + Send + '_ {
        let query = self.prepare("grpc_query_arrow", sql, params);
        async move { self.batches(query?).await }
    }

    /// [`Self::query_arrow_params`] up to hyperd taking the query, before
    /// its schema is read (see [`StartedArrow`]).
    pub(crate) fn query_arrow_started(
        &self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<StartedArrow>> + Send + '_ {
        let query = self.prepare("grpc_query_arrow", sql, params);
        async move {
            let (result, trace) = self.start(query?).await?;
            Ok(StartedArrow { result, trace })
        }
    }

    /// Runs a query and streams its result as raw Arrow IPC stream bytes.
    pub async fn query_arrow_ipc(&self, sql: &str) -> Result<AsyncGrpcArrowIpcChunks> {
        let query = self.prepare("grpc_query_arrow_ipc", sql, &[])?;
        self.chunks(query).await
    }

    /// [`Self::query_arrow_ipc`] with bound parameters; see
    /// [`Self::query_arrow_params`].
    pub fn query_arrow_ipc_params(
        &self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<AsyncGrpcArrowIpcChunks>> + Send + '_ {
        let query = self.prepare("grpc_query_arrow_ipc", sql, params);
        async move { self.chunks(query?).await }
    }

    /// Runs a query and streams its rows.
    pub async fn execute_query(&self, sql: &str) -> Result<AsyncGrpcRows> {
        let query = self.prepare("grpc_execute_query", sql, &[])?;
        Ok(AsyncGrpcRows::new(self.batches(query).await?))
    }

    /// Runs a query with bound parameters (`$1`, `$2`, ...; the same values
    /// as [`crate::AsyncConnection::execute_query_params`] takes) and streams
    /// its rows.
    pub fn execute_query_params(
        &self,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> impl Future<Output = Result<AsyncGrpcRows>> + Send + '_ {
        let query = self.prepare("grpc_execute_query", sql, params);
        async move { Ok(AsyncGrpcRows::new(self.batches(query?).await?)) }
    }

    /// The first column of the first row as `T` ([`Error::NoRows`] when
    /// there is none).
    pub async fn query_scalar<T>(&self, sql: &str) -> Result<T>
    where
        T: for<'a> FromHyperBinary<'a>,
    {
        let mut rows = self.execute_query(sql).await?;
        match rows.next().await {
            Some(row) => row?.try_get(0),
            None => Err(Error::NoRows),
        }
    }

    /// Attaches the database file `path` under `alias` to later queries.
    pub fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        let db = database(path.as_ref(), alias)?;
        self.query.databases.retain(|d| d.alias != db.alias);
        self.query.databases.push(db);
        Ok(())
    }

    /// Stops attaching the database known as `alias`.
    pub fn detach_database(&mut self, alias: &str) -> Result<()> {
        let before = self.query.databases.len();
        self.query.databases.retain(|d| d.alias != alias);
        if self.query.databases.len() == before {
            return Err(Error::invalid_argument(
                "alias",
                format!("no database attached as `{alias}`"),
            ));
        }
        Ok(())
    }

    /// Sets a query setting for later queries.
    pub fn set_setting(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.query.settings.insert(name.into(), value.into());
    }

    /// The settings sent with every query.
    pub fn settings(&self) -> &BTreeMap<String, String> {
        &self.query.settings
    }

    /// Sets the transfer mode of later queries.
    pub fn set_transfer_mode(&mut self, mode: TransferMode) {
        self.query.transfer_mode = mode;
    }

    pub fn transfer_mode(&self) -> TransferMode {
        self.query.transfer_mode
    }

    /// Sets the row limit of later queries.
    pub fn set_row_limit(&mut self, limit: Option<u64>) {
        self.query.row_limit = limit;
    }

    /// A handle that cancels the query most recently started on this
    /// connection (or its clones), from any task.
    pub fn cancel_handle(&self) -> GrpcCancelHandle {
        self.client.cancel_handle()
    }

    /// The wire client, for callers who want raw [`GrpcResult`]s.
    pub fn client(&self) -> &GrpcClient {
        &self.client
    }

    /// The query to send, parameters encoded: nothing borrowed from the
    /// caller is held across an await. A failure to encode them ends the
    /// statement's trace at once.
    fn prepare(
        &self,
        call: &'static str,
        sql: &str,
        params: &[&dyn ToPgBinary],
    ) -> Result<Pending> {
        if let Some(why) = refusal(sql) {
            let trace = StatementTrace::start(call, sql, params.len(), self.slow);
            let e = Error::invalid_argument("sql", why);
            return trace.result(Err(e), |_| None);
        }
        let mut query = self.query.clone();
        query.sql = sql.to_owned();
        if !params.is_empty() {
            match arrow_parameters(params) {
                Ok(encoded) => query.parameters = Some(GrpcParameters::ArrowIpc(encoded)),
                Err(e) => {
                    let trace = StatementTrace::start(call, sql, params.len(), self.slow);
                    return trace.result(Err(e), |_| None);
                }
            }
        }
        Ok(Pending {
            call,
            params: params.len(),
            query,
        })
    }

    /// Sends `pending`; its trace starts here and goes with the result.
    async fn start(&self, pending: Pending) -> Result<(GrpcResult, StatementTrace)> {
        let q = &pending.query;
        let mut trace = StatementTrace::start(pending.call, &q.sql, pending.params, self.slow);
        let result = trace.check(self.client.execute(q).await.map_err(Error::from))?;
        Ok((result, trace))
    }

    async fn batches(&self, pending: Pending) -> Result<AsyncGrpcArrowBatches> {
        let (result, trace) = self.start(pending).await?;
        AsyncGrpcArrowBatches::new(result, trace).await
    }

    async fn chunks(&self, pending: Pending) -> Result<AsyncGrpcArrowIpcChunks> {
        let (result, trace) = self.start(pending).await?;
        Ok(AsyncGrpcArrowIpcChunks::new(result, trace))
    }
}

/// Why `sql` is not sent, if it is not: a statement that writes or
/// changes the session (its first word, or a `WITH` whose statement or
/// one of whose queries is an `INSERT`, `UPDATE`, `DELETE` or `MERGE`),
/// which Hyper's gRPC service runs and then answers with a result that
/// does not match what it did (an `INSERT` "reported 2 rows but 0
/// arrived", a `CREATE TABLE` a 22000), so a caller that retried would
/// write twice; and a statement that does not start with a word, whose
/// keyword this crate cannot tell: were it wrong about a character hyperd
/// skips, a write would go (a leading BOM hid a `DELETE`). Anything else
/// (queries, a misspelt word, which hyperd answers with 42601, and
/// nothing but spaces and comments) goes.
fn refusal(sql: &str) -> Option<String> {
    let first = crate::sql_lex::first_token(sql);
    let word = crate::sql_lex::word_of(first);
    if word.is_empty() {
        let c = first.chars().next()?;
        return Some(format!(
            "gRPC runs queries, and this statement starts with {c:?} (U+{:04X}), not a \
             keyword: what hyperd would do with it cannot be told before it runs; start it \
             with its keyword, or run it on a Connection",
            u32::from(c)
        ));
    }
    let writing = if word.eq_ignore_ascii_case("with") {
        writing_with(sql)
    } else {
        WRITES
            .iter()
            .any(|k| word.eq_ignore_ascii_case(k))
            .then_some(word)
    }?;
    Some(format!(
        "gRPC runs queries, not {}: hyperd would run it and report no result it had; \
         run it on a Connection",
        writing.to_uppercase()
    ))
}

/// The keyword of the statement a `WITH` writes with, if any: a word
/// that follows a parenthesis (a query of its list, `AS (DELETE ...`, or
/// its statement, `...) INSERT`) and is a writing statement's keyword. A
/// column named `update` (`SELECT 1 AS update`) follows no parenthesis.
fn writing_with(sql: &str) -> Option<&str> {
    let mut after_paren = false;
    for token in crate::sql_lex::tokens(sql) {
        if after_paren
            && ["insert", "update", "delete", "merge"]
                .iter()
                .any(|k| token.eq_ignore_ascii_case(k))
        {
            return Some(token);
        }
        after_paren = token == "(" || token == ")";
    }
    None
}

/// The first words of statements that write or change the session.
const WRITES: [&str; 28] = [
    "insert",
    "update",
    "delete",
    "merge",
    "create",
    "drop",
    "alter",
    "truncate",
    "copy",
    "begin",
    "start",
    "commit",
    "end",
    "rollback",
    "abort",
    "savepoint",
    "release",
    "set",
    "reset",
    "grant",
    "revoke",
    "attach",
    "detach",
    "vacuum",
    "checkpoint",
    "lock",
    "comment",
    "discard",
];

/// A query ready to send, and what its trace records.
#[derive(Debug)]
struct Pending {
    call: &'static str,
    params: usize,
    query: GrpcQuery,
}

#[cfg(test)]
mod tests {
    use super::refusal;

    /// A write behind anything hyperd skips is refused, and so is a
    /// statement whose first character is no keyword's: hyperd might skip
    /// it too.
    #[test]
    fn writes_are_refused_behind_what_hyperd_skips() {
        for sql in [
            "\u{FEFF}DELETE FROM t",
            "\u{A0}delete from t",
            "\u{2028}\u{3000}\u{200B}\u{B}INSERT INTO t VALUES (1)",
            "(\u{200E}UPDATE t SET a = 1)",
            ";DELETE FROM t",
            "-- note\rDELETE FROM t",
            "/* a /* b */ DELETE FROM t",
            "WITH q AS (SELECT 1)\u{A0}DELETE FROM t",
            "WITH q AS (SELECT text$q$--$q$) DELETE FROM t",
        ] {
            let why = refusal(sql).unwrap_or_else(|| panic!("{sql:?} goes"));
            assert!(why.starts_with("gRPC runs queries, not "), "{sql:?}: {why}");
        }
        for sql in ["\u{85}DELETE FROM t", "\u{2060}SELECT 1", "$1", "'x'"] {
            let why = refusal(sql).unwrap_or_else(|| panic!("{sql:?} goes"));
            assert!(why.contains("not a keyword"), "{sql:?}: {why}");
        }
        for sql in [
            "SELECT 1",
            "\u{FEFF}SELECT 1",
            "(\u{3000}select 1)",
            ";WITH q AS (SELECT 1) TABLE q",
            "SELEC 1",
            "",
            " -- nothing\n",
        ] {
            assert_eq!(refusal(sql), None, "{sql:?}");
        }
    }
}
