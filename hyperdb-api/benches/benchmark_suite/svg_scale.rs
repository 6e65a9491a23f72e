//! `benchmark_suite_scale.svg`: the sweep as two panels over the same log
//! x axis (rows): rows/s per path (log y: inserts and Arrow scans are an
//! order of magnitude apart), and peak client RSS per path (linear MiB:
//! flat is the point). Ceilings are thin lines, paths thick ones. A file of
//! its own beside the bar chart: the sweep runs as its own command, and
//! `make bench` keeps drawing only the bars.

use plotters::prelude::*;

use crate::data::Result;
use crate::sweep_report::{series, Point};

const WIDTH: u32 = 1000;
const PANEL_HEIGHT: u32 = 430;

/// The two-panel chart as SVG text.
pub fn chart(title: &str, points: &[Point]) -> Result<String> {
    let series = series(points);
    let finite = |x: f64| x.is_finite() && x > 0.0;
    let rows = || points.iter().map(|p| p.rows as f64);
    let (x_min, x_max) = (
        rows().fold(f64::INFINITY, f64::min),
        rows().fold(0.0_f64, f64::max),
    );
    // No points: an empty frame over 1e3..1e8, still a valid chart.
    let (x_min, x_max) = if x_max > 0.0 {
        (x_min / 2.0, x_max * 2.0)
    } else {
        (1e3, 1e8)
    };
    let rates: Vec<f64> = points
        .iter()
        .map(|p| p.rows_per_sec)
        .filter(|&r| finite(r))
        .collect();
    let (r_min, r_max) = (
        rates.iter().copied().fold(f64::INFINITY, f64::min),
        rates.iter().copied().fold(0.0_f64, f64::max),
    );
    // Whole decades: plotters puts a log axis's key points at powers of
    // ten and between them, so a partial lowest decade would go unlabelled.
    let decade = |x: f64, up: bool| {
        let e = x.log10();
        10f64.powf(if up { e.ceil() } else { e.floor() })
    };
    let (r_min, r_max) = if r_max > 0.0 {
        (decade(r_min, false), decade(r_max * 1.2, true))
    } else {
        (1e5, 1e9)
    };
    // Headroom above the highest RSS for the legend.
    let rss_max = points
        .iter()
        .filter_map(Point::peak_mib)
        .fold(16.0_f64, f64::max)
        * 2.2;

    let colour = |i: usize| Palette99::pick(i).to_rgba();
    let style = |i: usize, ceiling: bool| colour(i).stroke_width(if ceiling { 1 } else { 3 });
    let x_fmt = |v: &f64| format!("{v:.0e}");

    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (WIDTH, 40 + 2 * PANEL_HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let root = root.titled(title, ("sans-serif", 18)).map_err(plot_err)?;
        let (top, bottom) = root.split_vertically(PANEL_HEIGHT);

        let mut rate = ChartBuilder::on(&top)
            .caption("rows/s (log scale)", ("sans-serif", 14))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), (r_min..r_max).log_scale())
            .map_err(plot_err)?;
        rate.configure_mesh()
            .x_desc("rows")
            .y_desc("rows/s")
            // A line at every 1..9 x 10^k (the default ten land in the top
            // decade only), labelled at 1, 2 and 5 x 10^k.
            .y_labels(40)
            .bold_line_style(BLACK.mix(0.08))
            .light_line_style(WHITE)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|v| rate_label(*v))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(plot_err)?;
        for (i, (_, pts)) in series.iter().enumerate() {
            let line: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| finite(p.rows_per_sec))
                .map(|p| (p.rows as f64, p.rows_per_sec))
                .collect();
            let ceiling = pts.iter().any(|p| p.ceiling);
            rate.draw_series(std::iter::once(PathElement::new(
                line.clone(),
                style(i, ceiling),
            )))
            .map_err(plot_err)?;
            rate.draw_series(
                line.into_iter()
                    .map(|xy| Circle::new(xy, 3, colour(i).filled())),
            )
            .map_err(plot_err)?;
        }

        let mut rss = ChartBuilder::on(&bottom)
            .caption("peak client RSS, MiB", ("sans-serif", 14))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..rss_max)
            .map_err(plot_err)?;
        rss.configure_mesh()
            .x_desc("rows")
            .y_desc("MiB")
            .x_label_formatter(&x_fmt)
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(plot_err)?;
        for (i, (label, pts)) in series.iter().enumerate() {
            let line: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| Some((p.rows as f64, p.peak_mib()?)))
                .collect();
            let ceiling = pts.iter().any(|p| p.ceiling);
            rss.draw_series(std::iter::once(PathElement::new(
                line.clone(),
                style(i, ceiling),
            )))
            .map_err(plot_err)?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style(i, ceiling)));
            rss.draw_series(
                line.into_iter()
                    .map(|xy| Circle::new(xy, 3, colour(i).filled())),
            )
            .map_err(plot_err)?;
        }
        if !series.is_empty() {
            rss.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

/// `20 M`, `2.0 M`, `500 k`: an axis label for rows/s at 1, 2 and
/// 5 x 10^k, none elsewhere.
fn rate_label(v: f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        return String::new();
    }
    match v {
        v if v >= 1e7 => format!("{:.0} M", v / 1e6),
        v if v >= 1e6 => format!("{:.1} M", v / 1e6),
        v => format!("{:.0} k", v / 1e3),
    }
}

fn plot_err<E: std::fmt::Display>(e: E) -> crate::data::BoxError {
    format!("drawing the scale chart: {e}").into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep_report::tests::fixed;

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim).map(String::from))
            .collect()
    }

    #[test]
    fn sweep_chart_is_well_formed_svg_with_every_path() {
        let svg = chart("benchmark_suite_scale: tcp", &fixed()).unwrap();
        let texts = texts(&svg);
        // Legend labels (escaped in the file, intact once parsed), the
        // panels, and the log axis in powers of ten.
        for want in [
            "insert.bulk | Inserter <&> | sync",
            "query.full_scan | query_arrow | sync",
            "insert.ceiling | server | x",
            "rows/s (log scale)",
            "peak client RSS, MiB",
            "benchmark_suite_scale: tcp",
            "1e6",
        ] {
            assert!(texts.iter().any(|t| t == want), "{want}: {texts:?}");
        }
        // One polyline per path per panel, one dot per point per panel.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let circles = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        assert_eq!(circles, 2 * fixed().len());
    }

    #[test]
    fn rate_labels_keep_small_rates_readable() {
        assert_eq!(rate_label(20e6), "20 M");
        assert_eq!(rate_label(5e6), "5.0 M");
        assert_eq!(rate_label(1e6), "1.0 M");
        assert_eq!(rate_label(2e5), "200 k");
        assert_eq!(rate_label(3e5), "");
        assert_eq!(rate_label(7e7), "");
    }

    #[test]
    fn empty_and_single_size_sweeps_still_draw() {
        texts(&chart("nothing measured", &[]).unwrap());
        let one: Vec<Point> = fixed().into_iter().filter(|p| p.rows == 100_000).collect();
        let texts = texts(&chart("one size", &one).unwrap());
        assert!(texts
            .iter()
            .any(|t| t == "query.full_scan | query_arrow | sync"));
    }
}
