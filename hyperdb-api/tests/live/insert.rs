//! Inserters against the real server: every type round-trips, bad rows are
//! rejected without loss, aborted inserts leave the table unchanged, and ten
//! million rows arrive intact through each path.

use hyperdb_api::error::RowErrorKind;
use hyperdb_api::types::{Date, Interval, Numeric, SqlType, Time, Timestamp, TimestampTz};
use hyperdb_api::{
    AsyncChunkSender, AsyncInserter, ChunkSender, Connection, Error, InsertChunk, InsertFormat,
    Inserter, TableDefinition,
};

use crate::common::{async_db_with_table, db_with_table, temp_dir};

/// Every row inserter test runs once per wire format.
pub(crate) const FORMATS: [InsertFormat; 2] =
    [InsertFormat::HyperBinary, InsertFormat::ArrowStream];

/// One row of the every-type table, as Rust values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AllTypes {
    id: i32,
    b: Option<bool>,
    s: Option<i16>,
    i: Option<i32>,
    bi: Option<i64>,
    r: Option<f32>,
    d: Option<f64>,
    o: Option<u32>,
    n18: Option<Numeric>,
    n38: Option<Numeric>,
    t: Option<String>,
    vc: Option<String>,
    c5: Option<String>,
    c1: Option<String>,
    j: Option<String>,
    by: Option<Vec<u8>>,
    date: Option<Date>,
    time: Option<Time>,
    ts: Option<Timestamp>,
    tstz: Option<TimestampTz>,
    iv: Option<Interval>,
}

pub(crate) fn all_types_table() -> TableDefinition {
    all_types_with(false)
}

/// Every type, GEOGRAPHY (after `by`) only when asked: rows inserted from
/// Rust values have no way to spell one.
pub(crate) fn all_types_with(geography: bool) -> TableDefinition {
    let t = TableDefinition::new("all_types")
        .with_not_null_column("id", SqlType::Int)
        .with_column("b", SqlType::Bool)
        .with_column("s", SqlType::SmallInt)
        .with_column("i", SqlType::Int)
        .with_column("bi", SqlType::BigInt)
        .with_column("r", SqlType::Real)
        .with_column("d", SqlType::Double)
        .with_column("o", SqlType::Oid)
        .with_column("n18", SqlType::numeric(18, 3).unwrap())
        .with_column("n38", SqlType::numeric(38, 10).unwrap())
        .with_column("t", SqlType::Text)
        .with_column("vc", SqlType::varchar(10).unwrap())
        .with_column("c5", SqlType::char(5).unwrap())
        .with_column("c1", SqlType::char(1).unwrap())
        .with_column("j", SqlType::Json)
        .with_column("by", SqlType::Bytea);
    let t = if geography {
        t.with_column("g", SqlType::Geography)
    } else {
        t
    };
    t.with_column("date", SqlType::Date)
        .with_column("time", SqlType::Time)
        .with_column("ts", SqlType::Timestamp)
        .with_column("tstz", SqlType::TimestampTz)
        .with_column("iv", SqlType::Interval)
}

fn num(s: &str) -> Option<Numeric> {
    Some(s.parse().unwrap())
}

fn ts(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> Timestamp {
    Timestamp::new(
        Date::from_ymd(y, mo, d).unwrap(),
        Time::from_hms_micro(h, mi, s, us).unwrap(),
    )
    .unwrap()
}

pub(crate) fn rows() -> Vec<AllTypes> {
    let low = AllTypes {
        id: 1,
        b: Some(false),
        s: Some(i16::MIN),
        i: Some(i32::MIN),
        bi: Some(i64::MIN),
        r: Some(f32::NEG_INFINITY),
        d: Some(f64::NAN),
        o: Some(0),
        n18: num("-999999999999999.999"),
        n38: num("-9999999999999999999999999999.9999999999"),
        t: Some(String::new()),
        vc: Some("日本語".into()),
        c5: Some("abcde".into()),
        c1: Some("x".into()),
        j: Some(r#"{"a":[1,2]}"#.into()),
        by: Some(Vec::new()),
        date: Some(Date::from_ymd(1066, 10, 14).unwrap()),
        time: Some(Time::from_hms_micro(0, 0, 0, 0).unwrap()),
        ts: Some(ts(1850, 3, 4, 5, 6, 7, 123_456)),
        tstz: Some(TimestampTz::from_utc(ts(1899, 12, 31, 23, 59, 59, 999_999))),
        iv: Some(Interval::new(-14, 3, -123_456_789)),
    };
    let high = AllTypes {
        id: 2,
        b: Some(true),
        s: Some(i16::MAX),
        i: Some(i32::MAX),
        bi: Some(i64::MAX),
        r: Some(f32::NAN),
        d: Some(f64::INFINITY),
        o: Some(u32::MAX),
        n18: num("-0.500"),
        n38: num("-0.0000000001"),
        t: Some("héllo wörld ✓ 🎉 \"quoted\" 'single' \\ back".into()),
        vc: Some("0123456789".into()),
        c5: Some("ü✓€ab".into()),
        c1: Some("é".into()),
        j: Some("[]".into()),
        by: Some(vec![0, 255, 1, 2, b'\\']),
        date: Some(Date::from_ymd(9999, 12, 31).unwrap()),
        time: Some(Time::from_hms_micro(23, 59, 59, 999_999).unwrap()),
        ts: Some(ts(2200, 1, 1, 0, 0, 0, 1)),
        tstz: Some(TimestampTz::from_utc(ts(2101, 1, 1, 12, 0, 0, 0))),
        iv: Some(Interval::new(1200, -30, 86_399_999_999)),
    };
    let mid = AllTypes {
        id: 3,
        r: Some(-0.5),
        d: Some(-0.25),
        n18: num("999999999999999.999"),
        n38: num("9999999999999999999999999999.9999999999"),
        ..nulls(3)
    };
    vec![low, high, mid, nulls(4)]
}

pub(crate) fn nulls(id: i32) -> AllTypes {
    AllTypes {
        id,
        b: None,
        s: None,
        i: None,
        bi: None,
        r: None,
        d: None,
        o: None,
        n18: None,
        n38: None,
        t: None,
        vc: None,
        c5: None,
        c1: None,
        j: None,
        by: None,
        date: None,
        time: None,
        ts: None,
        tstz: None,
        iv: None,
    }
}

pub(crate) fn values(r: &AllTypes) -> [&dyn hyperdb_api::types::ToHyperBinary; 21] {
    [
        &r.id, &r.b, &r.s, &r.i, &r.bi, &r.r, &r.d, &r.o, &r.n18, &r.n38, &r.t, &r.vc, &r.c5,
        &r.c1, &r.j, &r.by, &r.date, &r.time, &r.ts, &r.tstz, &r.iv,
    ]
}

pub(crate) fn read(row: &hyperdb_api::Row) -> AllTypes {
    AllTypes {
        id: row.try_get("id").unwrap(),
        b: row.try_get("b").unwrap(),
        s: row.try_get("s").unwrap(),
        i: row.try_get("i").unwrap(),
        bi: row.try_get("bi").unwrap(),
        r: row.try_get("r").unwrap(),
        d: row.try_get("d").unwrap(),
        o: row.try_get("o").unwrap(),
        n18: row.try_get("n18").unwrap(),
        n38: row.try_get("n38").unwrap(),
        t: row.try_get("t").unwrap(),
        vc: row.try_get("vc").unwrap(),
        c5: row.try_get("c5").unwrap(),
        c1: row.try_get("c1").unwrap(),
        j: row.try_get("j").unwrap(),
        by: row.try_get("by").unwrap(),
        date: row.try_get("date").unwrap(),
        time: row.try_get("time").unwrap(),
        ts: row.try_get("ts").unwrap(),
        tstz: row.try_get("tstz").unwrap(),
        iv: row.try_get("iv").unwrap(),
    }
}

/// Equality with NaN equal to NaN.
pub(crate) fn same(a: &AllTypes, b: &AllTypes) -> bool {
    let f32eq = |x: Option<f32>, y: Option<f32>| x.map(f32::to_bits) == y.map(f32::to_bits);
    let f64eq = |x: Option<f64>, y: Option<f64>| x.map(f64::to_bits) == y.map(f64::to_bits);
    f32eq(a.r, b.r)
        && f64eq(a.d, b.d)
        && AllTypes {
            r: None,
            d: None,
            ..a.clone()
        } == AllTypes {
            r: None,
            d: None,
            ..b.clone()
        }
}

pub(crate) const SELECT_ALL: &str = "SELECT * FROM all_types ORDER BY id";

#[test]
fn every_type_round_trips_sync() {
    for format in FORMATS {
        every_type_round_trips_sync_in(format);
    }
}

fn every_type_round_trips_sync_in(format: InsertFormat) {
    let dir = temp_dir();
    let table = all_types_table();
    let mut c = db_with_table(&dir, "types.hyper", &table);
    let want = rows();
    let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
    for r in &want {
        ins.add_row(&values(r)).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), want.len() as u64);
    // Both row paths: Arrow (plain query) and DataRows (extended protocol).
    // The column types a result reports, then its rows.
    let read_all = |rows: hyperdb_api::Rows<'_>| {
        let types: Vec<_> = rows
            .schema()
            .columns()
            .iter()
            .map(|c| c.sql_type().cloned())
            .collect();
        let got: Vec<AllTypes> = rows.map(|r| read(&r.unwrap())).collect();
        (types, got)
    };
    let (arrow_types, got_arrow) = read_all(c.execute_query(SELECT_ALL).unwrap());
    let (wire_types, got_wire) = read_all(c.execute_query_params(SELECT_ALL, &[]).unwrap());
    assert_eq!(arrow_types, wire_types, "column types agree across paths");
    assert_eq!(
        wire_types,
        all_types_table()
            .columns()
            .iter()
            .map(|c| Some(*c.sql_type()))
            .collect::<Vec<_>>()
    );
    for got in [&got_arrow, &got_wire] {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(same(g, w), "{format:?}\n got {g:?}\nwant {w:?}");
        }
    }
    // Values agree with hyperd's own text rendering where it is unambiguous.
    assert_eq!(
        c.query_scalar::<String>("SELECT n38::text FROM all_types WHERE id = 3")
            .unwrap(),
        "9999999999999999999999999999.9999999999"
    );
    assert_eq!(
        c.query_scalar::<String>("SELECT date::text FROM all_types WHERE id = 1")
            .unwrap(),
        "1066-10-14"
    );
    assert_eq!(
        c.query_scalar::<String>("SELECT ts::text FROM all_types WHERE id = 1")
            .unwrap(),
        "1850-03-04 05:06:07.123456"
    );
}

#[tokio::test]
async fn every_type_round_trips_async() {
    for format in FORMATS {
        every_type_round_trips_async_in(format).await;
    }
}

async fn every_type_round_trips_async_in(format: InsertFormat) {
    let dir = temp_dir();
    let table = all_types_table();
    let mut c = async_db_with_table(&dir, "types.hyper", &table).await;
    let want = rows();
    let mut ins = AsyncInserter::with_format(&mut c, &table, format)
        .await
        .unwrap();
    for r in &want {
        ins.add_row(&values(r)).await.unwrap();
    }
    assert_eq!(ins.execute().await.unwrap(), want.len() as u64);
    let mut rows = c.execute_query(SELECT_ALL).await.unwrap();
    let mut got = Vec::new();
    while let Some(r) = rows.next().await {
        got.push(read(&r.unwrap()));
    }
    for (g, w) in got.iter().zip(&want) {
        assert!(same(g, w), "{format:?}\n got {g:?}\nwant {w:?}");
    }
    assert_eq!(got.len(), want.len());
}

fn measurements() -> TableDefinition {
    TableDefinition::new("measurements")
        .with_not_null_column("id", SqlType::Int)
        .with_column("sensor_id", SqlType::Int)
        .with_column("value", SqlType::Double)
        .with_column("timestamp", SqlType::BigInt)
}

fn fresh(name: &str) -> (tempfile::TempDir, Connection) {
    let dir = temp_dir();
    let mut c = db_with_table(&dir, name, &measurements());
    c.execute_command("INSERT INTO measurements VALUES (-1, 0, 0, 0)")
        .unwrap();
    (dir, c)
}

fn count(c: &mut Connection) -> i64 {
    c.query_scalar("SELECT count(*) FROM measurements").unwrap()
}

#[test]
fn bad_rows_are_rejected_and_the_rest_commits() {
    for format in FORMATS {
        bad_rows_are_rejected_in(format);
    }
}

fn bad_rows_are_rejected_in(format: InsertFormat) {
    let (_dir, mut c) = fresh("bad.hyper");
    let mut ins = Inserter::with_format(&mut c, &measurements(), format).unwrap();
    ins.add_row(&[&1i32, &Some(1i32), &Some(0.5f64), &Some(10i64)])
        .unwrap();
    let kind = |e: Error| match e {
        Error::InvalidRow { kind, .. } => kind,
        other => panic!("not InvalidRow: {other:?}"),
    };
    assert_eq!(
        kind(
            ins.add_row(&[&2i32, &Some("x"), &None::<f64>, &None::<i64>])
                .unwrap_err()
        ),
        RowErrorKind::WrongType
    );
    assert_eq!(
        kind(
            ins.add_row(&[&None::<i32>, &None::<i32>, &None::<f64>, &None::<i64>])
                .unwrap_err()
        ),
        RowErrorKind::NullInNotNull
    );
    assert_eq!(
        kind(ins.add_row(&[&2i32]).unwrap_err()),
        RowErrorKind::ColumnCount
    );
    assert_eq!(
        kind(
            ins.add_row(&[&i64::MAX, &None::<i32>, &None::<f64>, &None::<i64>])
                .unwrap_err()
        ),
        RowErrorKind::OutOfRange
    );
    // Column by column, with a NULL.
    ins.add(&3i32).unwrap();
    ins.add_null().unwrap();
    ins.add(&2.5f64).unwrap();
    ins.add(&30i64).unwrap();
    ins.end_row().unwrap();
    assert_eq!(ins.execute().unwrap(), 2);
    assert_eq!(count(&mut c), 3);
    assert_eq!(
        c.query_scalar::<Option<i32>>("SELECT sensor_id FROM measurements WHERE id = 3")
            .unwrap(),
        None
    );
}

/// TIME 24:00:00 is refused (22008, row and column named) in both formats:
/// hyperd stores it, and Tableau's Hyper API then cannot read the table.
/// The rows before it, and 23:59:59.999999, are stored.
#[test]
fn time_24_00_is_refused() {
    for format in FORMATS {
        let dir = temp_dir();
        let table = TableDefinition::new("times")
            .with_not_null_column("id", SqlType::Int)
            .with_column("t", SqlType::Time);
        let mut c = db_with_table(&dir, "times.hyper", &table);
        let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
        let last = Time::from_micros(86_400_000_000 - 1).unwrap();
        ins.add_row(&[&1i32, &Some(last)]).unwrap();
        let midnight = Time::from_micros(86_400_000_000).unwrap();
        let e = ins.add_row(&[&2i32, &Some(midnight)]).unwrap_err();
        assert_eq!(e.sqlstate(), "22008", "{format:?}: {e}");
        match &e {
            Error::InvalidRow {
                kind, row, column, ..
            } => {
                assert_eq!(*kind, RowErrorKind::DateTimeOutOfRange);
                assert_eq!(*row, 1);
                assert_eq!(column.as_deref(), Some("t"));
            }
            other => panic!("{format:?}: not InvalidRow: {other:?}"),
        }
        assert_eq!(ins.execute().unwrap(), 1, "{format:?}");
        let stored: Time = c.query_scalar("SELECT t FROM times").unwrap();
        assert_eq!(stored, last, "{format:?}");
    }
}

/// `e` refuses row `row`'s value in `column` as a date or time hyperd
/// does not store (22008).
fn assert_date_time_refused(e: &Error, row: u64, column: &str) {
    assert_eq!(e.sqlstate(), "22008", "{e}");
    match e {
        Error::InvalidRow {
            kind,
            row: at,
            column: named,
            ..
        } => {
            assert_eq!(*kind, RowErrorKind::DateTimeOutOfRange, "{e}");
            assert_eq!((*at, named.as_deref()), (row, Some(column)), "{e}");
        }
        other => panic!("not InvalidRow: {other:?}"),
    }
}

/// hyperd stores DATEs from 4713-01-01 BC to 294276-12-31; outside them a
/// parameter is 22007 and an Arrow COPY fails whole with XX001, naming no
/// row. Every inserter refuses such a date with 22008, row and column
/// named, and stores the rest.
#[test]
fn dates_outside_hyperds_range_are_refused() {
    for format in FORMATS {
        let dir = temp_dir();
        let table = TableDefinition::new("dates")
            .with_not_null_column("id", SqlType::Int)
            .with_column("d", SqlType::Date);
        let mut c = db_with_table(&dir, "dates.hyper", &table);
        let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
        ins.add_row(&[&1i32, &Some(Date::HYPER_MIN)]).unwrap();
        ins.add_row(&[&2i32, &Some(Date::HYPER_MAX)]).unwrap();
        let before = Date::from_julian_day(Date::HYPER_MIN.julian_day() - 1);
        let after = Date::from_julian_day(Date::HYPER_MAX.julian_day() + 1);
        for (row, date) in [(2, before), (2, after)] {
            let e = ins.add_row(&[&3i32, &Some(date)]).unwrap_err();
            assert_date_time_refused(&e, row, "d");
        }
        assert_eq!(ins.execute().unwrap(), 2, "{format:?}");
        let stored: Vec<(i32, Date)> = c
            .query_as("SELECT id, d FROM dates ORDER BY id")
            .unwrap()
            .collect::<hyperdb_api::Result<_>>()
            .unwrap();
        assert_eq!(
            stored,
            vec![(1, Date::HYPER_MIN), (2, Date::HYPER_MAX)],
            "{format:?}"
        );
    }
}

/// The same for TIMESTAMP and TIMESTAMPTZ (4713-01-01 00:00:00 BC to
/// 294276-12-31 23:59:59.999999): accepted by `add_row`, such a value
/// failed the whole insert at `execute` with 22P03, naming nothing. A
/// parameter is refused before it is sent.
#[test]
fn timestamps_outside_hyperds_range_are_refused() {
    let before = Timestamp::from_micros_since_2000(Timestamp::HYPER_MIN.micros_since_2000() - 1);
    let after = Timestamp::from_micros_since_2000(Timestamp::HYPER_MAX.micros_since_2000() + 1);
    for format in FORMATS {
        let dir = temp_dir();
        let table = TableDefinition::new("stamps")
            .with_not_null_column("id", SqlType::Int)
            .with_column("ts", SqlType::Timestamp)
            .with_column("tz", SqlType::TimestampTz);
        let mut c = db_with_table(&dir, "stamps.hyper", &table);
        let mut ins = Inserter::with_format(&mut c, &table, format).unwrap();
        let (min, max) = (Timestamp::HYPER_MIN, Timestamp::HYPER_MAX);
        ins.add_row(&[&1i32, &min, &TimestampTz::from_utc(min)])
            .unwrap();
        ins.add_row(&[&2i32, &max, &TimestampTz::from_utc(max)])
            .unwrap();
        for (column, ts) in [("ts", before), ("ts", after), ("tz", before), ("tz", after)] {
            let e = if column == "ts" {
                ins.add_row(&[&3i32, &ts, &None::<TimestampTz>])
            } else {
                ins.add_row(&[&3i32, &None::<Timestamp>, &TimestampTz::from_utc(ts)])
            }
            .unwrap_err();
            assert_date_time_refused(&e, 2, column);
        }
        assert_eq!(ins.execute().unwrap(), 2, "{format:?}");
        let stored: Vec<(i32, Timestamp)> = c
            .query_as("SELECT id, ts FROM stamps ORDER BY id")
            .unwrap()
            .collect::<hyperdb_api::Result<_>>()
            .unwrap();
        assert_eq!(stored, vec![(1, min), (2, max)], "{format:?}");
        let e = c
            .execute_command_params("INSERT INTO stamps VALUES (4, $1, NULL)", &[&before])
            .unwrap_err();
        assert!(e.to_string().contains("outside hyperd's range"), "{e}");
        assert_eq!(
            c.query_scalar::<i64>("SELECT count(*) FROM stamps")
                .unwrap(),
            2
        );
    }
}

#[test]
fn dropped_inserter_leaves_the_table_unchanged() {
    for format in FORMATS {
        dropped_inserter_in(format);
    }
}

fn dropped_inserter_in(format: InsertFormat) {
    let (_dir, mut c) = fresh("drop.hyper");
    {
        // Enough rows that several frames (and a whole Arrow batch) were
        // already sent.
        let mut ins = Inserter::with_format(&mut c, &measurements(), format)
            .unwrap()
            .with_flush_threshold(64 << 10);
        for i in 0..100_000i32 {
            ins.add_row(&[&i, &Some(i % 10), &Some(0.1f64), &Some(1i64)])
                .unwrap();
        }
    }
    assert_eq!(count(&mut c), 1, "nothing from the dropped inserter");
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    // A half-built row aborts execute().
    let mut ins = Inserter::with_format(&mut c, &measurements(), format).unwrap();
    ins.add_row(&[&1i32, &None::<i32>, &None::<f64>, &None::<i64>])
        .unwrap();
    ins.add(&2i32).unwrap();
    assert!(ins.execute().is_err());
    assert_eq!(count(&mut c), 1);
}

#[test]
fn server_side_copy_error_leaves_the_table_unchanged() {
    for format in FORMATS {
        server_side_copy_error_in(format);
    }
}

fn server_side_copy_error_in(format: InsertFormat) {
    let (_dir, mut c) = fresh("server.hyper");
    // Only the server checks JSON, mid-COPY.
    let strict = TableDefinition::new("strict")
        .with_not_null_column("id", SqlType::Int)
        .with_column("j", SqlType::Json);
    c.execute_command(&strict.create_table_sql(false).unwrap())
        .unwrap();
    let mut ins = Inserter::with_format(&mut c, &strict, format).unwrap();
    ins.add_row(&[&1i32, &Some("{}")]).unwrap();
    ins.add_row(&[&2i32, &Some("{not json")]).unwrap();
    let e = ins.execute().unwrap_err();
    assert!(e.code().is_some(), "server error with SQLSTATE: {e:?}");
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM strict")
            .unwrap(),
        0
    );
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
    // A COPY into a table that does not exist fails at once.
    let e = Inserter::with_format(
        &mut c,
        &TableDefinition::new("nope").with_column("a", SqlType::Int),
        format,
    )
    .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "{e:?}");
    assert_eq!(count(&mut c), 1);
}

#[tokio::test]
async fn async_abort_paths_leave_the_table_unchanged() {
    for format in FORMATS {
        async_abort_paths_in(format).await;
    }
}

async fn async_abort_paths_in(format: InsertFormat) {
    let dir = temp_dir();
    let mut c = async_db_with_table(&dir, "a.hyper", &measurements()).await;
    {
        let mut ins = AsyncInserter::with_format(&mut c, &measurements(), format)
            .await
            .unwrap()
            .with_flush_threshold(4096);
        for i in 0..100_000i32 {
            ins.add_row(&[&i, &None::<i32>, &None::<f64>, &None::<i64>])
                .await
                .unwrap();
        }
    }
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM measurements")
            .await
            .unwrap(),
        0
    );
    let mut ins = AsyncInserter::with_format(&mut c, &measurements(), format)
        .await
        .unwrap();
    assert!(ins
        .add_row(&[&"x", &None::<i32>, &None::<f64>, &None::<i64>])
        .await
        .is_err());
    ins.add_row(&[&7i32, &None::<i32>, &None::<f64>, &None::<i64>])
        .await
        .unwrap();
    assert_eq!(ins.execute().await.unwrap(), 1);
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM measurements")
            .await
            .unwrap(),
        1
    );
}

const N: i32 = 10_000_000;

fn add_measurement(chunk: &mut InsertChunk, id: i32) -> hyperdb_api::Result<()> {
    chunk.add_row(&[
        &id,
        &Some(id % 10),
        &Some(f64::from(id) * 0.1),
        &Some(1_700_000_000_000i64 + i64::from(id) * 1000),
    ])
}

/// Count and checksums of the measurements rows with id >= 0.
fn check_ten_million(c: &mut Connection) {
    let rows: Vec<_> = c
        .execute_query(
            "SELECT count(*), sum(id::bigint), sum(sensor_id::bigint), sum(timestamp - 1700000000000) \
             FROM measurements WHERE id >= 0",
        )
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let n = i64::from(N);
    let r = &rows[0];
    assert_eq!(r.try_get::<i64>(0).unwrap(), n);
    assert_eq!(
        r.try_get::<Numeric>(1).unwrap().to_string(),
        (n * (n - 1) / 2).to_string()
    );
    assert_eq!(
        r.try_get::<Numeric>(2).unwrap().to_string(),
        (45 * n / 10).to_string()
    );
    assert_eq!(
        r.try_get::<Numeric>(3).unwrap().to_string(),
        (n * (n - 1) / 2 * 1000).to_string()
    );
}

#[test]
fn ten_million_rows_through_the_inserter() {
    for format in FORMATS {
        ten_million_rows_in(format);
    }
}

fn ten_million_rows_in(format: InsertFormat) {
    let (_dir, mut c) = fresh("ten_m.hyper");
    let mut ins = Inserter::with_format(&mut c, &measurements(), format).unwrap();
    for id in 0..N {
        ins.add_row(&[
            &id,
            &Some(id % 10),
            &Some(f64::from(id) * 0.1),
            &Some(1_700_000_000_000i64 + i64::from(id) * 1000),
        ])
        .unwrap();
    }
    assert_eq!(ins.execute().unwrap(), N as u64);
    check_ten_million(&mut c);
}

#[test]
fn ten_million_rows_through_the_chunk_sender() {
    let (_dir, mut c) = fresh("chunks.hyper");
    let table = measurements();
    let mut sender = ChunkSender::new(&mut c, &table).unwrap();
    let chunks = 40;
    let per_chunk = N as usize / chunks;
    sender
        .send_parallel(&table, 2, chunks, |i, chunk| {
            let start = (i * per_chunk) as i32;
            (start..start + per_chunk as i32).try_for_each(|id| add_measurement(chunk, id))
        })
        .unwrap();
    assert_eq!(sender.execute().unwrap(), N as u64);
    check_ten_million(&mut c);
}

#[test]
fn chunk_sender_errors() {
    let (_dir, mut c) = fresh("chunkerr.hyper");
    let table = measurements();
    let other = TableDefinition::new("x").with_column("a", SqlType::Text);
    {
        let mut sender = ChunkSender::new(&mut c, &table).unwrap();
        let mut wrong = InsertChunk::new(&other).unwrap();
        wrong.add_row(&[&Some("a")]).unwrap();
        assert!(sender.send(&mut wrong).is_err(), "chunk for another table");
        let e = sender
            .send_parallel(&table, 2, 8, |i, chunk| {
                if i == 5 {
                    return Err(Error::NoRows);
                }
                add_measurement(chunk, i as i32)
            })
            .unwrap_err();
        assert!(
            matches!(e, Error::NoRows),
            "the fill error comes back: {e:?}"
        );
        // Dropped: aborts.
    }
    assert_eq!(count(&mut c), 1);
}

#[tokio::test]
async fn async_chunk_sender_with_spawn_blocking() {
    let dir = temp_dir();
    let table = measurements();
    let mut c = async_db_with_table(&dir, "ac.hyper", &table).await;
    let mut sender = AsyncChunkSender::new(&mut c, &table).await.unwrap();
    for part in 0..4 {
        let t = table.clone();
        let mut chunk = tokio::task::spawn_blocking(move || {
            let mut chunk = InsertChunk::new(&t).unwrap();
            for id in part * 1000..(part + 1) * 1000 {
                add_measurement(&mut chunk, id).unwrap();
            }
            chunk
        })
        .await
        .unwrap();
        sender.send(&mut chunk).await.unwrap();
    }
    assert_eq!(sender.execute().await.unwrap(), 4000);
    assert_eq!(
        c.query_scalar::<i64>("SELECT sum(id) FROM measurements")
            .await
            .unwrap(),
        3999 * 4000 / 2
    );
}
