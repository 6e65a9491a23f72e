//! Files hyperd reads and writes itself: `copy_from_file`, `copy_to_file`,
//! `create_table_from_file` for CSV, Parquet and Arrow IPC, with files the
//! tests write (by hand, by arrow-rs, or by hyperd's own COPY TO), sync and
//! async, and every failure path: missing and malformed files, bad options,
//! a table left as it was, the connection still usable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hyperdb_api::arrow_array::{Array, Float64Array, Int32Array, RecordBatch, StringArray};
use hyperdb_api::arrow_schema::{DataType, Field, Schema};
use hyperdb_api::files::{CopySource, CsvOptions, Encoding, FileFormat};
use hyperdb_api::types::SqlType;
use hyperdb_api::{Connection, Error, TableDefinition, TableName};

use crate::common::{code, connect, connect_async, temp_dir};

type Person = (i32, Option<String>, Option<f64>);

fn people(name: &str) -> TableDefinition {
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Text)
        .with_column("score", SqlType::Double)
}

/// Three rows with a quoted delimiter, multi-byte UTF-8 and a NULL.
fn expected() -> Vec<Person> {
    vec![
        (1, Some("Zoë 日本".into()), Some(1.5)),
        (2, Some("bob, jr".into()), None),
        (3, None, Some(-3.0)),
    ]
}

fn read(conn: &mut Connection, table: &str) -> Vec<Person> {
    conn.query_as::<Person>(&format!("SELECT * FROM \"{table}\" ORDER BY id"))
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap()
}

fn count(conn: &mut Connection, table: &str) -> i64 {
    conn.query_scalar(&format!("SELECT count(*) FROM \"{table}\""))
        .unwrap()
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) -> PathBuf {
    std::fs::write(path, bytes).unwrap();
    path.to_owned()
}

#[test]
fn csv_file_in_and_out() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "csv.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    let csv = write(
        &dir.path().join("in.csv"),
        "id,name,score\n1,Zoë 日本,1.5\n2,\"bob, jr\",\n3,,-3\n",
    );
    let header = CsvOptions::new().with_header(true);
    let n = conn
        .copy_from_file("p", &csv, FileFormat::Csv(header.clone()))
        .unwrap();
    assert_eq!(n, 3);
    assert_eq!(read(&mut conn, "p"), expected());

    // Out again, with the same options: the same text (NULLs are empty).
    let out = dir.path().join("sub/dir/out.csv");
    let n = conn
        .copy_to_file(TableName::new("p"), &out, FileFormat::Csv(header))
        .unwrap();
    assert_eq!(n, 3);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "id,name,score\n1,Zoë 日本,1.5\n2,\"bob, jr\",\n3,,-3\n"
    );
    // An existing file is replaced; a query (its `;` dropped) is a source.
    let n = conn
        .copy_to_file(
            CopySource::query("SELECT name FROM p WHERE id > 1 ORDER BY id;"),
            &out,
            FileFormat::csv(),
        )
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "\"bob, jr\"\n\n");
}

#[test]
fn csv_dialects_round_trip() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "dialects.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    conn.execute_command(
        "INSERT INTO p VALUES (1, 'Zoë 日本', 1.5), (2, 'bob, jr', NULL), (3, NULL, -3), \
         (4, 'it''s; \"q\"', 4)",
    )
    .unwrap();
    let dialects = [
        (
            CsvOptions::new()
                .with_delimiter(';')
                .with_quote('\'')
                .with_null("NA"),
            "1;Zoë 日本;1.5\n2;bob, jr;NA\n3;NA;-3\n4;'it''s; \"q\"';4\n",
        ),
        (
            CsvOptions::new()
                .with_header(true)
                .with_delimiter('\t')
                .with_escape('\\'),
            "id\tname\tscore\n1\tZoë 日本\t1.5\n2\tbob, jr\t\n3\t\t-3\n4\t\"it's; \\\"q\\\"\"\t4\n",
        ),
        (
            CsvOptions::new().with_delimiter('|').with_escape('\\'),
            "1|Zoë 日本|1.5\n2|bob, jr|\n3||-3\n4|\"it's; \\\"q\\\"\"|4\n",
        ),
    ];
    for (i, (options, text)) in dialects.into_iter().enumerate() {
        let path = dir.path().join(format!("d{i}.csv"));
        conn.copy_to_file(TableName::new("p"), &path, FileFormat::Csv(options.clone()))
            .unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written, text, "{options:?}");
        let copy = format!("p{i}");
        conn.catalog().create_table(&people(&copy)).unwrap();
        assert_eq!(
            conn.copy_from_file(copy.as_str(), &path, FileFormat::Csv(options))
                .unwrap(),
            4
        );
        assert_eq!(read(&mut conn, &copy), read(&mut conn, "p"));
    }
}

#[test]
fn csv_encodings() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "enc.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    let text = "1,Zoë 日本,1.5\n";
    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let bom: Vec<u8> = [0xFF, 0xFE].into_iter().chain(le.clone()).collect();
    for (i, (bytes, encoding)) in [
        (le, Encoding::Utf16Le),
        (be, Encoding::Utf16Be),
        (bom, Encoding::Utf16),
        (text.as_bytes().to_vec(), Encoding::Utf8),
    ]
    .into_iter()
    .enumerate()
    {
        let path = write(&dir.path().join(format!("e{i}.csv")), bytes);
        conn.execute_command("TRUNCATE p").unwrap();
        let options = CsvOptions::new().with_encoding(encoding);
        conn.copy_from_file("p", &path, FileFormat::Csv(options))
            .unwrap();
        assert_eq!(
            read(&mut conn, "p"),
            vec![(1, Some("Zoë 日本".into()), Some(1.5))],
            "{encoding:?}"
        );
    }
    // hyperd writes UTF-8 only: refused before anything runs.
    let e = conn
        .copy_to_file(
            TableName::new("p"),
            dir.path().join("x.csv"),
            FileFormat::Csv(CsvOptions::new().with_encoding(Encoding::Utf16)),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(!dir.path().join("x.csv").exists());
}

/// A batch of the `people` schema as hyperd declares it.
fn people_batch() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec![
                Some("Zoë 日本"),
                Some("bob, jr"),
                None,
            ])),
            Arc::new(Float64Array::from(vec![Some(1.5), None, Some(-3.0)])),
        ],
    )
    .unwrap()
}

#[test]
fn arrow_files_written_by_arrow_rs_load() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "arrow.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    let batch = people_batch();

    let file = dir.path().join("people.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        std::fs::File::create(&file).unwrap(),
        &batch.schema(),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    assert_eq!(
        conn.copy_from_file("p", &file, FileFormat::ArrowIpc)
            .unwrap(),
        3
    );
    assert_eq!(read(&mut conn, "p"), expected());

    let stream = dir.path().join("people.arrows");
    let mut w = arrow_ipc::writer::StreamWriter::try_new(
        std::fs::File::create(&stream).unwrap(),
        &batch.schema(),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    assert_eq!(
        conn.copy_from_file("p", &stream, FileFormat::ArrowIpcStream)
            .unwrap(),
        6
    );
    assert_eq!(count(&mut conn, "p"), 9);

    // Each format read as the other is refused, and nothing is stored.
    for (path, format) in [
        (&file, FileFormat::ArrowIpcStream),
        (&stream, FileFormat::ArrowIpc),
    ] {
        let e = conn.copy_from_file("p", path, format).unwrap_err();
        assert!(e.to_string().contains("Arrow"), "{e}");
    }
    assert_eq!(count(&mut conn, "p"), 9);
}

#[test]
fn arrow_files_written_by_hyperd_read_back() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "arrow_out.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    conn.execute_command(
        "INSERT INTO p VALUES (1, 'Zoë 日本', 1.5), (2, 'bob, jr', NULL), (3, NULL, -3)",
    )
    .unwrap();
    let source = CopySource::query("SELECT * FROM p ORDER BY id");

    let file = dir.path().join("out.arrow");
    assert_eq!(
        conn.copy_to_file(source.clone(), &file, FileFormat::ArrowIpc)
            .unwrap(),
        3
    );
    // An IPC file: magic, the stream's messages, a footer, magic. hyperd's
    // footer says metadata V4 while its messages are V5, which arrow-rs's
    // `FileReader` refuses (measured on 0.0.26963); the messages themselves
    // read as a stream (with no end-of-stream marker before the footer, so
    // read no further than the 3 rows).
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"ARROW1") && bytes.ends_with(b"ARROW1"));
    let refused = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(&bytes), None)
        .and_then(|r| r.collect::<Result<Vec<_>, _>>());
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("metadata versions mismatch")),
        "{refused:?}"
    );
    let mut reader = arrow_ipc::reader::StreamReader::try_new(&bytes[8..], None).unwrap();
    let mut batches: Vec<RecordBatch> = Vec::new();
    while batches.iter().map(RecordBatch::num_rows).sum::<usize>() < 3 {
        batches.push(reader.next().unwrap().unwrap());
    }
    check_people_batches(&batches);
    // And hyperd reads its own file back.
    conn.catalog().create_table(&people("back")).unwrap();
    assert_eq!(
        conn.copy_from_file("back", &file, FileFormat::ArrowIpc)
            .unwrap(),
        3
    );
    assert_eq!(read(&mut conn, "back"), expected());

    let stream = dir.path().join("out.arrows");
    conn.copy_to_file(source, &stream, FileFormat::ArrowIpcStream)
        .unwrap();
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::fs::File::open(&stream).unwrap(), None)
            .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    check_people_batches(&batches);
}

fn check_people_batches(batches: &[RecordBatch]) {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 3);
    let b = &batches[0];
    let ids = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(ids.values(), &[1, 2, 3]);
    let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(names.value(0), "Zoë 日本");
    assert!(names.is_null(2));
}

#[test]
fn parquet_round_trip_and_create_table_from_file() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "parquet.hyper");
    let source = TableDefinition::new("src")
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Varchar(20))
        .with_column("amount", SqlType::numeric(10, 2).unwrap())
        .with_column("day", SqlType::Date)
        .with_column("at", SqlType::Timestamp)
        .with_column("score", SqlType::Double)
        .with_column("flag", SqlType::Bool);
    conn.catalog().create_table(&source).unwrap();
    conn.execute_command(
        "INSERT INTO src VALUES (1, 'Zoë 日本', 12.34, DATE '2024-02-29', \
         TIMESTAMP '2024-02-29 12:34:56.789', 1.5, true), (2, NULL, NULL, NULL, NULL, NULL, NULL)",
    )
    .unwrap();
    // No `.parquet` extension: the format is named, not guessed.
    let file = dir.path().join("src.data");
    assert_eq!(
        conn.copy_to_file(TableName::new("src"), &file, FileFormat::Parquet)
            .unwrap(),
        2
    );

    let def = conn.create_table_from_file("inferred", &file).unwrap();
    let columns: Vec<(String, SqlType, bool)> = def
        .columns()
        .iter()
        .map(|c| (c.name().to_owned(), *c.sql_type(), c.is_nullable()))
        .collect();
    // Measured: every column comes back nullable, VARCHAR(n) as TEXT.
    assert_eq!(
        columns,
        vec![
            ("id".to_owned(), SqlType::Int, true),
            ("name".to_owned(), SqlType::Text, true),
            ("amount".to_owned(), SqlType::numeric(10, 2).unwrap(), true),
            ("day".to_owned(), SqlType::Date, true),
            ("at".to_owned(), SqlType::Timestamp, true),
            ("score".to_owned(), SqlType::Double, true),
            ("flag".to_owned(), SqlType::Bool, true),
        ]
    );
    assert_eq!(
        def,
        conn.catalog().get_table_definition("inferred").unwrap()
    );
    let same: i64 = conn
        .query_scalar(
            "SELECT count(*) FROM (SELECT id, name::TEXT, amount, day, at, score, flag FROM src \
             INTERSECT SELECT * FROM inferred) x",
        )
        .unwrap();
    assert_eq!(same, 2);

    // copy_from_file appends the same rows to the original table.
    assert_eq!(
        conn.copy_from_file("src", &file, FileFormat::Parquet)
            .unwrap(),
        2
    );
    assert_eq!(count(&mut conn, "src"), 4);
}

#[test]
fn create_table_from_file_failures_leave_no_table() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "ctas.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    conn.execute_command("INSERT INTO p VALUES (7, 'kept', 7)")
        .unwrap();

    // A missing file: nothing created.
    let e = conn
        .create_table_from_file("t", dir.path().join("missing.parquet"))
        .unwrap_err();
    assert_eq!(code(&e), "58P01", "{e}");
    assert!(!conn.catalog().has_table("t").unwrap());

    // Not Parquet: nothing created.
    let csv = write(&dir.path().join("x.csv"), "1,a,1\n");
    let e = conn.create_table_from_file("t", &csv).unwrap_err();
    assert_eq!(code(&e), "XX001", "{e}");
    assert!(!conn.catalog().has_table("t").unwrap());

    // A table of that name exists: it keeps its rows. (hyperd checks the
    // file before the name, so an error alone cannot tell.)
    let good = dir.path().join("good.parquet");
    conn.copy_to_file(TableName::new("p"), &good, FileFormat::Parquet)
        .unwrap();
    let e = conn.create_table_from_file("p", &good).unwrap_err();
    assert_eq!(code(&e), "42P07", "{e}");
    let e = conn
        .create_table_from_file("p", dir.path().join("missing.parquet"))
        .unwrap_err();
    assert_eq!(code(&e), "58P01", "{e}");
    assert_eq!(
        read(&mut conn, "p"),
        vec![(7, Some("kept".into()), Some(7.0))]
    );

    // Rows that fail to load after the table was made (a corrupt page in
    // a late row group, which hyperd's sampling at CREATE does not read):
    // the new table is dropped again.
    let big = dir.path().join("big.parquet");
    conn.copy_to_file(
        CopySource::query("SELECT g::TEXT || 'abc' AS a FROM generate_series(1, 2000000) g"),
        &big,
        FileFormat::Parquet,
    )
    .unwrap();
    let mut bytes = std::fs::read(&big).unwrap();
    let at = bytes.len() * 9 / 10;
    bytes[at..at + 20_000].fill(0xAB);
    let corrupt = write(&dir.path().join("corrupt.parquet"), bytes);
    let e = conn.create_table_from_file("t", &corrupt).unwrap_err();
    assert!(e.to_string().contains("Parquet"), "{e}");
    assert!(!conn.catalog().has_table("t").unwrap());
    assert_eq!(count(&mut conn, "p"), 1);
}

#[test]
fn malformed_csv_reports_line_and_column() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "bad.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    conn.execute_command("INSERT INTO p VALUES (7, 'kept', 7)")
        .unwrap();
    let header = || FileFormat::Csv(CsvOptions::new().with_header(true));
    let cases = [
        // (file text, SQLSTATE, line, column)
        (
            "id,name,score\n1,a,1\n2,b,notanumber\n",
            "22P02",
            3,
            Some(3),
        ),
        ("id,name,score\n1,a,1\n2,b\n", "22P02", 3, None),
        ("id,name,score\n1,a,1,9\n", "22P02", 2, None),
        ("id,name,score\n1,a,1\n2,\"b,2\n", "22P02", 3, None),
        ("id,name,score\n1,a,1\n,b,2\n", "23502", 3, Some(1)),
    ];
    for (i, (text, sqlstate, line, column)) in cases.into_iter().enumerate() {
        let path = write(&dir.path().join(format!("bad{i}.csv")), text);
        let e = conn.copy_from_file("p", &path, header()).unwrap_err();
        assert_eq!(code(&e), sqlstate, "{text:?}: {e}");
        let at = e
            .file_position()
            .unwrap_or_else(|| panic!("{text:?}: no position in {e}"));
        assert_eq!((at.line, at.column), (line, column), "{text:?}: {e}");
        // The server's own text stays in the message.
        assert!(
            e.to_string().contains(&format!("line:{line}"))
                || e.to_string().contains(&format!("line: {line}")),
            "{e}"
        );
        if sqlstate == "22P02" {
            assert_eq!(at.file.as_deref(), path.to_str(), "{e}");
        }
    }
    // Nothing of the failed files was stored; the connection works.
    assert_eq!(
        read(&mut conn, "p"),
        vec![(7, Some("kept".into()), Some(7.0))]
    );
}

#[test]
fn file_errors_leave_the_table_and_the_connection() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "errs.hyper");
    conn.catalog().create_table(&people("p")).unwrap();
    conn.execute_command("INSERT INTO p VALUES (7, 'kept', 7)")
        .unwrap();

    let e = conn
        .copy_from_file("p", dir.path().join("missing.csv"), FileFormat::csv())
        .unwrap_err();
    assert_eq!(code(&e), "58P01", "{e}");
    assert!(e.to_string().contains("missing.csv"), "{e}");
    assert!(e.file_position().is_none());

    let csv = write(&dir.path().join("a.csv"), "1,a,1\n");
    let e = conn
        .copy_from_file("p", &csv, FileFormat::Parquet)
        .unwrap_err();
    assert_eq!(code(&e), "XX001", "{e}");
    let e = conn
        .copy_from_file("nope", &csv, FileFormat::csv())
        .unwrap_err();
    assert_eq!(code(&e), "42P01", "{e}");

    // Bad options: typed errors, nothing sent.
    for options in [
        CsvOptions::new().with_delimiter('€'),
        CsvOptions::new().with_quote(','),
        CsvOptions::new().with_escape('\n'),
        CsvOptions::new().with_null("a,b"),
    ] {
        let e = conn
            .copy_from_file("p", &csv, FileFormat::Csv(options.clone()))
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { .. }),
            "{options:?}: {e}"
        );
        assert_eq!(e.sqlstate(), "22023");
    }

    // A query error points into the caller's query, not our COPY.
    let e = conn
        .copy_to_file(
            CopySource::query("SELECT nope FROM p"),
            dir.path().join("q.csv"),
            FileFormat::csv(),
        )
        .unwrap_err();
    assert_eq!(code(&e), "42703", "{e}");
    assert_eq!(e.db_error().and_then(|d| d.position), Some(8));
    // A target under a file: no directory can be made there.
    let e = conn
        .copy_to_file(TableName::new("p"), csv.join("x.csv"), FileFormat::csv())
        .unwrap_err();
    assert!(e.code().is_some(), "{e}");

    assert_eq!(
        read(&mut conn, "p"),
        vec![(7, Some("kept".into()), Some(7.0))]
    );
    assert!(matches!(
        conn.transaction_status(),
        hyperdb_api::TransactionStatus::Idle
    ));
}

#[tokio::test]
async fn async_file_methods() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "async_files.hyper").await;
    conn.catalog().create_table(&people("p")).await.unwrap();
    let csv = write(
        &dir.path().join("in.csv"),
        "id;name;score\n1;Zoë 日本;1.5\n2;bob, jr;NA\n3;NA;-3\n",
    );
    let options = CsvOptions::new()
        .with_header(true)
        .with_delimiter(';')
        .with_null("NA");
    assert_eq!(
        conn.copy_from_file("p", &csv, FileFormat::Csv(options.clone()))
            .await
            .unwrap(),
        3
    );
    let parquet = dir.path().join("p.parquet");
    assert_eq!(
        conn.copy_to_file(
            CopySource::query("SELECT * FROM p ORDER BY id"),
            &parquet,
            FileFormat::Parquet
        )
        .await
        .unwrap(),
        3
    );
    let def = conn.create_table_from_file("q", &parquet).await.unwrap();
    assert_eq!(def.column_count(), 3);
    let out = dir.path().join("out.csv");
    conn.copy_to_file(
        CopySource::query("SELECT * FROM q ORDER BY id"),
        &out,
        FileFormat::Csv(options.clone()),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "id;name;score\n1;Zoë 日本;1.5\n2;bob, jr;NA\n3;NA;-3\n"
    );

    // Failures: a malformed row (with its line), a missing file, a bad
    // option, then the connection still works and `p` is as it was.
    let bad = write(&dir.path().join("bad.csv"), "id;name;score\n4;x;1\n5;y;z\n");
    let e = conn
        .copy_from_file("p", &bad, FileFormat::Csv(options.clone()))
        .await
        .unwrap_err();
    assert_eq!(e.file_position().map(|p| p.line), Some(3), "{e}");
    let e = conn
        .create_table_from_file("r", dir.path().join("missing.parquet"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "58P01", "{e}");
    let e = conn
        .copy_to_file(
            TableName::new("p"),
            &out,
            FileFormat::Csv(options.with_quote(';')),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    let n: i64 = conn.query_scalar("SELECT count(*) FROM p").await.unwrap();
    assert_eq!(n, 3);
    assert!(!conn.catalog().has_table("r").await.unwrap());
}
