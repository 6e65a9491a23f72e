//! Rows into Rust values: [`FromRow`], implemented for tuples (by position)
//! and for your own structs.

use hyperdb_api_core::types::FromHyperBinary;

use crate::error::Result;
use crate::rows::{Row, RowValues};

/// Builds a value from a whole row; `query_as` uses it.
///
/// Tuples of up to 8 owned values read columns by position. For a struct,
/// read by name:
///
/// ```
/// use hyperdb_api::{FromRow, Row};
/// struct Measurement { id: i32, value: Option<f64> }
/// impl FromRow for Measurement {
///     fn from_row(row: &Row) -> hyperdb_api::Result<Self> {
///         Ok(Measurement { id: row.try_get("id")?, value: row.try_get("value")? })
///     }
/// }
/// ```
pub trait FromRow: Sized {
    fn from_row(row: &Row) -> Result<Self>;

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
    /// impl FromRow for Measurement {
    ///     fn from_row(row: &Row) -> hyperdb_api::Result<Self> {
    ///         Ok(Measurement { id: row.try_get(0)?, value: row.try_get(1)? })
    ///     }
    ///     fn from_values(values: &mut RowValues<'_>) -> Option<hyperdb_api::Result<Self>> {
    ///         Some(values.read().and_then(|id| Ok(Measurement { id, value: values.read()? })))
    ///     }
    ///     fn try_from_values(values: &mut RowValues<'_>) -> Option<Self> {
    ///         Some(Measurement { id: values.try_read()?, value: values.try_read()? })
    ///     }
    /// }
    /// ```
    #[inline(always)]
    fn from_values(values: &mut RowValues<'_>) -> Option<Result<Self>> {
        let _ = values;
        None
    }

    /// [`from_values`](Self::from_values) for a row that reads without an
    /// error, else `None`: no error is built, and the stream reads the row
    /// again through `from_values` (or `from_row`) to report it. A scan's
    /// rows then never carry an error value through the loop. The default
    /// reads nothing and sends every row the checked way.
    #[inline(always)]
    fn try_from_values(values: &mut RowValues<'_>) -> Option<Self> {
        let _ = values;
        None
    }
}

macro_rules! tuple_from_row {
    ($($t:ident $i:tt),+) => {
        impl<$($t),+> FromRow for ($($t,)+)
        where
            $($t: for<'a> FromHyperBinary<'a>),+
        {
            #[inline]
            fn from_row(row: &Row) -> Result<Self> {
                Ok(($(row.try_get::<$t>($i)?,)+))
            }

            #[inline(always)]
            fn from_values(values: &mut RowValues<'_>) -> Option<Result<Self>> {
                // A nested fn, not a closure: closures here were left out
                // of line, at a cost of a third of a scan's instructions.
                #[inline(always)]
                fn read<$($t),+>(values: &mut RowValues<'_>) -> Result<($($t,)+)>
                where
                    $($t: for<'a> FromHyperBinary<'a>),+
                {
                    Ok(($(values.read::<$t>()?,)+))
                }
                Some(read::<$($t),+>(values))
            }

            #[inline(always)]
            fn try_from_values(values: &mut RowValues<'_>) -> Option<Self> {
                Some(($(values.try_read::<$t>()?,)+))
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
