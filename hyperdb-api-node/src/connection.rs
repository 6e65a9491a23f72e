//! `NativeConnection`: a [`SharedConnection`] held by a JS object. Calls
//! queue in order on it; see `hyperdb_api::shared` for how results and
//! waiting calls share the connection.

use std::time::Duration;

use hyperdb_api::{
    AuthMethod, AuthMethods, CancelToken, ConnectOptions, CreateMode, Endpoint, SharedConnection,
};
use napi::bindgen_prelude::{AsyncBlock, BigInt, Either};
use napi::Env;
use napi_derive::napi;

use crate::call::promise;
use crate::catalog::{TableDef, TableRef};
use crate::columns::{column_infos, ColumnInfo};
use crate::error::{invalid, js, Result};
use crate::inserter::NativeInserter;
use crate::params::{values, Param, MAX_SAFE_INTEGER};
use crate::streams::{NativeBatchStream, NativeIpcStream};

/// Options of `NativeConnection.connect` (see `lib/connection.ts`).
#[napi(object)]
pub struct NativeConnectOptions {
    pub endpoint: String,
    pub database: Option<String>,
    /// `doNotCreate` (default), `create`, `createIfNotExists`, `createAndReplace`.
    pub create_mode: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Authentication methods by libpq's `require_auth` names.
    pub require_auth: Option<Vec<String>>,
    pub connect_timeout_ms: Option<u32>,
    pub query_timeout_ms: Option<u32>,
    /// Session settings, `[name, value]` pairs.
    pub settings: Option<Vec<Vec<String>>>,
}

/// One connection to hyperd.
#[napi]
pub struct NativeConnection {
    conn: SharedConnection,
}

#[napi]
impl NativeConnection {
    /// Connects (and creates or attaches the database, per `createMode`).
    #[napi(factory)]
    pub async fn connect(options: NativeConnectOptions) -> Result<NativeConnection> {
        let options = connect_options(options)?;
        Ok(NativeConnection {
            conn: js(SharedConnection::connect_with(&options).await)?,
        })
    }

    /// Runs one statement; the affected row count, as a number up to 2^53
    /// and a bigint past it. Its place in line is taken now.
    #[napi(ts_return_type = "Promise<number | bigint>")]
    pub fn execute_command(
        &self,
        env: &Env,
        sql: String,
        params: Vec<Param>,
        token: Option<&NativeCancelToken>,
    ) -> Result<AsyncBlock<Either<f64, BigInt>>> {
        let place = self.conn.place();
        let params = values(params)?;
        let token = NativeCancelToken::of(token);
        promise(env, async move {
            let n = js(place.execute_command(&sql, &params, token.as_ref()).await)?;
            Ok(if n as f64 <= MAX_SAFE_INTEGER {
                Either::A(n as f64)
            } else {
                Either::B(BigInt::from(n))
            })
        })
    }

    /// Commits the open transaction; rejects with 25P02 when hyperd rolled
    /// it back instead (a statement in it had failed).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn commit(&self, env: &Env) -> Result<AsyncBlock<()>> {
        let place = self.conn.place();
        promise(env, async move { js(place.commit().await) })
    }

    /// Runs a query; its result as batches of columns. `token` cancels it
    /// while it waits for its turn or runs. `forRows`: the batches become
    /// rows, so timestamps past Arrow's range come wrapped rather than
    /// refused (`Place::query_row_batches`).
    #[napi(ts_return_type = "Promise<NativeBatchStream>")]
    pub fn query_batches(
        &self,
        env: &Env,
        sql: String,
        params: Vec<Param>,
        token: Option<&NativeCancelToken>,
        for_rows: Option<bool>,
    ) -> Result<AsyncBlock<NativeBatchStream>> {
        let place = self.conn.place();
        let params = values(params)?;
        let token = NativeCancelToken::of(token);
        promise(env, async move {
            let stream = if for_rows == Some(true) {
                place.query_row_batches(&sql, params, token.as_ref()).await
            } else {
                place.query_arrow(&sql, params, token.as_ref()).await
            };
            NativeBatchStream::open(js(stream)?).await
        })
    }

    /// The columns a statement would return, from the server's description
    /// of it: nothing runs (`Place::describe`).
    #[napi(ts_return_type = "Promise<Array<ColumnInfo>>")]
    pub fn describe(
        &self,
        env: &Env,
        sql: String,
        params: Vec<Param>,
    ) -> Result<AsyncBlock<Vec<ColumnInfo>>> {
        let place = self.conn.place();
        let params = values(params)?;
        promise(env, async move {
            column_infos(&js(place.describe(&sql, &params).await)?)
        })
    }

    /// Runs a query; its result as one Arrow IPC stream (see `queryBatches`).
    #[napi(ts_return_type = "Promise<NativeIpcStream>")]
    pub fn query_ipc(
        &self,
        env: &Env,
        sql: String,
        params: Vec<Param>,
        token: Option<&NativeCancelToken>,
    ) -> Result<AsyncBlock<NativeIpcStream>> {
        let place = self.conn.place();
        let params = values(params)?;
        let token = NativeCancelToken::of(token);
        promise(env, async move {
            let stream = place.query_arrow_ipc(&sql, params, token.as_ref()).await;
            Ok(NativeIpcStream::new(js(stream)?))
        })
    }

    /// Starts an insert into `table` (see `NativeInserter`); its place in
    /// line is taken now. `expected`, the definition the caller builds its
    /// rows for, must match the server's.
    #[napi]
    pub fn inserter(&self, table: TableRef, expected: Option<TableDef>) -> Result<NativeInserter> {
        let expected = expected.map(|d| d.to_rust()).transpose()?;
        NativeInserter::start(self.conn.place(), table.table_name(), expected)
    }

    /// Cancels the call running now, or about to run, if made before
    /// this one (see `SharedConnection::cancel`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cancel(&self, env: &Env) -> Result<AsyncBlock<()>> {
        let cancel = self.conn.cancel();
        promise(env, async move { js(cancel.await) })
    }

    /// Closes after the calls made before; later calls fail.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self, env: &Env) -> Result<AsyncBlock<()>> {
        let place = self.conn.place();
        promise(env, async move { js(place.close().await) })
    }

    #[napi(getter)]
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// Runs one catalog operation (see `lib/catalog.ts`).
    #[napi(ts_return_type = "Promise<CatalogAnswer>")]
    pub fn catalog(
        &self,
        env: &Env,
        op: String,
        table: Option<TableRef>,
        name: Option<String>,
    ) -> Result<AsyncBlock<CatalogAnswer>> {
        let place = self.conn.place();
        promise(env, async move {
            crate::catalog::run(place, &op, table, name).await
        })
    }

    /// Creates a table from its definition.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn create_table(
        &self,
        env: &Env,
        table: TableDef,
        if_not_exists: bool,
    ) -> Result<AsyncBlock<()>> {
        let place = self.conn.place();
        let def = table.to_rust()?;
        promise(env, async move {
            let mut guard = js(place.lock().await)?;
            let mut catalog = guard.conn().catalog();
            js(if if_not_exists {
                catalog.create_table_if_not_exists(&def).await
            } else {
                catalog.create_table(&def).await
            })
        })
    }
}

/// Cancels one query, whether it still waits for its turn on the
/// connection (it then never runs) or already runs.
#[napi]
pub struct NativeCancelToken {
    token: CancelToken,
}

impl NativeCancelToken {
    /// The token a call takes, if JavaScript gave one.
    pub(crate) fn of(token: Option<&NativeCancelToken>) -> Option<CancelToken> {
        token.map(|t| t.token.clone())
    }
}

#[napi]
impl NativeCancelToken {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> NativeCancelToken {
        NativeCancelToken {
            token: CancelToken::new(),
        }
    }

    #[napi]
    pub async fn cancel(&self) -> Result<()> {
        js(self.token.cancel().await)
    }
}

/// What a catalog operation answers.
#[napi(object)]
pub struct CatalogAnswer {
    pub flag: Option<bool>,
    pub names: Option<Vec<TableRef>>,
    pub table: Option<TableDef>,
}

fn connect_options(o: NativeConnectOptions) -> Result<ConnectOptions> {
    let endpoint: Endpoint = o
        .endpoint
        .parse()
        .map_err(|e| crate::error::to_napi(hyperdb_api::Error::from(e)))?;
    let mut options = ConnectOptions::new(endpoint);
    // Checked with no database too: a misspelt mode is refused, not ignored.
    let mode = create_mode(o.create_mode.as_deref())?;
    match o.database {
        Some(db) => options = options.with_database(db, mode),
        // As a connection string's `create_mode` without a path: what
        // would it create?
        None if mode != CreateMode::DoNotCreate => {
            return Err(invalid(
                "createMode",
                "given without a database (it says what to do with that file)",
            ))
        }
        None => {}
    }
    if let Some(user) = o.user {
        options = options.with_user(user);
    }
    if let Some(password) = o.password {
        options = options.with_password(password);
    }
    if let Some(names) = o.require_auth {
        let mut methods = AuthMethods::NONE;
        for name in &names {
            let method = AuthMethod::from_libpq_name(name).ok_or_else(|| {
                invalid(
                    "requireAuth",
                    &format!("{name:?} is none of none, password, md5, scram-sha-256"),
                )
            })?;
            methods = methods | method.into();
        }
        options = options.with_require_auth(methods);
    }
    if let Some(ms) = o.connect_timeout_ms {
        options = options.with_connect_timeout(Some(Duration::from_millis(ms.into())));
    }
    if let Some(ms) = o.query_timeout_ms {
        options = options.with_query_timeout(Some(Duration::from_millis(ms.into())));
    }
    for pair in o.settings.unwrap_or_default() {
        match pair.as_slice() {
            [name, value] => options = options.with_param(name.clone(), value.clone()),
            _ => return Err(invalid("settings", "each setting is a [name, value] pair")),
        }
    }
    Ok(options)
}

fn create_mode(mode: Option<&str>) -> Result<CreateMode> {
    Ok(match mode.unwrap_or("doNotCreate") {
        "doNotCreate" => CreateMode::DoNotCreate,
        "create" => CreateMode::Create,
        "createIfNotExists" => CreateMode::CreateIfNotExists,
        "createAndReplace" => CreateMode::CreateAndReplace,
        other => {
            return Err(invalid(
                "createMode",
                &format!(
                    "{other:?} is none of doNotCreate, create, createIfNotExists, createAndReplace"
                ),
            ))
        }
    })
}
