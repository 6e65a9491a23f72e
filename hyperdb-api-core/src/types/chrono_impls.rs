//! Conversions to and from `chrono` (feature `chrono`), and the codec traits
//! for chrono's types so they can be written and read directly.
//!
//! chrono's range (about ±262,000 years) is narrower than [`Date`]'s and it
//! has no `24:00:00`, so conversions into chrono are `TryFrom`.

use bytes::BytesMut;
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike, Utc};

use super::calendar::MICROS_PER_SECOND;
use super::hyperbinary::{FromHyperBinary, ToHyperBinary};
use super::pg_binary::{FromPgBinary, IsNull, ToPgBinary};
use super::{Date, SqlType, Time, Timestamp, TimestampTz};
use crate::error::{Error, Result};

/// `NaiveDate::num_days_from_ce()` of a date minus its Julian day number.
const CE_TO_JULIAN: i32 = 1_721_425;

impl From<NaiveDate> for Date {
    fn from(d: NaiveDate) -> Date {
        // chrono's range is far inside i32 Julian days.
        Date::from_julian_day(d.num_days_from_ce() + CE_TO_JULIAN)
    }
}

impl TryFrom<Date> for NaiveDate {
    type Error = Error;

    fn try_from(d: Date) -> Result<NaiveDate> {
        d.julian_day()
            .checked_sub(CE_TO_JULIAN)
            .and_then(NaiveDate::from_num_days_from_ce_opt)
            .ok_or_else(|| Error::conversion(format!("date {d} is outside chrono's range")))
    }
}

impl TryFrom<NaiveTime> for Time {
    type Error = Error;

    /// Fails only for chrono's leap-second representation (nanoseconds >= 1e9).
    fn try_from(t: NaiveTime) -> Result<Time> {
        if t.nanosecond() >= 1_000_000_000 {
            return Err(Error::conversion(format!(
                "leap second {t} has no TIME value"
            )));
        }
        Time::from_micros(
            i64::from(t.num_seconds_from_midnight()) * MICROS_PER_SECOND
                + i64::from(t.nanosecond() / 1000),
        )
    }
}

impl TryFrom<Time> for NaiveTime {
    type Error = Error;

    /// Fails only for `24:00:00`, which chrono cannot hold.
    fn try_from(t: Time) -> Result<NaiveTime> {
        let secs = u32::try_from(t.micros() / MICROS_PER_SECOND).unwrap_or(u32::MAX);
        let nanos = u32::try_from(t.micros() % MICROS_PER_SECOND).unwrap_or(0) * 1000;
        NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos)
            .ok_or_else(|| Error::conversion(format!("time {t} is outside chrono's range")))
    }
}

impl TryFrom<NaiveDateTime> for Timestamp {
    type Error = Error;

    /// Truncates to microseconds; fails for leap seconds.
    fn try_from(dt: NaiveDateTime) -> Result<Timestamp> {
        Timestamp::new(dt.date().into(), dt.time().try_into()?)
    }
}

impl TryFrom<Timestamp> for NaiveDateTime {
    type Error = Error;

    fn try_from(ts: Timestamp) -> Result<NaiveDateTime> {
        let date = NaiveDate::try_from(ts.date())?;
        date.and_hms_opt(0, 0, 0)
            .and_then(|midnight| {
                midnight.checked_add_signed(TimeDelta::microseconds(ts.time().micros()))
            })
            .ok_or_else(|| Error::conversion(format!("timestamp {ts} is outside chrono's range")))
    }
}

impl TryFrom<DateTime<Utc>> for TimestampTz {
    type Error = Error;

    fn try_from(dt: DateTime<Utc>) -> Result<TimestampTz> {
        Timestamp::try_from(dt.naive_utc()).map(TimestampTz::from_utc)
    }
}

impl TryFrom<TimestampTz> for DateTime<Utc> {
    type Error = Error;

    fn try_from(ts: TimestampTz) -> Result<DateTime<Utc>> {
        NaiveDateTime::try_from(ts.to_utc()).map(|naive| naive.and_utc())
    }
}

/// Implements the four codec traits for a chrono type by converting through
/// one of this module's value types; `$to` converts a chrono value to ours.
macro_rules! via {
    ($chrono:ty, $ours:ty, $to:expr) => {
        impl ToHyperBinary for $chrono {
            fn accepts(ty: &SqlType) -> bool {
                <$ours as ToHyperBinary>::accepts(ty)
            }

            fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
                $to(*self)?.encode_hyper(ty, buf)
            }
        }

        impl<'a> FromHyperBinary<'a> for $chrono {
            fn accepts(ty: &SqlType) -> bool {
                <$ours as FromHyperBinary>::accepts(ty)
            }

            fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
                <$ours>::decode_hyper(ty, raw)?.try_into()
            }
        }

        impl ToPgBinary for $chrono {
            fn type_oid() -> u32 {
                <$ours as ToPgBinary>::type_oid()
            }

            fn param_type_oid(&self) -> u32 {
                <$ours as ToPgBinary>::type_oid()
            }

            fn encode_pg_binary(&self, buf: &mut BytesMut) -> Result<IsNull> {
                $to(*self)?.encode_pg_binary(buf)
            }
        }

        impl<'a> FromPgBinary<'a> for $chrono {
            fn accepts(ty: &SqlType) -> bool {
                <$ours as FromPgBinary>::accepts(ty)
            }

            fn decode_pg_binary(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
                <$ours>::decode_pg_binary(ty, raw)?.try_into()
            }
        }
    };
}

via!(NaiveDate, Date, |d: NaiveDate| Ok::<_, Error>(Date::from(
    d
)));
via!(NaiveTime, Time, Time::try_from);
via!(NaiveDateTime, Timestamp, Timestamp::try_from);
via!(DateTime<Utc>, TimestampTz, TimestampTz::try_from);

#[cfg(test)]
mod tests {
    use super::*;

    fn nd(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("valid date")
    }

    #[test]
    fn dates_agree_with_chrono() {
        for (y, m, d) in [
            (1, 1, 1),
            (1899, 12, 31),
            (2000, 1, 1),
            (2101, 1, 1),
            (9999, 12, 31),
            (-4712, 1, 1),
            (0, 2, 29),
        ] {
            let ours = Date::from_ymd(y, m, d).expect("date");
            assert_eq!(Date::from(nd(y, m, d)), ours);
            assert_eq!(NaiveDate::try_from(ours).ok(), Some(nd(y, m, d)));
        }
        assert!(NaiveDate::try_from(Date::from_julian_day(i32::MAX)).is_err());
    }

    #[test]
    fn times_and_timestamps() {
        let t = NaiveTime::from_hms_micro_opt(23, 59, 59, 999_999).expect("time");
        assert_eq!(
            Time::try_from(t).ok(),
            Time::from_hms_micro(23, 59, 59, 999_999).ok()
        );
        assert!(NaiveTime::try_from(Time::from_micros(86_400_000_000).expect("24:00")).is_err());
        let leap = NaiveTime::from_hms_nano_opt(23, 59, 59, 1_500_000_000).expect("leap");
        assert!(Time::try_from(leap).is_err());

        let dt = nd(1899, 12, 31).and_hms_micro_opt(12, 0, 0, 5).expect("dt");
        let ts = Timestamp::try_from(dt).expect("ts");
        assert_eq!(ts.to_string(), "1899-12-31 12:00:00.000005");
        assert_eq!(NaiveDateTime::try_from(ts).ok(), Some(dt));
        let utc = dt.and_utc();
        let tz = TimestampTz::try_from(utc).expect("tz");
        assert_eq!(DateTime::<Utc>::try_from(tz).ok(), Some(utc));
        // Sub-microsecond digits are dropped, not rounded.
        let nanos = nd(2000, 1, 1).and_hms_nano_opt(0, 0, 0, 1_999).expect("dt");
        assert_eq!(
            Timestamp::try_from(nanos).ok(),
            Some(Timestamp::from_micros_since_2000(1))
        );
    }

    #[test]
    fn codecs_go_through_the_value_types() {
        let mut buf = BytesMut::new();
        nd(2000, 1, 2)
            .encode_hyper(&SqlType::Date, &mut buf)
            .expect("encode");
        assert_eq!(&buf[..], &[0x5a, 0x68, 0x25, 0x00]);
        assert_eq!(
            NaiveDate::decode_hyper(&SqlType::Date, &buf).ok(),
            Some(nd(2000, 1, 2))
        );
        assert_eq!(<NaiveDateTime as ToPgBinary>::type_oid(), 1114);
        let mut pg = BytesMut::new();
        nd(2000, 1, 2).encode_pg_binary(&mut pg).expect("pg");
        assert_eq!(&pg[..], &1i32.to_be_bytes());
        assert!(NaiveDate::decode_hyper(&SqlType::Int, &buf).is_err());
    }
}
