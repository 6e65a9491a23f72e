use hyperdb_api::{FromRow, Table};

struct Point {
    x: f64,
    y: f64,
}

#[derive(FromRow)]
struct Place {
    id: i32,
    #[hyper(flatten)]
    at: Point,
}

#[derive(Table)]
struct Row {
    id: i32,
    #[hyper(flatten)]
    at: Point,
}

fn main() {}
