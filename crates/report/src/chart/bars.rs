//! Horizontal bar charts (names on the left read well on a phone) with an
//! optional whisker per bar (a confidence interval, or p50 to p95) and the
//! individual runs as dots, the value written in a right-hand column (its
//! short form for every bar when one does not fit). Names too long for their
//! column are shortened with an ellipsis; the value axis takes the finest
//! 1-2-5 step whose labels fit the plot.

use super::axis::Axis;
use super::axis::Scale;
use super::svg::{Plot, Svg};
use super::text::{fit_plain, text_width};

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
    /// Written instead when a note of some bar does not fit, e.g. `1,882`.
    pub short_note: String,
}

/// Width of every chart's view box, px: about a phone's width, so that the
/// 13 px text is drawn at 11 px or more there.
pub const WIDTH: f64 = 420.0;

/// Widest column of names, px.
const LABEL_MAX: f64 = 120.0;

/// Narrowest plot, px: the column of values gets what is left.
const PLOT_MIN: f64 = 130.0;

/// A horizontal bar chart; units go in `axis_label`.
pub fn hbars(kind: &str, title: &str, axis_label: &str, bars: &[Bar]) -> String {
    let labels: Vec<String> = bars.iter().map(|b| fit_plain(&b.label, LABEL_MAX)).collect();
    let label_w = labels.iter().map(|l| text_width(l)).fold(30.0, f64::max);
    let note_max = WIDTH - 6.0 - label_w - 6.0 - PLOT_MIN - 12.0 - 6.0;
    let long = bars.iter().all(|b| text_width(&b.note) <= note_max);
    let notes: Vec<String> =
        bars.iter().map(|b| fit_plain(if long { &b.note } else { &b.short_note }, note_max)).collect();
    let note_w = notes.iter().map(|l| text_width(l)).fold(30.0, f64::max);
    let row = 26.0;
    let top = 30.0;
    let max = bars
        .iter()
        .flat_map(|b| [b.value, b.whisker.map_or(0.0, |w| w.1)].into_iter().chain(b.dots.iter().copied()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let left = 6.0 + label_w + 6.0;
    let width = WIDTH - left - 12.0 - note_w - 6.0;
    let (x, ticks) = Axis::ZeroTo(max).horizontal(left, width, (2.0, WIDTH - 2.0));
    let plot = Plot {
        left,
        top,
        width,
        height: row * bars.len() as f64,
        x,
        y: Scale::Linear { min: 0.0, max: 1.0 },
        view_width: WIDTH,
    };
    let height = top + plot.height + plot.below(&ticks);
    let mut svg = Svg::new(kind, title, WIDTH, height);
    for (v, _) in &ticks {
        let px = plot.px(*v);
        svg.line(px, plot.top, px, plot.top + plot.height, "#eeeeee", 1.0);
    }
    plot.axes(&mut svg, &ticks, &[], axis_label, "");
    for (i, b) in bars.iter().enumerate() {
        let cy = top + row * (i as f64 + 0.5);
        svg.text(plot.left - 6.0, cy + 4.0, "end", "#222", &labels[i]);
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
        svg.text(WIDTH - 6.0, cy + 4.0, "end", "#222", &notes[i]);
    }
    svg.finish()
}
