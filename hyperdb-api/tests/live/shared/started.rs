//! `started`: a call polled once on a thread outside the runtime (as a
//! binding's JavaScript thread does) has sent its request when `started`
//! returns, so the server runs it while a worker is still waking up.

use super::*;
use hyperdb_api::started;

/// Rows of `started_here` with `a = k`, asked on a connection of another
/// runtime until there is one or 10 s have passed.
fn wait_for_row(other: &tokio::runtime::Runtime, conn: &SharedConnection, k: i32) -> i64 {
    other.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let sql = format!("SELECT count(*)::BIGINT FROM started_here WHERE a = {k}");
            let n = conn.query_arrow(&sql, vec![]).await.unwrap().next().await;
            let n = n
                .unwrap()
                .unwrap()
                .column(0)
                .as_primitive::<Int64Type>()
                .value(0);
            if n > 0 || Instant::now() > deadline {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

#[test]
fn a_started_call_is_on_the_wire_before_any_worker_polls_it() {
    let dir = temp_dir();
    // The calls' runtime is driven only by `block_on`, which runs after
    // the checks: until then nothing but `started` itself polls them.
    let calls = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let other = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let conn = calls.block_on(connect_db(&dir, "started.hyper"));
    let watcher = other.block_on(connect_db(&dir, "started.hyper"));
    let _in_runtime = calls.enter();

    calls
        .block_on(conn.execute_command("CREATE TABLE started_here (a INT)", &[]))
        .unwrap();

    // A command: the call's own future sends it.
    let place = conn.place();
    let insert = started(async move {
        place
            .execute_command("INSERT INTO started_here VALUES (1)", &[], None)
            .await
    });
    assert_eq!(
        wait_for_row(&other, &watcher, 1),
        1,
        "the command reached the server though no worker polled it"
    );
    assert_eq!(calls.block_on(insert).unwrap(), 1);

    // A query: a result stream's task sends it, started when it is spawned.
    let place = conn.place();
    let query = started(async move {
        let stream = place
            .query_arrow(
                "INSERT INTO started_here VALUES ($1) RETURNING a",
                vec![Value::Int(7)],
                None,
            )
            .await?;
        drain(stream).await
    });
    assert_eq!(
        wait_for_row(&other, &watcher, 7),
        1,
        "the query reached the server though no worker polled it"
    );
    let batches = calls.block_on(query).unwrap();
    assert_eq!(int_at(&concat(&batches[0].schema(), &batches), 0), 7);
}
