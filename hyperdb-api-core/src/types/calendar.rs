//! Proleptic Gregorian calendar arithmetic and the small text scanner shared
//! by the date and time types.
//!
//! Days are counted with Howard Hinnant's era algorithm, which is exact for
//! every year (including before 1582 and before year 1) and needs no tables.

/// Julian day number of 1970-01-01.
pub(crate) const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;
/// Julian day number of 2000-01-01, PostgreSQL's epoch.
pub(crate) const PG_EPOCH_JULIAN_DAY: i64 = 2_451_545;
pub(crate) const MICROS_PER_SECOND: i64 = 1_000_000;
pub(crate) const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
pub(crate) const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
pub(crate) const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// Days since 1970-01-01 of a valid (astronomical) year, month and day.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both are small positive numbers by construction.
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub(crate) fn is_leap_year(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Writes `YYYY-MM-DD` for an astronomical year and returns whether the
/// caller must append ` BC` (PostgreSQL's way of showing years <= 0).
pub(crate) fn write_ymd(
    f: &mut std::fmt::Formatter<'_>,
    y: i64,
    m: u32,
    d: u32,
) -> Result<bool, std::fmt::Error> {
    let (shown, bc) = if y <= 0 { (1 - y, true) } else { (y, false) };
    write!(f, "{shown:04}-{m:02}-{d:02}")?;
    Ok(bc)
}

/// Writes `HH:MM:SS` and, when non-zero, the fraction without trailing
/// zeros, as PostgreSQL prints times.
pub(crate) fn write_hms(f: &mut std::fmt::Formatter<'_>, micros: i64) -> std::fmt::Result {
    let (h, rest) = (micros / MICROS_PER_HOUR, micros % MICROS_PER_HOUR);
    let (m, rest) = (rest / MICROS_PER_MINUTE, rest % MICROS_PER_MINUTE);
    let (s, frac) = (rest / MICROS_PER_SECOND, rest % MICROS_PER_SECOND);
    write!(f, "{h:02}:{m:02}:{s:02}")?;
    if frac != 0 {
        let mut digits = 6;
        let mut frac = frac;
        while frac % 10 == 0 {
            frac /= 10;
            digits -= 1;
        }
        write!(f, ".{frac:0digits$}")?;
    }
    Ok(())
}

/// A forward-only scanner over ASCII text; every method returns `None` on
/// mismatch so parsers read as a chain of `?`.
pub(crate) struct Scanner<'a> {
    rest: &'a [u8],
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(s: &'a str) -> Scanner<'a> {
        Scanner {
            rest: s.trim().as_bytes(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// Consumes `c` if it is next.
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.rest = &self.rest[1..];
            true
        } else {
            false
        }
    }

    /// Consumes `word` case-insensitively if it is next.
    pub(crate) fn eat_word(&mut self, word: &str) -> bool {
        let w = word.as_bytes();
        if self.rest.len() >= w.len() && self.rest[..w.len()].eq_ignore_ascii_case(w) {
            self.rest = &self.rest[w.len()..];
            true
        } else {
            false
        }
    }

    pub(crate) fn skip_spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.rest = &self.rest[1..];
        }
    }

    /// Reads `min..=max` decimal digits as a number.
    pub(crate) fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let n = self
            .rest
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n < min {
            return None;
        }
        let mut v: i64 = 0;
        for &b in &self.rest[..n] {
            v = v.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
        }
        self.rest = &self.rest[n..];
        Some(v)
    }

    /// Reads an optional `.ffffff` fraction as microseconds (at most 6 digits).
    pub(crate) fn fraction_micros(&mut self) -> Option<i64> {
        if !self.eat(b'.') {
            return Some(0);
        }
        let n = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 || n > 6 {
            return None;
        }
        let v = self.digits(n, n)?;
        Some(v * 10i64.pow(6 - n as u32))
    }

    /// Reads `HH:MM[:SS[.ffffff]]` as microseconds since midnight, allowing
    /// exactly `24:00:00` as PostgreSQL and hyperd do.
    pub(crate) fn time_of_day(&mut self) -> Option<i64> {
        let h = self.digits(1, 2)?;
        if !self.eat(b':') {
            return None;
        }
        let m = self.digits(2, 2)?;
        let (s, frac) = if self.eat(b':') {
            (self.digits(2, 2)?, self.fraction_micros()?)
        } else {
            (0, 0)
        };
        if m > 59 || s > 59 || h > 24 {
            return None;
        }
        let micros = h * MICROS_PER_HOUR + m * MICROS_PER_MINUTE + s * MICROS_PER_SECOND + frac;
        (micros <= MICROS_PER_DAY).then_some(micros)
    }

    /// Reads `Y...-MM-DD` (1 to 9 year digits) as written, unvalidated.
    /// A ` BC` suffix is left to the caller ([`Scanner::bc_suffix`]) because
    /// timestamps put it after the time and zone.
    pub(crate) fn ymd(&mut self) -> Option<(i64, u32, u32)> {
        let y = self.digits(1, 9)?;
        if !self.eat(b'-') {
            return None;
        }
        let m = u32::try_from(self.digits(1, 2)?).ok()?;
        if !self.eat(b'-') {
            return None;
        }
        let d = u32::try_from(self.digits(1, 2)?).ok()?;
        Some((y, m, d))
    }

    /// Consumes an optional trailing ` BC` / ` AD`; true for BC.
    pub(crate) fn bc_suffix(&mut self) -> bool {
        self.skip_spaces();
        if self.eat_word("BC") {
            true
        } else {
            self.eat_word("AD");
            false
        }
    }
}

/// Turns a shown year (BC years counted from 1) into an astronomical one
/// and validates the day of month.
pub(crate) fn checked_days(y: i64, m: u32, d: u32, bc: bool) -> Option<i64> {
    let year = if bc {
        if y < 1 {
            return None;
        }
        1 - y
    } else {
        y
    };
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(year, m) {
        return None;
    }
    Some(days_from_civil(year, m, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(
            days_from_civil(2000, 1, 1) + UNIX_EPOCH_JULIAN_DAY,
            PG_EPOCH_JULIAN_DAY
        );
        // Julian day 0 is 24 November 4714 BC (astronomical year -4713).
        assert_eq!(days_from_civil(-4713, 11, 24) + UNIX_EPOCH_JULIAN_DAY, 0);
        assert_eq!(civil_from_days(-UNIX_EPOCH_JULIAN_DAY), (-4713, 11, 24));
    }

    #[test]
    fn round_trips_every_day_of_four_centuries_and_far_years() {
        let start = days_from_civil(1599, 12, 25);
        for days in start..start + 146_097 + 10 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
            assert!(d >= 1 && d <= days_in_month(y, m));
        }
        for y in [-1_000_000, -4713, -1, 0, 1, 9999, 294_276, 5_000_000] {
            assert_eq!(civil_from_days(days_from_civil(y, 2, 28)), (y, 2, 28));
        }
    }

    #[test]
    fn leap_years() {
        assert!(is_leap_year(2000) && is_leap_year(0) && is_leap_year(-4) && is_leap_year(2024));
        assert!(!is_leap_year(1900) && !is_leap_year(2100) && !is_leap_year(-1));
    }
}
