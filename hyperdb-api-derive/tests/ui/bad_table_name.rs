use hyperdb_api::Table;

#[derive(Table)]
#[hyper(table = "a.b.c.d")]
struct Reading {
    v: f64,
}

fn main() {}
