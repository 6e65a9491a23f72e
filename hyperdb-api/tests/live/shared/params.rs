//! Every `Value` variant binds and reads back exactly.

use super::*;

// --- 3. Parameters -------------------------------------------------------

fn p(s: &str) -> Numeric {
    s.parse().unwrap()
}

fn dec(v: i128, precision: u8, scale: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(vec![v])
            .with_precision_and_scale(precision, scale)
            .unwrap(),
    )
}

/// Each `Value` variant (some twice, into other column types), the SQL type
/// it is bound as, and the one-row column it reads back as.
fn every_value() -> Vec<(Value, &'static str, ArrayRef)> {
    let date = Date::from_ymd(1850, 2, 28).unwrap();
    let time = Time::from_hms_micro(23, 59, 59, 1).unwrap();
    let ts = Timestamp::new(Date::from_ymd(2150, 1, 1).unwrap(), time).unwrap();
    let tstz = TimestampTz::from_utc(Timestamp::new(date, time).unwrap());
    vec![
        (
            Value::Bool(true),
            "BOOL",
            Arc::new(BooleanArray::from(vec![true])),
        ),
        (
            Value::SmallInt(i16::MIN),
            "SMALLINT",
            Arc::new(Int16Array::from(vec![i16::MIN])),
        ),
        (
            Value::Int(i32::MAX),
            "INT",
            Arc::new(Int32Array::from(vec![i32::MAX])),
        ),
        (
            Value::BigInt(i64::MIN),
            "BIGINT",
            Arc::new(Int64Array::from(vec![i64::MIN])),
        ),
        (
            Value::Oid(u32::MAX),
            "OID",
            Arc::new(UInt32Array::from(vec![u32::MAX])),
        ),
        (
            Value::Real(f32::MIN_POSITIVE),
            "REAL",
            Arc::new(Float32Array::from(vec![f32::MIN_POSITIVE])),
        ),
        (
            Value::Double(-f64::MAX),
            "DOUBLE PRECISION",
            Arc::new(Float64Array::from(vec![-f64::MAX])),
        ),
        (
            Value::Text("grüße ✓ 🎉 'q'".into()),
            "TEXT",
            Arc::new(StringArray::from(vec!["grüße ✓ 🎉 'q'"])),
        ),
        (
            Value::Text("0123456789".into()),
            "VARCHAR(10)",
            Arc::new(StringArray::from(vec!["0123456789"])),
        ),
        (
            Value::Text("ü✓€ab".into()),
            "CHAR(5)",
            Arc::new(StringArray::from(vec!["ü✓€ab"])),
        ),
        (
            Value::Text("é".into()),
            "CHAR(1)",
            Arc::new(StringArray::from(vec!["é"])),
        ),
        (
            Value::Text(r#"{"a":[1,2]}"#.into()),
            "JSON",
            Arc::new(StringArray::from(vec![r#"{"a":[1,2]}"#])),
        ),
        (
            Value::Bytes(vec![0, 1, 255, b'\\']),
            "BYTEA",
            Arc::new(BinaryArray::from(vec![&[0u8, 1, 255, b'\\'][..]])),
        ),
        (
            Value::Numeric(p("-12345.678")),
            "NUMERIC(18,3)",
            dec(-12_345_678, 18, 3),
        ),
        (
            Value::Numeric(p("123456789012345678901234567890123.12345")),
            "NUMERIC(38,5)",
            dec(12_345_678_901_234_567_890_123_456_789_012_312_345, 38, 5),
        ),
        (
            Value::Date(date),
            "DATE",
            Arc::new(Date64Array::from(vec![date.unix_days() * DAY_MS])),
        ),
        (
            Value::Time(time),
            "TIME",
            Arc::new(Time64MicrosecondArray::from(vec![time.micros()])),
        ),
        (
            Value::Timestamp(ts),
            "TIMESTAMP",
            Arc::new(TimestampMicrosecondArray::from(vec![ts
                .unix_micros()
                .unwrap()])),
        ),
        (
            Value::TimestampTz(tstz),
            "TIMESTAMPTZ",
            Arc::new(
                TimestampMicrosecondArray::from(vec![tstz.unix_micros().unwrap()])
                    .with_timezone("+00:00"),
            ),
        ),
        (
            Value::Interval(Interval::new(13, -2, 3_600_000_001)),
            "INTERVAL",
            Arc::new(IntervalMonthDayNanoArray::from(vec![
                IntervalMonthDayNano::new(13, -2, 3_600_000_001_000),
            ])),
        ),
        (Value::Null, "INT", new_null_array(&DataType::Int32, 1)),
        (Value::Null, "TEXT", new_null_array(&DataType::Utf8, 1)),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_value_variant_binds_and_reads_back() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "params.hyper").await;
    let cases = every_value();

    // One query binding them all.
    let select = (1..=cases.len())
        .map(|i| format!("${i}::{} AS c{i}", cases[i - 1].1))
        .collect::<Vec<_>>()
        .join(", ");
    let params: Vec<Value> = cases.iter().map(|c| c.0.clone()).collect();
    let got = query(&conn, &format!("SELECT {select}"), params.clone()).await;
    assert_eq!(got.num_rows(), 1);
    for (i, (value, ty, want)) in cases.iter().enumerate() {
        assert_eq!(got.column(i).to_data(), want.to_data(), "{value:?} as {ty}");
    }

    // Each alone, without a cast: the type comes from the value's own.
    // (Not NUMERIC: it is bound with type OID 0, as hyperd requires, so an
    // uncast `$1` is taken for TEXT. Nor the other text types: a TEXT value
    // stays TEXT.)
    for (value, ty, want) in &cases {
        if ty.starts_with("NUMERIC") || matches!(value, Value::Text(_)) && *ty != "TEXT" {
            continue;
        }
        let got = query(&conn, "SELECT $1 AS v", vec![value.clone()]).await;
        if matches!(value, Value::Null) {
            assert!(got.column(0).is_null(0), "untyped NULL");
            continue;
        }
        assert_eq!(got.column(0).to_data(), want.to_data(), "{value:?} uncast");
    }

    // Into a table through execute_command: one row of values, one of NULLs.
    let columns = cases
        .iter()
        .enumerate()
        .map(|(i, c)| format!("c{} {}", i + 1, c.1))
        .collect::<Vec<_>>()
        .join(", ");
    conn.execute_command(&format!("CREATE TABLE p (id INT, {columns})"), &[])
        .await
        .unwrap();
    let placeholders = (2..=cases.len() + 1)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let insert = format!("INSERT INTO p VALUES ($1, {placeholders})");
    let mut row = vec![Value::Int(1)];
    row.extend(params.iter().cloned());
    assert_eq!(conn.execute_command(&insert, &row).await.unwrap(), 1);
    let mut nulls = vec![Value::Int(2)];
    nulls.extend(cases.iter().map(|_| Value::Null));
    assert_eq!(conn.execute_command(&insert, &nulls).await.unwrap(), 1);
    // Filtered by parameters of each kind, too.
    assert_eq!(
        conn.execute_command(
            "UPDATE p SET c1 = $1 WHERE id = $2 AND c4 = $3 AND c8 = $4",
            &[
                Value::Bool(false),
                Value::Int(1),
                Value::BigInt(i64::MIN),
                Value::Text("grüße ✓ 🎉 'q'".into())
            ],
        )
        .await
        .unwrap(),
        1
    );
    for arrow_route in [true, false] {
        let got = if arrow_route {
            query(&conn, "SELECT * FROM p ORDER BY id", vec![]).await
        } else {
            query(
                &conn,
                "SELECT * FROM p WHERE id > $1 ORDER BY id",
                vec![Value::Int(0)],
            )
            .await
        };
        assert_eq!(got.num_rows(), 2);
        for (i, (value, ty, want)) in cases.iter().enumerate() {
            let want = if i == 0 {
                Arc::new(BooleanArray::from(vec![false])) as ArrayRef
            } else {
                want.clone()
            };
            let want = arrow_select::concat::concat(&[
                want.as_ref(),
                new_null_array(want.data_type(), 1).as_ref(),
            ])
            .unwrap();
            assert_eq!(
                got.column(i + 1).to_data(),
                want.to_data(),
                "{value:?} into {ty} (Arrow route: {arrow_route})"
            );
        }
    }
}
