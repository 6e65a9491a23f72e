//! Measures how socket settings change full-scan throughput: kernel buffer
//! sizes (SO_RCVBUF/SO_SNDBUF) and the client's read window.
//!
//! `cargo run -p hyperdb-api --release --example socket_tuning -- [ROWS]`
//! (default 10M). Prints the median of 5 interleaved runs per setting, over
//! TCP and Unix.

use std::time::Instant;

use hyperdb_api::{
    Connection, CreateMode, HyperProcess, HyperProcessOptions, Listen, SocketOptions,
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

    let buffers: [(&str, Option<usize>); 2] = [("kernel default", None), ("4 MiB", Some(4 << 20))];
    let windows: [(&str, usize); 3] = [
        ("64 KiB", 64 << 10),
        ("256 KiB", 256 << 10),
        ("1 MiB", 1 << 20),
    ];
    let mut settings = Vec::new();
    for (bname, buf) in buffers {
        for (wname, window) in windows {
            let socket = SocketOptions {
                send_buffer: buf,
                recv_buffer: buf,
                read_window: window,
                ..SocketOptions::default()
            };
            settings.push((format!("{bname} buffers, {wname} window"), socket));
        }
    }
    let reps = 5;
    for listen in [Listen::Tcp, Listen::Unix] {
        let hyper = HyperProcess::new(HyperProcessOptions::default().with_listen(listen))?;
        let mut setup = Connection::connect_with(
            &hyper
                .connect_options()
                .with_database(&db, CreateMode::CreateAndReplace),
        )?;
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
        // Settings are interleaved across repetitions so that background
        // load spreads over all of them instead of skewing one.
        let mut conns = Vec::new();
        for (_, socket) in &settings {
            let opts = hyper
                .connect_options()
                .with_database(&db, CreateMode::DoNotCreate)
                .with_socket_options(socket.clone());
            conns.push(Connection::connect_with(&opts)?);
        }
        let mut times = vec![Vec::new(); settings.len()];
        for _ in 0..reps {
            for (conn, t) in conns.iter_mut().zip(times.iter_mut()) {
                t.push(scan(conn, rows)?);
            }
        }
        for ((name, _), mut t) in settings.iter().zip(times) {
            t.sort_by(f64::total_cmp);
            let median = t[t.len() / 2];
            println!(
                "  {name:<36} {:>6.2} M rows/s  (median {median:.3} s of {reps})",
                rows as f64 / median / 1e6
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// One full scan with every value decoded; returns seconds.
fn scan(conn: &mut Connection, rows: i64) -> hyperdb_api::Result<f64> {
    let start = Instant::now();
    let mut n = 0i64;
    let mut check = 0i64;
    for row in conn.execute_query("SELECT id, sensor_id, value, timestamp FROM measurements")? {
        let row = row?;
        n += 1;
        check += i64::from(row.try_get::<i32>(0)?)
            + i64::from(row.try_get::<Option<i32>>(1)?.unwrap_or(0));
        let _: Option<f64> = row.try_get(2)?;
        let _: Option<i64> = row.try_get(3)?;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(n, rows, "row count");
    assert_eq!(
        check,
        rows * (rows - 1) / 2 + (0..rows).map(|i| i % 10).sum::<i64>()
    );
    Ok(secs)
}
