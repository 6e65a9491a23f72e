//! `TIME` values.

use std::fmt;
use std::str::FromStr;

use super::calendar::{
    self, Scanner, MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND,
};
use crate::error::{Error, Result};

/// A time of day with microsecond precision, stored as microseconds since
/// midnight (HyperBinary's and PostgreSQL's TIME layout).
///
/// The range is `00:00:00` to `24:00:00` inclusive: hyperd, like
/// PostgreSQL, accepts and returns `24:00:00`, so a decoder that refused it
/// would fail on data the server holds. [`Time::from_hms_micro`] takes the
/// usual `hour < 24` fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time {
    micros: i64,
}

impl Time {
    /// 00:00:00.
    pub const MIDNIGHT: Time = Time { micros: 0 };

    /// A time from hours (< 24), minutes, seconds (< 60 each) and
    /// microseconds (< 1,000,000).
    pub fn from_hms_micro(hour: u32, minute: u32, second: u32, micro: u32) -> Result<Time> {
        if hour > 23 || minute > 59 || second > 59 || micro > 999_999 {
            return Err(Error::invalid_input(format!(
                "invalid time {hour}:{minute}:{second}.{micro:06}"
            )));
        }
        Ok(Time {
            micros: i64::from(hour) * MICROS_PER_HOUR
                + i64::from(minute) * MICROS_PER_MINUTE
                + i64::from(second) * MICROS_PER_SECOND
                + i64::from(micro),
        })
    }

    /// A time from hours, minutes and seconds.
    pub fn from_hms(hour: u32, minute: u32, second: u32) -> Result<Time> {
        Time::from_hms_micro(hour, minute, second, 0)
    }

    /// The time `micros` after midnight, `0..=86_400_000_000`.
    pub fn from_micros(micros: i64) -> Result<Time> {
        if (0..=MICROS_PER_DAY).contains(&micros) {
            Ok(Time { micros })
        } else {
            Err(Error::conversion(format!(
                "{micros} microseconds is outside a day (0..=86400000000)"
            )))
        }
    }

    /// Microseconds since midnight.
    pub const fn micros(self) -> i64 {
        self.micros
    }

    /// Hours (0..=24), minutes, seconds and microseconds.
    pub fn hms_micro(self) -> (u32, u32, u32, u32) {
        let m = self.micros;
        // Each part is bounded by the range check in the constructors.
        (
            (m / MICROS_PER_HOUR) as u32,
            (m % MICROS_PER_HOUR / MICROS_PER_MINUTE) as u32,
            (m % MICROS_PER_MINUTE / MICROS_PER_SECOND) as u32,
            (m % MICROS_PER_SECOND) as u32,
        )
    }
}

/// `HH:MM:SS[.ffffff]` with trailing fraction zeros dropped, as hyperd prints.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        calendar::write_hms(f, self.micros)
    }
}

/// Parses `HH:MM[:SS[.ffffff]]`.
impl FromStr for Time {
    type Err = Error;

    fn from_str(s: &str) -> Result<Time> {
        let mut sc = Scanner::new(s);
        match sc.time_of_day() {
            Some(micros) if sc.is_empty() => Ok(Time { micros }),
            _ => Err(Error::conversion(format!(
                "invalid TIME '{s}': expected HH:MM:SS[.ffffff]"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_prints() {
        let t = Time::from_hms_micro(1, 2, 3, 4).expect("valid");
        assert_eq!(t.micros(), 3_723_000_004);
        assert_eq!(t.to_string(), "01:02:03.000004");
        assert_eq!(t.hms_micro(), (1, 2, 3, 4));
        assert_eq!(
            Time::from_hms_micro(1, 2, 3, 500_000)
                .map(|t| t.to_string())
                .ok()
                .as_deref(),
            Some("01:02:03.5")
        );
        assert_eq!(Time::MIDNIGHT.to_string(), "00:00:00");
        let last = Time::from_hms_micro(23, 59, 59, 999_999).expect("valid");
        assert_eq!(last.micros(), MICROS_PER_DAY - 1);
    }

    #[test]
    fn end_of_day_is_accepted_like_hyperd() {
        let t = Time::from_micros(MICROS_PER_DAY).expect("24:00:00");
        assert_eq!(t.to_string(), "24:00:00");
        assert_eq!("24:00:00".parse::<Time>().ok(), Some(t));
        assert_eq!(t.hms_micro(), (24, 0, 0, 0));
    }

    #[test]
    fn rejects_out_of_range() {
        assert!(Time::from_hms(24, 0, 0).is_err());
        assert!(Time::from_hms(0, 60, 0).is_err());
        assert!(Time::from_hms(0, 0, 60).is_err());
        assert!(Time::from_hms_micro(0, 0, 0, 1_000_000).is_err());
        assert!(Time::from_micros(-1).is_err());
        assert!(Time::from_micros(MICROS_PER_DAY + 1).is_err());
        for text in [
            "",
            "1",
            "25:00:00",
            "24:00:01",
            "12:60",
            "12:00:00.1234567",
            "12:00:00.",
            "12:00:00 x",
        ] {
            assert!(text.parse::<Time>().is_err(), "{text}");
        }
    }

    #[test]
    fn parses() {
        assert_eq!("1:02".parse::<Time>().ok(), Time::from_hms(1, 2, 0).ok());
        assert_eq!(
            "01:02:03.25".parse::<Time>().ok(),
            Time::from_hms_micro(1, 2, 3, 250_000).ok()
        );
    }
}
