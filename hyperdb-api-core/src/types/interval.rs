//! `INTERVAL` values.

use std::fmt;
use std::str::FromStr;

use super::calendar::{Scanner, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::error::{Error, Result};

/// A span of months, days and microseconds, kept apart because their
/// lengths vary (a month is 28 to 31 days, a day 23 to 25 hours across DST):
/// PostgreSQL and Hyper never normalise one into another.
///
/// Equality is field by field: `1 month` and `30 days` differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    /// The empty interval.
    pub const ZERO: Interval = Interval {
        months: 0,
        days: 0,
        micros: 0,
    };

    pub const fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    pub const fn from_months(months: i32) -> Interval {
        Interval {
            months,
            days: 0,
            micros: 0,
        }
    }

    pub const fn from_days(days: i32) -> Interval {
        Interval {
            months: 0,
            days,
            micros: 0,
        }
    }

    pub const fn from_micros(micros: i64) -> Interval {
        Interval {
            months: 0,
            days: 0,
            micros,
        }
    }
}

/// ISO 8601 duration in hyperd's style: `P1Y2M3DT4H5M6.789000S`, each
/// component with its own sign (`P1DT-1S`), `PT0S` when empty.
impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Interval::ZERO {
            return f.write_str("PT0S");
        }
        f.write_str("P")?;
        let (years, months) = (self.months / 12, self.months % 12);
        for (n, unit) in [
            (i64::from(years), 'Y'),
            (i64::from(months), 'M'),
            (i64::from(self.days), 'D'),
        ] {
            if n != 0 {
                write!(f, "{n}{unit}")?;
            }
        }
        if self.micros == 0 {
            return Ok(());
        }
        f.write_str("T")?;
        let m = self.micros;
        let (hours, rest) = (m / MICROS_PER_HOUR, m % MICROS_PER_HOUR);
        let (minutes, rest) = (rest / MICROS_PER_MINUTE, rest % MICROS_PER_MINUTE);
        if hours != 0 {
            write!(f, "{hours}H")?;
        }
        if minutes != 0 {
            write!(f, "{minutes}M")?;
        }
        if rest != 0 {
            let sign = if rest < 0 { "-" } else { "" };
            let (secs, frac) = (
                rest.unsigned_abs() / 1_000_000,
                rest.unsigned_abs() % 1_000_000,
            );
            if frac == 0 {
                write!(f, "{sign}{secs}S")?;
            } else {
                write!(f, "{sign}{secs}.{frac:06}S")?;
            }
        }
        Ok(())
    }
}

/// Parses the ISO 8601 form [`Display`](fmt::Display) writes (also weeks,
/// `W`, and signs on any component). Fractions are allowed on seconds only.
impl FromStr for Interval {
    type Err = Error;

    fn from_str(s: &str) -> Result<Interval> {
        parse_iso(s).ok_or_else(|| {
            Error::conversion(format!(
                "invalid INTERVAL '{s}': expected ISO 8601 like P1Y2M3DT4H5M6.5S"
            ))
        })
    }
}

fn parse_iso(s: &str) -> Option<Interval> {
    let mut sc = Scanner::new(s);
    if !(sc.eat(b'P') || sc.eat(b'p')) {
        return None;
    }
    let (mut months, mut days, mut micros) = (0i64, 0i64, 0i64);
    let mut in_time = false;
    let mut components = 0;
    let mut time_components = 1;
    while !sc.is_empty() {
        if !in_time && (sc.eat(b'T') || sc.eat(b't')) {
            in_time = true;
            time_components = 0;
            continue;
        }
        let negative = sc.eat(b'-');
        if !negative {
            sc.eat(b'+');
        }
        let whole = sc.digits(1, 18)?;
        let frac = if sc.peek() == Some(b'.') {
            Some(sc.fraction_micros()?)
        } else {
            None
        };
        let unit = sc.peek()?.to_ascii_uppercase();
        sc.eat(sc.peek()?);
        let sign = if negative { -1 } else { 1 };
        if frac.is_some() && !(in_time && unit == b'S') {
            return None;
        }
        let add =
            |acc: i64, n: i64, per: i64| acc.checked_add(n.checked_mul(per)?.checked_mul(sign)?);
        match (in_time, unit) {
            (false, b'Y') => months = add(months, whole, 12)?,
            (false, b'M') => months = add(months, whole, 1)?,
            (false, b'W') => days = add(days, whole, 7)?,
            (false, b'D') => days = add(days, whole, 1)?,
            (true, b'H') => micros = add(micros, whole, MICROS_PER_HOUR)?,
            (true, b'M') => micros = add(micros, whole, MICROS_PER_MINUTE)?,
            (true, b'S') => {
                micros = add(micros, whole, MICROS_PER_SECOND)?;
                micros = add(micros, frac.unwrap_or(0), 1)?;
            }
            _ => return None,
        }
        components += 1;
        time_components += 1;
    }
    if components == 0 || time_components == 0 {
        return None;
    }
    Some(Interval {
        months: i32::try_from(months).ok()?,
        days: i32::try_from(days).ok()?,
        micros,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_hyperd() {
        // Left: what hyperd printed for the interval on the right.
        let cases = [
            ("PT0S", Interval::ZERO),
            ("P-1Y-2M", Interval::from_months(-14)),
            (
                "P-3DT4H5M6S",
                Interval::new(
                    0,
                    -3,
                    4 * MICROS_PER_HOUR + 5 * MICROS_PER_MINUTE + 6_000_000,
                ),
            ),
            ("P1DT-1S", Interval::new(0, 1, -1_000_000)),
            ("PT-0.500000S", Interval::from_micros(-500_000)),
            ("PT100H", Interval::from_micros(100 * MICROS_PER_HOUR)),
            ("P1Y6M", Interval::from_months(18)),
            ("P1M-1D", Interval::new(1, -1, 0)),
            ("P1M2DT0.000003S", Interval::new(1, 2, 3)),
            (
                "P1Y2M3DT4H5M6.789000S",
                Interval::new(14, 3, 14_706_789_000),
            ),
        ];
        for (text, iv) in cases {
            assert_eq!(iv.to_string(), text);
            assert_eq!(text.parse::<Interval>().ok(), Some(iv), "{text}");
        }
    }

    #[test]
    fn extremes_round_trip() {
        for iv in [
            Interval::new(i32::MIN, i32::MIN, i64::MIN),
            Interval::new(i32::MAX, i32::MAX, i64::MAX),
            Interval::new(-1, 1, -1),
        ] {
            assert_eq!(iv.to_string().parse::<Interval>().ok(), Some(iv), "{iv}");
        }
    }

    #[test]
    fn parses_other_iso_forms() {
        assert_eq!(
            "P2W".parse::<Interval>().ok(),
            Some(Interval::from_days(14))
        );
        assert_eq!(
            "pt1.5s".parse::<Interval>().ok(),
            Some(Interval::from_micros(1_500_000))
        );
        assert_eq!(
            "P+1D".parse::<Interval>().ok(),
            Some(Interval::from_days(1))
        );
        for bad in [
            "",
            "P",
            "PT",
            "1 day",
            "P1.5Y",
            "P1H",
            "PT1D",
            "P1DT",
            "P99999999999M",
            "PT1.1234567S",
        ] {
            assert!(bad.parse::<Interval>().is_err(), "{bad}");
        }
    }
}
