//! The TLS record layer both drivers share, with no I/O: ciphertext in
//! from the socket, plaintext out to the session buffer, and the reverse.
//! The std and tokio streams only move bytes between it and their socket.
//!
//! Why not rustls's own `StreamOwned` / tokio-rustls: rustls reads at most
//! 4 KiB from a socket per call and tokio-rustls hands out one record
//! (16 KiB) per read, so a 10M-row result would take ~4x the syscalls of a
//! plain connection and a wakeup per record. Here one socket read fills a
//! read-window-sized buffer (1 MiB by default, as for plain sockets), and
//! one call decrypts as many records as the caller's window takes.

use std::io::{self, BufRead, Write};
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

use crate::client::TlsInfo;

/// What [`TlsSession::read_plaintext`] produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plaintext {
    /// This many bytes were appended.
    Data(usize),
    /// Nothing yet: read the socket into [`TlsSession::recv_buf`].
    NeedInput,
    /// The server closed the connection.
    Eof,
}

pub(crate) struct TlsSession {
    conn: ClientConnection,
    /// Ciphertext read from the socket and not yet given to rustls:
    /// `raw[head..tail]`. Zeroed once, so socket reads need no `unsafe`.
    raw: Box<[u8]>,
    head: usize,
    tail: usize,
    eof: bool,
    /// Ciphertext to send: `out[sent..]`.
    out: Vec<u8>,
    sent: usize,
}

impl std::fmt::Debug for TlsSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSession")
            .field("info", &self.info())
            .field("buffered_in", &(self.tail - self.head))
            .field("buffered_out", &(self.out.len() - self.sent))
            .finish()
    }
}

impl TlsSession {
    /// A client session whose ClientHello is queued in
    /// [`pending`](Self::pending). `window` is the socket read size.
    pub(crate) fn new(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        window: usize,
    ) -> Result<TlsSession, rustls::Error> {
        let mut conn = ClientConnection::new(config, name)?;
        // Encrypted records go straight on to `out`, which a flush empties:
        // rustls's own cap would only split a large flush.
        conn.set_buffer_limit(None);
        let mut session = TlsSession {
            conn,
            raw: vec![0; window].into_boxed_slice(),
            head: 0,
            tail: 0,
            eof: false,
            out: Vec::new(),
            sent: 0,
        };
        session.queue_output();
        Ok(session)
    }

    /// Where the next socket read goes. Called once everything read
    /// before has been handed to rustls, so the whole buffer is free.
    pub(crate) fn recv_buf(&mut self) -> &mut [u8] {
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        } else if self.tail == self.raw.len() {
            self.raw.copy_within(self.head..self.tail, 0);
            self.tail -= self.head;
            self.head = 0;
        }
        &mut self.raw[self.tail..]
    }

    /// `n` bytes were read into [`recv_buf`](Self::recv_buf); 0 is EOF.
    pub(crate) fn received(&mut self, n: usize) {
        self.tail += n;
        if n == 0 {
            self.eof = true;
        }
    }

    fn has_input(&self) -> bool {
        self.head < self.tail
    }

    /// Hands rustls the next piece of received ciphertext and processes
    /// the records it completes. A rustls error comes back as
    /// `InvalidData` with the `rustls::Error` inside (see [`tls_error`]).
    fn feed(&mut self) -> io::Result<()> {
        let n = self.conn.read_tls(&mut &self.raw[self.head..self.tail])?;
        self.head += n;
        let processed = self.conn.process_new_packets();
        // Handshake messages, key update replies, or the alert for an error.
        self.queue_output();
        processed
            .map(drop)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Processes received handshake records. Returns `Ok(false)` when the
    /// handshake needs more input; what to send is in `pending`.
    pub(crate) fn advance_handshake(&mut self) -> io::Result<bool> {
        while self.conn.is_handshaking() && self.has_input() {
            self.feed()?;
        }
        Ok(!self.conn.is_handshaking())
    }

    /// Appends decrypted bytes to `sink`, at most `limit` (at least 1) of
    /// them, from records already received; `sink` is called once per
    /// contiguous run.
    pub(crate) fn read_plaintext(
        &mut self,
        limit: usize,
        mut sink: impl FnMut(&[u8]),
    ) -> io::Result<Plaintext> {
        let limit = limit.max(1);
        let mut got = 0;
        loop {
            let mut reader = self.conn.reader();
            while got < limit {
                match reader.fill_buf() {
                    // Empty only after the server's close_notify.
                    Ok([]) => {
                        return Ok(if got > 0 {
                            Plaintext::Data(got)
                        } else {
                            Plaintext::Eof
                        })
                    }
                    Ok(chunk) => {
                        let take = chunk.len().min(limit - got);
                        sink(&chunk[..take]);
                        reader.consume(take);
                        got += take;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            if got == limit || (got > 0 && !self.has_input()) {
                return Ok(Plaintext::Data(got));
            }
            if !self.has_input() {
                return Ok(if self.eof {
                    Plaintext::Eof
                } else {
                    Plaintext::NeedInput
                });
            }
            self.feed()?;
        }
    }

    /// Encrypts `data` onto [`pending`](Self::pending).
    pub(crate) fn encrypt(&mut self, data: &[u8]) -> io::Result<()> {
        self.conn.writer().write_all(data)?;
        self.queue_output();
        Ok(())
    }

    /// Ciphertext waiting to be written to the socket.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// `n` bytes of [`pending`](Self::pending) were written.
    pub(crate) fn sent(&mut self, n: usize) {
        self.sent += n;
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    fn queue_output(&mut self) {
        while self.conn.wants_write() {
            // Writing to a Vec cannot fail.
            if self.conn.write_tls(&mut self.out).is_err() {
                break;
            }
        }
    }

    pub(crate) fn info(&self) -> TlsInfo {
        TlsInfo {
            protocol_version: self
                .conn
                .protocol_version()
                .map_or_else(String::new, |v| format!("{v:?}")),
            cipher_suite: self
                .conn
                .negotiated_cipher_suite()
                .map_or_else(String::new, |s| format!("{:?}", s.suite())),
            key_exchange: self
                .conn
                .negotiated_key_exchange_group()
                .map_or_else(String::new, |g| format!("{:?}", g.name())),
        }
    }
}

/// The rustls error inside an I/O error from [`TlsSession`], if any.
pub(crate) fn rustls_error(e: &io::Error) -> Option<rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>().cloned()
}
