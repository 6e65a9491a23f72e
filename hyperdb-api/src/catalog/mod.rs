//! Schemas, tables and database files: create, drop, list and read back.
//!
//! [`Catalog`] and [`AsyncCatalog`] borrow a connection for a few calls; all
//! SQL and result parsing lives in `sql.rs`, so each method here only runs
//! what that module built.
//!
//! A name without a schema means `public` (hyperd's search path), in the
//! connection's only database; qualify names when several are attached.

mod sql;

use std::path::Path;

#[cfg(feature = "async")]
use crate::async_connection::AsyncConnection;
use crate::connection::Connection;
use crate::error::Result;
use crate::names::{DatabaseName, SchemaName, TableName};
use crate::rows::Row;
use crate::table_definition::TableDefinition;
use sql::CatalogQuery;

/// `DROP TABLE IF EXISTS "t"`, for undoing a table this crate just made.
pub(crate) fn drop_table_sql(table: &TableName) -> Result<String> {
    sql::drop_table(table, true)
}

/// The body of `copy_table`, for [`Catalog`] and [`AsyncCatalog`]: `$cat`
/// is the catalog, `$($aw)*` nothing or `.await`.
macro_rules! copy_table {
    ($cat:expr, $from:expr, $to:expr; $($aw:tt)*) => {{
        let from: TableName = $from.into();
        let source = $cat.get_table_definition(from) $($aw)* ?;
        // Rows from the very table the definition came from: its full name.
        let from = source.name().clone();
        let mut copy = TableDefinition::new($to);
        for column in source.columns() {
            copy.add_column(column.clone());
        }
        $cat.create_table(&copy) $($aw)* ?;
        match $cat.conn.execute_command(&sql::copy_rows(&from, &copy)?) $($aw)* {
            Ok(rows) => Ok(rows),
            Err(e) => {
                // DDL outlives a ROLLBACK in hyperd: drop the copy by hand.
                if let Err(d) = $cat.command(drop_table_sql(copy.name())) $($aw)* {
                    tracing::warn!("dropping {} after its rows failed to copy: {d}", copy.name());
                }
                Err(e)
            }
        }
    }};
}

/// The definition `table` resolves to, read from the Arrow schema of
/// [`sql::resolved_schema_query`] on `$client` with `$batches`, the
/// client's Arrow reader: the stream read to its end (which records the
/// lookup's end in its span, started by `$trace` from the SQL; a failed
/// start is recorded here). `$($aw)*` is nothing or `.await`.
#[cfg(feature = "arrow")]
macro_rules! resolved_schema {
    ($client:expr, $table:expr, $trace:expr, $batches:ty; $($aw:tt)*) => {{
        let table: &TableName = $table;
        let sql = sql::resolved_schema_query(table)?;
        let mut trace: crate::trace::StatementTrace = $trace(&sql);
        let found = match <$batches>::new($client, &sql, &mut trace) $($aw)* {
            Ok(mut batches) => {
                let schema = batches.schema();
                let mut drained = Ok(());
                while let Some(batch) = batches.next() $($aw)* {
                    if let Err(e) = batch {
                        drained = Err(e);
                        break;
                    }
                }
                drained.and_then(|()| sql::definition_from_schema(table, &schema))
            }
            Err(e) => {
                trace.fail(&e);
                Err(e)
            }
        };
        found.map_err(|e| sql::unresolved(e, table))
    }};
}

/// The definition of the table a statement naming `table` writes (a
/// temporary table first, then the search path), on a bare client: what
/// [`Catalog`]'s inserter check runs, and what an inserter runs itself
/// (it holds its connection's client only; its lookup has no span of its
/// own, `trace` makes an inert one). SQLSTATE 42P01 when it does not
/// resolve.
#[cfg(feature = "arrow")]
pub(crate) fn resolved_definition_on(
    client: &mut hyperdb_api_core::client::Client,
    table: &TableName,
    trace: impl FnOnce(&str) -> crate::trace::StatementTrace,
) -> Result<TableDefinition> {
    resolved_schema!(client, table, trace, crate::arrow::ArrowBatches;)
}

/// [`resolved_definition_on`] for an async client.
#[cfg(all(feature = "arrow", feature = "async"))]
pub(crate) async fn resolved_definition_on_async(
    client: &mut hyperdb_api_core::client::AsyncClient,
    table: &TableName,
    trace: impl FnOnce(&str) -> crate::trace::StatementTrace,
) -> Result<TableDefinition> {
    resolved_schema!(client, table, trace, crate::arrow::AsyncArrowBatches; .await)
}

/// A catalog lookup's span for `sql`, on a connection whose slow-statement
/// threshold is `slow` (what `Connection::trace` starts).
#[cfg(feature = "arrow")]
fn lookup_trace(
    slow: Option<std::time::Duration>,
) -> impl FnOnce(&str) -> crate::trace::StatementTrace {
    move |sql| crate::trace::StatementTrace::start("catalog", sql, 0, slow)
}

/// Catalog operations over a blocking [`Connection`].
///
/// ```no_run
/// use hyperdb_api::{Catalog, Connection, CreateMode, HyperProcess, TableDefinition};
/// use hyperdb_api::types::SqlType;
///
/// let hyper = HyperProcess::start()?;
/// let mut conn = Connection::connect(hyper.endpoint(), "x.hyper", CreateMode::CreateAndReplace)?;
/// let mut catalog = Catalog::new(&mut conn);
/// catalog.create_schema("sales")?;
/// let def = TableDefinition::new(("sales", "orders")).with_not_null_column("id", SqlType::BigInt);
/// catalog.create_table(&def)?;
/// // Read back, the name also holds the database ("x"."sales"."orders").
/// let read = catalog.get_table_definition(("sales", "orders"))?;
/// assert_eq!(read.columns(), def.columns());
/// # Ok::<(), hyperdb_api::Error>(())
/// ```
#[derive(Debug)]
pub struct Catalog<'c> {
    conn: &'c mut Connection,
}

impl<'c> Catalog<'c> {
    pub fn new(conn: &'c mut Connection) -> Self {
        Catalog { conn }
    }

    fn command(&mut self, sql: Result<String>) -> Result<()> {
        self.conn.execute_command(&sql?).map(drop)
    }

    fn query<T>(&mut self, query: Result<CatalogQuery<T>>) -> Result<T> {
        let query = query?;
        let trace = self.conn.trace("catalog", &query.sql, 0);
        let rows = self
            .conn
            .simple_rows(&query.sql, trace)
            .and_then(|rows| rows.collect::<Result<Vec<Row>>>());
        query.answer(rows)
    }

    /// Errors with SQLSTATE 42710 when the schema exists.
    pub fn create_schema(&mut self, schema: impl Into<SchemaName>) -> Result<()> {
        self.command(sql::create_schema(&schema.into(), false))
    }

    pub fn create_schema_if_not_exists(&mut self, schema: impl Into<SchemaName>) -> Result<()> {
        self.command(sql::create_schema(&schema.into(), true))
    }

    /// Errors with SQLSTATE 42P07 when the table exists.
    pub fn create_table(&mut self, table: &TableDefinition) -> Result<()> {
        self.command(table.create_table_sql(false))
    }

    pub fn create_table_if_not_exists(&mut self, table: &TableDefinition) -> Result<()> {
        self.command(table.create_table_sql(true))
    }

    /// Errors with SQLSTATE 42P01 when the table does not exist.
    pub fn drop_table(&mut self, table: impl Into<TableName>) -> Result<()> {
        self.command(sql::drop_table(&table.into(), false))
    }

    pub fn drop_table_if_exists(&mut self, table: impl Into<TableName>) -> Result<()> {
        self.command(sql::drop_table(&table.into(), true))
    }

    /// Drops a schema; with `cascade` also the tables in it (without, a
    /// schema that holds any is refused with SQLSTATE 2BP01). SQLSTATE
    /// 3F000 when it does not exist. hyperd does not undo this on
    /// `ROLLBACK` (measured): the tables are gone.
    pub fn drop_schema(&mut self, schema: impl Into<SchemaName>, cascade: bool) -> Result<()> {
        self.command(sql::drop_schema(&schema.into(), cascade, false))
    }

    pub fn drop_schema_if_exists(
        &mut self,
        schema: impl Into<SchemaName>,
        cascade: bool,
    ) -> Result<()> {
        self.command(sql::drop_schema(&schema.into(), cascade, true))
    }

    /// Creates `to` with `from`'s definition (column names, types,
    /// nullability, collations) and copies `from`'s rows into it; returns
    /// the rows copied. (`CREATE TABLE .. AS SELECT` would lose NOT NULL.)
    /// SQLSTATE 42P01 when `from` does not exist, 42P07 when `to` does;
    /// nothing is created then. If the rows cannot be copied, `to` is
    /// dropped again (hyperd does not undo DDL on `ROLLBACK`: inside a
    /// transaction of yours, which the error aborts, the empty table stays).
    pub fn copy_table(
        &mut self,
        from: impl Into<TableName>,
        to: impl Into<TableName>,
    ) -> Result<u64> {
        copy_table!(self, from, to;)
    }

    /// Whether `table` exists; a bare name is looked up as in
    /// [`Self::get_table_definition`] (a temporary table counts).
    pub fn has_table(&mut self, table: impl Into<TableName>) -> Result<bool> {
        self.query(sql::has_table(&table.into()))
    }

    pub fn has_schema(&mut self, schema: impl Into<SchemaName>) -> Result<bool> {
        self.query(sql::has_schema(&schema.into()))
    }

    /// The aliases of the databases attached to this session, sorted (the
    /// names [`DatabaseName`] qualifies with).
    pub fn get_database_names(&mut self) -> Result<Vec<DatabaseName>> {
        self.query(Ok(sql::database_names()))
    }

    /// User schemas (system ones like `pg_catalog` left out), sorted; in
    /// `database` when given, qualified with it. Without it, the schemas
    /// of the session's one database: none once a second one is attached
    /// (hyperd has no default database then, and Tableau's Hyper API lists
    /// none either), so name the database.
    pub fn get_schema_names(&mut self, database: Option<&DatabaseName>) -> Result<Vec<SchemaName>> {
        self.query(sql::schema_names(database))
    }

    /// Tables of `schema`, sorted and qualified with it (none for a system
    /// schema such as `pg_catalog`, as in Tableau's Hyper API); SQLSTATE
    /// 3F000 when the schema does not exist.
    pub fn get_table_names(&mut self, schema: impl Into<SchemaName>) -> Result<Vec<TableName>> {
        let schema = schema.into();
        let names = self.query(sql::table_names(&schema))?;
        if names.is_empty() && !self.query(sql::has_schema(&schema))? {
            return Err(sql::missing_schema(&schema));
        }
        Ok(names)
    }

    /// The table's columns as the server stores them; SQLSTATE 42P01 when
    /// it does not exist. A bare name is looked up as a statement resolves
    /// it: a temporary table first, then the search path. The definition
    /// names the table in full, as Tableau's Hyper API does
    /// (`"db"."public"."t"`, or `"pg_temp"."t"` with
    /// [`Persistence::Temporary`](crate::Persistence)). Collation names come back in hyperd's canonical
    /// spelling (`en_us_ci` is stored as `en_US_CI`).
    pub fn get_table_definition(&mut self, table: impl Into<TableName>) -> Result<TableDefinition> {
        self.query(sql::table_definition(&table.into()))
    }

    /// The definition of the table a statement naming `table` writes (a
    /// temporary table first, then the search path); what inserters check
    /// their definition against. SQLSTATE 42P01 when it does not resolve.
    pub(crate) fn resolved_definition(&mut self, table: &TableName) -> Result<TableDefinition> {
        #[cfg(feature = "arrow")]
        {
            let trace = lookup_trace(self.conn.slow_statement_threshold());
            resolved_definition_on(self.conn.client(), table, trace)
        }
        #[cfg(not(feature = "arrow"))]
        self.query(sql::resolved_table_definition(table))
            .map_err(|e| sql::unresolved(e, table))
    }

    pub fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        self.conn.attach_database(path, alias)
    }

    pub fn detach_database(&mut self, alias: &str) -> Result<()> {
        self.conn.detach_database(alias)
    }

    /// Creates an empty `.hyper` file at `path` (server side); SQLSTATE
    /// 42P04 when it exists.
    pub fn create_database(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::create_database(path.as_ref(), false))
    }

    pub fn create_database_if_not_exists(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::create_database(path.as_ref(), true))
    }

    /// Deletes the file; fails with SQLSTATE 55006 while any session has it
    /// attached. Close (not just drop) the connections that used it first:
    /// hyperd 0.0.26963 can crash when a drop races the end of a session
    /// that still held the file (see [`Connection::close`]).
    pub fn drop_database(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::drop_database(path.as_ref(), false))
    }

    pub fn drop_database_if_exists(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::drop_database(path.as_ref(), true))
    }
}

/// [`Catalog`] for an [`AsyncConnection`]; same methods, same errors.
#[cfg(feature = "async")]
#[derive(Debug)]
pub struct AsyncCatalog<'c> {
    conn: &'c mut AsyncConnection,
}

#[cfg(feature = "async")]
impl<'c> AsyncCatalog<'c> {
    pub fn new(conn: &'c mut AsyncConnection) -> Self {
        AsyncCatalog { conn }
    }

    async fn command(&mut self, sql: Result<String>) -> Result<()> {
        self.conn.execute_command(&sql?).await.map(drop)
    }

    async fn query<T>(&mut self, query: Result<CatalogQuery<T>>) -> Result<T> {
        let query = query?;
        let trace = self.conn.trace("catalog", &query.sql, 0);
        let rows = async {
            let mut stream = self.conn.simple_rows(&query.sql, trace).await?;
            let mut rows = Vec::new();
            while let Some(row) = stream.next().await {
                rows.push(row?);
            }
            Ok(rows)
        }
        .await;
        query.answer(rows)
    }

    pub async fn create_schema(&mut self, schema: impl Into<SchemaName>) -> Result<()> {
        self.command(sql::create_schema(&schema.into(), false))
            .await
    }

    pub async fn create_schema_if_not_exists(
        &mut self,
        schema: impl Into<SchemaName>,
    ) -> Result<()> {
        self.command(sql::create_schema(&schema.into(), true)).await
    }

    pub async fn create_table(&mut self, table: &TableDefinition) -> Result<()> {
        self.command(table.create_table_sql(false)).await
    }

    pub async fn create_table_if_not_exists(&mut self, table: &TableDefinition) -> Result<()> {
        self.command(table.create_table_sql(true)).await
    }

    pub async fn drop_table(&mut self, table: impl Into<TableName>) -> Result<()> {
        self.command(sql::drop_table(&table.into(), false)).await
    }

    pub async fn drop_table_if_exists(&mut self, table: impl Into<TableName>) -> Result<()> {
        self.command(sql::drop_table(&table.into(), true)).await
    }

    pub async fn drop_schema(
        &mut self,
        schema: impl Into<SchemaName>,
        cascade: bool,
    ) -> Result<()> {
        self.command(sql::drop_schema(&schema.into(), cascade, false))
            .await
    }

    pub async fn drop_schema_if_exists(
        &mut self,
        schema: impl Into<SchemaName>,
        cascade: bool,
    ) -> Result<()> {
        self.command(sql::drop_schema(&schema.into(), cascade, true))
            .await
    }

    /// See [`Catalog::copy_table`].
    pub async fn copy_table(
        &mut self,
        from: impl Into<TableName>,
        to: impl Into<TableName>,
    ) -> Result<u64> {
        copy_table!(self, from, to; .await)
    }

    pub async fn get_database_names(&mut self) -> Result<Vec<DatabaseName>> {
        self.query(Ok(sql::database_names())).await
    }

    pub async fn has_table(&mut self, table: impl Into<TableName>) -> Result<bool> {
        self.query(sql::has_table(&table.into())).await
    }

    pub async fn has_schema(&mut self, schema: impl Into<SchemaName>) -> Result<bool> {
        self.query(sql::has_schema(&schema.into())).await
    }

    pub async fn get_schema_names(
        &mut self,
        database: Option<&DatabaseName>,
    ) -> Result<Vec<SchemaName>> {
        self.query(sql::schema_names(database)).await
    }

    pub async fn get_table_names(
        &mut self,
        schema: impl Into<SchemaName>,
    ) -> Result<Vec<TableName>> {
        let schema = schema.into();
        let names = self.query(sql::table_names(&schema)).await?;
        if names.is_empty() && !self.query(sql::has_schema(&schema)).await? {
            return Err(sql::missing_schema(&schema));
        }
        Ok(names)
    }

    pub async fn get_table_definition(
        &mut self,
        table: impl Into<TableName>,
    ) -> Result<TableDefinition> {
        self.query(sql::table_definition(&table.into())).await
    }

    pub(crate) async fn resolved_definition(
        &mut self,
        table: &TableName,
    ) -> Result<TableDefinition> {
        #[cfg(feature = "arrow")]
        {
            let trace = lookup_trace(self.conn.slow_statement_threshold());
            resolved_definition_on_async(self.conn.client(), table, trace).await
        }
        #[cfg(not(feature = "arrow"))]
        self.query(sql::resolved_table_definition(table))
            .await
            .map_err(|e| sql::unresolved(e, table))
    }

    pub async fn attach_database(&mut self, path: impl AsRef<Path>, alias: &str) -> Result<()> {
        self.conn.attach_database(path, alias).await
    }

    pub async fn detach_database(&mut self, alias: &str) -> Result<()> {
        self.conn.detach_database(alias).await
    }

    pub async fn create_database(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::create_database(path.as_ref(), false))
            .await
    }

    pub async fn create_database_if_not_exists(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::create_database(path.as_ref(), true))
            .await
    }

    pub async fn drop_database(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::drop_database(path.as_ref(), false)).await
    }

    pub async fn drop_database_if_exists(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.command(sql::drop_database(path.as_ref(), true)).await
    }
}
