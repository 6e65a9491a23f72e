//! Counting a statement's `$n` placeholders, which hyperd needs declared
//! in `Parse` (it neither infers their number nor accepts extra ones).

use crate::sql_lex::skip_unlexed;

/// The highest `$n` in `sql` outside string literals, quoted identifiers,
/// dollar-quoted strings and comments; 0 when there is none. Right after
/// a name too: hyperd reads `a$1` as `a` and `$1` (PostgreSQL as one
/// name).
pub(crate) fn placeholder_count(sql: &str) -> usize {
    let b = sql.as_bytes();
    let mut max = 0usize;
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skip_unlexed(b, i) {
            i = end;
        } else if b[i] == b'$' {
            // Not a dollar quote (`skip_unlexed`): a digit follows.
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            let n = sql[i + 1..i + 1 + digits]
                .parse::<usize>()
                .unwrap_or(usize::MAX);
            max = max.max(n);
            i += 1 + digits;
        } else {
            i += 1;
        }
    }
    max
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
        assert_eq!(count("SELECT /* $9 /* $8 */ $1"), 1);
        assert_eq!(count("SELECT $1 -- and $7\r, $2"), 2);
        assert_eq!(count("SELECT $$ $5 $$, $tag$ $6 $tag$, $1"), 1);
        assert_eq!(count("SELECT a$3 FROM t WHERE x = $2"), 3);
        assert_eq!(count("SELECT 'unterminated $4"), 0);
        assert_eq!(count("SELECT $ + $x"), 0);
    }
}
