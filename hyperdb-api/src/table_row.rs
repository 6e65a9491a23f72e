//! Rust types as table rows: [`TableRow`] gives a table's definition and
//! writes a value's fields into an inserter, [`HasSqlType`] maps a field's
//! Rust type to its column type. `#[derive(Table)]` implements both ends.

use hyperdb_api_core::types::{
    ColumnType, Date, Interval, Nullability, SqlType, Time, Timestamp, TimestampTz, ToHyperBinary,
};

use crate::error::Result;
use crate::names::TableName;
use crate::table_definition::{ColumnDefinition, TableDefinition};

/// A type whose values are rows of one table: its definition, and its
/// fields written in column order. [`Inserter::add_struct`] takes one.
///
/// Usually derived (`#[derive(Table)]`, feature `derive`); by hand:
///
/// ```
/// use hyperdb_api::types::SqlType;
/// use hyperdb_api::{ColumnDefinition, RowWriter, TableDefinition, TableName, TableRow};
///
/// struct Reading { id: i32, value: Option<f64> }
///
/// impl TableRow for Reading {
///     fn table_name() -> TableName {
///         TableName::new("readings")
///     }
///     fn with_columns(table: TableDefinition) -> TableDefinition {
///         table
///             .with_not_null_column("id", SqlType::Int)
///             .with_column("value", SqlType::Double)
///     }
///     fn write_row<W: RowWriter + ?Sized>(&self, row: &mut W) -> hyperdb_api::Result<()> {
///         row.value(&self.id)?;
///         row.value(&self.value)
///     }
/// }
///
/// let table = Reading::table_definition();
/// assert_eq!(table.column_count(), 2);
/// ```
///
/// [`Inserter::add_struct`]: crate::Inserter::add_struct
pub trait TableRow {
    /// The table these rows go to by default.
    fn table_name() -> TableName;

    /// `table` with this type's columns appended, in field order: the
    /// definition of a table of another name (a staging copy, a
    /// partition) holding the same rows, or of a type that flattens this
    /// one into its own.
    fn with_columns(table: TableDefinition) -> TableDefinition;

    /// Hands each column's value to `row`, in column order. The inserter
    /// checks each against its table's column type (a value of another
    /// type, or NULL in a NOT NULL column, rejects the row) and the count
    /// against its column count.
    fn write_row<W: RowWriter + ?Sized>(&self, row: &mut W) -> Result<()>;

    /// The table's definition: [`table_name`](Self::table_name) and the
    /// fields' columns.
    fn table_definition() -> TableDefinition {
        Self::with_columns(TableDefinition::new(Self::table_name()))
    }
}

/// Where [`TableRow::write_row`] puts a row's values: one inserter's row
/// under construction. Implemented by the inserters only.
pub trait RowWriter: sealed::Sealed {
    /// The next column's value; `None` (of any `Option`) is NULL. On error
    /// the row is discarded (the inserter stays usable).
    fn value(&mut self, value: &dyn ToHyperBinary) -> Result<()>;
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A Rust type with a column type of its own: what `#[derive(Table)]`
/// declares a field of this type as. `Option<T>` is `T`'s type, nullable;
/// every other type is NOT NULL.
///
/// Types that fit several column types have none here and take an
/// explicit one on the field, e.g. `#[hyper(sql_type = "NUMERIC(18,2)")]`
/// for a [`Numeric`](crate::types::Numeric), `"VARCHAR(40)"` or `"JSON"`
/// for a `String` that should not be TEXT.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no column type of its own",
    label = "no SQL type for this field's Rust type",
    note = "give the field one: #[hyper(sql_type = \"NUMERIC(18,2)\")], or convert it with #[hyper(into = \"i64\")]"
)]
pub trait HasSqlType {
    /// The column's type and nullability.
    const COLUMN_TYPE: ColumnType;
}

macro_rules! has_sql_type {
    ($($t:ty => $sql:expr;)*) => {$(
        impl HasSqlType for $t {
            const COLUMN_TYPE: ColumnType = ColumnType::not_null($sql);
        }
    )*};
}

// Each maps to the column type that holds every value of the Rust type
// exactly, and that reads back as the same Rust type.
has_sql_type! {
    bool => SqlType::Bool;
    i8 => SqlType::SmallInt;
    u8 => SqlType::SmallInt;
    i16 => SqlType::SmallInt;
    u16 => SqlType::Int;
    i32 => SqlType::Int;
    u32 => SqlType::BigInt;
    i64 => SqlType::BigInt;
    u64 => SqlType::Numeric { precision: 20, scale: 0 };
    i128 => SqlType::Numeric { precision: 38, scale: 0 };
    f32 => SqlType::Real;
    f64 => SqlType::Double;
    String => SqlType::Text;
    &str => SqlType::Text;
    Vec<u8> => SqlType::Bytea;
    &[u8] => SqlType::Bytea;
    Date => SqlType::Date;
    Time => SqlType::Time;
    Timestamp => SqlType::Timestamp;
    TimestampTz => SqlType::TimestampTz;
    Interval => SqlType::Interval;
}

impl<T: HasSqlType> HasSqlType for Option<T> {
    const COLUMN_TYPE: ColumnType = ColumnType::nullable(T::COLUMN_TYPE.sql_type);
}

/// A column of `column`'s type and nullability (for the derive's code).
#[doc(hidden)]
pub fn column(name: &str, column: ColumnType) -> ColumnDefinition {
    ColumnDefinition::new(name, column.sql_type, column.nullability)
}

/// A column of type `sql_type`, nullable when `nullable` (for the
/// derive's code: a field with `#[hyper(sql_type = ..)]`).
#[doc(hidden)]
pub fn column_of(name: &str, sql_type: SqlType, nullable: bool) -> ColumnDefinition {
    let nullability = if nullable {
        Nullability::Nullable
    } else {
        Nullability::NotNull
    };
    ColumnDefinition::new(name, sql_type, nullability)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair {
        id: u32,
        label: Option<String>,
    }

    impl TableRow for Pair {
        fn table_name() -> TableName {
            TableName::new("pairs").with_schema("s")
        }
        fn with_columns(table: TableDefinition) -> TableDefinition {
            table
                .with_column_definition(column("id", u32::COLUMN_TYPE))
                .with_column_definition(column("label", <Option<String>>::COLUMN_TYPE))
        }
        fn write_row<W: RowWriter + ?Sized>(&self, row: &mut W) -> Result<()> {
            row.value(&self.id)?;
            row.value(&self.label)
        }
    }

    #[test]
    fn rust_types_map_to_the_column_types_that_hold_them() {
        assert_eq!(i32::COLUMN_TYPE, ColumnType::not_null(SqlType::Int));
        assert_eq!(
            <Option<i64>>::COLUMN_TYPE,
            ColumnType::nullable(SqlType::BigInt)
        );
        assert_eq!(<&str>::COLUMN_TYPE, String::COLUMN_TYPE);
        assert_eq!(
            <Option<Vec<u8>>>::COLUMN_TYPE,
            ColumnType::nullable(SqlType::Bytea)
        );
        // Unsigned types widen to a signed type that holds every value.
        assert_eq!(u32::COLUMN_TYPE.sql_type, SqlType::BigInt);
        assert_eq!(
            u64::COLUMN_TYPE.sql_type,
            SqlType::numeric(20, 0).expect("valid")
        );
    }

    #[test]
    fn every_mapped_type_writes_to_its_own_column_type() {
        fn check<T: HasSqlType + ToHyperBinary>() {
            assert!(
                T::accepts(&T::COLUMN_TYPE.sql_type),
                "{} into {}",
                std::any::type_name::<T>(),
                T::COLUMN_TYPE.sql_type
            );
        }
        check::<bool>();
        check::<i8>();
        check::<u8>();
        check::<i16>();
        check::<u16>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
        check::<i128>();
        check::<f32>();
        check::<f64>();
        check::<String>();
        check::<&str>();
        check::<Vec<u8>>();
        check::<&[u8]>();
        check::<Date>();
        check::<Time>();
        check::<Timestamp>();
        check::<TimestampTz>();
        check::<Interval>();
        check::<Option<i32>>();
    }

    #[test]
    fn table_definition_is_the_name_and_the_columns() {
        let t = Pair::table_definition();
        assert_eq!(
            t.name().to_string(),
            TableName::from(("s", "pairs")).to_string()
        );
        assert_eq!(
            t.columns()[0],
            ColumnDefinition::not_null("id", SqlType::BigInt)
        );
        assert_eq!(
            t.columns()[1],
            ColumnDefinition::nullable("label", SqlType::Text)
        );
        // The same columns under another name.
        let staging = Pair::with_columns(TableDefinition::new("staging"));
        assert_eq!(staging.name().name(), "staging");
        assert_eq!(staging.columns(), t.columns());
    }

    #[test]
    fn column_of_takes_nullability_from_the_field() {
        let numeric = SqlType::numeric(18, 2).expect("valid");
        assert!(column_of("n", numeric, true).is_nullable());
        assert!(!column_of("n", numeric, false).is_nullable());
        assert_eq!(column_of("n", numeric, false).sql_type(), &numeric);
    }
}
