//! The HyperBinary and PostgreSQL-binary value readers: `DataRow`s of a
//! result whose columns (types, modifiers, unknown OIDs) come from the
//! input, read through the row streams' code (`hyperdb_api::fuzzing::
//! wire_rows`: every typed reader, `try_get` as every Rust type), and
//! each value decoded by core's readers of both formats. Values a type
//! reads exactly must encode back to the same bytes.

use bytes::{BufMut, BytesMut};
use hyperdb_api::fuzzing::wire_rows;
use hyperdb_api_core::error::ErrorKind;
use hyperdb_api_core::protocol::backend::{parse, FieldDescription, Message};
use hyperdb_api_core::protocol::Limits;
use hyperdb_api_core::types::{
    Date, FromHyperBinary, FromPgBinary, Interval, Numeric, SqlType, Time, Timestamp, TimestampTz,
    ToHyperBinary, ToPgBinary,
};

use crate::alloc::{assert_bounded, peak_during};
use crate::reads::{agree, read_row, Mixed, Plain};
use crate::Input;

pub fn check(data: &[u8]) {
    let (_, peak) = peak_during(|| run(data));
    assert_bounded("row readers", peak, data.len());
}

fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let columns = usize::from(input.byte() % 4) + 1;
    let fields: Vec<FieldDescription> = (0..columns).map(|i| field(i, &mut input)).collect();
    // The rest: DataRow bodies, each preceded by its length (one byte).
    let mut wire = BytesMut::new();
    while !input.is_empty() {
        let body = input.short();
        wire.put_u8(b'D');
        wire.put_i32(body.len() as i32 + 4);
        wire.put_slice(body);
    }
    let mut blocks = Vec::new();
    while let Ok(Some(message)) = parse(&mut wire, &Limits::default()) {
        if let Message::DataRows(block) = message {
            blocks.push(block);
        }
    }
    let types: Vec<Option<SqlType>> = fields
        .iter()
        .map(|f| SqlType::from_oid_typmod(f.type_oid, f.type_modifier).ok())
        .collect();
    let mut rendered = Vec::new();
    let plain = wire_rows::<Plain>(fields.clone(), blocks.clone(), |row, reads| {
        agree(&reads);
        rendered.push(read_row(row));
        for (i, ty) in types.iter().enumerate() {
            if let (Some(ty), Ok(Some(raw))) = (ty, row.raw(i)) {
                hyper_round_trips(ty, raw);
                pg_round_trips(ty, raw);
            }
        }
        true
    });
    let mut again = Vec::new();
    let mixed = wire_rows::<Mixed>(fields, blocks, |row, reads| {
        agree(&reads);
        again.push(read_row(row));
        true
    });
    // The tuple read does not change which rows are there or what they hold.
    assert_eq!(rendered, again);
    match (plain, mixed) {
        (Ok(()), Ok(())) => {}
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert_eq!(a.kind(), Some(ErrorKind::Protocol), "{a}");
        }
        (a, b) => panic!("read as Plain: {a:?}, as Mixed: {b:?}"),
    }
}

/// One column: a type this client knows (with its modifier), or any OID
/// and modifier at all.
fn field(i: usize, input: &mut Input<'_>) -> FieldDescription {
    let (type_oid, type_modifier) = match sql_type(input) {
        Some(ty) => (ty.oid(), ty.typmod()),
        None => (input.u32(), input.u32() as i32),
    };
    FieldDescription {
        name: format!("c{i}"),
        table_oid: 0,
        column_id: 0,
        type_oid,
        type_size: -1,
        type_modifier,
        format: 2,
    }
}

/// A column type this client knows, or `None` (three bytes of input).
pub(crate) fn sql_type(input: &mut Input<'_>) -> Option<SqlType> {
    let (kind, a, b) = (input.byte(), input.byte(), input.byte());
    match kind % 20 {
        0 => Some(SqlType::Bool),
        1 => Some(SqlType::SmallInt),
        2 => Some(SqlType::Int),
        3 => Some(SqlType::BigInt),
        4 => Some(SqlType::Real),
        5 => Some(SqlType::Double),
        6 => Some(SqlType::Oid),
        7 => SqlType::numeric(a % 40, b % 40).ok(),
        8 => Some(SqlType::Text),
        9 => SqlType::varchar(u32::from(a)).ok(),
        10 => Some(SqlType::Char(u32::from(a))),
        11 => Some(SqlType::Json),
        12 => Some(SqlType::Bytea),
        13 => Some(SqlType::Date),
        14 => Some(SqlType::Time),
        15 => Some(SqlType::Timestamp),
        16 => Some(SqlType::TimestampTz),
        17 => Some(SqlType::Interval),
        18 => Some(SqlType::Geography),
        _ => None,
    }
}

/// A HyperBinary value read as its column's own Rust type encodes back to
/// the same bytes (text and bytes with the COPY format's length prefix).
fn hyper_round_trips(ty: &SqlType, raw: &[u8]) {
    match ty {
        SqlType::Bool => hyper_exact::<bool>(ty, raw),
        SqlType::SmallInt => hyper_exact::<i16>(ty, raw),
        SqlType::Int => {
            hyper_exact::<i32>(ty, raw);
            hyper_exact::<i64>(ty, raw);
        }
        SqlType::BigInt => hyper_exact::<i64>(ty, raw),
        SqlType::Oid => hyper_exact::<u32>(ty, raw),
        SqlType::Real => {
            hyper_exact::<f32>(ty, raw);
            if f32::decode_hyper(ty, raw).is_ok_and(|v| !v.is_nan()) {
                hyper_exact::<f64>(ty, raw);
            }
        }
        SqlType::Double => hyper_exact::<f64>(ty, raw),
        SqlType::Numeric { .. } => hyper_exact::<Numeric>(ty, raw),
        SqlType::Date => hyper_exact::<Date>(ty, raw),
        SqlType::Time => hyper_exact::<Time>(ty, raw),
        SqlType::Timestamp => hyper_exact::<Timestamp>(ty, raw),
        SqlType::TimestampTz => hyper_exact::<TimestampTz>(ty, raw),
        SqlType::Interval => hyper_exact::<Interval>(ty, raw),
        SqlType::Text | SqlType::Json => hyper_exact::<&str>(ty, raw),
        SqlType::Bytea | SqlType::Geography => hyper_exact::<&[u8]>(ty, raw),
        // VARCHAR(n)/CHAR(n) refuse longer strings on the way in only.
        _ => {}
    }
}

fn hyper_exact<'a, T: FromHyperBinary<'a> + ToHyperBinary + std::fmt::Debug>(
    ty: &SqlType,
    raw: &'a [u8],
) {
    let value = match T::decode_hyper(ty, raw) {
        Ok(v) => v,
        Err(e) => {
            assert!(matches!(e.kind(), ErrorKind::Conversion), "{e:?}");
            return;
        }
    };
    let mut buf = BytesMut::new();
    match value.encode_hyper(ty, &mut buf) {
        Ok(()) => {
            let want = match ty.fixed_width() {
                Some(_) => raw.to_vec(),
                None => [&(raw.len() as u32).to_le_bytes()[..], raw].concat(),
            };
            assert_eq!(buf[..], want[..], "{value:?} as {ty}");
        }
        // A NUMERIC with more digits than its column holds reads, and is
        // refused on the way back in.
        Err(e) if matches!(ty, SqlType::Numeric { .. }) => {
            assert_eq!(e.kind(), ErrorKind::Conversion, "{e}");
        }
        // A DATE or TIMESTAMP outside hyperd's range and TIME 24:00:00
        // read, and are refused on the way back in.
        Err(e)
            if matches!(
                ty,
                SqlType::Date | SqlType::Time | SqlType::Timestamp | SqlType::TimestampTz
            ) =>
        {
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{value:?}: {e}");
        }
        Err(e) => panic!("{value:?} read from a {ty} column cannot be written back: {e}"),
    }
}

/// The same field read as PostgreSQL's binary format (big-endian): any
/// bytes read to a value or a conversion error, and values of the
/// column's own type encode back to the same bytes.
fn pg_round_trips(ty: &SqlType, raw: &[u8]) {
    for e in [
        <bool as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <i16 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <i32 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <i64 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <u32 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <f32 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <f64 as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <&str as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Vec<u8> as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Date as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Time as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Timestamp as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <TimestampTz as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Interval as FromPgBinary>::decode_pg_binary(ty, raw).err(),
        <Numeric as FromPgBinary>::decode_pg_binary(ty, raw).err(),
    ]
    .into_iter()
    .flatten()
    {
        assert!(
            matches!(e.kind(), ErrorKind::Conversion | ErrorKind::TypeMismatch),
            "{e:?}"
        );
    }
    match ty {
        SqlType::Bool => pg_exact::<bool>(ty, raw),
        SqlType::SmallInt => pg_exact::<i16>(ty, raw),
        SqlType::Int => pg_exact::<i32>(ty, raw),
        SqlType::BigInt => pg_exact::<i64>(ty, raw),
        SqlType::Oid => pg_exact::<u32>(ty, raw),
        SqlType::Real => pg_exact::<f32>(ty, raw),
        SqlType::Double => pg_exact::<f64>(ty, raw),
        SqlType::Date => pg_exact::<Date>(ty, raw),
        SqlType::Time => pg_exact::<Time>(ty, raw),
        SqlType::Timestamp => pg_exact::<Timestamp>(ty, raw),
        SqlType::TimestampTz => pg_exact::<TimestampTz>(ty, raw),
        SqlType::Interval => pg_exact::<Interval>(ty, raw),
        SqlType::Text => pg_exact::<&str>(ty, raw),
        SqlType::Bytea => pg_exact::<&[u8]>(ty, raw),
        SqlType::Numeric { .. } => {
            // Binary NUMERIC has many spellings of one value; a parameter
            // binds as its decimal text, which reads back as the same value.
            if let Ok(n) = <Numeric as FromPgBinary>::decode_pg_binary(ty, raw) {
                let mut buf = BytesMut::new();
                n.encode_pg_binary(&mut buf)
                    .expect("a NUMERIC that was read");
                let again = std::str::from_utf8(&buf)
                    .ok()
                    .and_then(|text| text.parse::<Numeric>().ok());
                assert_eq!(again, Some(n), "{raw:?} -> {buf:?}");
            }
        }
        _ => {}
    }
}

fn pg_exact<'a, T: FromPgBinary<'a> + ToPgBinary + std::fmt::Debug>(ty: &SqlType, raw: &'a [u8]) {
    let Ok(value) = T::decode_pg_binary(ty, raw) else {
        return;
    };
    let mut buf = BytesMut::new();
    match value.encode_pg_binary(&mut buf) {
        Ok(_) => assert_eq!(buf[..], raw[..], "{value:?} as binary {ty}"),
        // A TIMESTAMP outside hyperd's range reads, and is refused as a
        // parameter (hyperd would refuse it naming nothing).
        Err(e) if matches!(ty, SqlType::Timestamp | SqlType::TimestampTz) => {
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{value:?}: {e}");
        }
        Err(e) => panic!("{value:?} read from binary {ty} cannot be written back: {e}"),
    }
}
