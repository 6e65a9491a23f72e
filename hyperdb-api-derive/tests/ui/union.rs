use hyperdb_api::Table;

#[derive(Table)]
union Bits {
    int: i32,
    real: f32,
}

fn main() {}
