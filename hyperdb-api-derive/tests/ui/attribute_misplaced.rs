use hyperdb_api::{FromRow, Table};

#[derive(Table)]
#[hyper(rename = "readings")]
struct Reading {
    v: f64,
}

#[derive(FromRow)]
struct Other {
    #[hyper(table = "t")]
    v: f64,
}

#[derive(FromRow)]
struct Twice {
    #[hyper(rename = "a", rename = "b")]
    v: f64,
}

fn main() {}
