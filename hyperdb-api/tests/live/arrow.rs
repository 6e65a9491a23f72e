//! Arrow in and out against the real server: every type round-trips as a
//! RecordBatch, bad input is refused with the table unchanged and the
//! connection usable, and ten million rows go in and out, sync and async.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    cast::AsArray, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array,
    Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    IntervalMonthDayNanoArray, RecordBatch, StringArray, Time32SecondArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, UInt16Array, UInt32Array,
};
use arrow_buffer::IntervalMonthDayNano;
use arrow_schema::{DataType, Field, Schema};
use hyperdb_api::arrow::{arrow_schema, table_definition};
use hyperdb_api::types::SqlType;
use hyperdb_api::{ArrowInserter, AsyncArrowInserter, Connection, TableDefinition};

use crate::common::{connect, connect_async, db_with_table, temp_dir};

#[path = "arrow_bulk.rs"]
mod bulk;
#[path = "arrow_errors.rs"]
mod errors;

fn all_types() -> TableDefinition {
    crate::insert::all_types_with(true)
}

const DAY_MS: i64 = 86_400_000;

/// Four rows: low extremes, high extremes, mostly NULL, all NULL. `geo` is
/// one GEOGRAPHY value in Hyper's own encoding.
fn all_types_batch(geo: &[u8]) -> RecordBatch {
    let iv = |months, days, micros: i64| IntervalMonthDayNano::new(months, days, micros * 1000);
    let dec = |v: Vec<Option<i128>>, p, s| {
        Arc::new(
            Decimal128Array::from(v)
                .with_precision_and_scale(p, s)
                .unwrap(),
        ) as ArrayRef
    };
    let n38 = 10i128.pow(38) - 1;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
        Arc::new(BooleanArray::from(vec![
            Some(false),
            Some(true),
            None,
            None,
        ])),
        Arc::new(Int16Array::from(vec![
            Some(i16::MIN),
            Some(i16::MAX),
            None,
            None,
        ])),
        Arc::new(Int32Array::from(vec![
            Some(i32::MIN),
            Some(i32::MAX),
            None,
            None,
        ])),
        Arc::new(Int64Array::from(vec![
            Some(i64::MIN),
            Some(i64::MAX),
            None,
            None,
        ])),
        Arc::new(Float32Array::from(vec![
            Some(f32::NEG_INFINITY),
            Some(f32::MAX),
            Some(-0.5),
            None,
        ])),
        Arc::new(Float64Array::from(vec![
            Some(f64::MIN_POSITIVE),
            Some(f64::INFINITY),
            Some(-0.25),
            None,
        ])),
        Arc::new(UInt32Array::from(vec![Some(0), Some(u32::MAX), None, None])),
        dec(
            vec![
                Some(-999_999_999_999_999_999),
                Some(-500),
                Some(999_999_999_999_999_999),
                None,
            ],
            18,
            3,
        ),
        dec(vec![Some(-n38), Some(-1), Some(n38), None], 38, 10),
        Arc::new(StringArray::from(vec![
            Some(""),
            Some("héllo ✓ 🎉 \"q\" 'x' \\"),
            None,
            None,
        ])),
        Arc::new(StringArray::from(vec![
            Some("日本語"),
            Some("0123456789"),
            None,
            None,
        ])),
        Arc::new(StringArray::from(vec![
            Some("abcde"),
            Some("ü✓€ab"),
            None,
            None,
        ])),
        Arc::new(StringArray::from(vec![Some("x"), Some("é"), None, None])),
        Arc::new(StringArray::from(vec![
            Some(r#"{"a":[1,2]}"#),
            Some("[]"),
            None,
            None,
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b""[..]),
            Some(&[0u8, 255, 1, b'\\'][..]),
            None,
            None,
        ])),
        Arc::new(BinaryArray::from(vec![Some(geo), Some(geo), None, None])),
        // 1066-10-14 and 9999-12-31.
        Arc::new(Date64Array::from(vec![
            Some(-329_893 * DAY_MS),
            Some(2_932_896 * DAY_MS),
            None,
            None,
        ])),
        Arc::new(Time64MicrosecondArray::from(vec![
            Some(0),
            Some(86_399_999_999),
            None,
            None,
        ])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(-3_781_450_432_876_544),
            Some(7_258_118_400_000_001),
            None,
            None,
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![
                Some(-2_208_988_800_000_001),
                Some(4_134_024_000_000_000),
                None,
                None,
            ])
            .with_timezone("+00:00"),
        ),
        Arc::new(IntervalMonthDayNanoArray::from(vec![
            Some(iv(-14, 3, -123_456_789)),
            Some(iv(1200, -30, 86_399_999_999)),
            None,
            None,
        ])),
    ];
    RecordBatch::try_new(Arc::new(arrow_schema(&all_types()).unwrap()), columns).unwrap()
}

/// Hyper's encoding of the GEOGRAPHY value `wkt`, read back from the server.
pub(crate) fn geography(c: &mut Connection, wkt: &str) -> Vec<u8> {
    let batches: Vec<RecordBatch> = c
        .query_arrow(&format!(
            "SELECT CAST('{wkt}' AS TABLEAU.TABGEOGRAPHY) AS g"
        ))
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    batches[0].column(0).as_binary::<i32>().value(0).to_vec()
}

fn concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

fn check_round_trip(got: &RecordBatch, want: &RecordBatch) {
    assert_eq!(got.schema(), want.schema());
    for (i, field) in want.schema().fields().iter().enumerate() {
        assert_eq!(
            got.column(i).to_data(),
            want.column(i).to_data(),
            "column {}",
            field.name()
        );
    }
}

#[test]
fn every_type_round_trips_sync() {
    let dir = temp_dir();
    let table = all_types();
    let mut c = db_with_table(&dir, "types.hyper", &table);
    let want = all_types_batch(&geography(&mut c, "POINT(1 2)"));
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    ins.insert_batch(&want.slice(0, 0)).unwrap();
    ins.insert_batch(&want.slice(0, 3)).unwrap();
    ins.insert_batch(&want.slice(3, 1)).unwrap();
    assert_eq!(ins.finish().unwrap(), 4);
    let mut result = c
        .query_arrow("SELECT * FROM all_types ORDER BY id;")
        .unwrap();
    assert_eq!(
        *result.schema(),
        *want.schema(),
        "schema before the first batch"
    );
    let got: Vec<RecordBatch> = result.by_ref().map(|b| b.unwrap()).collect();
    assert_eq!(result.rows(), Some(4));
    check_round_trip(&concat(&got), &want);
    // Values agree with hyperd's own rendering.
    let text = |c: &mut Connection, sql: &str| c.query_scalar::<String>(sql).unwrap();
    assert_eq!(
        text(&mut c, "SELECT date::text FROM all_types WHERE id = 1"),
        "1066-10-14"
    );
    assert_eq!(
        text(&mut c, "SELECT ts::text FROM all_types WHERE id = 1"),
        "1850-03-04 05:06:07.123456"
    );
    assert_eq!(
        text(&mut c, "SELECT n38::text FROM all_types WHERE id = 3"),
        "9999999999999999999999999999.9999999999"
    );
    assert_eq!(
        text(&mut c, "SELECT g::text FROM all_types WHERE id = 1"),
        "POINT(1.0000000 2.0000000)"
    );
    // The schema maps back to the table.
    let back = table_definition("all_types", &want.schema()).unwrap();
    assert_eq!(back, table);
}

#[tokio::test]
async fn every_type_round_trips_async() {
    let dir = temp_dir();
    let want = {
        let mut c = connect(&dir, "types.hyper");
        let table = all_types();
        c.execute_command(&table.create_table_sql(false).unwrap())
            .unwrap();
        all_types_batch(&geography(&mut c, "POINT(1 2)"))
    };
    let mut c = connect_async(&dir, "types.hyper").await;
    let mut ins = AsyncArrowInserter::new(&mut c, &all_types()).await.unwrap();
    ins.insert_batch(&want).await.unwrap();
    ins.insert_batch(&want.slice(0, 0)).await.unwrap();
    assert_eq!(ins.finish().await.unwrap(), 4);
    let result = c
        .query_arrow("SELECT * FROM all_types ORDER BY id")
        .await
        .unwrap();
    assert_eq!(*result.schema(), *want.schema());
    use futures_util::TryStreamExt;
    let got: Vec<RecordBatch> = result.into_stream().try_collect().await.unwrap();
    check_round_trip(&concat(&got), &want);
    // An empty result still has its schema.
    let mut empty = c
        .query_arrow("SELECT * FROM all_types WHERE id < 0")
        .await
        .unwrap();
    assert_eq!(*empty.schema(), *want.schema());
    assert!(empty.next().await.is_none());
    assert_eq!(empty.rows(), Some(0));
}

/// The other Arrow types hyperd takes for a column, converted on the way in.
#[test]
fn alternative_arrow_types_are_stored() {
    let dir = temp_dir();
    let table = TableDefinition::new("alt")
        .with_column("i", SqlType::Int)
        .with_column("bi", SqlType::BigInt)
        .with_column("date", SqlType::Date)
        .with_column("time", SqlType::Time)
        .with_column("ts", SqlType::Timestamp)
        .with_column("tstz", SqlType::TimestampTz);
    let mut c = db_with_table(&dir, "alt.hyper", &table);
    let schema = Arc::new(Schema::new(vec![
        // Any field order; matched by name.
        Field::new(
            "tstz",
            DataType::Timestamp(
                arrow_schema::TimeUnit::Millisecond,
                Some("Europe/Berlin".into()),
            ),
            true,
        ),
        Field::new("i", DataType::UInt16, true),
        Field::new("bi", DataType::UInt32, false),
        Field::new("date", DataType::Date32, true),
        Field::new(
            "time",
            DataType::Time32(arrow_schema::TimeUnit::Second),
            true,
        ),
        Field::new(
            "ts",
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            true,
        ),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampMillisecondArray::from(vec![1_000]).with_timezone("Europe/Berlin")),
            Arc::new(UInt16Array::from(vec![65_535])),
            Arc::new(UInt32Array::from(vec![u32::MAX])),
            Arc::new(Date32Array::from(vec![1])),
            Arc::new(Time32SecondArray::from(vec![3_661])),
            Arc::new(TimestampMillisecondArray::from(vec![86_400_001])),
        ],
    )
    .unwrap();
    let mut ins = ArrowInserter::new(&mut c, &table).unwrap();
    ins.insert_batch(&batch).unwrap();
    assert_eq!(ins.finish().unwrap(), 1);
    let row = c
        .query_scalar::<String>("SELECT i || ' ' || bi || ' ' || date || ' ' || time || ' ' || ts || ' ' || tstz FROM alt")
        .unwrap();
    assert_eq!(
        row,
        "65535 4294967295 1970-01-02 01:01:01 1970-01-02 00:00:00.001 1970-01-01 00:00:01+00"
    );
}

#[test]
fn raw_ipc_out_decodes_to_the_same_batches() {
    let dir = temp_dir();
    let mut c = connect(&dir, "raw.hyper");
    let sql = "SELECT g AS id, g::text AS name FROM generate_series(1, 100000) s(g)";
    let mut bytes = Vec::new();
    let mut chunks = c.query_arrow_ipc(sql).unwrap();
    for chunk in chunks.by_ref() {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(chunks.rows(), Some(100_000));
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    let from_bytes: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let decoded: Vec<RecordBatch> = c.query_arrow(sql).unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(from_bytes, decoded);
    let sum: i64 = decoded
        .iter()
        .map(|b| {
            b.column(0)
                .as_primitive::<Int32Type>()
                .values()
                .iter()
                .map(|v| i64::from(*v))
                .sum::<i64>()
        })
        .sum();
    assert_eq!(sum, 100_000 * 100_001 / 2);
    assert!(decoded.iter().all(|b| b.column(1).null_count() == 0));
}

/// Arrow IPC in the pre-1.0 framing (a bare length before each message,
/// as pyarrow's `use_legacy_format` and arrow-rs's
/// `write_legacy_ipc_format` write it) goes in whatever the table, every
/// value exactly. Before: into a table whose columns pass through
/// unchecked (here INT and TEXT) it failed with hyperd's XX001 "Message
/// does not begin with IPC continuation token", while into one with a
/// VARCHAR(n) (decoded on the way) the same bytes went in.
#[test]
fn legacy_framed_ipc_goes_in_into_any_table() {
    use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
    let ids: Vec<i32> = (0..5000).collect();
    let texts: Vec<Option<String>> = ids
        .iter()
        .map(|i| (i % 7 != 0).then(|| format!("grüße {i}")))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let batch = |from: usize, to: usize| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(ids[from..to].to_vec())) as ArrayRef,
                Arc::new(StringArray::from(texts[from..to].to_vec())),
            ],
        )
        .unwrap()
    };
    let options = IpcWriteOptions::try_new(8, true, arrow_ipc::MetadataVersion::V4).unwrap();
    let mut legacy = Vec::new();
    let mut w = StreamWriter::try_new_with_options(&mut legacy, &schema, options).unwrap();
    w.write(&batch(0, 3000)).unwrap();
    w.write(&batch(3000, 5000)).unwrap();
    w.finish().unwrap();
    drop(w);
    assert_ne!(legacy[..4], [0xff; 4], "a bare length first");

    let dir = temp_dir();
    let mut c = connect(&dir, "legacy_ipc.hyper");
    for text in ["TEXT", "VARCHAR(20)"] {
        let table = format!("t_{}", text.len());
        c.execute_command(&format!("CREATE TABLE {table} (id INT NOT NULL, s {text})"))
            .unwrap();
        let definition = c.catalog().get_table_definition(table.as_str()).unwrap();
        let mut ins = ArrowInserter::new(&mut c, &definition).unwrap();
        // In pieces that cut headers and bodies.
        for piece in legacy.chunks(777) {
            ins.insert_ipc(piece).unwrap();
        }
        assert_eq!(ins.finish().unwrap(), 5000, "{text}");
        let back: Vec<RecordBatch> = c
            .query_arrow(&format!("SELECT id, s::TEXT AS s FROM {table} ORDER BY id"))
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        let back = concat(&back);
        let got_ids: Vec<i32> = back.column(0).as_primitive::<Int32Type>().values().to_vec();
        let got_texts: Vec<Option<String>> = back
            .column(1)
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect();
        assert_eq!((got_ids, got_texts), (ids.clone(), texts.clone()), "{text}");
    }
}
