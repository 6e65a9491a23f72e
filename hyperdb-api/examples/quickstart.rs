//! The first thing to run: starts hyperd, creates a `.hyper` file, creates a
//! table, inserts a few rows, queries them back and prints them.
//!
//! `make example`, or `cargo run -p hyperdb-api --release --example quickstart`.

use hyperdb_api::{Connection, CreateMode, HyperProcess};

fn main() -> hyperdb_api::Result<()> {
    // hyperd runs as long as `hyper` lives; it also exits if this process dies.
    let hyper = HyperProcess::start()?;
    println!("hyperd listening on {}", hyper.endpoint());

    let path = std::env::temp_dir().join("hyperdb-quickstart.hyper");
    let mut conn = Connection::connect(hyper.endpoint(), &path, CreateMode::CreateAndReplace)?;
    conn.execute_command(
        "CREATE TABLE measurements (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)",
    )?;
    let inserted = conn.execute_command(
        "INSERT INTO measurements VALUES \
         (1, 10, 21.5, 1700000000000), (2, 11, 19.25, 1700000001000), \
         (3, NULL, NULL, 1700000002000), (4, 10, 22.75, 1700000003000)",
    )?;
    println!("inserted {inserted} rows into {}", path.display());

    println!(
        "{:>4} {:>9} {:>8} {:>15}",
        "id", "sensor_id", "value", "timestamp"
    );
    for row in
        conn.execute_query("SELECT id, sensor_id, value, timestamp FROM measurements ORDER BY id")?
    {
        let row = row?;
        let id: i32 = row.try_get("id")?;
        let sensor: Option<i32> = row.try_get("sensor_id")?;
        let value: Option<f64> = row.try_get("value")?;
        let ts: i64 = row.try_get("timestamp")?;
        println!(
            "{id:>4} {:>9} {:>8} {ts:>15}",
            sensor.map_or("NULL".into(), |s| s.to_string()),
            value.map_or("NULL".into(), |v| v.to_string()),
        );
    }
    let avg: f64 = conn.query_scalar("SELECT avg(value) FROM measurements")?;
    println!("average value: {avg:.3}");

    conn.close()?;
    hyper.shutdown(std::time::Duration::from_secs(5))?;
    Ok(())
}
