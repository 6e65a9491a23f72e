//! `benchmark_suite_node.svg`: the Node benchmark's paths as bars in % of
//! hyperd's ceiling, drawn by the suite's own chart code (`svg.rs`), so the
//! two pictures read the same way and there is one chart implementation.
//!
//! ```text
//! cargo run -p hyperdb-api --release --example bench_node_chart -- NODE.json RUST.json OUT.svg
//! ```
//!
//! `make bench-node` runs it after the Node benchmark. The ceilings come
//! from the Rust suite's artifact (RUST.json, written by the same `make
//! bench` on the same server build and machine): inserts against
//! `insert.ceiling`, row-shaped reads against the DataRow drain of the same
//! query, columns and Arrow against the Arrow drain (the Node benchmark's
//! own `rust_path` says which Rust path a record compares with). Without a
//! Rust artifact there is no ceiling: it says so and draws nothing.

#[path = "data.rs"]
#[allow(dead_code)]
mod data;
#[path = "host.rs"]
#[allow(dead_code)]
mod host;
#[path = "lineitem_data.rs"]
#[allow(dead_code)]
mod lineitem_data;
#[path = "mix.rs"]
#[allow(dead_code)]
mod mix;
#[path = "report.rs"]
#[allow(dead_code)]
mod report;
#[path = "svg.rs"]
#[allow(dead_code)]
mod svg;

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use data::Result;
use svg::Bar;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_node_chart: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [node, rust, out] = args.as_slice() else {
        return Err("usage: bench_node_chart NODE.json RUST.json OUT.svg".into());
    };
    if !Path::new(rust).exists() {
        println!("bench_node_chart: no Rust artifact at {rust}, so no ceilings: no chart written");
        return Ok(());
    }
    let node_json = read_json(node)?;
    let rust_json = read_json(rust)?;
    let bars = bars(&node_json, &rust_json)?;
    let title = format!(
        "benchmark_suite_node: % of hyperd's ceiling, {} rows",
        node_json["config"]["rows"]
    );
    report::write(Path::new(out), &svg::chart(&title, &bars)?)?;
    println!("wrote {out} ({} bars)", bars.len());
    Ok(())
}

fn read_json(path: &str) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}").into())
}

/// The ceiling a Node record is read against: the Rust record's
/// (workload, variant), and its name on the chart.
fn ceiling_of(record: &Value) -> Option<(&'static str, String, &'static str)> {
    let workload = record["workload"].as_str()?;
    if workload.starts_with("insert.") {
        return Some(("insert.ceiling", String::new(), "insert ceiling"));
    }
    let query = workload.strip_prefix("query.")?.to_owned();
    if record["rust_path"].as_str()?.starts_with("query_arrow") {
        Some(("query.ceiling", query, "Arrow drain"))
    } else {
        Some(("query.row_ceiling", query, "DataRow drain"))
    }
}

/// One bar per Node record whose ceiling the Rust artifact has: the
/// record's rows/s over the ceiling's, in %.
fn bars(node: &Value, rust: &Value) -> Result<Vec<Bar>> {
    let records = |doc: &Value, what: &str| -> Result<Vec<Value>> {
        doc["records"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("the {what} artifact has no `records` array").into())
    };
    let rust = records(rust, "Rust")?;
    let ceiling_rate = |workload: &str, variant: &str| {
        rust.iter()
            .find(|r| r["workload"] == workload && (variant.is_empty() || r["variant"] == variant))
            .and_then(|r| r["rows_per_sec"].as_f64())
    };
    Ok(records(node, "Node")?
        .iter()
        .filter_map(|r| {
            let (workload, variant, of) = ceiling_of(r)?;
            let pct = r["rows_per_sec"].as_f64()? / ceiling_rate(workload, &variant)? * 100.0;
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            Some(Bar {
                label: format!(
                    "{} | {} | {} (vs {of})",
                    s("workload"),
                    s("variant"),
                    s("flavor")
                ),
                pct,
            })
        })
        .filter(|b| b.pct.is_finite())
        .collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rust() -> Value {
        json!({"records": [
            {"workload": "insert.ceiling", "variant": "INSERT ... SELECT", "rows_per_sec": 10e6},
            {"workload": "query.row_ceiling", "variant": "full_scan", "rows_per_sec": 20e6},
            {"workload": "query.ceiling", "variant": "full_scan", "rows_per_sec": 80e6},
            {"workload": "query.row_ceiling", "variant": "filtered", "rows_per_sec": 200e6},
        ]})
    }

    fn node() -> Value {
        json!({"config": {"rows": 1000}, "records": [
            {"workload": "insert.bulk", "variant": "insertColumns", "flavor": "TypedArrays",
             "rust_path": "ArrowInserter (sync)", "rows_per_sec": 8e6},
            {"workload": "query.full_scan", "variant": "query", "flavor": "row objects <&>",
             "rust_path": "execute_query (async)", "rows_per_sec": 5e6},
            {"workload": "query.full_scan", "variant": "queryArrow", "flavor": "batches",
             "rust_path": "query_arrow (async)", "rows_per_sec": 40e6},
            // No Arrow drain of `filtered` in the Rust artifact: no bar.
            {"workload": "query.filtered", "variant": "queryArrow", "flavor": "batches",
             "rust_path": "query_arrow (async)", "rows_per_sec": 40e6},
        ]})
    }

    #[test]
    fn each_node_path_against_its_ceiling() {
        let bars = bars(&node(), &rust()).unwrap();
        let got: Vec<(&str, f64)> = bars.iter().map(|b| (b.label.as_str(), b.pct)).collect();
        assert_eq!(
            got,
            vec![
                (
                    "insert.bulk | insertColumns | TypedArrays (vs insert ceiling)",
                    80.0
                ),
                (
                    "query.full_scan | query | row objects <&> (vs DataRow drain)",
                    25.0
                ),
                (
                    "query.full_scan | queryArrow | batches (vs Arrow drain)",
                    50.0
                ),
            ]
        );
    }

    #[test]
    fn the_chart_is_well_formed_svg() {
        let svg = svg::chart("node", &bars(&node(), &rust()).unwrap()).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        assert!(doc.descendants().any(|n| n.text().map(str::trim)
            == Some("query.full_scan | query | row objects <&> (vs DataRow drain)")));
    }

    #[test]
    fn artifacts_without_records_are_errors() {
        let e = bars(&json!({}), &rust()).unwrap_err().to_string();
        assert!(e.contains("Node artifact has no `records`"), "{e}");
        let e = bars(&node(), &json!({"records": 3}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("Rust artifact"), "{e}");
    }
}
