//! `ResultStream::gather`: items grouped for a consumer that pays per
//! call, within the policy's bounds, in order, ending as `next` does.

use hyperdb_api::Gather;

use super::*;

/// A connection and the stream of `sql` on it.
async fn open(sql: &str) -> (SharedConnection, ResultStream<RecordBatch>) {
    let conn = connect().await;
    let stream = conn.query_arrow(sql, vec![]).await.unwrap();
    (conn, stream)
}

fn policy(min: usize, max: usize, window: Duration) -> Gather {
    Gather { min, max, window }
}

/// The `i` column of `batches`, in order.
fn ints(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |r| int_at(b, r)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gather_hands_over_every_batch_in_order_within_its_bounds() {
    let (conn, mut s) = open("SELECT i FROM generate_series(1, 2000000) g(i) ORDER BY i").await;
    let how = policy(4, 6, Duration::from_millis(50));
    let (mut batches, mut calls) = (Vec::new(), 0);
    loop {
        let items = s.gather(how).await.unwrap();
        if items.is_empty() {
            break;
        }
        assert!(items.len() <= how.max, "{} items", items.len());
        calls += 1;
        batches.extend(items);
    }
    assert!(s.ended());
    assert!(
        s.gather(how).await.unwrap().is_empty(),
        "empty after the end"
    );
    assert!(
        calls < batches.len(),
        "{calls} calls for {} batches",
        batches.len()
    );
    let ints = ints(&batches);
    assert_eq!(ints.len(), 2_000_000);
    let out_of_place = ints.iter().zip(1..).position(|(&got, want)| got != want);
    assert_eq!(out_of_place, None, "every row, in order");
    assert_eq!(scalar(&conn, "SELECT 7").await, 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gather_returns_a_short_result_without_waiting_for_min() {
    let (conn, mut s) = open("SELECT 42 AS i").await;
    let how = policy(1000, 1000, NO_DEADLOCK);
    let items = timeout(Duration::from_secs(5), s.gather(how))
        .await
        .expect("the end of the result ends the wait")
        .unwrap();
    assert_eq!(ints(&items), [42]);
    assert!(s.ended());
    assert!(s.gather(how).await.unwrap().is_empty());
    assert_eq!(scalar(&conn, "SELECT 43").await, 43, "free while s lives");
}

/// With no window, a call takes the first item and what has already
/// arrived: never the whole of a result larger than the read-ahead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gather_waits_no_longer_than_its_window() {
    let (conn, mut s) = open("SELECT i FROM generate_series(1, 10000000) g(i)").await;
    let how = policy(usize::MAX, usize::MAX, Duration::ZERO);
    let items = timeout(NO_DEADLOCK, s.gather(how)).await.unwrap().unwrap();
    let rows: usize = items.iter().map(RecordBatch::num_rows).sum();
    assert!(!items.is_empty());
    assert!(
        rows < 10_000_000,
        "the window passed before the end: {rows} rows"
    );
    assert!(!s.ended());
    assert_eq!(int_at(&items[0], 0), 1);
    drop(s);
    assert_eq!(scalar(&conn, "SELECT 8").await, 8, "usable after the drop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gather_ends_with_the_error_of_a_failing_result() {
    let (conn, mut s) =
        open("SELECT 1 / (i - 150000) AS i FROM generate_series(1, 200000) g(i)").await;
    let how = policy(8, 8, Duration::from_millis(5));
    let err = loop {
        match s.gather(how).await {
            Ok(items) => assert!(!items.is_empty(), "the error comes before the end"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.sqlstate(), "22012", "{err:?}");
    assert!(s.ended());
    assert!(s.gather(how).await.unwrap().is_empty());
    assert_eq!(scalar(&conn, "SELECT 9").await, 9);
}

/// `max` caps `min`, and the first item is taken whatever `max` says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gather_takes_at_most_max_and_at_least_one() {
    let (conn, mut s) = open("SELECT i FROM generate_series(1, 1000000) g(i)").await;
    for max in [0, 1, 2] {
        let how = policy(16, max, NO_DEADLOCK);
        let items = timeout(NO_DEADLOCK, s.gather(how)).await.unwrap().unwrap();
        assert_eq!(items.len(), max.max(1), "max {max}");
    }
    drop(s);
    assert_eq!(scalar(&conn, "SELECT 10").await, 10);
}
