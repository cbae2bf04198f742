//! Line charts: several series over a shared x axis (seconds of a run, or
//! percentiles on HdrHistogram's log scale of 1/(1−p)), a legend above the
//! plot, and linear or log y. The axes choose their ticks for the plot's
//! size ([`super::axis`]), so the left margin follows the widest y label.

use super::axis::Axis;
use super::bars::WIDTH;
use super::svg::{Key, Plot, Svg, legend, legend_height};
use super::text::text_width;

/// One series.
#[derive(Debug, Clone)]
pub struct Line {
    pub color: String,
    pub points: Vec<(f64, f64)>,
    pub width: f64,
    pub opacity: f64,
    pub dashed: bool,
}

/// A line chart.
pub struct LineChart<'a> {
    pub kind: &'a str,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub legend: Vec<Key>,
    /// Height of the plot area, px.
    pub plot_height: f64,
}

/// Room right of the plot, px (half of a last x label such as `10` or `99.999%`).
const RIGHT: f64 = 32.0;

impl LineChart<'_> {
    pub fn render(&self) -> String {
        let (y, y_ticks) = self.y.vertical(self.plot_height);
        let y_label_w = y_ticks.iter().map(|(_, l)| text_width(l)).fold(8.0, f64::max);
        let left = 24.0 + y_label_w + 8.0;
        let legend_w = WIDTH - left - 8.0;
        let top = 30.0 + legend_height(&self.legend, legend_w) + 8.0;
        let width = WIDTH - left - RIGHT;
        let (x, x_ticks) = self.x.horizontal(left, width, (2.0, WIDTH - 2.0));
        let plot = Plot { left, top, width, height: self.plot_height, x, y, view_width: WIDTH };
        let height = top + self.plot_height + plot.below(&x_ticks);
        let mut svg = Svg::new(self.kind, &self.title, WIDTH, height);
        legend(&mut svg, &self.legend, plot.left, 30.0 + 12.0, legend_w);
        plot.axes(&mut svg, &x_ticks, &y_ticks, &self.x_label, &self.y_label);
        for line in &self.lines {
            let pts: Vec<(f64, f64)> = line
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(x, y)| (plot.px(*x), plot.py(*y)))
                .collect();
            svg.polyline(&pts, &line.color, line.width, line.opacity, line.dashed);
        }
        svg.finish()
    }
}
