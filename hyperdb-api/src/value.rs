//! [`Value`]: one owned value of any Hyper type.
//!
//! Why: `&[&dyn ToPgBinary]` is the zero-cost way to bind parameters when
//! the types are known at compile time. Callers that learn them at run time
//! (a binding to a dynamic language, a query built from user input) need a
//! value they can own, collect in a `Vec` and move across tasks; this is it.

use bytes::BytesMut;
use hyperdb_api_core::types::pg_binary::ToPgBinary;
use hyperdb_api_core::types::{
    Date, Interval, IsNull, Numeric, SqlType, Time, Timestamp, TimestampTz, ToHyperBinary,
};

/// An owned SQL value: a bound parameter or a value for an inserter.
///
/// Each variant encodes exactly as its Rust type does (`Value::Int(7)` as
/// `7i32`); `Null` is sent as an untyped NULL, whose type hyperd infers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Value {
    Null,
    Bool(bool),
    SmallInt(i16),
    Int(i32),
    BigInt(i64),
    /// `OID`: an unsigned 32-bit integer.
    Oid(u32),
    Real(f32),
    Double(f64),
    Text(String),
    Bytes(Vec<u8>),
    Numeric(Numeric),
    Date(Date),
    Time(Time),
    Timestamp(Timestamp),
    TimestampTz(TimestampTz),
    Interval(Interval),
}

/// Runs `$body` with `$v` bound to the variant's value as a `&dyn $tr`,
/// or `$null` for `Value::Null`.
macro_rules! with_inner {
    ($self:expr, $tr:path, |$v:ident| $body:expr, null => $null:expr) => {
        match $self {
            Value::Null => $null,
            Value::Bool(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::SmallInt(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Int(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::BigInt(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Oid(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Real(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Double(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Text(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Bytes(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Numeric(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Date(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Time(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Timestamp(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::TimestampTz(x) => {
                let $v: &dyn $tr = x;
                $body
            }
            Value::Interval(x) => {
                let $v: &dyn $tr = x;
                $body
            }
        }
    };
}

impl Value {
    /// The values as the `*_params` methods take them.
    pub fn as_params(values: &[Value]) -> Vec<&dyn ToPgBinary> {
        values.iter().map(|v| v as &dyn ToPgBinary).collect()
    }
}

impl ToPgBinary for Value {
    /// Unused for `Value`: its type is per value ([`ToPgBinary::param_type_oid`]).
    fn type_oid() -> u32 {
        0
    }

    fn param_type_oid(&self) -> u32 {
        with_inner!(self, ToPgBinary, |v| v.param_type_oid(), null => 0)
    }

    fn encode_pg_binary(&self, buf: &mut BytesMut) -> hyperdb_api_core::Result<IsNull> {
        with_inner!(self, ToPgBinary, |v| v.encode_pg_binary(buf), null => Ok(IsNull::Yes))
    }

    /// A `Numeric` travels as decimal text, its type inferred from where
    /// it stands (see `hyperdb_api_core::types::ToPgBinary`).
    fn param_format(&self) -> i16 {
        with_inner!(self, ToPgBinary, |v| v.param_format(), null => hyperdb_api_core::protocol::ops::FORMAT_BINARY)
    }
}

impl ToHyperBinary for Value {
    /// Whether a `Value` fits a column is known per value, when it is encoded.
    fn accepts(_: &SqlType) -> bool {
        true
    }

    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> hyperdb_api_core::Result<()> {
        with_inner!(self, ToHyperBinary, |v| v.encode_hyper(ty, buf), null => Err(
            hyperdb_api_core::Error::invalid_input("NULL has no value to encode")
        ))
    }

    fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant writes the bytes and type of the Rust value it holds.
    #[test]
    fn values_encode_as_their_rust_types() {
        fn pg(v: &dyn ToPgBinary) -> (u32, Option<Vec<u8>>) {
            let mut buf = BytesMut::new();
            let null = v.encode_pg_binary(&mut buf).unwrap();
            (
                v.param_type_oid(),
                (null == IsNull::No).then(|| buf.to_vec()),
            )
        }
        let numeric: Numeric = "-12.345".parse().unwrap();
        let ts = Timestamp::from_unix_micros(1_700_000_000_123_456).unwrap();
        let bytes: &[u8] = &[0, 255];
        let interval = Interval::new(1, 2, 3);
        let cases: Vec<(Value, &dyn ToPgBinary)> = vec![
            (Value::Numeric(numeric), &numeric),
            (Value::Bool(true), &true),
            (Value::SmallInt(-3), &-3i16),
            (Value::Int(i32::MIN), &i32::MIN),
            (Value::BigInt(i64::MAX), &i64::MAX),
            (Value::Oid(u32::MAX), &u32::MAX),
            (Value::Real(1.5), &1.5f32),
            (Value::Double(-0.0), &-0.0f64),
            (Value::Text("grüße".into()), &"grüße"),
            (Value::Bytes(vec![0, 255]), &bytes),
            (Value::Timestamp(ts), &ts),
            (Value::Interval(interval), &interval),
        ];
        for (value, rust) in &cases {
            assert_eq!(pg(value), pg(*rust), "{value:?}");
            assert_eq!(value.param_format(), rust.param_format(), "{value:?}");
        }
        assert_eq!(pg(&Value::Null), (0, None));
        // NUMERIC goes as its exact text, its type inferred (OID 0).
        assert_eq!(pg(&Value::Numeric(numeric)), (0, Some(b"-12.345".to_vec())));
        assert_eq!(
            Value::Numeric(numeric).param_format(),
            hyperdb_api_core::protocol::ops::FORMAT_TEXT
        );
        assert_eq!(
            Value::Int(1).param_format(),
            hyperdb_api_core::protocol::ops::FORMAT_BINARY
        );
    }

    #[test]
    fn hyper_encoding_checks_the_column_per_value() {
        let mut buf = BytesMut::new();
        Value::Int(7)
            .encode_hyper(&SqlType::BigInt, &mut buf)
            .unwrap();
        assert_eq!(&buf[..], &7i64.to_le_bytes());
        let err = Value::Text("x".into())
            .encode_hyper(&SqlType::Int, &mut buf)
            .unwrap_err();
        assert!(err.to_string().contains("INT"), "{err}");
        assert!(Value::Null.is_null());
        assert!(Value::Null.encode_hyper(&SqlType::Int, &mut buf).is_err());
    }
}
