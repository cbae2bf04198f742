//! Horizontal bar charts (names on the left read well on a phone) with an
//! optional whisker per bar (a confidence interval, or p50 to p95) and the
//! individual runs as dots, the value written in a right-hand column.

use super::svg::{Plot, Scale, Svg, nice_ticks, text_width, zero_to_nice};

/// One bar.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub whisker: Option<(f64, f64)>,
    /// Individual observations (runs), drawn as dots on the bar.
    pub dots: Vec<f64>,
    pub color: String,
    /// Written at the right, e.g. `1,882 ± 63`.
    pub note: String,
}

/// Width of every chart's view box, px.
pub const WIDTH: f64 = 460.0;

/// A horizontal bar chart; `tick` formats axis values (units go in `axis_label`).
pub fn hbars(
    kind: &str,
    title: &str,
    axis_label: &str,
    bars: &[Bar],
    tick: &dyn Fn(f64) -> String,
) -> String {
    let label_w = bars.iter().map(|b| text_width(&b.label)).fold(40.0, f64::max).min(140.0);
    let note_w = bars.iter().map(|b| text_width(&b.note)).fold(30.0, f64::max).min(130.0);
    let row = 26.0;
    let top = 30.0;
    let height = top + row * bars.len() as f64 + 46.0;
    let max = bars
        .iter()
        .flat_map(|b| [b.value, b.whisker.map_or(0.0, |w| w.1)].into_iter().chain(b.dots.iter().copied()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let x = zero_to_nice(max);
    let plot = Plot {
        left: label_w + 14.0,
        top,
        width: WIDTH - label_w - 14.0 - note_w - 16.0,
        height: row * bars.len() as f64,
        x,
        y: Scale::Linear { min: 0.0, max: 1.0 },
    };
    let mut svg = Svg::new(kind, title, WIDTH, height);
    let Scale::Linear { max: xmax, .. } = x else { unreachable!("bars use a linear scale") };
    let ticks: Vec<(f64, String)> = nice_ticks(0.0, xmax, 5).into_iter().map(|v| (v, tick(v))).collect();
    for (v, _) in &ticks {
        let px = plot.px(*v);
        svg.line(px, plot.top, px, plot.top + plot.height, "#eeeeee", 1.0);
    }
    plot.axes(&mut svg, &ticks, &[], axis_label, "");
    for (i, b) in bars.iter().enumerate() {
        let cy = top + row * (i as f64 + 0.5);
        svg.text(plot.left - 6.0, cy + 4.0, "end", "#222", &b.label);
        if b.value.is_finite() {
            svg.rect(plot.left, cy - 7.0, plot.px(b.value) - plot.left, 14.0, &b.color, 0.85);
        }
        if let Some((lo, hi)) = b.whisker {
            let (x1, x2) = (plot.px(lo), plot.px(hi));
            svg.line(x1, cy, x2, cy, "#111", 1.5);
            svg.line(x1, cy - 5.0, x1, cy + 5.0, "#111", 1.5);
            svg.line(x2, cy - 5.0, x2, cy + 5.0, "#111", 1.5);
        }
        for d in &b.dots {
            svg.circle(plot.px(*d), cy, 2.6, "#111");
        }
        svg.text(WIDTH - 4.0, cy + 4.0, "end", "#222", &b.note);
    }
    svg.finish()
}
