//! [`ToHyperBinary`] and [`FromHyperBinary`] for Rust primitives and the
//! value types of this module.
//!
//! Conversions are lossless or fail per value: integers go into any integer
//! or NUMERIC column with a range check, `f64` into REAL only when exactly
//! representable, strings into VARCHAR(n)/CHAR(n) only when short enough.

use bytes::BytesMut;

use super::calendar::MICROS_PER_DAY;
use super::hyperbinary::{
    fixed, mismatch, put_le, put_len_prefixed, sealed::Token, Fixed, FromHyperBinary, ToHyperBinary,
};
use super::numeric::POW10;
use super::sql_type::{SqlType, MAX_NUMERIC64_PRECISION, MAX_NUMERIC_PRECISION};
use super::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use crate::error::{Error, Result};

fn int_column(ty: &SqlType) -> bool {
    matches!(
        ty,
        SqlType::SmallInt | SqlType::Int | SqlType::BigInt | SqlType::Oid
    )
}

/// Writes an integer into an integer or NUMERIC column, checking its range.
fn put_int(v: i128, rust: &str, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
    let range = || Error::conversion(format!("{rust} value {v} is out of range for {ty}"));
    match *ty {
        SqlType::SmallInt => put_le(buf, i16::try_from(v).map_err(|_| range())?.to_le_bytes()),
        SqlType::Int => put_le(buf, i32::try_from(v).map_err(|_| range())?.to_le_bytes()),
        SqlType::BigInt => put_le(buf, i64::try_from(v).map_err(|_| range())?.to_le_bytes()),
        SqlType::Oid => put_le(buf, u32::try_from(v).map_err(|_| range())?.to_le_bytes()),
        SqlType::Numeric { precision, scale } => {
            let n = Numeric::try_from(v).map_err(|_| range())?;
            put_numeric(n, precision, scale, ty, buf)?;
        }
        _ => return Err(mismatch(rust, ty)),
    }
    Ok(())
}

/// Writes a NUMERIC as its unscaled integer at the column's scale: 8 bytes
/// up to precision 18, 16 bytes above.
fn put_numeric(
    n: Numeric,
    precision: u8,
    scale: u8,
    ty: &SqlType,
    buf: &mut BytesMut,
) -> Result<()> {
    let v = n.for_column(precision, scale)?.unscaled();
    if precision <= MAX_NUMERIC64_PRECISION {
        let v =
            i64::try_from(v).map_err(|_| Error::conversion(format!("{n} does not fit {ty}")))?;
        put_le(buf, v.to_le_bytes());
    } else {
        put_le(buf, v.to_le_bytes());
    }
    Ok(())
}

/// Reads a NUMERIC column's unscaled integer.
fn get_unscaled(ty: &SqlType, precision: u8, raw: &[u8]) -> Result<i128> {
    if precision <= MAX_NUMERIC64_PRECISION {
        Ok(i64::from_le_bytes(fixed(ty, raw)?).into())
    } else {
        Ok(i128::from_le_bytes(fixed(ty, raw)?))
    }
}

/// Reads any integer column, or a NUMERIC without decimals, as i128.
#[inline]
fn get_int(ty: &SqlType, raw: &[u8], rust: &str) -> Result<i128> {
    Ok(match *ty {
        SqlType::SmallInt => i16::from_le_bytes(fixed(ty, raw)?).into(),
        SqlType::Int => i32::from_le_bytes(fixed(ty, raw)?).into(),
        SqlType::BigInt => i64::from_le_bytes(fixed(ty, raw)?).into(),
        SqlType::Oid => u32::from_le_bytes(fixed(ty, raw)?).into(),
        SqlType::Numeric {
            precision,
            scale: 0,
        } => get_unscaled(ty, precision, raw)?,
        _ => return Err(mismatch(rust, ty)),
    })
}

/// Any integer column (or NUMERIC with scale 0) as `T`, range-checked.
#[inline(never)]
fn decode_int<T: TryFrom<i128>>(ty: &SqlType, raw: &[u8], rust: &str) -> Result<T> {
    let v = get_int(ty, raw, rust)?;
    T::try_from(v)
        .map_err(|_| Error::conversion(format!("{ty} value {v} is out of range for {rust}")))
}

/// `Some` of the type given, else `None`: a `PLAIN` in a macro.
macro_rules! plain {
    () => {
        None
    };
    ($ty:expr) => {
        Some($ty)
    };
}

macro_rules! int_impls {
    ($($t:ident $(=> $native:ident)?;)*) => {$(
        impl ToHyperBinary for $t {
            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                int_column(ty) || matches!(ty, SqlType::Numeric { .. })
            }

            #[inline]
            fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
                $(if matches!(ty, SqlType::$native) {
                    put_le(buf, self.to_le_bytes());
                    return Ok(());
                })?
                put_int(i128::from(*self), stringify!($t), ty, buf)
            }

            $(#[inline]
            fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
                match ty {
                    SqlType::$native => Fixed::le(self.to_le_bytes()),
                    _ => Fixed::Other,
                }
            })?
        }

        impl<'a> FromHyperBinary<'a> for $t {
            const PLAIN: Option<SqlType> = plain!($(SqlType::$native)?);

            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                int_column(ty) || matches!(ty, SqlType::Numeric { scale: 0, .. })
            }

            // The native type's well-formed value inline (every value of a
            // typed scan); widening, NUMERIC and errors out of line.
            #[inline(always)]
            fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
                $(if matches!(ty, SqlType::$native) {
                    if let Ok(bytes) = raw.try_into() {
                        return Ok($t::from_le_bytes(bytes));
                    }
                })?
                decode_int(ty, raw, stringify!($t))
            }
        }
    )*};
}

int_impls! {
    i16 => SmallInt;
    i32 => Int;
    i64 => BigInt;
    u32 => Oid;
    i8;
    u8;
    u16;
    u64;
    i128;
}

impl ToHyperBinary for f64 {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Double | SqlType::Real)
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        match ty {
            SqlType::Double => put_le(buf, self.to_le_bytes()),
            SqlType::Real => {
                // Rounded to REAL's precision, as the column means (and as
                // hyperd's own cast, Tableau's inserter and the Node
                // package store it: 0.1 is REAL's nearest, 0.100000001);
                // only a finite value past REAL's range is refused, since
                // it would become infinity.
                let narrow = *self as f32;
                if narrow.is_infinite() && self.is_finite() {
                    return Err(Error::conversion(format!(
                        "f64 value {self} is out of the REAL range (at most ±{})",
                        f32::MAX
                    )));
                }
                put_le(buf, narrow.to_le_bytes());
            }
            _ => return Err(mismatch("f64", ty)),
        }
        Ok(())
    }

    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
        match ty {
            SqlType::Double => Fixed::le(self.to_le_bytes()),
            _ => Fixed::Other,
        }
    }
}

impl ToHyperBinary for f32 {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Double | SqlType::Real)
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        match ty {
            SqlType::Real => put_le(buf, self.to_le_bytes()),
            SqlType::Double => put_le(buf, f64::from(*self).to_le_bytes()),
            _ => return Err(mismatch("f32", ty)),
        }
        Ok(())
    }

    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
        match ty {
            SqlType::Real => Fixed::le(self.to_le_bytes()),
            _ => Fixed::Other,
        }
    }
}

#[inline(never)]
fn decode_f64_slow(ty: &SqlType, raw: &[u8]) -> Result<f64> {
    match ty {
        SqlType::Double => Ok(f64::from_le_bytes(fixed(ty, raw)?)),
        SqlType::Real => Ok(f32::from_le_bytes(fixed(ty, raw)?).into()),
        _ => Err(mismatch("f64", ty)),
    }
}

impl<'a> FromHyperBinary<'a> for f64 {
    const PLAIN: Option<SqlType> = Some(SqlType::Double);

    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Double | SqlType::Real)
    }

    #[inline(always)]
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        if let (SqlType::Double, Ok(bytes)) = (ty, raw.try_into()) {
            return Ok(f64::from_le_bytes(bytes));
        }
        decode_f64_slow(ty, raw)
    }
}

impl<'a> FromHyperBinary<'a> for f32 {
    const PLAIN: Option<SqlType> = Some(SqlType::Real);

    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Real)
    }

    #[inline]
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        match ty {
            SqlType::Real => Ok(f32::from_le_bytes(fixed(ty, raw)?)),
            _ => Err(mismatch("f32", ty)),
        }
    }
}

impl ToHyperBinary for bool {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Bool)
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        if !matches!(ty, SqlType::Bool) {
            return Err(mismatch("bool", ty));
        }
        put_le(buf, [u8::from(*self)]);
        Ok(())
    }

    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
        match ty {
            SqlType::Bool => Fixed::le([u8::from(*self)]),
            _ => Fixed::Other,
        }
    }
}

impl<'a> FromHyperBinary<'a> for bool {
    const PLAIN: Option<SqlType> = Some(SqlType::Bool);

    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Bool)
    }

    #[inline]
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        match (ty, fixed::<1>(ty, raw)?) {
            (SqlType::Bool, [0]) => Ok(false),
            (SqlType::Bool, [1]) => Ok(true),
            (SqlType::Bool, [b]) => Err(Error::conversion(format!(
                "HyperBinary BOOLEAN byte {b} is neither 0 nor 1"
            ))),
            _ => Err(mismatch("bool", ty)),
        }
    }
}

fn text_column(ty: &SqlType) -> bool {
    matches!(
        ty,
        SqlType::Text | SqlType::Json | SqlType::Varchar(_) | SqlType::Char(_)
    )
}

fn bytes_column(ty: &SqlType) -> bool {
    text_column(ty) || matches!(ty, SqlType::Bytea | SqlType::Geography)
}

/// Writes a string into a text column, enforcing VARCHAR(n)/CHAR(n) limits
/// ([`SqlType::fit_text`]) so the error names the value.
fn put_str(s: &str, rust: &str, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
    if !text_column(ty) {
        // GEOGRAPHY takes Hyper's binary form, never text: send WKT through
        // `CAST(... AS TABLEAU.TABGEOGRAPHY)` instead.
        return Err(mismatch(rust, ty));
    }
    let s = ty.fit_text(s).map_err(|chars| {
        Error::conversion(format!("string of {chars} characters is too long for {ty}"))
    })?;
    put_len_prefixed(s.as_bytes(), ty, buf)
}

fn put_bytes(b: &[u8], rust: &str, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
    match ty {
        SqlType::Bytea | SqlType::Geography => put_len_prefixed(b, ty, buf),
        _ => Err(mismatch(rust, ty)),
    }
}

#[inline]
fn get_str<'a>(ty: &SqlType, raw: &'a [u8], rust: &str) -> Result<&'a str> {
    if !text_column(ty) {
        return Err(mismatch(rust, ty));
    }
    utf8(raw).map_err(|e| Error::conversion(format!("{ty} value is not valid UTF-8: {e}")))
}

/// `raw` as `&str`: ASCII (most text values) by a word-at-a-time check,
/// anything else by `from_utf8`. Measured on lineitem's comments (10-44
/// bytes): `from_utf8` alone took ~2x as long (DEVELOPMENT.md).
#[inline(always)]
pub(crate) fn utf8(raw: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    if raw.is_ascii() {
        // SAFETY: every byte is ASCII, and ASCII is valid UTF-8. Covered by
        // `text_decodes_ascii_and_utf8_and_rejects_invalid`.
        return Ok(unsafe { std::str::from_utf8_unchecked(raw) });
    }
    std::str::from_utf8(raw)
}

fn get_bytes<'a>(ty: &SqlType, raw: &'a [u8], rust: &str) -> Result<&'a [u8]> {
    if bytes_column(ty) {
        Ok(raw)
    } else {
        Err(mismatch(rust, ty))
    }
}

macro_rules! owned_or_borrowed {
    ($t:ty, $name:literal, $put:ident, $get:ident, $accepts_in:ident, $accepts_out:ident, $own:expr) => {
        impl<'a> ToHyperBinary for $t {
            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                $accepts_in(ty)
            }

            #[inline]
            fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
                $put(self, $name, ty, buf)
            }
        }

        impl<'a> FromHyperBinary<'a> for $t {
            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                $accepts_out(ty)
            }

            #[inline]
            fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
                $get(ty, raw, $name).map($own)
            }
        }
    };
}

fn bytes_in(ty: &SqlType) -> bool {
    matches!(ty, SqlType::Bytea | SqlType::Geography)
}

owned_or_borrowed!(
    &'a str,
    "&str",
    put_str,
    get_str,
    text_column,
    text_column,
    |s| s
);
owned_or_borrowed!(
    String,
    "String",
    put_str,
    get_str,
    text_column,
    text_column,
    str::to_owned
);
owned_or_borrowed!(
    &'a [u8],
    "&[u8]",
    put_bytes,
    get_bytes,
    bytes_in,
    bytes_column,
    |b| b
);
owned_or_borrowed!(
    Vec<u8>,
    "Vec<u8>",
    put_bytes,
    get_bytes,
    bytes_in,
    bytes_column,
    <[u8]>::to_vec
);

/// Value types with exactly one column type and a fixed layout.
macro_rules! value_impls {
    ($($t:ident: $col:ident, |$v:ident, $buf:ident| $put:expr, |$ty:ident, $raw:ident| $get:expr
       $(, fixed |$fv:ident| $fixed:expr)?;)*) => {$(
        impl ToHyperBinary for $t {
            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                matches!(ty, SqlType::$col)
            }

#[inline]
            fn encode_hyper(&self, ty: &SqlType, $buf: &mut BytesMut) -> Result<()> {
                if !matches!(ty, SqlType::$col) {
                    return Err(mismatch(stringify!($t), ty));
                }
                let $v = *self;
                $put;
                Ok(())
            }

            $(#[inline]
            fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
                let $fv = *self;
                match ty {
                    SqlType::$col => $fixed,
                    _ => Fixed::Other,
                }
            })?
        }

        impl<'a> FromHyperBinary<'a> for $t {
            const PLAIN: Option<SqlType> = Some(SqlType::$col);

            #[inline]
            fn accepts(ty: &SqlType) -> bool {
                matches!(ty, SqlType::$col)
            }

#[inline]
            fn decode_hyper($ty: &SqlType, $raw: &'a [u8]) -> Result<Self> {
                if !matches!($ty, SqlType::$col) {
                    return Err(mismatch(stringify!($t), $ty));
                }
                $get
            }
        }
    )*};
}

value_impls! {
    Date: Date,
        |v, buf| {
            if !v.is_in_hyper_range() {
                return Err(Error::invalid_input(format!(
                    "DATE {v} is outside hyperd's range, 4713-01-01 BC to 294276-12-31"
                )));
            }
            put_le(buf, v.julian_day().to_le_bytes())
        },
        |ty, raw| Ok(Date::from_julian_day(i32::from_le_bytes(fixed(ty, raw)?))),
        fixed |v| if v.is_in_hyper_range() { Fixed::le(v.julian_day().to_le_bytes()) } else { Fixed::Other };
    // 24:00:00 is refused for a column: hyperd stores it, and Tableau's
    // Hyper API then fails every read of the table ("hour must be in
    // 0..23", measured with tableauhyperapi 0.0.26963).
    Time: Time,
        |v, buf| {
            if v.micros() == MICROS_PER_DAY {
                return Err(Error::invalid_input(
                    "TIME 24:00:00 is not stored (Tableau's Hyper API cannot read it): store 00:00:00",
                ));
            }
            put_le(buf, v.micros().to_le_bytes())
        },
        |ty, raw| Time::from_micros(i64::from_le_bytes(fixed(ty, raw)?)),
        fixed |v| if v.micros() == MICROS_PER_DAY { Fixed::Other } else { Fixed::le(v.micros().to_le_bytes()) };
    Timestamp: Timestamp,
        |v, buf| put_le(buf, v.hyper_micros()?.to_le_bytes()),
        |ty, raw| Timestamp::from_hyper_micros(u64::from_le_bytes(fixed(ty, raw)?)),
        fixed |v| v.hyper_micros().map_or(Fixed::Other, |m| Fixed::le(m.to_le_bytes()));
    TimestampTz: TimestampTz,
        |v, buf| put_le(buf, v.to_utc().hyper_micros()?.to_le_bytes()),
        |ty, raw| Timestamp::from_hyper_micros(u64::from_le_bytes(fixed(ty, raw)?)).map(TimestampTz::from_utc),
        fixed |v| v.to_utc().hyper_micros().map_or(Fixed::Other, |m| Fixed::le(m.to_le_bytes()));
    Interval: Interval,
        |v, buf| {
            put_le(buf, v.micros.to_le_bytes());
            put_le(buf, v.days.to_le_bytes());
            put_le(buf, v.months.to_le_bytes());
        },
        |ty, raw| {
            let b: [u8; 16] = fixed(ty, raw)?;
            let (micros, rest) = b.split_at(8);
            let (days, months) = rest.split_at(4);
            Ok(Interval {
                micros: i64::from_le_bytes(micros.try_into().unwrap_or_default()),
                days: i32::from_le_bytes(days.try_into().unwrap_or_default()),
                months: i32::from_le_bytes(months.try_into().unwrap_or_default()),
            })
        };
}

impl ToHyperBinary for Numeric {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Numeric { .. })
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        match *ty {
            SqlType::Numeric { precision, scale } => put_numeric(*self, precision, scale, ty, buf),
            _ => Err(mismatch("Numeric", ty)),
        }
    }

    /// The inserters' fast path for the usual case: a NUMERIC(p ≤ 18, s)
    /// column and a value already at scale `s` within `p` digits is its
    /// unscaled i64 as it lies, what `put_numeric` writes for it. Any
    /// other value (to rescale, too large, an invalid column type) takes
    /// the checked path and its errors.
    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, _: Token) -> Fixed {
        match *ty {
            SqlType::Numeric { precision, scale }
                if (1..=MAX_NUMERIC64_PRECISION).contains(&precision)
                    && scale <= precision
                    && self.scale() == scale
                    && self.unscaled().unsigned_abs()
                        < POW10[usize::from(precision)].unsigned_abs() =>
            {
                // Fewer than 19 digits: fits i64.
                Fixed::le((self.unscaled() as i64).to_le_bytes())
            }
            _ => Fixed::Other,
        }
    }
}

impl<'a> FromHyperBinary<'a> for Numeric {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Numeric { .. }) || int_column(ty)
    }

    #[inline]
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        match *ty {
            // NUMERIC(p ≤ 18): an i64, always within 38 digits, so only
            // the scale needs the check `Numeric::new` makes.
            SqlType::Numeric { precision, scale }
                if precision <= MAX_NUMERIC64_PRECISION && scale <= MAX_NUMERIC_PRECISION =>
            {
                Ok(Numeric::from_i64(
                    i64::from_le_bytes(fixed(ty, raw)?),
                    scale,
                ))
            }
            SqlType::Numeric { precision, scale } => {
                Numeric::new(get_unscaled(ty, precision, raw)?, scale)
            }
            _ => Numeric::try_from(get_int(ty, raw, "Numeric")?),
        }
    }
}
