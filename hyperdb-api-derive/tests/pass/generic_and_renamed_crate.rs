//! A generic struct, a raw identifier, `crate = ".."` for a renamed
//! dependency, a struct deriving both, and structs borrowing from the
//! row (their one lifetime is the row's): all compile and behave.

use hyperdb_api as hyper;
use hyper::{FromRow, Table, TableRow};

#[derive(FromRow, Table)]
#[hyper(crate = "hyper", table = "db.s.wrapped")]
struct Wrapped<T>
where
    T: hyper::HasSqlType + hyper::types::ToHyperBinary,
{
    r#type: T,
    note: Option<String>,
}

#[derive(FromRow)]
struct Generic<T> {
    value: T,
}

/// Borrows its text from the row, with a generic field and a flattened
/// borrowing struct.
#[derive(FromRow)]
struct Borrowed<'r, T> {
    name: &'r str,
    bytes: Option<&'r [u8]>,
    value: T,
    #[hyper(flatten)]
    inner: Inner<'r>,
}

#[derive(FromRow)]
struct Inner<'a> {
    label: &'a str,
}

/// An owned struct flattening a borrowing one would not compile; one
/// flattening an owned struct does.
#[derive(FromRow)]
struct Outer {
    #[hyper(flatten)]
    generic: Generic<i32>,
}

fn read<T: for<'r> FromRow<'r>>() {}

fn lend<'r, T: FromRow<'r>>() {}

fn main_lend<'r>() {
    lend::<'r, Borrowed<'r, i64>>();
    lend::<'r, Inner<'r>>();
}

fn main() {
    read::<Wrapped<i64>>();
    read::<Generic<String>>();
    read::<Outer>();
    main_lend();
    let table = <Wrapped<i32> as TableRow>::table_definition();
    assert_eq!(table.name().to_string(), "\"db\".\"s\".\"wrapped\"");
    assert_eq!(table.columns()[0].name(), "type");
    assert!(table.columns()[1].is_nullable());
}
