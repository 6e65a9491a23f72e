//! Issue 18: an inserter given a table definition that is not the table's
//! (another type, another nullability, columns swapped or extra) is refused
//! with `DefinitionMismatch` (42804) before a row goes out. Rows encoded
//! for the wrong layout were parsed differently by hyperd and committed
//! before the row count showed it. Nothing is stored, and the connection
//! stays usable.

use std::future::Future;
use std::sync::Arc;

use hyperdb_api::arrow::arrow_schema;
use hyperdb_api::arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use hyperdb_api::types::{SqlType, ToHyperBinary};
use hyperdb_api::{
    ArrowInserter, AsyncArrowInserter, AsyncChunkSender, AsyncConnection, AsyncInserter,
    ChunkSender, Connection, Error, InsertChunk, Inserter, TableDefinition, TableName,
    TransactionStatus,
};

use crate::common::{connect, connect_async, temp_dir};
use crate::insert::FORMATS;

const TABLE: &str = "CREATE TABLE t (a INT NOT NULL, b INT)";

/// Definitions of `t` that are not its own, each with a row builder for it.
type Row = fn(i32) -> Vec<Box<dyn ToHyperBinary>>;

fn wrong_definitions() -> Vec<(&'static str, TableDefinition, Row)> {
    vec![
        (
            "a nullable",
            TableDefinition::new("t")
                .with_column("a", SqlType::Int)
                .with_column("b", SqlType::Int),
            // Values whose top byte is 1: hyperd, reading no null byte
            // before `a`, takes that byte as `b`'s null flag, so each row
            // sent becomes two stored rows.
            |i| {
                let v = 0x0100_0000 + i;
                vec![Box::new(Some(v)), Box::new(Some(v))]
            },
        ),
        (
            "b BIGINT",
            TableDefinition::new("t")
                .with_not_null_column("a", SqlType::Int)
                .with_column("b", SqlType::BigInt),
            |i| vec![Box::new(i), Box::new(Some(i64::from(i)))],
        ),
        (
            "columns swapped",
            TableDefinition::new("t")
                .with_column("b", SqlType::Int)
                .with_not_null_column("a", SqlType::Int),
            |i| vec![Box::new(Some(i)), Box::new(i)],
        ),
        (
            "an extra column",
            TableDefinition::new("t")
                .with_not_null_column("a", SqlType::Int)
                .with_column("b", SqlType::Int)
                .with_column("c", SqlType::Int),
            |i| vec![Box::new(i), Box::new(Some(i)), Box::new(Some(i))],
        ),
    ]
}

fn bigint_b() -> TableDefinition {
    TableDefinition::new("t")
        .with_not_null_column("a", SqlType::Int)
        .with_column("b", SqlType::BigInt)
}

fn count(c: &mut Connection, table: &str) -> i64 {
    c.query_scalar(&format!("SELECT count(*) FROM {table}"))
        .unwrap()
}

async fn count_async(c: &mut AsyncConnection, table: &str) -> i64 {
    c.query_scalar(&format!("SELECT count(*) FROM {table}"))
        .await
        .unwrap()
}

/// The refusal every inserter must give: typed, 42804, naming the table.
fn assert_refused(what: &str, e: &Error) {
    assert!(
        matches!(e, Error::DefinitionMismatch { .. }),
        "{what}: not DefinitionMismatch: {e:?}"
    );
    assert_eq!(e.sqlstate(), "42804", "{what}: {e}");
}

/// What an inserter that was not refused did: its rows, its result and
/// what the table then held, for the failure message.
fn accepted(what: &str, result: impl std::fmt::Debug, stored: i64) -> ! {
    panic!("{what}: the definition was accepted; execute() gave {result:?} and t now holds {stored} rows")
}

#[test]
fn row_inserters_refuse_a_definition_unlike_the_table() {
    let dir = temp_dir();
    let mut c = connect(&dir, "def.hyper");
    c.execute_command(TABLE).unwrap();
    for format in FORMATS {
        for (what, def, row) in wrong_definitions() {
            let what = format!("{format:?}, {what}");
            let result = match Inserter::with_format(&mut c, &def, format) {
                Err(e) => {
                    assert_refused(&what, &e);
                    None
                }
                Ok(mut ins) => {
                    for i in 0..1000 {
                        let values = row(i);
                        let values: Vec<&dyn ToHyperBinary> =
                            values.iter().map(|v| v.as_ref()).collect();
                        ins.add_row(&values).unwrap();
                    }
                    Some(ins.execute())
                }
            };
            if let Some(result) = result {
                accepted(&what, result, count(&mut c, "t"));
            }
            assert_eq!(count(&mut c, "t"), 0, "{what}");
        }
    }
    // The connection is usable, and the table's own definition is taken.
    let right = c.catalog().get_table_definition("t").unwrap();
    let mut ins = Inserter::new(&mut c, &right).unwrap();
    ins.add_row(&[&1i32, &Some(2i32)]).unwrap();
    assert_eq!(ins.execute().unwrap(), 1);
    assert_eq!(count(&mut c, "t"), 1);
}

#[test]
fn arrow_and_chunk_inserters_refuse_it_too() {
    let dir = temp_dir();
    let mut c = connect(&dir, "def2.hyper");
    c.execute_command(TABLE).unwrap();
    let def = bigint_b();
    let result = match ArrowInserter::new(&mut c, &def) {
        Err(e) => {
            assert_refused("ArrowInserter", &e);
            None
        }
        Ok(mut ins) => Some(ins.insert_batch(&batch(&def)).and_then(|()| ins.finish())),
    };
    if let Some(result) = result {
        accepted("ArrowInserter", result, count(&mut c, "t"));
    }
    assert_eq!(count(&mut c, "t"), 0);
    let result = match ChunkSender::new(&mut c, &def) {
        Err(e) => {
            assert_refused("ChunkSender", &e);
            None
        }
        Ok(mut sender) => {
            let mut chunk = InsertChunk::new(&def).unwrap();
            for i in 0..1000 {
                chunk.add_row(&[&i, &Some(i64::from(i))]).unwrap();
            }
            Some(sender.send(&mut chunk).and_then(|()| sender.execute()))
        }
    };
    if let Some(result) = result {
        accepted("ChunkSender", result, count(&mut c, "t"));
    }
    assert_eq!(count(&mut c, "t"), 0);
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
}

/// 1000 rows of `def`'s Arrow schema (a INT, b BIGINT).
fn batch(def: &TableDefinition) -> RecordBatch {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(0..1000)),
        Arc::new(Int64Array::from_iter_values(0..1000)),
    ];
    RecordBatch::try_new(Arc::new(arrow_schema(def).unwrap()), columns).unwrap()
}

#[tokio::test]
async fn async_inserters_refuse_it_too() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "def3.hyper").await;
    c.execute_command(TABLE).await.unwrap();
    let def = bigint_b();
    for format in FORMATS {
        let what = format!("AsyncInserter {format:?}");
        let result = match AsyncInserter::with_format(&mut c, &def, format).await {
            Err(e) => {
                assert_refused(&what, &e);
                None
            }
            Ok(mut ins) => {
                for i in 0..1000 {
                    ins.add_row(&[&i, &Some(i64::from(i))]).await.unwrap();
                }
                Some(ins.execute().await)
            }
        };
        if let Some(result) = result {
            accepted(&what, result, count_async(&mut c, "t").await);
        }
        assert_eq!(count_async(&mut c, "t").await, 0);
    }
    let result = match AsyncArrowInserter::new(&mut c, &def).await {
        Err(e) => {
            assert_refused("AsyncArrowInserter", &e);
            None
        }
        Ok(mut ins) => Some(match ins.insert_batch(&batch(&def)).await {
            Ok(()) => ins.finish().await,
            Err(e) => Err(e),
        }),
    };
    if let Some(result) = result {
        accepted("AsyncArrowInserter", result, count_async(&mut c, "t").await);
    }
    let result = match AsyncChunkSender::new(&mut c, &def).await {
        Err(e) => {
            assert_refused("AsyncChunkSender", &e);
            None
        }
        Ok(mut sender) => {
            let mut chunk = InsertChunk::new(&def).unwrap();
            for i in 0..1000 {
                chunk.add_row(&[&i, &Some(i64::from(i))]).unwrap();
            }
            Some(match sender.send(&mut chunk).await {
                Ok(()) => sender.execute().await,
                Err(e) => Err(e),
            })
        }
    };
    if let Some(result) = result {
        accepted("AsyncChunkSender", result, count_async(&mut c, "t").await);
    }
    assert_eq!(count_async(&mut c, "t").await, 0);
    assert_eq!(c.query_scalar::<i32>("SELECT 1").await.unwrap(), 1);
}

/// The table checked is the one the COPY writes: a temporary table (which
/// an unqualified name finds first), or one on the search path.
#[test]
fn the_table_checked_is_the_one_the_copy_writes() {
    let dir = temp_dir();
    let mut c = connect(&dir, "def4.hyper");
    c.execute_command("CREATE TABLE shadow (a INT NOT NULL)")
        .unwrap();
    c.execute_command("CREATE TEMPORARY TABLE shadow (a BIGINT NOT NULL)")
        .unwrap();
    let int = TableDefinition::new("shadow").with_not_null_column("a", SqlType::Int);
    let bigint = TableDefinition::new("shadow").with_not_null_column("a", SqlType::BigInt);
    for format in FORMATS {
        let e = Inserter::with_format(&mut c, &int, format).unwrap_err();
        assert_refused(&format!("{format:?} into the temporary table"), &e);
        let mut ins = Inserter::with_format(&mut c, &bigint, format).unwrap();
        ins.add_row(&[&7i64]).unwrap();
        assert_eq!(ins.execute().unwrap(), 1);
    }
    assert_eq!(
        count(&mut c, "shadow"),
        2,
        "both rows in the temporary table"
    );
    assert_eq!(count(&mut c, "public.shadow"), 0);

    c.execute_command("CREATE SCHEMA s").unwrap();
    c.execute_command("CREATE TABLE s.u (a BIGINT NOT NULL)")
        .unwrap();
    c.execute_command("CREATE TABLE u (a INT NOT NULL)")
        .unwrap();
    c.execute_command("SET search_path = s, public").unwrap();
    let u_int = TableDefinition::new("u").with_not_null_column("a", SqlType::Int);
    let e = Inserter::new(&mut c, &u_int).unwrap_err();
    assert_refused("search path", &e);
    assert_eq!(count(&mut c, "s.u") + count(&mut c, "public.u"), 0);
    // A table that does not exist is 42P01, as before; so is one in a
    // schema that does not.
    for name in [TableName::new("nope"), TableName::from(("nope", "u"))] {
        let nope = TableDefinition::new(name).with_column("a", SqlType::Int);
        let e = Inserter::new(&mut c, &nope).unwrap_err();
        assert_eq!(e.sqlstate(), "42P01", "{e:?}");
    }
    assert_eq!(c.query_scalar::<i32>("SELECT 1").unwrap(), 1);
}

/// Inside the caller's transaction the inserter neither commits nor rolls
/// back: that stays the caller's.
#[test]
fn inside_a_callers_transaction() {
    let dir = temp_dir();
    let mut c = connect(&dir, "def5.hyper");
    c.execute_command(TABLE).unwrap();
    let right = TableDefinition::new("t")
        .with_not_null_column("a", SqlType::Int)
        .with_column("b", SqlType::Int);
    let mut tx = c.transaction().unwrap();
    let e = Inserter::new(&mut tx, &bigint_b()).unwrap_err();
    assert_refused("in a transaction", &e);
    let mut ins = Inserter::new(&mut tx, &right).unwrap();
    ins.add_row(&[&1i32, &None::<i32>]).unwrap();
    assert_eq!(ins.execute().unwrap(), 1);
    tx.rollback().unwrap();
    assert_eq!(count(&mut c, "t"), 0, "rolled back with the transaction");
    let mut tx = c.transaction().unwrap();
    let mut ins = Inserter::new(&mut tx, &right).unwrap();
    ins.add_row(&[&1i32, &None::<i32>]).unwrap();
    assert_eq!(ins.execute().unwrap(), 1);
    tx.commit().unwrap();
    assert_eq!(count(&mut c, "t"), 1);
}

/// An insert's own transaction does not outlive an `AsyncInserter::new`
/// whose future is dropped while it starts: the session's next statement
/// runs on its own (and commits), as before.
#[tokio::test]
async fn a_dropped_start_leaves_no_transaction_open() {
    let dir = temp_dir();
    let mut c = connect_async(&dir, "def6.hyper").await;
    c.execute_command(TABLE).await.unwrap();
    let right = TableDefinition::new("t")
        .with_not_null_column("a", SqlType::Int)
        .with_column("b", SqlType::Int);
    {
        let mut start = std::pin::pin!(AsyncInserter::new(&mut c, &right));
        // One poll sends BEGIN and waits for its reply.
        let polled =
            std::future::poll_fn(|cx| std::task::Poll::Ready(start.as_mut().poll(cx))).await;
        assert!(polled.is_pending());
    }
    c.execute_command("INSERT INTO t VALUES (1, 1)")
        .await
        .unwrap();
    assert_eq!(c.transaction_status(), TransactionStatus::Idle);
    assert_eq!(count_async(&mut c, "t").await, 1);
}
