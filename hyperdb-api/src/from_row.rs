//! Rows into Rust values: [`FromRow`], implemented for tuples (by position)
//! and for your own structs.

use hyperdb_api_core::types::FromHyperBinary;

use crate::error::Result;
use crate::rows::{Column, ColumnMap, Row, RowValues, Schema};

/// Builds a value from a whole row; `query_as` uses it.
///
/// `'r` is the row's lifetime: a value may borrow from the row it is read
/// from (`&'r str`, `&'r [u8]`), so a scan can read text without an
/// allocation per value. Such a value is read with a lending `next_as`
/// ([`Rows::next_as`](crate::Rows::next_as), one row at a time); the
/// owned streams (`query_as`, `typed`, ...) take types that borrow
/// nothing, `T: for<'r> FromRow<'r>`.
///
/// Tuples of up to 8 values read columns by position. For a struct,
/// `#[derive(FromRow)]` (feature `derive`, on by default) writes every
/// method below, reading by name or by position (see the
/// [crate docs](crate#derived-rows)); by hand, read by name:
///
/// ```
/// use hyperdb_api::{FromRow, Row};
/// struct Measurement { id: i32, value: Option<f64> }
/// impl FromRow<'_> for Measurement {
///     fn from_row(row: &Row) -> hyperdb_api::Result<Self> {
///         Ok(Measurement { id: row.try_get("id")?, value: row.try_get("value")? })
///     }
/// }
///
/// // Borrowing from the row: the name is not copied.
/// struct Named<'r> { id: i32, name: &'r str }
/// impl<'r> FromRow<'r> for Named<'r> {
///     fn from_row(row: &'r Row) -> hyperdb_api::Result<Self> {
///         Ok(Named { id: row.try_get(0)?, name: row.try_get(1)? })
///     }
/// }
/// ```
pub trait FromRow<'r>: Sized {
    fn from_row(row: &'r Row) -> Result<Self>;

    /// Builds the same value as [`from_row`](Self::from_row) from the
    /// row's values read in column order, each once, for a type that can
    /// (the tuples can): typed streams (`query_as`, `typed`, `next_as`)
    /// then decode each `DataRow` in one pass over its bytes instead of
    /// indexing its fields first. `None`, the default, reads through
    /// `from_row`.
    ///
    /// ```
    /// use hyperdb_api::{FromRow, Row, RowValues};
    /// struct Measurement { id: i32, value: Option<f64> }
    /// impl<'r> FromRow<'r> for Measurement {
    ///     fn from_row(row: &'r Row) -> hyperdb_api::Result<Self> {
    ///         Ok(Measurement { id: row.try_get(0)?, value: row.try_get(1)? })
    ///     }
    ///     fn from_values(values: &mut RowValues<'r>) -> Option<hyperdb_api::Result<Self>> {
    ///         Some(values.read().and_then(|id| Ok(Measurement { id, value: values.read()? })))
    ///     }
    ///     fn try_from_values(values: &mut RowValues<'r>) -> Option<Self> {
    ///         Some(Measurement { id: values.try_read()?, value: values.try_read()? })
    ///     }
    /// }
    /// ```
    #[inline(always)]
    fn from_values(values: &mut RowValues<'r>) -> Option<Result<Self>> {
        let _ = values;
        None
    }

    /// [`from_values`](Self::from_values) for a row that reads without an
    /// error, else `None`: no error is built, and the stream reads the row
    /// again through `from_values` (or `from_row`) to report it. A scan's
    /// rows then never carry an error value through the loop. The default
    /// reads nothing and sends every row the checked way.
    #[inline(always)]
    fn try_from_values(values: &mut RowValues<'r>) -> Option<Self> {
        let _ = values;
        None
    }

    /// Whether every column of `schema` has the type this type reads as
    /// it lies ([`FromHyperBinary::PLAIN`]): a typed stream asks once,
    /// and then reads rows with [`from_plain_fields`](Self::from_plain_fields).
    #[doc(hidden)]
    #[inline]
    fn reads_plain(schema: &Schema) -> bool {
        let _ = schema;
        false
    }

    /// A row whose columns passed [`reads_plain`](Self::reads_plain), read
    /// from its fields' bytes (length words included) with no type
    /// checked: `None` unless every field has its type's width (a NULL,
    /// a malformed row), and the stream reads the row the other ways.
    #[doc(hidden)]
    #[inline(always)]
    fn from_plain_fields(fields: &'r [u8]) -> Option<Self> {
        let _ = fields;
        None
    }

    /// For a type that reads its columns by name (`#[derive(FromRow)]` on
    /// a struct with named fields): hands each name to `name`, in the
    /// order [`from_columns`](Self::from_columns) counts them, and returns
    /// `true`. A typed stream then looks the names up once per result,
    /// not once per row, and uses the in-order readers
    /// ([`from_values`](Self::from_values), ...) only when the result's
    /// columns are these names in this order. `false`, the default: the
    /// type reads by position, and the in-order readers always apply.
    #[doc(hidden)]
    #[inline]
    fn column_names(name: &mut dyn FnMut(&'static str)) -> bool {
        let _ = name;
        false
    }

    /// [`from_row`](Self::from_row) with the columns already found: the
    /// type's `k`-th column (by [`column_names`](Self::column_names)
    /// order, or by position) is `row`'s column `columns.index(k)`.
    #[doc(hidden)]
    #[inline]
    fn from_columns(row: &'r Row, columns: ColumnMap<'_>) -> Result<Self> {
        let _ = columns;
        Self::from_row(row)
    }
}

/// Whether `column` has `T`'s plain type (a column of unknown type has none).
#[inline]
#[doc(hidden)]
pub fn plain_column<'a, T: FromHyperBinary<'a>>(column: Option<&Column>) -> bool {
    match (T::PLAIN, column.and_then(Column::sql_type)) {
        (Some(plain), Some(ty)) => plain == *ty,
        _ => false,
    }
}

/// Bytes of a value of `T`'s plain type; `None` without one.
const fn plain_width<'a, T: FromHyperBinary<'a>>() -> Option<usize> {
    match T::PLAIN {
        Some(ty) => ty.fixed_width(),
        None => None,
    }
}

/// Bytes of a field of `T`'s plain type, its length word included (0
/// without one: `plain_value` then reads nothing).
#[doc(hidden)]
pub const fn plain_field_len<'a, T: FromHyperBinary<'a>>() -> usize {
    match plain_width::<T>() {
        Some(width) => 4 + width,
        None => 0,
    }
}

/// The next field of `rest` as `T`, read as its plain type: `None` when
/// its length word is not that type's width (a NULL, or a malformed row).
#[inline(always)]
#[doc(hidden)]
pub fn plain_value<'a, T: FromHyperBinary<'a>>(rest: &mut &'a [u8]) -> Option<T> {
    let ty = T::PLAIN?;
    let width = const { plain_width::<T>() }?;
    let (word, after) = rest.split_first_chunk::<4>()?;
    let (raw, after) = after.split_at_checked(width)?;
    *rest = after;
    if u32::from_be_bytes(*word) as usize != width {
        return None;
    }
    T::decode_hyper(&ty, raw).ok()
}

macro_rules! tuple_from_row {
    ($($t:ident $i:tt),+) => {
        impl<'r, $($t),+> FromRow<'r> for ($($t,)+)
        where
            $($t: FromHyperBinary<'r>),+
        {
            #[inline]
            fn from_row(row: &'r Row) -> Result<Self> {
                Ok(($(row.try_get::<$t>($i)?,)+))
            }

            #[inline(always)]
            fn from_values(values: &mut RowValues<'r>) -> Option<Result<Self>> {
                // A nested fn, not a closure: closures here were left out
                // of line, at a cost of a third of a scan's instructions.
                #[inline(always)]
                fn read<'r, $($t),+>(values: &mut RowValues<'r>) -> Result<($($t,)+)>
                where
                    $($t: FromHyperBinary<'r>),+
                {
                    Ok(($(values.read::<$t>()?,)+))
                }
                Some(read::<$($t),+>(values))
            }

            #[inline(always)]
            fn try_from_values(values: &mut RowValues<'r>) -> Option<Self> {
                Some(($(values.try_read::<$t>()?,)+))
            }

            #[inline]
            fn reads_plain(schema: &Schema) -> bool {
                let columns = schema.columns();
                columns.len() == [$($i),+].len()
                    $(&& plain_column::<$t>(columns.get($i)))+
            }

            #[inline(always)]
            fn from_plain_fields(fields: &'r [u8]) -> Option<Self> {
                // One length check for the whole row: the fields' offsets
                // are constants from here on.
                if fields.len() != 0 $(+ plain_field_len::<$t>())+ {
                    return None;
                }
                let mut rest = fields;
                Some(($(plain_value::<$t>(&mut rest)?,)+))
            }
        }
    };
}

tuple_from_row!(A 0);
tuple_from_row!(A 0, B 1);
tuple_from_row!(A 0, B 1, C 2);
tuple_from_row!(A 0, B 1, C 2, D 3);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

#[cfg(test)]
mod tests {
    use hyperdb_api_core::types::SqlType;

    use super::FromRow;
    use crate::rows::Schema;

    type Plain = (i32, Option<f64>, bool);

    /// A `DataRow`'s fields: a length word (-1 for NULL) and the bytes.
    fn fields(values: &[Option<&[u8]>]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            match v {
                Some(v) => {
                    out.extend(i32::try_from(v.len()).unwrap().to_be_bytes());
                    out.extend(*v);
                }
                None => out.extend((-1i32).to_be_bytes()),
            }
        }
        out
    }

    fn schema(types: &[Option<SqlType>]) -> std::sync::Arc<Schema> {
        Schema::from_sql_types(types.iter().enumerate().map(|(i, t)| (format!("c{i}"), *t)))
    }

    #[test]
    fn tuples_read_plain_only_their_own_column_types() {
        let int_double_bool = [
            Some(SqlType::Int),
            Some(SqlType::Double),
            Some(SqlType::Bool),
        ];
        assert!(Plain::reads_plain(&schema(&int_double_bool)));
        // Widening (i64 from INT) is read the checked way.
        assert!(!<(i64, Option<f64>, bool)>::reads_plain(&schema(
            &int_double_bool
        )));
        // Another column count, a column of no known type, a text column.
        assert!(!<(i32, Option<f64>)>::reads_plain(&schema(
            &int_double_bool
        )));
        assert!(!Plain::reads_plain(&schema(&[
            Some(SqlType::Int),
            None,
            Some(SqlType::Bool)
        ])));
        assert!(!<(i32, String)>::reads_plain(&schema(&[
            Some(SqlType::Int),
            Some(SqlType::Text)
        ])));
    }

    #[test]
    fn plain_rows_read_only_when_every_field_has_its_width() {
        let id = 7i32.to_le_bytes();
        let value = (-2.5f64).to_le_bytes();
        let row = fields(&[Some(&id), Some(&value), Some(&[1])]);
        assert_eq!(Plain::from_plain_fields(&row), Some((7, Some(-2.5), true)));
        // A NULL: the row is read the other ways.
        assert_eq!(
            Plain::from_plain_fields(&fields(&[Some(&id), None, Some(&[1])])),
            None
        );
        // The right total, but the widths moved between fields.
        let moved = fields(&[Some(&id), Some(&value[..4]), Some(&[1, 0, 0, 0, 0])]);
        assert_eq!(moved.len(), row.len());
        assert_eq!(Plain::from_plain_fields(&moved), None);
        // A byte too many or too few, and a value its type refuses.
        let mut long = row.clone();
        long.push(0);
        assert_eq!(Plain::from_plain_fields(&long), None);
        assert_eq!(Plain::from_plain_fields(&row[..row.len() - 1]), None);
        assert_eq!(
            Plain::from_plain_fields(&fields(&[Some(&id), Some(&value), Some(&[2])])),
            None
        );
    }
}
