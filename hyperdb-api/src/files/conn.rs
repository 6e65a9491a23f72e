//! The file methods of [`Connection`] and [`AsyncConnection`]: each builds
//! its SQL in `sql.rs` and runs it; the shared bodies are written once in
//! `file_methods!`, expanded with and without `.await`.

use std::path::Path;

use super::options::{CsvOptions, FileFormat};
use super::sql::{self, CopySource};
#[cfg(feature = "async")]
use crate::async_connection::AsyncConnection;
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::names::TableName;
use crate::table_definition::TableDefinition;

macro_rules! file_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Loads the file at `path` on the server's file system into
        /// `table` (CSV: its columns in order; Parquet and Arrow: by name,
        /// and a file column the table lacks is left out); returns the
        /// rows stored. hyperd
        /// reads the file itself. All or nothing: on any error (a missing
        /// file, a malformed row, a value that does not fit) the table
        /// keeps its rows; a malformed row's place is in
        /// [`Error::file_position`].
        pub $($async_kw)? fn copy_from_file(
            &mut self,
            table: impl Into<TableName>,
            path: impl AsRef<Path>,
            format: FileFormat,
        ) -> Result<u64> {
            let sql = sql::copy_from_file(&table.into(), path.as_ref(), &format)?;
            self.execute_command(&sql) $($aw)*
        }

        /// Writes a table or a query's result to `path` on the server's
        /// file system; returns the rows written. hyperd replaces a file
        /// that exists and creates missing directories.
        pub $($async_kw)? fn copy_to_file(
            &mut self,
            source: impl Into<CopySource>,
            path: impl AsRef<Path>,
            format: FileFormat,
        ) -> Result<u64> {
            let source = source.into();
            let sql = sql::copy_to_file(&source, path.as_ref(), &format)?;
            self.client()
                .execute(&sql)
                $($aw)*
                .map_err(|e| Error::Client(e.shift_position(source.position_offset())))
        }

        /// Creates `table` with the columns hyperd infers from the Parquet
        /// file at `path` (server side) and loads its rows; returns the new
        /// table's definition as the catalog reads it back.
        ///
        /// If the rows cannot be loaded, the new table is dropped again.
        /// (hyperd does not undo DDL on `ROLLBACK`: inside a transaction
        /// of yours, which the error aborts, the empty table stays.)
        pub $($async_kw)? fn create_table_from_file(
            &mut self,
            table: impl Into<TableName>,
            path: impl AsRef<Path>,
        ) -> Result<TableDefinition> {
            let table = table.into();
            let path = path.as_ref();
            let insert = sql::insert_from_parquet(&table, path)?;
            let drop = crate::catalog::drop_table_sql(&table)?;
            self.execute_command(&sql::create_from_parquet(&table, path)?) $($aw)* ?;
            if let Err(e) = self.execute_command(&insert) $($aw)* {
                if let Err(d) = self.execute_command(&drop) $($aw)* {
                    tracing::warn!("dropping {table} after its rows failed to load: {d}");
                }
                return Err(e);
            }
            self.catalog().get_table_definition(table) $($aw)*
        }
    };
}

impl Connection {
    file_methods!(;);

    /// Streams CSV from `reader` into `table` through the connection
    /// (`COPY ... FROM STDIN`), 256 KiB at a time; returns the rows
    /// stored. All or nothing: a server error (a malformed row, with its
    /// line in [`Error::file_position`]) or a read error leaves the table
    /// as it was and the connection usable.
    pub fn copy_in_csv(
        &mut self,
        table: impl Into<TableName>,
        mut reader: impl std::io::Read,
        options: CsvOptions,
    ) -> Result<u64> {
        let sql = sql::copy_in_csv(&table.into(), &options)?;
        super::stream::copy_in_from_reader!(self.client(), &sql, &options, reader;)
    }

    /// Streams a table or a query's result as CSV into `writer`
    /// (`COPY ... TO STDOUT`) as it arrives; returns the rows written. A
    /// write error cancels the COPY (the connection stays usable) and is
    /// returned. Wrap an unbuffered writer in a `BufWriter`.
    pub fn copy_out_csv(
        &mut self,
        source: impl Into<CopySource>,
        mut writer: impl std::io::Write,
        options: CsvOptions,
    ) -> Result<u64> {
        let source = source.into();
        let sql = sql::copy_out_csv(&source, &options)?;
        super::stream::copy_out_to_writer!(
            self.client(), &sql, source.position_offset(), writer, cancel;
        )
    }
}

#[cfg(feature = "async")]
impl AsyncConnection {
    file_methods!(async; .await);

    /// [`Connection::copy_in_csv`] from an `AsyncRead`. Cancel-safe:
    /// dropping the future aborts the COPY, and the table keeps its rows.
    pub async fn copy_in_csv(
        &mut self,
        table: impl Into<TableName>,
        reader: impl tokio::io::AsyncRead + Unpin,
        options: CsvOptions,
    ) -> Result<u64> {
        use tokio::io::AsyncReadExt;
        let mut reader = reader;
        let sql = sql::copy_in_csv(&table.into(), &options)?;
        super::stream::copy_in_from_reader!(self.client(), &sql, &options, reader; .await)
    }

    /// [`Connection::copy_out_csv`] into an `AsyncWrite`. A future dropped
    /// mid-way leaves the rest of the result to the connection's next
    /// request, which reads and discards it (as for every dropped stream).
    pub async fn copy_out_csv(
        &mut self,
        source: impl Into<CopySource>,
        writer: impl tokio::io::AsyncWrite + Unpin,
        options: CsvOptions,
    ) -> Result<u64> {
        use tokio::io::AsyncWriteExt;
        let mut writer = writer;
        let source = source.into();
        let sql = sql::copy_out_csv(&source, &options)?;
        super::stream::copy_out_to_writer!(
            self.client(), &sql, source.position_offset(), writer, cancel_async; .await
        )
    }
}
