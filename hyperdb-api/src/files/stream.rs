//! CSV through the connection: `COPY ... FROM STDIN` fed from a reader,
//! `COPY ... TO STDOUT` drained into a writer, in constant memory.
//!
//! Both loops are written once, as macros expanded with and without
//! `.await` (the crate's pattern for sync/async twins, see
//! `client/requests.rs` in the core): `std::io::Read` / `Write` and tokio's
//! `AsyncReadExt` / `AsyncWriteExt` have the same method names.

use hyperdb_api_core::client::Client;

use super::{CsvOptions, Encoding};

/// Bytes read from the caller's reader into one `CopyData` message, which
/// is written out before the next read: an import holds this twice (the
/// read buffer and the send buffer).
pub(crate) const CHUNK: usize = 256 * 1024;

/// A client a running COPY FROM STDIN can be ended on without waiting.
pub(crate) trait QueueCopyEnd {
    fn queue_copy_fail(&mut self, reason: &str);
    fn queue_copy_done(&mut self);
    fn copy_in_columns(&self) -> Option<usize>;
    fn copy_buf(&mut self) -> &mut bytes::BytesMut;
}

macro_rules! queue_copy_end {
    ($client:ty) => {
        impl QueueCopyEnd for $client {
            fn queue_copy_fail(&mut self, reason: &str) {
                <$client>::queue_copy_fail(self, reason);
            }
            fn queue_copy_done(&mut self) {
                <$client>::queue_copy_done(self);
            }
            fn copy_in_columns(&self) -> Option<usize> {
                <$client>::copy_in_columns(self)
            }
            fn copy_buf(&mut self) -> &mut bytes::BytesMut {
                <$client>::copy_buf(self)
            }
        }
    };
}
queue_copy_end!(Client);
#[cfg(feature = "async")]
queue_copy_end!(hyperdb_api_core::client::AsyncClient);

/// How an import that must store nothing (its reader failed, panicked,
/// or its future was dropped) is ended: not with `CopyFail`, but with
/// input hyperd is sure to refuse, then `CopyDone`. hyperd 0.0.26963
/// answers a `CopyFail` that reaches it while its CSV parser still works
/// on earlier input only when its 10 s limit on a connection's pending
/// work runs out, by closing the connection (measured: 70 KB to 1 MB sent,
/// then `CopyFail`, hung in about half the runs, with or without a cancel
/// request after it); the refused input is answered at once, at any size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Refusal {
    delimiter: u8,
    utf16: bool,
}

impl Refusal {
    pub(crate) fn new(options: &CsvOptions) -> Refusal {
        Refusal {
            // ASCII, as `CsvOptions::check` made sure before the COPY.
            delimiter: u8::try_from(options.delimiter()).unwrap_or(b','),
            utf16: options.encoding() != Encoding::Utf8,
        }
    }

    /// The input that makes a COPY of `columns` columns fail after `sent`
    /// bytes, whatever state its parser is in (measured on each):
    /// - UTF-16: an odd byte count in all, which hyperd refuses at the end
    ///   ("data has an uneven number of bytes") whatever came before;
    /// - UTF-8: a line break, then a line of `columns + 2` empty fields.
    ///   Inside a quoted field (or after an escape) none of it closes the
    ///   quote, so the field is left open ("unterminated CSV quoted
    ///   field"); anywhere else the line break ends a row (or the header)
    ///   and the next line has too many fields; and even were the line
    ///   break taken into a broken multi-byte character, the delimiters
    ///   would make that row's fields too many.
    pub(crate) fn input(self, columns: usize, sent: u64) -> Vec<u8> {
        if self.utf16 {
            return if sent.is_multiple_of(2) {
                vec![0]
            } else {
                Vec::new()
            };
        }
        let mut input = Vec::with_capacity(columns + 3);
        input.push(b'\n');
        input.resize(columns + 2, self.delimiter);
        input.push(b'\n');
        input
    }
}

/// Ends a COPY FROM STDIN of CSV still running when it is dropped (a
/// reader that panicked, or an async copy whose future was dropped) so
/// that it stores nothing: with refused input and `CopyDone` once the
/// server took the COPY ([`Refusal`]), with `CopyFail` while no input
/// went. The connection's next request sends them and settles the reply,
/// so the table keeps its old rows and the connection stays usable.
pub(crate) struct CopyInGuard<'a, C: QueueCopyEnd> {
    pub(crate) client: &'a mut C,
    pub(crate) armed: bool,
    pub(crate) refusal: Refusal,
    /// Input bytes queued so far.
    pub(crate) sent: u64,
}

impl<C: QueueCopyEnd> CopyInGuard<'_, C> {
    /// Queues the refused input that ends the COPY (see [`Refusal`]);
    /// `false` when the server's go-ahead, and with it the COPY's column
    /// count, was not read yet (no input went either).
    pub(crate) fn queue_refused_input(&mut self) -> bool {
        let Some(columns) = self.client.copy_in_columns() else {
            return false;
        };
        let input = self.refusal.input(columns, self.sent);
        if input.is_empty() {
            return true;
        }
        hyperdb_api_core::protocol::frontend::copy_data(self.client.copy_buf(), &input).is_ok()
    }
}

impl<C: QueueCopyEnd> Drop for CopyInGuard<'_, C> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if self.queue_refused_input() {
            self.client.queue_copy_done();
        } else {
            self.client
                .queue_copy_fail("the COPY input was abandoned by the client");
        }
    }
}

/// The body of `copy_in_csv`: starts the COPY `$sql`, sends what
/// `$reader` yields in [`CHUNK`]-sized messages, ends it; the rows stored.
/// A read error ends the COPY with input it refuses ([`Refusal`], made
/// from `$options`): nothing stored, the connection settled and usable,
/// and the read error returned as [`crate::Error::Io`].
///
/// The reader fills a buffer of its own, not the send buffer: a future
/// dropped while the reader waits must leave only whole messages queued,
/// for the guard's ending to follow.
macro_rules! copy_in_from_reader {
    ($client:expr, $sql:expr, $options:expr, $reader:expr; $($aw:tt)*) => {{
        use hyperdb_api_core::protocol::frontend;
        // Armed while the COPY starts too: a future dropped while waiting
        // for the server's go-ahead leaves the server waiting for data.
        let mut copy = $crate::files::stream::CopyInGuard {
            client: $client,
            armed: true,
            refusal: $crate::files::stream::Refusal::new($options),
            sent: 0,
        };
        if let Err(e) = copy.client.copy_in($sql) $($aw)* {
            copy.armed = false;
            return Err(e.into());
        }
        let mut chunk = vec![0u8; $crate::files::stream::CHUNK];
        loop {
            match $reader.read(&mut chunk) $($aw)* {
                Ok(0) => break,
                Ok(n) => {
                    frontend::copy_data(copy.client.copy_buf(), &chunk[..n])?;
                    copy.sent += n as u64;
                    copy.client.flush() $($aw)* ?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let mut context = "reading the CSV input of a COPY".to_owned();
                    // Else the guard, still armed, ends it as it ends a
                    // dropped copy, for the next request to settle.
                    if copy.queue_refused_input() {
                        copy.armed = false;
                        // Refused, as meant (an error): nothing stored.
                        if let Ok(rows) = copy.client.copy_in_finish() $($aw)* {
                            context = format!(
                                "{context} (hyperd took the input that should end it \
                                 and stored {rows} rows)"
                            );
                        }
                    }
                    return Err($crate::error::Error::io(context, e));
                }
            }
        }
        copy.armed = false;
        Ok(copy.client.copy_in_finish() $($aw)* ?)
    }};
}
pub(crate) use copy_in_from_reader;

/// The body of `copy_out_csv`: runs the COPY `$sql` and writes each chunk
/// to `$writer` as it arrives; the rows written. A write error cancels the
/// COPY (`$cancel` is `cancel` or `cancel_async`), settles the connection
/// and is returned as [`crate::Error::Io`]. Server errors about a query
/// source get their position moved back by `$offset`.
macro_rules! copy_out_to_writer {
    ($client:expr, $sql:expr, $offset:expr, $writer:expr, $cancel:ident; $($aw:tt)*) => {{
        use hyperdb_api_core::protocol::ops::CopyOutEvent;
        let client = $client;
        let offset: u32 = $offset;
        let server = |e: hyperdb_api_core::Error| $crate::error::Error::Client(e.shift_position(offset));
        client.copy_out($sql) $($aw)* .map_err(server)?;
        loop {
            match client.next_copy_out() $($aw)* .map_err(server)? {
                CopyOutEvent::Data(chunk) => {
                    if let Err(e) = $writer.write_all(&chunk) $($aw)* {
                        // Reading the rest would cost what the export
                        // costs; cancelled, the server stops.
                        if let Err(c) = client.cancel_handle().$cancel() $($aw)* {
                            tracing::warn!("cancelling a COPY after a write error: {c}");
                        }
                        if let Err(settle) = client.settle() $($aw)* {
                            tracing::warn!("settling a COPY cancelled for a write error: {settle}");
                        }
                        return Err($crate::error::Error::io("writing the CSV output of a COPY", e));
                    }
                }
                CopyOutEvent::Done { rows } => {
                    $writer.flush() $($aw)* .map_err(|e| {
                        $crate::error::Error::io("flushing the CSV output of a COPY", e)
                    })?;
                    return Ok(rows);
                }
                // Only the start of a COPY reports this.
                CopyOutEvent::Started(_) => {}
            }
        }
    }};
}
pub(crate) use copy_out_to_writer;
