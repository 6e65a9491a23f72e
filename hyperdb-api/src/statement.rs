//! Prepared statements: parsed once on the server, run many times with
//! other parameters.
//!
//! A [`Statement`] does not borrow its connection (so it can be kept next
//! to it, and the async one is `Send + 'static`); it remembers which
//! connection prepared it, and every connection refuses the statements of
//! another. Dropping the last clone queues a `Close`, sent with the
//! connection's next extended-protocol request (no extra round trip).

use std::fmt;
use std::sync::Arc;

use hyperdb_api_core::protocol::ops::{FORMAT_BINARY, FORMAT_HYPER_BINARY};
use hyperdb_api_core::protocol::{CloseQueue, Session, StatementDescription};
use hyperdb_api_core::types::{oid, SqlType, ToPgBinary};

use crate::error::{DbError, Error, Result, SqlState};
use crate::params::Params;
use crate::rows::{Column, Schema};

mod placeholders;

pub(crate) use placeholders::placeholder_count;

/// A statement prepared on one connection; see
/// [`Connection::prepare`](crate::Connection::prepare).
///
/// Cheap to clone (one reference count); the server-side statement is
/// closed once the last clone is dropped.
#[derive(Clone)]
pub struct Statement {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    sql: String,
    session: u64,
    /// The session's catalog changes when it was prepared.
    changes: u64,
    params: Vec<Option<SqlType>>,
    param_oids: Vec<u32>,
    schema: Arc<Schema>,
    closes: CloseQueue,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closes.push(std::mem::take(&mut self.name));
    }
}

impl fmt::Debug for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Statement")
            .field("name", &self.inner.name)
            .field("sql", &self.inner.sql)
            .field("params", &self.inner.params)
            .field("columns", &self.inner.schema.len())
            .finish()
    }
}

impl Statement {
    pub(crate) fn new(
        name: String,
        sql: &str,
        session: &Session,
        description: StatementDescription,
    ) -> Statement {
        let params = description
            .params
            .iter()
            .map(|&oid| SqlType::from_oid_typmod(oid, -1).ok())
            .collect();
        Statement {
            inner: Arc::new(Inner {
                name,
                sql: sql.to_owned(),
                session: session.session_id(),
                changes: session.catalog_changes(),
                params,
                param_oids: description.params,
                schema: Schema::from_fields(description.columns),
                closes: session.close_queue(),
            }),
        }
    }

    /// The SQL text it was prepared from.
    pub fn sql(&self) -> &str {
        &self.inner.sql
    }

    /// The parameters' types as hyperd reports them: the types given to
    /// `prepare_typed`, and `None` for each one hyperd infers from the
    /// statement (hyperd 0.0.26963 does not report what it inferred). A run
    /// binding such a parameter to a value in binary form goes as the
    /// statement's text declared by the values, which the server then
    /// casts or refuses (see [`crate::Connection::prepare`]).
    pub fn params(&self) -> &[Option<SqlType>] {
        &self.inner.params
    }

    /// The result columns (empty for a statement without rows).
    pub fn columns(&self) -> &[Column] {
        self.inner.schema.columns()
    }

    /// The result columns as a [`Schema`], the one every result of the
    /// statement shares.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.inner.schema
    }

    /// The server-side name, for logs.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The result column count, `None` for a statement without rows.
    pub(crate) fn described(&self) -> Option<usize> {
        let n = self.inner.schema.len();
        (n > 0).then_some(n)
    }

    /// Checks that this statement belongs to `session` and encodes
    /// `values` for it: as many as it has parameters, each NULL or of a
    /// type that fits the declared one ([`fit_declared`]). A value in
    /// binary form for a parameter hyperd inferred makes the run go as the
    /// statement's text, its parameters declared by the statement or else
    /// by the values ([`Bound::Text`]): hyperd does not report what it
    /// inferred and reads the bytes as that type, so an `i64` bound where
    /// it inferred DOUBLE PRECISION was stored as 2.5e-323; declared by the
    /// value, the server casts it or refuses it.
    ///
    /// A run after a command in `session` that may have changed the
    /// catalog (DDL, `SET`, `ATTACH`, ...) since the statement was prepared
    /// goes as its text too, described afresh: hyperd runs the statement
    /// against the new catalog but keeps its first description, so a table
    /// made again with other types of the same widths would be read with
    /// the old ones (a DOUBLE PRECISION 1.5 as the BIGINT 4609434218613702656).
    pub(crate) fn bind(&self, session: &Session, values: &[&dyn ToPgBinary]) -> Result<Bound> {
        self.check(session.session_id(), values)?;
        let stale = session.catalog_changes() != self.inner.changes;
        let declared = &self.inner.param_oids;
        let mut params = Params::encode(values)?;
        for (i, (value, &want)) in values.iter().zip(declared).enumerate() {
            // A NULL has no bytes to misread: it binds to any type.
            let Some(bytes) = params.value(i) else {
                continue;
            };
            let as_text = fit_declared(value.param_type_oid(), want, bytes)
                .map_err(|why| Error::invalid_argument(format!("parameter ${}", i + 1), why))?;
            if as_text {
                params.send_as_text(i);
            }
        }
        let inferred_binary = values.iter().zip(declared).any(|(value, &want)| {
            want == 0 && value.param_type_oid() != 0 && value.param_format() == FORMAT_BINARY
        });
        if inferred_binary || stale {
            params.declare(declared);
            return Ok(Bound::Text(params));
        }
        Ok(Bound::Statement(params))
    }

    /// That this statement belongs to `session` and `values` are as many
    /// as its parameters.
    fn check(&self, session: u64, values: &[&dyn ToPgBinary]) -> Result<()> {
        if session != self.inner.session {
            return Err(Error::invalid_argument(
                "statement",
                format!(
                    "`{}` was prepared on another connection; prepare it on this one",
                    self.inner.sql
                ),
            ));
        }
        let declared = &self.inner.param_oids;
        if values.len() != declared.len() {
            return Err(Error::invalid_argument(
                "params",
                format!(
                    "the statement has {} parameter(s), {} value(s) were given",
                    declared.len(),
                    values.len()
                ),
            ));
        }
        Ok(())
    }
}

/// How a run of a [`Statement`] goes; see [`Statement::bind`].
#[derive(Debug)]
pub(crate) enum Bound {
    /// As the prepared statement.
    Statement(Params),
    /// As the statement's text (through the connection's statement cache),
    /// with these parameters and their declared types.
    Text(Params),
}

/// Result format of statement runs (the row readers' format).
pub(crate) const RESULT_FORMAT: i16 = FORMAT_HYPER_BINARY;

/// Whether a value of type `have` may be bound to a parameter declared
/// `want`. Measured on hyperd 0.0.26963: a parameter declared 0 takes
/// what fits its use, a narrower integer binds to a wider one (2 bytes to
/// INT or BIGINT, 4 to BIGINT), text to any text type, to JSON (hyperd
/// checks the document: 22P02) and to CHAR(1) (OID 18, `"char"`); an
/// integer wider than declared fails on the server ("invalid Postgres
/// binary integer format"). NUMERIC values declare 0 (see
/// `types::pg_binary`). GEOGRAPHY takes text alone, as WKT (see
/// [`fit_declared`]).
fn binds_as(have: u32, want: u32) -> bool {
    const INT2: u32 = 21;
    const INT4: u32 = 23;
    const INT8: u32 = 20;
    const TAKES_TEXT: [u32; 3] = [oid::CHAR1, oid::JSON, oid::GEOGRAPHY];
    have == want
        || want == 0
        || have == 0
        || matches!((have, want), (INT2, INT4) | (INT2, INT8) | (INT4, INT8))
        || (TEXT.contains(&have) && (TEXT.contains(&want) || TAKES_TEXT.contains(&want)))
}

/// The OIDs of text values: TEXT, VARCHAR and CHAR(n).
const TEXT: [u32; 3] = [oid::TEXT, oid::VARCHAR, oid::BPCHAR];

/// Whether the bytes of a value of type `have`, not NULL, may go to a
/// parameter declared `want`, and whether they go as text (format 0):
/// `Ok(true)` for WKT to a GEOGRAPHY parameter, which hyperd reads only in
/// text form (in binary form every value, the bytes a GEOGRAPHY column
/// reads back as included, is refused with 42883 "no pg binary input
/// function available for type geography"), and where it takes the text
/// up to its first NUL (`POINT(1 2)\0junk` stored the point), so a NUL is
/// refused. A CHAR(1) parameter keeps a value's first character and drops
/// the rest without an error (`ab` stored `a`): more than one character
/// (beyond trailing spaces, see [`SqlType::fit_text`]) is refused, as
/// every inserter refuses it.
fn fit_declared(have: u32, want: u32, bytes: &[u8]) -> std::result::Result<bool, String> {
    if !binds_as(have, want) {
        let mut why = format!(
            "the statement declares {}, the value is {}",
            type_name(want),
            type_name(have)
        );
        if want == oid::GEOGRAPHY {
            why.push_str(": a GEOGRAPHY parameter takes WKT text (`POINT(1 2)`)");
        }
        return Err(why);
    }
    if !TEXT.contains(&have) {
        return Ok(false);
    }
    match want {
        oid::GEOGRAPHY if bytes.contains(&0) => {
            Err("the WKT text has a NUL, where hyperd would end it".into())
        }
        oid::GEOGRAPHY => Ok(true),
        oid::CHAR1 => match SqlType::Char(1).fit_text(&String::from_utf8_lossy(bytes)) {
            Ok(_) => Ok(false),
            Err(chars) => Err(format!(
                "the statement declares CHAR(1) (OID 18), the value has {chars} characters: \
                 hyperd would keep the first"
            )),
        },
        _ => Ok(false),
    }
}

fn type_name(oid: u32) -> String {
    match SqlType::from_oid_typmod(oid, -1) {
        Ok(t) => format!("{t} (OID {oid})"),
        Err(_) => format!("OID {oid}"),
    }
}

/// What `query`, `execute` and `query_as_params` run: SQL text (through
/// the connection's statement cache) or a prepared [`Statement`].
///
/// Sealed: implemented for `str`, `String` and [`Statement`].
pub trait ToStatement: sealed::Sealed {
    #[doc(hidden)]
    fn to_statement(&self) -> StatementRef<'_>;
}

/// A statement to run, as [`ToStatement`] gives it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum StatementRef<'a> {
    Sql(&'a str),
    Prepared(&'a Statement),
}

impl ToStatement for str {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Sql(self)
    }
}

impl ToStatement for String {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Sql(self)
    }
}

impl ToStatement for Statement {
    fn to_statement(&self) -> StatementRef<'_> {
        StatementRef::Prepared(self)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for str {}
    impl Sealed for String {}
    impl Sealed for super::Statement {}
}

/// The parameter types to declare for `sql`: `given` first, 0 (hyperd
/// infers) for the rest of its `$n` placeholders. hyperd needs each
/// placeholder declared in `Parse`, and refuses more types than
/// placeholders, so the count comes from the text. NUMERIC is declared 0:
/// declared as NUMERIC without its scale, hyperd refuses every scaled
/// value (measured).
pub(crate) fn declared_types(sql: &str, given: &[SqlType]) -> Result<Vec<u32>> {
    refuse_values_of_several_rows(sql)?;
    let count = placeholder_count(sql);
    if given.len() > count {
        return Err(Error::invalid_argument(
            "types",
            format!(
                "{} types given for a statement with {count} parameter(s)",
                given.len()
            ),
        ));
    }
    let mut oids: Vec<u32> = given
        .iter()
        .map(|t| match t {
            SqlType::Numeric { .. } => 0,
            t => t.oid(),
        })
        .collect();
    oids.resize(count, 0);
    Ok(oids)
}

/// Refuses a statement that is a top-level `VALUES` of several rows:
/// hyperd 0.0.26963 returns only its first row when it runs as a prepared
/// statement (`psql`'s `PREPARE p AS VALUES ($1), (2)` does the same), and
/// every statement with parameters does. Refused (0A000), it cannot be
/// taken for a result of one row; inside `SELECT * FROM (...)` it returns
/// them all.
pub(crate) fn refuse_values_of_several_rows(sql: &str) -> Result<()> {
    let mut tokens = crate::sql_lex::tokens(sql).filter(|&t| t != ";").peekable();
    let mut depth = 0usize;
    while tokens.next_if_eq(&"(").is_some() {
        depth += 1;
    }
    if !tokens
        .next()
        .is_some_and(|t| crate::sql_lex::word_of(t).eq_ignore_ascii_case("VALUES"))
    {
        return Ok(());
    }
    let base = depth;
    for token in tokens {
        match token {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            "," if depth == base => {
                let mut db = DbError::new(
                    Some(SqlState::FEATURE_NOT_SUPPORTED),
                    "a VALUES of several rows run as a prepared statement (with parameters) \
                     returns only its first row in hyperd",
                );
                db.hint = Some("write it as SELECT * FROM (VALUES ...) AS v".into());
                return Err(Error::server(db));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_of_several_rows_are_refused_one_row_is_not() {
        for sql in [
            "VALUES ($1), (2)",
            "(VALUES (1),(2))",
            "values (1) , (2);",
            "VALUES ('a'), ($1::text)",
        ] {
            let e = refuse_values_of_several_rows(sql).unwrap_err();
            assert_eq!(e.sqlstate(), "0A000", "{sql}");
        }
        for sql in [
            "VALUES ($1, 2)",
            "VALUES (1)",
            "SELECT * FROM (VALUES (1), (2)) v",
            "INSERT INTO t VALUES (1), (2)",
            "VALUES ('a,b')",
            "VALUES (1) -- , (2)",
            "VALUES (f(1, 2))",
            "",
        ] {
            assert!(refuse_values_of_several_rows(sql).is_ok(), "{sql}");
        }
    }

    use super::*;

    #[test]
    fn binding_rules() {
        assert!(binds_as(23, 23));
        assert!(binds_as(20, 0));
        assert!(binds_as(0, 1700));
        assert!(binds_as(21, 20) && binds_as(23, 20) && binds_as(21, 23));
        assert!(!binds_as(20, 23), "wider than declared");
        assert!(binds_as(25, 1043) && binds_as(1043, 25));
        assert!(!binds_as(25, 23) && !binds_as(701, 23));
        // Text to JSON, CHAR(1) and GEOGRAPHY; nothing else to them.
        for want in [114, 18, 5003] {
            assert!(binds_as(25, want), "{want}");
            assert!(!binds_as(23, want) && !binds_as(17, want), "{want}");
        }
    }

    #[test]
    fn values_fit_what_hyperd_stores_of_them() {
        assert_eq!(fit_declared(25, 5003, b"POINT(1 2)"), Ok(true));
        assert_eq!(fit_declared(25, 114, b"{}"), Ok(false));
        for one in ["a", "\u{e9}", "\u{20ac}", "a   ", ""] {
            assert_eq!(fit_declared(25, 18, one.as_bytes()), Ok(false), "{one:?}");
        }
        let e = fit_declared(25, 18, "\u{e9}b".as_bytes()).unwrap_err();
        assert!(e.contains("2 characters"), "{e}");
        let e = fit_declared(25, 5003, b"POINT(1 2)\0junk").unwrap_err();
        assert!(e.contains("NUL"), "{e}");
        let e = fit_declared(17, 5003, b"\x07").unwrap_err();
        assert!(e.contains("WKT"), "{e}");
    }

    #[test]
    fn declared_types_fill_up_with_inferred() {
        let sql = "SELECT $1, $2, $3";
        assert_eq!(declared_types(sql, &[]).unwrap(), vec![0, 0, 0]);
        assert_eq!(
            declared_types(sql, &[SqlType::BigInt, SqlType::Text]).unwrap(),
            vec![20, 25, 0]
        );
        assert_eq!(
            declared_types("SELECT $1", &[SqlType::numeric(10, 2).unwrap()]).unwrap(),
            vec![0]
        );
        let e = declared_types("SELECT $1", &[SqlType::Int, SqlType::Int]).unwrap_err();
        assert!(e.to_string().contains("2 types given"), "{e}");
    }
}
