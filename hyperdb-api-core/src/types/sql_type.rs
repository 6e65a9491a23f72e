//! Hyper's column types, and their spellings in SQL and in the PostgreSQL
//! catalog (type OID plus type modifier).
//!
//! The OIDs and modifiers below were measured on hyperd 0.0.26963 through
//! `pg_attribute`, `format_type` and RowDescription, not copied from
//! PostgreSQL: Hyper differs in places (CHAR(1) is OID 18, bare `VARCHAR` is
//! TEXT, bare `NUMERIC` is NUMERIC(38,0), GEOGRAPHY is OID 5003).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// PostgreSQL type OIDs as hyperd reports them.
pub mod oid {
    /// `BOOL`.
    pub const BOOL: u32 = 16;
    /// `BYTEA`.
    pub const BYTEA: u32 = 17;
    /// `CHAR(1)`: hyperd reports every one-character CHAR with PostgreSQL's
    /// `"char"` OID and no modifier.
    pub const CHAR1: u32 = 18;
    /// `BIGINT`.
    pub const INT8: u32 = 20;
    /// `SMALLINT`.
    pub const INT2: u32 = 21;
    /// `INTEGER`.
    pub const INT4: u32 = 23;
    /// `TEXT` (also what a bare `VARCHAR` becomes).
    pub const TEXT: u32 = 25;
    /// `OID`.
    pub const OID: u32 = 26;
    /// `JSON`.
    pub const JSON: u32 = 114;
    /// `REAL`.
    pub const FLOAT4: u32 = 700;
    /// `DOUBLE PRECISION`.
    pub const FLOAT8: u32 = 701;
    /// `CHAR(n)` for n > 1.
    pub const BPCHAR: u32 = 1042;
    /// `VARCHAR(n)`.
    pub const VARCHAR: u32 = 1043;
    /// `DATE`.
    pub const DATE: u32 = 1082;
    /// `TIME`.
    pub const TIME: u32 = 1083;
    /// `TIMESTAMP`.
    pub const TIMESTAMP: u32 = 1114;
    /// `TIMESTAMP WITH TIME ZONE`.
    pub const TIMESTAMPTZ: u32 = 1184;
    /// `INTERVAL`.
    pub const INTERVAL: u32 = 1186;
    /// `NUMERIC(p,s)`.
    pub const NUMERIC: u32 = 1700;
    /// `GEOGRAPHY` (`tableau.tabgeography` in the catalog).
    pub const GEOGRAPHY: u32 = 5003;
    /// `UUID`: no [`SqlType`](super::SqlType) of its own.
    pub const UUID: u32 = 2950;
}

/// The largest NUMERIC precision Hyper accepts.
pub const MAX_NUMERIC_PRECISION: u8 = 38;

/// Largest precision stored as a 64-bit unscaled integer; wider ones take 128 bits.
pub(crate) const MAX_NUMERIC64_PRECISION: u8 = 18;

/// Largest CHAR/VARCHAR length whose type modifier (`n + 4`) still fits an `i32`.
const MAX_CHAR_LENGTH: u32 = i32::MAX as u32 - 4;

/// A Hyper column type.
///
/// Variants with parameters can be built directly; the checked constructors
/// ([`SqlType::numeric`], [`SqlType::varchar`], [`SqlType::char`]) reject
/// parameters hyperd would refuse, and every codec re-checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SqlType {
    Bool,
    SmallInt,
    Int,
    BigInt,
    /// 32-bit float. Needs database version 4 to be stored in a table.
    Real,
    Double,
    Oid,
    /// Exact decimal: `precision` total digits (1..=38), `scale` of them
    /// after the point. Precision above 18 needs database version 3.
    Numeric {
        precision: u8,
        scale: u8,
    },
    Text,
    /// At most `n` characters.
    Varchar(u32),
    /// Exactly `n` characters, blank-padded by the server.
    Char(u32),
    Json,
    Bytea,
    Date,
    Time,
    Timestamp,
    /// A UTC instant; time zones only matter when rendered as text.
    TimestampTz,
    Interval,
    Geography,
}

impl SqlType {
    /// `NUMERIC(precision, scale)`, checked the way hyperd checks it.
    pub fn numeric(precision: u8, scale: u8) -> Result<SqlType> {
        check_numeric(precision, scale)?;
        Ok(SqlType::Numeric { precision, scale })
    }

    /// `VARCHAR(n)`, n >= 1.
    pub fn varchar(n: u32) -> Result<SqlType> {
        check_length("VARCHAR", n)?;
        Ok(SqlType::Varchar(n))
    }

    /// `CHAR(n)`, n >= 1.
    pub fn char(n: u32) -> Result<SqlType> {
        check_length("CHAR", n)?;
        Ok(SqlType::Char(n))
    }

    /// The text a column of this type stores for `s`, or `Err` with the
    /// count of characters of `s` when it does not fit. VARCHAR(n) and
    /// CHAR(n) hold at most n characters (as SQL counts them: code points).
    /// CHAR(n) also takes a longer value whose characters past the n-th are
    /// all spaces, and stores its first n: a CHAR value is padded with
    /// spaces anyway, so they carry nothing. That is what hyperd's own
    /// HyperBinary COPY does, and so what Tableau's Hyper API stores
    /// (measured: `'abc   '` into CHAR(3) is `'abc'`, into VARCHAR(3) an
    /// error). Other types take `s` as it is.
    pub fn fit_text<'s>(&self, s: &'s str) -> std::result::Result<&'s str, usize> {
        let (limit, pads) = match *self {
            SqlType::Varchar(n) => (n, false),
            SqlType::Char(n) => (n, true),
            _ => return Ok(s),
        };
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        // A string of at most n bytes has at most n characters: skip the count.
        if s.len() <= limit {
            return Ok(s);
        }
        match s.char_indices().nth(limit) {
            None => Ok(s),
            Some((end, _)) if pads && s.as_bytes()[end..].iter().all(|&b| b == b' ') => {
                Ok(&s[..end])
            }
            Some(_) => Err(s.chars().count()),
        }
    }

    /// The type OID hyperd uses for this type.
    pub fn oid(&self) -> u32 {
        match self {
            SqlType::Bool => oid::BOOL,
            SqlType::SmallInt => oid::INT2,
            SqlType::Int => oid::INT4,
            SqlType::BigInt => oid::INT8,
            SqlType::Real => oid::FLOAT4,
            SqlType::Double => oid::FLOAT8,
            SqlType::Oid => oid::OID,
            SqlType::Numeric { .. } => oid::NUMERIC,
            SqlType::Text => oid::TEXT,
            SqlType::Varchar(_) => oid::VARCHAR,
            SqlType::Char(1) => oid::CHAR1,
            SqlType::Char(_) => oid::BPCHAR,
            SqlType::Json => oid::JSON,
            SqlType::Bytea => oid::BYTEA,
            SqlType::Date => oid::DATE,
            SqlType::Time => oid::TIME,
            SqlType::Timestamp => oid::TIMESTAMP,
            SqlType::TimestampTz => oid::TIMESTAMPTZ,
            SqlType::Interval => oid::INTERVAL,
            SqlType::Geography => oid::GEOGRAPHY,
        }
    }

    /// The type modifier (`atttypmod`) hyperd reports: `n + 4` for
    /// CHAR(n > 1)/VARCHAR(n), `((p << 16) | s) + 4` for NUMERIC, else -1.
    pub fn typmod(&self) -> i32 {
        match *self {
            SqlType::Numeric { precision, scale } => {
                ((i32::from(precision) << 16) | i32::from(scale)) + 4
            }
            SqlType::Varchar(n) => length_typmod(n),
            SqlType::Char(n) if n != 1 => length_typmod(n),
            _ => -1,
        }
    }

    /// The type a column with this OID and modifier has, e.g. from a
    /// RowDescription field.
    pub fn from_oid_typmod(type_oid: u32, typmod: i32) -> Result<SqlType> {
        Ok(match type_oid {
            oid::BOOL => SqlType::Bool,
            oid::INT2 => SqlType::SmallInt,
            oid::INT4 => SqlType::Int,
            oid::INT8 => SqlType::BigInt,
            oid::FLOAT4 => SqlType::Real,
            oid::FLOAT8 => SqlType::Double,
            oid::OID => SqlType::Oid,
            oid::TEXT => SqlType::Text,
            oid::JSON => SqlType::Json,
            oid::BYTEA => SqlType::Bytea,
            oid::DATE => SqlType::Date,
            oid::TIME => SqlType::Time,
            oid::TIMESTAMP => SqlType::Timestamp,
            oid::TIMESTAMPTZ => SqlType::TimestampTz,
            oid::INTERVAL => SqlType::Interval,
            oid::GEOGRAPHY => SqlType::Geography,
            oid::CHAR1 => SqlType::Char(1),
            oid::VARCHAR => SqlType::varchar(length_from_typmod("VARCHAR", typmod)?)?,
            oid::BPCHAR => SqlType::char(length_from_typmod("CHAR", typmod)?)?,
            oid::NUMERIC => {
                let m = typmod.checked_sub(4).filter(|m| *m >= 0).ok_or_else(|| {
                    Error::conversion(format!("NUMERIC type modifier {typmod} has no precision"))
                })?;
                let precision = u8::try_from(m >> 16).unwrap_or(u8::MAX);
                let scale = u8::try_from(m & 0xffff).unwrap_or(u8::MAX);
                SqlType::numeric(precision, scale)?
            }
            other => {
                return Err(Error::conversion(format!(
                    "type OID {other} (modifier {typmod}) is not a Hyper column type"
                )))
            }
        })
    }

    /// Bytes of one HyperBinary value, or `None` when the value is
    /// length-prefixed (text, bytes, geography).
    pub const fn fixed_width(&self) -> Option<usize> {
        Some(match *self {
            SqlType::Bool => 1,
            SqlType::SmallInt => 2,
            SqlType::Int | SqlType::Real | SqlType::Oid | SqlType::Date => 4,
            SqlType::BigInt | SqlType::Double | SqlType::Time => 8,
            SqlType::Timestamp | SqlType::TimestampTz => 8,
            SqlType::Interval => 16,
            SqlType::Numeric { precision, .. } if precision <= MAX_NUMERIC64_PRECISION => 8,
            SqlType::Numeric { .. } => 16,
            _ => return None,
        })
    }

    /// The oldest `.hyper` file format (`--default-database-version`) that
    /// can store a column of this type; `None` when every version can.
    /// Measured: the default (version 2) rejects REAL and NUMERIC(19..38).
    pub fn min_database_version(&self) -> Option<u32> {
        match *self {
            SqlType::Real => Some(4),
            SqlType::Numeric { precision, .. } if precision > MAX_NUMERIC64_PRECISION => Some(3),
            _ => None,
        }
    }
}

pub(crate) fn check_numeric(precision: u8, scale: u8) -> Result<()> {
    if precision == 0 || precision > MAX_NUMERIC_PRECISION {
        return Err(Error::invalid_input(format!(
            "NUMERIC precision {precision} is outside 1..=38"
        )));
    }
    if scale > precision {
        return Err(Error::invalid_input(format!(
            "NUMERIC scale {scale} exceeds precision {precision}"
        )));
    }
    Ok(())
}

fn check_length(name: &str, n: u32) -> Result<()> {
    if n == 0 || n > MAX_CHAR_LENGTH {
        return Err(Error::invalid_input(format!(
            "{name} length {n} is outside 1..={MAX_CHAR_LENGTH}"
        )));
    }
    Ok(())
}

fn length_typmod(n: u32) -> i32 {
    i32::try_from(n).map_or(i32::MAX, |n| n.saturating_add(4))
}

fn length_from_typmod(name: &str, typmod: i32) -> Result<u32> {
    typmod
        .checked_sub(4)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| Error::conversion(format!("{name} type modifier {typmod} has no length")))
}

/// Renders the spelling hyperd accepts in DDL, e.g. `NUMERIC(18,3)`.
impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlType::Bool => f.write_str("BOOLEAN"),
            SqlType::SmallInt => f.write_str("SMALLINT"),
            SqlType::Int => f.write_str("INTEGER"),
            SqlType::BigInt => f.write_str("BIGINT"),
            SqlType::Real => f.write_str("REAL"),
            SqlType::Double => f.write_str("DOUBLE PRECISION"),
            SqlType::Oid => f.write_str("OID"),
            SqlType::Numeric { precision, scale } => write!(f, "NUMERIC({precision},{scale})"),
            SqlType::Text => f.write_str("TEXT"),
            SqlType::Varchar(n) => write!(f, "VARCHAR({n})"),
            SqlType::Char(n) => write!(f, "CHAR({n})"),
            SqlType::Json => f.write_str("JSON"),
            SqlType::Bytea => f.write_str("BYTEA"),
            SqlType::Date => f.write_str("DATE"),
            SqlType::Time => f.write_str("TIME"),
            SqlType::Timestamp => f.write_str("TIMESTAMP"),
            SqlType::TimestampTz => f.write_str("TIMESTAMP WITH TIME ZONE"),
            SqlType::Interval => f.write_str("INTERVAL"),
            SqlType::Geography => f.write_str("GEOGRAPHY"),
        }
    }
}

/// Parses a type name as written in SQL or printed by `format_type`,
/// case-insensitively: `int4`, `character varying(10)`, `decimal(18,3)`,
/// `timestamp with time zone`, `tabgeography`, ... A bare `VARCHAR` is TEXT
/// and a bare `NUMERIC` is NUMERIC(38,0), as in hyperd.
impl FromStr for SqlType {
    type Err = Error;

    fn from_str(s: &str) -> Result<SqlType> {
        let bad = || Error::invalid_input(format!("unknown SQL type '{s}'"));
        let (name, args) = match s.find('(') {
            Some(open) => {
                let close = s.rfind(')').filter(|c| *c > open).ok_or_else(bad)?;
                if !s[close + 1..].trim().is_empty() {
                    return Err(bad());
                }
                (&s[..open], Some(&s[open + 1..close]))
            }
            None => (s, None),
        };
        let name = name
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        let mut nums = [0u32; 2];
        let mut count = 0;
        if let Some(args) = args {
            for part in args.split(',') {
                let slot = nums.get_mut(count).ok_or_else(bad)?;
                *slot = part.trim().parse().map_err(|_| bad())?;
                count += 1;
            }
        }
        let arg = |i: usize| nums[i];
        let small = |i: usize| u8::try_from(nums[i]).map_err(|_| bad());
        let plain = |t: SqlType| if args.is_none() { Ok(t) } else { Err(bad()) };
        match name.as_str() {
            "bool" | "boolean" => plain(SqlType::Bool),
            "smallint" | "int2" => plain(SqlType::SmallInt),
            "int" | "integer" | "int4" => plain(SqlType::Int),
            "bigint" | "int8" => plain(SqlType::BigInt),
            "real" | "float4" => plain(SqlType::Real),
            "double precision" | "double" | "float8" => plain(SqlType::Double),
            "float" => match (args, arg(0)) {
                (None, _) => Ok(SqlType::Double),
                (Some(_), 1..=24) if count == 1 => Ok(SqlType::Real),
                (Some(_), 25..=53) if count == 1 => Ok(SqlType::Double),
                _ => Err(bad()),
            },
            "oid" => plain(SqlType::Oid),
            "numeric" | "decimal" => match count {
                0 if args.is_none() => Ok(SqlType::Numeric {
                    precision: 38,
                    scale: 0,
                }),
                1 => SqlType::numeric(small(0)?, 0),
                2 => SqlType::numeric(small(0)?, small(1)?),
                _ => Err(bad()),
            },
            "text" => plain(SqlType::Text),
            "varchar" | "character varying" => match count {
                0 if args.is_none() => Ok(SqlType::Text),
                1 => SqlType::varchar(arg(0)),
                _ => Err(bad()),
            },
            "char" | "character" | "bpchar" | "\"char\"" => match count {
                0 if args.is_none() => Ok(SqlType::Char(1)),
                1 => SqlType::char(arg(0)),
                _ => Err(bad()),
            },
            "json" => plain(SqlType::Json),
            "bytea" => plain(SqlType::Bytea),
            "date" => plain(SqlType::Date),
            "time" | "time without time zone" => plain(SqlType::Time),
            "timestamp" | "timestamp without time zone" => plain(SqlType::Timestamp),
            "timestamptz" | "timestamp with time zone" => plain(SqlType::TimestampTz),
            "interval" => plain(SqlType::Interval),
            "geography" | "tabgeography" | "tableau.tabgeography" => plain(SqlType::Geography),
            _ => Err(bad()),
        }
    }
}

/// Whether a column admits NULL. HyperBinary needs it: nullable columns
/// carry a one-byte indicator before every value, NOT NULL columns none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Nullability {
    Nullable,
    NotNull,
}

/// A column's type and nullability: all an encoder needs to lay out a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnType {
    pub sql_type: SqlType,
    pub nullability: Nullability,
}

impl ColumnType {
    /// A column that admits NULL (the SQL default).
    pub const fn nullable(sql_type: SqlType) -> ColumnType {
        ColumnType {
            sql_type,
            nullability: Nullability::Nullable,
        }
    }

    /// A `NOT NULL` column.
    pub const fn not_null(sql_type: SqlType) -> ColumnType {
        ColumnType {
            sql_type,
            nullability: Nullability::NotNull,
        }
    }

    /// Whether NULL is allowed.
    pub const fn is_nullable(&self) -> bool {
        matches!(self.nullability, Nullability::Nullable)
    }
}

impl From<SqlType> for ColumnType {
    fn from(sql_type: SqlType) -> ColumnType {
        ColumnType::nullable(sql_type)
    }
}

/// Renders a column definition's type part, e.g. `INTEGER NOT NULL`.
impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.sql_type, f)?;
        if !self.is_nullable() {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "sql_type_tests.rs"]
mod tests;
