//! Extended-protocol queries whose rows stream back as `DataRow` messages,
//! taken off the receive buffer a block at a time.

use crate::error::{Error, Result};
use crate::protocol::backend::{FieldDescription, Message, RowBlock};
use crate::protocol::frontend::{self, BindParam, Target};
use crate::protocol::ops::{affected_rows, unexpected, Operation};
use crate::protocol::Session;

/// Result format code: text.
pub const FORMAT_TEXT: i16 = 0;
/// Result format code: PostgreSQL binary (big-endian); also bound parameters.
pub const FORMAT_BINARY: i16 = 1;
/// Result format code: HyperBinary (little-endian values).
pub const FORMAT_HYPER_BINARY: i16 = 2;

/// One query: SQL, already-encoded parameters, and the result format.
#[derive(Clone, Copy, Debug)]
pub struct QueryRequest<'a> {
    pub sql: &'a str,
    /// Parameter type OIDs; 0 lets the server infer.
    pub param_types: &'a [u32],
    /// Parameter values, in the formats `param_formats` gives.
    pub params: &'a [Option<&'a [u8]>],
    /// One Bind format code a parameter (`ToPgBinary::param_format`);
    /// empty when all are PostgreSQL binary (format code 1).
    pub param_formats: &'a [i16],
    pub result_format: i16,
}

impl<'a> QueryRequest<'a> {
    /// A query without parameters returning HyperBinary rows.
    pub fn new(sql: &'a str) -> QueryRequest<'a> {
        QueryRequest {
            sql,
            param_types: &[],
            params: &[],
            param_formats: &[],
            result_format: FORMAT_HYPER_BINARY,
        }
    }
}

/// Waits for the result's column descriptions.
#[derive(Debug, Default)]
pub struct QueryStart {
    parsed: bool,
}

impl QueryStart {
    /// Queues Parse, Bind, Describe, Execute and Sync in one batch.
    pub fn send(session: &mut Session, req: &QueryRequest<'_>) -> Result<QueryStart> {
        QueryStart::send_as(session, "", req)
    }

    /// [`QueryStart::send`] parsing `req.sql` as the named statement
    /// `statement`, which outlives the query: one round trip that also
    /// prepares it. If the query fails, [`QueryStart::parsed`] tells
    /// whether the statement exists anyway.
    pub fn send_as(
        session: &mut Session,
        statement: &str,
        req: &QueryRequest<'_>,
    ) -> Result<QueryStart> {
        session.write_queued_closes()?;
        let buf = session.write_buf();
        let start = buf.len();
        let queued = (|| {
            frontend::parse(buf, statement, req.sql, req.param_types)?;
            bind(
                buf,
                statement,
                req.params,
                req.param_formats,
                req.result_format,
            )?;
            frontend::describe(buf, Target::Portal, "")?;
            frontend::execute(buf, "", 0)
        })();
        if let Err(e) = queued {
            buf.truncate(start);
            return Err(e);
        }
        frontend::sync(buf);
        session.note_sql(req.sql);
        session.expect_ready();
        session.expect_stream(false);
        Ok(QueryStart::default())
    }

    /// Whether the server took the `Parse` (a named statement then exists
    /// even when a later step failed).
    pub fn parsed(&self) -> bool {
        self.parsed
    }
}

/// Waits for the columns of a simple `Query`'s result, whose rows come as
/// HyperBinary `DataRow`s: every session asks hyperd for that at startup
/// (`result_format_code`, which hyperd refuses to change later), although
/// its `RowDescription` still says text.
///
/// Why a second way to read rows: hyperd plans a simple `Query` through a
/// plan cache keyed by the statement's shape, literals aside, while each
/// `Parse` of new text (and each COPY) is planned afresh. A statement
/// without parameters that was not prepared before costs 0.3-0.7 ms this
/// way against 2-2.8 ms through Parse/Bind/Execute and 1.5-2 ms as an
/// Arrow COPY (`SELECT <n>` with a new literal each run, DEVELOPMENT.md,
/// "Choosing the read route").
#[derive(Debug, Default)]
pub struct SimpleQueryStart;

impl SimpleQueryStart {
    /// Queues `sql` as a simple `Query`. One statement only: hyperd refuses
    /// several in one `Query` (0A000) before running any.
    ///
    /// Statements queued for closing stay queued for the next extended
    /// request, whose `Sync` they share: sent before a `Query`, their
    /// `CloseComplete`s would come where a simple query's reply is, and a
    /// failed `Close` would make the server skip everything up to a `Sync`,
    /// the `Query` included.
    pub fn send(session: &mut Session, sql: &str) -> Result<SimpleQueryStart> {
        frontend::query(session.write_buf(), sql)?;
        session.note_sql(sql);
        session.expect_ready();
        session.expect_stream(false);
        Ok(SimpleQueryStart)
    }
}

impl Operation for SimpleQueryStart {
    /// The columns; empty for a statement that returns no rows (its
    /// affected-row count is not kept: only queries come this way).
    type Output = Vec<FieldDescription>;

    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<Self::Output>> {
        match msg {
            Message::RowDescription(fields) => {
                session.expect_row_fields(Some(fields.len()));
                Ok(Some(fields))
            }
            Message::CommandComplete(_) | Message::EmptyQueryResponse => {
                session.expect_row_fields(None);
                Ok(Some(Vec::new()))
            }
            other => Err(unexpected("simple query", &other)),
        }
    }
}

/// Appends a `Bind` of `statement` to the unnamed portal: parameters in
/// `formats` (one a parameter; empty: all PostgreSQL binary), results in
/// `result_format`.
pub(crate) fn bind(
    buf: &mut bytes::BytesMut,
    statement: &str,
    params: &[Option<&[u8]>],
    formats: &[i16],
    result_format: i16,
) -> Result<()> {
    if !formats.is_empty() && formats.len() != params.len() {
        return Err(crate::error::Error::invalid_input(format!(
            "{} parameter formats for {} parameters",
            formats.len(),
            params.len()
        )));
    }
    let values = params.iter().map(|p| match p {
        Some(v) => BindParam::Value(v),
        None => BindParam::Null,
    });
    let param_formats: &[i16] = if params.is_empty() {
        &[]
    } else if formats.is_empty() {
        &[FORMAT_BINARY]
    } else {
        formats
    };
    frontend::bind(buf, "", statement, param_formats, values, &[result_format])
}

impl Operation for QueryStart {
    /// The columns; empty for a statement that returns no rows.
    type Output = Vec<FieldDescription>;

    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<Self::Output>> {
        match msg {
            Message::ParseComplete => {
                self.parsed = true;
                Ok(None)
            }
            Message::BindComplete | Message::CloseComplete => Ok(None),
            Message::RowDescription(fields) => {
                session.expect_row_fields(Some(fields.len()));
                Ok(Some(fields))
            }
            Message::NoData => {
                session.expect_row_fields(None);
                Ok(Some(Vec::new()))
            }
            other => Err(unexpected("query", &other)),
        }
    }
}

/// What the next step of a row stream produced.
#[derive(Debug)]
pub enum RowEvent {
    /// One or more rows, in order.
    Rows(RowBlock),
    /// The query finished; the server is ready for the next request.
    Done { affected: u64 },
}

/// Reads the next rows of a started query.
///
/// Every row must have as many fields as the `RowDescription` described
/// columns: checked once per block (all rows of a block have the first
/// one's field count, `backend::row_block::take`), and a mismatch is a
/// protocol error, which breaks the connection like any other framing
/// error. A server that miscounts its fields cannot be trusted with the
/// next result either.
#[derive(Debug, Default)]
pub struct NextRow {
    affected: u64,
}

impl Operation for NextRow {
    type Output = RowEvent;

    #[inline]
    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<RowEvent>> {
        match msg {
            Message::DataRows(rows) => {
                if Some(rows.columns()) != session.row_fields() {
                    return Err(fields_not_described(rows.columns(), session.row_fields()));
                }
                Ok(Some(RowEvent::Rows(rows)))
            }
            Message::CommandComplete(tag) => {
                self.affected = affected_rows(&tag);
                Ok(None)
            }
            Message::EmptyQueryResponse | Message::PortalSuspended => Ok(None),
            Message::ReadyForQuery(_) => Ok(Some(RowEvent::Done {
                affected: self.affected,
            })),
            other => Err(unexpected("row stream", &other)),
        }
    }
}

#[cold]
#[inline(never)]
fn fields_not_described(fields: usize, described: Option<usize>) -> Error {
    Error::protocol(match described {
        Some(columns) => format!("DataRow with {fields} fields for a result of {columns} columns"),
        None => format!("DataRow with {fields} fields for a statement that returns no rows"),
    })
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;

    use super::*;
    use crate::error::ErrorKind;
    use crate::protocol::Limits;

    fn push(s: &mut Session, tag: u8, body: &[u8]) {
        let b = s.read_buf();
        b.put_u8(tag);
        b.put_i32(body.len() as i32 + 4);
        b.put_slice(body);
    }

    /// A `RowDescription` of `n` INT columns.
    fn description(n: i16) -> Vec<u8> {
        let mut d = n.to_be_bytes().to_vec();
        for _ in 0..n {
            d.extend_from_slice(b"c\0");
            d.extend_from_slice(&[
                0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 255, 255, 255, 255, 0, 2,
            ]);
        }
        d
    }

    /// Feeds the session `rows` (`DataRow` bodies of `columns` fields each)
    /// and their end; checks that they come as one block and that the
    /// stream ends with their count.
    fn rows_then_done(s: &mut Session, rows: &[&[u8]], columns: usize) {
        for row in rows {
            push(s, b'D', row);
        }
        match run(s, &mut NextRow::default()).expect("rows") {
            RowEvent::Rows(block) => {
                assert_eq!((block.len(), block.columns()), (rows.len(), columns))
            }
            other => panic!("{other:?}"),
        }
        push(s, b'C', format!("SELECT {}\0", rows.len()).as_bytes());
        push(s, b'Z', b"I");
        let done = run(s, &mut NextRow::default()).expect("done");
        assert!(
            matches!(done, RowEvent::Done { affected } if affected == rows.len() as u64),
            "{done:?}"
        );
    }

    /// Sends a query and feeds the session its answers up to a
    /// `RowDescription` of `columns` INT columns.
    fn described(s: &mut Session, columns: i16) {
        let mut op = QueryStart::send(s, &QueryRequest::new("SELECT")).expect("queued");
        push(s, b'1', b"");
        push(s, b'2', b"");
        push(s, b'T', &description(columns));
        run(s, &mut op).expect("described");
    }

    /// Feeds `op` the session's messages until it finishes.
    fn run<O: Operation>(s: &mut Session, op: &mut O) -> Result<O::Output> {
        loop {
            let msg = s.next_message()?.expect("a complete message");
            if let Some(out) = op.on_message(s, msg)? {
                return Ok(out);
            }
        }
    }

    /// Rows whose field count is not the described column count are a
    /// framing error (the driver breaks the connection on it), however
    /// well-formed each row is by itself.
    #[test]
    fn rows_with_another_field_count_than_described_are_a_protocol_error() {
        for (columns, row) in [
            (1, &[0, 2, 0, 0, 0, 1, 7, 255, 255, 255, 255][..]),
            (2, &[0, 1, 0, 0, 0, 1, 7][..]),
            (0, &[0, 1, 0, 0, 0, 1, 7][..]),
        ] {
            let mut s = Session::new(Limits::default(), None);
            s.finish_startup();
            let mut op = QueryStart::send(&mut s, &QueryRequest::new("SELECT")).expect("queued");
            push(&mut s, b'1', b"");
            push(&mut s, b'2', b"");
            if columns == 0 {
                push(&mut s, b'n', b"");
            } else {
                push(&mut s, b'T', &description(columns));
            }
            let fields = run(&mut s, &mut op).expect("described");
            assert_eq!(fields.len(), columns as usize);
            push(&mut s, b'D', row);
            let err = run(&mut s, &mut NextRow::default()).expect_err("wrong field count");
            assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
            assert!(err.to_string().contains("field"), "{err}");
        }
    }

    /// Rows that end at `ReadyForQuery` with neither `CommandComplete` nor
    /// an error are an incomplete result (hyperd, cancelled twice in a
    /// row), reported as a cancel, never as the end of the rows.
    #[test]
    fn rows_ended_without_their_statements_outcome_are_an_error() {
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        described(&mut s, 1);
        push(&mut s, b'D', &[0, 1, 0, 0, 0, 1, 7]);
        run(&mut s, &mut NextRow::default()).expect("rows");
        push(&mut s, b'Z', b"I");
        let err = run(&mut s, &mut NextRow::default()).expect_err("no CommandComplete");
        assert!(err.is_cancelled(), "{err}");
        assert!(err.to_string().contains("incomplete"), "{err}");
        assert_eq!(s.outstanding(), 0, "the connection is ready again");
        // The same rows with their CommandComplete end cleanly.
        described(&mut s, 1);
        rows_then_done(&mut s, &[&[0, 1, 0, 0, 0, 1, 7]], 1);
    }

    /// A row stream may be cancelled while its statement runs (what a
    /// driver does with an abandoned one), not once a request was sent
    /// behind it, nor once its statement completed.
    #[test]
    fn a_row_stream_is_cancellable_while_its_statement_runs() {
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        let mut op = QueryStart::send(&mut s, &QueryRequest::new("SELECT")).expect("queued");
        s.note_send();
        s.write_buf().clear();
        assert!(!s.stream_cancellable(), "not before it is described");
        push(&mut s, b'1', b"");
        push(&mut s, b'2', b"");
        push(&mut s, b'T', &description(1));
        run(&mut s, &mut op).expect("described");
        assert!(s.stream_cancellable());
        push(&mut s, b'D', &[0, 1, 0, 0, 0, 1, 7]);
        run(&mut s, &mut NextRow::default()).expect("rows");
        assert!(s.stream_cancellable(), "rows still come");
        // Queued behind it: still only the stream's statement runs...
        crate::protocol::ops::Command::send(&mut s, "ROLLBACK").expect("queued");
        assert!(s.stream_cancellable());
        // ...until the request goes out.
        s.note_send();
        assert!(!s.stream_cancellable(), "a cancel could reach the ROLLBACK");

        // Completed: nothing left to cancel, its ReadyForQuery aside.
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        described(&mut s, 1);
        push(&mut s, b'C', b"SELECT 0\0");
        assert!(s.next_message().expect("complete").is_some());
        assert!(!s.stream_cancellable());
    }

    /// The same for a COPY OUT (an Arrow result), and for a stream whose
    /// statement failed.
    #[test]
    fn a_copy_out_is_cancellable_while_its_statement_runs() {
        use crate::protocol::ops::CopyOut;
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        let mut op = CopyOut::send(&mut s, "COPY (SELECT 1) TO STDOUT").expect("queued");
        push(&mut s, b'H', &[1, 0, 0]);
        run(&mut s, &mut op).expect("started");
        assert!(s.stream_cancellable());
        push(&mut s, b'd', b"abc");
        run(&mut s, &mut CopyOut::default()).expect("data");
        assert!(s.stream_cancellable());
        push(&mut s, b'E', b"SERROR\0C57014\0Mcanceled\0\0");
        assert!(s.next_message().expect("held").is_none());
        assert!(!s.stream_cancellable(), "its statement has failed");
    }

    /// A simple `Query`: its columns, then its rows like a bound
    /// statement's; a statement without rows ends it with no columns.
    #[test]
    fn a_simple_query_reads_its_description_then_rows() {
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        let mut op = SimpleQueryStart::send(&mut s, "SELECT 7").expect("queued");
        assert_eq!(&s.write_buf()[..], b"Q\0\0\0\x0dSELECT 7\0");
        push(&mut s, b'T', &description(1));
        assert_eq!(run(&mut s, &mut op).expect("described").len(), 1);
        rows_then_done(&mut s, &[&[0, 1, 0, 0, 0, 4, 7, 0, 0, 0]], 1);

        let mut op = SimpleQueryStart::send(&mut s, "CREATE TABLE t (a INT)").expect("queued");
        push(&mut s, b'C', b"CREATE TABLE\0");
        assert!(run(&mut s, &mut op).expect("no rows").is_empty());
        push(&mut s, b'D', &[0, 1, 0, 0, 0, 4, 7, 0, 0, 0]);
        let err = run(&mut s, &mut NextRow::default()).expect_err("no rows were described");
        assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
    }

    /// A `RESET` (`RESET ALL` takes `result_format_code` back to text) or
    /// a `set_config` (which can set it) ends the HyperBinary rows of
    /// simple queries for the session.
    #[test]
    fn a_reset_ends_hyperbinary_simple_results() {
        for (last, tag) in [
            ("RESET ALL", "RESET"),
            ("SELECT set_config('a', 'b', false)", "SELECT 1"),
        ] {
            let mut s = Session::new(Limits::default(), None);
            s.finish_startup();
            for (sql, tag, binary) in [
                ("SET a = 1", "SET", true),
                ("SELECT 1", "SELECT 1", true),
                (last, tag, false),
                ("SET a = 1", "SET", false),
            ] {
                let mut op = SimpleQueryStart::send(&mut s, sql).expect("queued");
                push(&mut s, b'C', format!("{tag}\0").as_bytes());
                assert!(run(&mut s, &mut op).expect("no rows").is_empty());
                push(&mut s, b'Z', b"I");
                while s.next_message().expect("ready").is_some() {}
                assert_eq!(s.simple_results_binary(), binary, "after {sql}");
            }
        }
    }

    /// Rows that match the description pass, block by block.
    #[test]
    fn rows_with_the_described_field_count_pass() {
        let mut s = Session::new(Limits::default(), None);
        s.finish_startup();
        described(&mut s, 2);
        let rows: [&[u8]; 2] = [
            &[0, 2, 0, 0, 0, 1, 7, 255, 255, 255, 255],
            &[0, 2, 255, 255, 255, 255, 0, 0, 0, 1, 8],
        ];
        rows_then_done(&mut s, &rows, 2);
    }
}
