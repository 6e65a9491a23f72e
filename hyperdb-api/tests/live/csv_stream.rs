//! CSV streamed through the connection: `copy_in_csv` from any reader,
//! `copy_out_csv` to any writer, sync and async; millions of rows in
//! bounded memory; and what a malformed row, a failing or panicking
//! reader, a failing writer or a dropped future leave behind (the table
//! as it was, the connection usable).

use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyperdb_api::files::{CopySource, CsvOptions};
use hyperdb_api::types::SqlType;
use hyperdb_api::{Connection, Error, TableDefinition, TableName};

use crate::common::{connect, connect_async, runs_here_alone, temp_dir, RssGrowth};

/// Rows in the bulk tests: ~45 MB of CSV.
const BULK: u64 = 3_000_000;
/// RSS growth allowed while streaming them: the data would take several
/// times this if it were buffered.
const RSS_BUDGET: u64 = 32 << 20;

fn table(name: &str) -> TableDefinition {
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::BigInt)
        .with_column("name", SqlType::Text)
        .with_column("score", SqlType::Double)
}

/// CSV rows `id,name_id,id/2` for ids `1..=rows`, made as they are read;
/// line `bad_line` (1-based) holds a value that is no number.
struct Lines {
    next: u64,
    rows: u64,
    bad_line: Option<u64>,
    line: Vec<u8>,
    at: usize,
    rss: RssGrowth,
}

impl Lines {
    fn new(rows: u64) -> Lines {
        Lines {
            next: 1,
            rows,
            bad_line: None,
            line: Vec::new(),
            at: 0,
            rss: RssGrowth::new(),
        }
    }

    fn fill(&mut self, out: &mut [u8]) -> usize {
        let mut n = 0;
        while n < out.len() {
            if self.at == self.line.len() {
                if self.next > self.rows {
                    break;
                }
                self.line.clear();
                let id = self.next;
                if self.bad_line == Some(id) {
                    writeln!(self.line, "{id},bad,x{id}").unwrap();
                } else {
                    writeln!(self.line, "{id},name {id} ö,{}", id as f64 / 2.0).unwrap();
                }
                if id.is_multiple_of(500_000) {
                    self.rss.sample();
                }
                self.next += 1;
                self.at = 0;
            }
            let take = (self.line.len() - self.at).min(out.len() - n);
            out[n..n + take].copy_from_slice(&self.line[self.at..self.at + take]);
            self.at += take;
            n += take;
        }
        n
    }
}

impl Read for Lines {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        Ok(self.fill(out))
    }
}

impl tokio::io::AsyncRead for Lines {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.fill(buf.initialize_unfilled());
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// Counts what is written: lines, bytes, the sum of the first field.
struct Tally {
    lines: u64,
    bytes: u64,
    sum: u64,
    field: u64,
    in_first: bool,
    rss: RssGrowth,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            lines: 0,
            bytes: 0,
            sum: 0,
            field: 0,
            in_first: true,
            rss: RssGrowth::new(),
        }
    }
}

impl Write for Tally {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            match b {
                b'\n' => {
                    self.lines += 1;
                    self.in_first = true;
                    if self.lines.is_multiple_of(500_000) {
                        self.rss.sample();
                    }
                }
                b',' if self.in_first => {
                    self.sum += self.field;
                    self.field = 0;
                    self.in_first = false;
                }
                b'0'..=b'9' if self.in_first => self.field = self.field * 10 + u64::from(b - b'0'),
                _ => {}
            }
        }
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(crate) fn count(conn: &mut Connection, table: &str) -> i64 {
    conn.query_scalar(&format!("SELECT count(*) FROM \"{table}\""))
        .unwrap()
}

#[test]
fn csv_in_and_out_small() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "small.hyper");
    conn.catalog().create_table(&table("t")).unwrap();
    let options = CsvOptions::new()
        .with_header(true)
        .with_delimiter(';')
        .with_quote('\'')
        .with_null("NA");
    let csv = "id;name;score\n1;Zoë 日本;1.5\n2;'a;b''c';NA\n3;NA;-3\n";
    assert_eq!(
        conn.copy_in_csv("t", csv.as_bytes(), options.clone())
            .unwrap(),
        3
    );
    let mut out = Vec::new();
    let n = conn
        .copy_out_csv(
            CopySource::query("SELECT * FROM t ORDER BY id;"),
            &mut out,
            options.clone(),
        )
        .unwrap();
    assert_eq!(n, 3);
    assert_eq!(String::from_utf8(out).unwrap(), csv);

    // Default options, a table as the source.
    let mut out = Vec::new();
    conn.copy_out_csv(TableName::new("t"), &mut out, CsvOptions::new())
        .unwrap();
    let mut lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["1,Zoë 日本,1.5", "2,a;b'c,", "3,,-3"]);
}

#[test]
fn millions_of_rows_in_and_out_in_bounded_memory() {
    if !runs_here_alone("csv_stream::millions_of_rows_in_and_out_in_bounded_memory") {
        return;
    }
    let dir = temp_dir();
    let mut conn = connect(&dir, "bulk.hyper");
    conn.catalog().create_table(&table("t")).unwrap();
    let mut lines = Lines::new(BULK);
    let started = Instant::now();
    let n = conn
        .copy_in_csv("t", &mut lines, CsvOptions::new())
        .unwrap();
    let took = started.elapsed();
    assert_eq!(n, BULK);
    eprintln!(
        "copy_in_csv: {BULK} rows in {took:?} ({:.2} M rows/s), RSS +{} KiB",
        BULK as f64 / took.as_secs_f64() / 1e6,
        lines.rss.peak() >> 10
    );
    assert!(
        lines.rss.peak() < RSS_BUDGET,
        "RSS +{} MiB",
        lines.rss.peak() >> 20
    );
    let (rows, sum): (i64, i64) = conn
        .query_as::<(i64, i64)>("SELECT count(*), sum(id) FROM t")
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let b = BULK as i64;
    assert_eq!((rows, sum), (b, b * (b + 1) / 2));
    let name: String = conn
        .query_scalar("SELECT name FROM t WHERE id = 2999999")
        .unwrap();
    assert_eq!(name, "name 2999999 ö");

    // A figure, not a test: hyperd reading the same rows from a file.
    let file = dir.path().join("same.csv");
    std::io::copy(
        &mut Lines::new(BULK),
        &mut std::fs::File::create(&file).unwrap(),
    )
    .unwrap();
    conn.catalog().create_table(&table("f")).unwrap();
    let started = Instant::now();
    let n = conn
        .copy_from_file("f", &file, hyperdb_api::files::FileFormat::csv())
        .unwrap();
    assert_eq!(n, BULK);
    eprintln!("copy_from_file, same rows: {:?}", started.elapsed());

    let mut tally = Tally::new();
    let started = Instant::now();
    let n = conn
        .copy_out_csv(TableName::new("t"), &mut tally, CsvOptions::new())
        .unwrap();
    let took = started.elapsed();
    eprintln!(
        "copy_out_csv: {n} rows, {} MB in {took:?} ({:.2} M rows/s), RSS +{} KiB",
        tally.bytes >> 20,
        n as f64 / took.as_secs_f64() / 1e6,
        tally.rss.peak() >> 10
    );
    assert_eq!((n, tally.lines), (BULK, BULK));
    assert_eq!(tally.sum, BULK * (BULK + 1) / 2);
    assert!(
        tally.rss.peak() < RSS_BUDGET,
        "RSS +{} MiB",
        tally.rss.peak() >> 20
    );
}

#[test]
fn a_malformed_row_fails_the_whole_stream() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "malformed.hyper");
    conn.catalog().create_table(&table("t")).unwrap();
    conn.execute_command("INSERT INTO t VALUES (0, 'kept', 0)")
        .unwrap();
    // Late in a stream of 2M rows: everything before it is discarded too.
    for bad in [1_500_000, 3] {
        let mut lines = Lines::new(2_000_000);
        lines.bad_line = Some(bad);
        let started = Instant::now();
        let e = conn
            .copy_in_csv("t", &mut lines, CsvOptions::new())
            .unwrap_err();
        eprintln!(
            "bad line {bad}: failed after {:?}, {} lines read from the input",
            started.elapsed(),
            lines.next - 1
        );
        assert_eq!(e.code().map(|c| c.code()), Some("22P02"), "{e}");
        let at = e.file_position().unwrap();
        assert_eq!(
            (at.file.as_deref(), at.line, at.column),
            (Some("stdin"), bad, Some(3)),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("line:{bad}")), "{e}");
        assert_eq!(count(&mut conn, "t"), 1);
    }
    // Too few columns, a NULL in a NOT NULL column, an unknown table.
    let e = conn
        .copy_in_csv("t", "1,a,1\n2,b\n".as_bytes(), CsvOptions::new())
        .unwrap_err();
    assert_eq!(
        e.file_position().map(|p| (p.line, p.column)),
        Some((2, None)),
        "{e}"
    );
    let e = conn
        .copy_in_csv("t", "1,a,1\n,b,2\n".as_bytes(), CsvOptions::new())
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("23502"), "{e}");
    assert_eq!(
        e.file_position().map(|p| (p.line, p.column)),
        Some((2, Some(1))),
        "{e}"
    );
    // Bytes that are no UTF-8: the line, and the column by name.
    let e = conn
        .copy_in_csv("t", &b"1,a,1\n2,\xff,2\n"[..], CsvOptions::new())
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("22021"), "{e}");
    let at = e
        .file_position()
        .unwrap_or_else(|| panic!("no position: {e}"));
    assert_eq!(
        (at.line, at.column_name.as_deref()),
        (2, Some("name")),
        "{e}"
    );
    let e = conn
        .copy_in_csv("nope", "1,a,1\n".as_bytes(), CsvOptions::new())
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "{e}");
    // Bad options: refused before anything is sent.
    let e = conn
        .copy_in_csv(
            "t",
            "1;a;1\n".as_bytes(),
            CsvOptions::new().with_delimiter('é'),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // A NULL text with a line break would be written as a bare line
    // break, which reads back as another row.
    let e = conn
        .copy_out_csv(
            CopySource::table("t"),
            Vec::new(),
            CsvOptions::new().with_null("N\nA"),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert_eq!(count(&mut conn, "t"), 1);
}

/// Yields `good` bytes of CSV, then fails (or panics).
struct Failing {
    good: &'static [u8],
    panic: bool,
}

impl Read for Failing {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if !self.good.is_empty() {
            let n = self.good.len().min(out.len());
            out[..n].copy_from_slice(&self.good[..n]);
            self.good = &self.good[n..];
            return Ok(n);
        }
        if self.panic {
            panic!("reader panicked on purpose");
        }
        Err(std::io::Error::other("the disk went away"))
    }
}

#[test]
fn a_failing_or_panicking_reader_aborts_the_copy() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "reader.hyper");
    conn.catalog().create_table(&table("t")).unwrap();
    let good = b"1,a,1\n2,b,2\n";
    let e = conn
        .copy_in_csv("t", Failing { good, panic: false }, CsvOptions::new())
        .unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("the disk went away"), "{e}");
    assert_eq!(count(&mut conn, "t"), 0);

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        conn.copy_in_csv("t", Failing { good, panic: true }, CsvOptions::new())
    }));
    assert!(panicked.is_err());
    // The dropped COPY was aborted: the next request settles it.
    assert_eq!(count(&mut conn, "t"), 0);
    assert_eq!(
        conn.copy_in_csv("t", &good[..], CsvOptions::new()).unwrap(),
        2
    );
}

/// Takes `room` bytes, then fails.
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "disk full",
            ));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_cancels_the_copy() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "writer.hyper");
    let e = conn
        .copy_out_csv(
            CopySource::query("SELECT g, g * 2 FROM generate_series(1, 50000000) g"),
            Full { room: 100_000 },
            CsvOptions::new(),
        )
        .unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("disk full"), "{e}");
    // Cancelled and settled: the connection is idle and answers at once.
    assert_eq!(conn.query_scalar::<i32>("SELECT 42").unwrap(), 42);

    // A query error points into the caller's SQL.
    let e = conn
        .copy_out_csv(
            CopySource::query("SELECT nope"),
            Vec::new(),
            CsvOptions::new(),
        )
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42703"), "{e}");
    assert_eq!(e.db_error().and_then(|d| d.position), Some(8));
    // hyperd writes UTF-8 only.
    let e = conn
        .copy_out_csv(
            CopySource::query("SELECT 1"),
            Vec::new(),
            CsvOptions::new().with_encoding(hyperdb_api::files::Encoding::Utf16Le),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert_eq!(conn.query_scalar::<i32>("SELECT 7").unwrap(), 7);
}

/// Yields `good`, then never more (and never wakes its task).
pub(crate) struct Stalls<'a> {
    pub(crate) good: &'a [u8],
}

impl tokio::io::AsyncRead for Stalls<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.good.is_empty() {
            return Poll::Pending;
        }
        let n = self.good.len().min(buf.remaining());
        buf.put_slice(&self.good[..n]);
        self.good = &self.good[n..];
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn async_csv_in_and_out() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "async.hyper").await;
    conn.catalog().create_table(&table("t")).await.unwrap();
    let mut lines = Lines::new(500_000);
    assert_eq!(
        conn.copy_in_csv("t", &mut lines, CsvOptions::new())
            .await
            .unwrap(),
        500_000
    );
    let mut tally = Tally::new();
    let mut out = Vec::new();
    let n = conn
        .copy_out_csv(
            CopySource::query("SELECT * FROM t ORDER BY id"),
            &mut out,
            CsvOptions::new().with_header(true),
        )
        .await
        .unwrap();
    assert_eq!(n, 500_000);
    assert!(out.starts_with(b"id,name,score\n1,name 1 \xc3\xb6,0.5\n"));
    tally.write_all(&out[14..]).unwrap();
    assert_eq!((tally.lines, tally.sum), (500_000, 500_000 * 500_001 / 2));

    // A malformed row: its line, the table as it was.
    let mut bad = Lines::new(10_000);
    bad.bad_line = Some(9_999);
    let e = conn
        .copy_in_csv("t", &mut bad, CsvOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.file_position().map(|p| p.line), Some(9_999), "{e}");
    let rows: i64 = conn.query_scalar("SELECT count(*) FROM t").await.unwrap();
    assert_eq!(rows, 500_000);

    // A dropped future (a reader that stalls): the COPY is aborted, the
    // connection usable, nothing stored.
    let stalled = tokio::time::timeout(
        Duration::from_millis(500),
        conn.copy_in_csv("t", Stalls { good: b"1,a,1\n" }, CsvOptions::new()),
    )
    .await;
    assert!(stalled.is_err(), "the copy should still have been waiting");
    let rows: i64 = conn.query_scalar("SELECT count(*) FROM t").await.unwrap();
    assert_eq!(rows, 500_000);

    // A failing writer: cancelled, the connection usable.
    let e = conn
        .copy_out_csv(
            CopySource::query("SELECT g FROM generate_series(1, 50000000) g"),
            AsyncFull { room: 10_000 },
            CsvOptions::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    let one: i32 = conn.query_scalar("SELECT 1").await.unwrap();
    assert_eq!(one, 1);
}

/// [`Full`] for async code.
struct AsyncFull {
    room: usize,
}

impl tokio::io::AsyncWrite for AsyncFull {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.room == 0 {
            return Poll::Ready(Err(std::io::Error::other("disk full")));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
