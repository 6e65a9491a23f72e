//! Results hyperd's Arrow stream cannot carry, on the routed reads: a value
//! it refuses (TIMESTAMP `infinity`, TIME `24:00`) inside a transaction,
//! where a refused Arrow run would fail the transaction; and types it has
//! no Arrow form for (UUID) or that this client cannot read from Arrow
//! (ARRAY). Each reads as the `DataRow` route reads it.

use hyperdb_api::{AsyncConnection, Connection, ReadRoute, Rows, SharedConnection};

use crate::common::{connect, connect_async, temp_dir, types_and_raw, Raw};

const SETUP: [&str; 2] = [
    "CREATE TABLE dim (id INT NOT NULL, valid_to TIMESTAMP)",
    "INSERT INTO dim VALUES (1, 'infinity'), (2, '2024-01-01 10:00:00')",
];
/// Reads that only the `DataRow` route carries.
const REFUSED: [&str; 2] = [
    "SELECT id, valid_to FROM dim WHERE id < 10 ORDER BY id",
    "SELECT TIME '24:00:00' AS t",
];

fn raw_of(rows: Rows<'_>) -> Raw {
    types_and_raw(rows)
}

fn committed(c: &mut Connection) -> i64 {
    c.query_scalar("SELECT count(*) FROM dim").unwrap()
}

/// Before: the first run went as Arrow, hyperd refused it and failed the
/// transaction, and the `DataRow` run after it got 25P02: the read failed
/// and the transaction's insert was rolled back at COMMIT.
#[test]
fn refused_values_read_inside_a_transaction_which_still_commits() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route_refusals_tx.hyper");
    for sql in SETUP {
        c.execute_command(sql).unwrap();
    }
    let expected: Vec<Raw> = REFUSED
        .iter()
        .map(|sql| raw_of(c.execute_query_params(sql, &[]).unwrap()))
        .collect();
    for (run, sql) in REFUSED.iter().enumerate() {
        c.execute_command("BEGIN").unwrap();
        c.execute_command(&format!("INSERT INTO dim VALUES ({}, NULL)", 10 + run))
            .unwrap();
        let rows = c.execute_query(sql).unwrap();
        assert_eq!(rows.read_route(), ReadRoute::DataRows, "{sql}");
        assert_eq!(raw_of(rows), expected[run], "{sql}");
        c.execute_command("COMMIT").unwrap();
    }
    assert_eq!(committed(&mut c), 4, "both inserts committed");
    // A statement whose Arrow runs had no date or time column still goes
    // as Arrow inside a transaction.
    let scan = "SELECT i FROM generate_series(1, 2000000) g(i)";
    assert_eq!(
        c.execute_query(scan).unwrap().count(),
        2_000_000,
        "first run, outside"
    );
    c.execute_command("BEGIN").unwrap();
    let rows = c.execute_query(scan).unwrap();
    assert_eq!(rows.read_route(), ReadRoute::Arrow);
    assert_eq!(rows.count(), 2_000_000);
    c.execute_command("COMMIT").unwrap();
}

#[tokio::test]
async fn refused_values_read_inside_an_async_or_shared_transaction() {
    let dir = temp_dir();
    let mut c: AsyncConnection = connect_async(&dir, "route_refusals_async.hyper").await;
    for sql in SETUP {
        c.execute_command(sql).await.unwrap();
    }
    c.execute_command("BEGIN").await.unwrap();
    c.execute_command("INSERT INTO dim VALUES (10, NULL)")
        .await
        .unwrap();
    let mut rows = c.execute_query(REFUSED[0]).await.unwrap();
    let mut ids = Vec::new();
    while let Some(row) = rows.next_row().await {
        ids.push(row.unwrap().try_get::<i32>(0).unwrap());
    }
    drop(rows);
    assert_eq!(ids, [1, 2]);
    c.execute_command("COMMIT").await.unwrap();

    // The shared connection's row batches (Node's `query`) and Arrow
    // batches: the first carries the infinity past Arrow (wrapped, as
    // outside a transaction), the second refuses it without failing the
    // transaction.
    let shared = SharedConnection::new(c);
    shared.execute_command("BEGIN", &[]).await.unwrap();
    shared
        .execute_command("INSERT INTO dim VALUES (11, NULL)", &[])
        .await
        .unwrap();
    let mut batches = shared
        .place()
        .query_row_batches(REFUSED[0], Vec::new(), None)
        .await
        .unwrap();
    let mut n = 0;
    while let Some(batch) = batches.next().await {
        n += batch.unwrap().num_rows();
    }
    assert_eq!(n, 2);
    let refused = failure(shared.query_arrow(REFUSED[0], Vec::new()).await).await;
    assert_eq!(refused.sqlstate(), "22008", "{refused}");
    shared.place().commit().await.unwrap();
    let n = shared
        .execute_command("SELECT 1 FROM dim", &[])
        .await
        .unwrap();
    assert_eq!(n, 4, "both inserts committed");
}

/// A late row past Arrow's timestamps: 300,000 rows, then `infinity`.
const LATE: [&str; 3] = [
    "CREATE TABLE late (i INT NOT NULL, ts TIMESTAMP)",
    "INSERT INTO late SELECT i, TIMESTAMP '2024-01-01' FROM generate_series(1, 300000) g(i)",
    "INSERT INTO late VALUES (300001, 'infinity')",
];
const LATE_READ: &str = "SELECT i, ts FROM late ORDER BY i";

/// A value hyperd refuses in Arrow after the first batch fails the routed
/// read that had begun as Arrow (its first rows were handed out) with
/// 22008, and the same statement's next run goes as `DataRow`s and reads
/// every row: sync, async and the shared row batches (Node's row reads).
/// Before, every run of it failed alike.
#[tokio::test]
async fn a_refusal_mid_result_sends_the_next_run_as_rows() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route_refusals_late.hyper");
    for sql in LATE {
        c.execute_command(sql).unwrap();
    }
    let run = |c: &mut Connection| -> hyperdb_api::Result<(ReadRoute, usize)> {
        let mut rows = c.execute_query(LATE_READ)?;
        let route = rows.read_route();
        let mut n = 0;
        for row in rows.by_ref() {
            row?;
            n += 1;
        }
        Ok((route, n))
    };
    let e = run(&mut c).unwrap_err();
    assert_eq!(e.sqlstate(), "22008", "{e}");
    assert_eq!(run(&mut c).unwrap(), (ReadRoute::DataRows, 300_001));
    drop(c);

    let mut c: AsyncConnection = connect_async(&dir, "route_refusals_late.hyper").await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut rows = c.execute_query(LATE_READ).await.unwrap();
        let mut n = 0;
        let mut error = None;
        while let Some(row) = rows.next_row().await {
            match row {
                Ok(_) => n += 1,
                Err(e) => error = Some(e.sqlstate().to_owned()),
            }
        }
        runs.push((n > 0, error));
        if runs.len() == 2 {
            assert_eq!(n, 300_001);
        }
    }
    assert_eq!(runs, [(true, Some("22008".to_owned())), (true, None)]);

    let shared = SharedConnection::new(c);
    let mut counts = Vec::new();
    for _ in 0..2 {
        let mut batches = shared
            .place()
            .query_row_batches("SELECT ts, i FROM late ORDER BY i", Vec::new(), None)
            .await
            .unwrap();
        let mut n = 0;
        let mut error = None;
        while let Some(batch) = batches.next().await {
            match batch {
                Ok(b) => n += b.num_rows(),
                Err(e) => error = Some(e.sqlstate().to_owned()),
            }
        }
        counts.push((n == 300_001, error));
    }
    assert_eq!(counts, [(false, Some("22008".to_owned())), (true, None)]);
    assert_eq!(shared.execute_command("SELECT 1", &[]).await.unwrap(), 1);
}

/// Before: `SELECT ARRAY[1,2]` read through Arrow as a value of no type
/// and no bytes, without an error; a UUID failed with 0A000. The
/// `DataRow` route carries both, as Tableau's API reads them.
#[test]
fn arrays_and_uuids_read_as_their_rows() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route_refusals_types.hyper");
    for sql in [
        "SELECT ARRAY[1, 2] AS a, 7 AS n",
        "SELECT array_agg(i) AS a FROM generate_series(1, 3) g(i)",
        "SELECT uuid '6ba7b810-9dad-11d1-80b4-00c04fd430c8' AS u",
    ] {
        let expected = raw_of(c.execute_query_params(sql, &[]).unwrap());
        for run in 0..2 {
            let rows = c.execute_query(sql).unwrap();
            assert_ne!(rows.schema().columns()[0].type_oid(), 0, "{sql}");
            assert_eq!(raw_of(rows), expected, "{sql}, run {run}");
        }
    }
}

/// The error a stream's start or one of its items failed with.
async fn failure<T: Send + 'static>(
    started: hyperdb_api::Result<hyperdb_api::ResultStream<T>>,
) -> hyperdb_api::Error {
    let mut stream = match started {
        Err(e) => return e,
        Ok(stream) => stream,
    };
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            return e;
        }
    }
    panic!("the stream ended without an error")
}

/// Reads the batches of `stream` into the text of its first column, and
/// checks the column is a UUID carried as text.
async fn uuid_texts(
    stream: hyperdb_api::ResultStream<hyperdb_api::arrow_array::RecordBatch>,
) -> Vec<Option<String>> {
    let field = stream.schema().field(0).clone();
    assert_eq!(
        hyperdb_api::arrow::sql_type_name(&field).unwrap(),
        "UUID",
        "{field:?}"
    );
    texts(stream).await
}

/// The text of the first column of `stream`'s batches.
async fn texts(
    mut stream: hyperdb_api::ResultStream<hyperdb_api::arrow_array::RecordBatch>,
) -> Vec<Option<String>> {
    use hyperdb_api::arrow_array::cast::AsArray;
    let mut texts = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch.unwrap();
        let column = batch.column(0).as_string::<i32>();
        texts.extend(column.iter().map(|v| v.map(str::to_owned)));
    }
    texts
}

/// Before: every batch read of a UUID column (Node's `query`,
/// `queryColumns`, `queryArrow`) failed with 0A000, hyperd's Arrow stream
/// having no form for it and the `DataRow` batches none either. A UUID
/// now comes as its text, the text hyperd's own `::TEXT` gives (hyperd
/// sends the 16 bytes as one little-endian number: a byte order this
/// checks with values whose halves differ). An ARRAY on the `DataRow`
/// route still fails, with the cast that reads it in the message, and the
/// connection stays usable.
#[tokio::test]
async fn uuids_read_as_their_text_on_the_batch_reads() {
    let dir = temp_dir();
    let mut c: AsyncConnection = connect_async(&dir, "route_refusals_uuid.hyper").await;
    c.execute_command("CREATE TABLE ids (k INT NOT NULL, u UUID)")
        .await
        .unwrap();
    c.execute_command(
        "INSERT INTO ids VALUES \
         (1, uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (2, NULL), \
         (3, uuid 'ffffffff-0000-0000-0000-00000000000a'), \
         (4, uuid '00000000-0000-0000-0000-000000000000')",
    )
    .await
    .unwrap();
    let shared = SharedConnection::new(c);
    let want: Vec<Option<String>> = vec![
        Some("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11".into()),
        None,
        Some("ffffffff-0000-0000-0000-00000000000a".into()),
        Some("00000000-0000-0000-0000-000000000000".into()),
    ];
    let sql = "SELECT u FROM ids ORDER BY k";
    let hyperds = shared
        .place()
        .query_row_batches("SELECT u::TEXT FROM ids ORDER BY k", Vec::new(), None)
        .await
        .unwrap();
    assert_eq!(texts(hyperds).await, want, "hyperd's own text");
    // Twice each: the first run learns that the Arrow route refuses it.
    for run in 0..2 {
        let rows = shared
            .place()
            .query_row_batches(sql, Vec::new(), None)
            .await
            .unwrap();
        assert_eq!(uuid_texts(rows).await, want, "row batches, run {run}");
        let arrow = shared.query_arrow(sql, Vec::new()).await.unwrap();
        assert_eq!(uuid_texts(arrow).await, want, "Arrow batches, run {run}");
    }
    let with_param = shared
        .place()
        .query_row_batches(
            "SELECT u FROM ids WHERE k = $1",
            vec![hyperdb_api::Value::Int(1)],
            None,
        )
        .await
        .unwrap();
    assert_eq!(uuid_texts(with_param).await, want[..1], "parameterised");

    // With a parameter: the `DataRow` route, whose batches have no ARRAY.
    for _ in 0..2 {
        let e = failure(
            shared
                .place()
                .query_row_batches(
                    "SELECT ARRAY[1, $1] AS a",
                    vec![hyperdb_api::Value::Int(2)],
                    None,
                )
                .await,
        )
        .await;
        assert_eq!(e.sqlstate(), "0A000", "{e}");
        assert!(e.to_string().contains("::TEXT"), "{e}");
    }
    let n = shared
        .execute_command("SELECT 1 FROM ids", &[])
        .await
        .unwrap();
    assert_eq!(n, 4, "the connection is usable");
}

/// Before: a shared connection's batch read of an ARRAY passed hyperd's
/// Arrow list through on its first run, and once the route book had seen
/// a small result (or a row read of the same text had), the next run went
/// as `DataRow`s and failed with 0A000. Batch reads of it now stay Arrow.
#[tokio::test]
async fn batch_reads_of_an_array_pass_its_list_on_every_run() {
    use hyperdb_api::arrow_array::cast::AsArray;
    use hyperdb_api::arrow_array::types::Int32Type;
    let dir = temp_dir();
    let mut c: AsyncConnection = connect_async(&dir, "route_refusals_list.hyper").await;
    let row_read_first = "SELECT ARRAY[3, 4] AS a";
    let mut rows = c.execute_query(row_read_first).await.unwrap();
    while let Some(row) = rows.next_row().await {
        row.unwrap();
    }
    drop(rows);
    let shared = SharedConnection::new(c);
    for sql in ["SELECT ARRAY[1, 2] AS a", row_read_first] {
        for run in 0..4 {
            let mut stream = shared
                .place()
                .query_row_batches(sql, Vec::new(), None)
                .await
                .unwrap_or_else(|e| panic!("{sql}, run {run}: {e}"));
            let mut values = Vec::new();
            while let Some(batch) = stream.next().await {
                let batch = batch.unwrap_or_else(|e| panic!("{sql}, run {run}: {e}"));
                let list = batch.column(0).as_list::<i32>();
                values.extend(list.value(0).as_primitive::<Int32Type>().values().to_vec());
            }
            assert_eq!(values.len(), 2, "{sql}, run {run}");
        }
    }
}

/// A row read of a UUID (which rows have no type for) says what the
/// column is and how to read it, on either route, and the connection
/// answers the next query; the cast it names reads hyperd's text.
#[test]
fn row_reads_of_a_uuid_name_the_type_and_the_cast() {
    let dir = temp_dir();
    let mut c = connect(&dir, "route_refusals_uuid_rows.hyper");
    let sql = "SELECT uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS u";
    for run in 0..2 {
        for params in [false, true] {
            let mut rows = if params {
                c.execute_query_params(sql, &[]).unwrap()
            } else {
                c.execute_query(sql).unwrap()
            };
            let row = rows.next().expect("a row").unwrap();
            let err = row.try_get::<String>(0).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, hyperdb_api::Error::TypeMismatch { .. }),
                "run {run}, params {params}: {err:?}"
            );
            assert!(
                text.contains("type UUID") && text.contains("col::TEXT"),
                "run {run}, params {params}: {text}"
            );
            drop(rows);
            assert_eq!(c.query_scalar::<i32>("SELECT 7").unwrap(), 7);
        }
    }
    let text: String = c
        .query_scalar("SELECT (uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')::TEXT")
        .unwrap();
    assert_eq!(text, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
}

/// A type this client maps to nothing (REGCLASS) read as batches (Node's
/// `query`, `queryColumns`, `queryArrow`) is refused with the cast that
/// reads it, and sends no one to `query_arrow`, which refuses it too
/// (hyperd's Arrow stream has no form for it): the hint once said "an
/// ARRAY reads only as Arrow: query_arrow". The connection stays usable.
#[tokio::test]
async fn an_unmapped_type_names_the_cast_not_another_read() {
    let dir = temp_dir();
    let c: AsyncConnection = connect_async(&dir, "route_refusals_regclass.hyper").await;
    let shared = SharedConnection::new(c);
    let sql = "SELECT 'pg_class'::regclass AS r";
    for run in 0..2 {
        let started = shared
            .place()
            .query_row_batches(sql, Vec::new(), None)
            .await;
        let err = failure(started).await;
        let text = err.to_string();
        assert_eq!(err.sqlstate(), "0A000", "run {run}: {text}");
        assert!(
            text.contains("type OID 2205") && text.contains("col::TEXT"),
            "run {run}: {text}"
        );
        assert!(!text.contains("query_arrow"), "run {run}: {text}");
    }
    let cast = shared
        .place()
        .query_row_batches("SELECT ('pg_class'::regclass)::TEXT", Vec::new(), None)
        .await
        .unwrap();
    assert_eq!(texts(cast).await, vec![Some("pg_class".to_owned())]);
}
