//! Walking SQL text without parsing it: where the parts that are not SQL
//! code (string literals, quoted identifiers, comments, dollar-quoted
//! strings) end. One lexer for the scanners that need it: the placeholder
//! count of a prepared statement, the route book's statement key, and a
//! statement's first word.

/// If a part that is not code starts at `b[i]` (a string literal, `E'..'`
/// with backslash escapes, a quoted identifier, a `--` or `/* */`
/// comment, a `$tag$` string), where it ends; `None` for code, and for a
/// `$` followed by a digit (a placeholder) or inside an identifier.
pub(crate) fn skip_unlexed(b: &[u8], i: usize) -> Option<usize> {
    match b[i] {
        b'\'' => {
            // E'...' strings escape with backslashes as well.
            let backslash = i > 0 && matches!(b[i - 1], b'e' | b'E') && !ident_before(b, i - 1);
            Some(skip_quoted(b, i + 1, b'\'', backslash))
        }
        b'"' => Some(skip_quoted(b, i + 1, b'"', false)),
        b'-' if b.get(i + 1) == Some(&b'-') => Some(
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n + 1),
        ),
        b'/' if b.get(i + 1) == Some(&b'*') => Some(skip_block_comment(b, i + 2)),
        b'$' if !ident_before(b, i) && !b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
            Some(skip_dollar_quoted(b, i))
        }
        _ => None,
    }
}

/// The statement's first word (its keyword), past spaces, parentheses and
/// comments; empty when it starts with something else.
pub(crate) fn first_word(sql: &str) -> &str {
    let first = tokens(sql).find(|&t| t != "(").unwrap_or("");
    let len = first.bytes().take_while(u8::is_ascii_alphabetic).count();
    &first[..len]
}

/// The statement's tokens: words (letters, digits, `_`, `$` and
/// non-ASCII), each string literal, quoted identifier or `$tag$` string
/// whole, and any other byte alone; spaces and comments left out.
pub(crate) fn tokens(sql: &str) -> impl Iterator<Item = &str> + '_ {
    let b = sql.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let start = i;
            if b[i].is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if let Some(end) = skip_unlexed(b, i) {
                i = end;
                if matches!(b[start], b'-' | b'/') {
                    continue; // a comment
                }
                return Some(&sql[start..end]);
            }
            i += b[i..]
                .iter()
                .take_while(|&&c| is_word_byte(c))
                .count()
                .max(1);
            // Never inside a character: a word takes all of its bytes, and
            // a lone byte is ASCII.
            return Some(&sql[start..i]);
        }
        None
    })
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Whether the byte before `at` continues an identifier.
pub(crate) fn ident_before(b: &[u8], at: usize) -> bool {
    at > 0 && is_word_byte(b[at - 1])
}

/// Past the closing `quote` of a literal starting at `i`; a doubled quote
/// is one quote, and with `backslash` a backslash escapes the next byte.
pub(crate) fn skip_quoted(b: &[u8], mut i: usize, quote: u8, backslash: bool) -> usize {
    while i < b.len() {
        if backslash && b[i] == b'\\' {
            i += 2;
        } else if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Past the end of a (nested) `/* */` comment whose body starts at `i`.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Past a `$tag$ ... $tag$` string starting at `i`; a `$` that does not
/// open one is stepped over.
fn skip_dollar_quoted(b: &[u8], i: usize) -> usize {
    let tag_len = b[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let close = i + 1 + tag_len;
    if b.get(close) != Some(&b'$') {
        return i + 1;
    }
    let tag = &b[i..=close];
    let body = close + 1;
    match b[body..].windows(tag.len()).position(|w| w == tag) {
        Some(at) => body + at + tag.len(),
        None => b.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::{first_word, tokens};

    #[test]
    fn tokens_are_words_literals_and_single_bytes() {
        let sql =
            "WITH \"q (x\" AS (SELECT 'it''s (' AS ü1, $a$ ) $a$, -- ( c\n x::int/* ) */) DELETE";
        assert_eq!(
            tokens(sql).collect::<Vec<_>>(),
            [
                "WITH",
                "\"q (x\"",
                "AS",
                "(",
                "SELECT",
                "'it''s ('",
                "AS",
                "ü1",
                ",",
                "$a$ ) $a$",
                ",",
                "x",
                ":",
                ":",
                "int",
                ")",
                "DELETE"
            ]
        );
        assert_eq!(tokens("").count(), 0);
        assert_eq!(tokens(" -- only\n").count(), 0);
    }

    #[test]
    fn first_words_skip_spaces_parentheses_and_comments() {
        for (sql, word) in [
            ("SELECT 1", "SELECT"),
            ("  (select 1)", "select"),
            (
                "-- a comment\n/* and /* nested */ one */ WITH x AS (SELECT 1) TABLE x",
                "WITH",
            ),
            ("insert into t values (1)", "insert"),
            ("", ""),
            ("$1", ""),
            ("- 1", ""),
        ] {
            assert_eq!(first_word(sql), word, "{sql:?}");
        }
    }
}
