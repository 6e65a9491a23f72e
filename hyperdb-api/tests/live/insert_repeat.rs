//! An insert that repeats the connection's last one (same definition, or
//! for a sink by name the same name; nothing run in between) skips its
//! table lookup and relies on hyperd's
//! own check of the Arrow stream plus the table's column count in the
//! COPY's answer. These tests change the table from another connection
//! between the two inserts, where only those checks can see it: every
//! change that would store wrong rows is refused, the table keeps what it
//! had, and the connection stays usable.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use hyperdb_api::types::{Interval, SqlType};
use hyperdb_api::{
    AsyncInserter, ConnectOptions, Connection, CreateMode, Error, InsertPiece, Inserter,
    SharedConnection, TableDefinition, TransactionStatus,
};

use crate::common::{connect, connect_async, server, temp_dir};
use crate::shared::scalar;

fn table() -> TableDefinition {
    TableDefinition::new("r")
        .with_not_null_column("id", SqlType::Int)
        .with_column("name", SqlType::Text)
}

fn insert(
    conn: &mut Connection,
    def: &TableDefinition,
    ids: std::ops::Range<i32>,
) -> hyperdb_api::Result<u64> {
    let mut ins = Inserter::new(conn, def)?;
    for id in ids {
        ins.add_row(&[&id, &Some(format!("n{id}"))])?;
    }
    ins.execute()
}

fn count(conn: &mut Connection) -> i64 {
    conn.query_scalar("SELECT count(*) FROM r").unwrap()
}

/// Inserts once (looked up), has another connection replace the table
/// with `create`, then inserts the same rows again (not looked up): the
/// files' directory, the first connection, and what that returned.
fn repeat_after(create: &str) -> (tempfile::TempDir, Connection, hyperdb_api::Result<u64>) {
    let dir = temp_dir();
    let mut conn = connect(&dir, "repeat.hyper");
    let mut other = connect(&dir, "repeat.hyper");
    let def = table();
    conn.execute_command(&def.create_table_sql(false).unwrap())
        .unwrap();
    assert_eq!(insert(&mut conn, &def, 0..10).unwrap(), 10);
    other.execute_command("DROP TABLE r").unwrap();
    other.execute_command(create).unwrap();
    let again = insert(&mut conn, &def, 10..20);
    (dir, conn, again)
}

/// `again` failed with `sqlstate`, and the table holds no row.
fn refused(conn: &mut Connection, again: hyperdb_api::Result<u64>, sqlstate: &str) -> Error {
    let e = again.unwrap_err();
    assert_eq!(e.sqlstate(), sqlstate, "{e}");
    assert_eq!(count(conn), 0);
    e
}

#[test]
fn a_repeated_insert_stores_its_rows() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "same.hyper");
    let def = table();
    conn.execute_command(&def.create_table_sql(false).unwrap())
        .unwrap();
    for round in 0..5 {
        assert_eq!(
            insert(&mut conn, &def, round * 10..round * 10 + 10).unwrap(),
            10
        );
    }
    assert_eq!(count(&mut conn), 50);
    let sum: i64 = conn.query_scalar("SELECT sum(id) FROM r").unwrap();
    assert_eq!(sum, (0..50).sum::<i64>());
}

#[test]
fn a_column_of_another_type_is_refused_by_the_server() {
    let (_dir, mut conn, again) = repeat_after("CREATE TABLE r (id BIGINT NOT NULL, name TEXT)");
    let e = refused(&mut conn, again, "42804");
    assert!(e.to_string().contains("'id'"), "{e}");
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    // Not a repeat any more: the lookup names the column.
    let e = insert(&mut conn, &table(), 0..1).unwrap_err();
    assert!(
        matches!(e, Error::DefinitionMismatch { ref column, .. } if column.as_deref() == Some("id")),
        "{e}"
    );
}

#[test]
fn a_nullable_column_now_not_null_is_refused_by_the_server() {
    let (_dir, mut conn, again) =
        repeat_after("CREATE TABLE r (id INT NOT NULL, name TEXT NOT NULL)");
    refused(&mut conn, again, "42804");
}

#[test]
fn a_column_the_table_no_longer_has_is_refused_by_its_count() {
    let (_dir, mut conn, again) = repeat_after("CREATE TABLE r (id INT NOT NULL)");
    let e = again.unwrap_err();
    assert!(
        matches!(e, Error::DefinitionMismatch { ref column, ref actual, .. } if column.as_deref() == Some("name") && actual == "1 columns"),
        "{e}"
    );
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    assert_eq!(count(&mut conn), 0);
}

#[test]
fn a_column_the_definition_lacks_is_refused_by_the_server() {
    let (_dir, mut conn, again) =
        repeat_after("CREATE TABLE r (id INT NOT NULL, name TEXT, extra INT)");
    refused(&mut conn, again, "42P10");
}

/// The one change neither check sees stores the rows as sent, by name.
#[test]
fn a_column_now_nullable_takes_the_rows_by_name() {
    let (_dir, mut conn, again) = repeat_after("CREATE TABLE r (name TEXT, id INT)");
    assert_eq!(again.unwrap(), 10);
    let rows: Vec<(i32, String)> = conn
        .query_as::<(i32, String)>("SELECT id, name FROM r ORDER BY id")
        .unwrap()
        .collect::<hyperdb_api::Result<_>>()
        .unwrap();
    assert_eq!(rows.len(), 10);
    assert!(
        rows.iter().all(|(id, name)| *name == format!("n{id}")),
        "{rows:?}"
    );
}

/// Rows held back for a HyperBinary COPY follow the table's layout: the
/// skipped lookup runs before they go, and refuses the changed table.
#[test]
fn held_rows_check_the_table_first() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "held.hyper");
    let mut other = connect(&dir, "held.hyper");
    let def = TableDefinition::new("h")
        .with_not_null_column("id", SqlType::Int)
        .with_column("t", SqlType::Interval);
    conn.execute_command(&def.create_table_sql(false).unwrap())
        .unwrap();
    // Past Arrow's 2^63 ns of interval time: held for HyperBinary.
    let long = Interval::new(0, 0, 300 * 365 * 86_400_000_000);
    let add = |conn: &mut Connection| -> hyperdb_api::Result<u64> {
        let mut ins = Inserter::new(conn, &def)?;
        ins.add_row(&[&1, &Some(long)])?;
        ins.execute()
    };
    assert_eq!(add(&mut conn).unwrap(), 1);
    other.execute_command("DROP TABLE h").unwrap();
    other
        .execute_command("CREATE TABLE h (id INT, t INTERVAL)")
        .unwrap();
    let e = add(&mut conn).unwrap_err();
    assert!(
        matches!(e, Error::DefinitionMismatch { ref column, .. } if column.as_deref() == Some("id")),
        "{e}"
    );
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
    let n: i64 = conn.query_scalar("SELECT count(*) FROM h").unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn async_a_changed_table_is_refused_and_nothing_is_stored() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "async.hyper").await;
    let mut other = connect(&dir, "async.hyper");
    let def = table();
    conn.execute_command(&def.create_table_sql(false).unwrap())
        .await
        .unwrap();
    for round in 0..2 {
        let mut ins = AsyncInserter::new(&mut conn, &def).await.unwrap();
        for id in 0..10 {
            ins.add_row(&[&(round * 10 + id), &Some("x")])
                .await
                .unwrap();
        }
        assert_eq!(ins.execute().await.unwrap(), 10);
    }
    other.execute_command("DROP TABLE r").unwrap();
    other
        .execute_command("CREATE TABLE r (id INT NOT NULL)")
        .unwrap();
    let mut ins = AsyncInserter::new(&mut conn, &def).await.unwrap();
    ins.add_row(&[&1, &Some("x")]).await.unwrap();
    let e = ins.execute().await.unwrap_err();
    assert!(
        matches!(e, Error::DefinitionMismatch { ref column, .. } if column.as_deref() == Some("name")),
        "{e}"
    );
    let n: i64 = conn.query_scalar("SELECT count(*) FROM r").await.unwrap();
    assert_eq!(n, 0);
}

/// A sink by name (the Node inserters) repeating the connection's last
/// insert into that name takes the definition it resolved to then, with
/// no lookup: shown by a table another connection replaced in between,
/// whose new definition the sink does not see. hyperd refuses the rows
/// built for the old one, nothing is stored, and the next insert, no
/// repeat any more, looks the table up again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_sink_by_name_skips_the_lookup() {
    let (conn, _dir) = sink_repeat_after("CREATE TABLE r (id BIGINT NOT NULL, name TEXT)").await;
    let e = sink_insert(&conn, 20..30).await.unwrap_err();
    assert_eq!(e.sqlstate(), "42804", "{e}");
    assert_eq!(scalar(&conn, "SELECT count(*) FROM r").await, 0);
    // Looked up again: the new definition, and the rows go in.
    let (found, stored) = sink_insert(&conn, 0..5).await.unwrap();
    assert_eq!(found.columns()[0].sql_type(), &SqlType::BigInt);
    assert_eq!(stored, 5);
    assert_eq!(scalar(&conn, "SELECT count(*) FROM r").await, 5);
}

/// Any request between two inserts by name makes the second look the
/// table up: here it sees the column another connection dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_by_name_after_another_request_looks_the_table_up() {
    let (conn, _dir) = sink_repeat_after("CREATE TABLE r (id INT NOT NULL)").await;
    conn.execute_command("SELECT 1", &[]).await.unwrap();
    let (found, stored) = sink_insert(&conn, 0..3).await.unwrap();
    assert_eq!(found.column_count(), 1);
    assert_eq!(stored, 3);
}

/// A repeat whose table lost a column is refused by the column count of
/// the COPY's answer; nothing is stored and the connection stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_sink_by_name_into_a_narrower_table_is_refused() {
    let (conn, _dir) = sink_repeat_after("CREATE TABLE r (id INT NOT NULL)").await;
    let e = sink_insert(&conn, 10..20).await.unwrap_err();
    assert!(
        matches!(e, Error::DefinitionMismatch { ref column, .. } if column.as_deref() == Some("name")),
        "{e}"
    );
    assert_eq!(scalar(&conn, "SELECT count(*) FROM r").await, 0);
}

/// Two sink inserts by name into `r (id INT NOT NULL, name TEXT)` on a
/// [`SharedConnection`] (the second repeats the first), then another
/// connection replaces `r` with `create`: the shared connection and the
/// directory that keeps the file.
async fn sink_repeat_after(create: &str) -> (SharedConnection, tempfile::TempDir) {
    let dir = temp_dir();
    let options = ConnectOptions::new(server().endpoint().clone())
        .with_database(dir.path().join("sink.hyper"), CreateMode::CreateIfNotExists);
    let conn = SharedConnection::connect_with(&options).await.unwrap();
    conn.execute_command("CREATE TABLE r (id INT NOT NULL, name TEXT)", &[])
        .await
        .unwrap();
    assert_eq!(sink_insert(&conn, 0..10).await.unwrap(), (table(), 10));
    assert_eq!(sink_insert(&conn, 10..20).await.unwrap(), (table(), 10));
    let mut other = connect(&dir, "sink.hyper");
    other.execute_command("DROP TABLE r").unwrap();
    other.execute_command(create).unwrap();
    (conn, dir)
}

/// Rows `ids` into `r` through a sink by name, built for the definition
/// the sink found: that definition and the rows stored.
async fn sink_insert(
    conn: &SharedConnection,
    ids: std::ops::Range<i32>,
) -> hyperdb_api::Result<(TableDefinition, u64)> {
    let mut sink = conn.insert_sink("r", None).await?;
    let schema = sink.schema().clone();
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| -> ArrayRef {
            match f.data_type() {
                DataType::Int32 => Arc::new(Int32Array::from_iter_values(ids.clone())),
                DataType::Int64 => {
                    Arc::new(Int64Array::from_iter_values(ids.clone().map(i64::from)))
                }
                _ => Arc::new(StringArray::from_iter_values(
                    ids.clone().map(|i| format!("n{i}")),
                )),
            }
        })
        .collect();
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    sink.send(InsertPiece::Batch(batch)).await?;
    let definition = sink.definition().clone();
    Ok((definition, sink.finish().await?))
}
