use hyperdb_api::types::Numeric;
use hyperdb_api::Table;

#[derive(Table)]
struct Payment {
    #[hyper(sql_type = "NUMERIC(40,2)")]
    amount: Numeric,
    #[hyper(sql_type = "VARCHR(10)")]
    code: String,
}

fn main() {}
