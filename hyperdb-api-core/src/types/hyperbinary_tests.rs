use super::*;
use crate::error::ErrorKind;
use crate::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn enc<T: ToHyperBinary + ?Sized>(v: &T, ty: SqlType) -> Result<Vec<u8>> {
    let mut buf = BytesMut::new();
    v.encode_hyper(&ty, &mut buf)?;
    Ok(buf.to_vec())
}

fn dec<'a, T: FromHyperBinary<'a>>(ty: SqlType, raw: &'a [u8]) -> Result<T> {
    T::decode_hyper(&ty, raw)
}

fn num(s: &str) -> Numeric {
    s.parse().expect(s)
}

fn n(precision: u8, scale: u8) -> SqlType {
    SqlType::Numeric { precision, scale }
}

#[test]
fn copy_header() {
    let mut buf = BytesMut::new();
    put_copy_header(&mut buf);
    assert_eq!(&buf[..6], b"HPRCPY");
    assert_eq!(buf.len(), 19);
    assert!(buf[6..].iter().all(|b| *b == 0));
}

/// Field bytes hyperd 0.0.26963 returned with result format 2 for values
/// inserted with SQL, checked both ways.
#[test]
fn fixed_layouts_match_hyperd() {
    fn check<T>(ty: SqlType, value: T, hex: &str)
    where
        T: ToHyperBinary + for<'a> FromHyperBinary<'a> + PartialEq + std::fmt::Debug,
    {
        let raw = unhex(hex);
        assert_eq!(enc(&value, ty).ok(), Some(raw.clone()), "{ty} {value:?}");
        assert_eq!(dec::<T>(ty, &raw).ok(), Some(value), "{ty} {hex}");
    }
    check(SqlType::Bool, true, "01");
    check(SqlType::SmallInt, -2i16, "feff");
    check(SqlType::Int, 7i32, "07000000");
    check(SqlType::BigInt, -3i64, "fdffffffffffffff");
    check(SqlType::Double, 1.5f64, "000000000000f83f");
    check(SqlType::Real, 1.0f32, "0000803f");
    check(SqlType::Oid, 42u32, "2a000000");
    check(n(18, 3), num("-1.500"), "24faffffffffffff");
    check(n(10, 0), num("12"), "0c00000000000000");
    check(n(5, 5), num("0.12345"), "3930000000000000");
    check(n(38, 2), num("12.50"), "e2040000000000000000000000000000");
    check(n(38, 2), num("-0.05"), "fbffffffffffffffffffffffffffffff");
    check(
        SqlType::Date,
        Date::from_ymd(2000, 1, 2).expect("date"),
        "5a682500",
    );
    check(
        SqlType::Date,
        Date::from_ymd(1, 1, 1).expect("date"),
        "52441a00",
    );
    check(
        SqlType::Time,
        Time::from_hms_micro(1, 2, 3, 4).expect("time"),
        "c478e8dd00000000",
    );
    // 24:00:00 is read (hyperd returns it) but never written: Tableau's
    // Hyper API cannot read a table holding it.
    let midnight = Time::from_micros(86_400_000_000).expect("24:00");
    assert_eq!(
        dec::<Time>(SqlType::Time, &unhex("0060d71d14000000")).ok(),
        Some(midnight)
    );
    let refused = enc(&midnight, SqlType::Time).unwrap_err();
    assert!(refused.message().contains("24:00:00"), "{refused}");
    assert!(matches!(
        crate::types::hyperbinary::fixed_value(&midnight, &SqlType::Time),
        crate::types::hyperbinary::Fixed::Other
    ));
    check(
        SqlType::Timestamp,
        "2000-01-01 00:00:01".parse::<Timestamp>().expect("ts"),
        "40a2efbe3e83f002",
    );
    check(
        SqlType::Timestamp,
        "294276-12-31 23:59:59.999999"
            .parse::<Timestamp>()
            .expect("ts"),
        "ffff92729a82f082",
    );
    check(
        SqlType::TimestampTz,
        TimestampTz::from_micros_since_2000(0),
        "0060e0be3e83f002",
    );
    check(
        SqlType::Interval,
        Interval::new(1, 2, 3),
        "03000000000000000200000001000000",
    );
}

#[test]
fn variable_layouts() {
    assert_eq!(
        enc(&"héllo", SqlType::Text).ok(),
        Some(unhex("0600000068c3a96c6c6f"))
    );
    assert_eq!(enc(&"", SqlType::Text).ok(), Some(vec![0, 0, 0, 0]));
    assert_eq!(
        enc(&String::from("{\"a\":1}"), SqlType::Json).ok(),
        Some(unhex("070000007b2261223a317d"))
    );
    assert_eq!(
        enc(&[1u8, 2].as_slice(), SqlType::Bytea).ok(),
        Some(unhex("020000000102"))
    );
    assert_eq!(
        enc(&vec![7u8], SqlType::Geography).ok(),
        Some(unhex("0100000007"))
    );
    // CHAR(1) is length-prefixed like any text in COPY (measured).
    assert_eq!(enc(&"z", SqlType::Char(1)).ok(), Some(unhex("010000007a")));
    // Results carry no inner length.
    assert_eq!(
        dec::<&str>(SqlType::Char(7), b"xy     ").ok(),
        Some("xy     ")
    );
    assert_eq!(
        dec::<String>(SqlType::Char(1), "é".as_bytes())
            .ok()
            .as_deref(),
        Some("é")
    );
    assert_eq!(
        dec::<&[u8]>(SqlType::Geography, &[7, 0xaa]).ok(),
        Some(&[7u8, 0xaa][..])
    );
    assert_eq!(
        dec::<Vec<u8>>(SqlType::Text, b"ab").ok(),
        Some(b"ab".to_vec())
    );
    assert_eq!(dec::<&str>(SqlType::Text, b"").ok(), Some(""));
}

#[test]
fn edge_values_round_trip() {
    fn rt<T>(ty: SqlType, v: T)
    where
        T: ToHyperBinary + for<'a> FromHyperBinary<'a> + PartialEq + std::fmt::Debug,
    {
        let raw = enc(&v, ty).expect("encode");
        assert!(ty.fixed_width().is_none_or(|w| w == raw.len()), "{ty}");
        assert_eq!(dec::<T>(ty, &raw).ok(), Some(v), "{ty}");
    }
    for v in [i16::MIN, i16::MAX, 0] {
        rt(SqlType::SmallInt, v);
    }
    for v in [i32::MIN, i32::MAX] {
        rt(SqlType::Int, v);
    }
    for v in [i64::MIN, i64::MAX] {
        rt(SqlType::BigInt, v);
    }
    rt(SqlType::Oid, u32::MAX);
    for v in [
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -0.0,
        f64::MAX,
    ] {
        rt(SqlType::Double, v);
    }
    rt(SqlType::Real, f32::NEG_INFINITY);
    let nan = enc(&f64::NAN, SqlType::Double).expect("nan");
    assert!(dec::<f64>(SqlType::Double, &nan).is_ok_and(f64::is_nan));
    let nan = enc(&f64::NAN, SqlType::Real).expect("nan into REAL");
    assert!(dec::<f32>(SqlType::Real, &nan).is_ok_and(f32::is_nan));
    for (y, m, d) in [
        (1, 1, 1),
        (1899, 12, 31),
        (2101, 1, 1),
        (9999, 12, 31),
        (-4712, 1, 1),
    ] {
        rt(SqlType::Date, Date::from_ymd(y, m, d).expect("date"));
    }
    rt(
        SqlType::Timestamp,
        "0001-01-01 00:00:00".parse::<Timestamp>().expect("ts"),
    );
    rt(
        SqlType::Timestamp,
        "1899-12-31 23:59:59.999999"
            .parse::<Timestamp>()
            .expect("ts"),
    );
    rt(
        SqlType::Interval,
        Interval::new(i32::MIN, i32::MAX, i64::MIN),
    );
    let max = "9".repeat(38);
    for text in [max.clone(), format!("-{max}")] {
        rt(n(38, 0), num(&text));
    }
    rt(n(38, 38), num(&format!("0.{max}")));
    rt(n(38, 37), num(&format!("-9.{}", &max[..37])));
    rt(n(18, 18), num("-0.999999999999999999"));
    rt(n(1, 1), num("-0.5"));
    rt(
        n(38, 0),
        170_141_183_460_469_231_731_687_303_715_884_105_727i128 / 10,
    ); // 38 digits
    assert!(enc(&(i128::MAX / 10), n(38, 0)).is_ok());
    assert!(enc(&i128::MAX, n(38, 0)).is_err());
}

#[test]
fn numerics_take_the_column_scale() {
    assert_eq!(
        enc(&num("1.5"), n(18, 3)).ok(),
        Some(1500i64.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&5i32, n(18, 2)).ok(),
        Some(500i64.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&5i32, n(19, 2)).ok(),
        Some(500i128.to_le_bytes().to_vec())
    );
    let err = enc(&num("1.55"), n(18, 1)).expect_err("would round");
    assert!(err.message().contains("NUMERIC(18,1)"), "{err}");
    assert!(enc(&num("1000"), n(5, 2)).is_err());
    assert!(enc(&num("1"), n(39, 0)).is_err());
    assert!(enc(&num("1"), n(2, 3)).is_err());
    assert_eq!(
        dec::<Numeric>(n(18, 3), &1500i64.to_le_bytes())
            .map(|v| v.to_string())
            .ok()
            .as_deref(),
        Some("1.500")
    );
    assert_eq!(
        dec::<Numeric>(SqlType::Int, &7i32.to_le_bytes()).ok(),
        Some(num("7"))
    );
    assert_eq!(dec::<i64>(n(38, 0), &(-9i128).to_le_bytes()).ok(), Some(-9));
    assert!(dec::<i64>(n(38, 2), &9i128.to_le_bytes()).is_err());
    assert!(dec::<Numeric>(n(38, 0), &i128::MAX.to_le_bytes()).is_err());
}

#[test]
fn narrowing_is_checked_per_value() {
    let err = enc(&3_000_000_000i64, SqlType::Int).expect_err("out of range");
    assert_eq!(err.kind(), ErrorKind::Conversion);
    assert!(err.message().contains("out of range for INTEGER"), "{err}");
    assert_eq!(
        enc(&7i64, SqlType::Int).ok(),
        Some(7i32.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&7i16, SqlType::BigInt).ok(),
        Some(7i64.to_le_bytes().to_vec())
    );
    assert!(enc(&40_000i32, SqlType::SmallInt).is_err());
    assert!(enc(&-1i32, SqlType::Oid).is_err());
    assert!(enc(&u64::MAX, SqlType::BigInt).is_err());
    assert_eq!(
        enc(&200u8, SqlType::SmallInt).ok(),
        Some(200i16.to_le_bytes().to_vec())
    );
    // REAL's precision, as hyperd's cast and Tableau store it; past its range, refused.
    assert_eq!(
        enc(&0.1f64, SqlType::Real).ok(),
        Some(0.1f32.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&16_777_217f64, SqlType::Real).ok(),
        Some(16_777_216f32.to_le_bytes().to_vec())
    );
    assert!(enc(&1e300f64, SqlType::Real).is_err());
    assert!(enc(&-1e39f64, SqlType::Real).is_err());
    assert_eq!(
        enc(&f64::INFINITY, SqlType::Real).ok(),
        Some(f32::INFINITY.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&0.5f64, SqlType::Real).ok(),
        Some(0.5f32.to_le_bytes().to_vec())
    );
    assert_eq!(
        enc(&0.1f32, SqlType::Double).ok(),
        Some(f64::from(0.1f32).to_le_bytes().to_vec())
    );
    assert_eq!(
        dec::<i32>(SqlType::BigInt, &5i64.to_le_bytes()).ok(),
        Some(5)
    );
    let err = dec::<i32>(SqlType::BigInt, &i64::MAX.to_le_bytes()).expect_err("range");
    assert!(err.message().contains("out of range for i32"), "{err}");
    assert_eq!(
        dec::<i64>(SqlType::Oid, &u32::MAX.to_le_bytes()).ok(),
        Some(i64::from(u32::MAX))
    );
}

#[test]
fn string_limits_count_characters() {
    assert!(enc(&"héé", SqlType::Varchar(3)).is_ok());
    assert!(enc(&"abcd", SqlType::Varchar(3)).is_err());
    assert!(enc(&"é", SqlType::Char(1)).is_ok());
    assert!(enc(&"ab", SqlType::Char(1)).is_err());
}

#[test]
fn wrong_types_are_refused() {
    assert!(!<&str as ToHyperBinary>::accepts(&SqlType::Geography));
    assert!(enc(&"POINT(1 2)", SqlType::Geography).is_err());
    assert!(enc(&[1u8].as_slice(), SqlType::Text).is_err());
    assert!(enc(&true, SqlType::Int).is_err());
    assert!(enc(&1.5f64, SqlType::Int).is_err());
    assert!(enc(&num("1"), SqlType::Int).is_err());
    assert!(enc(&Date::PG_EPOCH, SqlType::Timestamp).is_err());
    assert!(<i32 as ToHyperBinary>::accepts(&n(18, 2)));
    assert!(!<i32 as FromHyperBinary>::accepts(&n(18, 2)));
    assert!(<Option<f64> as FromHyperBinary>::accepts(&SqlType::Real));
    assert!(!<f32 as FromHyperBinary>::accepts(&SqlType::Double));
    assert!(dec::<String>(SqlType::Int, &[0; 4]).is_err());
    assert!(dec::<&[u8]>(SqlType::Int, &[0; 4]).is_err());
    assert!(dec::<TimestampTz>(SqlType::Timestamp, &[0; 8]).is_err());
}

#[test]
fn malformed_fields_name_type_and_length() {
    let err = dec::<i32>(SqlType::Int, &[1, 2, 3]).expect_err("short");
    assert_eq!(err.kind(), ErrorKind::Conversion);
    assert_eq!(
        err.message(),
        "HyperBinary INTEGER value must be 4 bytes, got 3"
    );
    assert!(dec::<f64>(SqlType::Double, &[0; 9]).is_err());
    assert!(dec::<Interval>(SqlType::Interval, &[0; 15]).is_err());
    assert!(dec::<Numeric>(n(18, 2), &[0; 16]).is_err());
    assert!(dec::<Numeric>(n(19, 2), &[0; 8]).is_err());
    assert!(dec::<bool>(SqlType::Bool, &[2]).is_err());
    assert!(dec::<Time>(SqlType::Time, &(-1i64).to_le_bytes()).is_err());
    assert!(dec::<Timestamp>(SqlType::Timestamp, &u64::MAX.to_le_bytes()).is_err());
    let err = dec::<&str>(SqlType::Text, &[0xff, 0xfe]).expect_err("utf-8");
    assert!(err.message().contains("UTF-8"), "{err}");
}

#[test]
fn nulls() {
    let nullable = ColumnType::nullable(SqlType::Int);
    let not_null = ColumnType::not_null(SqlType::Int);
    let mut buf = BytesMut::new();
    encode_column(&Some(5i32), &nullable, &mut buf).expect("value");
    encode_column(&None::<i32>, &nullable, &mut buf).expect("null");
    encode_column(&6i32, &not_null, &mut buf).expect("not null");
    assert_eq!(
        buf.to_vec(),
        unhex("000500000001" /* null */)
            .into_iter()
            .chain(unhex("06000000"))
            .collect::<Vec<_>>()
    );
    let before = buf.len();
    let err = encode_column(&None::<i32>, &not_null, &mut buf).expect_err("NULL in NOT NULL");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(encode_column(&Some(5i64 << 40), &nullable, &mut buf).is_err());
    assert_eq!(buf.len(), before, "failed values leave no bytes");
    assert!(None::<i32>.encode_hyper(&SqlType::Int, &mut buf).is_err());
    assert_eq!(
        decode_field::<Option<i32>>(&SqlType::Int, None).ok(),
        Some(None)
    );
    assert_eq!(
        decode_field::<Option<i32>>(&SqlType::Int, Some(&[9, 0, 0, 0])).ok(),
        Some(Some(9))
    );
    let err = decode_field::<i32>(&SqlType::Int, None).expect_err("NULL");
    assert!(err.message().contains("NULL"), "{err}");
    assert!(Some(None::<i32>).is_null());
}

#[test]
fn rows() {
    let cols = [
        ColumnType::not_null(SqlType::Int),
        ColumnType::nullable(SqlType::Int),
        ColumnType::nullable(SqlType::Double),
        ColumnType::nullable(SqlType::BigInt),
    ];
    let mut buf = BytesMut::new();
    encode_row(
        &cols,
        &[&1i32, &None::<i32>, &2.5f64, &Some(3i64)],
        &mut buf,
    )
    .expect("row");
    let mut want = 1i32.to_le_bytes().to_vec();
    want.push(1);
    want.push(0);
    want.extend_from_slice(&2.5f64.to_le_bytes());
    want.push(0);
    want.extend_from_slice(&3i64.to_le_bytes());
    assert_eq!(buf.to_vec(), want);
    let before = buf.len();
    let err = encode_row(&cols, &[&1i32, &2i32, &"x", &4i64], &mut buf).expect_err("wrong type");
    assert!(err.message().starts_with("column 3:"), "{err}");
    assert_eq!(buf.len(), before);
    assert!(encode_row(&cols, &[&1i32], &mut buf).is_err());
    assert_eq!(buf.len(), before);
}

#[test]
fn value_or_null_writes_no_indicator() {
    let mut buf = BytesMut::new();
    let int = ColumnType::nullable(SqlType::Int);
    assert!(!encode_value_or_null(&Some(7i32), &int, &mut buf).unwrap());
    assert!(encode_value_or_null(&None::<i32>, &int, &mut buf).unwrap());
    let dyn_null: &dyn ToHyperBinary = &None::<&str>;
    let text = ColumnType::nullable(SqlType::Text);
    assert!(encode_value_or_null(dyn_null, &text, &mut buf).unwrap());
    assert_eq!(&buf[..], &7i32.to_le_bytes());
    // A failure appends nothing: a wrong type, a value too long, or NULL
    // in a NOT NULL column.
    assert!(encode_value_or_null(&"x", &int, &mut buf).is_err());
    let varchar = ColumnType::nullable(SqlType::Varchar(2));
    assert!(encode_value_or_null(&"abc", &varchar, &mut buf).is_err());
    let not_null = ColumnType::not_null(SqlType::Int);
    let err = encode_value_or_null(&None::<i32>, &not_null, &mut buf).expect_err("NOT NULL");
    assert!(err.to_string().contains("NULL for a"), "{err}");
    assert_eq!(buf.len(), 4);
}

/// The inserters' fast path must write exactly what the checked path
/// writes, for every value and column type pair, and nothing when it
/// declines.
#[test]
fn fixed_values_are_what_encode_writes() {
    let date = Date::from_ymd(1899, 12, 31).unwrap();
    let time = Time::from_hms_micro(23, 59, 59, 999_999).unwrap();
    let ts = Timestamp::new(date, time).unwrap();
    let tstz = TimestampTz::from_unix_micros(-1).unwrap();
    let some_date = Some(date);
    // NUMERIC: at the column's scale and within its digits (a plain copy
    // into NUMERIC(18,2) and NUMERIC(12,2)), 18 digits (into (18,2) only),
    // 19 digits, another scale, and NULL: the rest take the checked path.
    let cents = Numeric::new(12_345, 2).unwrap();
    let nines = Some(Numeric::new(-999_999_999_999_999_999, 2).unwrap());
    let too_big = Numeric::new(1_000_000_000_000_000_000, 2).unwrap();
    let tenths = Numeric::new(15, 1).unwrap();
    let values: Vec<&dyn ToHyperBinary> = vec![
        &cents,
        &nines,
        &too_big,
        &tenths,
        &None::<Numeric>,
        &-1i8,
        &i16::MIN,
        &-7i32,
        &i32::MAX,
        &i64::MIN,
        &255u8,
        &u16::MAX,
        &u32::MAX,
        &u64::MAX,
        &-1i128,
        &1.5f32,
        &f32::NAN,
        &-0.0f64,
        &f64::INFINITY,
        &0.1f64,
        &true,
        &false,
        &date,
        &time,
        &ts,
        &tstz,
        &Interval {
            months: 1,
            days: 2,
            micros: 3,
        },
        &"x",
        &Some(42i32),
        &None::<i32>,
        &Some(None::<f64>),
        &&Some(9i64),
        &some_date,
        &None::<&str>,
    ];
    let types = [
        SqlType::Bool,
        SqlType::SmallInt,
        SqlType::Int,
        SqlType::BigInt,
        SqlType::Real,
        SqlType::Double,
        SqlType::Oid,
        n(18, 2),
        n(12, 2),
        SqlType::Numeric {
            precision: 12,
            scale: 13,
        },
        n(38, 0),
        SqlType::Text,
        SqlType::Varchar(3),
        SqlType::Bytea,
        SqlType::Date,
        SqlType::Time,
        SqlType::Timestamp,
        SqlType::TimestampTz,
        SqlType::Interval,
    ];
    let mut copies = 0;
    for ty in types {
        for column in [ColumnType::nullable(ty), ColumnType::not_null(ty)] {
            for (i, value) in values.iter().enumerate() {
                let fixed = fixed_value(*value, &ty);
                let mut checked = BytesMut::from(&b"prefix"[..]);
                // The checked encoder itself, not `encode_value_or_null`,
                // which now takes the fast path first.
                let result = value.encode_value_or_null_hyper(&column, &mut checked, sealed::Token);
                let mut fast = BytesMut::from(&b"prefix"[..]);
                let put = fixed.put(&mut fast);
                let case = format!("value #{i} into {column}: {fixed:?}");
                match fixed {
                    Fixed::Other => assert!(!put && fast.len() == 6, "{case}"),
                    Fixed::Null => {
                        assert!(!put && fast.len() == 6, "{case}");
                        assert_eq!(result.is_ok(), column.is_nullable(), "{case}");
                        assert!(result.map_or(true, |null| null), "{case}");
                    }
                    _ => {
                        copies += 1;
                        assert!(put, "{case}");
                        assert!(matches!(result, Ok(false)), "{case}: {result:?}");
                        assert_eq!(fast, checked, "{case}");
                        assert_eq!(Some(fast.len() - 6), ty.fixed_width(), "{case}");
                    }
                }
            }
        }
    }
    // Each native pair takes the fast path (both nullabilities), and the
    // NUMERIC values that fit as they are (3 pairs).
    assert_eq!(copies, 2 * (19 + 3), "plain copies found");
}

/// Every type with a `PLAIN` column type reads that type's fields as they
/// lie: the type has a fixed width, the column type is one the Rust type
/// accepts, and a value written to it reads back, for `Option<T>` too.
/// Types without one (widening, text, NUMERIC) say `None`.
#[test]
fn plain_column_types_are_fixed_and_read_back() {
    fn plain<T>(v: T) -> SqlType
    where
        T: ToHyperBinary + for<'a> FromHyperBinary<'a> + PartialEq + std::fmt::Debug + Copy,
    {
        let ty = <T as FromHyperBinary>::PLAIN.expect("a plain column type");
        assert_eq!(<Option<T> as FromHyperBinary>::PLAIN, Some(ty));
        assert!(<T as FromHyperBinary>::accepts(&ty), "{ty}");
        let raw = enc(&v, ty).expect("encode");
        assert_eq!(ty.fixed_width(), Some(raw.len()), "{ty}");
        assert_eq!(dec::<T>(ty, &raw).ok(), Some(v), "{ty}");
        assert_eq!(dec::<Option<T>>(ty, &raw).ok(), Some(Some(v)), "{ty}");
        ty
    }
    let types = [
        plain(true),
        plain(i16::MIN),
        plain(i32::MAX),
        plain(i64::MIN),
        plain(u32::MAX),
        plain(f32::NEG_INFINITY),
        plain(-0.5f64),
        plain(Date::from_ymd(1899, 12, 31).expect("date")),
        plain(Time::from_micros(86_399_999_999).expect("time")),
        plain("2101-01-01 00:00:00".parse::<Timestamp>().expect("ts")),
        plain(TimestampTz::from_utc(
            "1800-01-01 12:00:00".parse::<Timestamp>().expect("ts"),
        )),
        plain(Interval::new(-1, 2, -3)),
    ];
    let distinct: std::collections::HashSet<_> = types.iter().collect();
    assert_eq!(distinct.len(), types.len(), "{types:?}");
    assert_eq!(<u64 as FromHyperBinary>::PLAIN, None);
    assert_eq!(<i128 as FromHyperBinary>::PLAIN, None);
    assert_eq!(<Numeric as FromHyperBinary>::PLAIN, None);
    assert_eq!(<String as FromHyperBinary>::PLAIN, None);
    assert_eq!(<&str as FromHyperBinary>::PLAIN, None);
}

/// NUMERIC(p ≤ 18) values decode without `Numeric::new`'s checks (an i64
/// always fits 38 digits) to exactly what it gives; a scale past 38 and a
/// field of the wrong width are still errors.
#[test]
fn numeric64_decodes_as_numeric_new_does() {
    for (v, p, s) in [
        (12_345i64, 12u8, 2u8),
        (-7, 12, 2),
        (i64::MIN, 18, 0),
        (i64::MAX, 18, 18),
        (0, 1, 1),
    ] {
        let got = Numeric::decode_hyper(&n(p, s), &v.to_le_bytes()).unwrap();
        let want = Numeric::new(i128::from(v), s).unwrap();
        assert_eq!(
            (got.unscaled(), got.scale()),
            (want.unscaled(), want.scale())
        );
    }
    let past_38 = SqlType::Numeric {
        precision: 12,
        scale: 39,
    };
    assert!(Numeric::decode_hyper(&past_38, &1i64.to_le_bytes()).is_err());
    assert!(Numeric::decode_hyper(&n(12, 2), &[0u8; 4]).is_err());
}

/// Text decodes by the ASCII check and by `from_utf8` to the same `&str`,
/// and invalid UTF-8 (after ASCII, or a lone continuation byte) is still
/// an error naming the column type.
#[test]
fn text_decodes_ascii_and_utf8_and_rejects_invalid() {
    let ty = SqlType::Varchar(44);
    for text in ["", "NONE", "carefully final deposits", "Zoë ☃", "a\u{7f}"] {
        assert_eq!(<&str>::decode_hyper(&ty, text.as_bytes()).unwrap(), text);
        assert_eq!(
            String::decode_hyper(&SqlType::Text, text.as_bytes()).unwrap(),
            text
        );
    }
    for bad in [&b"abc\xff"[..], b"\x80", b"ok\xc3"] {
        let e = <&str>::decode_hyper(&ty, bad).unwrap_err();
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    }
}
