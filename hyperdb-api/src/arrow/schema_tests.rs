use std::sync::Arc;

use super::*;
use crate::types::ColumnType;

fn every_type() -> Vec<SqlType> {
    vec![
        SqlType::Bool,
        SqlType::SmallInt,
        SqlType::Int,
        SqlType::BigInt,
        SqlType::Real,
        SqlType::Double,
        SqlType::Oid,
        SqlType::Numeric {
            precision: 18,
            scale: 3,
        },
        SqlType::Numeric {
            precision: 38,
            scale: 10,
        },
        SqlType::Text,
        SqlType::Varchar(10),
        SqlType::Char(5),
        SqlType::Char(1),
        SqlType::Json,
        SqlType::Bytea,
        SqlType::Geography,
        SqlType::Date,
        SqlType::Time,
        SqlType::Timestamp,
        SqlType::TimestampTz,
        SqlType::Interval,
    ]
}

#[test]
fn every_type_maps_there_and_back() {
    for (i, ty) in every_type().into_iter().enumerate() {
        let col = if i % 2 == 0 {
            ColumnDefinition::nullable(format!("c{i}"), ty)
        } else {
            ColumnDefinition::not_null(format!("c{i}"), ty)
        };
        let field = arrow_field(&col).unwrap();
        assert_eq!(field.is_nullable(), col.is_nullable());
        assert_eq!(sql_type(&field).unwrap(), ty, "{field:?}");
        assert!(
            accepts(&ty, field.data_type()),
            "{ty} takes what it reads as"
        );
    }
    let table = every_type()
        .into_iter()
        .enumerate()
        .fold(TableDefinition::new("t"), |t, (i, ty)| {
            t.with_column(format!("c{i}"), ty)
        });
    let schema = arrow_schema(&table).unwrap();
    assert_eq!(table_definition("t", &schema).unwrap(), table);
}

#[test]
fn measured_read_types() {
    let field = |ty| arrow_field(&ColumnDefinition::nullable("c", ty)).unwrap();
    assert_eq!(field(SqlType::Date).data_type(), &DataType::Date64);
    assert_eq!(
        field(SqlType::TimestampTz).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
    );
    let vc = field(SqlType::Varchar(7));
    assert_eq!(vc.metadata()[HYPER_MAX_LENGTH_KEY], "7");
    assert!(!vc.metadata().contains_key(HYPER_TYPE_KEY));
    let c = field(SqlType::Char(3));
    assert_eq!(c.metadata()[HYPER_TYPE_KEY], "Char");
    assert_eq!(field(SqlType::Char(1)).metadata()[HYPER_TYPE_KEY], "Char1");
    assert!(field(SqlType::Text).metadata().is_empty());
}

#[test]
fn arrow_types_without_metadata() {
    let ty = |dt: DataType| sql_type(&Field::new("x", dt, true));
    assert_eq!(ty(DataType::UInt8).unwrap(), SqlType::SmallInt);
    assert_eq!(ty(DataType::UInt16).unwrap(), SqlType::Int);
    assert_eq!(ty(DataType::UInt32).unwrap(), SqlType::BigInt);
    assert_eq!(ty(DataType::Date32).unwrap(), SqlType::Date);
    assert_eq!(
        ty(DataType::Timestamp(
            TimeUnit::Millisecond,
            Some("Europe/Berlin".into())
        ))
        .unwrap(),
        SqlType::TimestampTz
    );
    assert_eq!(
        ty(DataType::Decimal256(20, 2)).unwrap(),
        SqlType::Numeric {
            precision: 20,
            scale: 2
        }
    );
    for bad in [
        DataType::Timestamp(TimeUnit::Nanosecond, None),
        DataType::LargeUtf8,
        DataType::UInt64,
        DataType::Decimal128(39, 0),
        DataType::Decimal128(10, -2),
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        DataType::List(Arc::new(Field::new("i", DataType::Int32, true))),
    ] {
        match ty(bad.clone()) {
            Err(Error::UnsupportedType {
                column, type_name, ..
            }) => {
                assert_eq!(column, "x");
                assert!(type_name.contains("Arrow"), "{type_name}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    let e = ty(DataType::Timestamp(TimeUnit::Nanosecond, None)).unwrap_err();
    assert!(e.to_string().contains("Microsecond"), "{e}");
}

#[test]
fn ingest_accepts_what_hyperd_accepts() {
    let col = |ty| ColumnDefinition::not_null("c", ty);
    let ok = [
        (SqlType::SmallInt, DataType::Int8),
        (SqlType::Int, DataType::UInt16),
        (SqlType::Date, DataType::Date32),
        (SqlType::Time, DataType::Time32(TimeUnit::Second)),
        (SqlType::Time, DataType::Time64(TimeUnit::Nanosecond)),
        (
            SqlType::Timestamp,
            DataType::Timestamp(TimeUnit::Second, None),
        ),
        (SqlType::Varchar(3), DataType::Utf8),
    ];
    for (ty, dt) in ok {
        let f = ingest_field(&col(ty), &dt).unwrap();
        assert!(!f.is_nullable(), "NOT NULL comes from the table");
        assert_eq!(f.data_type(), &dt);
        assert_eq!(sql_type(&f).unwrap(), ty, "hyperd derives the column type");
    }
    let bad = [
        (SqlType::Int, DataType::Int64),
        (SqlType::Int, DataType::Int16),
        (SqlType::Oid, DataType::Int64),
        (
            SqlType::Numeric {
                precision: 18,
                scale: 3,
            },
            DataType::Decimal128(18, 2),
        ),
        (
            SqlType::Timestamp,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        (
            SqlType::TimestampTz,
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        ),
        (SqlType::Text, DataType::LargeUtf8),
    ];
    for (ty, dt) in bad {
        match ingest_field(&col(ty), &dt) {
            Err(Error::SchemaMismatch {
                column,
                expected,
                found,
            }) => {
                assert_eq!(column, "c");
                assert!(expected.contains(&ty.to_string()), "{expected}");
                assert!(found.contains(&dt.to_string()), "{found}");
            }
            other => panic!("{ty} <- {dt}: {other:?}"),
        }
    }
    assert_eq!(
        ColumnType::nullable(SqlType::Int),
        *ColumnDefinition::nullable("c", SqlType::Int).column_type()
    );
}
