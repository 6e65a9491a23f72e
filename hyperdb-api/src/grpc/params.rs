//! Bound parameters over gRPC: the values callers bind on the
//! PostgreSQL-protocol connection (`&[&dyn ToPgBinary]`), re-encoded as
//! hyperd's `arrow_parameters`: an Arrow IPC stream holding one row whose
//! column `i` is `$(i+1)` (measured on hyperd 0.0.26963: names are ignored,
//! the Arrow types become the parameter types; JSON parameters need a
//! type name per value, Arrow carries the types by itself).
//!
//! Each value is encoded with its `ToPgBinary` impl and read back by OID,
//! so there is exactly one way to pass parameters for both transports.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::types::IntervalMonthDayNano;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int16Array, Int32Array, Int64Array, IntervalMonthDayNanoArray, RecordBatch, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, UInt32Array,
};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Field, Schema};
use bytes::{Bytes, BytesMut};
use hyperdb_api_core::types::{FromPgBinary, IsNull, ToPgBinary};

use crate::arrow::{HYPER_TYPE_KEY, UTC};
use crate::error::{Error, Result};
use crate::types::{oid, Numeric, SqlType};

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_DAYS: i64 = 10_957;
const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * 86_400_000_000;

/// Microseconds since 2000 as Arrow's since 1970; past `i64` (the last
/// ~9 days of hyperd's range) an error rather than a wrapped value.
fn unix_micros(since_2000: i64, what: &str) -> Result<i64> {
    since_2000.checked_add(PG_EPOCH_MICROS).ok_or_else(|| {
        Error::invalid_argument(
            what,
            "past what gRPC's Arrow parameters carry (294247-01-10 04:00:54.775807); send it \
             over the PostgreSQL protocol",
        )
    })
}

/// `values` as a one-row Arrow IPC stream.
pub(crate) fn arrow_parameters(values: &[&dyn ToPgBinary]) -> Result<Bytes> {
    let mut fields = Vec::with_capacity(values.len());
    let mut columns = Vec::with_capacity(values.len());
    let mut buf = BytesMut::new();
    for (i, value) in values.iter().enumerate() {
        let name = format!("${}", i + 1);
        let bad = |message: String| Error::invalid_argument(name.clone(), message);
        buf.clear();
        let raw = match value.encode_pg_binary(&mut buf) {
            Ok(IsNull::No) => Some(&buf[..]),
            Ok(IsNull::Yes) => None,
            Err(e) => return Err(bad(e.message().to_owned())),
        };
        let oid = value.param_type_oid();
        let (array, hyper_type) = column(oid, raw).map_err(|e| bad(e.to_string()))?;
        let mut field = Field::new(name.clone(), array.data_type().clone(), true);
        if let Some(t) = hyper_type {
            let metadata: HashMap<String, String> =
                [(HYPER_TYPE_KEY.to_owned(), t.to_owned())].into();
            field = field.with_metadata(metadata);
        }
        fields.push(field);
        columns.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = if columns.is_empty() {
        RecordBatch::new_empty(schema.clone())
    } else {
        RecordBatch::try_new(schema.clone(), columns)?
    };
    let mut out = Vec::new();
    let mut writer = StreamWriter::try_new(&mut out, &schema)?;
    writer.write(&batch)?;
    writer.finish()?;
    drop(writer);
    Ok(Bytes::from(out))
}

/// One parameter as a one-element array, from its OID and PostgreSQL
/// binary bytes (`None` = NULL); plus the `hyper:type` to declare.
fn column(oid: u32, raw: Option<&[u8]>) -> Result<(ArrayRef, Option<&'static str>)> {
    fn get<T: for<'a> FromPgBinary<'a>>(ty: SqlType, raw: Option<&[u8]>) -> Result<Option<T>> {
        raw.map(|r| T::decode_pg_binary(&ty, r))
            .transpose()
            .map_err(Error::from)
    }
    Ok(match oid {
        oid::BOOL => (
            Arc::new(BooleanArray::from(vec![get::<bool>(SqlType::Bool, raw)?])),
            None,
        ),
        oid::INT2 => (
            Arc::new(Int16Array::from(vec![get::<i16>(SqlType::SmallInt, raw)?])),
            None,
        ),
        oid::INT4 => (
            Arc::new(Int32Array::from(vec![get::<i32>(SqlType::Int, raw)?])),
            None,
        ),
        oid::INT8 => (
            Arc::new(Int64Array::from(vec![get::<i64>(SqlType::BigInt, raw)?])),
            None,
        ),
        oid::OID => (
            Arc::new(UInt32Array::from(vec![get::<u32>(SqlType::Oid, raw)?])),
            Some("Oid"),
        ),
        oid::FLOAT4 => (
            Arc::new(Float32Array::from(vec![get::<f32>(SqlType::Real, raw)?])),
            None,
        ),
        oid::FLOAT8 => (
            Arc::new(Float64Array::from(vec![get::<f64>(SqlType::Double, raw)?])),
            None,
        ),
        oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::CHAR1 | oid::JSON => {
            let v = get::<String>(SqlType::Text, raw)?;
            let json = (oid == oid::JSON).then_some("JSON");
            (Arc::new(StringArray::from(vec![v])), json)
        }
        oid::BYTEA => {
            let v = get::<Vec<u8>>(SqlType::Bytea, raw)?;
            (Arc::new(BinaryArray::from(vec![v.as_deref()])), None)
        }
        oid::DATE => {
            let v = get::<crate::types::Date>(SqlType::Date, raw)?;
            let days = v
                .map(|d| i32::try_from(d.days_since_2000() + PG_EPOCH_DAYS))
                .transpose()
                .map_err(|_| Error::invalid_argument("date", "out of the Arrow Date32 range"))?;
            (Arc::new(Date32Array::from(vec![days])), None)
        }
        oid::TIME => {
            let v = get::<crate::types::Time>(SqlType::Time, raw)?.map(|t| t.micros());
            (Arc::new(Time64MicrosecondArray::from(vec![v])), None)
        }
        oid::TIMESTAMP => {
            let v = get::<crate::types::Timestamp>(SqlType::Timestamp, raw)?
                .map(|t| unix_micros(t.micros_since_2000(), "timestamp"))
                .transpose()?;
            (Arc::new(TimestampMicrosecondArray::from(vec![v])), None)
        }
        oid::TIMESTAMPTZ => {
            let v = get::<crate::types::TimestampTz>(SqlType::TimestampTz, raw)?
                .map(|t| unix_micros(t.micros_since_2000(), "timestamptz"))
                .transpose()?;
            let a = TimestampMicrosecondArray::from(vec![v]).with_timezone(UTC);
            (Arc::new(a), None)
        }
        oid::INTERVAL => {
            let v = get::<crate::types::Interval>(SqlType::Interval, raw)?
                .map(|i| {
                    // Arrow carries an interval's time in nanoseconds: past
                    // ~292 years of them it would be clamped, not sent.
                    let nanos = i.micros.checked_mul(1000).ok_or_else(|| {
                        Error::invalid_argument(
                            "interval",
                            format!(
                                "{} microseconds of time is past what gRPC's Arrow parameters carry \
                                 (±9223372036854775 us, about 292 years); send it over the \
                                 PostgreSQL protocol",
                                i.micros
                            ),
                        )
                    })?;
                    Ok::<_, Error>(IntervalMonthDayNano::new(i.months, i.days, nanos))
                })
                .transpose()?;
            (Arc::new(IntervalMonthDayNanoArray::from(vec![v])), None)
        }
        // NUMERIC binds with OID 0 as its decimal text (see `pg_binary`);
        // its scale travels in the value, and the Arrow type carries it to
        // hyperd.
        0 => {
            let v = raw
                .map(|r| {
                    std::str::from_utf8(r)
                        .ok()
                        .and_then(|text| text.parse::<Numeric>().ok())
                        .ok_or_else(|| Error::invalid_argument("parameter", "NUMERIC text"))
                })
                .transpose()?;
            let scale = v.map_or(0, Numeric::scale);
            let a = Decimal128Array::from(vec![v.map(Numeric::unscaled)])
                .with_precision_and_scale(38, scale as i8)?;
            (Arc::new(a), None)
        }
        other => {
            return Err(Error::invalid_argument(
                "parameter",
                format!("no Arrow form for parameters of type OID {other}"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_ipc::reader::StreamReader;

    #[test]
    fn parameters_become_one_typed_row() {
        let n = Numeric::new(-12345, 2).expect("numeric");
        let none: Option<i64> = None;
        let bytes = arrow_parameters(&[&1i32, &"x", &n, &none]).expect("encode");
        let reader =
            StreamReader::try_new(std::io::Cursor::new(bytes.to_vec()), None).expect("ipc");
        let batches: Vec<RecordBatch> =
            reader.collect::<std::result::Result<_, _>>().expect("read");
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        assert_eq!(b.num_rows(), 1);
        assert_eq!(b.schema().field(0).name(), "$1");
        assert_eq!(
            b.schema().field(2).data_type(),
            &arrow_schema::DataType::Decimal128(38, 2)
        );
        assert_eq!(b.column(3).null_count(), 1);
    }

    /// An interval's time past Arrow's nanoseconds was clamped to ~292
    /// years and sent; it is refused, and one just inside goes exactly.
    #[test]
    fn intervals_past_arrows_nanoseconds_are_refused_not_clamped() {
        let edge = i64::MAX / 1000;
        for micros in [edge + 1, -edge - 1, i64::MAX] {
            let i = crate::types::Interval {
                months: 0,
                days: 0,
                micros,
            };
            let e = arrow_parameters(&[&i]).unwrap_err();
            assert!(e.to_string().contains("292 years"), "{micros}: {e}");
        }
        let i = crate::types::Interval {
            months: 1,
            days: 2,
            micros: -edge,
        };
        let bytes = arrow_parameters(&[&i]).expect("encode");
        let reader =
            StreamReader::try_new(std::io::Cursor::new(bytes.to_vec()), None).expect("ipc");
        let b = reader.into_iter().next().expect("a batch").expect("read");
        let sent = b
            .column(0)
            .as_any()
            .downcast_ref::<IntervalMonthDayNanoArray>()
            .expect("interval")
            .value(0);
        assert_eq!(sent, IntervalMonthDayNano::new(1, 2, -edge * 1000));
    }
}
