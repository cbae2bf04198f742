//! Line charts: several series over a shared x axis (seconds of a run, or
//! percentiles on HdrHistogram's log scale of 1/(1−p)), a legend above the
//! plot, and linear or log y.

use super::bars::WIDTH;
use super::svg::{Plot, Scale, Svg, legend, legend_height};

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
    pub x: Scale,
    pub y: Scale,
    pub x_ticks: Vec<(f64, String)>,
    pub y_ticks: Vec<(f64, String)>,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// (colour, label) entries.
    pub legend: Vec<(String, String)>,
    /// Height of the plot area, px.
    pub plot_height: f64,
}

impl LineChart<'_> {
    pub fn render(&self) -> String {
        let legend_h = legend_height(&self.legend, WIDTH - 70.0);
        let top = 30.0 + legend_h + 6.0;
        let y_label_w = self.y_ticks.iter().map(|(_, l)| super::svg::text_width(l)).fold(20.0, f64::max);
        let plot = Plot {
            left: 26.0 + y_label_w + 6.0,
            top,
            width: WIDTH - (26.0 + y_label_w + 6.0) - 30.0,
            height: self.plot_height,
            x: self.x,
            y: self.y,
        };
        let height = top + self.plot_height + 44.0;
        let mut svg = Svg::new(self.kind, &self.title, WIDTH, height);
        legend(&mut svg, &self.legend, plot.left, 30.0 + 12.0, WIDTH - plot.left - 10.0);
        plot.axes(&mut svg, &self.x_ticks, &self.y_ticks, &self.x_label, &self.y_label);
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
