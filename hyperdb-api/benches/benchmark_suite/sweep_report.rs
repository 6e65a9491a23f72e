//! The sweep's artifacts, `<stem>_scale.{md,json,svg}`: per path and size
//! its rows/s, % of ceiling and peak client RSS, and the issue-19 scale
//! targets checked at the largest size. Kept apart from the main report
//! so that `make bench-scale` never overwrites `make bench`'s table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::data::Result;
use crate::host::Host;
use crate::report::{self, Record, Settings};
use crate::sweep::Peaks;

const MIB: f64 = 1024.0 * 1024.0;
/// Target: rows/s at the largest size >= this share of rows/s at a tenth of it.
pub const RATE_TARGET: f64 = 0.9;
/// Target: peak RSS at the largest size within this of the peak at a hundredth.
pub const RSS_TARGET_BYTES: i64 = 64 * 1024 * 1024;

/// One path at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub rows: u64,
    /// `workload | variant | flavor`.
    pub label: String,
    pub ceiling: bool,
    /// Median seconds.
    pub seconds: f64,
    pub rows_per_sec: f64,
    /// % of the path's ceiling at the same size, and which ceiling.
    pub pct: Option<(f64, &'static str)>,
    /// Peak client RSS over the path's executions at this size, bytes.
    pub peak_rss: Option<u64>,
}

impl Point {
    pub fn peak_mib(&self) -> Option<f64> {
        self.peak_rss.map(|b| b as f64 / MIB)
    }
}

/// Fills each size's percentages from that size's ceilings (the records
/// of one size are contiguous: sizes run one after the other) and pairs
/// every record with its peak RSS.
pub fn points(records: &mut [Record], peaks: &Peaks) -> Vec<Point> {
    for size in records.chunk_by_mut(|a, b| a.rows == b.rows) {
        report::fill_percentages(size);
    }
    records
        .iter()
        .map(|r| {
            let label = format!("{} | {} | {}", r.workload, r.variant, r.flavor);
            Point {
                rows: r.rows,
                peak_rss: peaks.get(r.rows, &label),
                label,
                ceiling: r.is_ceiling(),
                seconds: r.median(),
                rows_per_sec: r.rows_per_sec(),
                pct: crate::svg::vs_ceiling(r),
            }
        })
        .collect()
}

/// The points per path, paths in first-run order, each by ascending size.
pub fn series(points: &[Point]) -> Vec<(&str, Vec<&Point>)> {
    let mut out: Vec<(&str, Vec<&Point>)> = Vec::new();
    for p in points {
        match out.iter_mut().find(|(l, _)| *l == p.label) {
            Some((_, v)) => v.push(p),
            None => out.push((&p.label, vec![p])),
        }
    }
    for (_, v) in &mut out {
        v.sort_by_key(|p| p.rows);
    }
    out
}

/// A headline path's scale targets at the sweep's largest size.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub label: String,
    pub largest: u64,
    /// A tenth of the largest size, and rows/s at the largest / at it.
    pub rate: Option<(u64, f64)>,
    /// A hundredth of the largest size, and peak RSS at the largest minus
    /// at it, bytes.
    pub rss: Option<(u64, i64)>,
}

impl Check {
    /// Whether every target that could be checked holds (`None`: neither
    /// reference size ran).
    pub fn met(&self) -> Option<bool> {
        if self.rate.is_none() && self.rss.is_none() {
            return None;
        }
        let rate = self.rate.is_none_or(|(_, r)| r >= RATE_TARGET);
        let rss = self.rss.is_none_or(|(_, d)| d <= RSS_TARGET_BYTES);
        Some(rate && rss)
    }
}

/// The targets of every non-ceiling path that ran at the largest size.
pub fn checks(points: &[Point]) -> Vec<Check> {
    let Some(largest) = points.iter().map(|p| p.rows).max() else {
        return Vec::new();
    };
    series(points)
        .into_iter()
        .filter_map(|(label, pts)| {
            let at = |rows: u64| pts.iter().find(|p| p.rows == rows);
            let top = at(largest).filter(|p| !p.ceiling)?;
            let tenth = (largest % 10 == 0).then_some(largest / 10);
            let hundredth = (largest % 100 == 0).then_some(largest / 100);
            let rate = tenth
                .and_then(&at)
                .map(|p| (p.rows, top.rows_per_sec / p.rows_per_sec));
            let rss = hundredth
                .and_then(at)
                .and_then(|p| Some((p.rows, top.peak_rss? as i64 - p.peak_rss? as i64)));
            Some(Check {
                label: label.to_owned(),
                largest,
                rate,
                rss,
            })
        })
        .collect()
}

fn cell(x: Option<f64>, digits: usize) -> String {
    x.filter(|x| x.is_finite())
        .map_or("n/a".into(), |x| format!("{x:.digits$}"))
}

/// The sweep as Markdown: one row per path and size, then the targets.
pub fn markdown(host: &Host, settings: &Settings, sizes: &[u64], points: &[Point]) -> String {
    let mut out = String::from("# hyperdb-api benchmark suite: scale sweep\n\n");
    let _ = writeln!(out, "`{}`\n", settings.command);
    let list: Vec<String> = sizes.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "Sizes: {} rows. {} measured run(s) per path and size{}; a run shorter \
         than 0.25 s is executed up to 10 times; times are medians. Peak client \
         RSS: `VmHWM` of the suite's process, reset before each execution \
         (`/proc/self/clear_refs`), the highest over the path's executions at \
         that size (warm-up included).\n",
        list.join(", "),
        settings.repeat,
        settings.warmup_note()
    );
    report::host_section(&mut out, host);
    out.push_str(
        "\n| Workload | Variant | Flavor | Rows | Time (s) | Rows/sec | % of ceiling | Peak client RSS (MiB) |\n\
         |---|---|---|--:|--:|--:|---|--:|\n",
    );
    for (label, pts) in series(points) {
        for p in pts {
            let pct = match (p.ceiling, p.pct) {
                (true, _) => "(ceiling)".to_owned(),
                (false, Some((pct, of))) => format!("{pct:.0}% {of}"),
                (false, None) => "n/a".to_owned(),
            };
            let _ = writeln!(
                out,
                "| {label} | {} | {:.3} | {:.2} M | {pct} | {} |",
                p.rows,
                p.seconds,
                p.rows_per_sec / 1e6,
                cell(p.peak_mib(), 1)
            );
        }
    }
    let checks = checks(points);
    out.push_str("\n## Scale targets\n\n");
    if checks.iter().all(|c| c.met().is_none()) {
        out.push_str(
            "Not checked: the sweep needs a tenth and a hundredth of its largest \
             size (e.g. 1e5,1e6,1e7).\n",
        );
        return out;
    }
    out.push_str(
        "| Workload | Variant | Flavor | Largest | Rows/s vs a tenth of it | Peak RSS vs a hundredth of it (MiB) | target met |\n\
         |---|---|---|--:|--:|--:|---|\n",
    );
    for c in &checks {
        let rate = c.rate.map_or("n/a".into(), |(rows, r)| {
            format!("{:.0}% of {rows}", r * 100.0)
        });
        let rss = c.rss.map_or("n/a".into(), |(rows, d)| {
            format!("{:+.1} vs {rows}", d as f64 / MIB)
        });
        let met = match c.met() {
            Some(true) => "yes",
            Some(false) => "no",
            None => "n/a",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {rate} | {rss} | {met} |",
            c.label, c.largest
        );
    }
    let _ = writeln!(
        out,
        "\nTargets (issue 19, stated for 1e8 against 1e7 and 1e6, checked here at \
         the largest size): rows/s at least {:.0} % of rows/s at a tenth of the \
         size; peak client RSS within {} MiB of the peak at a hundredth of it. \
         See docs/BENCHMARKS.md, \"Scale sweep\".",
        RATE_TARGET * 100.0,
        RSS_TARGET_BYTES / (1024 * 1024)
    );
    out
}

/// The suite's JSON (host, settings, every record) with a `sweep` section.
pub fn json(
    host: &Host,
    settings: &Settings,
    records: &[Record],
    sizes: &[u64],
    points: &[Point],
) -> Value {
    let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    let mut doc = report::json(host, settings, records);
    let sweep = json!({
        "sizes": sizes,
        "peak_rss": "VmHWM of the suite's process, reset before each execution \
                     (/proc/self/clear_refs); highest over the path's executions at the size",
        "points": points.iter().map(|p| json!({
            "path": p.label,
            "ceiling": p.ceiling,
            "rows": p.rows,
            "seconds": num(p.seconds),
            "rows_per_sec": num(p.rows_per_sec),
            "pct_of_ceiling": p.pct.map(|(x, _)| num(x)),
            "ceiling_name": p.pct.map(|(_, of)| of),
            "peak_rss_bytes": p.peak_rss,
        })).collect::<Vec<_>>(),
        "targets": checks(points).iter().map(|c| json!({
            "path": c.label,
            "largest": c.largest,
            "rate_reference_rows": c.rate.map(|(rows, _)| rows),
            "rows_per_sec_ratio": c.rate.map(|(_, r)| num(r)),
            "rss_reference_rows": c.rss.map(|(rows, _)| rows),
            "peak_rss_delta_bytes": c.rss.map(|(_, d)| d),
            "met": c.met(),
        })).collect::<Vec<_>>(),
    });
    if let Some(map) = doc.as_object_mut() {
        map.insert("sweep".into(), sweep);
    }
    doc
}

/// Writes `<stem>_scale.{md,json,svg}`; returns the three paths.
pub fn write(
    stem: &Path,
    host: &Host,
    settings: &Settings,
    records: &mut [Record],
    sizes: &[u64],
    peaks: &Peaks,
) -> Result<[PathBuf; 3]> {
    let points = points(records, peaks);
    let md_text = markdown(host, settings, sizes, &points);
    println!("{md_text}");
    let mut name = stem.file_name().unwrap_or_default().to_owned();
    name.push("_scale");
    let stem = stem.with_file_name(name);
    let (md, json_path, svg) = (
        stem.with_extension("md"),
        stem.with_extension("json"),
        stem.with_extension("svg"),
    );
    report::write(&md, &md_text)?;
    let text = serde_json::to_string_pretty(&json(host, settings, records, sizes, &points))?;
    report::write(&json_path, &(text + "\n"))?;
    let title = format!(
        "{}: scale sweep, {}",
        stem.file_name().unwrap_or_default().to_string_lossy(),
        host.transport
    );
    report::write(&svg, &crate::svg_scale::chart(&title, &points)?)?;
    Ok([md, json_path, svg])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two paths and a ceiling at three sizes: the first path flat and
    /// fast, the second slowing down and growing.
    pub(crate) fn fixed() -> Vec<Point> {
        let mut out = Vec::new();
        for (i, rows) in [100_000u64, 1_000_000, 10_000_000].into_iter().enumerate() {
            let p = |label: &str, ceiling: bool, rate: f64, rss_mib: u64| Point {
                rows,
                label: label.into(),
                ceiling,
                seconds: rows as f64 / rate,
                rows_per_sec: rate,
                pct: (!ceiling).then_some((rate / 10e6 * 100.0, "insert ceiling")),
                peak_rss: Some(rss_mib * 1024 * 1024),
            };
            out.push(p("insert.ceiling | server | x", true, 10e6, 20));
            out.push(p("insert.bulk | Inserter <&> | sync", false, 8e6, 40));
            out.push(p(
                "query.full_scan | query_arrow | sync",
                false,
                [60e6, 50e6, 30e6][i],
                [30, 60, 200][i],
            ));
        }
        out
    }

    #[test]
    fn checks_compare_the_largest_size_with_a_tenth_and_a_hundredth() {
        let checks = checks(&fixed());
        assert_eq!(checks.len(), 2, "ceilings are not checked: {checks:?}");
        let flat = &checks[0];
        assert_eq!(flat.largest, 10_000_000);
        assert_eq!(flat.rate, Some((1_000_000, 1.0)));
        assert_eq!(flat.rss, Some((100_000, 0)));
        assert_eq!(flat.met(), Some(true));
        let slow = &checks[1];
        assert_eq!(slow.rate, Some((1_000_000, 0.6)));
        assert_eq!(slow.rss, Some((100_000, 170 * 1024 * 1024)));
        assert_eq!(slow.met(), Some(false));
    }

    #[test]
    fn sizes_without_references_are_not_checked() {
        let two: Vec<Point> = fixed()
            .into_iter()
            .filter(|p| p.rows != 1_000_000 && p.rows != 100_000)
            .collect();
        assert!(checks(&two).iter().all(|c| c.met().is_none()));
        let settings = Settings {
            rows: 10_000_000,
            workers: 2,
            repeat: 1,
            warmup: false,
            command: "BENCH_SCALE=1e7 cargo run".into(),
        };
        let host = Host::collect(Path::new("/nonexistent/hyperd"), "tcp");
        let md = markdown(&host, &settings, &[10_000_000], &two);
        assert!(md.contains("Not checked"), "{md}");
    }

    #[test]
    fn markdown_and_json_carry_every_point_and_the_targets() {
        let points = fixed();
        let settings = Settings {
            rows: 10_000_000,
            workers: 2,
            repeat: 3,
            warmup: true,
            command: "BENCH_SCALE=1e5,1e6,1e7 cargo run".into(),
        };
        let host = Host::collect(Path::new("/nonexistent/hyperd"), "tcp");
        let sizes = [100_000, 1_000_000, 10_000_000];
        let md = markdown(&host, &settings, &sizes, &points);
        // Three sizes, and its row of the targets table.
        assert_eq!(
            md.matches("| query.full_scan | query_arrow | sync |")
                .count(),
            4
        );
        assert!(
            md.contains("| 10000000 | 0.333 | 30.00 M | 300% insert ceiling | 200.0 |"),
            "{md}"
        );
        assert!(
            md.contains("| 60% of 1000000 | +170.0 vs 100000 | no |"),
            "{md}"
        );
        let doc = json(&host, &settings, &[], &sizes, &points);
        let sweep = &doc["sweep"];
        assert_eq!(sweep["points"].as_array().map(Vec::len), Some(9));
        assert_eq!(sweep["sizes"][2], 10_000_000);
        assert_eq!(sweep["targets"][1]["met"], false);
        assert_eq!(sweep["points"][2]["peak_rss_bytes"], 30 * 1024 * 1024);
    }
}
