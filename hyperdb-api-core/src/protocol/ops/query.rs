//! Extended-protocol queries whose rows stream back as `DataRow` messages,
//! taken off the receive buffer a block at a time.

use crate::error::Result;
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
    /// Parameter values in PostgreSQL binary format (format code 1).
    pub params: &'a [Option<&'a [u8]>],
    pub result_format: i16,
}

impl<'a> QueryRequest<'a> {
    /// A query without parameters returning HyperBinary rows.
    pub fn new(sql: &'a str) -> QueryRequest<'a> {
        QueryRequest {
            sql,
            param_types: &[],
            params: &[],
            result_format: FORMAT_HYPER_BINARY,
        }
    }
}

/// Waits for the result's column descriptions.
#[derive(Debug, Default)]
pub struct QueryStart;

impl QueryStart {
    /// Queues Parse, Bind, Describe, Execute and Sync in one batch.
    pub fn send(session: &mut Session, req: &QueryRequest<'_>) -> Result<QueryStart> {
        let buf = session.write_buf();
        let start = buf.len();
        let queued = (|| {
            frontend::parse(buf, "", req.sql, req.param_types)?;
            let params = req.params.iter().map(|p| match p {
                Some(v) => BindParam::Value(v),
                None => BindParam::Null,
            });
            let param_formats: &[i16] = if req.params.is_empty() {
                &[]
            } else {
                &[FORMAT_BINARY]
            };
            frontend::bind(buf, "", "", param_formats, params, &[req.result_format])?;
            frontend::describe(buf, Target::Portal, "")?;
            frontend::execute(buf, "", 0)
        })();
        if let Err(e) = queued {
            buf.truncate(start);
            return Err(e);
        }
        frontend::sync(buf);
        session.expect_ready();
        Ok(QueryStart)
    }
}

impl Operation for QueryStart {
    /// The columns; empty for a statement that returns no rows.
    type Output = Vec<FieldDescription>;

    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<Self::Output>> {
        match msg {
            Message::ParseComplete | Message::BindComplete => Ok(None),
            Message::RowDescription(fields) => Ok(Some(fields)),
            Message::NoData => Ok(Some(Vec::new())),
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
#[derive(Debug, Default)]
pub struct NextRow {
    affected: u64,
}

impl Operation for NextRow {
    type Output = RowEvent;

    #[inline]
    fn on_message(&mut self, _: &mut Session, msg: Message) -> Result<Option<RowEvent>> {
        match msg {
            Message::DataRows(rows) => Ok(Some(RowEvent::Rows(rows))),
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
