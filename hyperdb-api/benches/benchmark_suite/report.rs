//! Records, "% of ceiling", and the two artifacts: a Markdown table with the
//! host block, and JSON with every field of every record.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use crate::data::{Query, Result, BYTES_PER_ROW};
use crate::host::Host;
use crate::lineitem_data;
use crate::mix::{MixPath, MixQuery};

/// What a lineitem record measures, and so which of lineitem's ceilings it
/// is read against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Li {
    InsertCeiling,
    /// hyperd's COPY of the rows from an Arrow file of its own disk.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    ArrowCopyCeiling,
    RowCeiling,
    ArrowCeiling,
    Insert,
    /// The row API: vs the row drain and the Arrow drain.
    RowQuery,
    /// `query_arrow`: vs the Arrow drain.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    ArrowQuery,
}

impl Li {
    pub fn is_ceiling(self) -> bool {
        matches!(
            self,
            Li::InsertCeiling | Li::ArrowCopyCeiling | Li::RowCeiling | Li::ArrowCeiling
        )
    }
}

/// What a record measures, and so which ceiling it is read against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    InsertCeiling,
    /// hyperd's COPY of the rows from an Arrow file of its own disk: the
    /// bound of every client that sends Arrow.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    ArrowCopyCeiling,
    /// HyperBinary DataRows drained, not decoded.
    RowCeiling(Query),
    /// Arrow IPC bytes drained, not decoded.
    ArrowCeiling(Query),
    Insert,
    /// The row API (`execute_query`): vs the row drain and the Arrow drain.
    RowQuery(Query),
    /// `query_arrow`: vs the Arrow drain.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    ArrowQuery(Query),
    /// The mix's `DataRow` drain of a query (on a kept socket).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    MixRowCeiling(MixQuery),
    /// The mix's Arrow drain of a query.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    MixArrowCeiling(MixQuery),
    /// A read path of the mix: latency, vs both drains.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    Mix(MixQuery, MixPath),
    /// A `lineitem` workload or ceiling, read against lineitem's ceilings.
    Lineitem(Li),
}

impl Kind {
    pub fn is_ceiling(self) -> bool {
        matches!(
            self,
            Kind::InsertCeiling
                | Kind::ArrowCopyCeiling
                | Kind::RowCeiling(_)
                | Kind::ArrowCeiling(_)
                | Kind::MixRowCeiling(_)
                | Kind::MixArrowCeiling(_)
        ) || matches!(self, Kind::Lineitem(l) if l.is_ceiling())
    }

    /// Logical bytes of one row of the table the record writes or reads.
    pub fn bytes_per_row(self) -> u64 {
        match self {
            Kind::Lineitem(_) => lineitem_data::BYTES_PER_ROW,
            _ => BYTES_PER_ROW,
        }
    }

    /// Whether the record belongs to the query mix's table.
    pub fn is_mix(self) -> bool {
        matches!(
            self,
            Kind::MixRowCeiling(_) | Kind::MixArrowCeiling(_) | Kind::Mix(..)
        )
    }
}

/// One row of the result table.
#[derive(Clone, Debug)]
pub struct Record {
    pub kind: Kind,
    pub workload: String,
    pub variant: String,
    pub flavor: String,
    /// Rows of the table(s) written or read.
    pub rows: u64,
    /// Rows the result had (queries), or rows stored (inserts).
    pub result_rows: u64,
    /// Seconds of each measured execution (warm-up excluded).
    pub runs: Vec<f64>,
    pub pct_insert: Option<f64>,
    /// Inserts: % of hyperd's own Arrow COPY from a file.
    pub pct_copy: Option<f64>,
    pub pct_row: Option<f64>,
    pub pct_arrow: Option<f64>,
}

impl Record {
    pub fn median(&self) -> f64 {
        let mut t = self.runs.clone();
        t.sort_by(f64::total_cmp);
        match t.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => t[n / 2],
            n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
        }
    }

    /// The 95th percentile (nearest rank) of the executions.
    pub fn p95(&self) -> f64 {
        let mut t = self.runs.clone();
        t.sort_by(f64::total_cmp);
        match t.len() {
            0 => f64::NAN,
            n => t[((n as f64 * 0.95).ceil() as usize).clamp(1, n) - 1],
        }
    }

    pub fn min(&self) -> f64 {
        self.runs.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    pub fn rows_per_sec(&self) -> f64 {
        self.rows as f64 / self.median()
    }

    pub fn mb_per_sec(&self) -> f64 {
        (self.rows * self.kind.bytes_per_row()) as f64 / 1e6 / self.median()
    }

    pub fn is_ceiling(&self) -> bool {
        self.kind.is_ceiling()
    }

    /// The "% of ceiling" cell.
    pub fn pct_cell(&self) -> String {
        let f = |p: Option<f64>, what: &str| p.map(|p| format!("{p:.0}% {what}"));
        let parts: Vec<String> = [
            f(self.pct_insert, "insert"),
            f(self.pct_copy, "Arrow COPY"),
            f(self.pct_row, "row drain"),
            f(self.pct_arrow, "Arrow drain"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if self.is_ceiling() {
            "(ceiling)".into()
        } else if parts.is_empty() {
            "n/a".into()
        } else {
            parts.join(" · ")
        }
    }
}

/// Fills every record's percentages from the ceilings measured in the run.
pub fn fill_percentages(records: &mut [Record]) {
    let ceiling = |kind: Kind, records: &[Record]| {
        records
            .iter()
            .find(|r| r.kind == kind && r.rows > 0)
            .map(Record::median)
    };
    let insert = ceiling(Kind::InsertCeiling, records);
    let copy = ceiling(Kind::ArrowCopyCeiling, records);
    let snapshot = records.to_vec();
    for r in records.iter_mut() {
        // Same rows on both sides, so the ratio of times is the ratio of rates.
        let median = r.median();
        let pct = |c: Option<f64>| c.map(|c| c / median * 100.0);
        match r.kind {
            Kind::Insert => {
                r.pct_insert = pct(insert);
                r.pct_copy = pct(copy);
            }
            Kind::RowQuery(q) => {
                r.pct_row = pct(ceiling(Kind::RowCeiling(q), &snapshot));
                r.pct_arrow = pct(ceiling(Kind::ArrowCeiling(q), &snapshot));
            }
            Kind::ArrowQuery(q) => r.pct_arrow = pct(ceiling(Kind::ArrowCeiling(q), &snapshot)),
            Kind::Mix(q, _) => {
                r.pct_row = pct(ceiling(Kind::MixRowCeiling(q), &snapshot));
                r.pct_arrow = pct(ceiling(Kind::MixArrowCeiling(q), &snapshot));
            }
            Kind::Lineitem(l) => {
                let of = |c: Li| pct(ceiling(Kind::Lineitem(c), &snapshot));
                match l {
                    Li::Insert => {
                        r.pct_insert = of(Li::InsertCeiling);
                        r.pct_copy = of(Li::ArrowCopyCeiling);
                    }
                    Li::RowQuery => {
                        r.pct_row = of(Li::RowCeiling);
                        r.pct_arrow = of(Li::ArrowCeiling);
                    }
                    Li::ArrowQuery => r.pct_arrow = of(Li::ArrowCeiling),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// The result table, as Markdown.
pub fn table(records: &[Record]) -> String {
    let mut out = String::from(
        "| Workload | Variant | Flavor | Rows | Time (s) | Rows/sec | MB/sec | % of ceiling |\n\
         |---|---|---|--:|--:|--:|--:|---|\n",
    );
    for r in records.iter().filter(|r| !r.kind.is_mix()) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.3} | {:.2} M | {:.1} | {} |",
            r.workload,
            r.variant,
            r.flavor,
            r.rows,
            r.median(),
            r.rows_per_sec() / 1e6,
            r.mb_per_sec(),
            r.pct_cell()
        );
    }
    out
}

/// The query mix, as Markdown: latency per read path, median and p95 over
/// every execution, against both drains of the same SQL.
pub fn mix_table(records: &[Record]) -> String {
    let mut out = String::from(
        "| Workload | Variant | Flavor | Result rows | Median (ms) | p95 (ms) | Runs | % of ceiling |\n\
         |---|---|---|--:|--:|--:|--:|---|\n",
    );
    for r in records.iter().filter(|r| r.kind.is_mix()) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.3} | {:.3} | {} | {} |",
            r.workload,
            r.variant,
            r.flavor,
            r.result_rows,
            r.median() * 1e3,
            r.p95() * 1e3,
            r.runs.len(),
            r.pct_cell()
        );
    }
    out
}

/// One query's check of the route targets.
#[derive(Clone, Debug)]
pub struct RouteCheck {
    pub query: MixQuery,
    /// Medians, seconds: `execute_query` as routed, forced onto Arrow, and
    /// the `DataRow` route (`execute_query_params`); the `DataRow` drain.
    pub routed: f64,
    pub arrow: f64,
    pub rows: f64,
    pub row_drain: f64,
}

impl RouteCheck {
    /// The faster route's time over the routed time: >= 0.95 is the target.
    pub fn vs_faster(&self) -> f64 {
        self.arrow.min(self.rows) / self.routed
    }

    /// The routed time over the `DataRow` drain's: <= 1.2 is the target for
    /// `SELECT 1` and the point lookup.
    pub fn vs_row_drain(&self) -> f64 {
        self.routed / self.row_drain
    }

    /// Whether the targets that apply to this query are met.
    pub fn met(&self) -> bool {
        let drain_target = matches!(self.query, MixQuery::Select1 | MixQuery::PointLookup);
        self.vs_faster() >= 0.95 && (!drain_target || self.vs_row_drain() <= 1.2)
    }
}

/// The route targets per mix query that has all four figures.
pub fn route_checks(records: &[Record]) -> Vec<RouteCheck> {
    let find = |kind: Kind| {
        records
            .iter()
            .find(|r| r.kind == kind && !r.runs.is_empty())
            .map(Record::median)
    };
    MixQuery::ALL
        .into_iter()
        .filter_map(|q| {
            Some(RouteCheck {
                query: q,
                routed: find(Kind::Mix(q, MixPath::Routed))?,
                arrow: find(Kind::Mix(q, MixPath::ArrowRoute))?,
                rows: find(Kind::Mix(q, MixPath::DataRowRoute))?,
                row_drain: find(Kind::MixRowCeiling(q))?,
            })
        })
        .collect()
}

/// The route targets, as Markdown.
pub fn route_table(checks: &[RouteCheck]) -> String {
    let mut out = String::from(
        "| Query | execute_query (ms) | Arrow route (ms) | DataRow route (ms) | \
         faster route / execute_query | execute_query / DataRow drain | target met |\n\
         |---|--:|--:|--:|--:|--:|---|\n",
    );
    for c in checks {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} | {} |",
            c.query.name(),
            c.routed * 1e3,
            c.arrow * 1e3,
            c.rows * 1e3,
            c.vs_faster(),
            c.vs_row_drain(),
            if c.met() { "yes" } else { "no" }
        );
    }
    out
}

/// Run settings printed in both artifacts.
#[derive(Clone, Debug)]
pub struct Settings {
    pub rows: u64,
    pub workers: usize,
    pub repeat: usize,
    pub warmup: bool,
    pub command: String,
}

impl Settings {
    /// " after a warm-up" when the runs had one, for the reports' prose.
    pub fn warmup_note(&self) -> &'static str {
        if self.warmup {
            " after a warm-up"
        } else {
            ""
        }
    }
}

/// The reports' "Host:" list.
pub fn host_section(out: &mut String, host: &Host) {
    out.push_str("Host:\n\n");
    for (label, value) in host.fields() {
        let _ = writeln!(out, "- {label}: {value}");
    }
}

pub fn markdown(host: &Host, settings: &Settings, records: &[Record]) -> String {
    let mut out = String::from("# hyperdb-api benchmark suite\n\n");
    let _ = writeln!(out, "`{}`\n", settings.command);
    let _ = writeln!(
        out,
        "{} rows per workload, {} workers, {} measured run(s) per workload{}; \
         a run shorter than 0.25 s is executed up to 10 times. Times are the \
         median over all executions.\n",
        settings.rows,
        settings.workers,
        settings.repeat,
        settings.warmup_note()
    );
    host_section(&mut out, host);
    out.push('\n');
    if records.iter().any(|r| !r.kind.is_mix()) {
        out.push_str(&table(records));
    }
    out.push_str(
        "\nRows = rows of the table(s) written or read (filtered and aggregation read \
         them all and return fewer). MB/sec = Rows x 24 bytes (the schema's logical \
         width) per second. % of ceiling = ceiling time / workload time over the same \
         rows: inserts against `insert.ceiling` (`INSERT ... SELECT`) and \
         `insert.arrow_copy_ceiling` (hyperd's COPY of the same rows from an Arrow \
         file on its own disk: no client, no socket); row-API queries against the row drain \
         (`query.row_ceiling`) and the Arrow drain (`query.ceiling`) of the same SQL; \
         Arrow queries against the Arrow drain. Ceilings use one connection. \
         `lineitem.*` rows are 16 columns, 128 bytes (mean), read against \
         lineitem's own ceilings. See docs/BENCHMARKS.md.\n",
    );
    if records.iter().any(|r| r.kind.is_mix()) {
        out.push_str("\n## Query mix\n\n");
        out.push_str(&mix_table(records));
        out.push_str(
            "\nLatency from sending the query to its last value, every value read; \
             median and p95 over every execution. % of ceiling = drain time / path time \
             for the same SQL (`DataRow`s: Parse/Bind/Execute/Sync on a kept socket; \
             Arrow: the COPY). The wide table has a tenth of the fact table's rows.\n\n",
        );
        out.push_str(&route_table(&route_checks(records)));
        out.push_str(
            "\nTargets: execute_query at least 95 % as fast as the faster route \
             (faster route / execute_query >= 0.95) on every query; for select_1 and \
             point_lookup also at most 1.2x the DataRow drain.\n",
        );
    }
    out
}

pub fn json(host: &Host, settings: &Settings, records: &[Record]) -> Value {
    let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    let host_json: serde_json::Map<String, Value> = host
        .fields()
        .into_iter()
        .map(|(k, v)| (k.to_lowercase(), Value::String(v)))
        .chain([
            ("cpu_model".into(), json!(host.cpu)),
            ("cores".into(), json!(host.cores)),
        ])
        .collect();
    json!({
        "suite": "benchmark_suite",
        "command": settings.command,
        "host": host_json,
        "config": {
            "rows": settings.rows,
            "workers": settings.workers,
            "repeat": settings.repeat,
            "warmup": settings.warmup,
            "bytes_per_row": BYTES_PER_ROW,
            "transport": host.transport,
        },
        "records": records.iter().map(|r| json!({
            "workload": r.workload,
            "variant": r.variant,
            "flavor": r.flavor,
            "ceiling": r.is_ceiling(),
            "rows": r.rows,
            "result_rows": r.result_rows,
            "seconds": num(r.median()),
            "seconds_min": num(r.min()),
            "seconds_max": num(r.max()),
            "seconds_p95": num(r.p95()),
            "executions": r.runs.len(),
            "runs": r.runs,
            "rows_per_sec": num(r.rows_per_sec()),
            "mb_per_sec": num(r.mb_per_sec()),
            "bytes_per_row": r.kind.bytes_per_row(),
            "pct_of_insert_ceiling": r.pct_insert.map(num),
            "pct_of_arrow_copy_ceiling": r.pct_copy.map(num),
            "pct_of_row_ceiling": r.pct_row.map(num),
            "pct_of_arrow_ceiling": r.pct_arrow.map(num),
        })).collect::<Vec<_>>(),
        "route_checks": route_checks(records).iter().map(|c| json!({
            "query": c.query.name(),
            "execute_query_seconds": num(c.routed),
            "arrow_route_seconds": num(c.arrow),
            "datarow_route_seconds": num(c.rows),
            "datarow_drain_seconds": num(c.row_drain),
            "faster_route_over_execute_query": num(c.vs_faster()),
            "execute_query_over_datarow_drain": num(c.vs_row_drain()),
            "met": c.met(),
        })).collect::<Vec<_>>(),
    })
}

/// Writes `text` to `path`, creating the directory.
pub fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: Kind, secs: f64) -> Record {
        Record {
            kind,
            workload: String::new(),
            variant: String::new(),
            flavor: String::new(),
            rows: 10,
            result_rows: 10,
            runs: vec![secs],
            pct_insert: None,
            pct_copy: None,
            pct_row: None,
            pct_arrow: None,
        }
    }

    #[test]
    fn inserts_are_read_against_both_insert_ceilings() {
        let mut records = vec![
            record(Kind::InsertCeiling, 1.0),
            record(Kind::ArrowCopyCeiling, 1.5),
            record(Kind::Insert, 2.0),
            record(Kind::Lineitem(Li::InsertCeiling), 2.0),
            record(Kind::Lineitem(Li::ArrowCopyCeiling), 3.0),
            record(Kind::Lineitem(Li::Insert), 4.0),
        ];
        fill_percentages(&mut records);
        assert_eq!(records[2].pct_cell(), "50% insert · 75% Arrow COPY");
        assert_eq!(records[5].pct_cell(), "50% insert · 75% Arrow COPY");
        assert_eq!(records[1].pct_cell(), "(ceiling)");
        assert_eq!(records[4].pct_cell(), "(ceiling)");
        // Without the Arrow COPY ceiling (a build without `arrow`), one figure.
        let mut records = vec![record(Kind::InsertCeiling, 1.0), record(Kind::Insert, 4.0)];
        fill_percentages(&mut records);
        assert_eq!(records[1].pct_cell(), "25% insert");
    }
}
