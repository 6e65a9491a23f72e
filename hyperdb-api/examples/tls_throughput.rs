//! Full-scan throughput over plain TCP and over TLS, against one hyperd
//! started with a throwaway certificate (rcgen), so both paths read the
//! same table from the same server.
//!
//! `cargo run -p hyperdb-api --release --example tls_throughput -- [ROWS]`
//! (default 10M). Prints the median of 5 interleaved runs per path: typed
//! rows (sync and async) and `query_arrow`, plus the connect time.

use std::time::Instant;

use hyperdb_api::{
    AsyncConnection, ConnectOptions, Connection, CreateMode, HyperProcess, HyperProcessOptions,
    SslMode,
};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

fn io(context: &str) -> impl FnOnce(std::io::Error) -> hyperdb_api::Error + '_ {
    move |source| hyperdb_api::Error::Io {
        context: context.into(),
        source,
    }
}

fn main() -> hyperdb_api::Result<()> {
    let rows: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let dir = std::env::temp_dir().join(format!("hyperdb-tls-throughput-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(io("creating work dir"))?;

    // A CA and a certificate for 127.0.0.1, signed by it.
    let cert_error = |e: rcgen::Error| hyperdb_api::Error::Io {
        context: "making certificates".into(),
        source: std::io::Error::other(e),
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(cert_error)?)
        .map_err(cert_error)?;
    let key = KeyPair::generate().map_err(cert_error)?;
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .map_err(cert_error)?
        .signed_by(&key, &ca)
        .map_err(cert_error)?;
    let (cert_path, key_path, ca_path) = (
        dir.join("server.pem"),
        dir.join("server.key"),
        dir.join("ca.pem"),
    );
    std::fs::write(&cert_path, leaf.pem()).map_err(io("writing the certificate"))?;
    {
        // hyperd refuses a key file others may read.
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&key_path)
            .and_then(|mut f| f.write_all(key.serialize_pem().as_bytes()))
            .map_err(io("writing the key"))?;
    }
    std::fs::write(&ca_path, ca.pem()).map_err(io("writing the CA"))?;

    let hyper = HyperProcess::new(
        HyperProcessOptions::default()
            .with_tls(&cert_path, &key_path)
            .with_tls_root_certificate(&ca_path),
    )?;
    let db = dir.join("scan.hyper");
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

    let paths = [
        ("plain TCP", hyper.config().with_ssl_mode(SslMode::Disable)),
        ("TLS (verify-full)", hyper.config()),
    ];
    let options = |config: &hyperdb_api::Config| {
        ConnectOptions::from(config.clone()).with_database(&db, CreateMode::DoNotCreate)
    };
    let reps = 5;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("starting tokio"))?;
    println!("full scan of {rows} rows (4 columns), median of {reps}");
    let mut results = vec![[Vec::new(), Vec::new(), Vec::new(), Vec::new()]; paths.len()];
    for _ in 0..reps {
        for ((_, config), times) in paths.iter().zip(results.iter_mut()) {
            let start = Instant::now();
            let mut conn = Connection::connect_with(&options(config))?;
            times[0].push(start.elapsed().as_secs_f64());
            times[1].push(scan(&mut conn, rows)?);
            times[2].push(scan_arrow(&mut conn, rows)?);
            conn.close()?;
            times[3].push(rt.block_on(async {
                let mut conn = AsyncConnection::connect_with(&options(config)).await?;
                let t = scan_async(&mut conn, rows).await;
                conn.close().await?;
                t
            })?);
        }
    }
    for ((name, _), mut times) in paths.iter().zip(results) {
        let median = |t: &mut Vec<f64>| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        };
        let rate = |s: f64| rows as f64 / s / 1e6;
        let connect = median(&mut times[0]);
        let (typed, arrow, typed_async) = (
            median(&mut times[1]),
            median(&mut times[2]),
            median(&mut times[3]),
        );
        println!(
            "  {name:<18} connect {:>6.2} ms | typed {:>6.2} M rows/s ({typed:.3} s) | \
             arrow {:>6.2} M rows/s ({arrow:.3} s) | typed async {:>6.2} M rows/s ({typed_async:.3} s)",
            connect * 1e3,
            rate(typed),
            rate(arrow),
            rate(typed_async),
        );
    }
    drop(hyper);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

const SQL: &str = "SELECT id, sensor_id, value, timestamp FROM measurements";

/// The check value a full scan must produce.
fn expected(rows: i64) -> i64 {
    rows * (rows - 1) / 2 + (0..rows).map(|i| i % 10).sum::<i64>()
}

/// One full scan with every value decoded; returns seconds.
fn scan(conn: &mut Connection, rows: i64) -> hyperdb_api::Result<f64> {
    let start = Instant::now();
    let mut check = 0i64;
    for row in conn.execute_query(SQL)? {
        let row = row?;
        check += i64::from(row.try_get::<i32>(0)?)
            + i64::from(row.try_get::<Option<i32>>(1)?.unwrap_or(0));
        let _: Option<f64> = row.try_get(2)?;
        let _: Option<i64> = row.try_get(3)?;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(check, expected(rows));
    Ok(secs)
}

async fn scan_async(conn: &mut AsyncConnection, rows: i64) -> hyperdb_api::Result<f64> {
    let start = Instant::now();
    let mut check = 0i64;
    let mut result = conn.execute_query(SQL).await?;
    while let Some(row) = result.next_row().await {
        let row = row?;
        check += i64::from(row.try_get::<i32>(0)?)
            + i64::from(row.try_get::<Option<i32>>(1)?.unwrap_or(0));
        let _: Option<f64> = row.try_get(2)?;
        let _: Option<i64> = row.try_get(3)?;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(check, expected(rows));
    Ok(secs)
}

/// The scan as Arrow record batches; returns seconds.
fn scan_arrow(conn: &mut Connection, rows: i64) -> hyperdb_api::Result<f64> {
    let start = Instant::now();
    let mut n = 0usize;
    for batch in conn.query_arrow(SQL)? {
        n += batch?.num_rows();
    }
    assert_eq!(n as i64, rows);
    Ok(start.elapsed().as_secs_f64())
}
