//! The `lineitem` schema (TPC-H's 16 columns: integers, NUMERIC(12,2),
//! CHAR, DATE, VARCHAR), its deterministic rows, and the checks that make a
//! fast wrong answer fail the run.
//!
//! Row `i` is computed from `i` alone, in Rust ([`row`]) and in SQL
//! ([`EXPRS`]), so a client-written table, a server-written one and a
//! result can all be checked against the same formula. A row borrows its
//! text from static strings: generating it allocates nothing.

use std::sync::{Mutex, PoisonError};

use hyperdb_api::types::{Date, Numeric, SqlType, ToHyperBinary};
use hyperdb_api::{Connection, Row, TableDefinition};

use crate::data::{ident, recreate_as, verify_eq, Result, Span};

/// The base table; per-worker tables are `lineitem_{i}`.
pub const TABLE: &str = "lineitem";

/// Logical bytes per row: 8 + 3 x 4 (integers), 4 x 8 (NUMERIC(12,2)),
/// 2 x 1 (CHAR(1)), 3 x 4 (DATE), 25 + 10 (CHAR), and the comment's mean of
/// 27 characters.
pub const BYTES_PER_ROW: u64 = 8 + 12 + 32 + 2 + 12 + 25 + 10 + 27;

/// Julian day of 1992-01-02, the first ship date.
pub const SHIP_BASE_JD: i32 = 2_448_624;
/// Ship dates cover this many days (1992-01-02 .. 1998-12-01).
const SHIP_DAYS: i64 = 2526;

const RETURN_FLAGS: [&str; 3] = ["R", "A", "N"];
const LINE_STATUS: [&str; 2] = ["O", "F"];
const INSTRUCT: [&str; 4] = [
    "DELIVER IN PERSON",
    "COLLECT COD",
    "NONE",
    "TAKE BACK RETURN",
];
const MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
/// Comments are slices of this (ASCII): from `i % 53`, `10 + i % 35` long.
const TEXT: &str = "carefully final deposits detect slyly agai quickly ironic packages \
                    haggle furiously blithely regular";
const COMMENT_STARTS: i64 = 53;
const COMMENT_EXTRA: i64 = 35;

/// One `lineitem` row; its text is borrowed (static for generated rows,
/// from the result for rows read back), so building one copies no text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    pub orderkey: i64,
    pub partkey: i32,
    pub suppkey: i32,
    pub linenumber: i32,
    /// NUMERIC(12,2) values as cents.
    pub quantity: i64,
    pub extendedprice: i64,
    pub discount: i64,
    pub tax: i64,
    pub returnflag: &'a str,
    pub linestatus: &'a str,
    pub shipdate: Date,
    pub commitdate: Date,
    pub receiptdate: Date,
    pub shipinstruct: &'a str,
    pub shipmode: &'a str,
    pub comment: &'a str,
}

/// Row `i` (`l_orderkey = i`).
#[inline]
pub fn row(i: i64) -> Line<'static> {
    let at = |n: i64| (i % n) as usize;
    let ship = SHIP_BASE_JD + (i % SHIP_DAYS) as i32;
    let start = at(COMMENT_STARTS);
    let len = 10 + at(COMMENT_EXTRA);
    Line {
        orderkey: i,
        partkey: ((i * 7 + 13) % 200_000 + 1) as i32,
        suppkey: (i % 10_000 + 1) as i32,
        linenumber: (i % 7 + 1) as i32,
        quantity: (i % 50 + 1) * 100,
        extendedprice: (i % 50 + 1) * (90_000 + i % 10_000),
        discount: i % 11,
        tax: i % 9,
        returnflag: RETURN_FLAGS[at(3)],
        linestatus: LINE_STATUS[at(2)],
        shipdate: Date::from_julian_day(ship),
        commitdate: Date::from_julian_day(ship + (i % 61) as i32 - 30),
        receiptdate: Date::from_julian_day(ship + 1 + (i % 30) as i32),
        shipinstruct: INSTRUCT[at(4)],
        shipmode: MODES[at(7)],
        comment: &TEXT[start..start + len],
    }
}

/// Cents as NUMERIC(12,2). Every generated value fits, so the fallback
/// (zero) never happens; were it to, the checks would fail the run.
#[inline]
pub fn numeric(cents: i64) -> Numeric {
    Numeric::new(i128::from(cents), 2).unwrap_or(Numeric::ZERO)
}

/// The table, `l_orderkey` NOT NULL, the rest nullable as in the issue's
/// schema (so every value carries a null indicator, as real tables do).
pub fn table(name: &str) -> TableDefinition {
    let num = SqlType::Numeric {
        precision: 12,
        scale: 2,
    };
    TableDefinition::new(name)
        .with_not_null_column("l_orderkey", SqlType::BigInt)
        .with_column("l_partkey", SqlType::Int)
        .with_column("l_suppkey", SqlType::Int)
        .with_column("l_linenumber", SqlType::Int)
        .with_column("l_quantity", num)
        .with_column("l_extendedprice", num)
        .with_column("l_discount", num)
        .with_column("l_tax", num)
        .with_column("l_returnflag", SqlType::Char(1))
        .with_column("l_linestatus", SqlType::Char(1))
        .with_column("l_shipdate", SqlType::Date)
        .with_column("l_commitdate", SqlType::Date)
        .with_column("l_receiptdate", SqlType::Date)
        .with_column("l_shipinstruct", SqlType::Char(25))
        .with_column("l_shipmode", SqlType::Char(10))
        .with_column("l_comment", SqlType::Varchar(44))
}

/// The per-worker table `lineitem_{i}`.
pub fn worker_table(i: usize) -> String {
    format!("{TABLE}_{i}")
}

/// The table worker `i` of `n` reads: `lineitem` alone, else its own.
pub fn scan_table(i: usize, n: usize) -> String {
    if n == 1 {
        TABLE.to_owned()
    } else {
        worker_table(i)
    }
}

/// Hands row `i`'s values, as an inserter's `add_row` takes them, to `f`.
#[inline(always)]
pub fn with_values<R>(i: i64, f: impl FnOnce(&[&dyn ToHyperBinary]) -> R) -> R {
    let l = row(i);
    let [q, p, d, t] = [l.quantity, l.extendedprice, l.discount, l.tax].map(numeric);
    f(&[
        &l.orderkey,
        &Some(l.partkey),
        &Some(l.suppkey),
        &Some(l.linenumber),
        &Some(q),
        &Some(p),
        &Some(d),
        &Some(t),
        &Some(l.returnflag),
        &Some(l.linestatus),
        &Some(l.shipdate),
        &Some(l.commitdate),
        &Some(l.receiptdate),
        &Some(l.shipinstruct),
        &Some(l.shipmode),
        &Some(l.comment),
    ])
}

/// Row `i`'s columns as SQL over `i`, in column order: [`row`] in SQL.
pub const EXPRS: [&str; 16] = [
    "i::BIGINT",
    "((i::BIGINT * 7 + 13) % 200000 + 1)::INT",
    "(i % 10000 + 1)::INT",
    "(i % 7 + 1)::INT",
    "CAST((i % 50 + 1) * 100 AS NUMERIC(18,0)) / 100",
    "CAST((i % 50 + 1) * (90000 + i % 10000) AS NUMERIC(18,0)) / 100",
    "CAST(i % 11 AS NUMERIC(18,0)) / 100",
    "CAST(i % 9 AS NUMERIC(18,0)) / 100",
    "substr('RAN', (i % 3 + 1)::INT, 1)",
    "substr('OF', (i % 2 + 1)::INT, 1)",
    "DATE '1992-01-02' + (i % 2526)::INT",
    "DATE '1992-01-02' + (i % 2526 + i % 61 - 30)::INT",
    "DATE '1992-01-02' + (i % 2526 + 1 + i % 30)::INT",
    "CASE i % 4 WHEN 0 THEN 'DELIVER IN PERSON' WHEN 1 THEN 'COLLECT COD' \
     WHEN 2 THEN 'NONE' ELSE 'TAKE BACK RETURN' END",
    "CASE i % 7 WHEN 0 THEN 'REG AIR' WHEN 1 THEN 'AIR' WHEN 2 THEN 'RAIL' \
     WHEN 3 THEN 'SHIP' WHEN 4 THEN 'TRUCK' WHEN 5 THEN 'MAIL' ELSE 'FOB' END",
    "substr('carefully final deposits detect slyly agai quickly ironic packages \
     haggle furiously blithely regular', (i % 53 + 1)::INT, (10 + i % 35)::INT)",
];

/// The server-side form of the rows of `span`, for `INSERT ... SELECT`.
pub fn generate_sql(table: &str, span: Span) -> Result<String> {
    Ok(format!(
        "INSERT INTO {} SELECT {} FROM generate_series({}, {}) i",
        ident(table)?,
        EXPRS.join(", "),
        span.start,
        span.end as i64 - 1
    ))
}

/// The full scan every read path runs.
pub fn scan_sql(table: &str) -> Result<String> {
    let columns: Vec<String> = table_columns();
    Ok(format!(
        "SELECT {} FROM {}",
        columns.join(", "),
        ident(table)?
    ))
}

fn table_columns() -> Vec<String> {
    table(TABLE)
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect()
}

/// Every `SAMPLE`-th row (by `l_orderkey`) of a read is compared value by
/// value with [`row`]; every row goes into the sums.
pub const SAMPLE: i64 = 16;

/// What a read holds, reduced to what can be compared: sums over every
/// value of every row (numbers, dates, the comment's length, the first
/// byte of each text value and the comment's last), and the sampled rows
/// that differ from [`row`]. Cheap per row, so that checking does not
/// outweigh the read it checks (a full comparison per row took about as
/// long as the Arrow drain of the row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Check {
    pub rows: u64,
    pub sum_orderkey: i64,
    pub sum_ints: i64,
    /// Cents, of the four NUMERIC columns.
    pub sum_quantity: i64,
    pub sum_price: i64,
    pub sum_discount_tax: i64,
    /// Julian days of the three dates.
    pub sum_days: i64,
    pub sum_comment_len: i64,
    pub sum_text_bytes: i64,
    pub sampled: u64,
    pub bad: u64,
}

impl Check {
    /// Folds a row read back.
    #[inline]
    pub fn add(&mut self, got: &Line<'_>) {
        let first = |s: &str| s.as_bytes().first().map_or(0, |&b| i64::from(b));
        let last = |s: &str| s.as_bytes().last().map_or(0, |&b| i64::from(b));
        self.rows += 1;
        self.sum_orderkey += got.orderkey;
        self.sum_ints +=
            i64::from(got.partkey) + i64::from(got.suppkey) + i64::from(got.linenumber);
        self.sum_quantity += got.quantity;
        self.sum_price += got.extendedprice;
        self.sum_discount_tax += got.discount + got.tax;
        self.sum_days += i64::from(got.shipdate.julian_day())
            + i64::from(got.commitdate.julian_day())
            + i64::from(got.receiptdate.julian_day());
        self.sum_comment_len += got.comment.len() as i64;
        self.sum_text_bytes += first(got.returnflag)
            + first(got.linestatus)
            + first(got.shipinstruct)
            + first(got.shipmode)
            + first(got.comment)
            + last(got.comment);
        if got.orderkey % SAMPLE == 0 {
            self.sample(got);
        }
    }

    /// The value-by-value part of [`Check::add`], for a row the caller
    /// found sampled (a columnar reader sums its columns itself).
    #[inline]
    pub fn sample(&mut self, got: &Line<'_>) {
        self.sampled += 1;
        self.bad += u64::from(!same(got, &row(got.orderkey)));
    }

    pub fn merge(&mut self, other: &Check) {
        self.rows += other.rows;
        self.sum_orderkey += other.sum_orderkey;
        self.sum_ints += other.sum_ints;
        self.sum_quantity += other.sum_quantity;
        self.sum_price += other.sum_price;
        self.sum_discount_tax += other.sum_discount_tax;
        self.sum_days += other.sum_days;
        self.sum_comment_len += other.sum_comment_len;
        self.sum_text_bytes += other.sum_text_bytes;
        self.sampled += other.sampled;
        self.bad += other.bad;
    }

    /// What a correct read of `span` gives (computed once per span: every
    /// execution of every read checks against it).
    pub fn expected(span: Span) -> Check {
        static DONE: Mutex<Vec<(Span, Check)>> = Mutex::new(Vec::new());
        let mut done = DONE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, check)) = done.iter().find(|(s, _)| *s == span) {
            return *check;
        }
        let check = Check::compute(span);
        done.push((span, check));
        check
    }

    fn compute(span: Span) -> Check {
        let mut check = Check::default();
        for i in span.start..span.end {
            check.add(&row(i as i64));
        }
        check
    }
}

/// What the server holds, checked by SQL: count, sums of a few columns,
/// and the rows where any column differs from [`EXPRS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    pub rows: u64,
    pub sum_orderkey: i64,
    pub sum_quantity: i64,
    pub sum_price: i64,
    pub sum_comment_len: i64,
    pub bad: u64,
}

impl Stored {
    /// The same sums of what a correct read of `span` gives.
    pub fn expected(span: Span) -> Stored {
        let c = Check::expected(span);
        Stored {
            rows: c.rows,
            sum_orderkey: c.sum_orderkey,
            sum_quantity: c.sum_quantity,
            sum_price: c.sum_price,
            sum_comment_len: c.sum_comment_len,
            bad: 0,
        }
    }
}

/// `got` equals `want`, CHAR values compared without their blank pad.
#[inline]
fn same(got: &Line<'_>, want: &Line<'_>) -> bool {
    let text = |g: &str, w: &str| g.trim_end_matches(' ') == w;
    got.partkey == want.partkey
        && got.suppkey == want.suppkey
        && got.linenumber == want.linenumber
        && got.quantity == want.quantity
        && got.extendedprice == want.extendedprice
        && got.discount == want.discount
        && got.tax == want.tax
        && text(got.returnflag, want.returnflag)
        && text(got.linestatus, want.linestatus)
        && got.shipdate == want.shipdate
        && got.commitdate == want.commitdate
        && got.receiptdate == want.receiptdate
        && text(got.shipinstruct, want.shipinstruct)
        && text(got.shipmode, want.shipmode)
        && got.comment == want.comment
}

/// Reads one row through the row API (`Row::try_get`, text as `&str`).
#[inline]
pub fn add_row(check: &mut Check, row: &Row) -> hyperdb_api::Result<()> {
    let cents = |i: usize| -> hyperdb_api::Result<i64> {
        let n: Option<Numeric> = row.try_get(i)?;
        Ok(n.map_or(-1, cents_of))
    };
    let date = |i: usize| -> hyperdb_api::Result<Date> {
        Ok(row
            .try_get::<Option<Date>>(i)?
            .unwrap_or(Date::from_julian_day(0)))
    };
    let text = |i: usize| -> hyperdb_api::Result<&str> {
        Ok(row.try_get::<Option<&str>>(i)?.unwrap_or("\0"))
    };
    check.add(&Line {
        orderkey: row.try_get(0)?,
        partkey: row.try_get::<Option<i32>>(1)?.unwrap_or(-1),
        suppkey: row.try_get::<Option<i32>>(2)?.unwrap_or(-1),
        linenumber: row.try_get::<Option<i32>>(3)?.unwrap_or(-1),
        quantity: cents(4)?,
        extendedprice: cents(5)?,
        discount: cents(6)?,
        tax: cents(7)?,
        returnflag: text(8)?,
        linestatus: text(9)?,
        shipdate: date(10)?,
        commitdate: date(11)?,
        receiptdate: date(12)?,
        shipinstruct: text(13)?,
        shipmode: text(14)?,
        comment: text(15)?,
    });
    Ok(())
}

/// A NUMERIC(12,2) as cents (-1 when it has another scale: counted bad).
#[inline]
pub fn cents_of(n: Numeric) -> i64 {
    if n.scale() == 2 {
        i64::try_from(n.unscaled()).unwrap_or(-1)
    } else {
        -1
    }
}

/// Checks what the server stored in `table` against `span` (untimed):
/// sums computed by SQL, and every column of every row compared with
/// [`EXPRS`] over `l_orderkey`.
pub fn verify_table(conn: &mut Connection, table: &str, span: Span) -> Result<()> {
    let columns = table_columns();
    let differs: Vec<String> = columns
        .iter()
        .zip(EXPRS)
        .skip(1)
        .map(|(c, e)| format!("{c} IS DISTINCT FROM ({e})"))
        .collect();
    let sql = format!(
        "SELECT count(*), sum(l_orderkey), \
         sum(CAST(l_quantity * 100 AS BIGINT)), sum(CAST(l_extendedprice * 100 AS BIGINT)), \
         sum(length(l_comment)::BIGINT), \
         sum(CASE WHEN {} THEN 1 ELSE 0 END) \
         FROM (SELECT l_orderkey AS i, * FROM {}) t",
        differs.join(" OR "),
        ident(table)?
    );
    let mut rows = conn.execute_query(&sql)?;
    let row = rows
        .next()
        .ok_or("lineitem checksum query returned no row")??;
    let sum =
        |i: usize| -> hyperdb_api::Result<i64> { Ok(row.try_get::<Option<i64>>(i)?.unwrap_or(0)) };
    let got = Stored {
        rows: row.try_get::<i64>(0)? as u64,
        sum_orderkey: sum(1)?,
        sum_quantity: sum(2)?,
        sum_price: sum(3)?,
        sum_comment_len: sum(4)?,
        bad: sum(5)? as u64,
    };
    drop(rows);
    verify_eq(
        &format!("stored rows of {table}"),
        &got,
        &Stored::expected(span),
    )
}

/// `DROP TABLE IF EXISTS` + `CREATE TABLE` for `lineitem`.
pub fn recreate(conn: &mut Connection, name: &str) -> Result<TableDefinition> {
    recreate_as(conn, name, table(name))
}
