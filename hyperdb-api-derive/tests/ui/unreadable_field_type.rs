use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Job {
    id: i32,
    took: std::time::Duration,
}

fn main() {}
