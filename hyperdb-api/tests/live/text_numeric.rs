//! The NUMERIC(p ≤ 18) and text fast paths against the real server: a
//! value already at the column's scale (stored as it lies), one to rescale,
//! the largest that fits and one that does not, ASCII and non-ASCII text,
//! through both inserter formats and read back by every row reader.

use hyperdb_api::types::{Numeric, SqlType};
use hyperdb_api::{Error, InsertFormat, Inserter, TableDefinition};

use crate::common::{db_with_table, temp_dir};
use crate::insert::FORMATS;

fn table() -> TableDefinition {
    TableDefinition::new("prices")
        .with_not_null_column("id", SqlType::Int)
        .with_column("n", SqlType::numeric(12, 2).unwrap())
        .with_column("c", SqlType::char(25).unwrap())
        .with_column("v", SqlType::varchar(44).unwrap())
}

/// (value, its text at scale 2, CHAR text, VARCHAR text).
fn rows() -> Vec<(Numeric, &'static str, &'static str, &'static str)> {
    let n = |u: i128, s: u8| Numeric::new(u, s).unwrap();
    vec![
        (n(12_345, 2), "123.45", "DELIVER IN PERSON", "slyly final"),
        (n(15, 1), "1.50", "NONE", "Zoë ☃ déjà"),
        (n(999_999_999_999, 2), "9999999999.99", "", ""),
        (n(-999_999_999_999, 2), "-9999999999.99", "x", "a\u{7f}b"),
        (
            n(0, 0),
            "0.00",
            "TAKE BACK RETURN",
            "0123456789012345678901234567890123456789abcd",
        ),
    ]
}

#[test]
fn numeric_and_text_round_trip_through_both_formats() {
    for format in FORMATS {
        round_trip(format);
    }
}

fn round_trip(format: InsertFormat) {
    let dir = temp_dir();
    let table = table();
    let mut c = db_with_table(&dir, "prices.hyper", &table);
    let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
    for (id, (n, _, ch, v)) in rows().into_iter().enumerate() {
        ins.add_row(&[&(id as i32), &Some(n), &Some(ch), &Some(v)])
            .unwrap();
    }
    // 13 digits: refused by the checked path, the row taken back.
    let too_big = Numeric::new(1_000_000_000_000, 2).unwrap();
    let e = ins
        .add_row(&[&99i32, &Some(too_big), &Some("x"), &Some("y")])
        .unwrap_err();
    assert!(matches!(e, Error::InvalidRow { .. }), "{format:?}: {e:?}");
    assert!(e.to_string().contains("does not fit"), "{format:?}: {e}");
    assert_eq!(ins.execute().unwrap(), rows().len() as u64, "{format:?}");

    let sql = "SELECT id, n, c, v FROM prices ORDER BY id";
    let want = rows();
    // Lent DataRows, values borrowed.
    let mut got = c.execute_query_params(sql, &[]).unwrap();
    let mut k = 0;
    while let Some(row) = got.next_row() {
        let row = row.unwrap();
        let (_, text, ch, v) = want[k];
        assert_eq!(row.try_get::<Numeric>(1).unwrap().to_string(), text);
        // CHAR(n) comes back blank-padded to n.
        assert_eq!(row.try_get::<&str>(2).unwrap(), format!("{ch:<25}"));
        assert_eq!(row.try_get::<&str>(3).unwrap(), v);
        k += 1;
    }
    assert_eq!(k, want.len());
    drop(got);
    // Typed rows (owned), from DataRows and through query_as.
    type Line = (i32, Option<Numeric>, Option<String>, Option<String>);
    let typed: Vec<Line> = c
        .execute_query_params(sql, &[])
        .unwrap()
        .typed::<Line>()
        .map(|r| r.unwrap())
        .collect();
    let routed: Vec<Line> = c
        .query_as::<Line>(sql)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    for got in [typed, routed] {
        assert_eq!(got.len(), want.len());
        for ((_, n, ch, v), (num, text, wch, wv)) in got.iter().zip(&want) {
            assert_eq!(n.unwrap(), *num, "{format:?}");
            assert_eq!(n.unwrap().to_string(), *text);
            assert_eq!(ch.as_deref().unwrap(), format!("{wch:<25}"));
            assert_eq!(v.as_deref().unwrap(), *wv);
        }
    }
    // The server's own sum agrees (values stored, not only read, right).
    let sum: Numeric = c.query_scalar("SELECT sum(n) FROM prices").unwrap();
    assert_eq!(sum.to_string(), "124.95", "{format:?}");
}
