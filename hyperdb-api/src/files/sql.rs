//! The SQL of every file operation, built once for the blocking and the
//! async connection. Names go through the name types, paths and option
//! values through [`quote_literal`]: nothing a caller passes is pasted in.

use std::path::Path;

use super::options::{CsvOptions, FileFormat};
use crate::error::Result;
use crate::escape::{quote_literal, utf8_path};
use crate::names::TableName;

/// What a COPY TO writes out: a whole table, or the result of a query.
///
/// Strings do not convert: whether `"t"` names a table or is a query would
/// be a guess. Build one with [`CopySource::table`] (or from a
/// [`TableName`]) or [`CopySource::query`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CopySource {
    Table(TableName),
    /// A query (`SELECT`, `WITH`, `VALUES`, `TABLE`); a trailing `;` is
    /// dropped.
    Query(String),
}

impl CopySource {
    pub fn table(name: impl Into<TableName>) -> CopySource {
        CopySource::Table(name.into())
    }

    pub fn query(sql: impl Into<String>) -> CopySource {
        CopySource::Query(sql.into())
    }

    /// `COPY "s"."t"` or `COPY (query)`: a COPY TO up to its target.
    fn copy_sql(&self) -> Result<String> {
        match self {
            CopySource::Table(t) => Ok(format!("COPY {}", t.to_sql()?)),
            CopySource::Query(q) => Ok(copy_query(q)),
        }
    }

    /// How far the server's error positions in this source's statement
    /// lie after the caller's query text (0 for a table).
    pub(crate) fn position_offset(&self) -> u32 {
        match self {
            CopySource::Table(_) => 0,
            CopySource::Query(_) => QUERY_OFFSET,
        }
    }
}

impl From<TableName> for CopySource {
    fn from(name: TableName) -> Self {
        CopySource::Table(name)
    }
}

impl From<&TableName> for CopySource {
    fn from(name: &TableName) -> Self {
        CopySource::Table(name.clone())
    }
}

/// `COPY (sql)`: a query as the source of a COPY TO. A trailing `;` would
/// end the statement inside the parentheses, so it goes; the closing
/// parenthesis goes on a line of its own, where a `-- note` ending the
/// query cannot comment it out.
pub(crate) fn copy_query(sql: &str) -> String {
    debug_assert_eq!("COPY (".len(), QUERY_OFFSET as usize);
    let sql = sql.trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    format!("COPY ({sql}\n)")
}

/// Characters before the query in [`copy_query`]: server error positions
/// move back by this much to point into the caller's SQL.
pub(crate) const QUERY_OFFSET: u32 = 6;

fn path_literal(path: &Path) -> Result<String> {
    quote_literal(utf8_path(path)?)
}

/// `COPY t FROM 'path' WITH (...)`: hyperd reads the file itself.
pub(crate) fn copy_from_file(
    table: &TableName,
    path: &Path,
    format: &FileFormat,
) -> Result<String> {
    Ok(format!(
        "COPY {} FROM {}{}",
        table.to_sql()?,
        path_literal(path)?,
        format.with_clause(true)?
    ))
}

/// `COPY t TO 'path' WITH (...)` / `COPY (query) TO ...`.
pub(crate) fn copy_to_file(
    source: &CopySource,
    path: &Path,
    format: &FileFormat,
) -> Result<String> {
    Ok(format!(
        "{} TO {}{}",
        source.copy_sql()?,
        path_literal(path)?,
        format.with_clause(false)?
    ))
}

/// `COPY t FROM STDIN WITH (FORMAT csv, ...)`.
pub(crate) fn copy_in_csv(table: &TableName, options: &CsvOptions) -> Result<String> {
    Ok(format!(
        "COPY {} FROM STDIN{}",
        table.to_sql()?,
        FileFormat::Csv(options.clone()).with_clause(true)?
    ))
}

/// `COPY t TO STDOUT WITH (FORMAT csv, ...)` / `COPY (query) TO ...`.
pub(crate) fn copy_out_csv(source: &CopySource, options: &CsvOptions) -> Result<String> {
    Ok(format!(
        "{} TO STDOUT{}",
        source.copy_sql()?,
        FileFormat::Csv(options.clone()).with_clause(false)?
    ))
}

/// `external('path', FORMAT => 'parquet')`: the format named, so the file
/// need not end in `.parquet`.
fn parquet_source(path: &Path) -> Result<String> {
    Ok(format!(
        "external({}, FORMAT => 'parquet')",
        path_literal(path)?
    ))
}

/// The empty table with the file's columns. Why not one `CREATE TABLE ..
/// AS SELECT` with the data: when that fails while reading rows, hyperd
/// keeps the new, empty table (measured), and as the file is checked before
/// the name, an error does not tell whether the table was there before.
pub(crate) fn create_from_parquet(table: &TableName, path: &Path) -> Result<String> {
    Ok(format!(
        "CREATE TABLE {} AS SELECT * FROM {} WITH NO DATA",
        table.to_sql()?,
        parquet_source(path)?
    ))
}

/// The file's rows into the table [`create_from_parquet`] made.
pub(crate) fn insert_from_parquet(table: &TableName, path: &Path) -> Result<String> {
    Ok(format!(
        "INSERT INTO {} SELECT * FROM {}",
        table.to_sql()?,
        parquet_source(path)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn statements() {
        let t = TableName::from(("s", "t\"x"));
        assert_eq!(
            copy_from_file(&t, Path::new("/d/it's.parquet"), &FileFormat::Parquet).unwrap(),
            "COPY \"s\".\"t\"\"x\" FROM '/d/it''s.parquet' WITH (FORMAT parquet)"
        );
        assert_eq!(
            copy_to_file(
                &CopySource::query("SELECT 1 ;\n "),
                Path::new("/d/a.arrow"),
                &FileFormat::ArrowIpc
            )
            .unwrap(),
            "COPY (SELECT 1\n) TO '/d/a.arrow' WITH (FORMAT arrowfile)"
        );
        assert_eq!(
            copy_to_file(&(&t).into(), Path::new("/d/a"), &FileFormat::ArrowIpcStream).unwrap(),
            "COPY \"s\".\"t\"\"x\" TO '/d/a' WITH (FORMAT arrowstream)"
        );
        assert!(copy_in_csv(&t, &CsvOptions::new())
            .unwrap()
            .starts_with("COPY \"s\".\"t\"\"x\" FROM STDIN WITH (FORMAT csv, HEADER false,"));
        assert!(copy_out_csv(&CopySource::table("t"), &CsvOptions::new())
            .unwrap()
            .starts_with("COPY \"t\" TO STDOUT WITH (FORMAT csv,"));
        assert_eq!(
            create_from_parquet(&t, Path::new("/p")).unwrap(),
            "CREATE TABLE \"s\".\"t\"\"x\" AS SELECT * FROM external('/p', FORMAT => 'parquet') \
             WITH NO DATA"
        );
        assert_eq!(
            insert_from_parquet(&TableName::new("t"), Path::new("/p")).unwrap(),
            "INSERT INTO \"t\" SELECT * FROM external('/p', FORMAT => 'parquet')"
        );
        assert_eq!(copy_query("SELECT 2;"), "COPY (SELECT 2\n)");
        assert_eq!(copy_query("SELECT 2 -- note"), "COPY (SELECT 2 -- note\n)");
        assert_eq!(CopySource::query("x").position_offset(), QUERY_OFFSET);
        assert_eq!(CopySource::table("x").position_offset(), 0);
    }

    #[test]
    fn bad_input_is_refused_before_sending() {
        let t = TableName::new("t");
        let e = copy_from_file(&t, Path::new("/a\0b"), &FileFormat::Parquet).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        let e = copy_in_csv(&TableName::new("t\0"), &CsvOptions::new()).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let p = Path::new(std::ffi::OsStr::from_bytes(b"/x/\xff.csv"));
            let e = copy_to_file(&CopySource::table("t"), p, &FileFormat::csv()).unwrap_err();
            assert!(e.to_string().contains("not valid UTF-8"), "{e}");
        }
    }
}
