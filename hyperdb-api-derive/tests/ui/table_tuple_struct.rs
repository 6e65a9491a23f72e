use hyperdb_api::Table;

#[derive(Table)]
struct Pair(i32, String);

fn main() {}
