use hyperdb_api::types::Numeric;
use hyperdb_api::Table;

// NUMERIC needs a precision and scale; a Duration has no column type.
#[derive(Table)]
struct Payment {
    amount: Numeric,
    took: std::time::Duration,
}

fn main() {}
