//! Arrow schema <-> [`TableDefinition`], as hyperd itself maps types in
//! `FORMAT ARROWSTREAM` (measured; see the table in the [module docs](super)).
//!
//! hyperd derives one SQL type from each Arrow field (data type plus the
//! `hyper:*` field metadata) and requires it to equal the column's type
//! exactly, nullability included. So ingest sends the table's metadata and
//! nullability itself, and callers only need compatible data types.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, IntervalUnit, Schema, TimeUnit};

use crate::error::{Error, Result};
use crate::names::TableName;
use crate::table_definition::{ColumnDefinition, TableDefinition};
use crate::types::{Nullability, SqlType};

/// Field metadata key hyperd uses for types Arrow cannot tell apart
/// (`Oid`, `Char`, `Char1`, `JSON`, `Geography`).
pub const HYPER_TYPE_KEY: &str = "hyper:type";

/// Field metadata key carrying the `n` of `VARCHAR(n)` and `CHAR(n)`.
pub const HYPER_MAX_LENGTH_KEY: &str = "hyper:max_string_length";

/// The time zone of `TIMESTAMP WITH TIME ZONE` columns read as Arrow.
/// hyperd writes `"Utc"`, which arrow-rs (without `chrono-tz`) and pyarrow
/// cannot parse; a fixed offset parses everywhere.
pub const UTC: &str = "+00:00";

/// The Arrow field hyperd produces for `column`: what `query_arrow` returns
/// for it and what [`arrow_schema()`] builds.
pub fn arrow_field(column: &ColumnDefinition) -> Result<Field> {
    let ty = column.sql_type();
    let data_type = arrow_type(ty).ok_or_else(|| Error::UnsupportedType {
        column: column.name().to_owned(),
        type_name: ty.to_string(),
        message: "this client has no Arrow mapping for it".into(),
    })?;
    Ok(
        Field::new(column.name(), data_type, column.is_nullable())
            .with_metadata(hyper_metadata(ty)),
    )
}

/// The Arrow schema of `table`'s columns, in order.
pub fn arrow_schema(table: &TableDefinition) -> Result<Schema> {
    let fields = table
        .columns()
        .iter()
        .map(arrow_field)
        .collect::<Result<Vec<_>>>()?;
    Ok(Schema::new(fields))
}

/// A table definition whose columns hold `schema`'s fields; errors name the
/// first field Hyper cannot store.
pub fn table_definition(name: impl Into<TableName>, schema: &Schema) -> Result<TableDefinition> {
    let mut table = TableDefinition::new(name);
    for field in schema.fields() {
        let nullability = if field.is_nullable() {
            Nullability::Nullable
        } else {
            Nullability::NotNull
        };
        table.add_column(ColumnDefinition::new(
            field.name(),
            sql_type(field)?,
            nullability,
        ));
    }
    Ok(table)
}

/// The SQL type hyperd stores an Arrow field as.
pub fn sql_type(field: &Field) -> Result<SqlType> {
    let meta = field.metadata();
    let hyper_type = meta.get(HYPER_TYPE_KEY).map(String::as_str);
    let max_len = meta
        .get(HYPER_MAX_LENGTH_KEY)
        .and_then(|n| n.parse::<u32>().ok());
    let unsupported = |message: &str| Error::UnsupportedType {
        column: field.name().clone(),
        type_name: format!("Arrow {}", field.data_type()),
        message: message.to_owned(),
    };
    Ok(match (field.data_type(), hyper_type) {
        (DataType::UInt32, Some("Oid")) => SqlType::Oid,
        (DataType::Utf8, Some("Char1")) => SqlType::Char(1),
        (DataType::Utf8, Some("Char")) => {
            let n = max_len.ok_or_else(|| unsupported("CHAR without a length"))?;
            SqlType::char(n).map_err(|e| unsupported(e.message()))?
        }
        (DataType::Utf8, Some("JSON")) => SqlType::Json,
        (DataType::Binary, Some("Geography")) => SqlType::Geography,
        (DataType::Utf8, _) => match max_len {
            Some(n) => SqlType::varchar(n).map_err(|e| unsupported(e.message()))?,
            None => SqlType::Text,
        },
        (DataType::Boolean, _) => SqlType::Bool,
        (DataType::Int8 | DataType::UInt8 | DataType::Int16, _) => SqlType::SmallInt,
        (DataType::UInt16 | DataType::Int32, _) => SqlType::Int,
        (DataType::UInt32 | DataType::Int64, _) => SqlType::BigInt,
        (DataType::Float32, _) => SqlType::Real,
        (DataType::Float64, _) => SqlType::Double,
        (DataType::Decimal128(p, s) | DataType::Decimal256(p, s), _) => {
            let scale = u8::try_from(*s).map_err(|_| unsupported("negative scale"))?;
            SqlType::numeric(*p, scale).map_err(|e| unsupported(e.message()))?
        }
        (DataType::Binary, _) => SqlType::Bytea,
        (DataType::Date32 | DataType::Date64, _) => SqlType::Date,
        (DataType::Time32(_) | DataType::Time64(_), _) => SqlType::Time,
        (DataType::Timestamp(TimeUnit::Nanosecond, _), _) => {
            return Err(unsupported(
                "Hyper stores microseconds; cast to Timestamp(Microsecond) first",
            ))
        }
        (DataType::Timestamp(_, None), _) => SqlType::Timestamp,
        (DataType::Timestamp(_, Some(_)), _) => SqlType::TimestampTz,
        (DataType::Interval(IntervalUnit::MonthDayNano), _) => SqlType::Interval,
        (other, _) => return Err(unsupported(hint(other))),
    })
}

/// Whether every field of `schema` has a Hyper type ([`sql_type`]), so
/// that rows can read the result from Arrow; an ARRAY, which hyperd sends
/// as an Arrow list, has none.
pub(crate) fn every_field_has_sql_type(schema: &Schema) -> bool {
    schema.fields().iter().all(|f| sql_type(f).is_ok())
}

/// The SQL type of a result field as hyperd spells it: [`sql_type`]'s,
/// except for a UUID, which reads come with as its text (a Utf8 field
/// marked `hyper:type` `UUID`; hyperd's Arrow stream has no form for it).
pub fn sql_type_name(field: &Field) -> Result<String> {
    if field.data_type() == &DataType::Utf8
        && field.metadata().get(HYPER_TYPE_KEY).map(String::as_str) == Some("UUID")
    {
        return Ok("UUID".to_owned());
    }
    Ok(sql_type(field)?.to_string())
}

/// Whether hyperd's COPY stores Arrow `data_type` into a `sql_type` column
/// (measured: each Arrow type determines one SQL type; `sql_type` just adds
/// the metadata that tells TEXT, VARCHAR, CHAR and JSON apart).
pub fn accepts(sql_type: &SqlType, data_type: &DataType) -> bool {
    use DataType as D;
    use TimeUnit::*;
    match sql_type {
        SqlType::Bool => matches!(data_type, D::Boolean),
        SqlType::SmallInt => matches!(data_type, D::Int8 | D::UInt8 | D::Int16),
        SqlType::Int => matches!(data_type, D::UInt16 | D::Int32),
        SqlType::BigInt => matches!(data_type, D::UInt32 | D::Int64),
        SqlType::Real => matches!(data_type, D::Float32),
        SqlType::Double => matches!(data_type, D::Float64),
        SqlType::Oid => matches!(data_type, D::UInt32),
        SqlType::Numeric { precision, scale } => matches!(
            data_type,
            D::Decimal128(p, s) | D::Decimal256(p, s) if p == precision && i16::from(*s) == i16::from(*scale)
        ),
        SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Json => {
            matches!(data_type, D::Utf8)
        }
        SqlType::Bytea | SqlType::Geography => matches!(data_type, D::Binary),
        SqlType::Date => matches!(data_type, D::Date32 | D::Date64),
        SqlType::Time => matches!(
            data_type,
            D::Time32(Second | Millisecond) | D::Time64(Microsecond | Nanosecond)
        ),
        SqlType::Timestamp => {
            matches!(
                data_type,
                D::Timestamp(Second | Millisecond | Microsecond, None)
            )
        }
        SqlType::TimestampTz => {
            matches!(
                data_type,
                D::Timestamp(Second | Millisecond | Microsecond, Some(_))
            )
        }
        SqlType::Interval => matches!(data_type, D::Interval(IntervalUnit::MonthDayNano)),
        _ => false,
    }
}

/// The field to declare to hyperd for `column` when the caller's data has
/// `data_type`: the column's name, metadata and nullability.
pub(crate) fn ingest_field(column: &ColumnDefinition, data_type: &DataType) -> Result<Field> {
    if !accepts(column.sql_type(), data_type) {
        return Err(mismatch(column, data_type));
    }
    Ok(
        Field::new(column.name(), data_type.clone(), column.is_nullable())
            .with_metadata(hyper_metadata(column.sql_type())),
    )
}

/// The error for a field whose type cannot go into `column`.
pub(crate) fn mismatch(column: &ColumnDefinition, found: &DataType) -> Error {
    let ty = column.sql_type();
    let expected = match arrow_type(ty) {
        Some(dt) => format!("{ty} (Arrow {dt}{})", alternatives(ty)),
        None => ty.to_string(),
    };
    Error::SchemaMismatch {
        column: column.name().to_owned(),
        expected,
        found: format!("Arrow {found}"),
    }
}

/// The other Arrow types hyperd accepts for `ty`, for error messages.
fn alternatives(ty: &SqlType) -> &'static str {
    match ty {
        SqlType::SmallInt => " or Int8/UInt8",
        SqlType::Int => " or UInt16",
        SqlType::BigInt => " or UInt32",
        SqlType::Numeric { .. } => " or Decimal256 of the same precision and scale",
        SqlType::Date => " or Date32",
        SqlType::Time => " or Time32(Second/Millisecond), Time64(Nanosecond)",
        SqlType::Timestamp => " or Second/Millisecond units",
        SqlType::TimestampTz => " or Second/Millisecond units, any time zone",
        _ => "",
    }
}

/// The Arrow type hyperd reads a `ty` column as.
pub(crate) fn arrow_type(ty: &SqlType) -> Option<DataType> {
    Some(match *ty {
        SqlType::Bool => DataType::Boolean,
        SqlType::SmallInt => DataType::Int16,
        SqlType::Int => DataType::Int32,
        SqlType::BigInt => DataType::Int64,
        SqlType::Real => DataType::Float32,
        SqlType::Double => DataType::Float64,
        SqlType::Oid => DataType::UInt32,
        SqlType::Numeric { precision, scale } => {
            DataType::Decimal128(precision, i8::try_from(scale).ok()?)
        }
        SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Json => DataType::Utf8,
        SqlType::Bytea | SqlType::Geography => DataType::Binary,
        SqlType::Date => DataType::Date64,
        SqlType::Time => DataType::Time64(TimeUnit::Microsecond),
        SqlType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        SqlType::TimestampTz => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        SqlType::Interval => DataType::Interval(IntervalUnit::MonthDayNano),
        _ => return None,
    })
}

fn hyper_metadata(ty: &SqlType) -> HashMap<String, String> {
    let pairs: &[(&str, String)] = match *ty {
        SqlType::Oid => &[(HYPER_TYPE_KEY, "Oid".into())],
        SqlType::Json => &[(HYPER_TYPE_KEY, "JSON".into())],
        SqlType::Geography => &[(HYPER_TYPE_KEY, "Geography".into())],
        SqlType::Char(1) => &[(HYPER_TYPE_KEY, "Char1".into())],
        SqlType::Char(n) => &[
            (HYPER_TYPE_KEY, "Char".into()),
            (HYPER_MAX_LENGTH_KEY, n.to_string()),
        ],
        SqlType::Varchar(n) => &[(HYPER_MAX_LENGTH_KEY, n.to_string())],
        _ => &[],
    };
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn hint(data_type: &DataType) -> &'static str {
    match data_type {
        DataType::LargeUtf8 | DataType::Utf8View => "cast to Utf8 first",
        DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
            "cast to Binary first"
        }
        DataType::Dictionary(..) => "cast to the dictionary's value type first",
        DataType::Float16 => "cast to Float32 first",
        DataType::UInt64 => "it does not fit BIGINT; cast to Int64 or Decimal128(20, 0)",
        DataType::Interval(_) => "use Interval(MonthDayNano)",
        DataType::Decimal32(..) | DataType::Decimal64(..) => "cast to Decimal128 first",
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            "an ARRAY reads only as Arrow (query_arrow; Node: queryArrow) and is never written; \
             cast the column to TEXT in the query (`col::TEXT`)"
        }
        _ => "Hyper has no such column type",
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
