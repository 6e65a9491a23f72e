use super::*;

/// Rows move to other threads and tasks (collected, sent, shared).
#[test]
fn rows_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Row>();
    check::<Block>();
}

/// A block received as `DataRow`s must match the result's columns; a
/// mismatch is a protocol error, not a wrong value later.
#[test]
fn wire_block_with_the_wrong_field_count_is_rejected() {
    use bytes::{BufMut, BytesMut};
    use hyperdb_api_core::protocol::backend::{parse, Message};
    use hyperdb_api_core::protocol::Limits;
    let mut buf = BytesMut::new();
    buf.put_u8(b'D');
    buf.put_i32(4 + 2 + 4);
    buf.put_i16(1);
    buf.put_i32(-1);
    let Ok(Some(Message::DataRows(rows))) = parse(&mut buf, &Limits::default()) else {
        panic!("not a row block")
    };
    let schema = Schema::from_sql_types([
        ("a".to_owned(), Some(SqlType::Int)),
        ("b".to_owned(), Some(SqlType::Int)),
    ]);
    let err = Block::wire(&schema, rows).expect_err("2 columns, 1 field");
    assert!(err.to_string().contains("1 fields"), "{err}");
}

/// `n` one-INT `DataRow`s as a block.
#[cfg(feature = "async")]
fn int_rows(schema: &Arc<Schema>, n: i32) -> Block {
    use bytes::{BufMut, BytesMut};
    use hyperdb_api_core::protocol::backend::{parse, Message};
    use hyperdb_api_core::protocol::Limits;
    let mut buf = BytesMut::new();
    for i in 0..n {
        buf.put_u8(b'D');
        buf.put_i32(4 + 2 + 4 + 4);
        buf.put_i16(1);
        buf.put_i32(4);
        buf.put_i32_le(i);
    }
    let Ok(Some(Message::DataRows(rows))) = parse(&mut buf, &Limits::default()) else {
        panic!("not a row block")
    };
    Block::wire(schema, rows).expect("a block")
}

/// An async stream's cursor stops every `ROWS_PER_UNIT` rows of a
/// block (where the stream spends task budget) and then goes on over
/// the same block; a sync stream's runs through. Every row is read
/// once either way.
#[cfg(feature = "async")]
#[test]
fn a_cooperative_cursor_stops_every_unit_of_rows() {
    let schema = Schema::from_sql_types([("i".to_owned(), Some(SqlType::Int))]);
    let unit = crate::coop::ROWS_PER_UNIT;
    let rows = 2 * unit + 22;
    for (mut cursor, stops) in [
        (RowCursor::new(schema.clone()).cooperative(), 2),
        (RowCursor::new(schema.clone()), 0),
    ] {
        cursor
            .take(Fetched::Block(int_rows(&schema, rows as i32)))
            .expect("loaded");
        let (mut seen, mut paused) = (Vec::new(), 0);
        loop {
            if cursor.advance() {
                cursor.index_current().expect("well-formed");
                seen.push(cursor.row().try_get::<i32>(0).expect("an INT"));
            } else if cursor.resume() {
                assert_eq!(seen.len() % unit, 0, "stopped mid-unit");
                paused += 1;
            } else {
                break;
            }
        }
        assert_eq!(paused, stops);
        assert_eq!(seen, (0..rows as i32).collect::<Vec<_>>());
    }
}
