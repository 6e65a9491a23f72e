//! Errors, abandoned, spilled, concurrent and closed streams: each leaves
//! the connection usable and every result exact.

use super::*;

// --- 4. Errors -----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_carry_their_sqlstate_and_leave_the_connection_usable() {
    let conn = connect().await;
    let cases: [(&str, Vec<Value>, &str); 8] = [
        ("SELECT FROM WHERE", vec![], "42601"),
        ("SELECT $1::int FROM WHERE", vec![Value::Int(1)], "42601"),
        ("SELEC 1", vec![], "42601"),
        ("SELECT * FROM no_such_table", vec![], "42P01"),
        (
            "SELECT * FROM no_such_table WHERE $1",
            vec![Value::Bool(true)],
            "42P01",
        ),
        // Fails while rows are produced.
        (
            "SELECT 1 / (i - 150000) FROM generate_series(1, 200000) g(i)",
            vec![],
            "22012",
        ),
        (
            "SELECT 1 / (i - $1) FROM generate_series(1, 200000) g(i)",
            vec![Value::Int(150_000)],
            "22012",
        ),
        ("SELECT $1::int", vec![Value::Text("x".into())], "22P02"),
    ];
    for (n, (sql, params, code)) in cases.into_iter().enumerate() {
        let e = query_error(&conn, sql, params.clone()).await;
        assert_eq!(e.sqlstate(), code, "query_arrow {sql}: {e:?}");
        assert_eq!(
            scalar(&conn, &format!("SELECT {n} + 1")).await,
            n as i64 + 1
        );
        let e = ipc_error(&conn, sql, params.clone()).await;
        assert_eq!(e.sqlstate(), code, "query_arrow_ipc {sql}: {e:?}");
        assert_eq!(
            scalar(&conn, &format!("SELECT {n} + 2")).await,
            n as i64 + 2
        );
        let e = conn.execute_command(sql, &params).await.unwrap_err();
        assert_eq!(e.sqlstate(), code, "execute_command {sql}: {e:?}");
        assert_eq!(conn.execute_command("SELECT 1", &[]).await.unwrap(), 1);
    }
    // Message and position (into the caller's SQL) agree across routes.
    let arrow = query_error(&conn, "SELECT * FROM no_such_table", vec![]).await;
    let rows = query_error(
        &conn,
        "SELECT * FROM no_such_table WHERE $1",
        vec![Value::Bool(true)],
    )
    .await;
    let (arrow, rows) = (arrow.db_error().unwrap(), rows.db_error().unwrap());
    assert_eq!(arrow.message, rows.message);
    assert_eq!(arrow.position, rows.position);
    assert_eq!(rows.position, Some(15), "{rows:?}");
}

// --- 5. Abandoned streams ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_streams_free_the_connection() {
    let conn = connect().await;
    const TEN_M: &str = "SELECT i FROM generate_series(1, 10000000) g(i)";
    for (n, how) in ["arrow", "datarows", "ipc", "ipc datarows", "closed"]
        .iter()
        .enumerate()
    {
        let params = if how.contains("datarows") {
            vec![Value::Int(0)]
        } else {
            vec![]
        };
        let sql = if params.is_empty() {
            format!("{TEN_M} WHERE i > {n}")
        } else {
            format!("{TEN_M} WHERE i > $1 + {n}")
        };
        let started = Instant::now();
        if how.starts_with("ipc") {
            let mut s = conn.query_arrow_ipc(&sql, params).await.unwrap();
            assert!(!s.next().await.unwrap().unwrap().is_empty());
            drop(s);
        } else {
            let mut s = conn.query_arrow(&sql, params).await.unwrap();
            assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
            if *how == "closed" {
                s.close();
            } else {
                drop(s);
            }
        }
        let dropped = Instant::now();
        let answer = timeout(
            Duration::from_secs(30),
            scalar(&conn, &format!("SELECT 41 + {n}")),
        )
        .await
        .expect("the next query runs within 30 s");
        assert_eq!(answer, 41 + n as i64);
        let rows = conn
            .execute_command(
                &format!("SELECT i FROM generate_series(1, {}) g(i)", 3 + n),
                &[],
            )
            .await
            .unwrap();
        assert_eq!(rows, 3 + n as u64);
        eprintln!(
            "abandoned 10M-row stream ({how}): first batch after {:?}, next query done {:?} after the drop",
            dropped - started,
            dropped.elapsed()
        );
    }
}

/// An abandoned stream is drained to its end
/// by the next call, however long the server takes to produce it: after
/// dropping a stream over an hour-long result, the next call waits an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoning_an_endless_stream_frees_the_connection() {
    const ENDLESS: &str = "SELECT i FROM generate_series(1, 100000000000) g(i) WHERE i > $1";
    let conn = connect().await;
    for params in [vec![], vec![Value::Int(0)]] {
        let sql = if params.is_empty() {
            ENDLESS.replace("$1", "1")
        } else {
            ENDLESS.to_owned()
        };
        let mut s = conn.query_arrow(&sql, params).await.unwrap();
        assert!(s.next().await.unwrap().unwrap().num_rows() > 0);
        drop(s);
        let started = Instant::now();
        let answer = timeout(Duration::from_secs(15), scalar(&conn, "SELECT 43"))
            .await
            .unwrap_or_else(|_| panic!("{sql}: the next query waited 15 s"));
        assert_eq!(answer, 43);
        eprintln!(
            "abandoned endless stream: next query after {:?}",
            started.elapsed()
        );
    }
}

// --- 6. Interleaving: spill ---------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_while_a_stream_is_open_spills_it() {
    let conn = connect().await;
    const N: i64 = 1_000_000;
    for arrow_route in [true, false] {
        let started = Instant::now();
        let (sql, params) = if arrow_route {
            (series_sql(N, 11), vec![])
        } else {
            (series_sql_param(N), vec![Value::Int(0)])
        };
        let mut a = conn.query_arrow(&sql, params).await.unwrap();
        let mut tally = Series::default();
        tally.add(&a.next().await.unwrap().unwrap());
        assert!(tally.rows < N, "one batch is not the whole result");

        // From the same task: must not deadlock.
        let rows = timeout(NO_DEADLOCK, conn.execute_command("SELECT 1", &[]))
            .await
            .expect("execute_command while a stream is open")
            .unwrap();
        assert_eq!(rows, 1);
        // A second stream, itself interleaved with a third call.
        let mut b = timeout(NO_DEADLOCK, conn.query_arrow(&series_sql(1000, 12), vec![]))
            .await
            .expect("query_arrow while a stream is open")
            .unwrap();
        let mut b_tally = Series::default();
        b_tally.add(&b.next().await.unwrap().unwrap());
        let c = timeout(NO_DEADLOCK, scalar(&conn, "SELECT 7 * 6"))
            .await
            .expect("a query while two streams are open");
        assert_eq!(c, 42);
        while let Some(batch) = b.next().await {
            b_tally.add(&batch.unwrap());
        }
        assert_eq!(b_tally, Series::expect(1000));

        // All of A's rest was read into memory before the connection
        // moved on: it is there without waiting.
        let mut in_memory = 0;
        while let Some(batch) = a.try_next() {
            let batch = batch.unwrap();
            in_memory += batch.num_rows() as i64;
            tally.add(&batch);
        }
        assert_eq!(tally, Series::expect(N), "Arrow route: {arrow_route}");
        assert!(a.next().await.is_none());
        assert!(in_memory > 0);
        eprintln!(
            "spill (Arrow route: {arrow_route}): {in_memory} rows buffered, all in {:?}",
            started.elapsed()
        );
    }

    // The same for raw IPC.
    let mut a = conn
        .query_arrow_ipc(&series_sql(N, 13), vec![])
        .await
        .unwrap();
    let mut bytes = a.next().await.unwrap().unwrap().to_vec();
    assert_eq!(
        timeout(NO_DEADLOCK, scalar(&conn, "SELECT 5"))
            .await
            .unwrap(),
        5
    );
    while let Some(chunk) = a.next().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    let mut tally = Series::default();
    for b in decode_ipc(&bytes).1 {
        tally.add(&b);
    }
    assert_eq!(tally, Series::expect(N), "IPC");
}

// --- 7. Concurrency ------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_queue_in_order() {
    let dir = temp_dir();
    let conn = connect_db(&dir, "fifo.hyper").await;
    conn.execute_command("CREATE TABLE log (k INT, pos BIGINT)", &[])
        .await
        .unwrap();
    let guard = conn.lock().await.unwrap();
    let mut tasks = Vec::new();
    for k in 0..8 {
        let c = conn.clone();
        tasks.push(tokio::spawn(async move {
            c.execute_command(
                "INSERT INTO log SELECT $1, count(*) FROM log",
                &[Value::Int(k)],
            )
            .await
            .unwrap()
        }));
        // Time for the task to queue before the next one.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(guard);
    for t in tasks {
        assert_eq!(t.await.unwrap(), 1);
    }
    let log = query(&conn, "SELECT k, pos FROM log ORDER BY pos", vec![]).await;
    let ks: Vec<i32> = log.column(0).as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(
        ks,
        (0..8).collect::<Vec<_>>(),
        "calls ran in the order made"
    );
}

/// `k`'s query: a salted series, on the Arrow route for even `k`.
async fn tagged(conn: SharedConnection, k: i32) {
    const N: i64 = 100_000;
    let (sql, params) = if k % 2 == 0 {
        (
            format!("SELECT i, i * 2 AS j, {k} AS k FROM generate_series(1, {N}) g(i)"),
            vec![],
        )
    } else {
        (
            format!("SELECT i, i * 2 AS j, $1 AS k FROM generate_series(1, {N}) g(i)"),
            vec![Value::Int(k)],
        )
    };
    let s = conn.query_arrow(&sql, params).await.unwrap();
    let mut tally = Series::default();
    for b in drain(s).await.unwrap() {
        tally.add(&b);
        let ks = b.column(2).as_primitive::<Int32Type>();
        assert!(
            ks.values().iter().all(|v| *v == k),
            "task {k} got another's rows"
        );
    }
    assert_eq!(tally, Series::expect(N), "task {k}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tasks_on_one_and_on_several_connections() {
    let started = Instant::now();
    let conn = connect().await;
    let tasks: Vec<_> = (0..8)
        .map(|k| tokio::spawn(tagged(conn.clone(), k)))
        .collect();
    for t in tasks {
        timeout(NO_DEADLOCK, t).await.expect("no deadlock").unwrap();
    }
    eprintln!("8 tasks on one connection: {:?}", started.elapsed());
    assert_eq!(scalar(&conn, "SELECT 3").await, 3);

    let started = Instant::now();
    let mut conns = Vec::new();
    for _ in 0..4 {
        conns.push(connect().await);
    }
    let tasks: Vec<_> = (0..16)
        .map(|k| tokio::spawn(tagged(conns[k as usize % 4].clone(), 100 + k)))
        .collect();
    for t in tasks {
        timeout(NO_DEADLOCK, t).await.expect("no deadlock").unwrap();
    }
    eprintln!("16 tasks on 4 connections: {:?}", started.elapsed());
}

// --- 8. close() ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_every_handle() {
    let conn = connect().await;
    let other = conn.clone();
    assert!(!conn.is_closed());
    assert_eq!(scalar(&other, "SELECT 1").await, 1);
    conn.close().await.unwrap();
    assert!(conn.is_closed() && other.is_closed());
    let check = |e: Error, what: &str| {
        assert!(e.is_closed(), "{what}: {e:?}");
        assert_eq!(e.sqlstate(), "08006", "{what}: {e:?}");
    };
    check(
        other.execute_command("SELECT 1", &[]).await.unwrap_err(),
        "execute_command",
    );
    check(
        other
            .execute_command("SELECT $1", &[Value::Int(1)])
            .await
            .unwrap_err(),
        "execute_command with parameters",
    );
    check(
        other.query_arrow("SELECT 1", vec![]).await.unwrap_err(),
        "query_arrow",
    );
    check(
        other.query_arrow_ipc("SELECT 1", vec![]).await.unwrap_err(),
        "query_arrow_ipc",
    );
    check(other.lock().await.unwrap_err(), "lock");
    conn.close().await.unwrap();
    other.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_waits_for_an_open_stream() {
    let conn = connect().await;
    const N: i64 = 1_000_000;
    let mut a = conn.query_arrow(&series_sql(N, 21), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    let closer = {
        let conn = conn.clone();
        tokio::spawn(async move { conn.close().await })
    };
    // The stream still reads to its end, whether or not it spilled.
    while let Some(b) = timeout(NO_DEADLOCK, a.next())
        .await
        .expect("the stream goes on")
    {
        tally.add(&b.unwrap());
    }
    assert_eq!(tally, Series::expect(N));
    timeout(NO_DEADLOCK, closer)
        .await
        .expect("close finishes once the stream ended")
        .unwrap()
        .unwrap();
    assert!(conn.is_closed());
}

/// Every other call makes an open stream
/// spill so that it runs; `close()` waits for the stream to be read to its
/// end or dropped, so a stream held but no longer read blocks it forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_while_a_stream_is_held_but_not_read() {
    const N: i64 = 1_000_000;
    let conn = connect().await;
    let mut a = conn.query_arrow(&series_sql(N, 22), vec![]).await.unwrap();
    let mut tally = Series::default();
    tally.add(&a.next().await.unwrap().unwrap());
    timeout(Duration::from_secs(10), conn.close())
        .await
        .expect("close() while a stream is held and not read")
        .unwrap();
    while let Some(b) = a.next().await {
        tally.add(&b.unwrap());
    }
    assert_eq!(
        tally,
        Series::expect(N),
        "the stream spilled before the close"
    );
}

/// An Arrow result whose consumer stops reading holds one of hyperd's
/// threads while it waits in the socket: with four held, every other
/// statement on the server waited 5 s. A stream reads ahead by bytes
/// (16 MiB), so a 1M-row result is taken in whole and holds nothing.
/// Its own server: a stall must not slow the other tests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_left_unread_do_not_hold_the_server() {
    let hyper = hyperdb_api::HyperProcess::start().unwrap();
    let options = ConnectOptions::new(hyper.endpoint().clone());
    let mut held = Vec::new();
    for _ in 0..6 {
        let conn = SharedConnection::connect_with(&options).await.unwrap();
        let mut s = conn
            .query_arrow("SELECT i FROM generate_series(1, 1000000) g(i)", vec![])
            .await
            .unwrap();
        let first = s.next().await.unwrap().unwrap().num_rows();
        assert!(first > 0);
        held.push((conn, s, first));
    }
    let fresh = SharedConnection::connect_with(&options).await.unwrap();
    let at = Instant::now();
    assert_eq!(scalar(&fresh, "SELECT 5").await, 5);
    // hyperd's stall is 5.0 s; an answer takes milliseconds.
    assert!(
        at.elapsed() < Duration::from_millis(2500),
        "SELECT 5 took {:?} with six results held",
        at.elapsed()
    );
    // Every held result is whole.
    for (_, mut s, mut rows) in held {
        while let Some(b) = s.next().await {
            rows += b.unwrap().num_rows();
        }
        assert_eq!(rows, 1_000_000);
    }
}
