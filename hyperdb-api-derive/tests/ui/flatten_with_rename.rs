use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(FromRow)]
struct Place {
    #[hyper(flatten, rename = "at")]
    at: Point,
}

fn main() {}
