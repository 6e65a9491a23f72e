//! `NUMERIC` values: exact decimals of up to 38 digits.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use super::sql_type::MAX_NUMERIC_PRECISION;
use crate::error::{Error, Result};

/// `10^i` for `i` in `0..=38`.
pub(crate) const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Largest unscaled magnitude: 38 nines.
const MAX_UNSCALED: i128 = POW10[38] - 1;

/// An exact decimal `unscaled × 10^-scale` with at most 38 digits, the
/// value space of Hyper's NUMERIC(38,s).
///
/// Kept as an integer plus scale, never as a float, so text, HyperBinary and
/// PostgreSQL binary forms convert without rounding. The scale is part of
/// the value's form (`123.4500` keeps its 4 decimals), not of its identity:
/// comparison, equality and hashing are numeric, so `1.0 == 1.00`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Numeric {
    unscaled: i128,
    scale: u8,
}

impl Numeric {
    /// Zero with scale 0.
    pub const ZERO: Numeric = Numeric {
        unscaled: 0,
        scale: 0,
    };

    /// `unscaled × 10^-scale`; errors past 38 digits or scale 38.
    pub fn new(unscaled: i128, scale: u8) -> Result<Numeric> {
        if scale > MAX_NUMERIC_PRECISION {
            return Err(Error::conversion(format!(
                "NUMERIC scale {scale} exceeds 38"
            )));
        }
        if !(-MAX_UNSCALED..=MAX_UNSCALED).contains(&unscaled) {
            return Err(Error::conversion(format!(
                "NUMERIC value {unscaled}e-{scale} has more than 38 digits"
            )));
        }
        Ok(Numeric { unscaled, scale })
    }

    /// `unscaled × 10^-scale` for a `scale` the caller has checked is at
    /// most 38: any i64 has fewer than 38 digits, so this is
    /// [`Numeric::new`] without its checks (a NUMERIC(p ≤ 18) value as it
    /// comes off the wire).
    #[inline(always)]
    pub(crate) const fn from_i64(unscaled: i64, scale: u8) -> Numeric {
        Numeric {
            unscaled: unscaled as i128,
            scale,
        }
    }

    /// The integer whose digits the value has.
    pub const fn unscaled(self) -> i128 {
        self.unscaled
    }

    /// Digits after the decimal point.
    pub const fn scale(self) -> u8 {
        self.scale
    }

    /// Digits of the unscaled integer (at least 1): the smallest NUMERIC
    /// precision that holds the value at its current scale.
    pub fn precision(self) -> u8 {
        let abs = self.unscaled.unsigned_abs();
        let mut digits = 1u8;
        while usize::from(digits) < POW10.len() && abs >= POW10[usize::from(digits)].unsigned_abs()
        {
            digits += 1;
        }
        digits
    }

    pub const fn is_zero(self) -> bool {
        self.unscaled == 0
    }

    pub const fn is_negative(self) -> bool {
        self.unscaled < 0
    }

    /// The same value with exactly `scale` decimals; errors rather than
    /// round when digits would be dropped or the result exceeds 38 digits.
    pub fn rescale(self, scale: u8) -> Result<Numeric> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Ok(self),
            Ordering::Greater => {
                let factor = POW10
                    .get(usize::from(scale - self.scale))
                    .copied()
                    .unwrap_or(0);
                match self.unscaled.checked_mul(factor) {
                    Some(v) if factor != 0 => Numeric::new(v, scale),
                    _ => Err(Error::conversion(format!(
                        "{self} has too many digits at scale {scale}"
                    ))),
                }
            }
            Ordering::Less => {
                let factor = POW10[usize::from(self.scale - scale)];
                if self.unscaled % factor != 0 {
                    return Err(Error::conversion(format!(
                        "{self} cannot be written with {scale} decimals without rounding"
                    )));
                }
                Ok(Numeric {
                    unscaled: self.unscaled / factor,
                    scale,
                })
            }
        }
    }

    /// The value rescaled for a NUMERIC(precision, scale) column, or an
    /// error naming the column type when it does not fit.
    pub(crate) fn for_column(self, precision: u8, scale: u8) -> Result<Numeric> {
        super::sql_type::check_numeric(precision, scale)?;
        let v = self.rescale(scale).map_err(|e| {
            Error::conversion(format!("NUMERIC({precision},{scale}): {}", e.message()))
        })?;
        if v.unscaled.unsigned_abs() >= POW10[usize::from(precision)].unsigned_abs() {
            return Err(Error::conversion(format!(
                "{self} does not fit NUMERIC({precision},{scale})"
            )));
        }
        Ok(v)
    }

    /// The value without trailing fractional zeros (`1.500` to `1.5`).
    pub fn normalize(self) -> Numeric {
        let mut n = self;
        while n.scale > 0 && n.unscaled % 10 == 0 {
            n.unscaled /= 10;
            n.scale -= 1;
        }
        n
    }

    /// The nearest `f64`; inexact for most values with more than 15 digits.
    pub fn to_f64(self) -> f64 {
        // The text route is correctly rounded; dividing by 10^scale is not.
        self.to_string().parse().unwrap_or(f64::NAN)
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Numeric) -> Ordering {
        let (low, high, flipped) = if self.scale <= other.scale {
            (self, other, false)
        } else {
            (other, self, true)
        };
        let factor = POW10[usize::from(high.scale - low.scale)];
        let ord = match low.unscaled.checked_mul(factor) {
            Some(v) => v.cmp(&high.unscaled),
            // Overflow means |low| > 10^38 > |high| at the common scale.
            None if low.unscaled > 0 => Ordering::Greater,
            None => Ordering::Less,
        };
        if flipped {
            ord.reverse()
        } else {
            ord
        }
    }
}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let n = self.normalize();
        n.unscaled.hash(state);
        n.scale.hash(state);
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Numeric {
            fn from(v: $t) -> Numeric {
                // At most 20 digits: always in range.
                Numeric { unscaled: i128::from(v), scale: 0 }
            }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl TryFrom<i128> for Numeric {
    type Error = Error;

    fn try_from(v: i128) -> Result<Numeric> {
        Numeric::new(v, 0)
    }
}

/// Plain decimal notation with exactly `scale` decimals: `-0.05`, `123.4500`.
impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 39 digits (with the leading zero of 0.xxx...) and the point.
        let mut buf = [0u8; 40];
        let mut pos = buf.len();
        let mut abs = self.unscaled.unsigned_abs();
        let mut written = 0usize;
        let scale = usize::from(self.scale);
        while abs > 0 || written <= scale {
            if written == scale && scale > 0 {
                pos -= 1;
                buf[pos] = b'.';
            }
            pos -= 1;
            buf[pos] = b'0' + (abs % 10) as u8;
            abs /= 10;
            written += 1;
        }
        // Only ASCII was written.
        f.pad_integral(
            self.unscaled >= 0,
            "",
            std::str::from_utf8(&buf[pos..]).unwrap_or("?"),
        )
    }
}

/// Parses `[+-]digits[.digits][(e|E)[+-]digits]` exactly. The scale is the
/// number of digits after the point, less the exponent (`"1.50"` has scale
/// 2, `"1.5e1"` is 15 with scale 0, `"1e-3"` scale 3). Zeros at the end of
/// the fraction are dropped where the value needs more than 38 digits, or
/// more than 38 after the point, with them: the value stays exact
/// (`"1.5"` and 40 zeros is 1.5000..., 38 digits). Errors where no exact
/// NUMERIC holds the value.
impl FromStr for Numeric {
    type Err = Error;

    fn from_str(s: &str) -> Result<Numeric> {
        // Text that is no number is invalid input; a number no NUMERIC
        // holds exactly is a conversion error (out of range).
        let bad = |why: &str| Error::invalid_input(format!("invalid NUMERIC '{s}': {why}"));
        let too_big = |why: &str| Error::conversion(format!("invalid NUMERIC '{s}': {why}"));
        // ASCII white space only, as hyperd's own cast takes it: it refuses
        // a no-break space or a byte order mark around the digits.
        let (negative, body) =
            split_sign(s.trim_matches(|c: char| c.is_ascii_whitespace()).as_bytes());
        let (mantissa, exponent) = match body.iter().position(|&b| matches!(b, b'e' | b'E')) {
            Some(at) => (
                &body[..at],
                exponent(&body[at + 1..]).ok_or_else(|| bad("a bad exponent"))?,
            ),
            None => (body, 0),
        };
        // One pass for the shape: the digits, those after the point, the
        // first and last non-zero ones (as indexes among the digits).
        let (mut digits, mut after_point) = (0i64, 0i64);
        let (mut first_nonzero, mut last_nonzero) = (None, 0i64);
        let mut seen_point = false;
        for &b in mantissa {
            match b {
                b'.' if !seen_point => seen_point = true,
                b'0'..=b'9' => {
                    if b != b'0' {
                        first_nonzero.get_or_insert(digits);
                        last_nonzero = digits;
                    }
                    digits += 1;
                    after_point += i64::from(seen_point);
                }
                _ => return Err(bad("expected digits with an optional decimal point")),
            }
        }
        if digits == 0 {
            return Err(bad("no digits"));
        }
        let max = i64::from(MAX_NUMERIC_PRECISION);
        // The value is digits x 10^-written_scale.
        let written_scale = after_point - exponent;
        let Some(first_nonzero) = first_nonzero else {
            // Zero, at the scale written where a NUMERIC has it.
            return Numeric::new(0, written_scale.clamp(0, max) as u8);
        };
        // Significant digits, then zeros an exponent appends.
        let appended = (-written_scale).max(0);
        let mut scale = written_scale.max(0);
        let significant = digits - first_nonzero;
        // Zeros that may go: at the end of the digits, after the point.
        let droppable = (digits - 1 - last_nonzero).min(scale);
        let drop = (significant + appended - max).max(scale - max).max(0);
        if drop > droppable {
            return Err(too_big(if scale - droppable > max {
                "more than 38 digits after the point"
            } else {
                "more than 38 significant digits"
            }));
        }
        scale -= drop;
        let keep = significant - drop;
        // At most 38 digits in all (checked above): no overflow.
        let mut unscaled: i128 = 0;
        let mut index = 0i64;
        for &b in mantissa {
            if b == b'.' {
                continue;
            }
            if index >= first_nonzero && index < first_nonzero + keep {
                unscaled = unscaled * 10 + i128::from(b - b'0');
            }
            index += 1;
        }
        for _ in 0..appended {
            unscaled *= 10;
        }
        // `scale` <= 38 was just checked.
        Numeric::new(if negative { -unscaled } else { unscaled }, scale as u8)
    }
}

/// Whether `text` starts with a minus, and the rest after any sign.
fn split_sign(text: &[u8]) -> (bool, &[u8]) {
    match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// An exponent's `[+-]digits`, saturated far past any NUMERIC's.
fn exponent(text: &[u8]) -> Option<i64> {
    let (negative, digits) = split_sign(text);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits
        .iter()
        .fold(0i64, |n, &d| (n * 10 + i64::from(d - b'0')).min(1 << 40));
    Some(if negative { -value } else { value })
}

#[cfg(test)]
#[path = "numeric_tests.rs"]
mod tests;
