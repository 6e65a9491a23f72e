//! Where in a file (or a COPY stream) hyperd found bad data.
//!
//! hyperd reports it in text only, in three shapes (measured on 0.0.26963):
//!
//! * a parse error (22P02) puts it in the detail:
//!   `file: '/dir/a.csv' line:3 column:3`, or `file:'stdin' line:3` when
//!   the row as a whole is wrong (too few or too many columns, an
//!   unterminated quoted field); the column counts from 1;
//! * a NULL for a NOT NULL column (23502) puts it in the message:
//!   `... of column "b" (line: 2, column 1)`; the column counts from 0;
//! * bytes that are no UTF-8 (22021) put the line in the message and the
//!   column's name in the detail: `invalid UTF-8 sequence in line 2`,
//!   `column name: s`.
//!
//! The server's message and detail stay as they are; this reads them.

use crate::error::DbError;

/// A position in the input of a COPY, as hyperd reported it; see
/// [`crate::Error::file_position`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FilePosition {
    /// The file named (`stdin` for a stream), when the server named one.
    pub file: Option<String>,
    /// 1-based line of the input, counting the header line.
    pub line: u64,
    /// 1-based column (field) of that line, when the server named one.
    pub column: Option<u64>,
    /// The table column's name, when the server named it instead.
    pub column_name: Option<String>,
}

impl FilePosition {
    pub(crate) fn from_db_error(db: &DbError) -> Option<FilePosition> {
        db.detail
            .as_deref()
            .and_then(from_detail)
            .or_else(|| from_message(&db.message))
            .or_else(|| in_line(db))
    }
}

/// `file: 'x' line:3 column:3` / `file:'x' line:3`.
fn from_detail(detail: &str) -> Option<FilePosition> {
    let line = number_after(detail, "line:")?;
    Some(FilePosition {
        file: quoted_after(detail, "file:"),
        line,
        column: number_after(detail, "column:"),
        column_name: None,
    })
}

/// `... (line: 2, column 1)`, the column counted from 0.
fn from_message(message: &str) -> Option<FilePosition> {
    let at = message.rfind("(line:")?;
    let tail = &message[at..];
    Some(FilePosition {
        file: None,
        line: number_after(tail, "(line:")?,
        column: number_after(tail, "column").map(|c| c + 1),
        column_name: None,
    })
}

/// `... in line 2`, the detail `column name: s`.
fn in_line(db: &DbError) -> Option<FilePosition> {
    let at = db.message.rfind(" in line ")?;
    Some(FilePosition {
        file: None,
        line: number_after(&db.message[at..], " in line ")?,
        column: None,
        column_name: db
            .detail
            .as_deref()
            .and_then(|d| d.strip_prefix("column name: "))
            .map(str::to_owned),
    })
}

/// The decimal number after the first `key` in `text` (spaces skipped).
fn number_after(text: &str, key: &str) -> Option<u64> {
    let rest = text[text.find(key)? + key.len()..].trim_start();
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

/// The single-quoted text after `key` in `text` (spaces skipped).
fn quoted_after(text: &str, key: &str) -> Option<String> {
    let rest = text[text.find(key)? + key.len()..].trim_start();
    let rest = rest.strip_prefix('\'')?;
    // A path may hold quotes; the position words follow the last one.
    let end = rest.rfind("' line:")?;
    Some(rest[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SqlState;

    fn db(message: &str, detail: Option<&str>) -> DbError {
        let mut db = DbError::new(SqlState::from_code("22P02"), message);
        db.detail = detail.map(str::to_owned);
        db
    }

    #[test]
    fn both_detail_shapes() {
        let p = FilePosition::from_db_error(&db(
            "invalid input syntax for double precision",
            Some("file: '/tmp/a b.csv' line:3 column:3"),
        ))
        .unwrap();
        assert_eq!(p.file.as_deref(), Some("/tmp/a b.csv"));
        assert_eq!((p.line, p.column), (3, Some(3)));
        let p = FilePosition::from_db_error(&db(
            "too few columns in input file",
            Some("file:'stdin' line:12"),
        ))
        .unwrap();
        assert_eq!(p.file.as_deref(), Some("stdin"));
        assert_eq!((p.line, p.column), (12, None));
        let p = FilePosition::from_db_error(&db("x", Some("file:'it' line:4' line:7"))).unwrap();
        assert_eq!(p.file.as_deref(), Some("it' line:4"));
    }

    #[test]
    fn not_null_shape_counts_columns_from_zero() {
        let p = FilePosition::from_db_error(&db(
            "The scanned data violates the NOT NULL constraint of column \"c\" (line: 2, column 2)",
            None,
        ))
        .unwrap();
        assert_eq!((p.file, p.line, p.column), (None, 2, Some(3)));
    }

    #[test]
    fn an_encoding_error_names_the_line_and_the_column() {
        let p = FilePosition::from_db_error(&db(
            "invalid UTF-8 sequence in line 2",
            Some("column name: s t"),
        ))
        .unwrap();
        assert_eq!((p.line, p.column), (2, None));
        assert_eq!(p.column_name.as_deref(), Some("s t"));
    }

    #[test]
    fn other_errors_have_none() {
        assert_eq!(FilePosition::from_db_error(&db("x", None)), None);
        assert_eq!(
            FilePosition::from_db_error(&db(
                "could not read from external source",
                Some("Source: \"/tmp/x.csv\"")
            )),
            None
        );
        assert_eq!(
            FilePosition::from_db_error(&db("x", Some("line:abc"))),
            None
        );
    }
}
