//! Routed reads under tracing: whichever route a plain query's run takes
//! (`crate::route`), it is one `hyperdb.statement` span from the call to
//! the end of its result, with its rows and outcome. An Arrow attempt that
//! hyperd refuses before the first batch (a value Arrow cannot express)
//! hands its span to the `DataRow` run: still one span, not two.
//!
//! As in `route.rs`, nothing is timed: a 10-row aggregation over 2M rows
//! moves to `DataRow`s on any machine.

use hyperdb_api::{ReadRoute, SharedConnection};

use crate::capture::{Capture, SpanRec};
use crate::common::{connect, connect_async, server, temp_dir};

/// 10 rows of 3 columns from all of `big`.
const AGG: &str = "SELECT g, count(*) AS n, sum(v) AS s FROM big GROUP BY g ORDER BY g";
/// A value hyperd's Arrow stream refuses: the run falls back to `DataRow`s.
const REFUSED: &str = "SELECT TIME '24:00:00' AS t, 1 AS i";

/// A database in `dir` holding `big` (2M rows, made server-side).
fn make_big(dir: &tempfile::TempDir, file: &str) {
    let mut c = connect(dir, file);
    c.execute_command("CREATE TABLE big (g INT NOT NULL, v DOUBLE PRECISION)")
        .unwrap();
    c.execute_command("INSERT INTO big SELECT i % 10, i * 0.5 FROM generate_series(0, 1999999) i")
        .unwrap();
    c.close().unwrap();
}

/// `spans` are `n` closed, successful spans of `call`, `rows` rows each,
/// with bytes received.
fn assert_runs(spans: &[SpanRec], n: usize, call: &str, rows: u64) {
    assert_eq!(spans.len(), n, "{spans:?}");
    for span in spans {
        assert!(span.closed, "{span:?}");
        assert_eq!(span.field("hyperdb.call"), call, "{span:?}");
        assert_eq!(span.field("outcome"), "ok", "{span:?}");
        assert_eq!(span.num("rows"), rows as f64, "{span:?}");
        assert!(span.num("bytes") > 0.0, "{span:?}");
        assert!(span.get("sqlstate").is_none(), "{span:?}");
    }
}

/// Sync `execute_query`: the Arrow run, the `DataRow` runs, a refused
/// Arrow attempt and its fallback, and a `DataRow` run that fails at its
/// start are each exactly one span.
#[test]
fn every_routed_run_is_one_span() {
    let dir = temp_dir();
    make_big(&dir, "rt.hyper");
    let mut conn = connect(&dir, "rt.hyper");
    let capture = Capture::default();
    let (routes, refused_routes, err) = capture.run(|| {
        let mut routes = Vec::new();
        for _ in 0..3 {
            let rows = conn.execute_query(AGG).unwrap();
            routes.push(rows.read_route());
            let mut n = 0;
            for row in rows {
                row.unwrap();
                n += 1;
            }
            assert_eq!(n, 10);
        }
        let mut refused_routes = Vec::new();
        for _ in 0..2 {
            let mut rows = conn.execute_query(REFUSED).unwrap();
            refused_routes.push(rows.read_route());
            let row = rows.next().unwrap().unwrap();
            assert_eq!(row.try_get::<i32>(1).unwrap(), 1);
            assert!(rows.next().is_none());
        }
        // The statement now goes as DataRows; its table is gone.
        conn.execute_command("DROP TABLE big").unwrap();
        let err = conn.execute_query(AGG).unwrap_err();
        (routes, refused_routes, err)
    });
    assert_eq!(
        routes,
        [ReadRoute::Arrow, ReadRoute::DataRows, ReadRoute::DataRows]
    );
    assert_eq!(refused_routes, [ReadRoute::DataRows, ReadRoute::DataRows]);
    let agg = capture.statements_for(AGG);
    assert_runs(&agg[..3], 3, "execute_query", 10);
    assert_eq!(agg.len(), 4, "{agg:?}");
    let failed = &agg[3];
    assert!(failed.closed, "{failed:?}");
    assert_eq!(failed.field("outcome"), "error", "{failed:?}");
    assert_eq!(failed.field("sqlstate"), err.sqlstate(), "{failed:?}");
    assert_runs(&capture.statements_for(REFUSED), 2, "execute_query", 1);
}

/// The async connection: one span per run on either route, the refused
/// Arrow attempt included.
#[tokio::test]
async fn async_routed_runs_are_one_span_each() {
    let dir = temp_dir();
    make_big(&dir, "art.hyper");
    let capture = Capture::default();
    let guard = capture.install();
    let mut conn = connect_async(&dir, "art.hyper").await;
    let mut routes = Vec::new();
    for sql in [AGG, AGG, AGG, REFUSED] {
        let mut rows = conn.execute_query(sql).await.unwrap();
        routes.push(rows.read_route());
        while let Some(row) = rows.next_row().await {
            row.unwrap();
        }
    }
    conn.close().await.unwrap();
    drop(guard);
    assert_eq!(
        routes,
        [
            ReadRoute::Arrow,
            ReadRoute::DataRows,
            ReadRoute::DataRows,
            ReadRoute::DataRows
        ]
    );
    assert_runs(&capture.statements_for(AGG), 3, "execute_query", 10);
    assert_runs(&capture.statements_for(REFUSED), 1, "execute_query", 1);
}

/// The binding streams (`SharedConnection`): `query_arrow` and
/// `query_arrow_ipc` runs on both routes and a refused Arrow attempt, one
/// span each.
#[tokio::test]
async fn shared_routed_streams_are_one_span_each() {
    let dir = temp_dir();
    make_big(&dir, "srt.hyper");
    let capture = Capture::default();
    let guard = capture.install();
    let options = hyperdb_api::ConnectOptions::new(server().endpoint().clone()).with_database(
        dir.path().join("srt.hyper"),
        hyperdb_api::CreateMode::DoNotCreate,
    );
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    let mut routes = Vec::new();
    for _ in 0..2 {
        let mut batches = conn.query_arrow(AGG, vec![]).await.unwrap();
        routes.push(batches.read_route());
        let mut n = 0;
        while let Some(b) = batches.next().await {
            n += b.unwrap().num_rows();
        }
        assert_eq!(n, 10);
    }
    for _ in 0..2 {
        let mut chunks = conn.query_arrow_ipc(REFUSED, vec![]).await.unwrap();
        routes.push(chunks.read_route());
        let mut bytes = 0;
        while let Some(c) = chunks.next().await {
            bytes += c.unwrap().len();
        }
        assert!(bytes > 0);
    }
    conn.close().await.unwrap();
    drop(guard);
    assert_eq!(
        routes,
        [
            Some(ReadRoute::Arrow),
            Some(ReadRoute::DataRows),
            Some(ReadRoute::DataRows),
            Some(ReadRoute::DataRows)
        ]
    );
    assert_runs(&capture.statements_for(AGG), 2, "query_arrow", 10);
    assert_runs(&capture.statements_for(REFUSED), 2, "query_arrow_ipc", 1);
}
