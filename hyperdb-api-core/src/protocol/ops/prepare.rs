//! Named statements: prepare (Parse + Describe Statement), run one that is
//! prepared (Bind + Execute), and the bare `Sync` round trip of `ping`.

use crate::error::Result;
use crate::protocol::backend::Message;
use crate::protocol::frontend::{self, Target};
use crate::protocol::ops::query::bind;
use crate::protocol::ops::{unexpected, Operation};
use crate::protocol::{Session, StatementDescription};

/// Prepares a named statement and reads its description.
#[derive(Debug, Default)]
pub struct Prepare {
    params: Option<Vec<u32>>,
    columns: Option<Vec<crate::protocol::backend::FieldDescription>>,
}

impl Prepare {
    /// Queues Parse (named), Describe Statement and Sync. hyperd needs
    /// every `$n` of `sql` declared in `param_types` (0: inferred from the
    /// statement); it refuses fewer ("unexpected parameter '$1'") and more
    /// ("more positional parameters provided than actually used").
    pub fn send(
        session: &mut Session,
        name: &str,
        sql: &str,
        param_types: &[u32],
    ) -> Result<Prepare> {
        session.write_queued_closes()?;
        let buf = session.write_buf();
        let start = buf.len();
        let queued = frontend::parse(buf, name, sql, param_types)
            .and_then(|()| frontend::describe(buf, Target::Statement, name));
        if let Err(e) = queued {
            buf.truncate(start);
            return Err(e);
        }
        frontend::sync(buf);
        session.note_sql(sql);
        session.expect_ready();
        Ok(Prepare::default())
    }
}

impl Operation for Prepare {
    type Output = StatementDescription;

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<Self::Output>> {
        match msg {
            Message::ParseComplete | Message::CloseComplete => {}
            Message::ParameterDescription(oids) => self.params = Some(oids),
            Message::RowDescription(fields) => self.columns = Some(fields),
            Message::NoData => self.columns = Some(Vec::new()),
            Message::ReadyForQuery(_) => {
                let (Some(params), Some(columns)) = (self.params.take(), self.columns.take())
                else {
                    return Err(crate::error::Error::protocol(
                        "prepare: the statement description is incomplete",
                    ));
                };
                return Ok(Some(StatementDescription { params, columns }));
            }
            other => return Err(unexpected("prepare", &other)),
        }
        Ok(None)
    }
}

/// Runs a prepared statement: its rows follow as with
/// [`QueryStart`](crate::protocol::ops::QueryStart), described by the
/// statement's description.
#[derive(Debug)]
pub struct BoundStart {
    columns: Option<usize>,
}

impl BoundStart {
    /// Queues Bind (of the named statement), Execute and Sync. `columns`
    /// is the statement's column count (`None`: it returns no rows);
    /// `formats` the parameters' (empty: all binary).
    pub fn send(
        session: &mut Session,
        statement: &str,
        columns: Option<usize>,
        params: &[Option<&[u8]>],
        formats: &[i16],
        result_format: i16,
    ) -> Result<BoundStart> {
        session.write_queued_closes()?;
        let buf = session.write_buf();
        let start = buf.len();
        let queued = bind(buf, statement, params, formats, result_format)
            .and_then(|()| frontend::execute(buf, "", 0));
        if let Err(e) = queued {
            buf.truncate(start);
            return Err(e);
        }
        frontend::sync(buf);
        session.expect_ready();
        session.expect_stream(columns.is_some());
        Ok(BoundStart { columns })
    }
}

impl Operation for BoundStart {
    type Output = ();

    fn on_message(&mut self, session: &mut Session, msg: Message) -> Result<Option<()>> {
        match msg {
            Message::CloseComplete => Ok(None),
            Message::BindComplete => {
                session.expect_row_fields(self.columns);
                Ok(Some(()))
            }
            other => Err(unexpected("bound statement", &other)),
        }
    }
}

/// A bare `Sync`: the cheapest request, answered with `ReadyForQuery`
/// (measured on hyperd 0.0.26963, idle or in a transaction).
#[derive(Debug, Default)]
pub struct Ping;

impl Ping {
    /// Queues Sync (after any queued Closes).
    pub fn send(session: &mut Session) -> Result<Ping> {
        session.write_queued_closes()?;
        frontend::sync(session.write_buf());
        session.expect_ready();
        Ok(Ping)
    }
}

impl Operation for Ping {
    type Output = ();

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<()>> {
        match msg {
            Message::CloseComplete => Ok(None),
            Message::ReadyForQuery(_) => Ok(Some(())),
            other => Err(unexpected("ping", &other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;

    use super::*;
    use crate::error::ErrorKind;
    use crate::protocol::ops::{QueryRequest, QueryStart, FORMAT_HYPER_BINARY};
    use crate::protocol::Limits;

    fn session() -> Session {
        let mut s = Session::new(Limits::default(), None).with_statement_cache(4);
        s.finish_startup();
        s
    }

    fn push(s: &mut Session, tag: u8, body: &[u8]) {
        let b = s.read_buf();
        b.put_u8(tag);
        b.put_i32(body.len() as i32 + 4);
        b.put_slice(body);
    }

    fn run<O: Operation>(s: &mut Session, op: &mut O) -> Result<O::Output> {
        loop {
            let msg = s.next_message()?.expect("a complete message");
            if let Some(out) = op.on_message(s, msg)? {
                return Ok(out);
            }
        }
    }

    /// A bound statement's rows are a stream a driver may cancel once
    /// abandoned (`Session::stream_cancellable`), as a `QueryStart`'s are;
    /// a statement without rows is not, and a completed one no longer.
    #[test]
    fn a_bound_statements_rows_are_cancellable_while_it_runs() {
        let mut s = session();
        let mut op =
            BoundStart::send(&mut s, "c1", Some(1), &[], &[], FORMAT_HYPER_BINARY).expect("queued");
        s.note_send();
        s.write_buf().clear();
        push(&mut s, b'2', b"");
        run(&mut s, &mut op).expect("bound");
        assert!(s.stream_cancellable());
        push(&mut s, b'C', b"SELECT 0\0");
        assert!(s.next_message().expect("complete").is_some());
        assert!(!s.stream_cancellable(), "its statement completed");
        push(&mut s, b'Z', b"I");
        assert!(s.next_message().expect("ready").is_some());

        let mut op =
            BoundStart::send(&mut s, "c2", None, &[], &[], FORMAT_HYPER_BINARY).expect("queued");
        push(&mut s, b'2', b"");
        run(&mut s, &mut op).expect("bound");
        assert!(!s.stream_cancellable(), "no rows to cancel");
    }

    /// The tags of the frontend messages in `buf`.
    fn tags(buf: &[u8]) -> String {
        let mut out = String::new();
        let mut at = 0;
        while at < buf.len() {
            out.push(buf[at] as char);
            let len = i32::from_be_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]);
            at += 1 + len as usize;
        }
        out
    }

    const INT_COLUMN: &[u8] = &[
        0, 1, b'v', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 255, 255, 255, 255, 0, 0,
    ];

    #[test]
    fn prepare_reads_parameters_and_columns() {
        let mut s = session();
        let mut op = Prepare::send(&mut s, "s1", "SELECT v FROM t WHERE id = $1", &[23]).unwrap();
        assert_eq!(tags(s.write_buf()), "PDS");
        push(&mut s, b'1', b"");
        push(&mut s, b't', &[0, 1, 0, 0, 0, 23]);
        push(&mut s, b'T', INT_COLUMN);
        push(&mut s, b'Z', b"I");
        let d = run(&mut s, &mut op).unwrap();
        assert_eq!(d.params, vec![23]);
        assert_eq!(d.columns.len(), 1);
        assert_eq!(d.columns[0].name, "v");
        assert_eq!(s.outstanding(), 0);
        // NoData: a statement without rows.
        let mut op = Prepare::send(&mut s, "s2", "INSERT INTO t VALUES ($1)", &[0]).unwrap();
        push(&mut s, b'1', b"");
        push(&mut s, b't', &[0, 1, 0, 0, 0, 0]);
        push(&mut s, b'n', b"");
        push(&mut s, b'Z', b"I");
        assert!(run(&mut s, &mut op).unwrap().columns.is_empty());
    }

    #[test]
    fn prepare_errors_leave_the_session_usable() {
        let mut s = session();
        let mut op = Prepare::send(&mut s, "s1", "SELEC", &[]).unwrap();
        push(&mut s, b'E', b"SERROR\0C42601\0Msyntax error\0\0");
        push(&mut s, b'Z', b"I");
        let e = run(&mut s, &mut op).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Server);
        assert!(s.check_usable().is_ok());
        // A reply without the description is the server's fault.
        let mut op = Prepare::send(&mut s, "s2", "SELECT 1", &[]).unwrap();
        push(&mut s, b'1', b"");
        push(&mut s, b'Z', b"I");
        assert_eq!(
            run(&mut s, &mut op).unwrap_err().kind(),
            ErrorKind::Protocol
        );
    }

    #[test]
    fn a_bound_run_sends_no_parse_and_expects_the_described_fields() {
        let mut s = session();
        let mut op = BoundStart::send(
            &mut s,
            "s1",
            Some(1),
            &[Some(&[0, 0, 0, 7])],
            &[],
            FORMAT_HYPER_BINARY,
        )
        .unwrap();
        assert_eq!(tags(s.write_buf()), "BES");
        push(&mut s, b'2', b"");
        run(&mut s, &mut op).unwrap();
        assert_eq!(s.row_fields(), Some(1));
    }

    #[test]
    fn queued_closes_share_the_next_requests_sync() {
        let mut s = session();
        s.close_queue().push("s7".into());
        s.close_queue().push("c3".into());
        let mut op = Ping::send(&mut s).unwrap();
        assert_eq!(tags(s.write_buf()), "CCS");
        assert!(s.close_queue().is_empty());
        push(&mut s, b'3', b"");
        push(&mut s, b'3', b"");
        push(&mut s, b'Z', b"I");
        run(&mut s, &mut op).unwrap();
        assert_eq!(s.outstanding(), 0);
        s.write_buf().clear();
        s.close_queue().push("s8".into());
        let req = QueryRequest::new("SELECT 1");
        let mut op = QueryStart::send_as(&mut s, "c9", &req).unwrap();
        assert_eq!(tags(s.write_buf()), "CPBDES");
        push(&mut s, b'3', b"");
        push(&mut s, b'1', b"");
        push(&mut s, b'2', b"");
        push(&mut s, b'T', INT_COLUMN);
        assert_eq!(run(&mut s, &mut op).unwrap().len(), 1);
        assert!(op.parsed());
    }

    #[test]
    fn a_ping_is_one_sync() {
        let mut s = session();
        let mut op = Ping::send(&mut s).unwrap();
        assert_eq!(&s.write_buf()[..], b"S\0\0\0\x04");
        push(&mut s, b'Z', b"T");
        run(&mut s, &mut op).unwrap();
        assert_eq!(s.outstanding(), 0);
    }

    #[test]
    fn ddl_tags_empty_the_cache() {
        let mut s = session();
        let cols = Vec::new();
        s.statements()
            .cache()
            .insert("SELECT 1", &[], "c1".into(), cols);
        s.expect_ready();
        push(&mut s, b'C', b"INSERT 0 1\0");
        push(&mut s, b'Z', b"I");
        run(&mut s, &mut crate::protocol::ops::Drain).unwrap();
        assert_eq!(s.statements().cache().len(), 1, "rows written: kept");
        s.expect_ready();
        push(&mut s, b'C', b"DROP TABLE\0");
        push(&mut s, b'Z', b"I");
        run(&mut s, &mut crate::protocol::ops::Drain).unwrap();
        assert_eq!(s.statements().cache().len(), 0, "DDL: emptied");
        assert_eq!(s.close_queue().take(), vec!["c1"]);
    }
}
