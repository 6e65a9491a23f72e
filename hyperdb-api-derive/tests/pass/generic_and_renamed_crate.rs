//! A generic struct, a raw identifier, `crate = ".."` for a renamed
//! dependency, and a struct deriving both: all compile and behave.

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

fn read<T: FromRow>() {}

fn main() {
    read::<Wrapped<i64>>();
    read::<Generic<String>>();
    let table = <Wrapped<i32> as TableRow>::table_definition();
    assert_eq!(table.name().to_string(), "\"db\".\"s\".\"wrapped\"");
    assert_eq!(table.columns()[0].name(), "type");
    assert!(table.columns()[1].is_nullable());
}
