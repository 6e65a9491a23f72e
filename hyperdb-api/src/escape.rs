//! Quoting for SQL text: the one place user strings become SQL.
//!
//! Identifiers are always double-quoted (so case and reserved words survive);
//! literals are single-quoted with quotes doubled. Hyper, like PostgreSQL with
//! `standard_conforming_strings`, treats backslashes in `'...'` literally.

use std::fmt::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// `name` as a double-quoted identifier: `my "table"` -> `"my ""table"""`.
/// Errors on a NUL byte, which no identifier may contain.
pub fn quote_identifier(name: &str) -> Result<String> {
    let mut out = String::with_capacity(name.len() + 2);
    push_identifier(&mut out, name)?;
    Ok(out)
}

/// Appends `name` as a double-quoted identifier.
pub fn push_identifier(out: &mut String, name: &str) -> Result<()> {
    check_no_nul(name, "identifier")?;
    out.push('"');
    for c in name.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    Ok(())
}

/// `value` as a single-quoted string literal: `it's` -> `'it''s'`.
pub fn quote_literal(value: &str) -> Result<String> {
    check_no_nul(value, "string literal")?;
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
    Ok(out)
}

fn check_no_nul(s: &str, what: &str) -> Result<()> {
    match s.find('\0') {
        Some(at) => Err(Error::invalid_argument(
            what,
            format!("contains a NUL byte at offset {at}"),
        )),
        None => Ok(()),
    }
}

/// `path` as text for SQL that names a file on the server. A path that is
/// not UTF-8 is refused: a lossy conversion would name another file.
pub(crate) fn utf8_path(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| {
        Error::invalid_argument("path", format!("{} is not valid UTF-8", path.display()))
    })
}

/// Joins quoted identifiers with `, `: a column list.
pub fn identifier_list<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<String> {
    let mut out = String::new();
    for (i, n) in names.into_iter().enumerate() {
        if i > 0 {
            let _ = write!(out, ", ");
        }
        push_identifier(&mut out, n)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_always_quoted() {
        assert_eq!(quote_identifier("abc").unwrap(), "\"abc\"");
        assert_eq!(quote_identifier("My Table").unwrap(), "\"My Table\"");
        assert_eq!(quote_identifier("a\"b").unwrap(), "\"a\"\"b\"");
        assert_eq!(quote_identifier("").unwrap(), "\"\"");
        assert_eq!(
            quote_identifier("/tmp/ä x.hyper").unwrap(),
            "\"/tmp/ä x.hyper\""
        );
        assert_eq!(identifier_list(["a", "b\"c"]).unwrap(), "\"a\", \"b\"\"c\"");
    }

    #[test]
    fn literals_double_quotes_and_keep_backslashes() {
        assert_eq!(quote_literal("it's").unwrap(), "'it''s'");
        assert_eq!(quote_literal("a\\b").unwrap(), "'a\\b'");
        assert_eq!(quote_literal("").unwrap(), "''");
    }

    #[test]
    fn nul_is_rejected() {
        let e = quote_identifier("a\0b").unwrap_err();
        assert!(e.to_string().contains("offset 1"), "{e}");
        assert!(quote_literal("\0").is_err());
    }
}
