//! The request surface of a driver, written once for both drivers.
//!
//! `request_methods!(async; .await)` expands it for the tokio driver and
//! `request_methods!(;)` for the std one. A driver provides `flush` and
//! `fill` and keeps a `state: DriverState`;
//! everything that decides *what* to send and *how to read the reply* lives
//! here and in `protocol::ops`, so the two drivers cannot drift.

macro_rules! request_methods {
    ($($async_kw:ident)? ; $($aw:tt)*) => {
        /// Sends the startup message and authenticates.
        $($async_kw)? fn startup(&mut self, config: &Config) -> Result<()> {
            self.state.deadline = config.connect_timeout.map(Deadline::connect);
            let options = config.startup_options();
            let params = [("options", options.as_str())];
            let mut op = ops::Startup::send(
                &mut self.state.session,
                &config.user,
                config.password.as_deref(),
                config.require_auth(),
                config.database.as_deref(),
                params,
            )?;
            if let Err(e) = self.run(&mut op) $($aw)* {
                // The server ends a failed startup by closing the socket; wait
                // for that, so what it held for us (a database file) is free
                // when the caller sees the error.
                if e.kind() == ErrorKind::Server {
                    self.await_server_close(Duration::from_secs(1)) $($aw)*;
                }
                return Err(e);
            }
            self.state.deadline = None;
            self.state.cancel = self.state.cancel.with_key(self.state.session.backend_key());
            Ok(())
        }

        /// Reads and discards until the server closes the socket, or `limit`.
        $($async_kw)? fn await_server_close(&mut self, limit: Duration) {
            self.state.deadline = Some(Deadline::connect(limit));
            loop {
                self.state.session.read_buf().clear();
                if self.fill() $($aw)* .is_err() {
                    break;
                }
            }
            self.state.deadline = None;
        }

        /// Makes the connection ready for a new request: fails if it is
        /// broken, settles what is left of an abandoned request (see
        /// `end_abandoned_stream`), and starts the query timeout. The
        /// settling (which may first send what a dropped writer queued)
        /// runs under a query timeout of its own.
        $($async_kw)? fn begin(&mut self) -> Result<()> {
            self.state.session.check_usable()?;
            if self.state.ahead && self.state.session.outstanding() == 1 {
                // Only the command sent ahead is owed: this request goes
                // out behind it, and `run` reads its reply first.
                self.state.deadline = self.state.query_timeout.map(Deadline::query);
                return Ok(());
            }
            // Anything else owed too: the reply is drained with the rest.
            self.state.ahead = false;
            if self.state.session.outstanding() > 0 {
                self.state.deadline = self.state.query_timeout.map(Deadline::query);
                if self.state.session.stream_endable() {
                    self.end_abandoned_stream() $($aw)* ?;
                    self.state.deadline = self.state.query_timeout.map(Deadline::query);
                }
            }
            while self.state.session.outstanding() > 0 {
                match self.run(&mut ops::Drain) $($aw)* {
                    Ok(()) => {}
                    // The abandoned request's own error; nobody is waiting for it.
                    Err(e) if e.kind() == ErrorKind::Server => {}
                    Err(e) => return Err(e),
                }
            }
            // A queued COPY's answer, if it was owed, was drained with the rest.
            self.state.queued_copy = QueuedCopy::Settled;
            self.state.deadline = self.state.query_timeout.map(Deadline::query);
            Ok(())
        }

        /// Ends an abandoned result stream (rows or COPY OUT) whose
        /// statement still runs: its rest is read and discarded up to
        /// [`ABANDONED_DRAIN_BYTES`](crate::client::ABANDONED_DRAIN_BYTES)
        /// or for up to
        /// [`ABANDONED_DRAIN_WAIT`](crate::client::ABANDONED_DRAIN_WAIT),
        /// and if it goes on past either the statement is cancelled, so
        /// only what was in flight is read rather than the whole rest
        /// (issue 18: 50M dropped rows cost the next query 0.5-5 s), and a
        /// statement that sends nothing for long (an aggregate) is not
        /// waited for; DEVELOPMENT.md has the figures. A query not yet
        /// described is read until it is: a command (`NoData`) is then
        /// drained, never cancelled.
        ///
        /// Inside a transaction block the rest is read whatever its size:
        /// a cancelled statement fails the transaction (hyperd then rolls
        /// it back at `COMMIT`), and leaving a result early (a `break`, a
        /// `query_one`) must not lose the transaction's writes. Unless a
        /// request is queued behind the stream: that is a dropped
        /// transaction's `ROLLBACK`, and the rest is cancelled as outside.
        ///
        /// The cancel names the session, not the statement, so it must not
        /// be able to reach another one: it goes out only once the
        /// stream's request went out whole (sent here first if a dropped
        /// flush left a part, unless a request is queued behind it: then
        /// the rest is read as before) and while nothing was sent behind
        /// it, and nothing queued is sent until the stream's
        /// `ReadyForQuery` is read.
        $($async_kw)? fn end_abandoned_stream(&mut self) -> Result<()> {
            if !self.state.session.stream_request_out() {
                if self.state.session.stream_queued_behind() {
                    return Ok(());
                }
                self.flush() $($aw)* ?;
            }
            let mut read = 0usize;
            // Not cancelling is the same as having cancelled already.
            let mut cancelled = self.state.session.transaction_status()
                != crate::protocol::backend::TransactionStatus::Idle
                && !self.state.session.stream_queued_behind();
            let patience = std::time::Instant::now() + crate::client::ABANDONED_DRAIN_WAIT;
            while !self.drain_received() {
                if !cancelled
                    && self.state.session.stream_cancellable()
                    && (read >= crate::client::ABANDONED_DRAIN_BYTES
                        || std::time::Instant::now() >= patience)
                {
                    self.cancel_running() $($aw)*;
                    cancelled = true;
                    // No query deadline may cancel again, and a server that
                    // answers neither gives the connection up (see
                    // `Deadline::abandoned`).
                    self.state.deadline = Some(Deadline::abandoned());
                }
                let before = self.state.session.read_buf().len();
                // Until the cancel the wait is bounded too: a statement
                // that sends nothing for long is cancelled, not waited for.
                let until = Some(patience)
                    .filter(|at| !cancelled && std::time::Instant::now() < *at);
                if self.fill_until(until) $($aw)* ? {
                    read += self.state.session.read_buf().len().saturating_sub(before);
                }
            }
            Ok(())
        }

        /// Discards the first owed reply as far as it was received, without
        /// I/O; `true` once it is complete (its `ReadyForQuery` read).
        fn drain_received(&mut self) -> bool {
            let owed = self.state.session.outstanding();
            loop {
                match self.state.session.next_message() {
                    Ok(Some(_)) if self.state.session.outstanding() < owed => return true,
                    Ok(Some(_)) => {}
                    Ok(None) => return false,
                    // A server error comes with its ReadyForQuery; anything
                    // else broke the session, which `begin` then reports.
                    Err(_) => return true,
                }
            }
        }

        /// Sends what is queued and drains every reply still owed (an
        /// aborted COPY's, an abandoned result's), so that the server is
        /// idle now rather than at the next request. For writers that abort
        /// and then hand the connection on.
        pub $($async_kw)? fn settle(&mut self) -> Result<()> {
            self.state.ahead = false;
            let settled = self.begin() $($aw)*;
            self.state.deadline = None;
            settled
        }

        /// Feeds messages to `op` until it finishes, reading as needed;
        /// the reply of a command sent ahead comes first, and its error is
        /// this request's (whose reply is then drained by the next one).
        #[inline]
        $($async_kw)? fn run<O: ops::Operation>(&mut self, op: &mut O) -> Result<O::Output> {
            self.settle_ahead() $($aw)* ?;
            self.run_op(op) $($aw)*
        }

        $($async_kw)? fn run_op<O: ops::Operation>(&mut self, op: &mut O) -> Result<O::Output> {
            loop {
                match self.state.session.next_message() {
                    Ok(Some(msg)) => match op.on_message(&mut self.state.session, msg) {
                        Ok(Some(out)) => {
                            if self.state.session.outstanding() == 0 {
                                self.state.deadline = None;
                            }
                            return Ok(out);
                        }
                        Ok(None) => {}
                        Err(e) => {
                            if e.kind() != ErrorKind::Server {
                                self.state.session.mark_broken(&e);
                            }
                            return Err(self.timeout_or(e));
                        }
                    },
                    Ok(None) => {
                        if !self.state.session.write_buf().is_empty() {
                            self.flush() $($aw)* ?;
                        }
                        self.fill() $($aw)* ?;
                    }
                    Err(e) => {
                        let e = self.timeout_or(e);
                        if self.state.session.outstanding() == 0 {
                            self.state.deadline = None;
                        }
                        return Err(e);
                    }
                }
            }
        }

        /// `e`, or, when it is the server's cancellation of a statement
        /// whose query timeout sent the cancel, `e` as a timeout.
        fn timeout_or(&self, e: Error) -> Error {
            let timed_out = self.state.deadline.as_ref().is_some_and(|d| d.cancelled_by_timeout());
            if timed_out && e.is_cancelled() {
                e.into_timeout(self.state.query_timeout)
            } else {
                e
            }
        }

        /// Runs SQL through the simple query protocol; returns the affected
        /// row count of the last statement. Result rows are discarded.
        pub $($async_kw)? fn execute(&mut self, sql: &str) -> Result<u64> {
            self.begin() $($aw)* ?;
            let mut op = ops::Command::send(&mut self.state.session, sql)?;
            self.run(&mut op) $($aw)*
        }

        /// Queues `sql`, a command whose rows are discarded, to go out with
        /// the next request in one write rather than in a round trip of
        /// its own. That request reads its reply first and fails with its
        /// error, if any. For a statement that only sets the stage for the
        /// next, such as the `BEGIN` of an insert's own transaction: each
        /// round trip saved is one network latency.
        pub $($async_kw)? fn execute_ahead(&mut self, sql: &str) -> Result<()> {
            self.begin() $($aw)* ?;
            ops::Command::send(&mut self.state.session, sql)?;
            self.state.ahead = true;
            Ok(())
        }

        /// Reads the reply of a command sent ahead, if any, before a COPY
        /// starts: were the command to fail, the COPY's answer would go
        /// unread while the server waits for its data.
        $($async_kw)? fn settle_ahead(&mut self) -> Result<()> {
            if self.state.ahead {
                self.state.ahead = false;
                self.run_op(&mut ops::Command::default()) $($aw)* ?;
            }
            Ok(())
        }

        /// Starts an extended-protocol query and returns its columns (empty
        /// for statements without rows); read rows with `next_row`.
        pub $($async_kw)? fn query(&mut self, req: &QueryRequest<'_>) -> Result<Vec<FieldDescription>> {
            self.begin() $($aw)* ?;
            let mut op = ops::QueryStart::send(&mut self.state.session, req)?;
            self.run(&mut op) $($aw)*
        }

        /// Starts `sql`, which takes no parameters, as a simple `Query` and
        /// returns its columns (empty for statements without rows); read
        /// rows, HyperBinary like every other result's, with `next_row`.
        /// The cheapest way to run a statement that is not prepared (see
        /// `ops::SimpleQueryStart`).
        ///
        /// After a `RESET` hyperd sends a simple `Query`'s rows as text
        /// (`Session::simple_results_binary`): the statement then goes as
        /// an unnamed extended-protocol query, which asks for HyperBinary
        /// itself, in the same one round trip.
        pub $($async_kw)? fn query_simple(&mut self, sql: &str) -> Result<Vec<FieldDescription>> {
            if !self.state.session.simple_results_binary() {
                return self.query(&QueryRequest::new(sql)) $($aw)*;
            }
            self.begin() $($aw)* ?;
            let mut op = ops::SimpleQueryStart::send(&mut self.state.session, sql)?;
            self.run(&mut op) $($aw)*
        }

        /// Runs `req` as a named statement from the session's statement
        /// cache: the first time `Parse` (named) + Bind + Describe +
        /// Execute in one round trip, then Bind + Execute only. With the
        /// cache off (capacity 0) this is [`query`](Self::query).
        ///
        /// A cached statement whose table was dropped and created again
        /// (hyperd: 40001) is prepared again and run once more; one whose
        /// rows no longer fit its description (0A000, see
        /// `Error::stale_statement`) too when `req.sql` only reads
        /// (`statements::reads_only`), else the error is returned. Either
        /// way the entry is gone and the next call prepares afresh; in a
        /// failed transaction nothing is retried.
        pub $($async_kw)? fn query_cached(&mut self, req: &QueryRequest<'_>) -> Result<Vec<FieldDescription>> {
            if self.state.session.statements().cache().capacity() == 0 {
                return self.query(req) $($aw)*;
            }
            let mut retried = false;
            loop {
                self.begin() $($aw)* ?;
                let statements = self.state.session.statements();
                let hit = statements
                    .cache()
                    .get(req.sql, req.param_types)
                    .map(|e| (e.name.clone(), e.columns.clone()));
                let Some((name, columns)) = hit else {
                    let name = statements.next_name("c");
                    let mut op = ops::QueryStart::send_as(&mut self.state.session, &name, req)?;
                    return match self.run(&mut op) $($aw)* {
                        Ok(fields) => {
                            let statements = self.state.session.statements();
                            let evicted = statements.cache().insert(req.sql, req.param_types, name, fields.clone());
                            for old in evicted {
                                statements.close_queue().push(old);
                            }
                            Ok(fields)
                        }
                        Err(e) => {
                            if op.parsed() {
                                self.state.session.statements().close_queue().push(name);
                            }
                            Err(e)
                        }
                    };
                };
                let described = (!columns.is_empty()).then_some(columns.len());
                let failed_before = self.state.session.transaction_status()
                    == crate::protocol::backend::TransactionStatus::Failed;
                let res = self.run_prepared(&name, described, req.params, req.param_formats, req.result_format) $($aw)*;
                let Err(e) = res else {
                    return Ok(columns);
                };
                let Some(retry) = crate::protocol::retry_after(&e, req.sql) else {
                    return Err(e);
                };
                let statements = self.state.session.statements();
                statements.cache().remove(&name);
                statements.close_queue().push(name);
                // A stale statement is the cache's doing, not the caller's:
                // inside a transaction that hyperd left running, it does
                // not fail the transaction (see `transaction_status`).
                if !retry || retried || failed_before || !self.state.session.forgive_failure() {
                    return Err(e);
                }
                retried = true;
            }
        }

        /// Prepares `sql` as the named statement `name` and reads its
        /// description (parameter types, result columns).
        pub $($async_kw)? fn prepare(&mut self, name: &str, sql: &str, param_types: &[u32]) -> Result<crate::protocol::StatementDescription> {
            self.begin() $($aw)* ?;
            let mut op = ops::Prepare::send(&mut self.state.session, name, sql, param_types)?;
            self.run(&mut op) $($aw)*
        }

        /// Runs the prepared statement `name`, which `described` result
        /// columns (`None`: no rows); read rows with `next_rows`. An error
        /// the server reports before the first row, and rows of another
        /// shape than described (`Error::stale_statement`), are returned
        /// here with the connection idle.
        pub $($async_kw)? fn query_prepared(
            &mut self,
            name: &str,
            described: Option<usize>,
            params: &[Option<&[u8]>],
            formats: &[i16],
            result_format: i16,
        ) -> Result<()> {
            self.begin() $($aw)* ?;
            self.run_prepared(name, described, params, formats, result_format) $($aw)*
        }

        $($async_kw)? fn run_prepared(
            &mut self,
            name: &str,
            described: Option<usize>,
            params: &[Option<&[u8]>],
            formats: &[i16],
            result_format: i16,
        ) -> Result<()> {
            let mut op = ops::BoundStart::send(&mut self.state.session, name, described, params, formats, result_format)?;
            self.run(&mut op) $($aw)* ?;
            // The first message after BindComplete, looked at in place.
            let limits = *self.state.session.limits();
            loop {
                let buf = self.state.session.read_buf();
                let peeked = crate::protocol::backend::peek_header(buf, &limits);
                match peeked {
                    Err(e) => return Err(self.broken(e)),
                    Ok(Some((b'D', _))) if buf.len() >= 7 => {
                        let fields = usize::from(u16::from_be_bytes([buf[5], buf[6]]));
                        if Some(fields) == described {
                            return Ok(());
                        }
                        // Rows of another plan: discard them (the
                        // statement's own error, if any, does not matter).
                        let _ = self.run(&mut ops::Drain) $($aw)*;
                        return Err(Error::stale_statement(name, described, fields));
                    }
                    Ok(Some((b'E', _))) => {
                        return self.run(&mut ops::Drain) $($aw)*;
                    }
                    Ok(Some((b'D', _))) | Ok(None) => self.fill() $($aw)* ?,
                    Ok(Some(_)) => return Ok(()),
                }
            }
        }

        /// One round trip that asks nothing of the server: a bare `Sync`,
        /// answered with `ReadyForQuery`. Fails with
        /// [`ErrorKind::Closed`] when the connection is gone.
        pub $($async_kw)? fn ping(&mut self) -> Result<()> {
            self.begin() $($aw)* ?;
            let mut op = ops::Ping::send(&mut self.state.session)?;
            self.run(&mut op) $($aw)*
        }

        /// The next rows of the running query (every complete row received),
        /// or `Done` once the server is ready again. Calling it with nothing
        /// running returns `Done`.
        #[inline]
        pub $($async_kw)? fn next_rows(&mut self) -> Result<RowEvent> {
            if self.state.session.outstanding() == 0 {
                return Ok(RowEvent::Done { affected: 0 });
            }
            self.run(&mut ops::NextRow::default()) $($aw)*
        }

        /// Starts `COPY ... FROM STDIN`; append CopyData frames to
        /// `copy_buf`, call `flush` as it grows, then `copy_in_finish`.
        pub $($async_kw)? fn copy_in(&mut self, copy_sql: &str) -> Result<CopyResponse> {
            self.settle_ahead() $($aw)* ?;
            self.begin() $($aw)* ?;
            let mut op = ops::CopyInStart::send(&mut self.state.session, copy_sql)?;
            self.state.copy_columns = None;
            let response = self.run(&mut op) $($aw)* ?;
            self.state.copy_columns = Some(response.column_formats.len());
            Ok(response)
        }

        /// [`copy_in`](Self::copy_in) without waiting for the server's
        /// answer: the statement goes out now, so the server plans the
        /// COPY while the caller makes its first frames, and the answer is
        /// read by [`copy_in_confirm`](Self::copy_in_confirm) (call it after
        /// the first frames went out) or by `copy_in_finish`. A small COPY
        /// is then one round trip instead of two. hyperd, like PostgreSQL,
        /// drops CopyData, CopyDone and CopyFail that reach it outside a
        /// COPY, so frames behind a statement it refuses cost nothing but
        /// their sending, and the refusal is the one error reported.
        ///
        /// Behind a command sent ahead (an insert's `BEGIN`) the statement
        /// goes in the same write, and that command's reply is read before
        /// this returns. Were the command to fail, the COPY would run
        /// without it: it is ended with CopyFail before any frame goes
        /// (nothing stored), and the command's error is returned.
        pub $($async_kw)? fn copy_in_early(&mut self, copy_sql: &str) -> Result<()> {
            self.begin() $($aw)* ?;
            ops::CopyInStart::send(&mut self.state.session, copy_sql)?;
            self.state.queued_copy = QueuedCopy::Unread;
            self.state.copy_columns = None;
            let mut sent = self.flush() $($aw)*;
            if sent.is_ok() {
                sent = self.settle_ahead() $($aw)*;
            }
            if sent.is_err() {
                self.queue_copy_fail("the command sent before the COPY failed");
            }
            sent
        }

        /// Sends what is queued and reads the answer to a
        /// [`copy_in_early`](Self::copy_in_early) statement, if it is
        /// still unread: the server's refusal is returned here (the
        /// connection is then idle, the COPY never ran), and again by each
        /// later step of that COPY. A no-op once the COPY runs.
        #[inline]
        pub $($async_kw)? fn copy_in_confirm(&mut self) -> Result<()> {
            match &self.state.queued_copy {
                QueuedCopy::Settled => Ok(()),
                QueuedCopy::Refused(db) => Err(Error::server((**db).clone())),
                QueuedCopy::Unread => {
                    self.state.queued_copy = QueuedCopy::Settled;
                    let answer = self.run(&mut ops::CopyInStart) $($aw)*;
                    match &answer {
                        Ok(response) => self.state.copy_columns = Some(response.column_formats.len()),
                        Err(e) => {
                            if let Some(db) = e.db_error() {
                                self.state.queued_copy = QueuedCopy::Refused(Box::new(db.clone()));
                            }
                        }
                    }
                    answer.map(drop)
                }
            }
        }

        /// Ends a COPY FROM STDIN with `CopyDone`; returns the rows the
        /// server stored, or its error (the table is then unchanged). A
        /// queued start's answer is read first: a refused COPY returns its
        /// error, and the `CopyDone` behind it is dropped by the server.
        pub $($async_kw)? fn copy_in_finish(&mut self) -> Result<u64> {
            let mut op = ops::CopyInFinish::done(&mut self.state.session);
            let confirmed = self.copy_in_confirm() $($aw)*;
            // Refused: nothing runs, so nothing more is owed.
            if confirmed.is_err() {
                self.state.queued_copy = QueuedCopy::Settled;
            }
            confirmed?;
            self.run(&mut op) $($aw)*
        }

        /// Starts `COPY (...) TO STDOUT`; read chunks with `next_copy_out`.
        pub $($async_kw)? fn copy_out(&mut self, copy_sql: &str) -> Result<CopyResponse> {
            self.begin() $($aw)* ?;
            let mut op = ops::CopyOut::send(&mut self.state.session, copy_sql)?;
            match self.run(&mut op) $($aw)* ? {
                ops::CopyOutEvent::Started(r) => Ok(r),
                other => {
                    let e = Error::protocol(format!("COPY TO STDOUT: expected CopyOutResponse, got {other:?}"));
                    self.state.session.mark_broken(&e);
                    Err(e)
                }
            }
        }

        /// The next chunk of a running COPY OUT, or `Done`.
        #[inline]
        pub $($async_kw)? fn next_copy_out(&mut self) -> Result<ops::CopyOutEvent> {
            if self.state.session.outstanding() == 0 {
                return Ok(ops::CopyOutEvent::Done { rows: 0 });
            }
            self.run(&mut ops::CopyOut::default()) $($aw)*
        }

        /// Queues `sql` as a simple query without waiting for its reply; the
        /// next request sends it and settles the reply first (its error, if
        /// any, is discarded). Lets `Drop` impls act without blocking.
        pub fn enqueue_command(&mut self, sql: &str) -> Result<()> {
            ops::Command::send(&mut self.state.session, sql).map(drop)
        }

        /// Queues `CopyFail` for a running COPY FROM STDIN without waiting:
        /// the next request sends it and settles the server's reply. For
        /// `Drop` impls of writers that must not block.
        pub fn queue_copy_fail(&mut self, reason: &str) {
            // A queued start's answer is drained with the rest by `begin`;
            // a refused one's COPY never ran, and the server drops this.
            self.state.queued_copy = QueuedCopy::Settled;
            // The reply is owed (the COPY's ReadyForQuery) and drained by `begin`.
            if let Err(e) = ops::CopyInFinish::fail(&mut self.state.session, reason) {
                tracing::warn!("could not queue CopyFail: {e}");
            }
        }

        /// Queues `CopyDone` for a running COPY FROM STDIN without
        /// waiting: the next request sends it and settles the server's
        /// reply. For `Drop` impls whose COPY must end without `CopyFail`
        /// (a CSV import ends with input the server refuses, then this;
        /// see `files/stream.rs` in hyperdb-api for why).
        pub fn queue_copy_done(&mut self) {
            self.state.queued_copy = QueuedCopy::Settled;
            // The reply is owed (the COPY's ReadyForQuery) and drained by `begin`.
            ops::CopyInFinish::done(&mut self.state.session);
        }

        /// The column count of the last COPY FROM STDIN the server
        /// accepted, from its `CopyInResponse`: for a COPY without a column
        /// list, the table's. `None` until that answer was read.
        pub fn copy_in_columns(&self) -> Option<usize> {
            self.state.copy_columns
        }

        /// See [`Session::set_mark`](crate::protocol::Session::set_mark).
        pub fn set_mark(&mut self, mark: u64) {
            self.state.session.set_mark(mark);
        }

        /// See [`Session::mark`](crate::protocol::Session::mark).
        pub fn mark(&self) -> Option<u64> {
            self.state.session.mark()
        }

        /// Where COPY IN frames are appended (the session's send buffer).
        pub fn copy_buf(&mut self) -> &mut BytesMut {
            self.state.session.write_buf()
        }

        /// Bytes written to the server since connecting (counted per
        /// flush): an insert's trace reports the difference across it.
        pub fn bytes_sent(&self) -> u64 {
            self.state.bytes_sent
        }

        /// The protocol state (transaction status, server parameters, ...).
        pub fn session(&self) -> &Session {
            &self.state.session
        }

        /// Named statements: names, the statement cache, queued closes.
        pub fn statements(&mut self) -> &mut crate::protocol::Statements {
            self.state.session.statements()
        }

        /// A handle that cancels this connection's running statement from
        /// any thread or task.
        pub fn cancel_handle(&self) -> CancelHandle {
            self.state.cancel.clone()
        }

        /// Sends `Terminate` and waits (up to 5 s) for the server to close the
        /// session, so files it had attached are released when this returns.
        pub $($async_kw)? fn close(mut self) -> Result<()> {
            if self.state.session.is_broken() {
                return Ok(());
            }
            frontend::terminate(self.state.session.write_buf());
            self.flush() $($aw)* ?;
            self.await_server_close(Duration::from_secs(5)) $($aw)*;
            Ok(())
        }

        /// Marks the connection broken after a protocol violation found
        /// above the session (a `DataRow` whose fields do not fill it, seen
        /// when the row is read): every later call fails with
        /// `ErrorKind::Closed`.
        pub fn mark_broken(&mut self, why: impl std::fmt::Display) {
            self.state.session.mark_broken(why);
        }

        /// Marks the session broken and passes the error on.
        fn broken(&mut self, e: Error) -> Error {
            self.mark_broken(&e);
            e
        }
    };
}
