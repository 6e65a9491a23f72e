//! What the route book files a statement under: its text, and its shape.
//!
//! Both are hashes of the SQL with some literals left out, read with the
//! one lexer (`crate::sql_lex`) so that a literal inside a string, a
//! comment or a quoted name is never taken for one.

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::sql_lex::{ident_before, skip_quoted, skip_unlexed, space_len};

/// A statement's two keys in the route book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RouteKey {
    /// The text with the literal of each equality (`= 42`, `= 'x'`) left
    /// out: runs of one lookup with other values share what they showed.
    /// Why: hyperd plans simple `Query`s by their shape, so a lookup whose
    /// value changes each run is cheap as rows from its second run on,
    /// where by its text each run would be a first run (an Arrow COPY,
    /// planned afresh: 1-1.5 ms more). Other literals (ranges, `LIMIT`,
    /// function arguments) stay in: they tend to change the result's size,
    /// which decides the route.
    pub(crate) statement: u64,
    /// The text with every string left out and every number reduced to
    /// its order of magnitude: `SELECT 41 + 1` and `SELECT 57 + 1` share a
    /// shape, `LIMIT 10` and `LIMIT 10000000` do not. A statement never
    /// seen takes its route from its shape's results when they were all
    /// small (`RouteBook::choose`), so a query written with a new literal
    /// each run is not a first run, and an Arrow COPY, every time.
    pub(crate) shape: u64,
}

/// The keys of `sql`.
pub(crate) fn key(sql: &str) -> RouteKey {
    let b = sql.as_bytes();
    let mut statement = Leaving::default();
    let mut shape = Leaving::default();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skip_unlexed(b, i) {
            // A `$` that opens no `$tag$` string is stepped over alone.
            if b[i] == b'\'' || (b[i] == b'$' && end > i + 1) {
                shape.leave_out(b, i, end, Mark::String);
            }
            i = end;
            continue;
        }
        match b[i] {
            b'=' if !matches!(
                i.checked_sub(1).map(|p| b[p]),
                Some(b'<' | b'>' | b'!' | b':')
            ) =>
            {
                i += 1;
                if let Some((start, end)) = literal_after(b, i) {
                    statement.leave_out(b, i, end, Mark::String);
                    shape.leave_out(b, start, end, Mark::Number(magnitude(&b[start..end])));
                    i = end;
                }
            }
            b'0'..=b'9' | b'.' if !ident_before(b, i) => match number_end(b, i) {
                Some(end) => {
                    shape.leave_out(b, i, end, Mark::Number(magnitude(&b[i..end])));
                    i = end;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    RouteKey {
        statement: statement.finish(b),
        shape: shape.finish(b),
    }
}

/// What a literal leaves in a key in its place.
#[derive(Clone, Copy, Hash)]
enum Mark {
    String,
    Number(Magnitude),
}

/// A hash of a text with some of its spans left out.
#[derive(Default)]
struct Leaving {
    hash: DefaultHasher,
    /// Where the text not yet hashed starts.
    from: usize,
}

impl Leaving {
    /// Hashes the text up to `start` and `mark` in place of `start..end`.
    fn leave_out(&mut self, b: &[u8], start: usize, end: usize, mark: Mark) {
        self.hash.write(&b[self.from..start]);
        mark.hash(&mut self.hash);
        self.from = end;
    }

    fn finish(mut self, b: &[u8]) -> u64 {
        self.hash.write(&b[self.from..]);
        self.hash.finish()
    }
}

/// The literal that follows `=` at `b[at..]` (spaces first, then a
/// string, or a number with its minus sign): where it starts and ends, if
/// there is one; a name or an expression is no literal.
fn literal_after(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut i = at;
    loop {
        match space_len(b, i) {
            0 => break,
            n => i += n,
        }
    }
    match b.get(i)? {
        b'\'' => Some((i, skip_quoted(b, i + 1, b'\'', false))),
        b'-' => number_end(b, i + 1).map(|end| (i, end)),
        _ => number_end(b, i).map(|end| (i, end)),
    }
}

/// Where the number at `b[start..]` ends (digits, a point, an exponent),
/// if one starts there and is not the head of a name (`1x`).
fn number_end(b: &[u8], start: usize) -> Option<usize> {
    let mut end = start;
    while b.get(end).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
        end += 1;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        end += 1;
        end += usize::from(matches!(b.get(end), Some(b'+' | b'-')));
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    let ends_word = !b
        .get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    (end > start && b[start..end].iter().any(u8::is_ascii_digit) && ends_word).then_some(end)
}

/// What a number leaves in a shape: its order of magnitude (the digits
/// before its point, leading zeros aside, plus its exponent), its sign,
/// and what makes its type (the digits after its point: `1.5` is a
/// NUMERIC(2,1), `1.25` a NUMERIC(3,2); an exponent). `7` and `9` are
/// alike, `10` and `10000000` are not: a result's size tends to follow a
/// literal's magnitude (`LIMIT`, `generate_series`), not its value, and
/// its type must not change within a shape, whose statements share the
/// schema of its Arrow run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Magnitude {
    order: i64,
    negative: bool,
    scale: usize,
    exponent: bool,
}

fn magnitude(number: &[u8]) -> Magnitude {
    let negative = number.first() == Some(&b'-');
    let body = &number[usize::from(negative)..];
    let e = body.iter().position(|c| matches!(c, b'e' | b'E'));
    let (mantissa, exponent) = match e {
        Some(e) => (&body[..e], &body[e + 1..]),
        None => (body, &[][..]),
    };
    let mut parts = mantissa.splitn(2, |&c| c == b'.');
    let whole = parts.next().unwrap_or_default();
    let scale = parts.next().map_or(0, <[u8]>::len);
    let digits = whole.iter().skip_while(|&&c| c == b'0').count() as i64;
    let shift = std::str::from_utf8(exponent)
        .ok()
        .and_then(|e| e.parse::<i64>().ok())
        .unwrap_or(0);
    Magnitude {
        order: digits.saturating_add(shift),
        negative,
        scale,
        exponent: e.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal of an equality is left out of the statement key, and
    /// nothing else is.
    #[test]
    fn statement_keys_leave_out_the_literals_of_equalities() {
        let same = |a: &str, b: &str| key(a).statement == key(b).statement;
        for (a, b) in [
            (
                "SELECT v FROM t WHERE id = 5",
                "SELECT v FROM t WHERE id = 123456",
            ),
            ("SELECT v FROM t WHERE id=5", "SELECT v FROM t WHERE id=-7"),
            (
                "SELECT v FROM t WHERE x = 1.5",
                "SELECT v FROM t WHERE x = 2e-3",
            ),
            (
                "SELECT * FROM t WHERE n = 'bob'",
                "SELECT * FROM t WHERE n = 'it''s = 1'",
            ),
            (
                "SELECT * FROM t WHERE a = 1 AND b = 'x' ORDER BY c",
                "SELECT * FROM t WHERE a = 22 AND b = 'yy' ORDER BY c",
            ),
        ] {
            assert!(same(a, b), "{a} / {b}");
        }
        for (a, b) in [
            ("SELECT 1", "SELECT 2"),
            (
                "SELECT * FROM t WHERE id < 5",
                "SELECT * FROM t WHERE id < 6",
            ),
            (
                "SELECT * FROM t WHERE id <= 5",
                "SELECT * FROM t WHERE id <= 6",
            ),
            (
                "SELECT * FROM t WHERE id != 5",
                "SELECT * FROM t WHERE id != 6",
            ),
            ("SELECT * FROM t LIMIT 10", "SELECT * FROM t LIMIT 10000"),
            (
                "SELECT * FROM t WHERE a = b1",
                "SELECT * FROM t WHERE a = b2",
            ),
            (
                "SELECT * FROM t WHERE a = 1x",
                "SELECT * FROM t WHERE a = 2x",
            ),
            ("SELECT 'a = 1'", "SELECT 'a = 2'"),
            ("SELECT 1 -- id = 1", "SELECT 1 -- id = 2"),
            ("SELECT E'\\' = 1'", "SELECT E'\\' = 2'"),
            ("SELECT \"a = 1\" FROM t", "SELECT \"a = 2\" FROM t"),
            (
                "SELECT * FROM t WHERE id = 5",
                "SELECT * FROM u WHERE id = 5",
            ),
        ] {
            assert!(!same(a, b), "{a} / {b}");
        }
    }

    /// Shapes leave out strings and keep each number's magnitude only.
    #[test]
    fn shapes_keep_only_the_magnitude_of_numbers() {
        let same = |a: &str, b: &str| key(a).shape == key(b).shape;
        for (a, b) in [
            ("SELECT 41 + 1", "SELECT 57 + 3"),
            ("SELECT 'a'", "SELECT 'a much longer string'"),
            ("SELECT $$x$$", "SELECT $tag$y$tag$"),
            ("SELECT E'\\'x'", "SELECT E'y'"),
            (
                "SELECT * FROM t WHERE ts > '2024-01-01' AND v < 1.5",
                "SELECT * FROM t WHERE ts > '2025-06-30' AND v < 7.2",
            ),
            ("SELECT 1e3", "SELECT 2e3"),
            ("SELECT 1.5", "SELECT 7.5"),
            (
                "SELECT * FROM t WHERE id = -5",
                "SELECT * FROM t WHERE id = -9",
            ),
            ("SELECT 007", "SELECT 7"),
        ] {
            assert!(same(a, b), "{a} / {b}");
        }
        for (a, b) in [
            ("SELECT * FROM t LIMIT 10", "SELECT * FROM t LIMIT 10000000"),
            (
                "SELECT * FROM generate_series(1, 1000)",
                "SELECT * FROM generate_series(1, 10000000)",
            ),
            ("SELECT 1e3", "SELECT 1e7"),
            ("SELECT 0.5", "SELECT 5"),
            ("SELECT 1.5", "SELECT 1.25"),
            ("SELECT 1e3", "SELECT 1000"),
            (
                "SELECT * FROM t WHERE id = -5",
                "SELECT * FROM t WHERE id = 5",
            ),
            ("SELECT c1 FROM t", "SELECT c2 FROM t"),
            ("SELECT \"a 1\" FROM t", "SELECT \"a 2\" FROM t"),
            ("SELECT 1 FROM t", "SELECT 1 FROM u"),
            ("SELECT 'x'", "SELECT 1"),
        ] {
            assert!(!same(a, b), "{a} / {b}");
        }
    }

    #[test]
    fn magnitudes_are_orders_of_ten() {
        assert_eq!(magnitude(b"7"), magnitude(b"9"));
        assert_eq!(magnitude(b"007"), magnitude(b"9"));
        assert_eq!(magnitude(b"12.75"), magnitude(b"99.01"));
        assert_eq!(magnitude(b"1e7").order, magnitude(b"10000000").order);
        assert_ne!(magnitude(b"1e7"), magnitude(b"10000000"), "a float");
        assert_ne!(magnitude(b"12.75"), magnitude(b"12.5"), "another scale");
        assert_ne!(magnitude(b"-3"), magnitude(b"3"));
        assert_ne!(magnitude(b"1e-3"), magnitude(b"1e3"));
    }
}
