use hyperdb_api::FromRow;

#[derive(FromRow)]
struct Reading {
    #[hyper(renam = "value")]
    v: f64,
}

#[derive(FromRow)]
#[hyper(tabel = "readings")]
struct Other {
    v: f64,
}

fn main() {}
