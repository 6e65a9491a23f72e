//! CSV through the connection: `COPY ... FROM STDIN` fed from a reader,
//! `COPY ... TO STDOUT` drained into a writer, in constant memory.
//!
//! Both loops are written once, as macros expanded with and without
//! `.await` (the crate's pattern for sync/async twins, see
//! `client/requests.rs` in the core): `std::io::Read` / `Write` and tokio's
//! `AsyncReadExt` / `AsyncWriteExt` have the same method names.

use hyperdb_api_core::client::Client;

/// Bytes read from the caller's reader into one `CopyData` message, which
/// is written out before the next read: an import holds this twice (the
/// read buffer and the send buffer).
pub(crate) const CHUNK: usize = 256 * 1024;

/// A client a running COPY FROM STDIN can be aborted on without waiting.
pub(crate) trait QueueCopyFail {
    fn queue_copy_fail(&mut self, reason: &str);
}

impl QueueCopyFail for Client {
    fn queue_copy_fail(&mut self, reason: &str) {
        Client::queue_copy_fail(self, reason);
    }
}

#[cfg(feature = "async")]
impl QueueCopyFail for hyperdb_api_core::client::AsyncClient {
    fn queue_copy_fail(&mut self, reason: &str) {
        hyperdb_api_core::client::AsyncClient::queue_copy_fail(self, reason);
    }
}

/// Queues `CopyFail` for a COPY FROM STDIN still running when it is
/// dropped: a reader that panicked, or an async copy whose future was
/// dropped. The connection's next request sends it and settles the reply,
/// so the table keeps its old rows and the connection stays usable.
pub(crate) struct CopyInGuard<'a, C: QueueCopyFail> {
    pub(crate) client: &'a mut C,
    pub(crate) armed: bool,
}

impl<C: QueueCopyFail> Drop for CopyInGuard<'_, C> {
    fn drop(&mut self) {
        if self.armed {
            self.client
                .queue_copy_fail("the COPY input was abandoned by the client");
        }
    }
}

/// The body of `copy_in_csv`: starts the COPY `$sql`, sends what
/// `$reader` yields in [`CHUNK`]-sized messages, ends it; the rows stored.
/// A read error aborts the COPY (nothing stored, the connection settled and
/// usable) and is returned as [`crate::Error::Io`].
///
/// The reader fills a buffer of its own, not the send buffer: a future
/// dropped while the reader waits must leave only whole messages queued,
/// for the guard's `CopyFail` to follow.
macro_rules! copy_in_from_reader {
    ($client:expr, $sql:expr, $reader:expr; $($aw:tt)*) => {{
        use hyperdb_api_core::protocol::frontend;
        // Armed while the COPY starts too: a future dropped while waiting
        // for the server's go-ahead leaves the server waiting for data.
        let mut copy = $crate::files::stream::CopyInGuard { client: $client, armed: true };
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
                    copy.client.flush() $($aw)* ?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    copy.armed = false;
                    copy.client.queue_copy_fail("reading the COPY input failed");
                    if let Err(settle) = copy.client.settle() $($aw)* {
                        tracing::warn!("settling a COPY aborted for a read error: {settle}");
                    }
                    return Err($crate::error::Error::io("reading the CSV input of a COPY", e));
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
