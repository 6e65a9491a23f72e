use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Point(f64, f64);

#[derive(FromRow)]
struct Place {
    id: i32,
    #[hyper(flatten)]
    at: Point,
}

fn main() {}
