use arrow_array::{Int32Array, StringArray};
use arrow_ipc::reader::StreamDecoder;
use arrow_schema::Field;

use super::*;

fn table() -> TableDefinition {
    TableDefinition::new("t")
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Varchar(3))
}

fn batch(ids: Vec<Option<i32>>, names: Vec<Option<&str>>, reversed: bool) -> RecordBatch {
    let id: ArrayRef = Arc::new(Int32Array::from(ids));
    let name: ArrayRef = Arc::new(StringArray::from(names));
    let (fields, columns) = if reversed {
        (
            vec![
                Field::new("name", DataType::Utf8, true),
                Field::new("id", DataType::Int32, true),
            ],
            vec![name, id],
        )
    } else {
        (
            vec![
                Field::new("id", DataType::Int32, true),
                Field::new("name", DataType::Utf8, true),
            ],
            vec![id, name],
        )
    };
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

use arrow_array::ArrayRef;

/// Unwraps the CopyData frames in `buf` into the IPC stream they carry.
pub(crate) fn unframe(buf: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        assert_eq!(buf[at], b'd');
        let len = i32::from_be_bytes(buf[at + 1..at + 5].try_into().unwrap()) as usize;
        out.extend_from_slice(&buf[at + 5..at + 1 + len]);
        at += 1 + len;
    }
    out
}

fn decode_all(stream: Vec<u8>) -> (Vec<RecordBatch>, bool) {
    let mut decoder = StreamDecoder::new();
    let mut buf = Buffer::from(stream);
    let mut out = Vec::new();
    while !buf.is_empty() {
        if let Some(b) = decoder.decode(&mut buf).unwrap() {
            out.push(b);
        }
    }
    (out, decoder.finish().is_ok())
}

fn drain(enc: &mut ArrowEncoder, buf: &mut BytesMut, wire: &mut Vec<u8>) {
    while enc.write_pending(buf).unwrap() {
        wire.extend_from_slice(buf);
        buf.clear();
    }
}

/// `e` refuses row `row` for a string too long for its column (22001).
fn assert_too_long(e: &Error, row: u64) {
    assert!(
        matches!(e, Error::InvalidRow { row: r, kind: RowErrorKind::TooLong, .. } if *r == row),
        "{e}"
    );
    assert_eq!(e.sqlstate(), "22001");
}

#[test]
fn one_stream_in_bounded_frames() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    enc.set_flush_threshold(100);
    let (mut buf, mut wire) = (BytesMut::new(), Vec::new());
    for i in 0..10 {
        let b = batch(vec![Some(i); 20], vec![Some("ab"); 20], i % 2 == 1);
        enc.push_batch(&b).unwrap();
        drain(&mut enc, &mut buf, &mut wire);
        assert!(buf.len() < 100 + 5);
    }
    enc.finish().unwrap();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    assert_eq!(enc.rows(), 200);
    let stream = unframe(&wire);
    assert!(stream.ends_with(&EOS));
    let (batches, complete) = decode_all(stream);
    assert!(complete);
    assert_eq!(batches.len(), 10);
    let schema = batches[0].schema();
    assert!(!schema.field(0).is_nullable(), "NOT NULL declared");
    assert_eq!(schema.field(1).metadata()["hyper:max_string_length"], "3");
    // Field order of the first batch; later batches in another order are
    // sent in that same order.
    assert_eq!(schema.field(0).name(), "id");
    assert!(batches.iter().all(|b| b.schema() == schema));
}

#[test]
fn rejected_batches_leave_nothing_queued() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let mut buf = BytesMut::new();
    let e = enc
        .push_batch(&batch(vec![Some(1), None], vec![None, None], false))
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRow { row: 1, kind: RowErrorKind::NullInNotNull, column: Some(c), .. } if c == "id"),
        "{e}"
    );
    let e = enc
        .push_batch(&batch(
            vec![Some(1), Some(2)],
            vec![Some("äöü"), Some("abcd")],
            false,
        ))
        .unwrap_err();
    assert_too_long(&e, 1);
    assert!(!enc.write_pending(&mut buf).unwrap());
    assert!(buf.is_empty());
    assert_eq!(enc.rows(), 0);
    // Raw bytes cannot follow batches.
    enc.push_batch(&batch(vec![Some(1)], vec![None], false))
        .unwrap();
    assert!(enc.push_ipc(&[0xff; 8], &mut buf).is_err());
}

#[test]
fn char_values_longer_only_by_spaces_are_cut_to_n() {
    let table = TableDefinition::new("t")
        .with_column("c", SqlType::Char(3))
        .with_column("v", SqlType::Varchar(3));
    let strings = |c: Vec<Option<&str>>, v: Vec<Option<&str>>| {
        let schema = Schema::new(vec![
            Field::new("c", DataType::Utf8, true),
            Field::new("v", DataType::Utf8, true),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(c)),
            Arc::new(StringArray::from(v)),
        ];
        RecordBatch::try_new(Arc::new(schema), columns).unwrap()
    };
    let mut enc = ArrowEncoder::new(&table).unwrap();
    let (mut buf, mut wire) = (BytesMut::new(), Vec::new());
    enc.push_batch(&strings(
        vec![Some("abc   "), None, Some("日本語 "), Some("a")],
        vec![Some("abc"), Some("ab "), None, Some("")],
    ))
    .unwrap();
    // VARCHAR keeps its spaces: past n they are refused, and so is a CHAR
    // value with anything but spaces past n. Neither batch is queued;
    // rows count from the insert's start.
    for (c, v) in [("a", "ab    "), ("abc  x", "a")] {
        let e = enc
            .push_batch(&strings(vec![Some(c)], vec![Some(v)]))
            .unwrap_err();
        assert_too_long(&e, 4);
    }
    enc.finish().unwrap();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    let (batches, ended) = decode_all(unframe(&wire));
    assert!(ended);
    assert_eq!(batches.len(), 1);
    let sent = |i: usize| -> Vec<Option<String>> {
        batches[0]
            .column(i)
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect()
    };
    let owned = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|v| v.map(str::to_owned)).collect()
    };
    assert_eq!(
        sent(0),
        owned(&[Some("abc"), None, Some("日本語"), Some("a")])
    );
    assert_eq!(sent(1), owned(&[Some("abc"), Some("ab "), None, Some("")]));
}

#[test]
fn no_batches_is_an_empty_stream() {
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let (mut buf, mut wire) = (BytesMut::new(), Vec::new());
    enc.finish().unwrap();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    let stream = unframe(&wire);
    let mut decoder = StreamDecoder::new();
    let mut b = Buffer::from(stream);
    assert!(decoder.decode(&mut b).unwrap().is_none());
    assert_eq!(decoder.schema().unwrap().fields().len(), 2);
    assert!(decoder.finish().is_ok(), "the schema, then end-of-stream");
}

#[test]
fn copy_statement_quotes_names() {
    let t = TableDefinition::new(crate::TableName::new("my t").with_schema("s\"x"))
        .with_column("a b", SqlType::Int);
    assert_eq!(
        copy_sql(&t).unwrap(),
        "COPY \"s\"\"x\".\"my t\" FROM STDIN WITH (FORMAT ARROWSTREAM)"
    );
}

/// `batches` as one IPC stream, as a caller would forward it.
fn ipc_stream(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

#[test]
fn raw_ipc_into_bounded_text_is_checked_like_batches() {
    // `table()` has a VARCHAR(3) column: raw bytes are decoded and checked.
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let mut buf = BytesMut::new();
    let bad = ipc_stream(&[batch(
        vec![Some(1), Some(2)],
        vec![Some("ok"), Some("abcd")],
        false,
    )]);
    let e = enc.push_ipc(&bad, &mut buf).unwrap_err();
    assert_too_long(&e, 1);
    assert!(buf.is_empty());
    assert!(!enc.write_pending(&mut buf).unwrap());
    // Nothing was accepted: the caller may start over, in pieces of any size.
    let good = ipc_stream(&[
        batch(vec![Some(1)], vec![Some("äöü")], false),
        batch(vec![Some(2), Some(3)], vec![None, Some("abc")], false),
    ]);
    for piece in good.chunks(7) {
        enc.push_ipc(piece, &mut buf).unwrap();
    }
    assert!(
        enc.push_batch(&batch(vec![Some(4)], vec![None], false))
            .is_err(),
        "no mixing"
    );
    enc.finish().unwrap();
    assert_eq!(enc.rows(), 3);
    let mut wire = Vec::new();
    drain(&mut enc, &mut buf, &mut wire);
    wire.extend_from_slice(&buf);
    let (batches, ended) = decode_all(unframe(&wire));
    assert!(ended);
    let ids: Vec<i32> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<arrow_array::types::Int32Type>()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids, [1, 2, 3]);

    // A bad batch after a good one breaks the stream for good.
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    let mixed = ipc_stream(&[
        batch(vec![Some(1)], vec![Some("a")], false),
        batch(vec![Some(2)], vec![Some("abcd")], false),
    ]);
    assert!(enc.push_ipc(&mixed, &mut BytesMut::new()).is_err());
    assert!(enc.push_ipc(&good, &mut BytesMut::new()).is_err());
    assert!(enc.finish().is_err());

    // A cut stream is an error at the end.
    let mut enc = ArrowEncoder::new(&table()).unwrap();
    enc.push_ipc(&good[..good.len() - 20], &mut BytesMut::new())
        .unwrap();
    assert!(enc.finish().is_err());
}

#[test]
fn raw_ipc_into_other_tables_passes_through() {
    let table = TableDefinition::new("t").with_not_null_column("id", SqlType::Int);
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![1, 2]))]).unwrap();
    let stream = ipc_stream(&[b]);
    let mut enc = ArrowEncoder::new(&table).unwrap();
    let mut buf = BytesMut::new();
    enc.push_ipc(&stream, &mut buf).unwrap();
    // Forwarded as it came (framed, without its end-of-stream marker).
    assert_eq!(unframe(&buf), stream[..stream.len() - 8]);
}

/// Dates and times hyperd's Arrow reader refuses are refused with their
/// row and column (22008); NULL slots are not looked at; the edges hyperd
/// takes pass.
#[test]
fn dates_and_times_hyperd_refuses_are_refused_with_their_row() {
    use arrow_array::{
        Date64Array, Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampSecondArray,
    };
    const LEAST_MICROS: i64 = -210_863_520_000_000_000;
    const DAY_MICROS: i64 = 86_400_000_000;
    let check = |sql_type: SqlType, values: ArrayRef| {
        let table = TableDefinition::new("t").with_column("v", sql_type);
        let schema = Schema::new(vec![Field::new("v", values.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![values]).unwrap();
        ArrowEncoder::new(&table).unwrap().push_batch(&batch)
    };
    let refused_at = |r: Result<()>| match r {
        Err(Error::InvalidRow {
            row,
            kind: RowErrorKind::DateTimeOutOfRange,
            column: Some(c),
            message,
        }) if c == "v" => (row, message),
        other => panic!("{other:?}"),
    };
    let refusals: Vec<(SqlType, ArrayRef, u64)> = vec![
        (
            SqlType::Date,
            Arc::new(Date64Array::from(vec![Some(0), None, Some(86_400_001)])),
            2,
        ),
        (
            SqlType::Timestamp,
            Arc::new(TimestampMicrosecondArray::from(vec![
                LEAST_MICROS,
                LEAST_MICROS - 1,
            ])),
            1,
        ),
        (
            SqlType::Timestamp,
            Arc::new(TimestampMillisecondArray::from(vec![i64::MIN])),
            0,
        ),
        (
            SqlType::TimestampTz,
            Arc::new(TimestampSecondArray::from(vec![0, -210_863_520_001]).with_timezone("UTC")),
            1,
        ),
        (
            SqlType::Time,
            Arc::new(Time64MicrosecondArray::from(vec![
                DAY_MICROS - 1,
                DAY_MICROS,
            ])),
            1,
        ),
        (
            SqlType::Time,
            Arc::new(Time64NanosecondArray::from(vec![-1])),
            0,
        ),
        (
            SqlType::Time,
            Arc::new(Time32SecondArray::from(vec![0, 86_399, 86_400])),
            2,
        ),
    ];
    for (sql_type, values, row) in refusals {
        let what = format!("{:?}", values.data_type());
        let (at, message) = refused_at(check(sql_type, values));
        assert_eq!(at, row, "{what}: {message}");
        assert!(message.contains("the batch was not inserted"), "{message}");
    }
    // What hyperd takes, and values under NULL slots whatever they are.
    let mut nulls_over_bad = Date64Array::from(vec![Some(0), Some(5)])
        .into_data()
        .into_builder();
    nulls_over_bad = nulls_over_bad.null_bit_buffer(Some(arrow_buffer::Buffer::from([0b01u8])));
    let nulls_over_bad: ArrayRef = Arc::new(Date64Array::from(nulls_over_bad.build().unwrap()));
    for (sql_type, values) in [
        (SqlType::Date, nulls_over_bad),
        (
            SqlType::Timestamp,
            Arc::new(TimestampMicrosecondArray::from(vec![
                LEAST_MICROS,
                i64::MAX,
            ])) as ArrayRef,
        ),
        (
            SqlType::Time,
            Arc::new(Time64MicrosecondArray::from(vec![0, DAY_MICROS - 1])),
        ),
    ] {
        check(sql_type, values).unwrap();
    }
}
