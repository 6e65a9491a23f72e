//! `#[derive(FromRow)]` and `#[derive(Table)]` against the real server:
//! tables made from structs, rows inserted as structs (every inserter,
//! both wire formats) and read back as structs by name and by position,
//! from Arrow results and from `DataRow`s; and every way a field fails,
//! with the error naming the struct, the field and the column.

use hyperdb_api::error::RowErrorKind;
use hyperdb_api::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use hyperdb_api::{
    AsyncInserter, ChunkSender, Connection, Error, FromRow, InsertChunk, Inserter, Table, TableRow,
};

use crate::common::{connect, connect_async, temp_dir};
use crate::insert::FORMATS;

/// Every Rust type with a column type of its own, and the overrides.
#[derive(Table, FromRow, Clone, Debug, PartialEq)]
struct Everything {
    id: i32,
    flag: bool,
    tiny: i8,
    byte: u8,
    small: i16,
    word: u16,
    int: Option<i32>,
    unsigned: u32,
    big: i64,
    huge: u64,
    widest: i128,
    real: f32,
    double: Option<f64>,
    text: String,
    bytes: Vec<u8>,
    date: Date,
    time: Time,
    ts: Timestamp,
    tstz: TimestampTz,
    iv: Interval,
    #[hyper(sql_type = "NUMERIC(18,2)")]
    amount: Numeric,
    #[hyper(sql_type = "NUMERIC(38,10)")]
    wide_amount: Option<Numeric>,
    #[hyper(sql_type = "VARCHAR(10)")]
    code: Option<String>,
    #[hyper(sql_type = "JSON")]
    doc: String,
}

fn everything(id: i32) -> Everything {
    let date = Date::from_ymd(1999 + id, 12, 31).unwrap();
    let time = Time::from_hms_micro(23, 59, 59, 999_999).unwrap();
    let low = id % 2 == 0;
    Everything {
        id,
        flag: low,
        tiny: if low { i8::MIN } else { i8::MAX },
        byte: if low { 0 } else { u8::MAX },
        small: if low { i16::MIN } else { i16::MAX },
        word: if low { 0 } else { u16::MAX },
        int: (!low).then_some(i32::MIN),
        unsigned: if low { 0 } else { u32::MAX },
        big: if low { i64::MIN } else { i64::MAX },
        huge: if low { 0 } else { u64::MAX },
        widest: if low {
            -(10i128.pow(38) - 1)
        } else {
            10i128.pow(38) - 1
        },
        real: -0.5 * id as f32,
        double: low.then_some(1e300),
        text: format!("héllo ✓ {id}"),
        bytes: vec![0, 255, id as u8],
        date,
        time,
        ts: Timestamp::new(date, time).unwrap(),
        tstz: TimestampTz::from_utc(Timestamp::new(date, time).unwrap()),
        iv: Interval::new(id, -3, 86_399_999_999),
        amount: format!("-{id}.25").parse().unwrap(),
        wide_amount: (!low).then(|| "9999999999999999999999999999.9999999999".parse().unwrap()),
        code: low.then(|| "0123456789".into()),
        doc: format!(r#"{{"id":{id}}}"#),
    }
}

/// The same columns read by position.
#[derive(FromRow, Debug, PartialEq)]
#[hyper(by_position)]
struct EverythingByPosition {
    id: i32,
    flag: bool,
    tiny: i8,
    byte: u8,
    small: i16,
    word: u16,
    int: Option<i32>,
    unsigned: u32,
    big: i64,
    huge: u64,
    widest: i128,
    real: f32,
    double: Option<f64>,
    text: String,
    bytes: Vec<u8>,
    date: Date,
    time: Time,
    ts: Timestamp,
    tstz: TimestampTz,
    iv: Interval,
    amount: Numeric,
    wide_amount: Option<Numeric>,
    code: Option<String>,
    doc: String,
}

impl From<EverythingByPosition> for Everything {
    fn from(r: EverythingByPosition) -> Everything {
        let EverythingByPosition {
            id,
            flag,
            tiny,
            byte,
            small,
            word,
            int,
            unsigned,
            big,
            huge,
            widest,
            real,
            double,
            text,
            bytes,
            date,
            time,
            ts,
            tstz,
            iv,
            amount,
            wide_amount,
            code,
            doc,
        } = r;
        Everything {
            id,
            flag,
            tiny,
            byte,
            small,
            word,
            int,
            unsigned,
            big,
            huge,
            widest,
            real,
            double,
            text,
            bytes,
            date,
            time,
            ts,
            tstz,
            iv,
            amount,
            wide_amount,
            code,
            doc,
        }
    }
}

const SELECT_EVERYTHING: &str = "SELECT * FROM everything ORDER BY id";

/// A table made from the struct, rows inserted with `add_struct` in each
/// format and read back by name and by position, from Arrow results
/// (`query_as`) and from `DataRow`s (`execute_query_params`): the same
/// values every way. The catalog holds exactly the struct's definition.
#[test]
fn every_type_round_trips_through_derived_structs() {
    let dir = temp_dir();
    for (n, format) in FORMATS.into_iter().enumerate() {
        let mut conn = connect(&dir, &format!("everything{n}.hyper"));
        let table = Everything::table_definition();
        conn.catalog().create_table(&table).unwrap();
        assert_eq!(
            conn.catalog()
                .get_table_definition("everything")
                .unwrap()
                .columns(),
            table.columns()
        );
        let rows: Vec<Everything> = (1..=4).map(everything).collect();
        let mut ins = Inserter::with_format(&mut conn, &table, format).unwrap();
        for row in &rows {
            ins.add_struct(row).unwrap();
        }
        assert_eq!(ins.execute().unwrap(), 4, "{format:?}");

        let by_name: Vec<Everything> = conn
            .query_as(SELECT_EVERYTHING)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(by_name, rows, "{format:?}, Arrow, by name");
        let data_rows: Vec<Everything> = conn
            .execute_query_params(SELECT_EVERYTHING, &[])
            .unwrap()
            .typed()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(data_rows, rows, "{format:?}, DataRows, by name");
        for source in [
            conn.query_as::<EverythingByPosition>(SELECT_EVERYTHING)
                .unwrap()
                .map(|r| r.map(Everything::from))
                .collect::<Result<Vec<_>, _>>()
                .unwrap(),
            conn.execute_query_params(SELECT_EVERYTHING, &[])
                .unwrap()
                .typed::<EverythingByPosition>()
                .map(|r| r.map(Everything::from))
                .collect::<Result<Vec<_>, _>>()
                .unwrap(),
        ] {
            assert_eq!(source, rows, "{format:?}, by position");
        }
    }
}

/// A struct read by name takes its columns wherever they are, skips
/// columns it does not read, and reads `#[hyper(rename)]`d ones.
#[derive(FromRow, Debug, PartialEq)]
struct Renamed {
    #[hyper(rename = "identifier")]
    id: i64,
    label: Option<String>,
    r#type: String,
}

#[test]
fn by_name_reads_columns_anywhere_and_renamed() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "renamed.hyper");
    let sql = "SELECT 'extra' AS unused, 'kind' AS \"type\", NULL::TEXT AS label, \
               CAST(g AS BIGINT) AS identifier FROM generate_series(1, 3) AS s(g) ORDER BY g";
    let want: Vec<Renamed> = (1..=3)
        .map(|id| Renamed {
            id,
            label: None,
            r#type: "kind".into(),
        })
        .collect();
    let arrow: Vec<Renamed> = conn.query_as(sql).unwrap().map(Result::unwrap).collect();
    assert_eq!(arrow, want);
    let wire: Vec<Renamed> = conn
        .execute_query_params(sql, &[])
        .unwrap()
        .typed()
        .map(Result::unwrap)
        .collect();
    assert_eq!(wire, want);
    // One row, by name, straight from a `Row`.
    let mut rows = conn.execute_query(sql).unwrap();
    let row = rows.next_row().unwrap().unwrap();
    assert_eq!(Renamed::from_row(row).unwrap(), want[0]);
}

/// A tuple struct reads by position, whatever the columns are called.
#[derive(FromRow, Debug, PartialEq)]
struct Pair(i32, Option<String>);

#[test]
fn tuple_structs_read_by_position() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "pair.hyper");
    let sql = "SELECT g, CASE WHEN g = 2 THEN NULL ELSE 'v' || g END FROM generate_series(1, 3) AS s(g) ORDER BY g";
    let want = vec![
        Pair(1, Some("v1".into())),
        Pair(2, None),
        Pair(3, Some("v3".into())),
    ];
    let arrow: Vec<Pair> = conn.query_as(sql).unwrap().map(Result::unwrap).collect();
    assert_eq!(arrow, want);
    let wire: Vec<Pair> = conn
        .execute_query_params(sql, &[])
        .unwrap()
        .typed()
        .map(Result::unwrap)
        .collect();
    assert_eq!(wire, want);
}

/// A code stored as INTEGER, a Rust newtype in the struct.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SensorId(u16);

impl TryFrom<i32> for SensorId {
    type Error = std::num::TryFromIntError;
    fn try_from(v: i32) -> Result<SensorId, Self::Error> {
        u16::try_from(v).map(SensorId)
    }
}

impl From<SensorId> for i32 {
    fn from(id: SensorId) -> i32 {
        i32::from(id.0)
    }
}

/// An enum stored as text.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    Celsius,
    Kelvin,
}

impl TryFrom<String> for Unit {
    type Error = String;
    fn try_from(s: String) -> Result<Unit, String> {
        match s.as_str() {
            "C" => Ok(Unit::Celsius),
            "K" => Ok(Unit::Kelvin),
            other => Err(format!("unknown unit {other:?}")),
        }
    }
}

impl From<Unit> for String {
    fn from(u: Unit) -> String {
        match u {
            Unit::Celsius => "C".into(),
            Unit::Kelvin => "K".into(),
        }
    }
}

#[derive(Table, FromRow, Clone, Debug, PartialEq)]
struct Audit {
    created: Timestamp,
    #[hyper(rename = "by_user")]
    user: Option<String>,
}

#[derive(Table, FromRow, Clone, Debug, PartialEq)]
#[hyper(table = "readings")]
struct Reading {
    id: i64,
    #[hyper(try_from = "i32", into = "i32")]
    sensor: SensorId,
    #[hyper(try_from = "String", into = "String")]
    unit: Option<Unit>,
    value: f64,
    #[hyper(flatten)]
    audit: Audit,
}

/// The same row, by position: a flattened struct takes the next columns.
#[derive(FromRow, Debug, PartialEq)]
struct ReadingTuple(
    i64,
    #[hyper(try_from = "i32")] SensorId,
    #[hyper(try_from = "String")] Option<Unit>,
    f64,
    #[hyper(flatten)] Audit,
);

fn reading(id: i64) -> Reading {
    let created = Timestamp::new(
        Date::from_ymd(2024, 1, 1).unwrap(),
        Time::from_hms(0, 0, id as u32).unwrap(),
    )
    .unwrap();
    Reading {
        id,
        sensor: SensorId(id as u16 * 100),
        unit: [None, Some(Unit::Celsius), Some(Unit::Kelvin)][id as usize % 3],
        value: id as f64 / 4.0,
        audit: Audit {
            created,
            user: (id % 2 == 0).then(|| format!("u{id}")),
        },
    }
}

/// Conversions and flattened structs, both ways: the table has the
/// flattened struct's columns in its place and the converted fields'
/// column types; rows read back the same by name (in order and not) and
/// by position.
#[test]
fn nested_conversions_round_trip() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "readings.hyper");
    let table = Reading::table_definition();
    let names: Vec<&str> = table.columns().iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["id", "sensor", "unit", "value", "created", "by_user"]
    );
    assert_eq!(
        table.columns()[1].sql_type(),
        &hyperdb_api::types::SqlType::Int
    );
    assert!(!table.columns()[1].is_nullable());
    assert!(table.columns()[2].is_nullable());
    conn.catalog().create_table(&table).unwrap();
    let rows: Vec<Reading> = (1..=6).map(reading).collect();
    let mut ins = Inserter::new(&mut conn, &table).unwrap();
    for row in &rows {
        ins.add_struct(row).unwrap();
    }
    assert_eq!(ins.execute().unwrap(), 6);

    let read: Vec<Reading> = conn
        .query_as("SELECT * FROM readings ORDER BY id")
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(read, rows);
    let shuffled = "SELECT by_user, value, created, unit, sensor, id FROM readings ORDER BY id";
    let read: Vec<Reading> = conn
        .execute_query_params(shuffled, &[])
        .unwrap()
        .typed()
        .map(Result::unwrap)
        .collect();
    assert_eq!(read, rows);
    let tuples: Vec<ReadingTuple> = conn
        .query_as("SELECT * FROM readings ORDER BY id")
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tuples.len(), 6);
    for (t, r) in tuples.iter().zip(&rows) {
        assert_eq!(
            (t.0, t.1, t.2, t.3, &t.4),
            (r.id, r.sensor, r.unit, r.value, &r.audit)
        );
    }
}

/// The async inserter takes structs, and `next_as` reads them by name
/// (the columns looked up once, then cached across calls) from both
/// sources; a chunk built on another thread takes them too.
#[tokio::test]
async fn async_inserter_chunks_and_next_as_take_structs() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "async_readings.hyper").await;
    let table = Reading::table_definition();
    conn.catalog().create_table(&table).await.unwrap();
    let rows: Vec<Reading> = (1..=5).map(reading).collect();
    let mut ins = AsyncInserter::new(&mut conn, &table).await.unwrap();
    for row in &rows[..3] {
        ins.add_struct(row).await.unwrap();
    }
    assert_eq!(ins.execute().await.unwrap(), 3);
    let chunk_rows = rows[3..].to_vec();
    let mut chunk = std::thread::spawn({
        let table = table.clone();
        move || {
            let mut chunk = InsertChunk::new(&table).unwrap();
            for row in &chunk_rows {
                chunk.add_struct(row).unwrap();
            }
            chunk
        }
    })
    .join()
    .unwrap();
    let mut sender = hyperdb_api::AsyncChunkSender::new(&mut conn, &table)
        .await
        .unwrap();
    sender.send(&mut chunk).await.unwrap();
    assert_eq!(sender.execute().await.unwrap(), 2);

    for params in [false, true] {
        let sql = "SELECT * FROM readings ORDER BY id";
        let mut stream = if params {
            conn.execute_query_params(sql, &[]).await.unwrap()
        } else {
            conn.execute_query(sql).await.unwrap()
        };
        let mut read = Vec::new();
        while let Some(row) = stream.next_as::<Reading>().await {
            read.push(row.unwrap());
        }
        assert_eq!(read, rows, "params: {params}");
    }
}

/// `ChunkSender` (sync) over structs, into a table named by the struct's
/// columns under another name.
#[test]
fn structs_go_into_a_table_of_another_name() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "staging.hyper");
    let staging = Reading::with_columns(hyperdb_api::TableDefinition::new("staging"));
    conn.catalog().create_table(&staging).unwrap();
    let mut chunk = InsertChunk::new(&staging).unwrap();
    chunk.add_struct(&reading(1)).unwrap();
    let mut sender = ChunkSender::new(&mut conn, &staging).unwrap();
    sender.send(&mut chunk).unwrap();
    assert_eq!(sender.execute().unwrap(), 1);
    let read: Reading = conn
        .query_as("SELECT * FROM staging")
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(read, reading(1));
}

/// The error of the first row of `sql` read as `T`, from Arrow and from
/// `DataRow`s (the two must agree).
fn first_error<T: for<'r> FromRow<'r> + std::fmt::Debug>(
    conn: &mut Connection,
    sql: &str,
) -> Error {
    let arrow = conn
        .query_as::<T>(sql)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    let wire = conn
        .execute_query_params(sql, &[])
        .unwrap()
        .typed::<T>()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(arrow.to_string(), wire.to_string());
    arrow
}

/// The field's error, unwrapped: asserts it names `rust_type.field`.
fn field_source(err: Error, rust_type: &str, field: &str) -> Error {
    match err {
        Error::Field {
            rust_type: t,
            field: f,
            source,
        } => {
            assert_eq!((t, f), (rust_type, field));
            *source
        }
        other => panic!("not a field error: {other}"),
    }
}

#[test]
fn field_errors_name_the_struct_the_field_and_the_column() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "errors.hyper");

    // A column the struct needs is missing.
    let err = first_error::<Renamed>(
        &mut conn,
        "SELECT 1::BIGINT AS id, 'x' AS \"type\", NULL::TEXT AS label",
    );
    assert!(err.to_string().starts_with("Renamed.id: "), "{err}");
    assert_eq!(err.sqlstate(), "42703");
    match field_source(err, "Renamed", "id") {
        Error::ColumnNotFound { column, .. } => assert_eq!(column, "identifier"),
        other => panic!("{other}"),
    }

    // A column of a type the field cannot read.
    let err = first_error::<Renamed>(
        &mut conn,
        "SELECT 1::BIGINT AS identifier, 2 AS \"type\", NULL::TEXT AS label",
    );
    assert_eq!(err.sqlstate(), "42804");
    match field_source(err, "Renamed", "type") {
        Error::TypeMismatch { column, .. } => assert_eq!(column, "type"),
        other => panic!("{other}"),
    }

    // NULL into a field that is no Option.
    let err = first_error::<Renamed>(
        &mut conn,
        "SELECT NULL::BIGINT AS identifier, 'x' AS \"type\", NULL::TEXT AS label",
    );
    match field_source(err, "Renamed", "id") {
        Error::UnexpectedNull { column } => assert_eq!(column, "identifier"),
        other => panic!("{other}"),
    }

    // By position: too few columns, and the wrong type at a position.
    let err = first_error::<Pair>(&mut conn, "SELECT 1");
    assert!(matches!(
        field_source(err, "Pair", "1"),
        Error::ColumnNotFound { .. }
    ));
    let err = first_error::<Pair>(&mut conn, "SELECT 'a', 'b'");
    assert!(matches!(
        field_source(err, "Pair", "0"),
        Error::TypeMismatch { .. }
    ));

    // A conversion that fails: the column named, the `TryFrom` error kept.
    let sql =
        "SELECT 1::BIGINT AS id, 70000 AS sensor, 'C' AS unit, 0.5::DOUBLE PRECISION AS value, \
               TIMESTAMP '2024-01-01 00:00:00' AS created, NULL::TEXT AS by_user";
    let err = first_error::<Reading>(&mut conn, sql);
    assert_eq!(err.sqlstate(), "22000");
    let source = field_source(err, "Reading", "sensor");
    match &source {
        Error::Conversion { column, source } => {
            assert_eq!(column, "sensor");
            let cause = std::error::Error::source(source).expect("the TryFrom error");
            assert!(cause.to_string().contains("out of range"), "{cause}");
        }
        other => panic!("{other}"),
    }
    let valid = sql.replace("70000", "7");
    let err = first_error::<Reading>(&mut conn, &valid.replace("'C' AS unit", "'F' AS unit"));
    let source = field_source(err, "Reading", "unit");
    assert!(
        source.to_string().contains("unknown unit \"F\""),
        "{source}"
    );

    // A flattened struct's field errors name that struct.
    let err = first_error::<Reading>(
        &mut conn,
        &valid.replace("TIMESTAMP '2024-01-01 00:00:00'", "NULL::TIMESTAMP"),
    );
    assert!(matches!(
        field_source(err, "Audit", "created"),
        Error::UnexpectedNull { .. }
    ));

    // The stream goes on after a row's error.
    let mut rows = conn
        .query_as::<Pair>("SELECT g, NULL::TEXT FROM generate_series(1, 3) AS s(g) ORDER BY g")
        .unwrap();
    assert_eq!(rows.next().unwrap().unwrap(), Pair(1, None));
    assert_eq!(rows.count(), 2);
}

/// A struct whose columns differ from the table's: the inserter refuses
/// the definition before any row; a row the table rejects (a value too
/// long for its column) is refused alone and the insert goes on.
#[test]
fn inserting_structs_checks_definition_and_values() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "insert_errors.hyper");
    let table = Reading::table_definition();
    let other = hyperdb_api::TableDefinition::new("readings")
        .with_not_null_column("id", hyperdb_api::types::SqlType::BigInt);
    conn.catalog().create_table(&other).unwrap();
    let err = Inserter::new(&mut conn, &table).unwrap_err();
    assert!(matches!(err, Error::DefinitionMismatch { .. }), "{err}");
    conn.catalog().drop_table("readings").unwrap();

    #[derive(Table)]
    #[hyper(table = "codes")]
    struct Code {
        #[hyper(sql_type = "VARCHAR(3)")]
        code: String,
    }
    let codes = Code::table_definition();
    conn.catalog().create_table(&codes).unwrap();
    for format in FORMATS {
        let mut ins = Inserter::with_format(&mut conn, &codes, format).unwrap();
        ins.add_struct(&Code { code: "abc".into() }).unwrap();
        let err = ins
            .add_struct(&Code {
                code: "abcd".into(),
            })
            .unwrap_err();
        match &err {
            Error::InvalidRow { kind, column, .. } => {
                assert_eq!(*kind, RowErrorKind::TooLong, "{err}");
                assert_eq!(err.sqlstate(), "22001");
                assert_eq!(column.as_deref(), Some("code"));
            }
            other => panic!("{other}"),
        }
        ins.add_struct(&Code { code: "xyz".into() }).unwrap();
        assert_eq!(ins.execute().unwrap(), 2, "{format:?}");
    }
    let count: i64 = conn.query_scalar("SELECT COUNT(*) FROM codes").unwrap();
    assert_eq!(count, 4);
}
