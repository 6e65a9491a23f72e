//! Measures how socket settings change full-scan throughput: kernel buffer
//! sizes (SO_RCVBUF/SO_SNDBUF) and the client's read window.
//!
//! `cargo run -p hyperdb-api --release --example socket_tuning -- [ROWS]`
//! (default 10M). Prints the median of 3 runs per setting, over TCP and Unix.

use std::time::Instant;

use hyperdb_api::{
    ConnectOptions, Connection, CreateMode, HyperProcess, HyperProcessOptions, Listen,
    SocketOptions,
};

fn main() -> hyperdb_api::Result<()> {
    let rows: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let dir = std::env::temp_dir().join(format!("hyperdb-socket-tuning-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| hyperdb_api::Error::Io {
        context: "creating work dir".into(),
        source: e,
    })?;
    let db = dir.join("tuning.hyper");

    let settings: [(&str, SocketOptions); 4] = [
        (
            "kernel default buffers, 64 KiB window",
            SocketOptions {
                send_buffer: None,
                recv_buffer: None,
                read_window: 64 << 10,
                ..SocketOptions::default()
            },
        ),
        (
            "kernel default buffers, 1 MiB window",
            SocketOptions {
                send_buffer: None,
                recv_buffer: None,
                ..SocketOptions::default()
            },
        ),
        (
            "4 MiB buffers, 64 KiB window",
            SocketOptions {
                read_window: 64 << 10,
                ..SocketOptions::default()
            },
        ),
        (
            "4 MiB buffers, 1 MiB window (default)",
            SocketOptions::default(),
        ),
    ];
    for listen in [Listen::Tcp, Listen::Unix] {
        let hyper = HyperProcess::new(HyperProcessOptions::default().with_listen(listen))?;
        let mut setup = Connection::connect(hyper.endpoint(), &db, CreateMode::CreateAndReplace)?;
        setup.execute_command(
            "CREATE TABLE measurements (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)",
        )?;
        setup.execute_command(&format!(
            "INSERT INTO measurements SELECT i, i % 10, i * 0.1, 1700000000000 + i::bigint * 1000 \
             FROM generate_series(0, {}) i",
            rows - 1
        ))?;
        setup.close()?;
        println!("{listen:?}: full scan of {rows} rows, typed decode of every value");
        for (name, socket) in &settings {
            let opts = ConnectOptions::new(hyper.endpoint().clone())
                .with_database(&db, CreateMode::DoNotCreate)
                .with_socket_options(socket.clone());
            let mut conn = Connection::connect_with(&opts)?;
            let mut times = Vec::new();
            for _ in 0..3 {
                let start = Instant::now();
                let mut n = 0i64;
                let mut check = 0i64;
                for row in
                    conn.execute_query("SELECT id, sensor_id, value, timestamp FROM measurements")?
                {
                    let row = row?;
                    n += 1;
                    check += i64::from(row.try_get::<i32>(0)?)
                        + i64::from(row.try_get::<Option<i32>>(1)?.unwrap_or(0));
                    let _: Option<f64> = row.try_get(2)?;
                    let _: Option<i64> = row.try_get(3)?;
                }
                assert_eq!(n, rows, "row count");
                assert_eq!(
                    check,
                    rows * (rows - 1) / 2 + (0..rows).map(|i| i % 10).sum::<i64>()
                );
                times.push(start.elapsed().as_secs_f64());
            }
            times.sort_by(f64::total_cmp);
            let t = times[1];
            println!(
                "  {name:<40} {:>6.2} M rows/s  ({t:.3} s)",
                rows as f64 / t / 1e6
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
