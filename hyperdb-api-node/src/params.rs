//! Parameters from JavaScript: each value arrives tagged with its JS kind
//! (`lib/params.ts` tags them) and becomes a [`Value`] here, where every
//! check that could lose precision is made.

use hyperdb_api::types::{Date, Interval, Numeric, Time, Timestamp, TimestampTz};
use hyperdb_api::Value;
use napi::bindgen_prelude::{BigInt, Buffer};
use napi_derive::napi;

use crate::error::{invalid, Result};

/// The largest integer a JS `number` holds exactly (2^53 - 1).
pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// One parameter as `lib/params.ts` sends it.
#[napi(object)]
pub struct Param {
    /// `null`, `boolean`, `number`, `bigint`, `string`, `bytes`, `date`
    /// (a JS `Date`: TIMESTAMPTZ), or an exact form: `numeric`, `timestamp`,
    /// `timestamptz`, `time`, `interval`, `dateonly`.
    pub kind: String,
    pub number: Option<f64>,
    pub bigint: Option<BigInt>,
    pub text: Option<String>,
    pub bytes: Option<Buffer>,
    pub boolean: Option<bool>,
    /// INTERVAL's months and days, as JS numbers: checked here to be
    /// 32-bit integers (napi's conversion to `i32` would wrap and truncate).
    pub months: Option<f64>,
    pub days: Option<f64>,
}

/// Converts the parameters in order; the error names `$n`.
pub(crate) fn values(params: Vec<Param>) -> Result<Vec<Value>> {
    params
        .into_iter()
        .enumerate()
        .map(|(i, p)| value(p).map_err(|e| invalid(&format!("parameter ${}", i + 1), &e)))
        .collect()
}

fn value(p: Param) -> std::result::Result<Value, String> {
    Ok(match p.kind.as_str() {
        "null" => Value::Null,
        "boolean" => Value::Bool(p.boolean.ok_or("a boolean without a value")?),
        "number" => number(p.number.ok_or("a number without a value")?),
        "bigint" => Value::BigInt(bigint_i64(p.bigint.as_ref())?),
        "string" => Value::Text(p.text.ok_or("a string without a value")?),
        "bytes" => Value::Bytes(p.bytes.ok_or("bytes without a value")?.to_vec()),
        "date" => {
            let ms = p.number.ok_or("a Date without a time")?;
            if !ms.is_finite() {
                return Err("an invalid Date".into());
            }
            // Whole milliseconds: i64 micros hold every valid JS Date.
            TimestampTz::from_unix_micros(ms as i64 * 1000)
                .map(Value::TimestampTz)
                .map_err(|e| e.to_string())?
        }
        "numeric" => Value::Numeric(
            p.text
                .as_deref()
                .ok_or("a numeric without digits")?
                .parse::<Numeric>()
                .map_err(|e| e.to_string())?,
        ),
        // Wider than i64: hyperd's last timestamps are past i64 after 1970.
        "timestamp" => Value::Timestamp(
            Timestamp::from_unix_micros_i128(bigint_i128(p.bigint.as_ref())?)
                .map_err(|e| e.to_string())?,
        ),
        "timestamptz" => Value::TimestampTz(
            TimestampTz::from_unix_micros_i128(bigint_i128(p.bigint.as_ref())?)
                .map_err(|e| e.to_string())?,
        ),
        "time" => Value::Time(
            Time::from_micros(bigint_i64(p.bigint.as_ref())?).map_err(|e| e.to_string())?,
        ),
        "interval" => Value::Interval(Interval::new(
            int32(p.months, "months")?,
            int32(p.days, "days")?,
            bigint_i64(p.bigint.as_ref())?,
        )),
        // Days since 1970, parsed by `HyperDate` (one parser for
        // parameters and inserts).
        "dateonly" => {
            let days = p.number.ok_or("a date without days")?;
            if days.fract() != 0.0 || days.abs() > MAX_SAFE_INTEGER {
                return Err(format!("a date of {days} days"));
            }
            Value::Date(Date::from_unix_days(days as i64).map_err(|e| e.to_string())?)
        }
        other => return Err(format!("unsupported parameter kind {other:?}")),
    })
}

/// A JS number: INT when it is a 32-bit integer, BIGINT when a larger
/// exact integer, DOUBLE PRECISION otherwise (fractions, NaN, infinities,
/// and -0, which an integer would turn into 0).
fn number(n: f64) -> Value {
    let integral = n.fract() == 0.0 && !(n == 0.0 && n.is_sign_negative());
    if integral && n >= f64::from(i32::MIN) && n <= f64::from(i32::MAX) {
        Value::Int(n as i32)
    } else if integral && n.abs() <= MAX_SAFE_INTEGER {
        Value::BigInt(n as i64)
    } else {
        Value::Double(n)
    }
}

/// An INTERVAL's months or days: a JS number that is a 32-bit integer.
fn int32(n: Option<f64>, what: &str) -> std::result::Result<i32, String> {
    let n = n.unwrap_or(0.0);
    if n.fract() == 0.0 && n >= f64::from(i32::MIN) && n <= f64::from(i32::MAX) {
        Ok(n as i32)
    } else {
        Err(format!(
            "an INTERVAL's {what} must be a 32-bit integer, not {n}"
        ))
    }
}

fn bigint_i128(b: Option<&BigInt>) -> std::result::Result<i128, String> {
    let b = b.ok_or("a bigint without a value")?;
    if b.words.is_empty() {
        return Ok(0);
    }
    match b.get_i128() {
        (v, true) => Ok(v),
        _ => Err("a bigint outside the 128-bit range".into()),
    }
}

fn bigint_i64(b: Option<&BigInt>) -> std::result::Result<i64, String> {
    i64::try_from(bigint_i128(b)?).map_err(|_| "a bigint outside the 64-bit range".into())
}
