//! `lineitem.*`: the wide, text-heavy table (16 columns, 5 of them text)
//! through every insert and read path the suite runs on `measurements`,
//! each read against lineitem's own ceilings.
//!
//! The insert paths are the suite's own (`insert.rs`, `arrow.rs`), run on
//! the [`Lineitem`] schema; the reads decode every value of every row (text
//! as `&str` where the API lends it, as `String` where it hands out owned
//! rows) and check it against the row formula, so a fast wrong answer
//! fails the run. Timed regions are as in `query.rs` and `arrow.rs`.

use std::time::Instant;

use hyperdb_api::types::{Date, Numeric, ToHyperBinary};
use hyperdb_api::{AsyncConnection, Connection, InsertFormat, TableDefinition};

use crate::ceiling::{self, Drain};
use crate::data::{verify_eq, Result, Schema, Span};
use crate::lineitem_data::{self as li, Check, Line};
use crate::report::{Kind, Li};
use crate::suite::Suite;
use crate::{insert, query, Env};

/// The `lineitem` schema for the suite's insert workloads.
#[derive(Clone, Copy, Debug)]
pub struct Lineitem;

impl Schema for Lineitem {
    const TABLE: &'static str = li::TABLE;

    fn worker_table(i: usize) -> String {
        li::worker_table(i)
    }

    fn recreate(conn: &mut Connection, name: &str) -> Result<TableDefinition> {
        li::recreate(conn, name)
    }

    fn generate_sql(name: &str, span: Span) -> Result<String> {
        li::generate_sql(name, span)
    }

    fn verify_table(conn: &mut Connection, name: &str, span: Span) -> Result<()> {
        li::verify_table(conn, name, span)
    }

    #[inline(always)]
    fn with_row<R>(i: u64, f: impl FnOnce(&[&dyn ToHyperBinary]) -> R) -> R {
        li::with_values(i as i64, f)
    }
}

/// A lineitem row (`#[derive(FromRow)]`, by name), its text as `S`:
/// [`LineRow`] owns it, the way an application reads rows it keeps, and
/// [`LineRef`] borrows it from the row (the lending `next_as`).
#[derive(hyperdb_api::FromRow, Debug)]
struct LineOf<S> {
    l_orderkey: i64,
    l_partkey: Option<i32>,
    l_suppkey: Option<i32>,
    l_linenumber: Option<i32>,
    l_quantity: Option<Numeric>,
    l_extendedprice: Option<Numeric>,
    l_discount: Option<Numeric>,
    l_tax: Option<Numeric>,
    l_returnflag: Option<S>,
    l_linestatus: Option<S>,
    l_shipdate: Option<Date>,
    l_commitdate: Option<Date>,
    l_receiptdate: Option<Date>,
    l_shipinstruct: Option<S>,
    l_shipmode: Option<S>,
    l_comment: Option<S>,
}

type LineRow = LineOf<String>;
type LineRef<'r> = LineOf<&'r str>;

impl<S: AsRef<str>> LineOf<S> {
    fn add_to(&self, check: &mut Check) {
        let cents = |n: Option<Numeric>| n.map_or(-1, li::cents_of);
        let date = |d: Option<Date>| d.unwrap_or(Date::from_julian_day(0));
        fn text<S: AsRef<str>>(s: &Option<S>) -> &str {
            s.as_ref().map_or("\0", AsRef::as_ref)
        }
        check.add(&Line {
            orderkey: self.l_orderkey,
            partkey: self.l_partkey.unwrap_or(-1),
            suppkey: self.l_suppkey.unwrap_or(-1),
            linenumber: self.l_linenumber.unwrap_or(-1),
            quantity: cents(self.l_quantity),
            extendedprice: cents(self.l_extendedprice),
            discount: cents(self.l_discount),
            tax: cents(self.l_tax),
            returnflag: text(&self.l_returnflag),
            linestatus: text(&self.l_linestatus),
            shipdate: date(self.l_shipdate),
            commitdate: date(self.l_commitdate),
            receiptdate: date(self.l_receiptdate),
            shipinstruct: text(&self.l_shipinstruct),
            shipmode: text(&self.l_shipmode),
            comment: text(&self.l_comment),
        });
    }
}

/// Every lineitem workload: the inserts with their ceiling, then the full
/// scan's two drains and every read path over it.
pub fn run(suite: &mut Suite, env: &mut Env<'_>) -> Result<()> {
    let rows = env.rows;
    let w = env.workers;
    let xn = format!("async x{w}");
    let ins = |f: fn(&mut Env<'_>) -> Result<f64>| move |env: &mut Env<'_>| Ok((f(env)?, rows));
    let kind = Kind::Lineitem(Li::Insert);

    #[cfg(feature = "arrow")]
    let xn_arrow = format!("AsyncArrowInserter | {xn}");
    #[cfg(feature = "arrow")]
    let prepared = if [
        "ArrowInserter | sync",
        "AsyncArrowInserter | async",
        xn_arrow.as_str(),
    ]
    .iter()
    .any(|v| suite.keeps(&format!("lineitem.insert.bulk | {v}")))
    {
        suite.log("building lineitem record batches (untimed)");
        Some(crate::arrow::Prepared::sliced(env.span(), w, batches)?)
    } else {
        None
    };
    let mut group = Vec::new();
    let names = [
        "lineitem.insert.ceiling",
        "INSERT ... SELECT generate_series",
        "server",
    ];
    suite.add(
        &mut group,
        Kind::Lineitem(Li::InsertCeiling),
        names,
        |env| {
            let secs = ceiling::insert_of::<Lineitem>(env.conn, li::TABLE, env.span())?;
            Ok((secs, rows))
        },
    );
    #[cfg(feature = "arrow")]
    {
        let mut file = None;
        let names = [
            "lineitem.insert.arrow_copy_ceiling",
            "COPY FROM a server-side Arrow file",
            "server",
        ];
        suite.add(
            &mut group,
            Kind::Lineitem(Li::ArrowCopyCeiling),
            names,
            move |env| {
                let f = ceiling::ArrowFile::once(&mut file, env.db, env.span(), batches)?;
                Ok((
                    f.copy_into::<Lineitem>(env.conn, li::TABLE, env.span())?,
                    rows,
                ))
            },
        );
    }
    #[cfg(feature = "arrow")]
    {
        let names = ["lineitem.insert.bulk", "Inserter", "sync, Arrow (default)"];
        suite.add(&mut group, kind, names, |env| {
            let format = InsertFormat::ArrowStream;
            Ok((insert::inserter_of::<Lineitem>(env, format)?, rows))
        });
    }
    let names = ["lineitem.insert.bulk", "Inserter", "sync, HyperBinary"];
    suite.add(&mut group, kind, names, |env| {
        let format = InsertFormat::HyperBinary;
        Ok((insert::inserter_of::<Lineitem>(env, format)?, rows))
    });
    let encoders = format!("sync, {w} encoder threads");
    let names = [
        "lineitem.insert.bulk",
        "ChunkSender::send_parallel",
        &encoders,
    ];
    suite.add(
        &mut group,
        kind,
        names,
        ins(insert::chunk_sender_of::<Lineitem>),
    );
    #[cfg(feature = "arrow")]
    if let Some(p) = &prepared {
        use crate::arrow;
        let names = ["lineitem.insert.bulk", "ArrowInserter", "sync"];
        suite.add(&mut group, kind, names, move |env| {
            Ok((arrow::sync_insert_of::<Lineitem>(env, p)?, rows))
        });
        let names = ["lineitem.insert.bulk", "AsyncArrowInserter", "async"];
        suite.add(&mut group, kind, names, move |env| {
            Ok((arrow::async_insert_of::<Lineitem>(env, p)?, rows))
        });
        let names = ["lineitem.insert.bulk", "AsyncArrowInserter", &xn];
        suite.add(&mut group, kind, names, move |env| {
            Ok((arrow::parallel_async_insert_of::<Lineitem>(env, p)?, rows))
        });
    }
    let names = [
        "lineitem.insert.bulk",
        "AsyncChunkSender + spawn_blocking",
        &xn,
    ];
    suite.add(
        &mut group,
        kind,
        names,
        ins(insert::async_chunk_senders_of::<Lineitem>),
    );
    suite.run(env, group)?;

    read_group(suite, env)
}

/// A timed read of the full scan: seconds.
type Read = fn(&mut Env<'_>) -> Result<f64>;

/// The full scan's drains and read paths, over tables made server-side.
fn read_group(suite: &mut Suite, env: &mut Env<'_>) -> Result<()> {
    let w = env.workers;
    let xn = format!("async x{w}");
    let rows = env.rows;
    let db = env.db.to_string_lossy().into_owned();
    let workload = "lineitem.query.full_scan";
    let mut group = Vec::new();
    for (kind, name, flavor, how) in [
        (
            Li::RowCeiling,
            "lineitem.query.row_ceiling",
            "DataRow drain",
            Drain::Rows,
        ),
        (
            Li::ArrowCeiling,
            "lineitem.query.ceiling",
            "Arrow IPC drain",
            Drain::Arrow,
        ),
    ] {
        let db = &db;
        suite.add(
            &mut group,
            Kind::Lineitem(kind),
            [name, "full_scan", flavor],
            move |env| {
                let sql = li::scan_sql(li::TABLE)?;
                let secs = ceiling::drain_sql(env.server.config(), db, &sql, how, rows)?;
                Ok((secs, rows))
            },
        );
    }
    let kind = Kind::Lineitem(Li::RowQuery);
    let read = |f: Read| move |env: &mut Env<'_>| Ok((f(env)?, rows));
    let paths: [(&str, &str, Read); 8] = [
        ("execute_query", "sync", sync_rows),
        ("execute_query_params", "sync, DataRows", sync_data_rows),
        (
            "execute_query_params",
            "sync, DataRows, owned rows",
            sync_data_rows_owned,
        ),
        (
            "execute_query_params + typed",
            "sync, DataRows, derive struct",
            sync_data_rows_typed,
        ),
        ("query_as", "sync, derive struct", sync_query_as),
        (
            "execute_query + next_as",
            "sync, lent derive struct",
            sync_next_as,
        ),
        (
            "execute_query_params + next_as",
            "sync, DataRows, lent derive struct",
            sync_data_rows_next_as,
        ),
        ("execute_query", "async", single_async),
    ];
    for (variant, flavor, f) in paths {
        suite.add(&mut group, kind, [workload, variant, flavor], read(f));
    }
    suite.add(
        &mut group,
        kind,
        [workload, "execute_query", &xn],
        read(parallel_async),
    );
    #[cfg(feature = "arrow")]
    {
        let kind = Kind::Lineitem(Li::ArrowQuery);
        let names = [workload, "query_arrow", "sync"];
        suite.add(&mut group, kind, names, read(arrow_sync));
        let names = [workload, "query_arrow", "async"];
        suite.add(&mut group, kind, names, read(arrow_async));
        let names = [workload, "query_arrow", &xn];
        suite.add(&mut group, kind, names, read(arrow_parallel));
    }
    if !group.iter().any(|i| !i.kind.is_ceiling()) {
        return Ok(());
    }
    prepare_scan_tables(suite, env)?;
    suite.run(env, group)
}

/// Makes `lineitem` and the per-worker `lineitem_{i}` server-side, checks
/// them, and reads each once (untimed), so every read sees the same data.
fn prepare_scan_tables(suite: &Suite, env: &mut Env<'_>) -> Result<()> {
    suite.log("preparing the lineitem scan tables server-side (untimed)");
    let mut tables = vec![(li::TABLE.to_owned(), env.span())];
    for (i, part) in env.span().split(env.workers).into_iter().enumerate() {
        tables.push((li::worker_table(i), part));
    }
    let db = env.db.to_string_lossy().into_owned();
    for (name, span) in tables {
        li::recreate(env.conn, &name)?;
        env.conn.execute_command(&li::generate_sql(&name, span)?)?;
        li::verify_table(env.conn, &name, span)?;
        let sql = li::scan_sql(&name)?;
        ceiling::drain_sql(env.server.config(), &db, &sql, Drain::Arrow, span.len())?;
    }
    Ok(())
}

/// Times `read` over `lineitem` on the main connection and checks its
/// answer against the whole span.
fn timed(
    env: &mut Env<'_>,
    read: impl FnOnce(&mut Connection, &str) -> Result<Check>,
) -> Result<f64> {
    let sql = li::scan_sql(li::TABLE)?;
    let start = Instant::now();
    let got = read(env.conn, &sql)?;
    let secs = start.elapsed().as_secs_f64();
    verify_eq("lineitem full scan", &got, &Check::expected(env.span()))?;
    Ok(secs)
}

/// `Connection::execute_query` (routed: served from Arrow), `Row::try_get`.
fn sync_rows(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        for row in conn.execute_query(sql)? {
            li::add_row(&mut check, &row?)?;
        }
        Ok(check)
    })
}

/// `execute_query_params` served from `DataRow`s, rows lent (`next_row`).
fn sync_data_rows(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        let mut rows = conn.execute_query_params(sql, &[])?;
        while let Some(row) = rows.next_row() {
            li::add_row(&mut check, row?)?;
        }
        Ok(check)
    })
}

/// [`sync_data_rows`] with owned rows (`Iterator`).
fn sync_data_rows_owned(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        for row in conn.execute_query_params(sql, &[])? {
            li::add_row(&mut check, &row?)?;
        }
        Ok(check)
    })
}

/// `Rows::typed` into the derive struct: owned `String`s per text value.
fn sync_data_rows_typed(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        for row in conn.execute_query_params(sql, &[])?.typed::<LineRow>() {
            row?.add_to(&mut check);
        }
        Ok(check)
    })
}

/// `Connection::query_as` into the derive struct.
fn sync_query_as(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        for row in conn.query_as::<LineRow>(sql)? {
            row?.add_to(&mut check);
        }
        Ok(check)
    })
}

/// `Rows::next_as` into the lending derive struct (routed: served from
/// Arrow).
fn sync_next_as(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        let mut rows = conn.execute_query(sql)?;
        while let Some(row) = rows.next_as::<LineRef>() {
            row?.add_to(&mut check);
        }
        Ok(check)
    })
}

/// [`sync_next_as`] served from `DataRow`s.
fn sync_data_rows_next_as(env: &mut Env<'_>) -> Result<f64> {
    timed(env, |conn, sql| {
        let mut check = Check::default();
        let mut rows = conn.execute_query_params(sql, &[])?;
        while let Some(row) = rows.next_as::<LineRef>() {
            row?.add_to(&mut check);
        }
        Ok(check)
    })
}

/// Runs `read` on `n` connections at once (over `lineitem` when `n` is 1,
/// else over `lineitem_{i}`), merges and checks the answers.
fn async_reads<F, Fut>(env: &mut Env<'_>, n: usize, read: F) -> Result<f64>
where
    F: Fn(AsyncConnection, String) -> Fut,
    Fut: std::future::Future<Output = (Result<Check>, AsyncConnection)> + Send + 'static,
{
    let (secs, parts) = query::spread(env, n, |conn, i| read(conn, li::scan_table(i, n)))?;
    let mut check = Check::default();
    for part in &parts {
        check.merge(part);
    }
    verify_eq("lineitem full scan", &check, &Check::expected(env.span()))?;
    Ok(secs)
}

async fn read_rows(mut conn: AsyncConnection, table: String) -> (Result<Check>, AsyncConnection) {
    let check = async {
        let mut check = Check::default();
        let mut rows = conn.execute_query(&li::scan_sql(&table)?).await?;
        while let Some(row) = rows.next_row().await {
            li::add_row(&mut check, row?)?;
        }
        Ok(check)
    }
    .await;
    (check, conn)
}

fn single_async(env: &mut Env<'_>) -> Result<f64> {
    async_reads(env, 1, read_rows)
}

fn parallel_async(env: &mut Env<'_>) -> Result<f64> {
    async_reads(env, env.workers, read_rows)
}

#[cfg(test)]
mod tests {
    use hyperdb_api::types::Date;

    use crate::lineitem_data::{row, Check, SHIP_BASE_JD};

    #[test]
    fn rows_follow_the_tpch_ranges() {
        assert_eq!(
            Date::from_julian_day(SHIP_BASE_JD),
            Date::from_ymd(1992, 1, 2).expect("date")
        );
        for i in 0..10_000 {
            let l = row(i);
            assert!((10..=44).contains(&l.comment.len()), "row {i}");
            assert!(l.shipinstruct.len() <= 25 && l.shipmode.len() <= 10);
            assert!(l.receiptdate > l.shipdate);
            assert!(l.extendedprice < 10_000_000_000, "NUMERIC(12,2) fits");
        }
        // A sampled row that differs is bad; an unsampled one changes the
        // sums, so either way the check no longer equals the expected one.
        let mut check = Check::default();
        check.add(&row(7));
        let mut bad = row(16);
        bad.comment = "changed";
        check.add(&bad);
        assert_eq!((check.rows, check.sampled, check.bad), (2, 1, 1));
        let span = crate::data::Span::new(0, 40);
        let mut unsampled = Check::default();
        for i in 0..40 {
            let mut l = row(i);
            if i == 17 {
                l.shipmode = "AIR";
                l.returnflag = "N";
            }
            unsampled.add(&l);
        }
        assert_eq!(unsampled.bad, 0);
        assert_ne!(unsampled, Check::expected(span));
    }
}

#[cfg(feature = "arrow")]
pub use arrow_paths::batches;
#[cfg(feature = "arrow")]
use arrow_paths::{arrow_async, arrow_parallel, arrow_sync};

#[cfg(feature = "arrow")]
#[path = "lineitem_arrow.rs"]
mod arrow_paths;
