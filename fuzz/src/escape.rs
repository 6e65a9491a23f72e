//! The SQL escaping functions (`hyperdb_api::escape`, the name types):
//! whatever the string, the output lexes as exactly the tokens intended
//! (one quoted identifier, one string literal, a qualified name, a list),
//! read back by a small SQL lexer written here, and each token's value is
//! the string that went in. A NUL byte is refused, typed.

use hyperdb_api::escape::{identifier_list, push_identifier, quote_identifier, quote_literal};
use hyperdb_api::{DatabaseName, Error, SchemaName, TableName};

use crate::alloc::{assert_bounded, peak_during};

/// One token of SQL text, as Hyper's lexer (PostgreSQL's, with standard
/// conforming strings) reads it.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    /// `"..."` with `""` for a quote: the identifier's name.
    Identifier(String),
    /// `'...'` with `''` for a quote, backslashes literal: the value.
    Literal(String),
    Punct(char),
    Space,
    /// Anything else, one character at a time.
    Other(char),
    /// A quoted token that never ends.
    Unterminated,
}

fn lex(sql: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let token = match c {
            '"' | '\'' => {
                let mut value = String::new();
                let mut closed = false;
                while let Some(d) = chars.next() {
                    if d == c {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            closed = true;
                            break;
                        }
                    }
                    value.push(d);
                }
                match (closed, c) {
                    (false, _) => Token::Unterminated,
                    (true, '"') => Token::Identifier(value),
                    (true, _) => Token::Literal(value),
                }
            }
            '.' | ',' => Token::Punct(c),
            c if c.is_whitespace() => Token::Space,
            c => Token::Other(c),
        };
        out.push(token);
    }
    out
}

pub fn check(data: &[u8]) {
    let (_, peak) = peak_during(|| run(data));
    assert_bounded("escaping", peak, data.len());
}

fn run(data: &[u8]) {
    // 0xFF never occurs in UTF-8: it separates the strings.
    let parts: Vec<String> = data
        .split(|&b| b == 0xff)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    for s in &parts {
        identifier(s);
        literal(s);
    }
    let names: Vec<&str> = parts.iter().map(String::as_str).collect();
    list(&names);
    let (a, b, c) = (
        names.first().copied().unwrap_or(""),
        names.get(1).copied().unwrap_or(""),
        names.get(2).copied().unwrap_or(""),
    );
    qualified(TableName::from(a).to_sql(), &[a]);
    qualified(TableName::from((a, b)).to_sql(), &[a, b]);
    qualified(TableName::from((a, b, c)).to_sql(), &[a, b, c]);
    qualified(SchemaName::from((a, b)).to_sql(), &[a, b]);
    qualified(DatabaseName::from(a).to_sql(), &[a]);
    qualified(
        TableName::from(c).with_database(a).to_sql(),
        &[a, "public", c],
    );
    // Display never fails; a NUL shows as U+FFFD.
    let shown = TableName::from((a, b, c)).to_string();
    let clean = |s: &str| s.replace('\0', "\u{FFFD}");
    qualified(Ok(shown), &[&clean(a), &clean(b), &clean(c)]);
}

fn refused_nul(s: &str, out: Result<String, Error>) -> Option<String> {
    match out {
        Ok(sql) => {
            assert!(!s.contains('\0'), "a NUL byte went into SQL: {sql:?}");
            Some(sql)
        }
        Err(e) => {
            assert!(s.contains('\0'), "refused {s:?}: {e}");
            assert!(
                matches!(e, Error::InvalidArgument { .. }),
                "untyped error: {e:?}"
            );
            None
        }
    }
}

fn identifier(s: &str) {
    let Some(sql) = refused_nul(s, quote_identifier(s)) else {
        return;
    };
    assert_eq!(lex(&sql), [Token::Identifier(s.to_owned())], "{sql:?}");
    let mut appended = String::from("SELECT ");
    push_identifier(&mut appended, s).expect("no NUL");
    assert_eq!(appended, format!("SELECT {sql}"));
}

fn literal(s: &str) {
    let Some(sql) = refused_nul(s, quote_literal(s)) else {
        return;
    };
    assert_eq!(lex(&sql), [Token::Literal(s.to_owned())], "{sql:?}");
}

fn list(names: &[&str]) {
    let all = names.iter().any(|n| n.contains('\0'));
    let Some(sql) = refused_nul(
        if all { "\0" } else { "" },
        identifier_list(names.iter().copied()),
    ) else {
        return;
    };
    let mut want = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            want.extend([Token::Punct(','), Token::Space]);
        }
        want.push(Token::Identifier((*n).to_owned()));
    }
    assert_eq!(lex(&sql), want, "{sql:?}");
}

/// `sql` is the `names` as quoted identifiers joined by dots.
fn qualified(sql: Result<String, Error>, names: &[&str]) {
    let nul = names.iter().any(|n| n.contains('\0'));
    let Some(sql) = refused_nul(if nul { "\0" } else { "" }, sql) else {
        return;
    };
    let mut want = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            want.push(Token::Punct('.'));
        }
        want.push(Token::Identifier((*n).to_owned()));
    }
    assert_eq!(lex(&sql), want, "{sql:?}");
}
