//! File import and export through hyperd's own readers and writers.
//!
//! Two ways in and out:
//!
//! * **Files on the server's file system**, read or written by hyperd
//!   itself: [`Connection::copy_from_file`], [`Connection::copy_to_file`]
//!   (CSV, Parquet, Arrow IPC file and stream: [`FileFormat`]) and
//!   [`Connection::create_table_from_file`] (a new table with the columns
//!   hyperd infers from a Parquet file). Nothing crosses the connection
//!   but the statement. A path is the server's: relative ones resolve
//!   against hyperd's working directory (or its `external_file_root`
//!   setting), so pass absolute paths.
//! * **CSV through the connection**, from any `Read` / `AsyncRead` and to
//!   any `Write` / `AsyncWrite`: [`Connection::copy_in_csv`] and
//!   [`Connection::copy_out_csv`] (`COPY ... FROM STDIN` / `TO STDOUT`),
//!   in constant memory (256 KiB messages in; each chunk hyperd sends is
//!   written out as it arrives).
//!
//! [`AsyncConnection`](crate::AsyncConnection) has the same methods.
//!
//! ```no_run
//! use hyperdb_api::files::{CopySource, CsvOptions, FileFormat};
//! use hyperdb_api::types::SqlType;
//! use hyperdb_api::{Connection, CreateMode, HyperProcess, TableDefinition, TableName};
//!
//! let hyper = HyperProcess::start()?;
//! let mut conn = Connection::connect(hyper.endpoint(), "files.hyper", CreateMode::CreateAndReplace)?;
//! let table = TableDefinition::new("people")
//!     .with_not_null_column("id", SqlType::Int)
//!     .with_column("name", SqlType::Text);
//! conn.catalog().create_table(&table)?;
//!
//! // CSV streamed from the client (any `Read`): here two rows with a header.
//! let csv = "id;name\n1;Zoë\n2;NA\n";
//! let options = CsvOptions::new().with_header(true).with_delimiter(';').with_null("NA");
//! assert_eq!(conn.copy_in_csv("people", csv.as_bytes(), options.clone())?, 2);
//!
//! // Files hyperd writes and reads on its own file system.
//! conn.copy_to_file(TableName::new("people"), "/tmp/people.parquet", FileFormat::Parquet)?;
//! let copy = conn.create_table_from_file("people_copy", "/tmp/people.parquet")?;
//! assert_eq!(copy.column_count(), 2);
//! conn.copy_from_file("people", "/tmp/people.parquet", FileFormat::Parquet)?;
//!
//! // A query's result as CSV into any `Write`.
//! let mut out = Vec::new();
//! conn.copy_out_csv(CopySource::query("SELECT * FROM people ORDER BY id"), &mut out, options)?;
//! assert!(String::from_utf8_lossy(&out).starts_with("id;name\n1;Zoë\n"));
//!
//! // A malformed row: the server's message, and where it was.
//! let e = conn.copy_in_csv("people", "1,a\nx,b\n".as_bytes(), CsvOptions::new()).unwrap_err();
//! assert_eq!(e.file_position().map(|p| p.line), Some(2));
//! # Ok::<(), hyperdb_api::Error>(())
//! ```
//!
//! # What hyperd does (measured on 0.0.26963)
//!
//! * Formats: `FORMAT csv`, `parquet`, `arrowfile` (Arrow IPC file) and
//!   `arrowstream` (IPC stream) for reading and writing files (hyperd
//!   writes `text` too, not offered here). PostgreSQL's `binary` is disabled. An Arrow IPC
//!   stream read as a file (or the other way round) is refused: "Message
//!   does not begin with IPC continuation token".
//! * CSV options: `HEADER`, `DELIMITER`, `QUOTE`, `ESCAPE`, `NULL` for both
//!   directions; `ENCODING` (`utf-8`, `utf-16`, `utf-16-le`, `utf-16-be`,
//!   no other spelling) only for reading; an export is always UTF-8.
//!   hyperd's `utf-16-be` (and `utf-16` with a big-endian byte order
//!   mark) fails on any character outside the Basic Multilingual Plane
//!   (an emoji: XX001 "expected a low surrogate", through Tableau's API
//!   too); little-endian reads them.
//!   Separators are one byte and not CR or LF, delimiter and quote differ,
//!   and the NULL text may not contain the delimiter, the quote or a line
//!   break (hyperd takes one there, and writes each NULL as a line break
//!   no reader reads back): [`CsvOptions::check`] makes those checks
//!   before anything is sent.
//! * Parquet and Arrow files are loaded by column name: a file column the
//!   table lacks is left out, in any order. CSV goes by position.
//! * An import whose input fails part-way (a reader error or panic, an
//!   async future dropped) is ended with input hyperd must refuse and
//!   `CopyDone`, not `CopyFail`: hyperd answers a `CopyFail` that reaches
//!   it while its CSV parser waits for more only after 10 s, by closing
//!   the connection (about half the runs past ~70 KB). `FORCE_QUOTE` fails
//!   inside hyperd and `ON_ERROR` is refused, so neither is offered.
//! * Errors: a malformed CSV row is 22P02 with the place in the detail
//!   (`file: '/d/a.csv' line:3 column:3`, or `file:'stdin' line:3` for a
//!   stream or a wrong column count); a NULL in a NOT NULL column is 23502
//!   with `(line: 2, column 1)` in the message, the column from 0; bytes
//!   that are no UTF-8 are 22021 `invalid UTF-8 sequence in line 2`, the
//!   column's name in the detail. All read as a [`FilePosition`] (columns from 1) through
//!   [`crate::Error::file_position`]. A missing file is 58P01 ("could not
//!   read from external source"), a file that is not Parquet XX001.
//! * A failed COPY stores nothing. DDL is not transactional in hyperd: a
//!   `CREATE TABLE` (also one `AS SELECT` that failed while reading rows)
//!   stays after `ROLLBACK`, which is why
//!   [`Connection::create_table_from_file`] creates the table empty and
//!   then loads it, dropping it if the load fails.
//! * Schema inference (`external('x.parquet')`) works for Parquet only;
//!   for CSV and Arrow files hyperd asks for the schema. Columns come back
//!   nullable; `VARCHAR(n)` and `CHAR(n)` come back as `TEXT`.
//! * `COPY ... TO 'path'` replaces an existing file and creates missing
//!   directories. INTERVAL columns cannot be written to Parquet (42804).
//! * After a bad row in `COPY ... FROM STDIN` hyperd reads and discards the
//!   rest of the input, and the client cannot see the error before it ends
//!   the COPY: [`Connection::copy_in_csv`] sends its whole input, then
//!   returns the error.
//!
//! [`Connection::copy_from_file`]: crate::Connection::copy_from_file
//! [`Connection::copy_to_file`]: crate::Connection::copy_to_file
//! [`Connection::create_table_from_file`]: crate::Connection::create_table_from_file
//! [`Connection::copy_in_csv`]: crate::Connection::copy_in_csv
//! [`Connection::copy_out_csv`]: crate::Connection::copy_out_csv

mod conn;
mod options;
mod position;
pub(crate) mod sql;
pub(crate) mod stream;

pub use options::{CsvOptions, Encoding, FileFormat};
pub use position::FilePosition;
pub use sql::CopySource;
