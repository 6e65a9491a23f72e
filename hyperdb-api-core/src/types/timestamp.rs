//! `TIMESTAMP` and `TIMESTAMP WITH TIME ZONE` values.

use std::fmt;
use std::str::FromStr;

use super::calendar::{
    self, Scanner, MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, PG_EPOCH_JULIAN_DAY,
};
use super::{Date, Time};
use crate::error::{Error, Result};

/// Microseconds from Julian day 0 to 2000-01-01: HyperBinary counts
/// timestamps from the former, PostgreSQL's binary format from the latter.
const HYPER_OFFSET_MICROS: i64 = PG_EPOCH_JULIAN_DAY * MICROS_PER_DAY;
/// Microseconds from 1970-01-01 to 2000-01-01.
const UNIX_OFFSET_MICROS: i64 = 10_957 * MICROS_PER_DAY;
/// [`Timestamp::HYPER_MIN`] and [`Timestamp::HYPER_MAX`] in HyperBinary's
/// microseconds since Julian day 0: the first and last days of
/// [`Date::HYPER_MIN`] to [`Date::HYPER_MAX`].
const HYPER_MIN_MICROS: u64 = Date::HYPER_MIN.julian_day() as u64 * MICROS_PER_DAY as u64;
const HYPER_MAX_MICROS: u64 = (Date::HYPER_MAX.julian_day() as u64 + 1) * MICROS_PER_DAY as u64 - 1;

/// A date and time of day without time zone, with microsecond precision.
///
/// Stored as microseconds since 2000-01-01 00:00:00, the PostgreSQL
/// convention, so binary parameters need no arithmetic; HyperBinary's
/// Julian-day origin is one checked addition away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    micros: i64,
}

impl Timestamp {
    /// 2000-01-01 00:00:00.
    pub const PG_EPOCH: Timestamp = Timestamp { micros: 0 };

    /// The timestamp `micros` after 2000-01-01 00:00:00.
    pub const fn from_micros_since_2000(micros: i64) -> Timestamp {
        Timestamp { micros }
    }

    /// Microseconds since 2000-01-01 00:00:00: PostgreSQL's binary value.
    pub const fn micros_since_2000(self) -> i64 {
        self.micros
    }

    /// Combines a date and a time of day.
    pub fn new(date: Date, time: Time) -> Result<Timestamp> {
        date.days_since_2000()
            .checked_mul(MICROS_PER_DAY)
            .and_then(|m| m.checked_add(time.micros()))
            .map(Timestamp::from_micros_since_2000)
            .ok_or_else(|| {
                Error::conversion(format!("{date} {time} is out of the TIMESTAMP range"))
            })
    }

    /// The calendar date.
    pub fn date(self) -> Date {
        let days = self.micros.div_euclid(MICROS_PER_DAY);
        // |days| < 2^63 / 86_400_000_000 ~ 1.07e8, so the Julian day fits an i32.
        Date::from_julian_day((days + PG_EPOCH_JULIAN_DAY) as i32)
    }

    /// The time of day.
    pub fn time(self) -> Time {
        Time::from_micros(self.micros.rem_euclid(MICROS_PER_DAY)).unwrap_or(Time::MIDNIGHT)
    }

    /// [`Self::from_unix_micros`] of a wider count (a JavaScript `bigint`,
    /// say): hyperd's timestamps reach 294276-12-31, past `i64::MAX`
    /// microseconds after 1970 (294247-01-10) though not after 2000.
    pub fn from_unix_micros_i128(micros: i128) -> Result<Timestamp> {
        micros
            .checked_sub(i128::from(UNIX_OFFSET_MICROS))
            .and_then(|m| i64::try_from(m).ok())
            .map(Timestamp::from_micros_since_2000)
            .ok_or_else(|| {
                Error::conversion(format!(
                    "Unix time {micros}us is out of the TIMESTAMP range"
                ))
            })
    }

    /// The timestamp `micros` after 1970-01-01 00:00:00.
    pub fn from_unix_micros(micros: i64) -> Result<Timestamp> {
        Timestamp::from_unix_micros_i128(i128::from(micros))
    }

    /// Microseconds since 1970-01-01 00:00:00; `None` when that overflows.
    pub fn unix_micros(self) -> Option<i64> {
        self.micros.checked_add(UNIX_OFFSET_MICROS)
    }

    /// hyperd's least TIMESTAMP, 4713-01-01 00:00:00 BC ([`Date::HYPER_MIN`]
    /// at midnight): before it a parameter is 22P03 and a HyperBinary COPY
    /// fails whole, naming no row (measured, hyperd 0.0.26963).
    pub const HYPER_MIN: Timestamp = Timestamp {
        micros: HYPER_MIN_MICROS as i64 - HYPER_OFFSET_MICROS,
    };
    /// hyperd's greatest TIMESTAMP, 294276-12-31 23:59:59.999999 (its
    /// `infinity`).
    pub const HYPER_MAX: Timestamp = Timestamp {
        micros: (HYPER_MAX_MICROS as i128 - HYPER_OFFSET_MICROS as i128) as i64,
    };

    /// Whether hyperd stores this timestamp ([`Timestamp::HYPER_MIN`] to
    /// [`Timestamp::HYPER_MAX`]).
    pub const fn is_in_hyper_range(self) -> bool {
        self.micros >= Timestamp::HYPER_MIN.micros && self.micros <= Timestamp::HYPER_MAX.micros
    }

    /// Microseconds since Julian day 0: HyperBinary's value. It is unsigned
    /// on the wire: hyperd's `infinity` (294276-12-31 23:59:59.999999) is
    /// 9435184819199999999, past `i64::MAX`. An error (`InvalidInput`)
    /// outside hyperd's range.
    pub(crate) fn hyper_micros(self) -> Result<u64> {
        if !self.is_in_hyper_range() {
            return Err(Error::invalid_input(format!(
                "TIMESTAMP {self} is outside hyperd's range, \
                 4713-01-01 00:00:00 BC to 294276-12-31 23:59:59.999999"
            )));
        }
        // In range, so past Julian day 0 and below u64::MAX.
        Ok((i128::from(self.micros) + i128::from(HYPER_OFFSET_MICROS)) as u64)
    }

    /// Inverse of [`Timestamp::hyper_micros`].
    pub(crate) fn from_hyper_micros(micros: u64) -> Result<Timestamp> {
        i64::try_from(i128::from(micros) - i128::from(HYPER_OFFSET_MICROS))
            .map(Timestamp::from_micros_since_2000)
            .map_err(|_| {
                Error::conversion(format!("HyperBinary timestamp {micros} is out of range"))
            })
    }

    fn fmt_with(self, f: &mut fmt::Formatter<'_>, zone: &str) -> fmt::Result {
        let (y, m, d) = calendar::civil_from_days(self.date().unix_days());
        let bc = calendar::write_ymd(f, y, m, d)?;
        f.write_str(" ")?;
        calendar::write_hms(f, self.time().micros())?;
        f.write_str(zone)?;
        if bc {
            f.write_str(" BC")?;
        }
        Ok(())
    }

    /// Builds the timestamp once the caller has read any zone and `BC`.
    fn from_parts(parts: Parts, bc: bool) -> Option<Timestamp> {
        let days = calendar::checked_days(parts.year, parts.month, parts.day, bc)?;
        let date = Date::from_unix_days(days).ok()?;
        Timestamp::new(date, Time::from_micros(parts.time).ok()?).ok()
    }
}

/// A timestamp's fields as written, before `BC` (which hyperd prints last,
/// after any zone) is known.
struct Parts {
    year: i64,
    month: u32,
    day: u32,
    time: i64,
}

impl Parts {
    /// Reads `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]]`.
    fn scan(sc: &mut Scanner<'_>) -> Option<Parts> {
        let (year, month, day) = sc.ymd()?;
        let time = if sc.eat(b' ') || sc.eat(b'T') || sc.eat(b't') {
            sc.skip_spaces();
            sc.time_of_day()?
        } else {
            0
        };
        Some(Parts {
            year,
            month,
            day,
            time,
        })
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` (` BC` last for early years), as hyperd prints.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_with(f, "")
    }
}

/// Parses `YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][ BC]`; `T` may separate date and time.
impl FromStr for Timestamp {
    type Err = Error;

    fn from_str(s: &str) -> Result<Timestamp> {
        let mut sc = Scanner::new(s);
        let parts = Parts::scan(&mut sc);
        let bc = sc.bc_suffix();
        parts
            .filter(|_| sc.is_empty())
            .and_then(|p| Timestamp::from_parts(p, bc))
            .ok_or_else(|| {
                Error::conversion(format!(
                    "invalid TIMESTAMP '{s}': expected YYYY-MM-DD HH:MM:SS[.ffffff]"
                ))
            })
    }
}

/// An instant, stored as the UTC [`Timestamp`] it names. Hyper keeps no
/// zone with the value; zones only shape its text form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimestampTz {
    utc: Timestamp,
}

impl TimestampTz {
    /// The instant whose UTC wall-clock time is `utc`.
    pub const fn from_utc(utc: Timestamp) -> TimestampTz {
        TimestampTz { utc }
    }

    /// The UTC wall-clock time.
    pub const fn to_utc(self) -> Timestamp {
        self.utc
    }

    /// The instant `micros` after 2000-01-01 00:00:00 UTC.
    pub const fn from_micros_since_2000(micros: i64) -> TimestampTz {
        TimestampTz {
            utc: Timestamp::from_micros_since_2000(micros),
        }
    }

    /// Microseconds since 2000-01-01 00:00:00 UTC.
    pub const fn micros_since_2000(self) -> i64 {
        self.utc.micros_since_2000()
    }

    /// The instant `micros` after the Unix epoch.
    pub fn from_unix_micros(micros: i64) -> Result<TimestampTz> {
        Timestamp::from_unix_micros(micros).map(TimestampTz::from_utc)
    }

    /// See [`Timestamp::from_unix_micros_i128`].
    pub fn from_unix_micros_i128(micros: i128) -> Result<TimestampTz> {
        Timestamp::from_unix_micros_i128(micros).map(TimestampTz::from_utc)
    }

    /// Microseconds since the Unix epoch; `None` when that overflows.
    pub fn unix_micros(self) -> Option<i64> {
        self.utc.unix_micros()
    }
}

/// The UTC time followed by `+00`, as hyperd prints TIMESTAMPTZ in UTC sessions.
impl fmt::Display for TimestampTz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.utc.fmt_with(f, "+00")
    }
}

/// Parses a timestamp with an optional zone offset (`Z`, `+HH`, `+HH:MM`,
/// `-HHMM`); without one the time is taken as UTC.
impl FromStr for TimestampTz {
    type Err = Error;

    fn from_str(s: &str) -> Result<TimestampTz> {
        let bad = || {
            Error::conversion(format!(
                "invalid TIMESTAMPTZ '{s}': expected YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]"
            ))
        };
        let mut sc = Scanner::new(s);
        let parts = Parts::scan(&mut sc).ok_or_else(bad)?;
        sc.skip_spaces();
        let offset = if sc.eat(b'Z') || sc.eat(b'z') || sc.eat_word("UTC") {
            0
        } else if let Some(sign) = sc.peek().filter(|c| *c == b'+' || *c == b'-') {
            sc.eat(sign);
            let h = sc.digits(2, 2).ok_or_else(bad)?;
            sc.eat(b':');
            let m = if sc.peek().is_some_and(|c| c.is_ascii_digit()) {
                sc.digits(2, 2).ok_or_else(bad)?
            } else {
                0
            };
            if h > 15 || m > 59 {
                return Err(bad());
            }
            let off = h * MICROS_PER_HOUR + m * MICROS_PER_MINUTE;
            if sign == b'-' {
                -off
            } else {
                off
            }
        } else {
            0
        };
        let bc = sc.bc_suffix();
        if !sc.is_empty() {
            return Err(bad());
        }
        let local = Timestamp::from_parts(parts, bc).ok_or_else(bad)?;
        let utc = local
            .micros_since_2000()
            .checked_sub(offset)
            .ok_or_else(bad)?;
        Ok(TimestampTz::from_micros_since_2000(utc))
    }
}

#[cfg(test)]
#[path = "timestamp_tests.rs"]
mod tests;
