//! `DATE` values.

use std::fmt;
use std::str::FromStr;

use super::calendar::{self, Scanner, PG_EPOCH_JULIAN_DAY, UNIX_EPOCH_JULIAN_DAY};
use crate::error::{Error, Result};

/// A calendar date, stored as its Julian day number because that is
/// HyperBinary's DATE layout: encoding is a copy.
///
/// Years are astronomical in the numeric API (year 0 is 1 BC) and shown the
/// PostgreSQL way in text (`0044-03-15 BC`). The calendar is the proleptic
/// Gregorian one for every year.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    julian_day: i32,
}

impl Date {
    /// 1970-01-01.
    pub const UNIX_EPOCH: Date = Date {
        julian_day: UNIX_EPOCH_JULIAN_DAY as i32,
    };
    /// 2000-01-01, the epoch of PostgreSQL's binary formats.
    pub const PG_EPOCH: Date = Date {
        julian_day: PG_EPOCH_JULIAN_DAY as i32,
    };

    /// hyperd's least DATE, 4713-01-01 BC (Julian day 38): before it a
    /// parameter is 22007 "julian day ... is invalid" and an Arrow COPY
    /// XX001 (measured, hyperd 0.0.26963).
    pub const HYPER_MIN: Date = Date { julian_day: 38 };
    /// hyperd's greatest DATE, 294276-12-31 (Julian day 109,203,527).
    pub const HYPER_MAX: Date = Date {
        julian_day: 109_203_527,
    };

    /// Whether hyperd stores this date ([`Date::HYPER_MIN`] to
    /// [`Date::HYPER_MAX`]).
    pub const fn is_in_hyper_range(self) -> bool {
        self.julian_day >= Date::HYPER_MIN.julian_day
            && self.julian_day <= Date::HYPER_MAX.julian_day
    }

    /// The date with this Julian day number (2000-01-01 is 2451545).
    pub const fn from_julian_day(julian_day: i32) -> Date {
        Date { julian_day }
    }

    /// The Julian day number; HyperBinary's DATE value.
    pub const fn julian_day(self) -> i32 {
        self.julian_day
    }

    /// A date from an astronomical year, a month (1..=12) and a day of month.
    pub fn from_ymd(year: i32, month: u32, day: u32) -> Result<Date> {
        let invalid = || {
            Error::invalid_input(format!(
                "invalid date: year {year}, month {month}, day {day}"
            ))
        };
        let days =
            calendar::checked_days(i64::from(year), month, day, false).ok_or_else(invalid)?;
        Date::from_unix_days(days).map_err(|_| invalid())
    }

    /// Year (astronomical), month and day.
    pub fn ymd(self) -> (i32, u32, u32) {
        let (y, m, d) = calendar::civil_from_days(self.unix_days());
        // |year| < 2^31 / 365, so it fits.
        (y as i32, m, d)
    }

    /// Astronomical year: 0 is 1 BC, -1 is 2 BC.
    pub fn year(self) -> i32 {
        self.ymd().0
    }

    /// Month, 1..=12.
    pub fn month(self) -> u32 {
        self.ymd().1
    }

    /// Day of month, 1..=31.
    pub fn day(self) -> u32 {
        self.ymd().2
    }

    /// Days since 1970-01-01 (negative before).
    pub fn unix_days(self) -> i64 {
        i64::from(self.julian_day) - UNIX_EPOCH_JULIAN_DAY
    }

    /// The date `days` after 1970-01-01.
    pub fn from_unix_days(days: i64) -> Result<Date> {
        days.checked_add(UNIX_EPOCH_JULIAN_DAY)
            .and_then(|jd| i32::try_from(jd).ok())
            .map(Date::from_julian_day)
            .ok_or_else(|| {
                Error::conversion(format!(
                    "{days} days after 1970-01-01 is out of the DATE range"
                ))
            })
    }

    /// Days since 2000-01-01: PostgreSQL's binary DATE value.
    pub fn days_since_2000(self) -> i64 {
        i64::from(self.julian_day) - PG_EPOCH_JULIAN_DAY
    }

    /// The date `days` after 2000-01-01.
    pub fn from_days_since_2000(days: i64) -> Result<Date> {
        Date::from_unix_days(days.saturating_add(PG_EPOCH_JULIAN_DAY - UNIX_EPOCH_JULIAN_DAY))
    }

    /// The date `days` later (earlier when negative); `None` past the range.
    pub fn checked_add_days(self, days: i32) -> Option<Date> {
        self.julian_day.checked_add(days).map(Date::from_julian_day)
    }
}

/// `YYYY-MM-DD`, with ` BC` for years before 1, as hyperd prints dates.
impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = calendar::civil_from_days(self.unix_days());
        if calendar::write_ymd(f, y, m, d)? {
            f.write_str(" BC")?;
        }
        Ok(())
    }
}

/// Parses `YYYY-MM-DD` with an optional ` BC`; the year may have any number
/// of digits.
impl FromStr for Date {
    type Err = Error;

    fn from_str(s: &str) -> Result<Date> {
        let bad = || Error::conversion(format!("invalid DATE '{s}': expected YYYY-MM-DD"));
        let mut sc = Scanner::new(s);
        let (y, m, d) = sc.ymd().ok_or_else(bad)?;
        let bc = sc.bc_suffix();
        if !sc.is_empty() {
            return Err(bad());
        }
        let days = calendar::checked_days(y, m, d, bc).ok_or_else(bad)?;
        Date::from_unix_days(days)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn julian_days_match_hyperd() {
        // Values read back from hyperd as HyperBinary.
        assert_eq!(
            Date::from_ymd(2000, 1, 2).map(Date::julian_day).ok(),
            Some(2_451_546)
        );
        assert_eq!(
            Date::from_ymd(1, 1, 1).map(Date::julian_day).ok(),
            Some(0x1a_4452)
        );
        assert_eq!(
            "4713-11-24 BC".parse::<Date>().map(Date::julian_day).ok(),
            Some(366)
        );
        assert_eq!(Date::from_julian_day(38).to_string(), "4713-01-01 BC");
        assert_eq!(Date::PG_EPOCH.to_string(), "2000-01-01");
        assert_eq!(Date::UNIX_EPOCH.days_since_2000(), -10_957);
    }

    #[test]
    fn edge_dates_round_trip() {
        for (y, m, d, text) in [
            (1, 1, 1, "0001-01-01"),
            (1899, 12, 31, "1899-12-31"),
            (1900, 2, 28, "1900-02-28"),
            (2000, 2, 29, "2000-02-29"),
            (2101, 1, 1, "2101-01-01"),
            (9999, 12, 31, "9999-12-31"),
            (294_276, 12, 31, "294276-12-31"),
            (0, 12, 31, "0001-12-31 BC"),
            (-43, 3, 15, "0044-03-15 BC"),
        ] {
            let date = Date::from_ymd(y, m, d).expect(text);
            assert_eq!(date.ymd(), (y, m, d));
            assert_eq!(date.to_string(), text);
            assert_eq!(text.parse::<Date>().ok(), Some(date));
            assert_eq!(
                Date::from_days_since_2000(date.days_since_2000()).ok(),
                Some(date)
            );
        }
        assert_eq!(
            Date::from_ymd(1899, 12, 31)
                .ok()
                .and_then(|d| d.checked_add_days(1)),
            Date::from_ymd(1900, 1, 1).ok()
        );
    }

    #[test]
    fn rejects_invalid_dates() {
        for (y, m, d) in [
            (1900, 2, 29),
            (2023, 2, 29),
            (2000, 13, 1),
            (2000, 0, 1),
            (2000, 4, 31),
            (2000, 1, 0),
        ] {
            assert!(Date::from_ymd(y, m, d).is_err(), "{y}-{m}-{d}");
        }
        assert!(Date::from_ymd(i32::MAX, 1, 1).is_err());
        for text in [
            "",
            "2000-01",
            "2000/01/01",
            "2000-01-01x",
            "0000-01-01 BC",
            "2000-02-30",
            "x",
        ] {
            assert!(text.parse::<Date>().is_err(), "{text}");
        }
        assert_eq!(
            " 2000-1-2 ".parse::<Date>().ok(),
            Date::from_ymd(2000, 1, 2).ok()
        );
        assert_eq!(
            "2000-01-02 ad".parse::<Date>().ok(),
            Date::from_ymd(2000, 1, 2).ok()
        );
    }
}
