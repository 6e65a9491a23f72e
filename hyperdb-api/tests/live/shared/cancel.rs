//! Cancelling a stream's statement (and only its own), query timeouts,
//! and a 10M-row read in bounded memory.

use super::*;

// --- 9. cancel() ---------------------------------------------------------

/// Runs for minutes unless cancelled.
const LONG_QUERY: &str =
    "SELECT count(*) FROM generate_series(1, 100000000000) g(i) WHERE i % 7 = 3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_running_query() {
    let conn = connect().await;
    for (how, params) in [
        ("arrow", vec![]),
        ("datarows", vec![Value::Int(3)]),
        ("ipc", vec![]),
        ("handle", vec![]),
    ] {
        let sql = if params.is_empty() {
            LONG_QUERY.to_owned()
        } else {
            LONG_QUERY.replace("= 3", "= $1")
        };
        let c = conn.clone();
        let ipc = how == "ipc";
        let running = tokio::spawn(async move {
            if ipc {
                let mut s = c.query_arrow_ipc(&sql, params).await?;
                while let Some(chunk) = s.next().await {
                    chunk?;
                }
            } else {
                drain(c.query_arrow(&sql, params).await?).await?;
            }
            Ok::<_, Error>(())
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at = Instant::now();
        if how == "handle" {
            let handle = conn.cancel_handle();
            std::thread::spawn(move || handle.cancel().unwrap())
                .join()
                .unwrap();
        } else {
            conn.cancel().await.unwrap();
        }
        let e = timeout(Duration::from_secs(30), running)
            .await
            .expect("the query ends once cancelled")
            .unwrap()
            .unwrap_err();
        eprintln!(
            "cancel ({how}): the query ended {:?} after the cancel",
            at.elapsed()
        );
        assert!(e.is_cancelled(), "{how}: {e:?}");
        assert!(
            !e.is_timeout(),
            "{how}: a caller's cancel is no timeout: {e:?}"
        );
        assert_eq!(e.sqlstate(), "57014", "{how}: {e:?}");
        assert_eq!(scalar(&conn, "SELECT 11").await, 11, "{how}: usable after");
    }
}

/// "Cancels the statement running on the
/// connection now, if any": with none running, the CancelRequest (sent
/// and not waited for) lands on whatever call comes next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_idle_leaves_the_next_call_alone() {
    let conn = connect().await;
    let mut cancelled = Vec::new();
    for n in 0..20 {
        conn.cancel().await.unwrap();
        let sql = format!("SELECT {n} AS n");
        let result = match conn.query_arrow(&sql, vec![]).await {
            Ok(s) => drain(s).await.map(|_| ()),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            assert_eq!(e.sqlstate(), "57014", "{e:?}");
            cancelled.push(n);
        }
    }
    assert!(
        cancelled.is_empty(),
        "an idle cancel() cancelled the next query in runs {cancelled:?} of 20"
    );
}

/// A cancel right after a call is made reaches it, whether the call has
/// not got the connection yet, or has and hyperd has not started its
/// statement (a request that comes first is dropped, so it is repeated);
/// a call queued behind the cancelled one, and one made after the cancel,
/// run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_right_after_a_call_reaches_it() {
    let conn = connect().await;
    for round in 0..24u64 {
        let (sql, params) = long_query(round % 2 == 1);
        let running = tokio::spawn(drain_owned(conn.place(), sql, params));
        let behind = tokio::spawn(drain_owned(conn.place(), "SELECT 7".into(), vec![]));
        // From at once to after the call has started its statement.
        if round % 3 > 0 {
            tokio::time::sleep(Duration::from_micros(300 * (round % 3))).await;
        }
        let at = Instant::now();
        conn.cancel().await.unwrap();
        let after = tokio::spawn(drain_owned(conn.place(), "SELECT 8".into(), vec![]));
        expect_cancelled(running, round).await;
        assert!(at.elapsed() < Duration::from_secs(10), "round {round}");
        let behind = behind.await.unwrap().expect("the call behind runs");
        assert_eq!(behind[0].num_rows(), 1, "round {round}");
        let after = after
            .await
            .unwrap()
            .expect("a call made after the cancel runs");
        assert_eq!(after[0].num_rows(), 1, "round {round}");
    }
}

/// The same for one call's own cancel ([`hyperdb_api::CancelToken`],
/// what Node's `AbortSignal` uses): cancelled at once or a moment after
/// the call was made, the call ends with 57014 rather than running on
/// (hyperd drops a request that comes before the statement).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cancel_right_after_its_call_reaches_it() {
    let conn = connect().await;
    for round in 0..120u64 {
        let (sql, params) = long_query(round % 2 == 1);
        let token = hyperdb_api::CancelToken::new();
        let place = conn.place();
        let for_call = token.clone();
        let running = tokio::spawn(async move {
            drain(place.query_arrow(&sql, params, Some(&for_call)).await?).await
        });
        // From at once to after the call has started its statement (a
        // sleep would be a millisecond at least): before the fix, the 150 us
        // one was lost.
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(10 * (round % 20)) {}
        token.cancel().await.unwrap();
        expect_cancelled(running, round).await;
        assert_eq!(scalar(&conn, "SELECT 12").await, 12, "round {round}");
    }
}

/// A command's own token (Node's `executeCommand` with a `signal`): a
/// cancel right after the call, or a moment later, ends it with 57014; a
/// token cancelled before its command's turn keeps it from running; and
/// one cancelled after its command ended touches nothing that follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cancels_its_command() {
    let conn = connect().await;
    for round in 0..20u64 {
        let (sql, params) = long_query(round % 2 == 1);
        let token = hyperdb_api::CancelToken::new();
        let place = conn.place();
        let for_call = token.clone();
        let running =
            tokio::spawn(
                async move { place.execute_command(&sql, &params, Some(&for_call)).await },
            );
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(50 * round) {}
        token.cancel().await.unwrap();
        expect_cancelled(running, round).await;
        assert_eq!(scalar(&conn, "SELECT 12").await, 12, "round {round}");
    }
    conn.execute_command("CREATE TEMPORARY TABLE never (i INT)", &[])
        .await
        .unwrap();
    let token = hyperdb_api::CancelToken::new();
    token.cancel().await.unwrap();
    let e = conn
        .place()
        .execute_command("INSERT INTO never VALUES (1)", &[], Some(&token))
        .await
        .unwrap_err();
    assert!(e.is_cancelled(), "{e:?}");
    assert_eq!(scalar(&conn, "SELECT count(*) FROM never").await, 0);

    let token = hyperdb_api::CancelToken::new();
    let one = conn.place().execute_command("SELECT 1", &[], Some(&token));
    assert_eq!(one.await.unwrap(), 1);
    let c = conn.clone();
    let next = tokio::spawn(async move { c.execute_command(&two_seconds(1), &[]).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    token.cancel().await.unwrap();
    assert_eq!(
        next.await.unwrap().unwrap(),
        1,
        "the next call ran to its end"
    );
}

/// A cancel request that reaches hyperd between two statements of a
/// transaction (one meant for a call whose statement hyperd has not yet
/// got) rolls the transaction back, and the call's statement fails
/// without running: as cancelled (57014), not as the 25P02 hyperd sends,
/// and the COMMIT then fails (25P02) with nothing stored; so for a
/// command, a query and an insert. Once the transaction has failed,
/// hyperd's own 25P02 stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_between_statements_of_a_transaction_cancels_the_next() {
    let conn = connect().await;
    let handle = conn.cancel_handle();
    conn.execute_command("CREATE TEMPORARY TABLE t (i INT)", &[])
        .await
        .unwrap();
    let insert = || conn.execute_command("INSERT INTO t VALUES (1)", &[]);
    let read = || async { drain(conn.query_arrow("SELECT i FROM t", vec![]).await?).await };
    for statement in ["command", "query", "insert"] {
        conn.execute_command("BEGIN", &[]).await.unwrap();
        insert().await.unwrap();
        handle.cancel_async().await.unwrap();
        let e = match statement {
            "command" => insert().await.unwrap_err(),
            "query" => read().await.unwrap_err(),
            _ => conn.insert_sink("t", None).await.unwrap_err(),
        };
        assert!(
            matches!(e, hyperdb_api::Error::CancelledTransaction),
            "{statement}: {e:?}"
        );
        assert_eq!(e.sqlstate(), "57014");
        assert!(e.is_cancelled());
        // The transaction failed: what follows is refused as hyperd says.
        let e = insert().await.unwrap_err();
        assert_eq!(e.sqlstate(), "25P02", "{statement}: {e:?}");
        assert!(!e.is_cancelled());
        let e = conn.place().commit().await.unwrap_err();
        assert_eq!(e.sqlstate(), "25P02", "{statement}: {e:?}");
        assert_eq!(scalar(&conn, "SELECT count(*) FROM t").await, 0);
    }
    insert().await.unwrap();
    assert_eq!(scalar(&conn, "SELECT count(*) FROM t").await, 1);
}

/// `running` ends with 57014 within 30 s.
async fn expect_cancelled<T: std::fmt::Debug>(
    running: tokio::task::JoinHandle<hyperdb_api::Result<T>>,
    round: u64,
) {
    let e = timeout(Duration::from_secs(30), running)
        .await
        .unwrap_or_else(|_| panic!("round {round}: the cancel was lost"))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.sqlstate(), "57014", "round {round}: {e:?}");
}

/// [`LONG_QUERY`], with its constant as a parameter or not.
fn long_query(with_parameter: bool) -> (String, Vec<Value>) {
    if with_parameter {
        (LONG_QUERY.replace("= 3", "= $1"), vec![Value::Int(3)])
    } else {
        (LONG_QUERY.to_owned(), vec![])
    }
}

async fn drain_owned(
    place: hyperdb_api::Place,
    sql: String,
    params: Vec<Value>,
) -> hyperdb_api::Result<Vec<RecordBatch>> {
    drain(place.query_arrow(&sql, params, None).await?).await
}

/// About two seconds of work (hyperd, 2 cores); `r` in 1..=6 salts it.
fn two_seconds(r: i64) -> String {
    format!("SELECT count(*) FROM generate_series(1, 1000000000) g(i) WHERE i % 7 = {r}")
}
const TWO_SECONDS_COUNT: i64 = 142_857_143;

/// `ResultStream::cancel` (through its `canceller()`, from another task)
/// ends that stream with 57014 while it is read from the connection; once
/// the stream no longer reads from it (read to its end, or spilled), it
/// must not cancel the call that runs next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streams_canceller_cancels_only_its_own_statement() {
    const ENDLESS: &str = "SELECT i FROM generate_series(1, 100000000000) g(i) WHERE i > $1";
    let conn = connect().await;
    for params in [vec![], vec![Value::Int(0)]] {
        let sql = if params.is_empty() {
            ENDLESS.replace("$1", "2")
        } else {
            ENDLESS.to_owned()
        };
        let mut s = conn.query_arrow(&sql, params).await.unwrap();
        assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
        let canceller = s.canceller();
        let at = Instant::now();
        tokio::spawn(async move { canceller.cancel().await })
            .await
            .unwrap()
            .unwrap();
        let e = timeout(Duration::from_secs(30), async {
            loop {
                match s.next().await {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break e,
                    None => panic!("{sql}: ended without an error"),
                }
            }
        })
        .await
        .expect("the stream ends once cancelled");
        eprintln!("stream cancel: the stream ended {:?} after", at.elapsed());
        assert!(e.is_cancelled(), "{sql}: {e:?}");
        assert_eq!(e.sqlstate(), "57014", "{sql}: {e:?}");
        assert_eq!(scalar(&conn, "SELECT 14").await, 14);
    }

    // Read to its end: cancelling it later leaves the next call alone.
    let s = conn
        .query_arrow(&series_sql(1000, 31), vec![])
        .await
        .unwrap();
    let canceller = s.canceller();
    assert_eq!(drain(s).await.unwrap().len(), 1);
    let next = {
        let conn = conn.clone();
        tokio::spawn(async move { scalar(&conn, &two_seconds(1)).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    canceller.cancel().await.unwrap();
    assert_eq!(next.await.unwrap(), TWO_SECONDS_COUNT, "not cancelled");

    // Spilled: it reads no more from the connection either.
    const N: i64 = 1_000_000;
    let mut a = conn.query_arrow(&series_sql(N, 32), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    let next = {
        let conn = conn.clone();
        tokio::spawn(async move { scalar(&conn, &two_seconds(2)).await })
    };
    // Time for the spill (~0.1 s for 1M rows) and for the call to start.
    tokio::time::sleep(Duration::from_millis(700)).await;
    a.cancel().await.unwrap();
    assert_eq!(next.await.unwrap(), TWO_SECONDS_COUNT, "not cancelled");
    while let Some(b) = a.next().await {
        tally.add(&b.unwrap());
    }
    assert_eq!(tally, Series::expect(N), "the spilled stream is whole");
}

/// A query timeout (`ConnectOptions::with_query_timeout`) ends a shared
/// stream with HYT00, told apart from a caller's cancel; the connection
/// stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_timeout_ends_a_shared_stream() {
    let options = options().with_query_timeout(Some(Duration::from_millis(400)));
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    for params in [vec![], vec![Value::Int(3)]] {
        let sql = if params.is_empty() {
            LONG_QUERY.to_owned()
        } else {
            LONG_QUERY.replace("= 3", "= $1")
        };
        let started = Instant::now();
        let e = timeout(Duration::from_secs(30), query_error(&conn, &sql, params))
            .await
            .expect("the timeout fires");
        eprintln!(
            "query timeout: the query ended after {:?}",
            started.elapsed()
        );
        assert!(e.is_timeout(), "{e:?}");
        assert_eq!(e.sqlstate(), "HYT00", "{e:?}");
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert_eq!(scalar(&conn, "SELECT 15").await, 15);
    }
}

// --- 10. Bounded memory --------------------------------------------------

/// Count, checksums and value checks over the `m` table's batches, with
/// the peak RSS growth.
struct Tally {
    rows: i64,
    ids: i64,
    sensors: i64,
    bad: usize,
    rss: RssGrowth,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            rows: 0,
            ids: 0,
            sensors: 0,
            bad: 0,
            rss: RssGrowth::new(),
        }
    }

    fn add(&mut self, b: &RecordBatch) {
        let ids = b.column(0).as_primitive::<Int32Type>();
        let sensors = b.column(1).as_primitive::<Int32Type>();
        let values = b.column(2).as_primitive::<Float64Type>();
        let ts = b.column(3).as_primitive::<Int64Type>();
        self.rows += b.num_rows() as i64;
        for i in 0..b.num_rows() {
            let id = ids.value(i);
            self.ids += i64::from(id);
            self.sensors += i64::from(sensors.value(i));
            if values.value(i) != f64::from(id) * 2.5
                || ts.value(i) != 1_700_000_000_000 + i64::from(id) * 1000
            {
                self.bad += 1;
            }
        }
        self.rss.sample();
    }

    fn check(&self, n: i64, what: &str) {
        assert_eq!(
            (self.rows, self.ids, self.sensors, self.bad),
            (n, n * (n - 1) / 2, 45 * n / 10, 0),
            "{what}"
        );
        assert!(
            self.rss.peak() < 200 << 20,
            "{what}: RSS grew by {} MiB",
            self.rss.peak() >> 20
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_million_rows_in_bounded_memory() {
    if !runs_here_alone("shared::cancel::ten_million_rows_in_bounded_memory") {
        return;
    }
    const N: i64 = 10_000_000;
    let dir = temp_dir();
    let conn = connect_db(&dir, "m.hyper").await;
    conn.execute_command(
        "CREATE TABLE m (id INT NOT NULL, sensor INT, value DOUBLE PRECISION, ts BIGINT)",
        &[],
    )
    .await
    .unwrap();
    let started = Instant::now();
    let inserted = conn
        .execute_command(
            &format!(
                "INSERT INTO m SELECT i, i % 10, i * CAST(2.5 AS DOUBLE PRECISION), \
                 1700000000000 + i::bigint * 1000 FROM generate_series(0, {}) g(i)",
                N - 1
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(inserted, N as u64);
    eprintln!(
        "10M rows inserted with INSERT ... SELECT in {:?}",
        started.elapsed()
    );

    for arrow_route in [true, false] {
        let (sql, params) = if arrow_route {
            ("SELECT * FROM m", vec![])
        } else {
            ("SELECT * FROM m WHERE id >= $1", vec![Value::Int(0)])
        };
        let started = Instant::now();
        let mut tally = Tally::new();
        let mut s = conn.query_arrow(sql, params).await.unwrap();
        while let Some(b) = s.next().await {
            tally.add(&b.unwrap());
            // A slow reader on the Arrow route: the read-ahead must stay
            // bounded while the server could send much more.
            if arrow_route {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        eprintln!(
            "10M rows through query_arrow (Arrow route: {arrow_route}) in {:?}, RSS +{} MiB",
            started.elapsed(),
            tally.rss.peak() >> 20
        );
        tally.check(N, &format!("Arrow route: {arrow_route}"));
    }
}
