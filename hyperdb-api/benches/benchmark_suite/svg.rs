//! `benchmark_suite.svg`: each path as a bar, in % of its ceiling, so a
//! reader sees at a glance how close every route comes to what hyperd can
//! do. Drawn with plotters' SVG backend (text is emitted as SVG `<text>`,
//! no font files or fontconfig needed); it opens in a browser and renders
//! on the repository page.

use plotters::prelude::*;

use crate::data::Result;
use crate::report::{Kind, Li, Record};

/// One bar: a path and how close it came to its ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    /// Percent of the ceiling (100 = as fast as hyperd's own drain/insert).
    pub pct: f64,
}

/// The bars of a run: inserts vs the insert ceiling, the row API vs the
/// DataRow drain, `query_arrow` vs the Arrow drain. Ceilings themselves and
/// paths without a ceiling are left out.
pub fn bars(records: &[Record]) -> Vec<Bar> {
    records
        .iter()
        .filter_map(|r| {
            let (pct, of) = vs_ceiling(r)?;
            let mut label = format!("{} | {}", r.workload, r.variant);
            if !r.flavor.is_empty() {
                label += &format!(" | {}", r.flavor);
            }
            Some(Bar {
                label: format!("{label} (vs {of})"),
                pct,
            })
        })
        .filter(|b| b.pct.is_finite())
        .collect()
}

/// The one ceiling a path is drawn against, and its % of it: inserts vs
/// the insert ceiling, the row API vs the DataRow drain, `query_arrow` vs
/// the Arrow drain. `None` for ceilings and paths without one.
pub fn vs_ceiling(r: &Record) -> Option<(f64, &'static str)> {
    match r.kind {
        Kind::Insert => Some((r.pct_insert?, "insert ceiling")),
        Kind::RowQuery(_) => Some((r.pct_row?, "DataRow drain")),
        Kind::ArrowQuery(_) => Some((r.pct_arrow?, "Arrow drain")),
        Kind::Lineitem(Li::Insert) => Some((r.pct_insert?, "insert ceiling")),
        Kind::Lineitem(Li::RowQuery) => Some((r.pct_row?, "DataRow drain")),
        Kind::Lineitem(Li::ArrowQuery) => Some((r.pct_arrow?, "Arrow drain")),
        _ => None,
    }
}

const ROW_HEIGHT: u32 = 22;
/// The label column's least width; longer labels widen it (about 7 px
/// per character of 12 px sans-serif) rather than being cut at the edge.
const MIN_LABEL_WIDTH: u32 = 430;
/// The bar area right of the labels.
const PLOT_WIDTH: u32 = 570;

/// The chart as SVG text: one horizontal bar per path, a dashed line at
/// 100 %, the figure at the end of each bar.
pub fn chart(title: &str, bars: &[Bar]) -> Result<String> {
    let n = bars.len().max(1);
    let height = 90 + ROW_HEIGHT * n as u32;
    let max = bars.iter().map(|b| b.pct).fold(100.0_f64, f64::max) * 1.12;
    let longest = bars.iter().map(|b| b.label.chars().count()).max();
    let label_width = MIN_LABEL_WIDTH.max(longest.unwrap_or(0) as u32 * 7 + 24);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (label_width + PLOT_WIDTH, height))
            .into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0.0..max, (0..n).into_segmented())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => {
                    bars.get(*i).map_or(String::new(), |b| b.label.clone())
                }
                _ => String::new(),
            })
            .x_desc("% of ceiling")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(plot_err)?;
        let colour = |pct: f64| {
            if pct >= 85.0 {
                RGBColor(46, 139, 87)
            } else if pct >= 60.0 {
                RGBColor(218, 165, 32)
            } else {
                RGBColor(205, 92, 92)
            }
        };
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (b.pct, SegmentValue::Exact(i + 1)),
                    ],
                    colour(b.pct).filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(plot_err)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                Text::new(
                    format!("{:.0}%", b.pct),
                    (b.pct + max * 0.01, SegmentValue::CenterOf(i)),
                    ("sans-serif", 12).into_font(),
                )
            }))
            .map_err(plot_err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![
                    (100.0, SegmentValue::Exact(0)),
                    (100.0, SegmentValue::Exact(n)),
                ],
                BLACK.stroke_width(1),
            )))
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

fn plot_err<E: std::fmt::Display>(e: E) -> crate::data::BoxError {
    format!("drawing the benchmark chart: {e}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed() -> Vec<Bar> {
        vec![
            Bar {
                label: "insert | Inserter <&> \"quoted\"".into(),
                pct: 72.5,
            },
            Bar {
                label: "full_scan | query_arrow".into(),
                pct: 131.0,
            },
        ]
    }

    #[test]
    fn chart_is_well_formed_svg_with_every_bar() {
        let svg = chart("benchmark_suite: tcp, 1000 rows", &fixed()).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim).map(String::from))
            .collect();
        // Labels (escaped in the file, intact once parsed) and figures.
        assert!(
            texts
                .iter()
                .any(|t| t == "insert | Inserter <&> \"quoted\""),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == "72%" || t == "73%"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "131%"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "benchmark_suite: tcp, 1000 rows"));
    }

    #[test]
    fn empty_run_still_draws() {
        let svg = chart("nothing measured", &[]).unwrap();
        roxmltree::Document::parse(&svg).expect("well-formed XML");
    }
}
