//! Connection state shared by every driver: the receive and send buffers,
//! what the server still owes us, and the rules for messages that may arrive
//! at any time (notices, parameter statuses, errors).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use bytes::{Buf, BufMut, BytesMut};

use crate::error::{DbError, Error, Result, Severity, SqlState};
use crate::protocol::backend::{self, Message, TransactionStatus};
use crate::protocol::result_stream::ResultStream;
use crate::protocol::statements::{self, Statements};
use crate::protocol::Limits;

/// Where a large COPY OUT payload starts (Arrow needs 8; i128 wants 16).
const PAYLOAD_ALIGN: usize = 16;
/// `CopyData` messages from this size on are read on their own, aligned.
const ALIGNED_READ_MIN: usize = 64 * 1024;
/// A `CopyData` message of up to this many read windows, and at most twice
/// the largest one that arrived whole in the same COPY OUT, gets its whole
/// buffer once its header is read. hyperd's Arrow messages outgrow one
/// window on wide tables (~1.3 MiB each for a 16-column `lineitem`), and
/// growing the buffer as bytes arrived moved the first window's bytes of
/// every message: ~1 GiB copied over a 10M-row read, ~10 % of the client's
/// CPU (perf). Tied to a message that arrived, a declared length alone
/// still reserves nothing (the session fuzz target's bound).
const EAGER_WINDOWS: usize = 4;

/// A read goes into what is left of a receive buffer that callers still
/// hold parts of while at least this fraction of the read it wanted fits
/// there. Asking for a whole window instead made `BytesMut` allocate a
/// fresh one each time, and every message a caller kept (Node holds a
/// batch's memory until V8 collects it) pinned a window-sized allocation:
/// a 100,000-row read, ~20 messages of ~40 KB, held ~20 MiB, and a Node
/// process repeating it reached 500 MiB of RSS.
const SPARE_FRACTION: usize = 8;

/// How much a read may take when `have` bytes wait in the buffer: enough
/// to fill it to `window`, while what waits is a small rest (a message cut
/// off by the last read). The buffer then stays one window-sized
/// allocation, its rest moved to the front before each read; asking for a
/// whole window on top of the rest made it grow to twice the window, and
/// reads walked through all of it, more memory than a core's L2 holds at
/// 1 MiB windows (the kernel's copy into it cost ~1 ns a row more).
fn fill_to(have: usize, window: usize) -> usize {
    if have <= window / 2 {
        window - have
    } else {
        window
    }
}

/// Bytes to skip at the end of `buf` so that a message appended there has
/// its payload (after the 5-byte header) aligned.
fn misalignment(buf: &BytesMut) -> usize {
    let payload = buf.as_ptr() as usize + buf.len() + backend::HEADER;
    (PAYLOAD_ALIGN - payload % PAYLOAD_ALIGN) % PAYLOAD_ALIGN
}

/// Distinct `ParameterStatus` names a session keeps. hyperd 0.0.26963
/// reports 16; a server may add more at any time, and a hostile one could
/// send new names until memory runs out (reported: 1.5M names, +306 MiB), so
/// names beyond this many are ignored. Not an error: the values are
/// information for the caller ([`Session::parameter`]), nothing in the
/// protocol depends on them, and a connection that works should not break
/// because a later server reports more of them.
pub const MAX_PARAMETERS: usize = 256;
/// Longest `ParameterStatus` name kept, in bytes (hyperd's longest: 28).
pub const MAX_PARAMETER_NAME: usize = 256;
/// Longest `ParameterStatus` value kept, in bytes (hyperd's longest: 24).
/// With [`MAX_PARAMETERS`] and [`MAX_PARAMETER_NAME`], a session holds at
/// most ~1.1 MiB of parameters.
pub const MAX_PARAMETER_VALUE: usize = 4096;

/// Receives every `NoticeResponse` (warnings, infos) the server sends.
pub type NoticeHandler = Arc<dyn Fn(&DbError) + Send + Sync>;

/// Protocol state of one connection, without I/O.
///
/// Drivers append requests to [`Session::write_buf`], flush it, fill
/// [`Session::read_buf`] from the socket, and feed [`Session::next_message`]
/// to an [`crate::protocol::ops::Operation`].
///
/// Error rule: an `ErrorResponse` is held back and everything up to the
/// following `ReadyForQuery` is discarded; only then does `next_message`
/// return the server error. So when an operation sees a server error the
/// connection is already idle and usable. FATAL errors (and any error during
/// startup, after which the server closes) are returned at once and break the
/// session.
pub struct Session {
    read: BytesMut,
    write: BytesMut,
    limits: Limits,
    broken: Option<String>,
    in_startup: bool,
    pending_error: Option<Box<DbError>>,
    /// `ReadyForQuery` messages the server still owes: requests sent whose
    /// replies have not been fully read (also those of abandoned results).
    outstanding: u32,
    /// Set by the layer above, cleared when any request is queued: a
    /// fact it learned holds only while nothing else ran (see
    /// [`Session::set_mark`]).
    mark: Option<u64>,
    tx_status: TransactionStatus,
    /// A statement failed inside the transaction block that hyperd still
    /// reports as running: see [`Session::transaction_status`].
    failed_unreported: bool,
    /// At most [`MAX_PARAMETERS`] entries (see [`Session::set_parameter`]).
    parameters: HashMap<String, String>,
    /// Fields every `DataRow` of the running query has: its
    /// `RowDescription`'s column count; `None` when it described none.
    row_fields: Option<usize>,
    backend_key: Option<BackendKey>,
    notices: NoticeHandler,
    /// A COPY OUT is being read: large `CopyData` payloads are received
    /// aligned (see [`Session::prepare_read`]).
    copy_out: bool,
    /// The largest `CopyData` message (header included) that has arrived
    /// whole in this COPY OUT: what an eager buffer may be sized by.
    copy_out_largest: usize,
    /// The result stream owed first, for ending an abandoned one early.
    stream: ResultStream,
    statements: Statements,
    /// See [`Session::simple_results_binary`].
    simple_binary: bool,
    /// See [`Session::last_command_rolled_back`].
    rolled_back: bool,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("buffered_in", &self.read.len())
            .field("buffered_out", &self.write.len())
            .field("broken", &self.broken)
            .field("outstanding", &self.outstanding)
            .field("tx_status", &self.tx_status)
            .finish_non_exhaustive()
    }
}

/// Logs notices through `tracing`; the default handler.
pub fn default_notice_handler() -> NoticeHandler {
    Arc::new(|n: &DbError| tracing::info!(target: "hyperdb::notice", "{n}"))
}

impl Session {
    /// A session about to send its startup message.
    pub fn new(limits: Limits, notices: Option<NoticeHandler>) -> Session {
        Session {
            read: BytesMut::with_capacity(64 * 1024),
            write: BytesMut::with_capacity(64 * 1024),
            limits,
            broken: None,
            in_startup: true,
            pending_error: None,
            outstanding: 0,
            mark: None,
            tx_status: TransactionStatus::Idle,
            failed_unreported: false,
            parameters: HashMap::new(),
            row_fields: None,
            backend_key: None,
            notices: notices.unwrap_or_else(default_notice_handler),
            copy_out: false,
            copy_out_largest: 0,
            stream: ResultStream::default(),
            statements: Statements::new(0),
            simple_binary: true,
            rolled_back: false,
        }
    }

    /// Sets how many statements the `*_params` cache keeps (0: off).
    pub fn with_statement_cache(mut self, capacity: usize) -> Session {
        self.statements = Statements::new(capacity);
        self
    }

    /// Named statements: the cache, queued closes, names.
    pub fn statements(&mut self) -> &mut Statements {
        &mut self.statements
    }

    /// Whether a simple `Query`'s rows come as HyperBinary, as every
    /// session starts (the startup setting `result_format_code`, see
    /// `SIMPLE_QUERY_FORMAT`). A `RESET ALL` takes it back to hyperd's
    /// default, text, which a `SET` cannot undo (hyperd refuses it, 0A000),
    /// and `set_config` can set it: read as HyperBinary, the text `1234`
    /// was the INTEGER 875770417. Once any `RESET` or `set_config` was sent
    /// (`Session::note_sql`) this is false for the rest of the session.
    pub fn simple_results_binary(&self) -> bool {
        self.simple_binary
    }

    /// The text of a statement about to be sent: one that may change the
    /// catalog or the session ([`statements::sql_may_change_catalog`]) is
    /// counted, and empties the statement cache, before its tag could; a
    /// `RESET` or a `set_config` may also take `result_format_code` from
    /// HyperBinary, so simple queries stop relying on it
    /// ([`Session::simple_results_binary`]).
    pub(crate) fn note_sql(&mut self, sql: &str) {
        if statements::sql_may_change_catalog(sql) {
            self.statements.note_change();
            if statements::first_word(sql).eq_ignore_ascii_case("RESET")
                || statements::calls_set_config(sql)
            {
                self.simple_binary = false;
            }
        }
    }

    /// Whether the last command completed with the tag `ROLLBACK`: how
    /// hyperd answers a `COMMIT` of a transaction it had ended, with no
    /// error (as PostgreSQL does for a failed one). A cancel request that
    /// arrives while the session waits between statements of a
    /// transaction ends it so (measured: the rows inserted before it were
    /// gone, and the `COMMIT` said `ROLLBACK`).
    pub fn last_command_rolled_back(&self) -> bool {
        self.rolled_back
    }

    /// Commands so far that may have changed the catalog or the session's
    /// state ([`Statements::changes`]).
    pub fn catalog_changes(&self) -> u64 {
        self.statements.changes()
    }

    /// Where dropped statement handles queue their `Close` (a clone of the
    /// session's queue).
    pub fn close_queue(&self) -> crate::protocol::CloseQueue {
        self.statements.close_queue().clone()
    }

    /// This session's id, unique in the process (see [`Statements::session_id`]).
    pub fn session_id(&self) -> u64 {
        self.statements.session_id()
    }

    /// Appends a `Close` for every statement queued for closing; extended
    /// requests call it first, so the closes share their `Sync`.
    pub(crate) fn write_queued_closes(&mut self) -> Result<()> {
        self.statements.write_closes(&mut self.write)
    }

    /// Readies the receive buffer for the next read and returns how many
    /// bytes that read may take (at most `window`). Drivers call it before
    /// every read.
    ///
    /// Outside a COPY OUT this is what fills the buffer up to `window`
    /// (`fill_to`). While a COPY OUT is read, each
    /// large `CopyData` message is read on its own into a buffer positioned
    /// so that its payload starts 16-byte aligned: the header first (5
    /// bytes), then exactly the rest of the message. An Arrow IPC payload is
    /// then decoded in place; misaligned, arrow-ipc copies every column
    /// buffer of every batch, most of a scan's client time. One extra small
    /// read per message (hundreds of KiB each from hyperd) is the price.
    pub fn prepare_read(&mut self, window: usize) -> usize {
        if !self.copy_out {
            return self.room(fill_to(self.read.len(), window));
        }
        let have = self.read.len();
        if have == 0 {
            self.room(window + PAYLOAD_ALIGN);
            let skip = misalignment(&self.read);
            self.read.put_bytes(0, skip);
            self.read.advance(skip);
            return backend::HEADER;
        }
        if have < backend::HEADER {
            return backend::HEADER - have;
        }
        match backend::peek_header(&self.read, &self.limits) {
            Ok(Some((b'd', len))) if len >= ALIGNED_READ_MIN => {
                let total = backend::HEADER + len;
                if have >= total {
                    return self.room(window);
                }
                let limit = (total - have).min(window);
                // Only the header read so far, and a message of a few
                // windows and at most twice one that arrived whole: room
                // for all of it now, so that no read after the first moves
                // payload bytes. The memory still follows bytes that came.
                let eager = have <= backend::HEADER
                    && total <= EAGER_WINDOWS * window
                    && total <= 2 * self.copy_out_largest;
                let need = if eager { total } else { have + limit };
                if self.read.capacity() < need {
                    // Room for the next read, the payload still aligned:
                    // only what was read of it so far moves (normally the
                    // header alone). The whole message at once when it is
                    // small enough to be eager or the next read may end it,
                    // else twice the room there was: the declared length
                    // alone is a hostile server's to choose, so past a few
                    // windows memory follows the bytes that arrived.
                    let room = if eager {
                        total
                    } else {
                        total.min((have + limit).max(2 * self.read.capacity()))
                    };
                    let mut fresh = BytesMut::with_capacity(room + PAYLOAD_ALIGN);
                    let skip = misalignment(&fresh);
                    fresh.put_bytes(0, skip);
                    fresh.advance(skip);
                    fresh.extend_from_slice(&self.read);
                    self.read = fresh;
                }
                limit
            }
            _ => self.room(window),
        }
    }

    /// Makes room in the receive buffer for a read of up to `want` bytes
    /// and returns how many it may take: `want` when the buffer has the
    /// room or can make it without allocating (nothing else holds its
    /// memory, and what waits moves to the front), else what is left of
    /// it while that is at least `want / SPARE_FRACTION`; only past that a
    /// new allocation. Messages handed out of the buffer and still held
    /// then fill one allocation rather than pin one each.
    fn room(&mut self, want: usize) -> usize {
        if !self.read.try_reclaim(want) {
            let spare = self.read.capacity() - self.read.len();
            if spare >= want / SPARE_FRACTION && spare > 0 {
                return spare;
            }
            self.read.reserve(want);
        }
        want
    }

    /// Bytes received and not yet parsed; drivers append to it.
    pub fn read_buf(&mut self) -> &mut BytesMut {
        &mut self.read
    }

    /// Bytes queued for the server; drivers drain it.
    pub fn write_buf(&mut self) -> &mut BytesMut {
        &mut self.write
    }

    /// Records that a request expecting one `ReadyForQuery` was queued.
    pub fn expect_ready(&mut self) {
        self.stream.request_queued();
        self.outstanding += 1;
        self.mark = None;
    }

    /// Leaves `mark` on the session until the next request is queued. The
    /// API layer marks what its last request established (an inserter:
    /// the table it checked and wrote), which holds for its next request
    /// only if none of its own ran in between.
    pub fn set_mark(&mut self, mark: u64) {
        self.mark = Some(mark);
    }

    /// The mark set since the last request was queued, if any.
    pub fn mark(&self) -> Option<u64> {
        self.mark
    }

    /// Replies still owed by the server. Non-zero before a new request means
    /// an earlier result was abandoned and must be drained first.
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// The request just queued returns a result stream handed to the
    /// caller piece by piece: rows of a bound statement or a COPY OUT
    /// (`described`), or a query's rows if its description says so. See
    /// [`Session::stream_cancellable`].
    pub(crate) fn expect_stream(&mut self, described: bool) {
        self.stream.queued(described);
    }

    /// Drivers call this before they send what is queued.
    #[inline]
    pub fn note_send(&mut self) {
        self.stream.flush_started();
    }

    /// Drivers call this once everything queued went out.
    #[inline]
    pub fn note_sent(&mut self) {
        self.stream.flushed();
    }

    /// Whether the first owed reply is a result stream, or a query that
    /// may turn out to be one, with nothing sent behind its request: a
    /// driver may end it early (`end_abandoned_stream`), reading it until
    /// [`stream_cancellable`](Self::stream_cancellable) says so.
    pub fn stream_endable(&self) -> bool {
        self.stream.endable()
    }

    /// Whether that stream's request went out whole.
    pub fn stream_request_out(&self) -> bool {
        self.stream.request_out()
    }

    /// Whether a request was queued behind that stream: while
    /// [`stream_endable`](Self::stream_endable), it has not gone out, and
    /// nothing may go out before the stream's `ReadyForQuery` is read.
    pub fn stream_queued_behind(&self) -> bool {
        self.stream.queued_behind()
    }

    /// Whether the reply being read is a result stream whose statement
    /// still runs, with nothing sent after its request: a cancel request
    /// sent now (and answered before anything else is sent) can only reach
    /// that statement, or nothing once it has ended. What a driver does
    /// with an abandoned result (`begin`).
    pub fn stream_cancellable(&self) -> bool {
        self.stream.cancellable()
    }

    /// Startup finished; from now on errors wait for `ReadyForQuery`.
    pub(crate) fn finish_startup(&mut self) {
        self.in_startup = false;
    }

    /// Errors if the session cannot carry another request.
    pub fn check_usable(&self) -> Result<()> {
        match &self.broken {
            Some(why) => Err(Error::closed(format!("connection is unusable: {why}"))),
            None => Ok(()),
        }
    }

    pub fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    /// Marks the session unusable; every later request fails with `Closed`.
    pub fn mark_broken(&mut self, why: impl fmt::Display) {
        if self.broken.is_none() {
            self.broken = Some(why.to_string());
        }
    }

    /// Transaction status from the last `ReadyForQuery`, except that a
    /// transaction block in which any statement failed is `Failed` until
    /// it ends, whatever hyperd reports since. hyperd 0.0.26963 (measured)
    /// fails the block only for errors of simple `Query` messages: an
    /// error of an extended-protocol statement (one with parameters)
    /// leaves it running, and one sent into a failed block clears the
    /// failure, so a later `COMMIT` would store the writes around the
    /// failed statement. PostgreSQL fails the block on any error; the
    /// commits of this crate roll such a block back and report 25P02.
    pub fn transaction_status(&self) -> TransactionStatus {
        if self.failed_unreported && self.tx_status != TransactionStatus::Idle {
            TransactionStatus::Failed
        } else {
            self.tx_status
        }
    }

    /// Takes back the failure of the last error in a transaction block
    /// that hyperd did not count as failing it, for an error the client
    /// itself caused and repairs (a cached statement gone stale, prepared
    /// again and rerun); the caller checks that no earlier statement had
    /// failed the block. `false`, taking nothing back, when hyperd reports
    /// the block failed.
    pub fn forgive_failure(&mut self) -> bool {
        if self.tx_status == TransactionStatus::Failed {
            return false;
        }
        self.failed_unreported = false;
        true
    }

    /// A `ParameterStatus` value the server reported (e.g. `server_version`).
    /// `None` also for a name past [`MAX_PARAMETERS`] or a name or value
    /// longer than [`MAX_PARAMETER_NAME`] / [`MAX_PARAMETER_VALUE`].
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }

    /// Keeps a reported parameter within the caps: a name or value over
    /// its size limit is forgotten (an old value would be stale), a new
    /// name past [`MAX_PARAMETERS`] ignored, a known one updated.
    fn set_parameter(&mut self, name: String, value: String) {
        if name.len() > MAX_PARAMETER_NAME || value.len() > MAX_PARAMETER_VALUE {
            tracing::debug!(
                name_bytes = name.len(),
                value_bytes = value.len(),
                "oversized ParameterStatus not kept"
            );
            self.parameters.remove(&name);
            return;
        }
        let known = self.parameters.len();
        match self.parameters.get_mut(&name) {
            Some(slot) => *slot = value,
            None if known < MAX_PARAMETERS => {
                self.parameters.insert(name, value);
            }
            None => {
                tracing::debug!("ParameterStatus past the cap of {MAX_PARAMETERS} names not kept")
            }
        }
    }

    /// The running query's rows have `fields` fields each (its
    /// `RowDescription`), or come not at all (`None`: `NoData`).
    pub(crate) fn expect_row_fields(&mut self, fields: Option<usize>) {
        self.row_fields = fields;
    }

    /// Fields every `DataRow` of the running query must have; see
    /// [`expect_row_fields`](Self::expect_row_fields).
    #[inline]
    pub(crate) fn row_fields(&self) -> Option<usize> {
        self.row_fields
    }

    /// Process id and secret for cancel requests.
    pub fn backend_key(&self) -> Option<(i32, i32)> {
        self.backend_key.map(|k| (k.process_id, k.secret_key))
    }

    pub(crate) fn set_backend_key(&mut self, process_id: i32, secret_key: i32) {
        self.backend_key = Some(BackendKey {
            process_id,
            secret_key,
        });
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The next message for the current operation, or `Ok(None)` when more
    /// bytes are needed. Notices, parameter statuses and notifications are
    /// handled here and never returned; see the type docs for errors.
    pub fn next_message(&mut self) -> Result<Option<Message>> {
        loop {
            let msg = match backend::parse(&mut self.read, &self.limits) {
                Ok(Some(m)) => m,
                Ok(None) => return Ok(None),
                Err(e) => {
                    self.mark_broken(&e);
                    return Err(e);
                }
            };
            match msg {
                Message::NoticeResponse(n) => (self.notices)(&n),
                Message::ParameterStatus { name, value } => self.set_parameter(name, value),
                Message::NotificationResponse { channel, .. } => {
                    tracing::debug!(target: "hyperdb::notify", channel, "notification ignored");
                }
                Message::ErrorResponse(e) => {
                    let fatal = matches!(e.severity, Some(Severity::Fatal | Severity::Panic));
                    if fatal || self.in_startup {
                        self.mark_broken(&e.message);
                        return Err(Error::server(*e));
                    }
                    if out_of_step(&e) {
                        self.mark_broken(
                            "the server refused a message as too large and reads the rest \
                             of it as new messages: the connection is out of step",
                        );
                    }
                    // Keep the first error; later ones are consequences.
                    self.pending_error.get_or_insert(e);
                    self.stream.ended();
                }
                Message::ReadyForQuery(status) => {
                    // Rows were described, and neither CommandComplete nor
                    // an error followed: the result is cut short.
                    let cut_short = self.stream.open() && self.pending_error.is_none();
                    self.copy_out = false;
                    self.stream.ended();
                    self.tx_status = status;
                    match status {
                        TransactionStatus::Idle => self.failed_unreported = false,
                        _ if self.pending_error.is_some() => self.failed_unreported = true,
                        _ => {}
                    }
                    self.outstanding = self.outstanding.saturating_sub(1);
                    if let Some(e) = self.pending_error.take() {
                        return Err(Error::server(*e));
                    }
                    if cut_short {
                        return Err(Error::server(without_outcome()));
                    }
                    return Ok(Some(msg));
                }
                _ if self.pending_error.is_some() => {}
                Message::CopyOutResponse(_) => {
                    self.copy_out = true;
                    self.copy_out_largest = 0;
                    return Ok(Some(msg));
                }
                Message::CopyData(ref payload) => {
                    let whole = backend::HEADER + payload.len();
                    self.copy_out_largest = self.copy_out_largest.max(whole);
                    return Ok(Some(msg));
                }
                Message::CommandComplete(tag) => {
                    self.stream.ended();
                    self.statements.note_command(&tag);
                    self.rolled_back = tag == "ROLLBACK";
                    return Ok(Some(Message::CommandComplete(tag)));
                }
                Message::RowDescription(_) | Message::NoData => {
                    self.stream
                        .described(matches!(msg, Message::RowDescription(_)));
                    return Ok(Some(msg));
                }
                other => return Ok(Some(other)),
            }
        }
    }
}

/// A statement whose rows ended at `ReadyForQuery` with neither
/// `CommandComplete` nor an error: an incomplete result, never a finished
/// one. hyperd does this (its log: `query-end-canceled`, then no result
/// sent) when a second cancel request reaches it while it ends a statement
/// the first one cancelled, so it is reported as that cancel (57014).
#[cold]
fn without_outcome() -> DbError {
    let mut db = DbError::new(
        Some(SqlState::QUERY_CANCELED),
        "the server ended the statement without completing it: the rows read are incomplete \
         (hyperd does so for a statement it cancelled)",
    );
    db.severity = Some(Severity::Error);
    db
}

/// hyperd's answer to a `CopyData` over
/// [`MAX_COPY_DATA`](crate::protocol::frontend::MAX_COPY_DATA): it then
/// reads the rest of that message as new messages, so nothing after it can
/// be trusted. The client never sends one; this catches whatever else
/// does (bytes given to `send_raw`, a server with a lower limit).
fn out_of_step(e: &DbError) -> bool {
    e.code == Some(SqlState::PROGRAM_LIMIT_EXCEEDED) && e.message == "packet too large"
}

/// The key hyperd hands a session for cancel requests. Anyone who has it
/// can cancel the session's statements, so `Debug` (and with it every
/// `Debug` of a connection or cancel handle) never shows the secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct BackendKey {
    pub(crate) process_id: i32,
    pub(crate) secret_key: i32,
}

impl fmt::Debug for BackendKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendKey")
            .field("process_id", &self.process_id)
            .field("secret_key", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
