//! `InsertSink`: an Arrow COPY fed piece by piece, all or nothing, with the
//! connection usable after every failure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use hyperdb_api::arrow::{batch_from_buffers, ColumnBuffer, ColumnInput};
use hyperdb_api::types::SqlType;
use hyperdb_api::{
    ConnectOptions, CreateMode, Error, InsertPiece, SharedConnection, TableDefinition,
};

use crate::common::{server, temp_dir};
use crate::shared::scalar;

/// A connection to a fresh database (kept alive by the returned directory).
async fn connect() -> (SharedConnection, tempfile::TempDir) {
    let dir = temp_dir();
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_database(dir.path().join("sink.hyper"), CreateMode::CreateIfNotExists);
    (SharedConnection::connect_with(&options).await.unwrap(), dir)
}

async fn count(conn: &SharedConnection, table: &str) -> i64 {
    scalar(conn, &format!("SELECT count(*)::BIGINT FROM {table}")).await
}

/// A fresh table `name (id INT NOT NULL, label TEXT)`.
async fn table(conn: &SharedConnection, name: &str) -> TableDefinition {
    conn.execute_command(
        &format!("CREATE TABLE {name} (id INT NOT NULL, label TEXT)"),
        &[],
    )
    .await
    .unwrap();
    TableDefinition::new(name)
        .with_not_null_column("id", SqlType::Int)
        .with_column("label", SqlType::Text)
}

/// One IPC stream, in `chunks`, into `table` through a sink.
async fn insert_ipc(
    conn: &SharedConnection,
    table: &str,
    chunks: Vec<bytes::Bytes>,
) -> hyperdb_api::Result<u64> {
    let mut sink = conn.insert_sink(table, None).await?;
    for chunk in chunks {
        sink.send(InsertPiece::Ipc(chunk)).await?;
    }
    sink.finish().await
}

fn batch(sink_schema: &arrow_schema::SchemaRef, ids: &[Option<i32>]) -> RecordBatch {
    let labels: Vec<Option<String>> = ids.iter().map(|i| i.map(|i| format!("r{i}"))).collect();
    RecordBatch::try_new(
        sink_schema.clone(),
        vec![
            Arc::new(Int32Array::from(ids.to_vec())),
            Arc::new(StringArray::from(labels)),
        ],
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_from_buffers_are_stored_on_finish() {
    let (conn, _dir) = connect().await;
    let def = table(&conn, "sink_ok").await;
    let mut sink = conn.insert_sink("sink_ok", Some(&def)).await.unwrap();
    let schema = sink.schema().clone();
    let mut stored = 0u64;
    for part in 0..3u32 {
        let ids: Vec<i32> = (0..1000).map(|i| (part * 1000 + i) as i32).collect();
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        let text: String = ids.iter().map(|i| format!("r{i}")).collect();
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut offsets = vec![0u32];
        for i in &ids {
            offsets.push(offsets.last().unwrap() + format!("r{i}").len() as u32);
        }
        let columns = [
            ColumnInput {
                values: ColumnBuffer::Fixed(&bytes),
                validity: None,
            },
            ColumnInput {
                values: ColumnBuffer::Utf16 {
                    units: &units,
                    offsets: &offsets,
                },
                validity: None,
            },
        ];
        let b = batch_from_buffers(&schema, ids.len(), stored, &columns).unwrap();
        stored += b.num_rows() as u64;
        sink.send(InsertPiece::Batch(b)).await.unwrap();
    }
    assert_eq!(sink.finish().await.unwrap(), 3000);
    assert_eq!(count(&conn, "sink_ok").await, 3000);
    let mut s = conn
        .query_arrow("SELECT label FROM sink_ok WHERE id = 2999", vec![])
        .await
        .unwrap();
    let b = s.next().await.unwrap().unwrap();
    let labels = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(labels.value(0), "r2999");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_or_aborted_sink_stores_nothing() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_drop").await;
    let mut sink = conn.insert_sink("sink_drop", None).await.unwrap();
    let b = batch(sink.schema(), &[Some(1), Some(2)]);
    sink.send(InsertPiece::Batch(b)).await.unwrap();
    drop(sink);
    assert_eq!(count(&conn, "sink_drop").await, 0);

    let mut sink = conn.insert_sink("sink_drop", None).await.unwrap();
    let b = batch(sink.schema(), &[Some(3)]);
    sink.send(InsertPiece::Batch(b)).await.unwrap();
    sink.abort().await.unwrap();
    assert_eq!(count(&conn, "sink_drop").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_batch_fails_the_whole_insert_and_frees_the_connection() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_null").await;
    let mut sink = conn.insert_sink("sink_null", None).await.unwrap();
    let good = batch(sink.schema(), &[Some(1), Some(2)]);
    // BIGINT values for the INT column: refused by the inserter.
    let bad = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![3i64])) as _),
        ("label", Arc::new(StringArray::from(vec!["x"])) as _),
    ])
    .unwrap();
    sink.send(InsertPiece::Batch(good)).await.unwrap();
    // The refusal surfaces at the next send or at finish, whichever comes.
    let err = match sink.send(InsertPiece::Batch(bad)).await {
        Err(e) => e,
        Ok(()) => sink.finish().await.unwrap_err(),
    };
    assert_eq!(err.sqlstate(), "42804", "{err}");
    assert_eq!(count(&conn, "sink_null").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_that_is_not_the_tables_is_refused_before_the_copy() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_def").await;
    let swapped = TableDefinition::new("sink_def")
        .with_column("label", SqlType::Text)
        .with_not_null_column("id", SqlType::Int);
    let err = conn
        .insert_sink("sink_def", Some(&swapped))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DefinitionMismatch { .. }), "{err}");
    assert_eq!(err.sqlstate(), "42804");
    let wider = TableDefinition::new("sink_def")
        .with_not_null_column("id", SqlType::BigInt)
        .with_column("label", SqlType::Text);
    let err = conn
        .insert_sink("sink_def", Some(&wider))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("BIGINT"), "{err}");
    assert_eq!(count(&conn, "sink_def").await, 0);
    let err = conn.insert_sink("sink_missing", None).await.unwrap_err();
    assert_eq!(err.sqlstate(), "42P01", "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_sends_from_a_plain_thread_and_later_calls_wait_their_turn() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_thread").await;
    let mut sink = conn.insert_sink("sink_thread", None).await.unwrap();
    let schema = sink.schema().clone();
    // Placed while the sink holds the connection: runs after finish.
    let later = {
        let conn = conn.clone();
        tokio::spawn(async move { count(&conn, "sink_thread").await })
    };
    let sink = tokio::task::spawn_blocking(move || {
        for part in 0..50 {
            let ids: Vec<Option<i32>> = (0..1000).map(|i| Some(part * 1000 + i)).collect();
            sink.blocking_send(InsertPiece::Batch(batch(&schema, &ids)))
                .unwrap();
        }
        sink
    })
    .await
    .unwrap();
    let mut sink = sink;
    assert_eq!(sink.finish().await.unwrap(), 50_000);
    assert_eq!(later.await.unwrap(), 50_000);
}

/// IPC bytes through the sink: a stream split anywhere goes in whole, checked
/// against the server's own table definition first; a stream that does not
/// fit stores nothing and leaves the connection usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipc_bytes_are_checked_against_the_table_and_stored_all_or_nothing() {
    let (conn, _dir) = connect().await;
    conn.execute_command("CREATE TABLE t (id INT NOT NULL, v DOUBLE PRECISION)", &[])
        .await
        .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("v", DataType::Float64, true),
    ]));
    let ipc = |rows: i32, schema: &SchemaRef, v: ArrayRef| {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int32Array::from_iter_values(0..rows)), v],
        )
        .unwrap();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        w.into_inner().unwrap()
    };
    let values: ArrayRef = Arc::new(Float64Array::from_iter(
        (0..1000).map(|i| (i % 3 != 0).then_some(f64::from(i) / 4.0)),
    ));
    let bytes = ipc(1000, &schema, values);
    let (a, b) = bytes.split_at(bytes.len() / 3);
    let chunks = vec![
        bytes::Bytes::copy_from_slice(a),
        bytes::Bytes::copy_from_slice(b),
    ];
    assert_eq!(insert_ipc(&conn, "t", chunks).await.unwrap(), 1000);
    assert_eq!(
        scalar(&conn, "SELECT count(*)::BIGINT FROM t WHERE v IS NULL").await,
        334
    );

    // BIGINT where the table has DOUBLE PRECISION: refused before sending.
    let wrong = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("v", DataType::Int64, true),
    ]));
    let bytes = ipc(5, &wrong, Arc::new(Int64Array::from_iter_values(0..5)));
    let e = insert_ipc(&conn, "t", vec![bytes::Bytes::from(bytes)])
        .await
        .unwrap_err();
    assert_eq!(e.sqlstate(), "42804", "{e:?}");
    let e = insert_ipc(&conn, "missing", vec![bytes::Bytes::from_static(b"x")])
        .await
        .unwrap_err();
    assert_eq!(e.sqlstate(), "42P01", "{e:?}");
    assert_eq!(count(&conn, "t").await, 1000);
}

/// A sink opened by name takes the definition of the table the name
/// resolves to, looked up by the insert itself (one catalog query, in its
/// transaction): a temporary table before `public`'s of the same name, as
/// for the COPY. The lookup before the COPY used to take `public`'s, which
/// the inserter's check then refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_by_name_takes_the_table_its_name_resolves_to() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_tmp").await;
    conn.execute_command(
        "CREATE TEMPORARY TABLE sink_tmp (x DOUBLE PRECISION NOT NULL)",
        &[],
    )
    .await
    .unwrap();
    let mut sink = conn.insert_sink("sink_tmp", None).await.unwrap();
    let names: Vec<_> = sink
        .definition()
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    assert_eq!(names, ["x"]);
    let x: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5]));
    let b = RecordBatch::try_new(sink.schema().clone(), vec![x]).unwrap();
    sink.send(InsertPiece::Batch(b)).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 2);
    assert_eq!(count(&conn, "sink_tmp").await, 2);
    assert_eq!(count(&conn, "public.sink_tmp").await, 0);
    // The caller's definition is checked against that table too.
    let public = TableDefinition::new("sink_tmp")
        .with_not_null_column("id", SqlType::Int)
        .with_column("label", SqlType::Text);
    let err = conn
        .insert_sink("sink_tmp", Some(&public))
        .await
        .unwrap_err();
    assert_eq!(err.sqlstate(), "42804", "{err}");
    assert_eq!(count(&conn, "sink_tmp").await, 2);
}

/// The query timeout bounds the wait for the next piece: a producer that
/// stalls does not hold the COPY (and the connection) open past it.
#[tokio::test]
async fn the_query_timeout_ends_an_insert_whose_source_stalls() {
    let dir = temp_dir();
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_database(dir.path().join("sink.hyper"), CreateMode::CreateIfNotExists)
        .with_query_timeout(Some(Duration::from_millis(300)));
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    table(&conn, "sink_stall").await;
    let started = Instant::now();
    let mut sink = conn.insert_sink("sink_stall", None).await.unwrap();
    let schema = sink.schema().clone();
    sink.send(InsertPiece::Batch(batch(&schema, &[Some(1), Some(2)])))
        .await
        .unwrap();
    // The task stops at the timeout, not at the producer's next piece.
    tokio::time::timeout(Duration::from_secs(10), sink.stopped())
        .await
        .expect("the stalled insert was still open after 10 s");
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    let e = sink.failure().await;
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(e.sqlstate(), "HYT00", "{e}");
    assert!(e.to_string().contains("nothing is stored"), "{e}");
    assert_eq!(count(&conn, "sink_stall").await, 0);
    // The next insert within the timeout works.
    let mut sink = conn.insert_sink("sink_stall", None).await.unwrap();
    sink.send(InsertPiece::Batch(batch(&schema, &[Some(7)])))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    assert_eq!(count(&conn, "sink_stall").await, 1);
}

/// `close()` ends an insert that is still open, storing nothing, instead
/// of waiting for a producer that may never finish it.
#[tokio::test]
async fn close_ends_an_open_insert() {
    let dir = temp_dir();
    let path = dir.path().join("sink.hyper");
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_database(&path, CreateMode::CreateIfNotExists);
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    table(&conn, "sink_close").await;
    let mut sink = conn.insert_sink("sink_close", None).await.unwrap();
    let schema = sink.schema().clone();
    sink.send(InsertPiece::Batch(batch(&schema, &[Some(1), Some(2)])))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), conn.close())
        .await
        .expect("close() waited for the open insert")
        .unwrap();
    assert!(conn.is_closed());
    let e = sink.failure().await;
    assert_eq!(e.sqlstate(), "08003", "{e}");
    assert!(e.to_string().contains("nothing is stored"), "{e}");
    let e = sink
        .send(InsertPiece::Batch(batch(&schema, &[Some(3)])))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("the insert has ended"), "{e}");
    conn.close().await.unwrap();
    // Nothing of it was stored.
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_database(&path, CreateMode::DoNotCreate);
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    assert_eq!(count(&conn, "sink_close").await, 0);
}

/// `SharedConnection::cancel` during an insert ends its COPY at once: the
/// next piece the producer hands over fails with 57014 (before, the
/// producer went on handing over rows until it finished, the server's
/// cancel unseen), nothing is stored, and the connection is usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_ends_an_insert_at_its_next_piece() {
    let (conn, _dir) = connect().await;
    table(&conn, "sink_cancel").await;
    let mut sink = conn.insert_sink("sink_cancel", None).await.unwrap();
    let schema = sink.schema().clone();
    sink.send(InsertPiece::Batch(batch(&schema, &[Some(1), Some(2)])))
        .await
        .unwrap();
    conn.cancel().await.unwrap();
    let mut refused = None;
    for i in 0..100 {
        if let Err(e) = sink
            .send(InsertPiece::Batch(batch(&schema, &[Some(i)])))
            .await
        {
            refused = Some((i, e));
            break;
        }
    }
    let (at, e) = refused.expect("pieces were still taken after the cancel");
    assert!(at <= 3, "refused only at piece {at}");
    assert_eq!(e.sqlstate(), "57014", "{e}");
    assert!(e.to_string().contains("insert was cancelled"), "{e}");
    assert_eq!(count(&conn, "sink_cancel").await, 0);
    // A cancel with nothing running sends nothing, and the next insert works.
    conn.cancel().await.unwrap();
    let mut sink = conn.insert_sink("sink_cancel", None).await.unwrap();
    sink.send(InsertPiece::Batch(batch(&schema, &[Some(7)])))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 1);
    assert_eq!(count(&conn, "sink_cancel").await, 1);
}
