use super::*;
use hyperdb_api_core::types::{SqlType, COPY_HEADER};

fn table() -> TableDefinition {
    TableDefinition::new("m")
        .with_not_null_column("id", SqlType::Int)
        .with_column("v", SqlType::Double)
}

fn encoder(buf: &mut BytesMut) -> RowEncoder {
    let mut e = RowEncoder::new(&table()).unwrap();
    e.start_stream(buf);
    e
}

#[test]
fn rows_are_framed_and_encoded() {
    let mut buf = BytesMut::new();
    let mut e = encoder(&mut buf);
    e.add_row(&mut buf, &[&1i32, &Some(0.5f64)]).unwrap();
    e.add_row(&mut buf, &[&2i32, &None::<f64>]).unwrap();
    e.close_frame(&mut buf).unwrap();
    let mut want = vec![b'd'];
    let mut body = b"HPRCPY".to_vec();
    body.extend_from_slice(&[0; 13]);
    body.extend_from_slice(&1i32.to_le_bytes());
    body.push(0);
    body.extend_from_slice(&0.5f64.to_le_bytes());
    body.extend_from_slice(&2i32.to_le_bytes());
    body.push(1);
    want.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    want.extend_from_slice(&body);
    assert_eq!(&buf[..], &want[..]);
    assert_eq!(e.rows(), 2);
}

#[test]
fn bad_rows_leave_nothing_behind() {
    let mut buf = BytesMut::new();
    let mut e = encoder(&mut buf);
    e.add_row(&mut buf, &[&1i32, &1.0f64]).unwrap();
    let len = buf.len();
    let cases: Vec<(Vec<&dyn ToHyperBinary>, RowErrorKind)> = vec![
        (vec![&1i32], RowErrorKind::ColumnCount),
        (vec![&None::<i32>, &1.0f64], RowErrorKind::NullInNotNull),
        (vec![&"x", &1.0f64], RowErrorKind::WrongType),
        (vec![&5_000_000_000i64, &1.0f64], RowErrorKind::OutOfRange),
    ];
    for (values, want) in cases {
        match e.add_row(&mut buf, &values) {
            Err(Error::InvalidRow { row, kind, .. }) => {
                assert_eq!(kind, want);
                assert_eq!(row, 1);
            }
            other => panic!("{want:?}: {other:?}"),
        }
        assert_eq!(buf.len(), len, "{want:?} left bytes");
    }
    let err = e.add_row(&mut buf, &[&None::<i32>, &1.0f64]).unwrap_err();
    assert!(err.to_string().contains("column `id`"), "{err}");
    assert_eq!(e.rows(), 1);
}

#[test]
fn column_by_column_rows() {
    let mut buf = BytesMut::new();
    let mut e = encoder(&mut buf);
    e.add(&mut buf, &7i32).unwrap();
    assert!(
        e.add_row(&mut buf, &[&1i32, &1.0f64]).is_err(),
        "partial row pending"
    );
    e.add(&mut buf, &None::<f64>).unwrap();
    assert!(e.add(&mut buf, &1i32).is_err(), "row is full");
    e.end_row(&mut buf).unwrap();
    let len = buf.len();
    e.add(&mut buf, &8i32).unwrap();
    assert!(e.end_row(&mut buf).is_err());
    assert_eq!(buf.len(), len, "short row discarded");
    e.add(&mut buf, &9i32).unwrap();
    assert!(e.add(&mut buf, &"no").is_err());
    assert_eq!(buf.len(), len, "bad value discards the partial row");
    assert_eq!(e.rows(), 1);
}

#[test]
fn frames_fill_to_the_threshold() {
    let mut buf = BytesMut::new();
    let mut e = encoder(&mut buf);
    e.set_flush_threshold(64);
    let mut frames = 0;
    for i in 0..100 {
        e.add_row(&mut buf, &[&i, &1.0f64]).unwrap();
        if e.frame_full(&buf) {
            e.close_frame(&mut buf).unwrap();
            frames += 1;
        }
    }
    e.close_frame(&mut buf).unwrap();
    assert!(frames > 10, "{frames}");
    // Every frame is well-formed.
    let mut at = 0;
    while at < buf.len() {
        assert_eq!(buf[at], b'd');
        let len = i32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
        at += 1 + len;
    }
    assert_eq!(at, buf.len());
}

/// The payloads of the CopyData frames in `buf`, which must hold
/// nothing else.
fn frames(buf: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        assert_eq!(buf[at], b'd');
        let len = i32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push(&buf[at + 5..at + 1 + len]);
        at += 1 + len;
    }
    assert_eq!(at, buf.len());
    out
}

fn texts() -> TableDefinition {
    TableDefinition::new("m")
        .with_not_null_column("id", SqlType::Int)
        .with_column("a", SqlType::Text)
        .with_column("b", SqlType::Bytea)
}

/// What every inserter does per row: add it, and write out a full
/// frame (here: close it).
fn add_row(e: &mut RowEncoder, buf: &mut BytesMut, row: &[&dyn ToHyperBinary]) -> Result<()> {
    e.add_row(buf, row)?;
    close_if_full(e, buf)
}

fn close_if_full(e: &mut RowEncoder, buf: &mut BytesMut) -> Result<()> {
    if e.frame_full(buf) {
        e.close_frame(buf)?;
    }
    Ok(())
}

/// An encoder whose frames may carry 100 bytes, full at 50.
fn small_frames(buf: &mut BytesMut) -> RowEncoder {
    let mut e = RowEncoder::new(&texts()).unwrap();
    e.set_max_payload(100);
    e.set_flush_threshold(50);
    e.start_stream(buf);
    e
}

/// A row larger than one frame may carry is refused whole, naming the
/// column with its largest value; what was framed before it stays,
/// and the rows after it go on.
#[test]
fn rows_over_the_frame_limit_are_refused() {
    let mut buf = BytesMut::new();
    let mut e = small_frames(&mut buf);
    add_row(&mut e, &mut buf, &[&1i32, &Some("x"), &None::<Vec<u8>>]).unwrap();
    let len = buf.len();
    let big = vec![7u8; 90];
    let err = add_row(&mut e, &mut buf, &[&2i32, &Some("y"), &Some(big)]).unwrap_err();
    match &err {
        Error::InvalidRow {
            row: 1,
            column: Some(c),
            kind: RowErrorKind::TooLarge,
            message,
        } if c == "b" => assert!(message.contains("90 of them"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.sqlstate(), "54000");
    assert_eq!(buf.len(), len, "nothing of the row is left");
    assert_eq!(e.rows(), 1);
    // Column by column, the same.
    e.add(&mut buf, &3i32).unwrap();
    e.add(&mut buf, &Some("z".repeat(200))).unwrap();
    e.add(&mut buf, &None::<Vec<u8>>).unwrap();
    e.end_row(&mut buf).unwrap();
    let err = close_if_full(&mut e, &mut buf).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidRow { row: 1, column: Some(c), kind: RowErrorKind::TooLarge, .. } if c == "a"),
        "{err:?}"
    );
    assert_eq!(buf.len(), len);
    add_row(
        &mut e,
        &mut buf,
        &[&4i32, &None::<&str>, &Some(vec![1u8; 3])],
    )
    .unwrap();
    e.finish(&mut buf).unwrap();
    assert_eq!(e.rows(), 2);
    let frames = frames(&buf);
    assert_eq!(frames.len(), 1);
    let mut want = COPY_HEADER.to_vec();
    want.extend_from_slice(&1i32.to_le_bytes());
    want.extend_from_slice(&[0, 1, 0, 0, 0, b'x', 1]);
    want.extend_from_slice(&4i32.to_le_bytes());
    want.extend_from_slice(&[1, 0, 3, 0, 0, 0, 1, 1, 1]);
    assert_eq!(frames[0], &want[..]);
}

/// A row that fits a frame alone, but not behind the rows already in
/// the open one, goes into a frame of its own: no frame exceeds the
/// limit and the stream's bytes are the same.
#[test]
fn frames_split_before_a_row_that_would_overflow_them() {
    let (mut split, mut whole) = (BytesMut::new(), BytesMut::new());
    let mut e = small_frames(&mut split);
    let mut reference = RowEncoder::new(&texts()).unwrap();
    reference.start_stream(&mut whole);
    for i in 0..40i32 {
        let a = Some("a".repeat((i as usize * 7) % 80));
        let row: [&dyn ToHyperBinary; 3] = [&i, &a, &None::<Vec<u8>>];
        add_row(&mut e, &mut split, &row).unwrap();
        reference.add_row(&mut whole, &row).unwrap();
    }
    e.finish(&mut split).unwrap();
    reference.finish(&mut whole).unwrap();
    assert_eq!(e.rows(), 40);
    let frames = frames(&split);
    assert!(frames.iter().all(|f| f.len() <= 100));
    assert!(
        frames[..frames.len() - 1].iter().any(|f| f.len() < 50),
        "some frame was cut short of the threshold"
    );
    let whole = self::frames(&whole);
    assert_eq!(whole.len(), 1);
    assert_eq!(frames.concat(), whole[0]);
}

#[test]
fn flush_thresholds_are_capped() {
    let mut e = RowEncoder::new(&table()).unwrap();
    e.set_flush_threshold(usize::MAX);
    assert_eq!(e.sink.flush_threshold, MAX_FLUSH_THRESHOLD);
    const { assert!(MAX_FLUSH_THRESHOLD < frontend::MAX_COPY_DATA / 2) };
}

#[test]
fn copy_statement_quotes_everything() {
    let t = TableDefinition::new(crate::TableName::new("my t").with_schema("s\"x"))
        .with_column("a b", SqlType::Int);
    assert_eq!(
        copy_sql(&t).unwrap(),
        "COPY \"s\"\"x\".\"my t\" (\"a b\") FROM STDIN WITH (FORMAT HYPERBINARY)"
    );
}
