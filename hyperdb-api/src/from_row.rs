//! Rows into Rust values: [`FromRow`], implemented for tuples (by position)
//! and for your own structs.

use hyperdb_api_core::types::FromHyperBinary;

use crate::error::Result;
use crate::rows::Row;

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
