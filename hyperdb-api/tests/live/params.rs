//! Bound parameters for every type, `query_as` with tuples and `FromRow`.

use hyperdb_api::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz, ToPgBinary};
use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, Error, FromRow, Row, RowValues,
};

use crate::common::{server, temp_dir, types_and_raw};

fn connect() -> Connection {
    Connection::connect_with(&ConnectOptions::new(server().endpoint().clone())).unwrap()
}

#[test]
fn every_type_binds_and_reads_back() {
    let mut c = connect();
    let n: Numeric = "-12345.678".parse().unwrap();
    let n38: Numeric = "-1234567890123456789012345678.0123456789".parse().unwrap();
    let date = Date::from_ymd(1850, 2, 28).unwrap();
    let time = Time::from_hms_micro(23, 59, 59, 1).unwrap();
    let ts = Timestamp::new(Date::from_ymd(2150, 1, 1).unwrap(), time).unwrap();
    let tstz = TimestampTz::from_utc(ts);
    let iv = Interval::new(13, -2, 3_600_000_001);
    let row: Vec<Row> = c
        .execute_query_params(
            "SELECT $1::bool, $2::smallint, $3::int, $4::bigint, $5::real, $6::double precision, $7::oid, \
             $8::numeric(18,3), $9::numeric(38,10), $10::text, $11::bytea, $12::date, $13::time, $14::timestamp, \
             $15::timestamptz, $16::interval, $17::int",
            &[
                &true, &i16::MIN, &i32::MAX, &i64::MIN, &f32::INFINITY, &-0.5f64, &u32::MAX, &n, &n38, &"ünï ✓",
                &vec![0u8, 1, 255], &date, &time, &ts, &tstz, &iv, &None::<i32>,
            ],
        )
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    let r = &row[0];
    assert!(r.try_get::<bool>(0).unwrap());
    assert_eq!(r.try_get::<i16>(1).unwrap(), i16::MIN);
    assert_eq!(r.try_get::<i32>(2).unwrap(), i32::MAX);
    assert_eq!(r.try_get::<i64>(3).unwrap(), i64::MIN);
    assert_eq!(r.try_get::<f32>(4).unwrap(), f32::INFINITY);
    assert_eq!(r.try_get::<f64>(5).unwrap(), -0.5);
    assert_eq!(r.try_get::<u32>(6).unwrap(), u32::MAX);
    assert_eq!(r.try_get::<Numeric>(7).unwrap(), n);
    assert_eq!(r.try_get::<Numeric>(8).unwrap(), n38);
    assert_eq!(r.try_get::<String>(9).unwrap(), "ünï ✓");
    assert_eq!(r.try_get::<Vec<u8>>(10).unwrap(), vec![0, 1, 255]);
    assert_eq!(r.try_get::<Date>(11).unwrap(), date);
    assert_eq!(r.try_get::<Time>(12).unwrap(), time);
    assert_eq!(r.try_get::<Timestamp>(13).unwrap(), ts);
    assert_eq!(r.try_get::<TimestampTz>(14).unwrap(), tstz);
    assert_eq!(r.try_get::<Interval>(15).unwrap(), iv);
    assert_eq!(r.try_get::<Option<i32>>(16).unwrap(), None);
}

#[test]
fn scaled_numeric_parameters_filter_and_insert() {
    let dir = temp_dir();
    let mut c = Connection::connect(
        server().endpoint(),
        dir.path().join("p.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    c.execute_command("CREATE TABLE prices (item TEXT, price NUMERIC(10,2), fine NUMERIC(38,6))")
        .unwrap();
    let insert = "INSERT INTO prices VALUES ($1, $2, $3)";
    let p = |s: &str| s.parse::<Numeric>().unwrap();
    assert_eq!(
        c.execute_command_params(insert, &[&"a", &p("19.99"), &p("-0.000001")])
            .unwrap(),
        1
    );
    assert_eq!(
        c.execute_command_params(insert, &[&"b", &p("-0.50"), &None::<Numeric>])
            .unwrap(),
        1
    );
    assert_eq!(
        c.execute_command_params(
            insert,
            &[
                &"c",
                &p("100.00"),
                &p("123456789012345678901234567890.123456")
            ]
        )
        .unwrap(),
        1
    );
    let cheap: Vec<(String,)> = c
        .execute_query_params(
            "SELECT item FROM prices WHERE price < $1 ORDER BY item",
            &[&p("20.00")],
        )
        .unwrap()
        .typed()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(cheap, vec![("a".to_string(),), ("b".to_string(),)]);
    assert_eq!(
        c.query_scalar::<String>("SELECT fine::text FROM prices WHERE item = 'c'")
            .unwrap(),
        "123456789012345678901234567890.123456"
    );
    assert_eq!(
        c.execute_command_params("DELETE FROM prices WHERE price = $1", &[&p("-0.50")])
            .unwrap(),
        1
    );
}

/// A `Numeric` parameter of any scale (it binds as decimal text, its type
/// inferred): in binary, anything but the inferred scale failed with 0A000
/// "cannot handle truncation when reading numerics" (`1.5` or `1` into a
/// NUMERIC(5,2)). Inserts round to the column's scale as a literal does;
/// comparisons and arithmetic take the column's type; prepared statements
/// too; a value past the precision is 22003.
#[test]
fn numeric_parameters_of_any_scale() {
    let dir = temp_dir();
    let mut c = Connection::connect(
        server().endpoint(),
        dir.path().join("n.hyper"),
        CreateMode::Create,
    )
    .unwrap();
    c.execute_command("CREATE TABLE t (n NUMERIC(5,2), m NUMERIC(38,10))")
        .unwrap();
    let p = |s: &str| s.parse::<Numeric>().unwrap();
    for v in ["1.5", "1", "0", "-0.5", "1.255", "12.3"] {
        c.execute_command_params("INSERT INTO t VALUES ($1, $2)", &[&p(v), &p(v)])
            .unwrap_or_else(|e| panic!("{v}: {e}"));
    }
    let stored: Vec<(String, String)> = c
        .query_as("SELECT n::TEXT, m::TEXT FROM t ORDER BY m")
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    let n: Vec<&str> = stored.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(n, ["-0.50", "0.00", "1.00", "1.26", "1.50", "12.30"]);
    assert_eq!(stored[3].1, "1.2550000000");
    let count = |c: &mut Connection, sql: &str, v: &str| -> i64 {
        let mut rows = c.execute_query_params(sql, &[&p(v)]).unwrap();
        rows.next_row().unwrap().unwrap().try_get(0).unwrap()
    };
    assert_eq!(
        count(&mut c, "SELECT count(*)::BIGINT FROM t WHERE n = $1", "1.5"),
        1
    );
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*)::BIGINT FROM t WHERE m > $1",
            "1.25"
        ),
        3
    );
    let sum: String = c
        .execute_query_params("SELECT (n + $1)::TEXT FROM t WHERE n = 12.3", &[&p("0.7")])
        .unwrap()
        .next_row()
        .unwrap()
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(sum, "13.00");
    let e = c
        .execute_command_params("INSERT INTO t (n) VALUES ($1)", &[&p("1000")])
        .unwrap_err();
    assert_eq!(e.sqlstate(), "22003", "{e}");
    // A prepared statement with the type declared takes any scale too.
    let st = c
        .prepare_typed(
            "INSERT INTO t (n) VALUES ($1)",
            &[hyperdb_api::types::SqlType::numeric(5, 2).unwrap()],
        )
        .unwrap();
    c.execute(&st, &[&p("2.5")]).unwrap();
    assert_eq!(
        count(
            &mut c,
            "SELECT count(*)::BIGINT FROM t WHERE n = $1",
            "2.50"
        ),
        1
    );
}

#[test]
fn parameter_errors_are_typed_and_harmless() {
    let mut c = connect();
    // A cast failure happens while rows are produced: it comes through the stream.
    let rows: Vec<_> = c
        .execute_query_params("SELECT $1::int", &[&"not a number"])
        .unwrap()
        .collect();
    let e = rows
        .into_iter()
        .find_map(Result::err)
        .expect("an error row");
    assert!(e.code().is_some(), "server rejects the value: {e:?}");
    let e = c
        .execute_query_params("SELECT $1::int, $2::int", &[&1i32])
        .unwrap_err();
    assert!(e.code().is_some(), "missing parameter: {e:?}");
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);

    // TIME 24:00:00 is not sent: stored, Tableau's Hyper API could not
    // read the table. Refused before anything went, the table unchanged.
    c.execute_command("CREATE TEMPORARY TABLE times (t TIME)")
        .unwrap();
    let midnight = Time::from_micros(86_400_000_000).unwrap();
    let e = c
        .execute_command_params("INSERT INTO times VALUES ($1)", &[&midnight])
        .unwrap_err();
    assert_eq!(e.sqlstate(), "22023", "{e}");
    assert!(e.to_string().contains("24:00:00"), "{e}");
    assert_eq!(
        c.query_scalar::<i64>("SELECT count(*) FROM times").unwrap(),
        0
    );
    let last = Time::from_micros(86_399_999_999).unwrap();
    c.execute_command_params("INSERT INTO times VALUES ($1)", &[&last])
        .unwrap();
    assert_eq!(c.query_scalar::<Time>("SELECT t FROM times").unwrap(), last);
}

#[derive(Debug, PartialEq)]
struct Measurement {
    id: i32,
    value: Option<f64>,
}

impl FromRow<'_> for Measurement {
    fn from_row(row: &Row) -> hyperdb_api::Result<Self> {
        Ok(Measurement {
            id: row.try_get("id")?,
            value: row.try_get("value")?,
        })
    }
}

#[test]
fn query_as_tuples_and_structs() {
    let mut c = connect();
    let pairs: Vec<(i32, String)> = c
        .query_as("SELECT i, 'v' || i FROM generate_series(1, 3) g(i) ORDER BY i")
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(
        pairs,
        vec![(1, "v1".into()), (2, "v2".into()), (3, "v3".into())]
    );
    let ms: Vec<Measurement> = c
        .query_as(
            "SELECT 1 AS id, 0.5::double precision AS value UNION ALL SELECT 2, NULL ORDER BY id",
        )
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(
        ms,
        vec![
            Measurement {
                id: 1,
                value: Some(0.5)
            },
            Measurement { id: 2, value: None }
        ]
    );
    let e = c
        .query_as::<(i32, i32)>("SELECT 1")
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::ColumnNotFound { .. }), "{e:?}");
    let e = c
        .query_as::<(String,)>("SELECT 1")
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::TypeMismatch { .. }), "{e:?}");
    let e = c
        .query_as::<(i16,)>("SELECT 100000")
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(e, Error::TypeMismatch { .. } | Error::Conversion { .. }),
        "{e:?}"
    );
    assert_eq!(c.query_scalar::<i32>("SELECT 5").unwrap(), 5);
}

#[tokio::test]
async fn async_parameters_and_typed_rows() {
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(server().endpoint().clone()))
        .await
        .unwrap();
    let params: [&dyn ToPgBinary; 2] = [&41i64, &"x"];
    let mut rows = c
        .execute_query_params("SELECT $1 + 1, $2 || 'y'", &params)
        .await
        .unwrap();
    let (n, s): (i64, String) = rows.next_as().await.unwrap().unwrap();
    assert_eq!((n, s.as_str()), (42, "xy"));
    assert!(rows.next().await.is_none());
    drop(rows);
    assert_eq!(
        c.execute_command_params("SELECT $1::int", &[&1i32])
            .await
            .unwrap(),
        1
    );
}

/// `execute_query` serves plain queries from Arrow, `execute_query_params`
/// from DataRows: the same values, types and errors either way.
#[test]
fn both_row_paths_agree() {
    let mut c = connect();
    let queries = [
        "SELECT 'ab'::char(5) AS c5, 'x'::char(1) AS c1, 'abc'::varchar(4) AS v, ''::text AS e",
        "SELECT NULL::int AS n, 1.5::numeric(10,3) AS d, (-0.5)::numeric(38,6) AS d38",
        "SELECT DATE '1066-10-14' AS d, TIMESTAMP '1850-03-04 05:06:07.123456' AS ts, \
         TIMESTAMPTZ '2101-01-01 12:00:00+00' AS tz, INTERVAL '-14 months 3 days' AS iv, TIME '24:00:00' AS t",
        "SELECT 'infinity'::timestamp AS inf, '-infinity'::timestamp AS ninf, 'NaN'::double precision AS nan",
        "SELECT CAST('POINT(1 2)' AS TABLEAU.TABGEOGRAPHY) AS g, '{\"a\":1}'::json AS j, 7::oid AS o",
        "WITH t(x) AS (VALUES (1), (2)) SELECT x, x > 1 AS big FROM t ORDER BY x",
        // Wider than the spans a row carries inline: owned rows index their
        // block on first read.
        "WITH t(x) AS (VALUES (1), (2), (3)) SELECT x, x + 1 AS a, x * 2 AS b, \
         NULL::int AS n, 'w' || x AS s, x::bigint AS l, x / 2.0 AS q, x > 1 AS g, \
         ''::text AS e, x::double precision AS f FROM t ORDER BY x",
    ];
    for sql in queries {
        let arrow = types_and_raw(c.execute_query(sql).unwrap());
        let wire = types_and_raw(c.execute_query_params(sql, &[]).unwrap());
        assert_eq!(arrow, wire, "{sql}");
    }
    // Wide DataRows held past the stream read what the lent rows read.
    let sql = queries[queries.len() - 1];
    let raw = |r: &hyperdb_api::Row| -> Vec<Option<Vec<u8>>> {
        (0..r.len())
            .map(|i| r.raw(i).unwrap().map(<[u8]>::to_vec))
            .collect()
    };
    let held: Vec<hyperdb_api::Row> = c
        .execute_query_params(sql, &[])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut lent = Vec::new();
    let mut rows = c.execute_query_params(sql, &[]).unwrap();
    while let Some(r) = rows.next_row() {
        lent.push(raw(r.unwrap()));
    }
    drop(rows);
    assert_eq!(lent.len(), 3);
    assert_eq!(held.iter().map(raw).collect::<Vec<_>>(), lent);
    // A value Arrow cannot express: execute_query falls back to DataRows.
    let t: hyperdb_api::types::Time = c.query_scalar("SELECT TIME '24:00:00'").unwrap();
    assert_eq!(t.to_string(), "24:00:00");
    // Errors, positions included.
    let sql = "SELECT nope FROM generate_series(1, 3) g(i)";
    let a = c.execute_query(sql).unwrap_err();
    let w = c.execute_query_params(sql, &[]).unwrap_err();
    assert_eq!(a.code(), w.code());
    assert_eq!(
        a.db_error().map(|d| (&d.message, d.position)),
        w.db_error().map(|d| (&d.message, d.position))
    );
}

/// Parameterized futures are `Send` (the values are encoded before the first
/// poll), so they can run on a spawned task.
#[tokio::test]
async fn parameterized_futures_can_be_spawned() {
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(server().endpoint().clone()))
        .await
        .unwrap();
    let n = tokio::spawn(async move {
        let fut = c.execute_command_params("SELECT $1::int", &[&1i32]);
        fut.await.unwrap()
    })
    .await
    .unwrap();
    assert_eq!(n, 1);
}

/// A `Measurement` read in column order too; `from_values` must build what
/// `from_row` builds.
#[derive(Debug, PartialEq)]
struct InOrder {
    id: i32,
    label: Option<String>,
}

impl<'r> FromRow<'r> for InOrder {
    fn from_row(row: &'r Row) -> hyperdb_api::Result<Self> {
        Ok(InOrder {
            id: row.try_get(0)?,
            label: row.try_get(1)?,
        })
    }

    fn from_values(values: &mut RowValues<'r>) -> Option<hyperdb_api::Result<Self>> {
        Some(values.read().and_then(|id| {
            Ok(InOrder {
                id,
                label: values.read()?,
            })
        }))
    }

    fn try_from_values(values: &mut RowValues<'r>) -> Option<Self> {
        Some(InOrder {
            id: values.try_read()?,
            label: values.try_read()?,
        })
    }
}

/// Tuples over `DataRow`s are decoded in column order, straight from the
/// row's bytes: the same values as `try_get`, and the same errors, each
/// for its own row (the rows after it still read) and the connection
/// still usable.
#[test]
fn tuples_read_in_column_order_match_try_get() {
    let mut c = connect();
    let sql = "SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'r' || i END AS s, \
               i / 4.0::double precision AS d, CASE WHEN i % 2 = 0 THEN NULL ELSE -i::bigint END AS l, \
               (i - 0.5)::numeric(38, 6) AS n, DATE '1899-12-31' + i AS day \
               FROM generate_series(1, 2000) g(i) ORDER BY i";
    type Tuple = (i32, Option<String>, Option<f64>, Option<i64>, Numeric, Date);
    let typed: Vec<Tuple> = c
        .execute_query_params(sql, &[])
        .unwrap()
        .typed::<Tuple>()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    let mut by_index = Vec::new();
    let mut rows = c.execute_query_params(sql, &[]).unwrap();
    while let Some(r) = rows.next_row() {
        let r = r.unwrap();
        by_index.push((
            r.try_get(0).unwrap(),
            r.try_get(1).unwrap(),
            r.try_get(2).unwrap(),
            r.try_get(3).unwrap(),
            r.try_get(4).unwrap(),
            r.try_get(5).unwrap(),
        ));
    }
    drop(rows);
    assert_eq!(typed.len(), 2000);
    assert_eq!(typed, by_index);
    assert_eq!(typed[2].1, None);
    assert_eq!(typed[0].4.to_string(), "0.500000");
    // Fewer tuple fields than columns: the rest of each row is skipped.
    let firsts: Vec<(i32,)> = c
        .execute_query_params(sql, &[])
        .unwrap()
        .typed()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(firsts.last(), Some(&(2000,)));
    // A struct with its own in-order reader.
    let structs: Vec<InOrder> = c
        .execute_query_params(
            "SELECT i, CASE WHEN i = 2 THEN NULL ELSE 'v' || i END FROM generate_series(1, 3) g(i) ORDER BY i",
            &[],
        )
        .unwrap()
        .typed()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(
        structs,
        vec![
            InOrder {
                id: 1,
                label: Some("v1".into())
            },
            InOrder { id: 2, label: None },
            InOrder {
                id: 3,
                label: Some("v3".into())
            },
        ]
    );

    // Its failed rows are read again, the checked way, for their errors.
    let got: Vec<_> = c
        .execute_query_params(
            "SELECT CASE WHEN i = 2 THEN NULL ELSE i END, 'v' || i FROM generate_series(1, 3) g(i) ORDER BY i",
            &[],
        )
        .unwrap()
        .typed::<InOrder>()
        .collect();
    assert!(
        matches!(&got[1], Err(Error::UnexpectedNull { .. })),
        "{:?}",
        got[1]
    );
    assert_eq!(got[2].as_ref().unwrap().id, 3);

    // Errors: a NULL into a non-Option, mid-row, fails that row only.
    let got: Vec<_> = c
        .execute_query_params(
            "SELECT i, CASE WHEN i = 2 THEN NULL ELSE i END, 'x' || i FROM generate_series(1, 3) g(i) ORDER BY i",
            &[],
        )
        .unwrap()
        .typed::<(i32, i32, String)>()
        .collect();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].as_ref().unwrap(), &(1, 1, "x1".to_owned()));
    assert!(
        matches!(&got[1], Err(Error::UnexpectedNull { column }) if column == "case"),
        "{:?}",
        got[1]
    );
    assert_eq!(got[2].as_ref().unwrap(), &(3, 3, "x3".to_owned()));
    // A type that cannot read the column, a value that does not fit, a
    // column that is not there.
    let mut rows = c
        .execute_query_params("SELECT i, 'a' FROM generate_series(1, 2) g(i)", &[])
        .unwrap()
        .typed::<(String, String)>();
    assert!(matches!(rows.next(), Some(Err(Error::TypeMismatch { .. }))));
    assert!(matches!(rows.next(), Some(Err(Error::TypeMismatch { .. }))));
    assert!(rows.next().is_none());
    drop(rows);
    let got: Vec<_> = c
        .execute_query_params("SELECT * FROM (VALUES (1), (100000), (3)) v(x)", &[])
        .unwrap()
        .typed::<(i16,)>()
        .collect();
    assert!(
        matches!(got[1], Err(Error::Conversion { .. })),
        "{:?}",
        got[1]
    );
    assert_eq!(
        (got[0].as_ref().unwrap(), got[2].as_ref().unwrap()),
        (&(1,), &(3,))
    );
    let e = c
        .execute_query_params("SELECT 1", &[])
        .unwrap()
        .typed::<(i32, i32)>()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::ColumnNotFound { .. }), "{e:?}");
    assert_eq!(c.query_scalar::<i32>("SELECT 5").unwrap(), 5);
}

/// Every row of `sql` read by index (`FromRow::from_row` of a tuple is one
/// `Row::try_get` per column), from owned rows.
fn by_try_get<T: for<'r> FromRow<'r>>(c: &mut Connection, sql: &str) -> Vec<T> {
    c.execute_query_params(sql, &[])
        .unwrap()
        .map(|r| T::from_row(&r.unwrap()).unwrap())
        .collect()
}

/// Tuples whose every column has its own fixed-width type (INT for
/// `i32`, ...) are read with the types checked once per result
/// (`FromRow::reads_plain`): the same values as `try_get` for every such
/// type, edge values and NULLs included; a row with a NULL, or a NULL in a
/// non-`Option`, is read the checked way and fails alone.
#[test]
fn plain_tuples_match_try_get() {
    type Fixed = (bool, i16, i32, Option<i64>, u32, f32, Option<f64>, Date);
    type Times = (Time, Option<Timestamp>, TimestampTz, Interval, i32);
    let fixed = "SELECT i % 3 = 0 AS b, \
         (CASE WHEN i = 1 THEN -32768 WHEN i = 2 THEN 32767 ELSE i END)::smallint AS s, \
         CASE WHEN i = 1 THEN -2147483648 WHEN i = 2 THEN 2147483647 ELSE i END AS n, \
         CASE WHEN i % 5 = 0 THEN NULL WHEN i = 1 THEN -9223372036854775808 \
              ELSE i::bigint * 1000000007 END AS l, \
         (i * 1000)::oid AS o, \
         (CASE WHEN i = 1 THEN 'NaN'::real ELSE i / 3.0 END)::real AS r, \
         CASE WHEN i = 1 THEN 'Infinity'::double precision WHEN i = 2 THEN '-Infinity' \
              WHEN i = 3 THEN 'NaN' WHEN i % 7 = 0 THEN NULL ELSE i / -7.0 END AS d, \
         DATE '1899-12-31' + i * 37 AS day \
         FROM generate_series(1, 3000) g(i) ORDER BY i";
    let times = "SELECT TIME '00:00:00' + i * INTERVAL '17 seconds' AS t, \
         CASE WHEN i % 4 = 0 THEN NULL \
              ELSE TIMESTAMP '1800-01-01 00:00:00' + i * INTERVAL '13 days' END AS ts, \
         TIMESTAMPTZ '2100-06-01 00:00:00+00' + i * INTERVAL '1 hour' AS tz, \
         i * INTERVAL '1 day 2 hours' - INTERVAL '1 month' AS iv, i \
         FROM generate_series(1, 3000) g(i) ORDER BY i";
    let mut c = connect();

    let rows = c.execute_query_params(fixed, &[]).unwrap();
    assert!(<Fixed as FromRow>::reads_plain(rows.schema()));
    let typed: Vec<Fixed> = rows.typed().collect::<hyperdb_api::Result<_>>().unwrap();
    let by_index = by_try_get::<Fixed>(&mut c, fixed);
    assert_eq!(typed.len(), 3000);
    // Debug, so that NaN equals NaN.
    assert_eq!(format!("{typed:?}"), format!("{by_index:?}"));
    assert_eq!(
        (typed[0].1, typed[0].2, typed[0].3),
        (-32768, -2147483648, Some(i64::MIN))
    );
    assert_eq!((typed[1].1, typed[1].2), (32767, 2147483647));
    assert!(typed[0].5.is_nan() && typed[2].6.is_some_and(f64::is_nan));
    assert_eq!(
        (typed[0].6, typed[1].6, typed[4].3),
        (Some(f64::INFINITY), Some(f64::NEG_INFINITY), None)
    );
    assert_eq!(typed[2999].4, 3_000_000);

    let rows = c.execute_query_params(times, &[]).unwrap();
    assert!(<Times as FromRow>::reads_plain(rows.schema()));
    let typed: Vec<Times> = rows.typed().collect::<hyperdb_api::Result<_>>().unwrap();
    let by_index = by_try_get::<Times>(&mut c, times);
    assert_eq!(typed, by_index);
    assert_eq!(typed[3].1, None);
    assert_eq!(typed[0].1, Some("1800-01-14 00:00:00".parse().unwrap()));

    // A NULL into a non-Option fails its row only; a widening tuple reads
    // the same result the checked way.
    let sql = "SELECT i, CASE WHEN i = 2 THEN NULL ELSE -i::bigint END FROM generate_series(1, 3) g(i) ORDER BY i";
    let rows = c.execute_query_params(sql, &[]).unwrap();
    assert!(<(i32, i64) as FromRow>::reads_plain(rows.schema()));
    let got: Vec<_> = rows.typed::<(i32, i64)>().collect();
    assert_eq!(got[0].as_ref().unwrap(), &(1, -1));
    assert!(
        matches!(&got[1], Err(Error::UnexpectedNull { .. })),
        "{:?}",
        got[1]
    );
    assert_eq!(got[2].as_ref().unwrap(), &(3, -3));
    let rows = c.execute_query_params(sql, &[]).unwrap();
    assert!(!<(i64, Option<i64>) as FromRow>::reads_plain(rows.schema()));
    let wide: Vec<(i64, Option<i64>)> = rows.typed().collect::<hyperdb_api::Result<_>>().unwrap();
    assert_eq!(wide, vec![(1, Some(-1)), (2, None), (3, Some(-3))]);
    assert_eq!(c.query_scalar::<i32>("SELECT 6").unwrap(), 6);
}

/// The async stream reads tuples the same way.
#[tokio::test]
async fn async_tuples_read_in_column_order() {
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(server().endpoint().clone()))
        .await
        .unwrap();
    let mut rows = c
        .execute_query_params(
            "SELECT i, CASE WHEN i = 2 THEN NULL ELSE i END, 'x' || i FROM generate_series(1, 3) g(i) ORDER BY i",
            &[],
        )
        .await
        .unwrap();
    let first: (i32, Option<i32>, String) = rows.next_as().await.unwrap().unwrap();
    assert_eq!(first, (1, Some(1), "x1".to_owned()));
    let e = rows
        .next_as::<(i32, i32, String)>()
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::UnexpectedNull { .. }), "{e:?}");
    let last: (i32, i32, String) = rows.next_as().await.unwrap().unwrap();
    assert_eq!(last, (3, 3, "x3".to_owned()));
    assert!(rows.next_as::<(i32,)>().await.is_none());
    drop(rows);
    // Fixed-width columns read as they lie (`FromRow::reads_plain`), with
    // a NULL read the checked way.
    let mut rows = c
        .execute_query_params(
            "SELECT i, CASE WHEN i = 2 THEN NULL ELSE i * 1.5::double precision END \
             FROM generate_series(1, 4) g(i) ORDER BY i",
            &[],
        )
        .await
        .unwrap();
    let first: (i32, Option<f64>) = rows.next_as().await.unwrap().unwrap();
    assert_eq!(first, (1, Some(1.5)));
    let e = rows.next_as::<(i32, f64)>().await.unwrap().unwrap_err();
    assert!(matches!(e, Error::UnexpectedNull { .. }), "{e:?}");
    let third: (i32, f64) = rows.next_as().await.unwrap().unwrap();
    assert_eq!(third, (3, 4.5));
    let fourth: (i32, Option<f64>) = rows.next_as().await.unwrap().unwrap();
    assert_eq!(fourth, (4, Some(6.0)));
    assert!(rows.next_as::<(i32, f64)>().await.is_none());
}
