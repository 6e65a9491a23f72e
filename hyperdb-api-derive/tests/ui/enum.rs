use hyperdb_api::FromRow;

#[derive(FromRow)]
enum Shape {
    Circle(f64),
    Square(f64),
}

fn main() {}
