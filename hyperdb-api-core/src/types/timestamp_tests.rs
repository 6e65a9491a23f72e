use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().expect(text)
}

#[test]
fn hyper_values_match_hyperd() {
    // Read back from hyperd as HyperBinary.
    assert_eq!(
        ts("2000-01-01 00:00:01").hyper_micros().ok(),
        Some(211_813_488_001_000_000)
    );
    assert_eq!(
        ts("9999-12-31 23:59:59.999999").hyper_micros().ok(),
        Some(0x0671_6a4a_501b_dfff)
    );
    // hyperd's +infinity and -infinity.
    let inf = Timestamp::from_hyper_micros(9_435_184_819_199_999_999).expect("infinity");
    assert_eq!(inf.to_string(), "294276-12-31 23:59:59.999999");
    assert_eq!(inf.hyper_micros().ok(), Some(9_435_184_819_199_999_999));
    let neg_inf = Timestamp::from_hyper_micros(0x0000_02fc_6df8_4000).expect("-infinity");
    assert_eq!(neg_inf.to_string(), "4713-01-01 00:00:00 BC");
    assert_eq!(ts("4713-01-01 00:00:00 BC"), neg_inf);
}

#[test]
fn hyperds_range_ends_where_its_dates_do() {
    assert_eq!(Timestamp::HYPER_MIN.to_string(), "4713-01-01 00:00:00 BC");
    assert_eq!(
        Timestamp::HYPER_MAX.to_string(),
        "294276-12-31 23:59:59.999999"
    );
    assert_eq!(Timestamp::HYPER_MIN.date(), Date::HYPER_MIN);
    assert_eq!(Timestamp::HYPER_MAX.date(), Date::HYPER_MAX);
    assert_eq!(
        Timestamp::HYPER_MIN.hyper_micros().ok(),
        Some(3_283_200_000_000)
    );
    assert_eq!(
        Timestamp::HYPER_MAX.hyper_micros().ok(),
        Some(9_435_184_819_199_999_999)
    );
    for outside in [
        Timestamp::HYPER_MIN.micros_since_2000() - 1,
        Timestamp::HYPER_MAX.micros_since_2000() + 1,
    ] {
        let t = Timestamp::from_micros_since_2000(outside);
        assert!(!t.is_in_hyper_range());
        let e = t.hyper_micros().unwrap_err();
        assert!(e.message().contains("outside hyperd's range"), "{e}");
    }
}

#[test]
fn hyper_range_errors() {
    assert!(Timestamp::from_micros_since_2000(i64::MIN)
        .hyper_micros()
        .is_err());
    assert!(Timestamp::from_hyper_micros(u64::MAX).is_err());
    assert_eq!(
        Timestamp::from_hyper_micros(0)
            .map(|t| t.date().julian_day())
            .ok(),
        Some(0)
    );
}

#[test]
fn parts_round_trip() {
    for text in [
        "2000-01-01 00:00:00",
        "1999-12-31 23:59:59.999999",
        "0001-01-01 00:00:00",
        "1899-12-31 12:34:56.5",
        "2101-01-01 00:00:00.000001",
        "9999-12-31 23:59:59.999999",
        "0044-03-15 10:00:00 BC",
    ] {
        let t = ts(text);
        assert_eq!(t.to_string(), text);
        assert_eq!(Timestamp::new(t.date(), t.time()).ok(), Some(t));
    }
    let t = ts("1899-12-31 12:34:56.5");
    assert_eq!(t.date(), Date::from_ymd(1899, 12, 31).expect("date"));
    assert_eq!(
        t.time(),
        Time::from_hms_micro(12, 34, 56, 500_000).expect("time")
    );
    assert!(t.micros_since_2000() < 0);
}

#[test]
fn parses_variants() {
    assert_eq!(ts("2000-01-01"), Timestamp::PG_EPOCH);
    assert_eq!(ts("2000-01-01T00:00"), Timestamp::PG_EPOCH);
    assert_eq!(ts("2000-01-01 24:00:00"), ts("2000-01-02 00:00:00"));
    for bad in [
        "",
        "2000-01-01 25:00",
        "2000-02-30 00:00",
        "2000-01-01 00:00:00+00",
        "2000-01-01 x",
    ] {
        assert!(bad.parse::<Timestamp>().is_err(), "{bad}");
    }
}

#[test]
fn unix_conversions() {
    assert_eq!(Timestamp::from_unix_micros(0).ok(), Some(ts("1970-01-01")));
    assert_eq!(ts("1970-01-01 00:00:01").unix_micros(), Some(1_000_000));
    assert_eq!(Timestamp::PG_EPOCH.unix_micros(), Some(946_684_800_000_000));
    assert!(Timestamp::from_unix_micros(i64::MIN).is_err());
}

#[test]
fn unix_micros_past_i64_reach_hyperds_last_timestamp() {
    // hyperd's last timestamp (its `infinity`) is past i64::MAX after 1970.
    let unix = i128::from(Timestamp::HYPER_MAX.micros_since_2000()) + 946_684_800_000_000;
    assert!(unix > i128::from(i64::MAX));
    assert_eq!(
        Timestamp::from_unix_micros_i128(unix).ok(),
        Some(Timestamp::HYPER_MAX)
    );
    assert_eq!(
        TimestampTz::from_unix_micros_i128(unix)
            .map(TimestampTz::to_utc)
            .ok(),
        Some(Timestamp::HYPER_MAX)
    );
    assert_eq!(
        Timestamp::from_unix_micros_i128(-1_000_000).ok(),
        Timestamp::from_unix_micros(-1_000_000).ok()
    );
    assert!(Timestamp::from_unix_micros_i128(i128::MAX).is_err());
    assert!(Timestamp::from_unix_micros_i128(i128::from(i64::MAX) * 3).is_err());
}

#[test]
fn new_rejects_overflow() {
    let far = Date::from_julian_day(i32::MAX);
    assert!(Timestamp::new(far, Time::MIDNIGHT).is_err());
}

#[test]
fn timestamptz_text() {
    let utc = TimestampTz::from_utc(ts("2000-01-01 00:00:00"));
    assert_eq!(utc.to_string(), "2000-01-01 00:00:00+00");
    assert_eq!(
        "2000-01-01 00:00:00+00".parse::<TimestampTz>().ok(),
        Some(utc)
    );
    assert_eq!(
        "2000-01-01T00:00:00Z".parse::<TimestampTz>().ok(),
        Some(utc)
    );
    assert_eq!("2000-01-01 00:00:00".parse::<TimestampTz>().ok(), Some(utc));
    assert_eq!(
        "2000-01-01 05:30:00+05:30".parse::<TimestampTz>().ok(),
        Some(utc)
    );
    assert_eq!(
        "1999-12-31 19:00:00-0500".parse::<TimestampTz>().ok(),
        Some(utc)
    );
    // As hyperd printed '2000-01-01 00:00:00.25+05:30'::timestamptz.
    assert_eq!(
        "2000-01-01 00:00:00.25+05:30"
            .parse::<TimestampTz>()
            .map(|t| t.to_string())
            .ok()
            .as_deref(),
        Some("1999-12-31 18:30:00.25+00")
    );
    let bc = TimestampTz::from_utc(ts("4713-01-01 00:00:00 BC"));
    assert_eq!(bc.to_string(), "4713-01-01 00:00:00+00 BC");
    assert_eq!(bc.to_string().parse::<TimestampTz>().ok(), Some(bc));
    for bad in [
        "2000-01-01 00:00:00+24",
        "2000-01-01 00:00:00+0",
        "2000-01-01 00:00:00 CET",
    ] {
        assert!(bad.parse::<TimestampTz>().is_err(), "{bad}");
    }
    assert_eq!(
        TimestampTz::from_unix_micros(0)
            .ok()
            .and_then(TimestampTz::unix_micros),
        Some(0)
    );
}
