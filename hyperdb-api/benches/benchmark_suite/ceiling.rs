//! hyperd's own ceilings, measured the way `shared/tools/ceilings` does,
//! in the same run as the workloads they bound:
//!
//! * insert: `INSERT ... SELECT ... FROM generate_series` (no client data path);
//! * Arrow COPY (feature `arrow`): the same rows as an Arrow IPC stream in a
//!   file beside the database, `COPY t FROM '<file>' WITH (FORMAT
//!   ARROWSTREAM)`: what hyperd's own Arrow ingest costs with no client
//!   and no socket, the bound of every client that sends Arrow;
//! * row drain: the scan as HyperBinary DataRows (Parse/Bind/Execute/Sync),
//!   bytes read off the socket and only framed, never decoded;
//! * Arrow drain: the scan as `COPY (...) TO STDOUT WITH (FORMAT
//!   ARROWSTREAM)`, CopyData bytes read and discarded.
//!
//! The drains use a bare socket opened with the client's own socket options
//! (buffers, read window), so the figure is what hyperd and the kernel allow,
//! not what our protocol engine costs.

use std::io::Write;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use hyperdb_api::{Config, Connection, SocketOptions};
use hyperdb_api_core::client::{Client, Socket, Transport};
use hyperdb_api_core::protocol::frontend;

use crate::data::{self, Query, Result, Span};

/// Runs the server-side insert into a fresh `table`; returns seconds.
pub fn insert(conn: &mut Connection, table: &str, span: Span) -> Result<f64> {
    insert_of::<data::Measurements>(conn, table, span)
}

/// [`insert`] of schema `S`'s rows.
pub fn insert_of<S: data::Schema>(conn: &mut Connection, table: &str, span: Span) -> Result<f64> {
    let sql = S::generate_sql(table, span)?;
    timed_insert::<S>(conn, table, span, &sql, "insert ceiling")
}

/// Times `sql`, a server-side insert of the rows of `span` into `table`
/// made afresh with schema `S`; checks the count and what was stored
/// (untimed). `what` names the ceiling in errors.
fn timed_insert<S: data::Schema>(
    conn: &mut Connection,
    table: &str,
    span: Span,
    sql: &str,
    what: &str,
) -> Result<f64> {
    S::recreate(conn, table)?;
    let start = Instant::now();
    let stored = conn.execute_command(sql)?;
    let secs = start.elapsed().as_secs_f64();
    if stored != span.len() {
        return Err(format!("{what} stored {stored} rows, expected {}", span.len()).into());
    }
    S::verify_table(conn, table, span)?;
    Ok(secs)
}

/// The rows of an insert workload as one Arrow IPC stream file beside the
/// suite's database (`bench_data/`), written untimed on the ceiling's first
/// execution (so a group that `BENCH_FILTER` skips writes nothing) and
/// removed with the group. hyperd reads it itself, so the server must be
/// local (it is: the suite starts it).
#[cfg(feature = "arrow")]
pub struct ArrowFile(tempfile::TempPath);

#[cfg(feature = "arrow")]
impl ArrowFile {
    /// The file in `slot`, written there first (beside the database `db`)
    /// if it is empty, of the rows of `span` that `batches` makes.
    pub fn once<'s>(
        slot: &'s mut Option<ArrowFile>,
        db: &std::path::Path,
        span: Span,
        batches: data::BatchMaker,
    ) -> Result<&'s ArrowFile> {
        if let Some(file) = slot {
            return Ok(file);
        }
        let dir = db.parent().ok_or("the suite's database has no directory")?;
        Ok(slot.insert(ArrowFile::write(dir, span, batches)?))
    }

    /// Writes the rows of `span` that `batches` makes into a file in `dir`.
    fn write(dir: &std::path::Path, span: Span, batches: data::BatchMaker) -> Result<ArrowFile> {
        let file = tempfile::Builder::new()
            .prefix("arrow-copy-")
            .suffix(".arrows")
            .tempfile_in(dir)?;
        write_stream(file.as_file(), span, batches)?;
        Ok(ArrowFile(file.into_temp_path()))
    }

    /// hyperd's COPY of the file into a fresh `table` of schema `S`;
    /// returns seconds. Checks the count and the stored rows (untimed).
    pub fn copy_into<S: data::Schema>(
        &self,
        conn: &mut Connection,
        table: &str,
        span: Span,
    ) -> Result<f64> {
        let path = self
            .0
            .to_str()
            .ok_or("the Arrow COPY file's path is not UTF-8")?;
        let sql = format!(
            "COPY {} FROM {} WITH (FORMAT ARROWSTREAM)",
            data::ident(table)?,
            hyperdb_api::escape::quote_literal(path)?
        );
        timed_insert::<S>(conn, table, span, &sql, "Arrow COPY ceiling")
    }
}

/// Writes the rows of `span` that `batches` makes to `out` as one Arrow IPC
/// stream, a million rows at a time so that the whole table is never in
/// memory at once.
#[cfg(feature = "arrow")]
fn write_stream(out: &std::fs::File, span: Span, batches: data::BatchMaker) -> Result<()> {
    const PART_ROWS: u64 = 1 << 20;
    // The stream starts with the first batch's schema.
    let mut writer = None;
    for part in span.chunks(PART_ROWS) {
        for batch in batches(part)? {
            let w = match &mut writer {
                Some(w) => w,
                None => writer.insert(arrow_ipc::writer::StreamWriter::try_new(
                    std::io::BufWriter::new(out),
                    &batch.schema(),
                )?),
            };
            w.write(&batch)?;
        }
    }
    match writer {
        // Ends the stream and flushes, so a write error is not lost in a drop.
        Some(w) => w.into_inner()?.flush()?,
        None => return Err("no rows to write to the Arrow COPY file".into()),
    }
    Ok(())
}

/// How a drain asks for the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drain {
    /// HyperBinary DataRows (result format 2).
    Rows,
    /// One Arrow IPC stream in CopyData frames.
    Arrow,
}

/// Drains `query` over `table` on a fresh socket to the server `config`
/// names; returns seconds from sending the request to ReadyForQuery.
/// Checks the row count hyperd reports (DataRows counted, or the `COPY n`
/// tag).
pub fn drain(
    config: &Config,
    database: &str,
    table: &str,
    query: Query,
    how: Drain,
    expect_rows: u64,
) -> Result<f64> {
    drain_sql(config, database, &query.sql(table)?, how, expect_rows)
        .map_err(|e| format!("{e} (query {})", query.name()).into())
}

/// [`drain`] of any `sql`.
pub fn drain_sql(
    config: &Config,
    database: &str,
    sql: &str,
    how: Drain,
    expect_rows: u64,
) -> Result<f64> {
    let mut raw = RawConn::open(config, database)?;
    let drained = raw.drain(sql, how)?;
    drained.expect_rows(expect_rows)?;
    Ok(drained.secs)
}

/// What one drain saw.
#[derive(Clone, Copy, Debug)]
pub struct Drained {
    pub how: Drain,
    /// From sending the request to ReadyForQuery.
    pub secs: f64,
    /// From sending the request to the first byte of the reply (read by
    /// `mix_probe`; the suite reports end-to-end times).
    #[allow(dead_code)]
    pub first_byte_secs: f64,
    /// DataRows counted, or the `COPY n` tag's count.
    pub rows: u64,
    /// CopyData payload bytes (Arrow drains).
    pub copy_bytes: u64,
    /// The count of a `COPY n` tag (0 for other tags), for `drain_with`.
    #[allow(dead_code)]
    tag_copy_rows: u64,
}

impl Drained {
    /// Fails unless the result had `rows` rows (and, as Arrow, any bytes).
    pub fn expect_rows(&self, rows: u64) -> Result<()> {
        if self.rows != rows || (self.how == Drain::Arrow && self.copy_bytes == 0) {
            return Err(format!(
                "raw {:?} drain: {} rows ({} bytes), expected {rows}",
                self.how, self.rows, self.copy_bytes
            )
            .into());
        }
        Ok(())
    }
}

/// A bare socket after the client's handshake: requests are written and
/// replies framed by hand, so a drain costs only what hyperd and the kernel
/// cost. The mix keeps one open across its drains, as a client keeps its
/// connection: a fresh session per statement would add its first-statement
/// costs to short queries. The full scans open one per drain ([`drain_sql`]),
/// untimed, where a first-statement cost is lost in the scan.
pub struct RawConn {
    sock: Socket,
    buf: BytesMut,
    out: BytesMut,
    window: usize,
}

impl RawConn {
    /// Connects to the server `config` names and attaches `database`.
    pub fn open(config: &Config, database: &str) -> Result<RawConn> {
        let opts = SocketOptions::default();
        let config = config
            .clone()
            .with_database(database)
            .with_socket_options(opts.clone());
        let mut sock = Socket::connect(config.endpoint(), &opts, Some(Duration::from_secs(30)))?;
        // Startup and authentication (SCRAM when the server has a password,
        // as a TCP one does) by the client's own handshake, untimed; it
        // reads up to ReadyForQuery and no further, so the socket then
        // carries on bare.
        Client::handshake(Lent(&mut sock), &config, None)
            .map_err(|e| format!("raw drain: startup failed: {e}"))?;
        Ok(RawConn {
            sock,
            buf: BytesMut::with_capacity(opts.read_window),
            out: BytesMut::new(),
            window: opts.read_window,
        })
    }

    /// Runs `sql` and reads its reply to ReadyForQuery, framed but not
    /// decoded: as HyperBinary DataRows (Parse/Bind/Execute/Sync), or as
    /// `COPY (sql) TO STDOUT WITH (FORMAT ARROWSTREAM)`.
    pub fn drain(&mut self, sql: &str, how: Drain) -> Result<Drained> {
        self.out.clear();
        match how {
            Drain::Rows => {
                frontend::parse(&mut self.out, "", sql, &[])?;
                frontend::bind(&mut self.out, "", "", &[], std::iter::empty(), &[2])?;
                frontend::execute(&mut self.out, "", 0)?;
                frontend::sync(&mut self.out);
            }
            Drain::Arrow => {
                let copy = format!("COPY ({sql}) TO STDOUT WITH (FORMAT ARROWSTREAM)");
                frontend::query(&mut self.out, &copy)?;
            }
        }
        self.exchange(how)
    }

    /// Sends the messages `build` writes (the way `mix_probe` compares
    /// other forms of a statement) and reads the reply like
    /// [`drain`](Self::drain); rows are DataRows plus a `COPY n` tag's.
    #[allow(dead_code)]
    pub fn drain_with(
        &mut self,
        build: impl FnOnce(&mut BytesMut) -> hyperdb_api_core::Result<()>,
    ) -> Result<Drained> {
        self.out.clear();
        build(&mut self.out)?;
        self.exchange(Drain::Rows).map(|mut d| {
            d.rows += d.tag_copy_rows;
            d
        })
    }

    /// Writes the request in `out` and reads to ReadyForQuery.
    fn exchange(&mut self, how: Drain) -> Result<Drained> {
        let start = Instant::now();
        self.sock.write_all(&self.out)?;
        let mut walk = Walker::default();
        let mut first_byte_secs = None;
        while !walk.ready {
            self.buf.clear();
            if self.sock.read_into(&mut self.buf, self.window)? == 0 {
                return Err("raw drain: hyperd closed the connection".into());
            }
            first_byte_secs.get_or_insert_with(|| start.elapsed().as_secs_f64());
            walk.feed(&self.buf)?;
        }
        let secs = start.elapsed().as_secs_f64();
        if let Some(e) = walk.error {
            return Err(format!("raw {how:?} drain: {e}").into());
        }
        Ok(Drained {
            how,
            secs,
            first_byte_secs: first_byte_secs.unwrap_or(secs),
            rows: match how {
                Drain::Rows => walk.data_rows,
                Drain::Arrow => walk.tag_rows(),
            },
            tag_copy_rows: if walk.tag.starts_with("COPY") {
                walk.tag_rows()
            } else {
                0
            },
            copy_bytes: walk.copy_bytes,
        })
    }
}

impl Drop for RawConn {
    fn drop(&mut self) {
        self.out.clear();
        frontend::terminate(&mut self.out);
        let _ = self.sock.write_all(&self.out);
    }
}

/// The drain's socket, lent to the client for the handshake only.
struct Lent<'a>(&'a mut Socket);

impl Write for Lent<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.write(data)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl Transport for Lent<'_> {
    fn read_into(&mut self, buf: &mut BytesMut, window: usize) -> std::io::Result<usize> {
        self.0.read_into(buf, window)
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.0.set_read_timeout(timeout)
    }

    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.0.set_write_timeout(timeout)
    }
}

/// Follows message framing (5-byte headers, bodies skipped) so the end of
/// the reply is found exactly; keeps only the few small messages it needs.
#[derive(Debug, Default)]
struct Walker {
    header: [u8; 5],
    header_len: usize,
    kind: u8,
    left: usize,
    body: Vec<u8>,
    data_rows: u64,
    copy_bytes: u64,
    tag: String,
    error: Option<String>,
    ready: bool,
}

impl Walker {
    fn feed(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            if self.ready {
                return Err("raw drain: bytes after ReadyForQuery".into());
            }
            if self.header_len < 5 {
                let take = (5 - self.header_len).min(bytes.len());
                self.header[self.header_len..self.header_len + take]
                    .copy_from_slice(&bytes[..take]);
                self.header_len += take;
                bytes = &bytes[take..];
                if self.header_len < 5 {
                    break;
                }
                let [kind, a, b, c, d] = self.header;
                let len = u32::from_be_bytes([a, b, c, d]) as usize;
                if len < 4 {
                    return Err(format!("raw drain: bad message length {len}").into());
                }
                self.kind = kind;
                self.left = len - 4;
                self.body.clear();
                match kind {
                    b'D' => self.data_rows += 1,
                    b'd' => self.copy_bytes += self.left as u64,
                    _ => {}
                }
                if self.left == 0 {
                    self.end_message()?;
                }
                continue;
            }
            let take = self.left.min(bytes.len());
            if matches!(self.kind, b'C' | b'E' | b'R') {
                self.body.extend_from_slice(&bytes[..take]);
            }
            self.left -= take;
            bytes = &bytes[take..];
            if self.left == 0 {
                self.end_message()?;
            }
        }
        Ok(())
    }

    fn end_message(&mut self) -> Result<()> {
        self.header_len = 0;
        match self.kind {
            b'Z' => self.ready = true,
            b'C' => {
                self.tag = String::from_utf8_lossy(&self.body)
                    .trim_end_matches('\0')
                    .to_owned()
            }
            b'E' => {
                // Fields: one type byte, then a NUL-terminated string.
                let text = self
                    .body
                    .split(|&b| b == 0)
                    .filter(|f| matches!(f.first(), Some(b'M' | b'C')))
                    .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
                    .collect::<Vec<_>>()
                    .join(" / ");
                self.error = Some(text);
            }
            b'R' if self.body.get(..4) != Some(&[0, 0, 0, 0]) => {
                // The client's handshake authenticated before the drain.
                return Err("raw drain: unexpected authentication request".into());
            }
            _ => {}
        }
        Ok(())
    }

    /// The row count of a `COPY n` / `SELECT n` tag.
    fn tag_rows(&self) -> u64 {
        self.tag
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::Walker;

    /// The file holds one stream of every row of the span, in order, across
    /// the parts it was written in.
    #[cfg(feature = "arrow")]
    #[test]
    fn arrow_file_holds_every_row_of_the_span_in_one_stream() {
        use std::sync::Arc;

        use hyperdb_api::arrow_array::cast::AsArray;
        use hyperdb_api::arrow_array::types::Int64Type;
        use hyperdb_api::arrow_array::{Int64Array, RecordBatch};

        use super::{ArrowFile, Span};

        fn ids(span: Span) -> crate::data::Result<Vec<RecordBatch>> {
            let ids = Int64Array::from_iter_values(span.start as i64..span.end as i64);
            Ok(vec![RecordBatch::try_from_iter([(
                "id",
                Arc::new(ids) as _,
            )])?])
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let span = Span::new(3, (1 << 20) + 10);
        let mut slot = None;
        let db = dir.path().join("x.hyper");
        let path = ArrowFile::once(&mut slot, &db, span, ids)
            .expect("write")
            .0
            .to_path_buf();
        let file = std::fs::File::open(&path).expect("open");
        let reader = arrow_ipc::reader::StreamReader::try_new(file, None).expect("stream");
        let mut next = span.start as i64;
        for batch in reader {
            for id in batch
                .expect("batch")
                .column(0)
                .as_primitive::<Int64Type>()
                .values()
            {
                assert_eq!(*id, next);
                next += 1;
            }
        }
        assert_eq!(next, span.end as i64);
        drop(slot);
        assert!(!path.exists(), "the file is removed with its slot");
    }

    #[test]
    fn walker_finds_ready_across_splits() {
        let mut msgs = Vec::new();
        msgs.extend_from_slice(&[b'D', 0, 0, 0, 6, 0, 0]);
        msgs.extend_from_slice(&[b'C', 0, 0, 0, 12]);
        msgs.extend_from_slice(b"COPY 12\0");
        msgs.extend_from_slice(&[b'Z', 0, 0, 0, 5, b'I']);
        for split in 0..msgs.len() {
            let mut w = Walker::default();
            w.feed(&msgs[..split]).expect("feed");
            assert!(!w.ready);
            w.feed(&msgs[split..]).expect("feed");
            assert!(w.ready);
            assert_eq!((w.data_rows, w.tag_rows()), (1, 12));
        }
    }
}
