//! PostgreSQL's binary format (format code 1, big-endian) for bound
//! parameters, and for results when a caller asks for it.
//!
//! Measured on hyperd 0.0.26963: every type below binds in binary with its
//! own OID and with OID 0 (unspecified), except NUMERIC. In binary a NUMERIC
//! must be declared with OID 0 (so hyperd infers NUMERIC(p,s) from the
//! statement) and carry exactly the inferred scale, else "cannot handle
//! truncation when reading numerics" (0A000). So a [`Numeric`] binds in
//! *text* format (format code 0, [`ToPgBinary::param_format`]) with OID 0:
//! hyperd infers the type from where the parameter stands and reads the
//! decimal text into it as it reads a literal, at any scale (rounding to
//! the column's), in inserts, casts, comparisons and arithmetic alike.
//! GEOGRAPHY has no binary input at all: bind WKT text and cast it.

use bytes::{BufMut, BytesMut};

use super::calendar::MICROS_PER_DAY;
use super::hyperbinary::mismatch;
use super::sql_type::{oid, SqlType};
use super::{pg_numeric, Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use crate::error::{Error, Result};
// The protocol's format codes: a parameter's is one of them.
use crate::protocol::ops::{FORMAT_BINARY, FORMAT_TEXT};

/// Whether an encoder wrote a value or stands for SQL NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsNull {
    Yes,
    No,
}

/// A Rust value that can be bound as a parameter: in PostgreSQL binary,
/// or as text where binary cannot carry it ([`ToPgBinary::param_format`]).
pub trait ToPgBinary {
    /// The OID to declare for parameters of this type in Parse; 0 lets the
    /// server infer the type from the statement.
    fn type_oid() -> u32
    where
        Self: Sized;

    /// [`ToPgBinary::type_oid`] for a value behind `dyn`.
    fn param_type_oid(&self) -> u32;

    /// Appends the value's bytes (without length), or returns
    /// [`IsNull::Yes`] having appended nothing.
    fn encode_pg_binary(&self, buf: &mut BytesMut) -> Result<IsNull>;

    /// The Bind format code of the bytes [`ToPgBinary::encode_pg_binary`]
    /// writes: [`FORMAT_BINARY`] but for [`Numeric`] (see the
    /// module docs).
    fn param_format(&self) -> i16 {
        FORMAT_BINARY
    }
}

/// Appends one Bind parameter: its i32 length and bytes, or -1 for NULL.
/// On error nothing is appended.
pub fn put_param<T: ToPgBinary + ?Sized>(value: &T, buf: &mut BytesMut) -> Result<()> {
    let start = buf.len();
    buf.put_i32(-1);
    let len = match value.encode_pg_binary(buf) {
        Ok(IsNull::No) => i32::try_from(buf.len() - start - 4)
            .map_err(|_| Error::invalid_input("parameter exceeds 2 GiB")),
        Ok(IsNull::Yes) => {
            buf.truncate(start + 4);
            Ok(-1)
        }
        Err(e) => Err(e),
    };
    match len {
        Ok(len) => {
            buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
            Ok(())
        }
        Err(e) => {
            buf.truncate(start);
            Err(e)
        }
    }
}

/// A Rust value that can be read from a binary (format 1) result field.
pub trait FromPgBinary<'a>: Sized {
    /// Whether columns of `ty` can be read as this type.
    fn accepts(ty: &SqlType) -> bool;

    /// Reads a non-NULL field.
    fn decode_pg_binary(ty: &SqlType, raw: &'a [u8]) -> Result<Self>;

    /// Reads a NULL field; only `Option<T>` accepts one.
    fn decode_pg_null(ty: &SqlType) -> Result<Self> {
        Err(Error::conversion(format!(
            "unexpected NULL in a {ty} column; read it as an Option"
        )))
    }
}

impl<T: ToPgBinary> ToPgBinary for Option<T> {
    fn type_oid() -> u32 {
        T::type_oid()
    }

    fn param_type_oid(&self) -> u32 {
        T::type_oid()
    }

    fn encode_pg_binary(&self, buf: &mut BytesMut) -> Result<IsNull> {
        match self {
            Some(v) => v.encode_pg_binary(buf),
            None => Ok(IsNull::Yes),
        }
    }

    fn param_format(&self) -> i16 {
        self.as_ref().map_or(FORMAT_BINARY, T::param_format)
    }
}

impl<T: ToPgBinary> ToPgBinary for &T {
    fn type_oid() -> u32 {
        T::type_oid()
    }

    fn param_type_oid(&self) -> u32 {
        (**self).param_type_oid()
    }

    fn encode_pg_binary(&self, buf: &mut BytesMut) -> Result<IsNull> {
        (**self).encode_pg_binary(buf)
    }

    fn param_format(&self) -> i16 {
        (**self).param_format()
    }
}

impl<'a, T: FromPgBinary<'a>> FromPgBinary<'a> for Option<T> {
    fn accepts(ty: &SqlType) -> bool {
        T::accepts(ty)
    }

    fn decode_pg_binary(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        T::decode_pg_binary(ty, raw).map(Some)
    }

    fn decode_pg_null(_: &SqlType) -> Result<Self> {
        Ok(None)
    }
}

fn be<const N: usize>(ty: &SqlType, raw: &[u8]) -> Result<[u8; N]> {
    raw.try_into().map_err(|_| {
        Error::conversion(format!(
            "binary {ty} value must be {N} bytes, got {}",
            raw.len()
        ))
    })
}

/// Reads an integer column of any width, big-endian.
fn get_int(ty: &SqlType, raw: &[u8], rust: &str) -> Result<i64> {
    Ok(match ty {
        SqlType::SmallInt => i16::from_be_bytes(be(ty, raw)?).into(),
        SqlType::Int => i32::from_be_bytes(be(ty, raw)?).into(),
        SqlType::BigInt => i64::from_be_bytes(be(ty, raw)?),
        SqlType::Oid => u32::from_be_bytes(be(ty, raw)?).into(),
        _ => return Err(mismatch(rust, ty)),
    })
}

/// Implements both traits for a type. `$accepts` lists the column types it
/// reads; `|$v| $enc` appends `$v` (the value) to `buf`; `|$ty, $raw| $dec`
/// reads one.
macro_rules! pg_impl {
    ($t:ty, $oid:expr, $accepts:pat, |$s:ident, $buf:ident| $enc:expr, |$ty:ident, $raw:ident| $dec:expr) => {
        impl<'a> ToPgBinary for $t {
            fn type_oid() -> u32 {
                $oid
            }

            fn param_type_oid(&self) -> u32 {
                $oid
            }

            fn encode_pg_binary(&self, $buf: &mut BytesMut) -> Result<IsNull> {
                let $s = self;
                $enc;
                Ok(IsNull::No)
            }
        }

        impl<'a> FromPgBinary<'a> for $t {
            fn accepts(ty: &SqlType) -> bool {
                matches!(ty, $accepts)
            }

            fn decode_pg_binary($ty: &SqlType, $raw: &'a [u8]) -> Result<Self> {
                if !matches!($ty, $accepts) {
                    return Err(mismatch(stringify!($t), $ty));
                }
                $dec
            }
        }
    };
}

pg_impl!(
    bool,
    oid::BOOL,
    SqlType::Bool,
    |v, buf| buf.put_u8(u8::from(*v)),
    |ty, raw| match be::<1>(ty, raw)? {
        [0] => Ok(false),
        [1] => Ok(true),
        [b] => Err(Error::conversion(format!(
            "binary BOOLEAN byte {b} is neither 0 nor 1"
        ))),
    }
);
pg_impl!(
    i16,
    oid::INT2,
    SqlType::SmallInt,
    |v, buf| buf.put_i16(*v),
    |ty, raw| Ok(i16::from_be_bytes(be(ty, raw)?))
);
pg_impl!(
    i32,
    oid::INT4,
    SqlType::SmallInt | SqlType::Int,
    |v, buf| buf.put_i32(*v),
    |ty, raw| i32::try_from(get_int(ty, raw, "i32")?).map_err(|_| mismatch("i32", ty))
);
pg_impl!(
    i64,
    oid::INT8,
    SqlType::SmallInt | SqlType::Int | SqlType::BigInt | SqlType::Oid,
    |v, buf| buf.put_i64(*v),
    |ty, raw| get_int(ty, raw, "i64")
);
pg_impl!(
    u32,
    oid::OID,
    SqlType::Oid,
    |v, buf| buf.put_u32(*v),
    |ty, raw| Ok(u32::from_be_bytes(be(ty, raw)?))
);
pg_impl!(
    f32,
    oid::FLOAT4,
    SqlType::Real,
    |v, buf| buf.put_f32(*v),
    |ty, raw| Ok(f32::from_be_bytes(be(ty, raw)?))
);
pg_impl!(
    f64,
    oid::FLOAT8,
    SqlType::Real | SqlType::Double,
    |v, buf| buf.put_f64(*v),
    |ty, raw| match ty {
        SqlType::Real => Ok(f32::from_be_bytes(be(ty, raw)?).into()),
        _ => Ok(f64::from_be_bytes(be(ty, raw)?)),
    }
);

macro_rules! text_impl {
    ($t:ty, $own:expr) => {
        pg_impl!(
            $t,
            oid::TEXT,
            SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Json,
            |v, buf| buf.extend_from_slice(v.as_bytes()),
            |ty, raw| super::hyperbinary_impls::utf8(raw)
                .map($own)
                .map_err(|e| Error::conversion(format!("{ty} value is not valid UTF-8: {e}")))
        );
    };
}
text_impl!(&'a str, |s| s);
text_impl!(String, str::to_owned);

macro_rules! bytes_impl {
    ($t:ty, $own:expr) => {
        pg_impl!(
            $t,
            oid::BYTEA,
            SqlType::Bytea | SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Json,
            |v, buf| buf.extend_from_slice(v),
            |ty, raw| Ok($own(raw))
        );
    };
}
bytes_impl!(&'a [u8], |b| b);
bytes_impl!(Vec<u8>, <[u8]>::to_vec);

pg_impl!(
    Date,
    oid::DATE,
    SqlType::Date,
    |v, buf| buf.put_i32(pg_days(*v)?),
    |ty, raw| Date::from_days_since_2000(i32::from_be_bytes(be(ty, raw)?).into())
);
// 24:00:00 is not sent, as the inserters do not store it: a parameter of
// an INSERT stored it, and Tableau's Hyper API then failed every read of
// the table ("hour must be in 0..23"). SQL's literal still reaches it.
pg_impl!(
    Time,
    oid::TIME,
    SqlType::Time,
    |v, buf| {
        if v.micros() == MICROS_PER_DAY {
            return Err(Error::invalid_input(
                "TIME 24:00:00 is not sent as a parameter (stored, Tableau's Hyper API cannot \
                 read it): send 00:00:00, or write TIME '24:00:00' in the SQL",
            ));
        }
        buf.put_i64(v.micros())
    },
    |ty, raw| Time::from_micros(i64::from_be_bytes(be(ty, raw)?))
);
pg_impl!(
    Timestamp,
    oid::TIMESTAMP,
    SqlType::Timestamp,
    |v, buf| buf.put_i64(pg_micros(*v)?),
    |ty, raw| {
        Ok(Timestamp::from_micros_since_2000(i64::from_be_bytes(be(
            ty, raw,
        )?)))
    }
);
pg_impl!(
    TimestampTz,
    oid::TIMESTAMPTZ,
    SqlType::TimestampTz,
    |v, buf| buf.put_i64(pg_micros(v.to_utc())?),
    |ty, raw| {
        Ok(TimestampTz::from_micros_since_2000(i64::from_be_bytes(be(
            ty, raw,
        )?)))
    }
);
pg_impl!(
    Interval,
    oid::INTERVAL,
    SqlType::Interval,
    |v, buf| {
        buf.put_i64(v.micros);
        buf.put_i32(v.days);
        buf.put_i32(v.months);
    },
    |ty, raw| {
        let b: [u8; 16] = be(ty, raw)?;
        let (micros, rest) = b.split_at(8);
        let (days, months) = rest.split_at(4);
        Ok(Interval {
            micros: i64::from_be_bytes(micros.try_into().unwrap_or_default()),
            days: i32::from_be_bytes(days.try_into().unwrap_or_default()),
            months: i32::from_be_bytes(months.try_into().unwrap_or_default()),
        })
    }
);
// OID 0, not NUMERIC's 1700, and decimal text: see the module docs.
impl ToPgBinary for Numeric {
    fn type_oid() -> u32 {
        0
    }

    fn param_type_oid(&self) -> u32 {
        0
    }

    fn encode_pg_binary(&self, buf: &mut BytesMut) -> Result<IsNull> {
        use std::io::Write;
        // `Display` writes the exact decimal text, in place.
        write!(buf.writer(), "{self}").map_err(|_| Error::invalid_input("NUMERIC text"))?;
        Ok(IsNull::No)
    }

    fn param_format(&self) -> i16 {
        FORMAT_TEXT
    }
}

impl<'a> FromPgBinary<'a> for Numeric {
    fn accepts(ty: &SqlType) -> bool {
        matches!(ty, SqlType::Numeric { .. })
    }

    fn decode_pg_binary(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        if !matches!(ty, SqlType::Numeric { .. }) {
            return Err(mismatch("Numeric", ty));
        }
        pg_numeric::decode(raw)
    }
}

fn pg_days(d: Date) -> Result<i32> {
    i32::try_from(d.days_since_2000())
        .map_err(|_| Error::conversion(format!("date {d} is out of the binary DATE range")))
}

/// A timestamp's microseconds since 2000; an error outside hyperd's range,
/// which hyperd answers with 22P03 "invalid Postgres binary timestamp
/// format" naming no parameter. PostgreSQL's `infinity` and `-infinity`
/// (`i64::MAX`, `i64::MIN`) pass as they are, for the server to judge.
fn pg_micros(t: Timestamp) -> Result<i64> {
    let micros = t.micros_since_2000();
    if micros != i64::MAX && micros != i64::MIN {
        t.hyper_micros()?;
    }
    Ok(micros)
}

#[cfg(test)]
#[path = "pg_binary_tests.rs"]
mod tests;
