//! Requests sent without waiting for their answer: a COPY whose statement
//! goes before its frames are made (core's `copy_in_early`, what every
//! inserter starts with), its answer read after the first frames or at
//! the end; and a command sent ahead of the next request (`execute_ahead`,
//! an inserter's `BEGIN`), in the same write.
//! These drive the core client itself against hyperd: failures at each
//! point where an answer can be read, and aborts before any answer, each
//! leaving the connection usable and the table unchanged.

use hyperdb_api_core::client::{AsyncClient, Client, Config};
use hyperdb_api_core::protocol::backend::TransactionStatus;
use hyperdb_api_core::Error;

use crate::common::{connect, server, temp_dir};

const COPY: &str = "COPY t (id, name) FROM STDIN WITH (FORMAT CSV)";
const REFUSED: &str = "COPY missing (id) FROM STDIN WITH (FORMAT CSV)";

/// A database in `dir` holding the empty table `t`, and a core config for it.
fn database(dir: &tempfile::TempDir) -> Config {
    let mut c = connect(dir, "queued.hyper");
    c.execute_command("CREATE TABLE t (id INT NOT NULL, name TEXT)")
        .unwrap();
    c.close().unwrap();
    let path = dir.path().join("queued.hyper");
    server()
        .config()
        .with_database(path.to_str().unwrap().to_owned())
}

/// CSV rows as one CopyData frame.
fn frame(rows: &str) -> Vec<u8> {
    let mut f = vec![b'd'];
    f.extend_from_slice(&(rows.len() as u32 + 4).to_be_bytes());
    f.extend_from_slice(rows.as_bytes());
    f
}

/// Rows in `t`: a SELECT's command tag counts them.
fn rows_in_t(client: &mut Client) -> u64 {
    client.execute("SELECT * FROM t").unwrap()
}

fn assert_missing_table(e: &Error) {
    assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "{e:?}");
}

#[test]
fn a_queued_copy_and_its_rows_go_in_one_request() {
    let dir = temp_dir();
    let mut client = Client::connect(&database(&dir)).unwrap();
    client.copy_in_early(COPY).unwrap();
    client.copy_buf().extend_from_slice(&frame("1,a\n2,b\n"));
    // Nothing was read yet: the answer comes with the rows' count.
    assert_eq!(client.copy_in_finish().unwrap(), 2);
    // Answered at the first frames: later frames go on as usual.
    client.copy_in_early(COPY).unwrap();
    client.copy_buf().extend_from_slice(&frame("3,c\n"));
    client.flush().unwrap();
    client.copy_in_confirm().unwrap();
    client.copy_in_confirm().unwrap();
    client.send_raw(&frame("4,d\n5,e\n")).unwrap();
    assert_eq!(client.copy_in_finish().unwrap(), 3);
    assert_eq!(rows_in_t(&mut client), 5);
}

#[test]
fn a_refused_queued_copy_fails_each_later_step_without_waiting() {
    let dir = temp_dir();
    let mut client = Client::connect(&database(&dir)).unwrap();
    // Refused, read after the first frames: the server dropped them.
    client.copy_in_early(REFUSED).unwrap();
    client.copy_buf().extend_from_slice(&frame("1\n"));
    client.flush().unwrap();
    assert_missing_table(&client.copy_in_confirm().unwrap_err());
    // Every later step of that COPY answers the same at once; a wait for
    // an answer the server never sends would hang here.
    client.send_raw(&frame("2\n")).unwrap();
    assert_missing_table(&client.copy_in_confirm().unwrap_err());
    assert_missing_table(&client.copy_in_finish().unwrap_err());
    assert_eq!(client.execute("SELECT 1").unwrap(), 1);

    // Refused, read at the end: the error, not a row count.
    client.copy_in_early(REFUSED).unwrap();
    client.copy_buf().extend_from_slice(&frame("3\n"));
    assert_missing_table(&client.copy_in_finish().unwrap_err());
    assert_eq!(rows_in_t(&mut client), 0);
}

#[test]
fn a_queued_copy_aborted_before_its_answer_stores_nothing() {
    let dir = temp_dir();
    let mut client = Client::connect(&database(&dir)).unwrap();
    for sql in [COPY, REFUSED] {
        client.copy_in_early(sql).unwrap();
        client.copy_buf().extend_from_slice(&frame("1,a\n"));
        client.queue_copy_fail("abandoned");
        // The next request sends the abort and settles the answers.
        assert_eq!(rows_in_t(&mut client), 0, "{sql}");
    }
}

#[tokio::test]
async fn the_async_client_refuses_the_same_way() {
    let dir = temp_dir();
    let mut client = AsyncClient::connect(&database(&dir)).await.unwrap();
    client.copy_in_early(REFUSED).await.unwrap();
    client.copy_buf().extend_from_slice(&frame("1\n"));
    client.flush().await.unwrap();
    assert_missing_table(&client.copy_in_confirm().await.unwrap_err());
    assert_missing_table(&client.copy_in_finish().await.unwrap_err());
    client.copy_in_early(COPY).await.unwrap();
    client.copy_buf().extend_from_slice(&frame("1,a\n"));
    assert_eq!(client.copy_in_finish().await.unwrap(), 1);
}

#[test]
fn a_command_sent_ahead_is_answered_before_the_next_request() {
    let dir = temp_dir();
    let mut client = Client::connect(&database(&dir)).unwrap();
    client.execute_ahead("BEGIN").unwrap();
    // Nothing was read yet: the server has not answered.
    assert_eq!(
        client.session().transaction_status(),
        TransactionStatus::Idle
    );
    assert_eq!(rows_in_t(&mut client), 0);
    assert_eq!(
        client.session().transaction_status(),
        TransactionStatus::InTransaction
    );
    // A queued COPY behind one reads its answer first.
    client.execute_ahead("SELECT 1").unwrap();
    client.copy_in_early(COPY).unwrap();
    client.copy_buf().extend_from_slice(&frame("1,a\n"));
    assert_eq!(client.copy_in_finish().unwrap(), 1);
    client.execute("ROLLBACK").unwrap();
    assert_eq!(rows_in_t(&mut client), 0);
    // `settle` reads it too.
    client.execute_ahead("BEGIN").unwrap();
    client.settle().unwrap();
    assert_eq!(
        client.session().transaction_status(),
        TransactionStatus::InTransaction
    );
    client.execute("ROLLBACK").unwrap();
}

#[test]
fn a_failed_command_sent_ahead_fails_the_next_request_only() {
    let dir = temp_dir();
    let mut client = Client::connect(&database(&dir)).unwrap();
    // Behind a query: its error, then the query's reply is drained.
    client.execute_ahead("SELECT * FROM missing").unwrap();
    assert_missing_table(&client.query_simple("SELECT 1").unwrap_err());
    assert_eq!(client.execute("SELECT 2").unwrap(), 1);
    // Behind a COPY: `copy_in` sends the COPY only once the command's
    // reply was read, and it never starts; `copy_in_early` sends it in the
    // same write, so it runs without the command and is ended with
    // CopyFail before any row. Either way nothing is stored.
    for copy in [true, false] {
        client.execute_ahead("SELECT * FROM missing").unwrap();
        let e = if copy {
            client.copy_in(COPY).unwrap_err()
        } else {
            client.copy_in_early(COPY).unwrap_err()
        };
        assert_missing_table(&e);
        assert_eq!(rows_in_t(&mut client), 0);
    }
}

#[tokio::test]
async fn the_async_client_sends_commands_ahead_the_same_way() {
    let dir = temp_dir();
    let mut client = AsyncClient::connect(&database(&dir)).await.unwrap();
    client.execute_ahead("BEGIN").await.unwrap();
    client.copy_in_early(COPY).await.unwrap();
    client.copy_buf().extend_from_slice(&frame("1,a\n"));
    assert_eq!(client.copy_in_finish().await.unwrap(), 1);
    assert_eq!(
        client.session().transaction_status(),
        TransactionStatus::InTransaction
    );
    client.execute("ROLLBACK").await.unwrap();
    client.execute_ahead("SELECT * FROM missing").await.unwrap();
    assert_missing_table(&client.execute("SELECT 1").await.unwrap_err());
    assert_eq!(client.execute("SELECT * FROM t").await.unwrap(), 0);
}
