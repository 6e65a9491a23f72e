//! Values Arrow cannot carry (issue 18): the default `Inserter` sends rows
//! as Arrow, whose timestamps are i64 microseconds since 1970 and whose
//! interval time is i64 nanoseconds. hyperd's latest timestamps (its
//! greatest is also its `infinity`) and intervals over ~292 years do not
//! fit; HyperBinary stores them all, so a batch holding one goes as
//! HyperBinary, and every such value round-trips through the default
//! inserter exactly. (TIME 24:00:00, which hyperd's Arrow reader refuses
//! too, is refused by every inserter: see `insert::time_24_00_is_refused`.)

use hyperdb_api::types::{Date, Interval, SqlType, Time, Timestamp, TimestampTz};
use hyperdb_api::{AsyncInserter, Connection, Inserter, TableDefinition};

use crate::common::{async_db_with_table, db_with_table, temp_dir};

fn table() -> TableDefinition {
    TableDefinition::new("x")
        .with_not_null_column("id", SqlType::Int)
        .with_column("ts", SqlType::Timestamp)
        .with_column("tstz", SqlType::TimestampTz)
        .with_column("iv", SqlType::Interval)
        .with_column("tm", SqlType::Time)
        .with_column("d", SqlType::Date)
}

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// hyperd's least and greatest TIMESTAMP (its `-infinity` and `infinity`).
const MIN: &str = "4713-01-01 00:00:00 BC";
const MAX: &str = "294276-12-31 23:59:59.999999";
/// The last timestamp Arrow can carry, and the first it cannot.
const LAST_ARROW: &str = "294247-01-10 04:00:54.775807";
const FIRST_PAST_ARROW: &str = "294247-01-10 04:00:54.775808";

type Values = (
    i32,
    Option<Timestamp>,
    Option<TimestampTz>,
    Option<Interval>,
    Option<Time>,
    Option<Date>,
);

fn plain(id: i32) -> Values {
    (
        id,
        Some(ts("2024-02-29 12:34:56.789012")),
        Some(TimestampTz::from_utc(ts("1999-12-31 23:59:59.999999"))),
        Some(Interval::new(1, 2, 3)),
        Some(Time::from_hms_micro(1, 2, 3, 4).unwrap()),
        Some(Date::from_ymd(2024, 2, 29).unwrap()),
    )
}

/// A row with a timestamp (as TIMESTAMP and TIMESTAMPTZ), an interval, a
/// time and a date, any of them NULL.
fn row(id: i32, t: Option<&str>, iv: Option<Interval>, tm: Option<i64>, d: Option<&str>) -> Values {
    (
        id,
        t.map(ts),
        t.map(|t| TimestampTz::from_utc(ts(t))),
        iv,
        tm.map(|micros| Time::from_micros(micros).unwrap()),
        d.map(|d| d.parse().unwrap()),
    )
}

/// Every extreme value, one row each, between plain rows.
fn extremes() -> Vec<Values> {
    // 300 years of time: past Arrow's 2^63 nanoseconds (~292 years).
    let long = Interval::new(0, 0, 300 * 365 * 86_400_000_000);
    vec![
        plain(0),
        // hyperd's least and greatest DATE go with its timestamps'.
        row(1, Some(MIN), None, None, Some("4713-01-01 BC")),
        row(2, Some(MAX), None, None, Some("294276-12-31")),
        row(3, Some(LAST_ARROW), None, None, None),
        row(4, Some(FIRST_PAST_ARROW), None, None, None),
        row(5, None, Some(long), None, None),
        row(6, None, Some(Interval::new(0, 0, -long.micros)), None, None),
        row(7, None, None, Some(86_400_000_000 - 1), None),
        plain(8),
    ]
}

fn add(ins: &mut Inserter<'_>, v: &Values) -> hyperdb_api::Result<()> {
    ins.add_row(&[&v.0, &v.1, &v.2, &v.3, &v.4, &v.5])
}

fn read_back(c: &mut Connection) -> Vec<Values> {
    c.execute_query("SELECT id, ts, tstz, iv, tm, d FROM x ORDER BY id")
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            (
                r.try_get(0).unwrap(),
                r.try_get(1).unwrap(),
                r.try_get(2).unwrap(),
                r.try_get(3).unwrap(),
                r.try_get(4).unwrap(),
                r.try_get(5).unwrap(),
            )
        })
        .collect()
}

/// Inserts `want` through the default inserter and reads it back.
/// Each row by an insert of its own (so a row Arrow carries goes as Arrow,
/// not in the held batch of a neighbour), then all rows by one insert.
fn round_trip(file: &str, want: &[Values]) -> (tempfile::TempDir, Connection) {
    let dir = temp_dir();
    let mut c = db_with_table(&dir, file, &table());
    for v in want {
        let mut ins = Inserter::new(&mut c, &table()).unwrap();
        add(&mut ins, v).unwrap();
        assert_eq!(ins.execute().unwrap(), 1, "{v:?}");
    }
    assert_eq!(read_back(&mut c), want);
    c.execute_command("DELETE FROM x").unwrap();
    let mut ins = Inserter::new(&mut c, &table()).unwrap();
    for v in want {
        add(&mut ins, v).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), want.len() as u64);
    assert_eq!(read_back(&mut c), want);
    (dir, c)
}

#[test]
fn timestamp_extremes_round_trip_through_the_default_inserter() {
    let want: Vec<Values> = extremes().into_iter().filter(|v| v.1.is_some()).collect();
    let (_dir, mut c) = round_trip("range.hyper", &want);
    // hyperd's own rendering of both ends.
    let text = |c: &mut Connection, sql: &str| c.query_scalar::<String>(sql).unwrap();
    assert_eq!(text(&mut c, "SELECT ts::text FROM x WHERE id = 1"), MIN);
    assert_eq!(text(&mut c, "SELECT ts::text FROM x WHERE id = 2"), MAX);
    assert_eq!(
        text(&mut c, "SELECT tstz::text FROM x WHERE id = 2"),
        format!("{MAX}+00")
    );
    assert_eq!(
        text(
            &mut c,
            "SELECT (ts = 'infinity' AND tstz = 'infinity')::text FROM x WHERE id = 2"
        ),
        "true"
    );
}

/// INTERVALs past ~292 years of time likewise, and the last TIME of a day.
#[test]
fn long_intervals_and_the_last_time_round_trip_through_the_default_inserter() {
    let want: Vec<Values> = extremes()
        .into_iter()
        .filter(|v| v.3.is_some() || v.4.is_some())
        .collect();
    round_trip("range1.hyper", &want);
}

/// Batches on either side of one sent as HyperBinary stay Arrow, and every
/// row arrives once.
#[test]
fn a_batch_with_such_a_value_goes_as_hyperbinary_and_the_rest_as_arrow() {
    let dir = temp_dir();
    let mut c = db_with_table(&dir, "range2.hyper", &table());
    let special = extremes();
    let mut ins = Inserter::new(&mut c, &table()).unwrap();
    let n = 200_000;
    for id in 0..n {
        let v = match id {
            70_000 => (id, special[2].1, special[2].2, None, None, None),
            140_000 => (id, None, None, special[5].3, None, None),
            _ => plain(id),
        };
        add(&mut ins, &v).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), n as u64);
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(DISTINCT id) FROM x")
            .unwrap(),
        i64::from(n)
    );
    let plain_rows = "SELECT count(*) FROM x WHERE ts = '2024-02-29 12:34:56.789012' \
                      AND iv = interval '1 month 2 days 3 microseconds'";
    assert_eq!(c.query_scalar::<i64>(plain_rows).unwrap(), i64::from(n) - 2);
    assert_eq!(
        c.query_scalar::<String>("SELECT ts::text FROM x WHERE id = 70000")
            .unwrap(),
        MAX
    );
    assert_eq!(
        c.query_scalar::<Interval>("SELECT iv FROM x WHERE id = 140000")
            .unwrap(),
        special[5].3.unwrap()
    );
}

/// An insert that fails, or is dropped, after a batch went as HyperBinary
/// stores none of its rows: the batches before it were not committed.
#[test]
fn an_insert_abandoned_after_such_a_batch_stores_nothing() {
    let dir = temp_dir();
    let mut c = db_with_table(&dir, "range3.hyper", &table());
    let max = extremes()[2];
    {
        let mut ins = Inserter::new(&mut c, &table()).unwrap();
        for id in 0..100_000 {
            let v = if id == 10 {
                (id, max.1, max.2, None, None, None)
            } else {
                plain(id)
            };
            add(&mut ins, &v).unwrap();
        }
        // Dropped.
    }
    let count = |c: &mut Connection| c.query_scalar::<i64>("SELECT count(*) FROM x").unwrap();
    assert_eq!(count(&mut c), 0);
    let mut ins = Inserter::new(&mut c, &table()).unwrap();
    for id in 0..100_000 {
        let v = if id == 10 {
            (id, max.1, max.2, None, None, None)
        } else {
            plain(id)
        };
        add(&mut ins, &v).unwrap();
    }
    ins.add(&1i32).unwrap();
    assert!(ins.execute().is_err(), "a half-built row fails the insert");
    assert_eq!(count(&mut c), 0);
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
}

#[tokio::test]
async fn extreme_values_round_trip_through_the_async_inserter() {
    let dir = temp_dir();
    let mut c = async_db_with_table(&dir, "range4.hyper", &table()).await;
    let want = extremes();
    let mut ins = AsyncInserter::new(&mut c, &table()).await.unwrap();
    for v in &want {
        ins.add_row(&[&v.0, &v.1, &v.2, &v.3, &v.4, &v.5])
            .await
            .unwrap();
    }
    assert_eq!(ins.execute().await.unwrap(), want.len() as u64);
    let mut rows = c
        .execute_query("SELECT id, ts, tstz, iv, tm, d FROM x ORDER BY id")
        .await
        .unwrap();
    let mut got = Vec::new();
    while let Some(r) = rows.next().await {
        let r = r.unwrap();
        got.push((
            r.try_get(0).unwrap(),
            r.try_get(1).unwrap(),
            r.try_get(2).unwrap(),
            r.try_get(3).unwrap(),
            r.try_get(4).unwrap(),
            r.try_get(5).unwrap(),
        ));
    }
    assert_eq!(got, want);
}

/// What `query_arrow` documents: hyperd refuses to send these values as
/// Arrow (22008), while the row API reads them (above).
#[test]
fn query_arrow_refuses_what_arrow_cannot_carry() {
    let dir = temp_dir();
    let mut c = db_with_table(&dir, "range5.hyper", &table());
    let mut ins =
        Inserter::with_format(&mut c, &table(), hyperdb_api::InsertFormat::HyperBinary).unwrap();
    for v in extremes() {
        add(&mut ins, &v).unwrap();
    }
    ins.execute().unwrap();
    for (id, refused) in [
        (0, false),
        (1, false),
        (2, true),
        (3, false),
        (4, true),
        (5, true),
        (6, true),
        (7, false),
    ] {
        let sql = format!("SELECT * FROM x WHERE id = {id}");
        let result: hyperdb_api::Result<Vec<_>> = c.query_arrow(&sql).and_then(|b| b.collect());
        match result {
            Ok(_) => assert!(!refused, "row {id} was sent as Arrow"),
            Err(e) => {
                assert!(refused, "row {id}: {e}");
                assert_eq!(e.sqlstate(), "22008", "row {id}: {e}");
            }
        }
    }
}

/// A held batch the server refuses (here for bad JSON, which only hyperd
/// checks) fails the insert where it is sent: the rows before it are
/// rolled back, later rows go nowhere, `execute()` reports the insert
/// over, and the connection is usable.
#[test]
fn a_held_batch_the_server_refuses_fails_the_insert_and_stores_nothing() {
    let dir = temp_dir();
    let docs = TableDefinition::new("docs")
        .with_not_null_column("id", SqlType::Int)
        .with_column("ts", SqlType::Timestamp)
        .with_column("j", SqlType::Json);
    let mut c = db_with_table(&dir, "range6.hyper", &docs);
    let mut ins = Inserter::new(&mut c, &docs).unwrap();
    let (max, plain) = (Some(ts(MAX)), Some(ts("2024-01-01 00:00:00")));
    let mut failed = None;
    for id in 0..140_000 {
        let t = if id == 70_000 { max } else { plain };
        let j = if id == 70_001 { "{not json" } else { "{}" };
        if let Err(e) = ins.add_row(&[&id, &t, &Some(j)]) {
            failed.get_or_insert((id, e));
        }
    }
    let (id, e) = failed.expect("the held batch failed");
    assert_eq!(id, 131_071, "where the held batch went out: {e}");
    assert!(e.code().is_some(), "the server's error: {e:?}");
    assert!(ins.execute().is_err());
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM docs").unwrap(),
        0
    );
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
}
