use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Pair(#[hyper(rename = "id")] i32, String);

fn main() {}
