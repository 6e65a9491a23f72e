use hyperdb_api::{AsyncConnection, ConnectOptions, CreateMode, HyperProcess, SharedConnection};
use std::time::Instant;
fn main() -> hyperdb_api::Result<()> {
    let hyper = HyperProcess::start()?;
    let flavor = std::env::args().nth(1).unwrap_or("multi".into());
    let rt = if flavor == "multi" {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    rt.block_on(async {
        let opts = ConnectOptions::new(hyper.endpoint().clone()).with_database("/tmp/probe.hyper", CreateMode::CreateAndReplace);
        let mut c = AsyncConnection::connect_with(&opts).await?;
        c.execute_command("CREATE TABLE measurements (id INT NOT NULL, sensor_id INT, value DOUBLE PRECISION, timestamp BIGINT)").await?;
        c.execute_command("INSERT INTO measurements SELECT i, i % 10, i * 0.1, 1700000000000 + i::BIGINT * 1000 FROM generate_series(1, 10000000) AS g(i)").await?;
        let sql = "SELECT id, sensor_id, value, timestamp FROM measurements";
        for _ in 0..4 {
            let t = Instant::now();
            let mut s = c.query_arrow_ipc(sql).await?;
            let mut n = 0; while let Some(b) = s.next().await { n += b?.len(); }
            println!("direct ipc: {:?} {n}", t.elapsed());
        }
        let shared = SharedConnection::new(c);
        for _ in 0..4 {
            let t = Instant::now();
            let mut s = shared.query_arrow_ipc(sql, vec![]).await?;
            let mut n = 0; while let Some(b) = s.next().await { n += b?.len(); }
            println!("shared ipc: {:?} {n}", t.elapsed());
        }
        for _ in 0..3 {
            let t = Instant::now();
            let mut s = shared.query_arrow(sql, vec![]).await?;
            let mut n = 0; while let Some(b) = s.next().await { n += b?.num_rows(); }
            println!("shared batches: {:?} {n}", t.elapsed());
        }
        Ok(())
    })
}
