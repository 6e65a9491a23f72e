//! Rows read with the lending `next_as` (sync and async, PostgreSQL wire
//! and gRPC) into values that borrow from the row: `&str`, `&[u8]`, and
//! `#[derive(FromRow)]` structs with a lifetime. They must read what the
//! owned streams read, on the Arrow and the `DataRow` route, and fail the
//! same way, leaving the stream and the connection usable.

use hyperdb_api::error::Error;
use hyperdb_api::{FromRow, ReadRoute};

use crate::common::{connect, connect_async, temp_dir};

/// Borrows its text and bytes from the row; read by name.
#[derive(FromRow, Debug, PartialEq)]
struct Person<'r> {
    id: i32,
    name: &'r str,
    photo: Option<&'r [u8]>,
    #[hyper(flatten)]
    note: Note<'r>,
}

#[derive(FromRow, Debug, PartialEq)]
struct Note<'r> {
    note: Option<&'r str>,
}

/// [`Person`] with owned values: what the owned streams read.
#[derive(FromRow, Debug, PartialEq)]
struct OwnedPerson {
    id: i32,
    name: String,
    photo: Option<Vec<u8>>,
    note: Option<String>,
}

impl Person<'_> {
    fn to_owned(&self) -> OwnedPerson {
        OwnedPerson {
            id: self.id,
            name: self.name.to_owned(),
            photo: self.photo.map(<[u8]>::to_vec),
            note: self.note.note.map(str::to_owned),
        }
    }
}

/// 5,000 rows (more than one block of either route): multi-byte text,
/// NULL and empty bytes, NULL notes; the columns in another order than
/// the struct's, so by-name reads are mapped.
const PEOPLE: &str = "SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE repeat('é', i % 7) || '✓' END AS note, \
     'name ' || i AS name, i AS id, \
     CASE WHEN i % 2 = 0 THEN NULL WHEN i % 5 = 0 THEN ''::BYTEA ELSE '\\x00ff'::BYTEA END AS photo \
     FROM generate_series(1, 5000) g(i) ORDER BY i";

fn expected() -> Vec<OwnedPerson> {
    (1..=5000)
        .map(|i| OwnedPerson {
            id: i,
            name: format!("name {i}"),
            photo: match (i % 2, i % 5) {
                (0, _) => None,
                (_, 0) => Some(Vec::new()),
                _ => Some(vec![0, 0xff]),
            },
            note: (i % 3 != 0).then(|| format!("{}✓", "é".repeat((i % 7) as usize))),
        })
        .collect()
}

#[test]
fn lent_structs_and_tuples_read_what_owned_streams_read_on_both_routes() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "lent.hyper");
    let want = expected();
    // The Arrow route first: after a small result the connection serves
    // the statement from `DataRow`s.
    for route in [ReadRoute::Arrow, ReadRoute::DataRows] {
        let mut rows = match route {
            ReadRoute::Arrow => conn.execute_query(PEOPLE).unwrap(),
            ReadRoute::DataRows => conn.execute_query_params(PEOPLE, &[]).unwrap(),
        };
        assert_eq!(rows.read_route(), route);
        let mut got = Vec::new();
        while let Some(person) = rows.next_as::<Person>() {
            got.push(person.unwrap().to_owned());
        }
        assert_eq!(got, want, "{route:?}");
        assert_eq!(rows.affected_rows(), Some(5000));

        // A tuple of borrowed values, by position.
        let sql = "SELECT i, 'v' || i, NULL::TEXT FROM generate_series(1, 3000) g(i) ORDER BY i";
        let mut rows = match route {
            ReadRoute::Arrow => conn.execute_query(sql).unwrap(),
            ReadRoute::DataRows => conn.execute_query_params(sql, &[]).unwrap(),
        };
        let mut n = 0;
        while let Some(row) = rows.next_as::<(i32, &str, Option<&str>)>() {
            let (i, v, none) = row.unwrap();
            n += 1;
            assert_eq!((i, v, none), (n, format!("v{n}").as_str(), None));
        }
        assert_eq!(n, 3000, "{route:?}");
    }
    let owned = conn.query_as::<OwnedPerson>(PEOPLE).unwrap();
    assert_eq!(owned.collect::<Result<Vec<_>, _>>().unwrap(), want);
}

/// A struct whose fields do not fit the result's columns (never read
/// whole, so its fields are never used).
#[allow(dead_code)]
#[derive(FromRow, Debug)]
struct Misfit<'r> {
    id: &'r str,
    name: &'r str,
}

#[test]
fn lent_reads_fail_per_row_and_the_stream_and_connection_go_on() {
    let dir = temp_dir();
    let mut conn = connect(&dir, "lent_errors.hyper");
    // Row 2's name is NULL; `id` is an INT, not text.
    let sql = "SELECT i AS id, CASE WHEN i = 2 THEN NULL ELSE 'n' || i END AS name \
               FROM generate_series(1, 3) g(i) ORDER BY i";
    for route in [ReadRoute::Arrow, ReadRoute::DataRows] {
        let mut rows = match route {
            ReadRoute::Arrow => conn.execute_query(sql).unwrap(),
            ReadRoute::DataRows => conn.execute_query_params(sql, &[]).unwrap(),
        };
        let mut errors = Vec::new();
        while let Some(row) = rows.next_as::<Misfit>() {
            errors.push(row.unwrap_err());
        }
        assert_eq!(errors.len(), 3, "{route:?}: every row is read and fails");
        for e in &errors {
            assert!(e.to_string().starts_with("Misfit.id: "), "{route:?}: {e}");
            assert!(matches!(e, Error::Field { .. }), "{route:?}: {e:?}");
        }

        // The NULL name is reported for row 2 only, by a type that reads
        // the id as it is.
        let mut rows = match route {
            ReadRoute::Arrow => conn.execute_query(sql).unwrap(),
            ReadRoute::DataRows => conn.execute_query_params(sql, &[]).unwrap(),
        };
        let mut got = Vec::new();
        while let Some(row) = rows.next_as::<(i32, &str)>() {
            got.push(
                row.map(|(i, name)| format!("{i}:{name}"))
                    .map_err(|e| e.sqlstate().to_owned()),
            );
        }
        assert_eq!(got.len(), 3, "{route:?}");
        assert_eq!(got[0], Ok("1:n1".to_owned()));
        assert!(got[1].is_err(), "{route:?}: {:?}", got[1]);
        assert_eq!(got[2], Ok("3:n3".to_owned()));

        // A column the struct names is missing: every row says which.
        let mut rows = conn.execute_query("SELECT 1 AS id").unwrap();
        let e = rows.next_as::<Person>().unwrap().unwrap_err();
        assert!(e.to_string().starts_with("Person.name: "), "{e}");
        assert_eq!(e.sqlstate(), "42703");
        assert!(rows.next_as::<Person>().is_none());
        assert_eq!(conn.query_scalar::<i32>("SELECT 42").unwrap(), 42);
    }
}

#[tokio::test]
async fn async_next_as_lends_on_both_routes() {
    let dir = temp_dir();
    let mut conn = connect_async(&dir, "lent_async.hyper").await;
    let want = expected();
    for route in [ReadRoute::Arrow, ReadRoute::DataRows] {
        let mut rows = match route {
            ReadRoute::Arrow => conn.execute_query(PEOPLE).await.unwrap(),
            ReadRoute::DataRows => conn.execute_query_params(PEOPLE, &[]).await.unwrap(),
        };
        assert_eq!(rows.read_route(), route);
        let mut got = Vec::new();
        while let Some(person) = rows.next_as::<Person>().await {
            got.push(person.unwrap().to_owned());
        }
        assert_eq!(got, want, "{route:?}");
    }
}
