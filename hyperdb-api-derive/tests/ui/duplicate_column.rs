use hyperdb_api::Table;

#[derive(Table)]
struct Reading {
    value: f64,
    #[hyper(rename = "value")]
    raw: f64,
}

fn main() {}
