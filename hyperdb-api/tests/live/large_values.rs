//! Large values read back: a text value past 256 MiB on every route (the
//! row route's messages used to be capped there, which broke the
//! connection), and wide rows on the row route gathered into batches of
//! about hyperd's own Arrow batch size, so that read-ahead counted in
//! batches stays small in bytes.

use hyperdb_api::Connection;

use crate::common::server;

/// One text value of 21 x 13 MB = 273 MB, over 256 MiB (268,435,456
/// bytes; `repeat` stops at 16 MB), then `'end'`. `$1 = 1` when `params`,
/// which sends it as `DataRow`s.
fn big_value_sql(params: bool) -> String {
    let filter = if params { " WHERE $1 = 1" } else { "" };
    format!(
        "SELECT string_agg(repeat('x', 13000000), '') AS s, 'end' AS tail \
         FROM generate_series(1, 21){filter}"
    )
}

const BIG: usize = 273_000_000;

#[test]
fn a_text_value_past_256_mib_reads_on_both_routes() {
    let mut c = Connection::connect_with(&server().connect_options()).unwrap();
    // hyperd's Arrow stream first (a plain query's first run), then rows
    // (the route learned that the result is one row).
    for sql in [big_value_sql(false), big_value_sql(false)] {
        let mut rows = c.execute_query(&sql).unwrap();
        let row = rows.next().unwrap().unwrap();
        let s: &str = row.try_get(0).unwrap();
        assert_eq!(s.len(), BIG);
        assert!(s.bytes().all(|b| b == b'x'));
        assert_eq!(row.try_get::<&str>(1).unwrap(), "end");
        drop(row);
        assert!(rows.next().is_none());
    }
    let mut rows = c
        .execute_query_params(&big_value_sql(true), &[&1i32])
        .unwrap();
    let row = rows.next().unwrap().unwrap();
    assert_eq!(row.try_get::<&str>(0).unwrap().len(), BIG);
    assert_eq!(row.try_get::<&str>(1).unwrap(), "end");
    drop(row);
    assert!(rows.next().is_none());
    drop(rows);
    assert_eq!(c.query_scalar::<i32>("SELECT 42").unwrap(), 42);
}

#[cfg(all(feature = "async", feature = "arrow"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_rows_on_the_row_route_come_in_batches_of_about_a_mebibyte() {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use hyperdb_api::{SharedConnection, Value};

    let conn = SharedConnection::connect_with(&server().connect_options())
        .await
        .unwrap();
    // 20,000 rows of ~9 KB: 180 MB, sent as DataRows (a parameter).
    let sql = "SELECT g, repeat('x', 9000) || g::TEXT AS s \
               FROM generate_series(1, 20000) g WHERE $1 = 1";
    let mut stream = conn.query_arrow(sql, vec![Value::Int(1)]).await.unwrap();
    assert_eq!(stream.read_route(), Some(hyperdb_api::ReadRoute::DataRows));
    let (mut rows, mut batches, mut largest) = (0, 0, 0);
    while let Some(batch) = stream.next().await {
        let batch = batch.unwrap();
        let text = batch.column(1).as_string::<i32>();
        largest = largest.max(text.value_data().len());
        assert_eq!(text.null_count(), 0);
        rows += batch.num_rows();
        batches += 1;
    }
    assert_eq!(rows, 20_000);
    // 1 MiB, checked every 64 rows: at most 64 rows (~580 KB) past it.
    assert!(largest <= 2 << 20, "a batch held {largest} bytes of text");
    assert!(batches >= 90, "{batches} batches");
}
