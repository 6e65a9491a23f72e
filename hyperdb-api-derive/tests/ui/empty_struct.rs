use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Nothing {}

fn main() {}
