//! Counting a statement's `$n` placeholders, which hyperd needs declared
//! in `Parse` (it neither infers their number nor accepts extra ones).

/// The highest `$n` in `sql` outside string literals, quoted identifiers,
/// dollar-quoted strings and comments; 0 when there is none. A `$` inside
/// an identifier (`a$1`) is part of the identifier, as in PostgreSQL.
pub(crate) fn placeholder_count(sql: &str) -> usize {
    let b = sql.as_bytes();
    let mut max = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                // E'...' strings escape with backslashes as well.
                let backslash = i > 0 && matches!(b[i - 1], b'e' | b'E') && !ident_before(b, i - 1);
                i = skip_quoted(b, i + 1, b'\'', backslash);
            }
            b'"' => i = skip_quoted(b, i + 1, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n + 1);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i + 2),
            b'$' if !ident_before(b, i) => {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if digits > 0 {
                    let n = sql[i + 1..i + 1 + digits]
                        .parse::<usize>()
                        .unwrap_or(usize::MAX);
                    max = max.max(n);
                    i += 1 + digits;
                } else {
                    i = skip_dollar_quoted(b, i);
                }
            }
            _ => i += 1,
        }
    }
    max
}

/// Whether the byte before `at` continues an identifier.
fn ident_before(b: &[u8], at: usize) -> bool {
    at > 0
        && (b[at - 1].is_ascii_alphanumeric()
            || b[at - 1] == b'_'
            || b[at - 1] == b'$'
            || b[at - 1] >= 0x80)
}

/// Past the closing `quote` of a literal starting at `i`; a doubled quote
/// is one quote, and with `backslash` a backslash escapes the next byte.
fn skip_quoted(b: &[u8], mut i: usize, quote: u8, backslash: bool) -> usize {
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
    use super::placeholder_count as count;

    #[test]
    fn counts_the_highest_placeholder() {
        assert_eq!(count("SELECT 1"), 0);
        assert_eq!(count("SELECT $1"), 1);
        assert_eq!(count("SELECT * FROM t WHERE a = $2 AND b = $1"), 2);
        assert_eq!(count("SELECT $10 + $3"), 10);
        assert_eq!(count("INSERT INTO t VALUES ($1,$2,$3)"), 3);
    }

    #[test]
    fn skips_literals_identifiers_and_comments() {
        assert_eq!(count("SELECT '$1', $2"), 2);
        assert_eq!(count("SELECT 'it''s $3', $1"), 1);
        assert_eq!(count(r"SELECT E'\' $4', $1"), 1);
        assert_eq!(count(r"SELECT e'a\'b$5' || $2"), 2);
        assert_eq!(count("SELECT \"col$1\", $2 FROM t"), 2);
        assert_eq!(count("SELECT $1 -- and $7\n, $2"), 2);
        assert_eq!(count("SELECT /* $9 /* $8 */ $7 */ $1"), 1);
        assert_eq!(count("SELECT $$ $5 $$, $tag$ $6 $tag$, $1"), 1);
        assert_eq!(count("SELECT a$1 FROM t WHERE x = $2"), 2);
        assert_eq!(count("SELECT 'unterminated $4"), 0);
        assert_eq!(count("SELECT $ + $x"), 0);
    }
}
