//! Query results: column metadata, rows decoded lazily from the received
//! buffers, and the sync row streams.

use std::marker::PhantomData;
use std::sync::Arc;

use hyperdb_api_core::client::Client;

use crate::error::Result;
use crate::from_row::FromRow;
use crate::trace::StatementTrace;

mod plan;
mod row;
mod schema;
mod values;

pub use plan::ColumnMap;
pub(crate) use plan::ReadPlan;
#[cfg(feature = "arrow")]
pub(crate) use row::fetched_from_arrow;
pub use row::Row;
pub(crate) use row::{fetched_from_wire, read_rows, read_typed_rows, refill_cursor, RowCursor};
#[cfg(all(test, feature = "arrow"))]
pub(crate) use row::{Block, Fetched};
pub use schema::{Column, ColumnIndex, Schema};
pub use values::RowValues;

/// A streaming result: rows arrive as the stream advances, so memory stays
/// constant whatever the row count. Dropping it early is fine: the connection
/// discards the rest before its next request.
///
/// Two ways to read it: as an [`Iterator`] of owned [`Row`]s (one reference
/// count per row), or with [`Rows::next_row`], which lends each row and
/// costs nothing per row beyond reading the values.
///
/// Plain queries are served from hyperd's Arrow stream (3-4x cheaper for the
/// server to produce than rows) and read from the batches' columns, or from
/// `DataRow`s once their statement's earlier runs on the connection showed a
/// small result (see [`Connection::execute_query`](crate::Connection::execute_query));
/// everything else from `DataRow`s. Values, types and errors are the same
/// either way.
#[derive(Debug)]
pub struct Rows<'c> {
    source: RowSource<'c>,
    cursor: RowCursor,
    /// Tells the connection's route book how the result ended.
    #[cfg(feature = "arrow")]
    learn: Option<crate::route::Learn<'c>>,
}

// One per result, not moved while rows are read: boxing the Arrow side
// would only add an allocation per query.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum RowSource<'c> {
    Wire(&'c mut Client),
    #[cfg(feature = "arrow")]
    Arrow(crate::arrow::ArrowBatches<'c>),
}

impl<'c> Rows<'c> {
    /// `DataRow`s of the statement `trace` follows.
    pub(crate) fn new(
        client: &'c mut Client,
        schema: Arc<Schema>,
        trace: StatementTrace,
    ) -> Rows<'c> {
        Rows {
            source: RowSource::Wire(client),
            cursor: RowCursor::traced(schema, trace),
            #[cfg(feature = "arrow")]
            learn: None,
        }
    }

    #[cfg(feature = "arrow")]
    pub(crate) fn from_arrow(batches: crate::arrow::ArrowBatches<'c>) -> Rows<'c> {
        Rows {
            cursor: RowCursor::new(crate::arrow::row_schema(&batches.schema())),
            source: RowSource::Arrow(batches),
            learn: None,
        }
    }

    /// The same stream, reporting its end to `learn`.
    #[cfg(feature = "arrow")]
    pub(crate) fn learning(mut self, learn: crate::route::Learn<'c>) -> Rows<'c> {
        self.learn = Some(learn);
        self
    }

    /// Which route the result takes. Not an API: for the tests of the
    /// route choice.
    #[cfg(feature = "arrow")]
    #[doc(hidden)]
    pub fn read_route(&self) -> crate::ReadRoute {
        match self.source {
            RowSource::Wire(_) => crate::ReadRoute::DataRows,
            RowSource::Arrow(_) => crate::ReadRoute::Arrow,
        }
    }

    /// Reads the rest of the result without handing out rows (a block at a
    /// time), so that its end is seen; an error ends it quietly. Each block
    /// is given up whole: a refill alone stays on a block with rows left,
    /// and `query_scalar` of two rows or more spun here for ever.
    pub(crate) fn skip_rest(&mut self) {
        loop {
            self.cursor.skip_block();
            if !matches!(self.refill(), Ok(true)) {
                return;
            }
        }
    }

    /// The result's columns, known before the first row.
    pub fn schema(&self) -> &Arc<Schema> {
        self.cursor.schema()
    }

    /// Rows the server reported once the stream is exhausted.
    pub fn affected_rows(&self) -> Option<u64> {
        self.cursor.ended()
    }

    /// The next row, lent until the next call; `None` at the end.
    ///
    /// ```no_run
    /// # fn f(conn: &mut hyperdb_api::Connection) -> hyperdb_api::Result<()> {
    /// let mut rows = conn.execute_query("SELECT id, name FROM people")?;
    /// while let Some(row) = rows.next_row() {
    ///     let row = row?;
    ///     let (id, name): (i32, &str) = (row.try_get(0)?, row.try_get(1)?);
    ///     println!("{id} {name}");
    /// }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn next_row(&mut self) -> Option<Result<&Row>> {
        let step = read_rows!(
            self.cursor,
            self.cursor.index_current().map(Ok),
            self.refill(),
            malformed(e) => self.broken(e)
        )?;
        Some(step.map(|()| self.cursor.row()))
    }

    /// The next row as `T` (a tuple or a [`FromRow`] type), lent until
    /// the next call; `None` at the end. `T` may borrow from the row
    /// (`&str`, `&[u8]`, a `#[derive(FromRow)]` struct with a lifetime),
    /// so text is read without an allocation per value.
    ///
    /// ```no_run
    /// # fn f(conn: &mut hyperdb_api::Connection) -> hyperdb_api::Result<()> {
    /// #[derive(hyperdb_api::FromRow)]
    /// struct Person<'r> { id: i32, name: &'r str }
    ///
    /// let mut rows = conn.execute_query("SELECT id, name FROM people")?;
    /// while let Some(person) = rows.next_as::<Person>() {
    ///     let person = person?;
    ///     println!("{} {}", person.id, person.name);
    /// }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn next_as<'r, T: FromRow<'r>>(&'r mut self) -> Option<Result<T>> {
        if let Err(e) = self.next_row()? {
            return Some(Err(e));
        }
        Some(self.cursor.read_lent())
    }

    /// Fetches the next block once the one at hand ran out; `false` once
    /// the stream has ended.
    #[inline(never)]
    fn refill(&mut self) -> Result<bool> {
        let step = refill_cursor!(self.cursor, {
            let schema = self.cursor.schema();
            match &mut self.source {
                RowSource::Wire(client) => fetched_from_wire(schema, client.next_rows()),
                #[cfg(feature = "arrow")]
                RowSource::Arrow(batches) => {
                    let step = batches.next();
                    crate::rows::fetched_from_arrow(schema, step, || batches.rows())
                }
            }
        });
        #[cfg(feature = "arrow")]
        crate::route::report_end(&mut self.learn, &self.cursor, &step);
        step
    }

    /// The row at hand as `T`, read with every check: its value or error.
    #[inline(never)]
    fn read_checked<T: for<'r> FromRow<'r>>(&mut self, plan: ReadPlan) -> Result<T> {
        match self.cursor.read_current::<T>(plan) {
            Ok(row) => row,
            Err(e) => Err(self.broken(e)),
        }
    }

    /// A malformed row broke the protocol: the connection is broken too.
    #[cold]
    fn broken(&mut self, e: crate::Error) -> crate::Error {
        match &mut self.source {
            RowSource::Wire(client) => client.mark_broken(&e),
            #[cfg(feature = "arrow")]
            RowSource::Arrow(_) => {}
        }
        e
    }

    /// The same stream, each row converted to `T`.
    pub fn typed<T: for<'r> FromRow<'r>>(mut self) -> TypedRows<'c, T> {
        TypedRows {
            plan: self.cursor.plan::<T>(),
            rows: self,
            _t: PhantomData,
        }
    }
}

impl Iterator for Rows<'_> {
    type Item = Result<Row>;

    // Inlined like `next_row`: a `Row` returned through memory was read
    // back by the caller with wide loads over the narrow stores just made
    // (a stalled store forward, +15 ns a row).
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Row>> {
        self.next_row().map(|r| r.cloned())
    }
}

/// [`Rows`] converted to `T` row by row; see [`crate::Connection::query_as`].
/// Reads each row in place: no reference count per row, and for a type
/// with an in-order reader (a tuple) no index of a `DataRow`'s fields.
#[derive(Debug)]
pub struct TypedRows<'c, T> {
    rows: Rows<'c>,
    /// How `T` reads this result's columns, found once.
    plan: ReadPlan,
    _t: PhantomData<fn() -> T>,
}

impl<T> TypedRows<'_, T> {
    pub fn schema(&self) -> &Arc<Schema> {
        self.rows.schema()
    }

    /// See [`Rows::read_route`]. Not an API.
    #[cfg(feature = "arrow")]
    #[doc(hidden)]
    pub fn read_route(&self) -> crate::ReadRoute {
        self.rows.read_route()
    }
}

impl<T: for<'r> FromRow<'r>> Iterator for TypedRows<'_, T> {
    type Item = Result<T>;

    #[inline(always)]
    fn next(&mut self) -> Option<Result<T>> {
        let rows = &mut self.rows;
        read_typed_rows!(
            rows.cursor,
            T,
            plan: self.plan,
            checked: rows.read_checked::<T>(self.plan),
            rows.refill()
        )
    }
}

/// Whether `sql` can be served through `COPY (sql) TO STDOUT` as Arrow: a
/// plain query (its first word after any comments is SELECT, WITH, VALUES
/// or TABLE). Anything else (SHOW, EXPLAIN, ...) takes the `DataRow` path.
#[cfg(feature = "arrow")]
pub(crate) fn arrow_eligible(sql: &str) -> bool {
    // As hyperd reads it (`sql_lex`): past spaces, parentheses and
    // comments, so a tagged query (`/* job=x */ SELECT`) routes as an
    // untagged one; a leading `;` is no keyword, and COPY would not take it.
    let first = crate::sql_lex::tokens(sql)
        .find(|&t| t != "(")
        .unwrap_or("");
    let word = crate::sql_lex::word_of(first);
    ["select", "with", "values", "table"]
        .iter()
        .any(|k| word.eq_ignore_ascii_case(k))
}

#[cfg(all(test, feature = "arrow"))]
mod tests {
    use super::arrow_eligible;

    #[test]
    fn plain_queries_are_arrow_eligible() {
        for sql in [
            "SELECT 1",
            "  select x from t",
            "(SELECT 1) UNION (SELECT 2)",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "VALUES (1)",
            "TABLE t",
            "-- c\nSELECT 1",
            "/* job=nightly */ SELECT 1",
            "/* a /* b */\n-- and a line\n (SELECT 1)",
            "SELECT 1 -- a note at the end",
        ] {
            assert!(arrow_eligible(sql), "{sql}");
        }
        for sql in [
            "SHOW lc_time",
            "EXPLAIN SELECT 1",
            "/* c */ INSERT INTO t VALUES (1)",
            "-- SELECT 1",
            "/* SELECT 1",
            "/* a */ */ SELECT 1",
            "INSERT INTO t VALUES (1)",
            "selectx",
            "",
        ] {
            assert!(!arrow_eligible(sql), "{sql}");
        }
    }
}

/// A `DataRow` whose fields do not fill it is found as the row is read:
/// the stream returns a protocol error, then ends, and the connection is
/// broken (the server broke the protocol), not left half-trusted.
#[cfg(all(test, unix))]
#[path = "../../test_support/fake_hyperd.rs"]
mod fake_hyperd;

/// A `DataRow` whose fields do not fill it is found as the row is read:
/// the stream returns a protocol error, then ends, and the connection is
/// broken (the server broke the protocol), not left half-trusted.
#[cfg(all(test, unix))]
mod malformed_row_tests {
    use std::os::unix::net::UnixListener;

    use bytes::BytesMut;
    use hyperdb_api_core::client::Endpoint;

    use super::fake_hyperd::{complete_and_ready, message, row_description, serve_session};
    use crate::{ConnectOptions, Connection, ErrorKind};

    /// ParseComplete .. ReadyForQuery for one INT column `n` with `rows`.
    fn reply_with(rows: &[&[u8]]) -> BytesMut {
        let mut out = BytesMut::new();
        message(&mut out, b'1', b"");
        message(&mut out, b'2', b"");
        row_description(&mut out, &[("n", 23, 4)]);
        for row in rows {
            message(&mut out, b'D', row);
        }
        complete_and_ready(&mut out, "SELECT 2");
        out
    }

    /// A good row (7), then one whose only field claims 9 bytes of a
    /// 1-byte rest.
    const TOO_SHORT: &[&[u8]] = &[&[0, 1, 0, 0, 0, 4, 7, 0, 0, 0], &[0, 1, 0, 0, 0, 9, b'x']];
    /// Well-formed rows of two fields each, for a result of one column.
    const TWO_FIELDS: &[&[u8]] = &[
        &[0, 2, 0, 0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 4, 9, 0, 0, 0],
        &[0, 2, 0, 0, 0, 4, 8, 0, 0, 0, 255, 255, 255, 255],
    ];

    /// Accepts one connection: answers a `Sync` with [`reply_with`]
    /// `(rows)` and a simple query with an empty result.
    fn serve(listener: UnixListener, rows: &'static [&'static [u8]]) -> std::io::Result<()> {
        let (s, _) = listener.accept()?;
        serve_session(s, |tag, _, out| match tag {
            b'S' => out.extend_from_slice(&reply_with(rows)),
            b'Q' => complete_and_ready(out, "SELECT 0"),
            _ => {}
        })
    }

    /// Runs `read` on a connection to the fake server, then checks that
    /// the connection is broken.
    fn read_then_broken(read: impl FnOnce(&mut Connection)) {
        read_bad_row_then_broken(TOO_SHORT, read)
    }

    /// [`read_then_broken`] with `rows` as the result.
    fn read_bad_row_then_broken(
        rows: &'static [&'static [u8]],
        read: impl FnOnce(&mut Connection),
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("fake");
        let listener = UnixListener::bind(&socket).expect("bind");
        let server = std::thread::spawn(move || serve(listener, rows));
        let mut conn = Connection::connect_with(&ConnectOptions::new(Endpoint::unix(&socket)))
            .expect("connect");
        read(&mut conn);
        let err = conn.execute_command("SELECT 1").expect_err("broken");
        assert!(err.is_closed(), "{err}");
        drop(conn);
        drop(server);
    }

    fn assert_malformed(err: crate::Error) {
        assert_eq!(err.kind(), Some(ErrorKind::Protocol), "{err}");
        assert!(err.to_string().contains("longer than the row"), "{err}");
    }

    #[test]
    fn malformed_row_is_a_protocol_error_and_breaks_the_connection() {
        read_then_broken(|conn| {
            let mut rows = conn.execute_query_params("SELECT n", &[]).expect("query");
            let first = rows.next_row().expect("a row").expect("well-formed");
            assert_eq!(first.try_get::<i32>(0).expect("n"), 7);
            assert_malformed(rows.next_row().expect("an error").expect_err("malformed"));
            assert!(rows.next_row().is_none(), "the stream ends");
        });
    }

    /// Read as a tuple (in column order, never indexed), the same row is
    /// the same protocol error.
    #[test]
    fn malformed_row_read_as_a_tuple_breaks_the_connection() {
        read_then_broken(|conn| {
            let mut rows = conn
                .execute_query_params("SELECT n", &[])
                .expect("query")
                .typed::<(i32,)>();
            assert_eq!(rows.next().expect("a row").expect("well-formed"), (7,));
            assert_malformed(rows.next().expect("an error").expect_err("malformed"));
            assert!(rows.next().is_none(), "the stream ends");
        });
    }

    /// A row with more fields than the result has columns is a framing
    /// error like any other: the stream ends with a protocol error and the
    /// connection is broken, read as rows or as tuples.
    #[test]
    fn row_with_another_field_count_breaks_the_connection() {
        let assert_count = |err: crate::Error| {
            assert_eq!(err.kind(), Some(ErrorKind::Protocol), "{err}");
            assert!(err.to_string().contains("2 fields"), "{err}");
        };
        read_bad_row_then_broken(TWO_FIELDS, |conn| {
            let mut rows = conn.execute_query_params("SELECT n", &[]).expect("query");
            assert_count(rows.next_row().expect("an error").expect_err("2 fields"));
            assert!(rows.next_row().is_none(), "the stream ends");
        });
        read_bad_row_then_broken(TWO_FIELDS, |conn| {
            let mut rows = conn
                .execute_query_params("SELECT n", &[])
                .expect("query")
                .typed::<(i32,)>();
            assert_count(rows.next().expect("an error").expect_err("2 fields"));
            assert!(rows.next().is_none(), "the stream ends");
        });
    }

    #[cfg(feature = "async")]
    #[test]
    fn malformed_row_breaks_an_async_connection_too() {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("fake");
        let listener = UnixListener::bind(&socket).expect("bind");
        let server = std::thread::spawn(move || serve(listener, TOO_SHORT));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let options = ConnectOptions::new(Endpoint::unix(&socket));
            let mut conn = crate::AsyncConnection::connect_with(&options)
                .await
                .expect("connect");
            {
                let mut rows = conn
                    .execute_query_params("SELECT n", &[])
                    .await
                    .expect("query");
                let first = rows.next_row().await.expect("a row").expect("well-formed");
                assert_eq!(first.try_get::<i32>(0).expect("n"), 7);
                // Read as a tuple, in column order.
                let err = rows
                    .next_as::<(i32,)>()
                    .await
                    .expect("an error")
                    .expect_err("malformed");
                assert_malformed(err);
                assert!(rows.next_row().await.is_none(), "the stream ends");
            }
            let err = conn.execute_command("SELECT 1").await.expect_err("broken");
            assert!(err.is_closed(), "{err}");
        });
        drop(server);
    }
}
