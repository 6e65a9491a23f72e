use hyperdb_api::{AsyncConnection, ConnectOptions};
use crate::common::server;
use std::collections::BTreeMap;

fn short<T: std::fmt::Debug>(r: &hyperdb_api::Result<T>) -> String {
    match r { Ok(_) => "ok".into(), Err(e) => format!("err {}", e.to_string().chars().take(60).collect::<String>()) }
}

#[tokio::test]
async fn probe_cancel_semantics() {
    let mut c = AsyncConnection::connect_with(&ConnectOptions::new(server().endpoint().clone())).await.unwrap();
    for tx in [true, false] {
    for arrow in [false, true] {
    for n in [300, 3000, 30000, 300000] {
        let sql = format!("SELECT i FROM generate_series(1, {n}) g(i)");
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        for _ in 0..40 {
            if tx {
                let mut t = c.transaction().await.unwrap();
                if arrow { let mut b = t.query_arrow(&sql).await.unwrap(); let _ = b.next().await; }
                else { let mut r = t.execute_query_params(&sql, &[]).await.unwrap(); let _ = r.next_row().await; }
            } else if arrow { let mut b = c.query_arrow(&sql).await.unwrap(); let _ = b.next().await; }
            else { let mut r = c.execute_query_params(&sql, &[]).await.unwrap(); let _ = r.next_row().await; }
            let a = c.query_scalar::<i64>("SELECT count(*) FROM generate_series(1,3)").await;
            let d = c.query_scalar::<i32>("SELECT 2").await;
            *seen.entry(format!("[{}] [{}]", short(&a), short(&d))).or_default() += 1;
        }
        for (k, v) in seen { eprintln!("PROBE tx={tx} arrow={arrow} n={n}: {v}x {k}"); }
    }}}
}
