//! HyperBinary, Hyper's own binary value format: the payload of
//! `COPY ... WITH (FORMAT HYPERBINARY)` and of result columns requested with
//! format code 2.
//!
//! Values are little-endian and laid out by column type ([`SqlType`]), not
//! by Rust type: the same `i64` is 2, 4 or 8 bytes depending on the column,
//! and a NUMERIC's width depends on its precision. Hence every encode and
//! decode takes the column type, and narrowing that could lose data is a
//! per-value error rather than a silent cast.
//!
//! Encoding appends to a caller-owned [`BytesMut`] and allocates nothing per
//! value, so one buffer can be refilled for millions of rows.

use bytes::BytesMut;

use super::sql_type::{ColumnType, SqlType};
use crate::error::{Error, Result};

/// The 19 bytes that open a HyperBinary COPY stream, once, before the first
/// row: `HPRCPY` and 13 zero bytes. There is no trailer.
pub const COPY_HEADER: [u8; 19] = *b"HPRCPY\0\0\0\0\0\0\0\0\0\0\0\0\0";

/// Appends [`COPY_HEADER`].
pub fn put_copy_header(buf: &mut BytesMut) {
    buf.extend_from_slice(&COPY_HEADER);
}

/// A Rust value that can be written as a HyperBinary value of some column
/// types.
///
/// Implemented for the integer, float, bool, string and byte types, the
/// value types of this module, `Option<T>` (None is NULL) and references.
pub trait ToHyperBinary {
    /// Whether values of this type can be written to columns of `ty` at all.
    /// Check it when a schema is known, before sending rows; individual
    /// values can still fail (out of range, too long).
    fn accepts(ty: &SqlType) -> bool
    where
        Self: Sized;

    /// Appends the value, without a null indicator, in the layout of `ty`.
    /// Errors when `ty` is not accepted or the value does not fit it.
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()>;

    /// Whether this is SQL NULL.
    #[inline]
    fn is_null(&self) -> bool {
        false
    }

    /// What [`encode_column`] does, as a method: through a
    /// `&dyn ToHyperBinary` (every inserter row) it is one virtual call per
    /// value with `is_null` and `encode_hyper` inlined behind it, instead
    /// of a virtual call for each. Not overridable: `Token` is unnameable
    /// outside this crate.
    #[doc(hidden)]
    #[inline]
    fn encode_column_hyper(
        &self,
        column: &ColumnType,
        buf: &mut BytesMut,
        _: sealed::Token,
    ) -> Result<()> {
        put_column(self, column, buf)
    }

    /// What [`encode_value_or_null`] does, in one virtual call.
    #[doc(hidden)]
    #[inline]
    fn encode_value_or_null_hyper(
        &self,
        column: &ColumnType,
        buf: &mut BytesMut,
        _: sealed::Token,
    ) -> Result<bool> {
        if self.is_null() {
            return match column.is_nullable() {
                true => Ok(true),
                false => Err(null_in_not_null(column)),
            };
        }
        let start = buf.len();
        if let Err(e) = self.encode_hyper(&column.sql_type, buf) {
            buf.truncate(start);
            return Err(e);
        }
        Ok(false)
    }

    /// The inserters' fast path ([`Fixed`]). Implemented where a value is a plain
    /// copy into some column type (integers, floats, bool, DATE, TIME,
    /// TIMESTAMP); everything else keeps the default `Other`.
    #[doc(hidden)]
    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, _: sealed::Token) -> Fixed {
        let _ = ty;
        Fixed::Other
    }
}

pub(crate) mod sealed {
    /// Keeps [`super::ToHyperBinary::encode_column_hyper`] and
    /// [`super::ToHyperBinary::fixed_hyper`] from being overridden outside
    /// this crate.
    #[derive(Debug, Clone, Copy)]
    pub struct Token;
}

/// A value as the inserters' fast path sees it.
///
/// Why: an inserter row is a slice of `&dyn ToHyperBinary`, one virtual call
/// per value. [`encode_column`] answers through a `Result` written to memory
/// behind a full prologue, ~40 instructions a value; this answer comes back
/// in two registers and is ~6. Only values whose bytes are their column's
/// layout as they are get an answer other than `Other`; conversions, range
/// checks and every error stay on the checked path.
///
/// Public only as `fixed_hyper`'s return type (hidden, like
/// `sealed::Token`); callers use [`encode_column`] and
/// [`encode_value_or_null`], which take this path first.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixed {
    /// A 1-byte value (in the low byte).
    Bytes1(u64),
    /// A 2-byte little-endian value, zero-extended.
    Bytes2(u64),
    /// A 4-byte little-endian value, zero-extended.
    Bytes4(u64),
    /// An 8-byte little-endian value.
    Bytes8(u64),
    /// SQL NULL, whatever the column (its nullability is the caller's check).
    Null,
    /// Not a plain copy: encode with [`encode_column`] or
    /// [`encode_value_or_null`], which also give the error if there is one.
    Other,
}

impl Fixed {
    /// A value whose layout is these `N` little-endian bytes (1, 2, 4 or 8).
    /// The width is in the variant so that the whole answer is a tag and a
    /// word: two registers.
    #[inline(always)]
    pub(crate) fn le<const N: usize>(bytes: [u8; N]) -> Fixed {
        let mut bits = [0u8; 8];
        bits[..N].copy_from_slice(&bytes);
        let bits = u64::from_le_bytes(bits);
        match N {
            1 => Fixed::Bytes1(bits),
            2 => Fixed::Bytes2(bits),
            4 => Fixed::Bytes4(bits),
            8 => Fixed::Bytes8(bits),
            _ => Fixed::Other,
        }
    }

    /// Appends a value's bytes; returns false (appending nothing) for
    /// `Null` and `Other`.
    ///
    /// One path for every width: all 8 bytes are stored, then the length
    /// grows by the width. Branching on the width instead made the
    /// inserters' per-value loop too big for the compiler to unroll over a
    /// row, which is what lets it call each value's code directly.
    #[inline(always)]
    pub(crate) fn put(self, buf: &mut BytesMut) -> bool {
        let (bits, width) = match self {
            Fixed::Bytes8(v) => (v, 8),
            Fixed::Bytes4(v) => (v, 4),
            Fixed::Bytes2(v) => (v, 2),
            Fixed::Bytes1(v) => (v, 1),
            Fixed::Null | Fixed::Other => return false,
        };
        buf.reserve(8);
        let len = buf.len();
        for (slot, byte) in buf.spare_capacity_mut()[..8]
            .iter_mut()
            .zip(bits.to_le_bytes())
        {
            slot.write(byte);
        }
        // SAFETY: `reserve(8)` made room for 8 bytes past `len` and all 8
        // were just written, so the first `width <= 8` of them are
        // initialized. Covered by `fixed_values_are_what_encode_writes`.
        unsafe { buf.set_len(len + width) };
        true
    }
}

/// `value` for a column of type `ty`, when it is a plain copy (see
/// [`Fixed`]). A `Bytes*` answer is exactly what the checked encoders
/// append for a non-NULL value.
#[inline(always)]
pub(crate) fn fixed_value<T: ToHyperBinary + ?Sized>(value: &T, ty: &SqlType) -> Fixed {
    value.fixed_hyper(ty, sealed::Token)
}

/// Appends one column value of a COPY row: the null indicator byte when the
/// column is nullable (0 then the value, or 1 for NULL), then the value.
///
/// On error nothing is appended, so the caller can skip or abort the row
/// without a corrupt stream.
///
/// A plain copy ([`Fixed`]) is stored inline; anything else (NULLs
/// included) goes through the checked encoder, out of line, so that an
/// inserter's per-value loop stays small enough to unroll over a row.
#[inline(always)]
pub fn encode_column<T: ToHyperBinary + ?Sized>(
    value: &T,
    column: &ColumnType,
    buf: &mut BytesMut,
) -> Result<()> {
    match fixed_value(value, &column.sql_type) {
        Fixed::Null | Fixed::Other => encode_column_checked(value, column, buf),
        fixed => {
            if column.is_nullable() {
                put_le(buf, [0]);
            }
            fixed.put(buf);
            Ok(())
        }
    }
}

#[inline(never)]
fn encode_column_checked<T: ToHyperBinary + ?Sized>(
    value: &T,
    column: &ColumnType,
    buf: &mut BytesMut,
) -> Result<()> {
    value.encode_column_hyper(column, buf, sealed::Token)
}

/// Appends a value in the layout of `column` with no null indicator, or
/// nothing for NULL: returns whether the value was NULL (an error in a
/// NOT NULL column, as [`encode_column`] gives). For callers that keep
/// NULLs elsewhere (a columnar validity bitmap). On error nothing is
/// appended. Plain copies are stored inline, as in [`encode_column`].
#[inline(always)]
pub fn encode_value_or_null<T: ToHyperBinary + ?Sized>(
    value: &T,
    column: &ColumnType,
    buf: &mut BytesMut,
) -> Result<bool> {
    if fixed_value(value, &column.sql_type).put(buf) {
        return Ok(false);
    }
    encode_value_or_null_checked(value, column, buf)
}

#[inline(never)]
fn encode_value_or_null_checked<T: ToHyperBinary + ?Sized>(
    value: &T,
    column: &ColumnType,
    buf: &mut BytesMut,
) -> Result<bool> {
    value.encode_value_or_null_hyper(column, buf, sealed::Token)
}

#[inline(always)]
fn put_column<T: ToHyperBinary + ?Sized>(
    value: &T,
    column: &ColumnType,
    buf: &mut BytesMut,
) -> Result<()> {
    let start = buf.len();
    let null = value.is_null();
    if column.is_nullable() {
        put_le(buf, [u8::from(null)]);
        if null {
            return Ok(());
        }
    } else if null {
        return Err(null_in_not_null(column));
    }
    // Only the error is moved on: passing the callee's `Result` through
    // whole (`inspect_err`) copied it on the stack for every value, measured
    // at a quarter of the per-row encode time.
    if let Err(e) = value.encode_hyper(&column.sql_type, buf) {
        buf.truncate(start);
        return Err(e);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn null_in_not_null(column: &ColumnType) -> Error {
    Error::invalid_input(format!("NULL for a {column} column"))
}

/// Appends a whole COPY row, one value per column in order. On error the
/// buffer is left as it was before the call; the error names the column.
pub fn encode_row(
    columns: &[ColumnType],
    values: &[&dyn ToHyperBinary],
    buf: &mut BytesMut,
) -> Result<()> {
    if columns.len() != values.len() {
        return Err(Error::invalid_input(format!(
            "row has {} values for {} columns",
            values.len(),
            columns.len()
        )));
    }
    let start = buf.len();
    for (i, (column, value)) in columns.iter().zip(values).enumerate() {
        if let Err(e) = encode_column(*value, column, buf) {
            buf.truncate(start);
            return Err(Error::new(
                e.kind(),
                format!("column {}: {}", i + 1, e.message()),
            ));
        }
    }
    Ok(())
}

/// A Rust value that can be read from a HyperBinary result field.
///
/// `'a` is the lifetime of the row's bytes, so `&str` and `&[u8]` borrow
/// instead of copying.
pub trait FromHyperBinary<'a>: Sized {
    /// Whether columns of `ty` can be read as this type at all.
    fn accepts(ty: &SqlType) -> bool;

    /// Reads a non-NULL field. `raw` is the field's bytes as the DataRow
    /// framed them: no null indicator and no inner length prefix.
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self>;

    /// The column type whose fields this type reads as they lie: a fixed
    /// width (`SqlType::fixed_width`), read by `decode_hyper`. A typed
    /// scan that checked once that a result's columns have these types
    /// reads each field with the type a constant, so no value pays for a
    /// type check (`hyperdb-api`'s tuples). `None`, the default: every
    /// value is read with its column's type.
    #[doc(hidden)]
    const PLAIN: Option<SqlType> = None;

    /// Reads a NULL field; only `Option<T>` accepts one.
    #[inline]
    fn decode_hyper_null(ty: &SqlType) -> Result<Self> {
        Err(Error::conversion(format!(
            "unexpected NULL in a {ty} column; read it as an Option"
        )))
    }
}

/// Reads a result field that may be NULL (`None`).
pub fn decode_field<'a, T: FromHyperBinary<'a>>(ty: &SqlType, raw: Option<&'a [u8]>) -> Result<T> {
    match raw {
        Some(raw) => T::decode_hyper(ty, raw),
        None => T::decode_hyper_null(ty),
    }
}

impl<T: ToHyperBinary> ToHyperBinary for Option<T> {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        T::accepts(ty)
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        match self {
            Some(v) => v.encode_hyper(ty, buf),
            None => Err(Error::invalid_input(format!(
                "NULL has no {ty} value; write it with encode_column"
            ))),
        }
    }

    #[inline]
    fn is_null(&self) -> bool {
        self.as_ref().is_none_or(ToHyperBinary::is_null)
    }

    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, token: sealed::Token) -> Fixed {
        match self {
            Some(v) => v.fixed_hyper(ty, token),
            None => Fixed::Null,
        }
    }
}

impl<T: ToHyperBinary> ToHyperBinary for &T {
    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        T::accepts(ty)
    }

    #[inline]
    fn encode_hyper(&self, ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
        (**self).encode_hyper(ty, buf)
    }

    #[inline]
    fn is_null(&self) -> bool {
        (**self).is_null()
    }

    #[inline]
    fn fixed_hyper(&self, ty: &SqlType, token: sealed::Token) -> Fixed {
        (**self).fixed_hyper(ty, token)
    }
}

impl<'a, T: FromHyperBinary<'a>> FromHyperBinary<'a> for Option<T> {
    const PLAIN: Option<SqlType> = T::PLAIN;

    #[inline]
    fn accepts(ty: &SqlType) -> bool {
        T::accepts(ty)
    }

    #[inline(always)]
    fn decode_hyper(ty: &SqlType, raw: &'a [u8]) -> Result<Self> {
        T::decode_hyper(ty, raw).map(Some)
    }

    #[inline]
    fn decode_hyper_null(_: &SqlType) -> Result<Self> {
        Ok(None)
    }
}

/// The error for a Rust type that cannot meet a column type at all.
pub(crate) fn mismatch(rust: &str, ty: &SqlType) -> Error {
    Error::type_mismatch(format!("cannot convert between {rust} and a {ty} column"))
}

/// Checks a fixed-width field and returns its bytes.
#[inline]
pub(crate) fn fixed<const N: usize>(ty: &SqlType, raw: &[u8]) -> Result<[u8; N]> {
    raw.try_into().map_err(|_| wrong_width(ty, N, raw.len()))
}

#[cold]
#[inline(never)]
fn wrong_width(ty: &SqlType, want: usize, got: usize) -> Error {
    Error::conversion(format!(
        "HyperBinary {ty} value must be {want} bytes, got {got}"
    ))
}

/// Appends a fixed-width value's bytes. `BytesMut`'s `BufMut::put_*` all go
/// through `put_slice`, which is not inlined across crates: a call and a
/// variable-length copy per value, the largest client cost of a COPY row.
/// This is one capacity check and one store of `N` bytes.
#[inline(always)]
pub(crate) fn put_le<const N: usize>(buf: &mut BytesMut, bytes: [u8; N]) {
    buf.extend_from_slice(&bytes);
}

/// Appends a length-prefixed (u32) byte string.
pub(crate) fn put_len_prefixed(bytes: &[u8], ty: &SqlType, buf: &mut BytesMut) -> Result<()> {
    let len = u32::try_from(bytes.len()).map_err(|_| {
        Error::invalid_input(format!("{ty} value of {} bytes exceeds 4 GiB", bytes.len()))
    })?;
    put_le(buf, len.to_le_bytes());
    buf.extend_from_slice(bytes);
    Ok(())
}

#[cfg(test)]
#[path = "hyperbinary_tests.rs"]
mod tests;
