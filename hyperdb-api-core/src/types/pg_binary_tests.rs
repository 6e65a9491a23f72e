use super::*;

fn enc<T: ToPgBinary + ?Sized>(v: &T) -> Vec<u8> {
    let mut buf = BytesMut::new();
    assert_eq!(v.encode_pg_binary(&mut buf).ok(), Some(IsNull::No));
    buf.to_vec()
}

fn rt<T>(ty: SqlType, v: T)
where
    T: ToPgBinary + for<'a> FromPgBinary<'a> + PartialEq + std::fmt::Debug,
{
    let raw = enc(&v);
    assert_eq!(T::decode_pg_binary(&ty, &raw).ok(), Some(v), "{ty}");
}

/// Bytes that hyperd 0.0.26963 accepted as binary parameters and echoed
/// back as the expected text (`SELECT $1::type`).
#[test]
fn layouts_hyperd_accepts() {
    assert_eq!(enc(&true), [1]);
    assert_eq!(enc(&-2i16), (-2i16).to_be_bytes());
    assert_eq!(enc(&-7i32), (-7i32).to_be_bytes());
    assert_eq!(enc(&i64::MIN), i64::MIN.to_be_bytes());
    assert_eq!(enc(&1.5f32), [0x3f, 0xc0, 0, 0]);
    assert_eq!(enc(&-2.25f64), (-2.25f64).to_be_bytes());
    assert_eq!(enc(&4_000_000_000u32), 4_000_000_000u32.to_be_bytes());
    assert_eq!(enc(&"héllo"), "héllo".as_bytes());
    assert_eq!(enc(&[0u8, 1, 0xff].as_slice()), [0, 1, 0xff]);
    let date = |y, m, d| Date::from_ymd(y, m, d).expect("date");
    assert_eq!(enc(&date(1, 1, 1)), (-730_119i32).to_be_bytes());
    assert_eq!(enc(&date(9999, 12, 31)), 2_921_939i32.to_be_bytes());
    assert_eq!(
        enc(&Time::from_hms_micro(1, 2, 3, 4).expect("time")),
        3_723_000_004i64.to_be_bytes()
    );
    assert_eq!(
        enc(&Timestamp::from_micros_since_2000(1_000_001)),
        1_000_001i64.to_be_bytes()
    );
    assert_eq!(
        enc(&TimestampTz::from_micros_since_2000(-1)),
        (-1i64).to_be_bytes()
    );
    let mut iv = 3i64.to_be_bytes().to_vec();
    iv.extend_from_slice(&2i32.to_be_bytes());
    iv.extend_from_slice(&1i32.to_be_bytes());
    assert_eq!(enc(&Interval::new(1, 2, 3)), iv);
    // NUMERIC binds as its decimal text (format 0), its type inferred.
    let n: Numeric = "-0.05".parse().expect("numeric");
    assert_eq!(enc(&n), b"-0.05");
    assert_eq!(n.param_format(), FORMAT_TEXT);
    assert_eq!(n.param_type_oid(), 0);
    assert_eq!(Some(n).param_format(), FORMAT_TEXT);
    assert_eq!(<&Numeric as ToPgBinary>::param_format(&&n), FORMAT_TEXT);
    assert_eq!(1i32.param_format(), FORMAT_BINARY);
}

#[test]
fn declared_oids() {
    assert_eq!(<i32 as ToPgBinary>::type_oid(), 23);
    assert_eq!(<Option<i64> as ToPgBinary>::type_oid(), 20);
    assert_eq!(None::<Date>.param_type_oid(), 1082);
    assert_eq!("x".param_type_oid(), 25);
    assert_eq!(<Vec<u8> as ToPgBinary>::type_oid(), 17);
    assert_eq!(
        TimestampTz::from_micros_since_2000(0).param_type_oid(),
        1184
    );
    // hyperd must infer NUMERIC parameters' scale from the statement.
    assert_eq!(Numeric::ZERO.param_type_oid(), 0);
    let dynamic: [&dyn ToPgBinary; 2] = [&1i16, &Interval::ZERO];
    assert_eq!(dynamic.map(|p| p.param_type_oid()), [21, 1186]);
}

#[test]
fn bind_framing() {
    let mut buf = BytesMut::new();
    put_param(&5i32, &mut buf).expect("int");
    put_param(&None::<i32>, &mut buf).expect("null");
    put_param(&"", &mut buf).expect("empty");
    let mut want = 4i32.to_be_bytes().to_vec();
    want.extend_from_slice(&5i32.to_be_bytes());
    want.extend_from_slice(&(-1i32).to_be_bytes());
    want.extend_from_slice(&0i32.to_be_bytes());
    assert_eq!(buf.to_vec(), want);
    let before = buf.len();
    let far = Date::from_julian_day(i32::MIN);
    assert!(put_param(&far, &mut buf).is_err());
    assert_eq!(buf.len(), before, "a failed parameter leaves no bytes");
}

#[test]
fn round_trips() {
    rt(SqlType::Bool, false);
    rt(SqlType::SmallInt, i16::MIN);
    rt(SqlType::Int, i32::MAX);
    rt(SqlType::BigInt, i64::MIN);
    rt(SqlType::Oid, u32::MAX);
    rt(SqlType::Real, f32::INFINITY);
    rt(SqlType::Double, f64::NEG_INFINITY);
    rt(SqlType::Text, String::from("ünïcødé ✓"));
    rt(SqlType::Bytea, vec![0u8, 255]);
    for text in [
        "0001-01-01",
        "1899-12-31",
        "2101-01-01",
        "9999-12-31",
        "4713-01-01 BC",
    ] {
        rt(SqlType::Date, text.parse::<Date>().expect(text));
    }
    rt(
        SqlType::Time,
        Time::from_micros(86_399_999_999).expect("23:59:59.999999"),
    );
    rt(
        SqlType::Timestamp,
        "1899-12-31 23:59:59.999999"
            .parse::<Timestamp>()
            .expect("ts"),
    );
    rt(
        SqlType::TimestampTz,
        TimestampTz::from_micros_since_2000(i64::MAX),
    );
    rt(SqlType::Interval, Interval::new(-1, i32::MIN, i64::MAX));
    for text in [
        "0",
        "-0.05",
        "123.4500",
        "99999999999999999999999999999999999999",
        "-0.00000000000000000000000000000000000001",
    ] {
        let n: Numeric = text.parse().expect(text);
        let mut raw = BytesMut::new();
        super::pg_numeric::encode(n, &mut raw);
        let back = Numeric::decode_pg_binary(
            &SqlType::Numeric {
                precision: 38,
                scale: n.scale(),
            },
            &raw,
        )
        .expect(text);
        assert_eq!(back.to_string(), text);
    }
}

#[test]
fn decode_checks() {
    assert!(i32::decode_pg_binary(&SqlType::Int, &[0, 0, 1]).is_err());
    assert_eq!(
        i32::decode_pg_binary(&SqlType::SmallInt, &[0xff, 0xfe]).ok(),
        Some(-2)
    );
    assert_eq!(
        i64::decode_pg_binary(&SqlType::Int, &[0, 0, 0, 9]).ok(),
        Some(9)
    );
    assert!(i16::decode_pg_binary(&SqlType::Int, &[0, 0, 0, 9]).is_err());
    assert!(bool::decode_pg_binary(&SqlType::Bool, &[7]).is_err());
    assert!(<&str>::decode_pg_binary(&SqlType::Text, &[0xc3]).is_err());
    assert!(String::decode_pg_binary(&SqlType::Bytea, b"x").is_err());
    assert!(Time::decode_pg_binary(&SqlType::Time, &(-5i64).to_be_bytes()).is_err());
    // 24:00:00 is read (hyperd returns it), never sent.
    let midnight = Time::from_micros(86_400_000_000).expect("24:00");
    assert_eq!(
        Time::decode_pg_binary(&SqlType::Time, &86_400_000_000i64.to_be_bytes()).ok(),
        Some(midnight)
    );
    let e = midnight
        .encode_pg_binary(&mut BytesMut::new())
        .expect_err("24:00 sent");
    assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("24:00:00"), "{e}");
    assert_eq!(
        Option::<i32>::decode_pg_null(&SqlType::Int).ok(),
        Some(None)
    );
    assert!(i32::decode_pg_null(&SqlType::Int).is_err());
    assert_eq!(
        f64::decode_pg_binary(&SqlType::Real, &1.5f32.to_be_bytes()).ok(),
        Some(1.5)
    );
}
