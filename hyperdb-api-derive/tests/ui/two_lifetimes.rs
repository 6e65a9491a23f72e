use hyperdb_api::FromRow;

// The row's lifetime is the struct's one lifetime: with two, which one
// borrows from the row is ambiguous.
#[derive(FromRow)]
struct TwoLifetimes<'a, 'b> {
    name: &'a str,
    note: &'b str,
}

fn main() {}
