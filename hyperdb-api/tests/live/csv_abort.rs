//! An import whose input fails part-way (the reader errs or panics, or
//! the async copy's future is dropped) after tens of kilobytes to a
//! megabyte: nothing stored and the connection usable at once, whatever
//! the CSV parser was in the middle of (a row, a quoted field, the
//! header, a UTF-16 character).
//!
//! Before: the COPY was ended with `CopyFail`, which hyperd 0.0.26963
//! answers, when it reaches its CSV parser still at work on earlier
//! input, only after 10 s, by closing the connection (about half the runs
//! past ~70 KB).

use std::io::Read;
use std::time::Duration;

use hyperdb_api::files::{CsvOptions, Encoding};
use hyperdb_api::{AsyncConnection, Error};

use crate::common::{connect, connect_async, temp_dir};
use crate::csv_stream::{count, Stalls};

/// One input shape: the table it goes into, its options, and its bytes
/// (more than the largest cut below).
struct Case {
    name: &'static str,
    columns: &'static str,
    options: CsvOptions,
    input: Vec<u8>,
}

fn lines(line: &str, bytes: usize) -> String {
    line.repeat(bytes / line.len() + 1)
}

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

fn cases() -> Vec<Case> {
    const MORE: usize = 1_100_000;
    let rows = lines("1,abcdefghij \"x\" é\n", MORE);
    vec![
        Case {
            name: "rows",
            columns: "id INT, s TEXT",
            options: CsvOptions::new(),
            input: rows.clone().into_bytes(),
        },
        Case {
            // Each cut falls inside a quoted field: the input is one.
            name: "a quoted field",
            columns: "id INT, s TEXT",
            options: CsvOptions::new(),
            input: format!("1,\"{}", lines("a,b\n", MORE)).into_bytes(),
        },
        Case {
            name: "after an escape",
            columns: "id INT, s TEXT",
            options: CsvOptions::new().with_escape('\\'),
            input: format!("1,\"{}", lines("\\\\", MORE)).into_bytes(),
        },
        Case {
            // BYTEA takes bytes that are no UTF-8.
            name: "one BYTEA column",
            columns: "b BYTEA",
            options: CsvOptions::new(),
            input: lines("abc\n", MORE).into_bytes(),
        },
        Case {
            // The first line is the header, and it is long.
            name: "the header",
            columns: "id INT",
            options: CsvOptions::new().with_header(true).with_delimiter(';'),
            input: lines("x", MORE).into_bytes(),
        },
        Case {
            name: "UTF-16LE",
            columns: "id INT, s TEXT",
            options: CsvOptions::new().with_encoding(Encoding::Utf16Le),
            input: utf16le(&rows),
        },
        Case {
            name: "UTF-16 with a byte order mark",
            columns: "id INT, s TEXT",
            options: CsvOptions::new().with_encoding(Encoding::Utf16),
            input: [&[0xff, 0xfe][..], &utf16le(&lines("2,😀\n", MORE))].concat(),
        },
    ]
}

/// Where the input fails: odd and even byte counts, across hyperd's
/// buffers (the hang showed from ~70 KB on).
const CUTS: [usize; 4] = [70_001, 100_000, 299_999, 1_000_000];

/// Yields its input in reads of at most 64 KiB, then fails or panics, a
/// while later (a source that stalls first): hyperd has then parsed what
/// came and waits for more, which is when a `CopyFail` hung it.
struct FailsAfter<'a> {
    input: &'a [u8],
    panic: bool,
}

impl Read for FailsAfter<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.input.is_empty() {
            std::thread::sleep(Duration::from_millis(100));
            if self.panic {
                panic!("reader panicked on purpose");
            }
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = self.input.len().min(out.len()).min(64 << 10);
        out[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

#[test]
fn a_reader_failing_part_way_stores_nothing_and_keeps_the_connection() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "csv_abort.hyper");
    for (i, case) in cases().into_iter().enumerate() {
        let table = format!("t{i}");
        conn.execute_command(&format!("CREATE TABLE {table} ({})", case.columns))
            .unwrap();
        conn.execute_command(&format!("INSERT INTO {table} DEFAULT VALUES"))
            .unwrap();
        for cut in CUTS {
            let what = format!("{}, {cut} bytes", case.name);
            let input = &case.input[..cut];
            let e = conn
                .copy_in_csv(
                    table.as_str(),
                    FailsAfter {
                        input,
                        panic: false,
                    },
                    case.options.clone(),
                )
                .unwrap_err();
            assert!(matches!(e, Error::Io { .. }), "{what}: {e:?}");
            assert!(e.to_string().contains("the disk went away"), "{what}: {e}");
            assert!(!e.to_string().contains("stored"), "{what}: {e}");
            assert_eq!(count(&mut conn, &table), 1, "{what}");

            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                conn.copy_in_csv(
                    table.as_str(),
                    FailsAfter { input, panic: true },
                    case.options.clone(),
                )
            }));
            assert!(panicked.is_err(), "{what}");
            assert_eq!(count(&mut conn, &table), 1, "{what}, panicked");
        }
    }
}

#[tokio::test]
async fn a_dropped_import_stores_nothing_and_keeps_the_connection() {
    let dir = temp_dir();
    let mut conn: AsyncConnection = connect_async(&dir, "csv_abort_async.hyper").await;
    for (i, case) in cases().into_iter().enumerate() {
        let table = format!("t{i}");
        conn.execute_command(&format!("CREATE TABLE {table} ({})", case.columns))
            .await
            .unwrap();
        for cut in CUTS {
            let what = format!("{}, {cut} bytes", case.name);
            let reader = Stalls {
                good: &case.input[..cut],
            };
            let stalled = tokio::time::timeout(
                Duration::from_millis(300),
                conn.copy_in_csv(table.as_str(), reader, case.options.clone()),
            )
            .await;
            assert!(stalled.is_err(), "{what}: the copy should still wait");
            let rows: i64 = conn
                .query_scalar(&format!("SELECT count(*) FROM {table}"))
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(rows, 0, "{what}");
        }
    }
}
