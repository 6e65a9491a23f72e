//! Walking SQL text without parsing it: where the parts that are not SQL
//! code (string literals, quoted identifiers, comments, dollar-quoted
//! strings) end. One lexer for the scanners that need it: the placeholder
//! count of a prepared statement, the route book's statement key, and a
//! statement's first word.
//!
//! It reads the text as hyperd's lexer does (measured on hyperd
//! 0.0.26963; see [`space_len`]), not as PostgreSQL's: the gRPC write guard and the `COMMIT` of a failed
//! transaction decide by the keyword found here, and a character hyperd
//! skips that is taken for part of a word here hides the keyword (a
//! leading BOM made a `DELETE` look like no statement at all). Where the
//! two readings differ anyway, the one here should find more keywords,
//! not fewer.

/// If a part that is not code starts at `b[i]` (a string literal, `E'..'`
/// with backslash escapes, a quoted identifier, a `--` or `/* */`
/// comment, a `$tag$` string), where it ends; `None` for code, and for a
/// `$` followed by a digit (a placeholder). hyperd ends a `--` comment at
/// a carriage return as well as at a line feed, and does not nest `/* */`
/// comments (`/* /* */ DELETE ...` deletes); a `$` after a word still
/// opens a `$tag$` string (`text$q$--$q$` is `text '--'`).
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
                .position(|&c| matches!(c, b'\n' | b'\r'))
                .map_or(b.len(), |n| i + n + 1),
        ),
        b'/' if b.get(i + 1) == Some(&b'*') => Some(skip_block_comment(b, i + 2)),
        b'$' if !b.get(i + 1).is_some_and(u8::is_ascii_digit) => Some(skip_dollar_quoted(b, i)),
        _ => None,
    }
}

/// The statement's first word (its keyword), past spaces, parentheses,
/// empty statements (`;`, which hyperd skips before a statement) and
/// comments; empty when it starts with something else (see
/// [`first_token`]).
pub(crate) fn first_word(sql: &str) -> &str {
    word_of(first_token(sql))
}

/// The keyword a token starts with: its leading ASCII letters (empty for
/// a token that is no word).
pub(crate) fn word_of(token: &str) -> &str {
    let len = token.bytes().take_while(u8::is_ascii_alphabetic).count();
    &token[..len]
}

/// The statement's first token past spaces, parentheses, `;` and
/// comments; empty when there is none. A caller that must not take a
/// statement for harmless when unsure can tell from it a statement that
/// starts with something other than a keyword from one that is empty.
pub(crate) fn first_token(sql: &str) -> &str {
    tokens(sql).find(|&t| t != "(" && t != ";").unwrap_or("")
}

/// The statement's tokens: words (ASCII letters, digits, `_` and every
/// other character but the spaces of [`space_len`]), each string literal,
/// quoted identifier or `$tag$` string whole, and any other byte alone;
/// spaces and comments left out. Words end where hyperd ends them, but
/// hyperd takes the spaces right after a word into it (`SELECT\u{A0}1`
/// is the name `SELECT\u{A0}` and a 1, a syntax error): left out here,
/// that finds a keyword where hyperd has a name, never misses one.
pub(crate) fn tokens(sql: &str) -> impl Iterator<Item = &str> + '_ {
    let b = sql.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let start = i;
            let space = space_len(b, i);
            if space > 0 {
                i += space;
                continue;
            }
            if let Some(end) = skip_unlexed(b, i) {
                i = end;
                if matches!(b[start], b'-' | b'/') {
                    continue; // a comment
                }
                return Some(&sql[start..end]);
            }
            while i < b.len() && is_word_byte(b[i]) && space_len(b, i) == 0 {
                i += 1;
            }
            i = i.max(start + 1);
            // Never inside a character: a word takes all of its bytes (a
            // space character starts with a byte no other character has
            // inside it), and a lone byte is ASCII.
            return Some(&sql[start..i]);
        }
        None
    })
}

/// The length of the character at `b[i]` if it is one that hyperd skips
/// between tokens, else 0: ASCII's tab, line feed, vertical tab, form
/// feed, carriage return and space, U+00A0, U+2000 to U+200F (the spaces,
/// the zero-width ones and the direction marks), U+2028, U+2029, U+3000
/// and U+FEFF (a byte order mark). Found by running `<c>SELECT 1` with
/// every character `c`, and `(<c>SELECT 1)`, `/**/<c>SELECT 1` and
/// `SELECT 1,<c>2` with every BMP one (hyperd 0.0.26963); the other
/// White_Space characters (U+0085, U+1680, U+202F, U+205F) and U+2060
/// start a name instead. Each sequence begins
/// with a UTF-8 lead byte, so a scan that steps bytewise never matches
/// one from inside another character.
pub(crate) fn space_len(b: &[u8], i: usize) -> usize {
    match b.get(i..).unwrap_or_default() {
        [b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ', ..] => 1,
        [0xc2, 0xa0, ..] => 2,
        [0xe2, 0x80, 0x80..=0x8f | 0xa8 | 0xa9, ..]
        | [0xe3, 0x80, 0x80, ..]
        | [0xef, 0xbb, 0xbf, ..] => 3,
        _ => 0,
    }
}

/// The length of the space character of [`space_len`] that ends just
/// before `at`, if one does and it is not ASCII.
fn wide_space_before(b: &[u8], at: usize) -> usize {
    [2, 3]
        .into_iter()
        .find(|&n| at >= n && space_len(b, at - n) == n)
        .unwrap_or(0)
}

/// Whether `c` may be part of a word. Not `$`: hyperd reads `x$1` as
/// `x` and a placeholder, and `x$q$..$q$` as `x` and a string.
fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Whether the byte before `at` continues a word, so that a letter at
/// `at` is part of it (`xE'..'` is the name `xE` and a plain string). A
/// space character is not: hyperd takes the spaces after a word into it,
/// but starts a new token after them (`x\u{A0}E'..'` is a name and a
/// string with backslash escapes).
pub(crate) fn ident_before(b: &[u8], at: usize) -> bool {
    at > 0 && is_word_byte(b[at - 1]) && wide_space_before(b, at) == 0
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

/// Past the end of a `/* */` comment whose body starts at `i`: its first
/// `*/`, as hyperd reads it (PostgreSQL nests them).
fn skip_block_comment(b: &[u8], i: usize) -> usize {
    b[i..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(b.len(), |n| i + n + 2)
}

/// Past a `$tag$ ... $tag$` string starting at `i` (hyperd's tags take
/// any character a word does, `$é$` and `$\u{A0}$` included); a `$` that
/// does not open one is stepped over.
fn skip_dollar_quoted(b: &[u8], i: usize) -> usize {
    let tag_len = b[i + 1..].iter().take_while(|&&c| is_word_byte(c)).count();
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
    use super::{first_token, first_word, ident_before, space_len, tokens};

    /// The characters hyperd skips between tokens (see `space_len`).
    const HYPERD_SPACES: [char; 27] = [
        '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{2000}', '\u{2001}', '\u{2002}',
        '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}',
        '\u{200A}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2028}',
        '\u{2029}', '\u{3000}', '\u{FEFF}',
    ];

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
                "-- a comment\n/* and another */ WITH x AS (SELECT 1) TABLE x",
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

    /// Every character hyperd skips before a keyword, after a parenthesis
    /// or a comment, and between two tokens is a space here: a leading
    /// BOM or U+00A0 hid a `DELETE` from the gRPC write guard.
    #[test]
    fn the_spaces_hyperd_skips_are_spaces() {
        for c in HYPERD_SPACES {
            let mut buf = [0; 4];
            assert_eq!(
                space_len(c.encode_utf8(&mut buf).as_bytes(), 0),
                c.len_utf8()
            );
            for sql in [
                format!("{c}DELETE FROM t"),
                format!("{c}{c} {c}(/**/{c}DELETE FROM t)"),
                format!("--{c}\n{c}DELETE FROM t"),
            ] {
                assert_eq!(first_word(&sql), "DELETE", "{c:?} in {sql:?}");
            }
            let sql = format!("WITH q AS (SELECT 1){c}DELETE FROM t");
            assert_eq!(
                tokens(&sql).collect::<Vec<_>>(),
                ["WITH", "q", "AS", "(", "SELECT", "1", ")", "DELETE", "FROM", "t"],
                "{c:?}"
            );
            // After a word hyperd takes it into the word; cut there, the
            // keyword is found all the same.
            let sql = format!("DELETE{c}FROM t");
            assert_eq!(first_word(&sql), "DELETE", "{c:?}");
        }
    }

    /// The other White_Space characters, and U+2060, start a name to
    /// hyperd: no keyword, and the first token says what it starts with.
    #[test]
    fn other_unicode_spaces_start_a_word() {
        for c in [
            '\u{85}', '\u{1680}', '\u{202F}', '\u{205F}', '\u{2060}', '\u{180E}',
        ] {
            let mut buf = [0; 4];
            assert_eq!(space_len(c.encode_utf8(&mut buf).as_bytes(), 0), 0, "{c:?}");
            let sql = format!("{c}DELETE FROM t");
            assert_eq!(first_word(&sql), "", "{c:?}");
            assert_eq!(first_token(&sql), format!("{c}DELETE"), "{c:?}");
        }
    }

    /// Comments and strings end where hyperd ends them, so that what
    /// follows is read as code: a `--` comment at a carriage return, a
    /// `/* */` at its first `*/` (hyperd does not nest them), and a
    /// `$tag$` string also right after a word.
    #[test]
    fn comments_and_strings_end_where_hyperd_ends_them() {
        for sql in [
            "-- note\rDELETE FROM t",
            "/* a /* b */ DELETE FROM t",
            ";DELETE FROM t",
            " ; ;\u{A0}DELETE FROM t",
        ] {
            assert_eq!(first_word(sql), "DELETE", "{sql:?}");
        }
        assert_eq!(first_token("/* a /* b */ */ SELECT 1"), "*");
        assert_eq!(
            tokens("WITH q AS (SELECT text$q$--$q$) DELETE FROM t").collect::<Vec<_>>(),
            ["WITH", "q", "AS", "(", "SELECT", "text", "$q$--$q$", ")", "DELETE", "FROM", "t"]
        );
        assert_eq!(
            tokens("SELECT $é$ ' $é$, $\u{A0}$ x $\u{A0}$ ) DELETE").collect::<Vec<_>>(),
            [
                "SELECT",
                "$é$ ' $é$",
                ",",
                "$\u{A0}$ x $\u{A0}$",
                ")",
                "DELETE"
            ]
        );
        // `E'` right after a name is the name's letter and a plain string;
        // after a space (any of hyperd's) it opens a string with backslash
        // escapes.
        assert_eq!(
            tokens("SELECT xE'\\' ) DELETE --'").collect::<Vec<_>>(),
            ["SELECT", "xE", "'\\'", ")", "DELETE"]
        );
        assert_eq!(
            tokens("SELECT x\u{A0}E'\\' ) DELETE --'").collect::<Vec<_>>(),
            ["SELECT", "x", "E", "'\\' ) DELETE --'"]
        );
        let b = "xE \u{A0}E".as_bytes();
        assert!(ident_before(b, 1));
        assert!(!ident_before(b, 3));
        assert!(!ident_before(b, b.len() - 1));
    }
}
