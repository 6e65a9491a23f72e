//! Row inserters over one connection, sync and async.

use hyperdb_api_core::types::ToHyperBinary;

use crate::error::Result;
use crate::insert::copy_tx::{CopyTx, Target};
use crate::insert::encoder::RowEncoder;
use crate::insert::wire::Wire;
use crate::insert::{inserter_methods, row_encoder, InsertFormat};
use crate::table_definition::TableDefinition;
use crate::Connection;

/// Streams rows into a table; see the [module docs](crate::insert).
///
/// ```no_run
/// # use hyperdb_api::{Connection, Inserter, TableDefinition, types::SqlType};
/// # fn f(conn: &mut Connection) -> hyperdb_api::Result<()> {
/// let table = TableDefinition::new("measurements")
///     .with_not_null_column("id", SqlType::Int)
///     .with_column("value", SqlType::Double);
/// let mut ins = Inserter::new(conn, &table)?;
/// for id in 0..1000 {
///     ins.add_row(&[&id, &Some(id as f64 * 0.1)])?;
/// }
/// assert_eq!(ins.execute()?, 1000);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Inserter<'c> {
    client: &'c mut hyperdb_api_core::client::Client,
    encoder: RowEncoder<Wire>,
    copy: CopyTx,
    finished: bool,
}

impl<'c> Inserter<'c> {
    /// Starts a COPY into `table` in the default [`InsertFormat`]. `table`
    /// must be the table's own definition (the catalog's, or what created
    /// it): checked before any row goes out, else
    /// [`Error::DefinitionMismatch`](crate::Error::DefinitionMismatch)
    /// (42804); see the [module docs](crate::insert).
    pub fn new(conn: &'c mut Connection, table: &TableDefinition) -> Result<Inserter<'c>> {
        Inserter::with_format(conn, table, InsertFormat::default())
    }

    /// Starts a COPY into `table` sending `format`.
    pub fn with_format(
        conn: &'c mut Connection,
        table: &TableDefinition,
        format: InsertFormat,
    ) -> Result<Inserter<'c>> {
        let (sql, mut encoder) = row_encoder(table, format)?;
        let (copy, _) = CopyTx::open(conn, Target::Checked(table), |_| Ok(sql.clone()))?;
        let client = conn.client();
        encoder.start_stream(client.copy_buf());
        Ok(Inserter {
            client,
            encoder,
            copy,
            finished: false,
        })
    }

    inserter_methods!(;);

    /// Sends the remaining rows and commits; returns the rows stored
    /// (checked against the rows sent). On error nothing was stored.
    pub fn execute(mut self) -> Result<u64> {
        self.finish_copy()
    }
}

impl Drop for Inserter<'_> {
    fn drop(&mut self) {
        self.abort_queued("inserter dropped without execute()");
    }
}

/// [`Inserter`] for [`crate::AsyncConnection`]. Dropping it, or any of its
/// futures at any await point before `execute()` has sent the COMMIT,
/// aborts the insert: nothing is stored, and the connection's next request
/// sends the `CopyFail` / `ROLLBACK` that ends it. `execute()`'s last await
/// is the COMMIT's reply: dropped there, the rows are the server's. So a
/// `tokio::time::timeout` around a whole insert either stores all rows or
/// none. (Inside a transaction of yours there is no COMMIT of the
/// inserter's: dropped once the COPY has ended, its rows are in your
/// transaction, for you to commit or roll back.)
///
/// It spends a unit of the task's budget every 64 rows and by the bytes
/// it writes, so a long insert yields to the other tasks of its runtime
/// (at least every 8,192 rows) even when the socket takes every frame at
/// once.
#[cfg(feature = "async")]
#[derive(Debug)]
pub struct AsyncInserter<'c> {
    client: &'c mut hyperdb_api_core::client::AsyncClient,
    encoder: RowEncoder<Wire>,
    copy: CopyTx,
    finished: bool,
}

#[cfg(feature = "async")]
impl<'c> AsyncInserter<'c> {
    /// Starts a COPY into `table` in the default [`InsertFormat`]; `table`
    /// must be the table's own definition, as for [`Inserter::new`].
    pub async fn new(
        conn: &'c mut crate::AsyncConnection,
        table: &TableDefinition,
    ) -> Result<AsyncInserter<'c>> {
        AsyncInserter::with_format(conn, table, InsertFormat::default()).await
    }

    /// Starts a COPY into `table` sending `format`.
    pub async fn with_format(
        conn: &'c mut crate::AsyncConnection,
        table: &TableDefinition,
        format: InsertFormat,
    ) -> Result<AsyncInserter<'c>> {
        let (sql, mut encoder) = row_encoder(table, format)?;
        let (copy, _) =
            CopyTx::open_async(conn, Target::Checked(table), |_| Ok(sql.clone())).await?;
        let client = conn.client();
        encoder.start_stream(client.copy_buf());
        Ok(AsyncInserter {
            client,
            encoder,
            copy,
            finished: false,
        })
    }

    inserter_methods!(async; .await);

    /// Sends the remaining rows and commits; returns the rows stored
    /// (checked against the rows sent). On error nothing was stored.
    pub async fn execute(mut self) -> Result<u64> {
        self.finish_copy().await
    }
}

#[cfg(feature = "async")]
impl Drop for AsyncInserter<'_> {
    fn drop(&mut self) {
        self.abort_queued("inserter dropped before execute() completed");
    }
}
