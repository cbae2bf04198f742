//! A small SVG writer for the report's charts: elements as text, numbers
//! rounded to a tenth of a pixel (stable snapshots, small files), scales
//! (linear and log10) with "nice" ticks (Heckbert, "Nice numbers for graph
//! labels", Graphics Gems, 1990), axes with labelled units, and a legend.
//! Text uses the reader's own sans-serif font: nothing is fetched.

use std::fmt::Write as _;

/// Colour-blind-safe palette (Okabe and Ito, 2008), without the yellow that
/// disappears on white.
pub const PALETTE: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555"];

/// The palette colour of the `i`-th series.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A number as an SVG coordinate: one decimal, no `-0`.
pub fn n(x: f64) -> String {
    let s = format!("{x:.1}");
    let s = s.strip_suffix(".0").unwrap_or(&s).to_owned();
    if s == "-0" { "0".to_owned() } else { s }
}

/// An SVG document under construction.
pub struct Svg {
    buf: String,
}

/// Approximate width of `s` in pixels at the charts' 13 px font.
pub fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * 7.0
}

impl Svg {
    /// Starts a chart of `kind` (the `data-chart` attribute tests look for).
    pub fn new(kind: &str, title: &str, width: f64, height: f64) -> Svg {
        let mut buf = String::new();
        let _ = write!(
            buf,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" viewBox=\"0 0 {} {}\" \
             width=\"{}\" height=\"{}\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, \
             sans-serif\" font-size=\"13\"><title>{}</title>",
            esc(kind),
            n(width),
            n(height),
            n(width),
            n(height),
            esc(title)
        );
        let _ = write!(
            buf,
            "<text x=\"4\" y=\"16\" font-size=\"15\" font-weight=\"600\" fill=\"#222\">{}</text>",
            esc(title)
        );
        Svg { buf }
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = write!(
            self.buf,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            n(width)
        );
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, opacity: f64) {
        let _ = write!(
            self.buf,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" fill-opacity=\"{}\"/>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            n(opacity)
        );
    }

    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = write!(
            self.buf,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
            n(x),
            n(y),
            n(r)
        );
    }

    /// Text; `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, fill: &str, s: &str) {
        let _ = write!(
            self.buf,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"{fill}\">{}</text>",
            n(x),
            n(y),
            esc(s)
        );
    }

    /// Text rotated a quarter turn counter-clockwise (a y-axis label).
    pub fn vertical_text(&mut self, x: f64, y: f64, s: &str) {
        let _ = write!(
            self.buf,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 {} {})\">{}</text>",
            n(x),
            n(y),
            n(x),
            n(y),
            esc(s)
        );
    }

    /// A polyline; `dash` draws it dashed.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, opacity: f64, dash: bool) {
        if points.is_empty() {
            return;
        }
        let pts: Vec<String> = points.iter().map(|(x, y)| format!("{},{}", n(*x), n(*y))).collect();
        let _ = write!(
            self.buf,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{}\" stroke-opacity=\"{}\" \
             stroke-linejoin=\"round\"{}/>",
            pts.join(" "),
            n(width),
            n(opacity),
            if dash { " stroke-dasharray=\"4 3\"" } else { "" }
        );
    }

    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

/// A mapping from data to the unit interval.
#[derive(Debug, Clone, Copy)]
pub enum Scale {
    Linear {
        min: f64,
        max: f64,
    },
    /// Base 10; `min > 0`.
    Log {
        min: f64,
        max: f64,
    },
}

impl Scale {
    /// Where `v` falls, 0..=1 (clamped).
    pub fn unit(&self, v: f64) -> f64 {
        let u = match *self {
            Scale::Linear { min, max } => (v - min) / (max - min),
            Scale::Log { min, max } => (v.max(min).log10() - min.log10()) / (max.log10() - min.log10()),
        };
        if u.is_finite() { u.clamp(0.0, 1.0) } else { 0.0 }
    }

    /// Tick positions within the scale.
    pub fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Linear { min, max } => nice_ticks(min, max, 5),
            Scale::Log { min, max } => {
                let mut out = Vec::new();
                let mut p = 10f64.powf(min.log10().floor());
                while p <= max * 1.000_001 {
                    for m in [1.0, 2.0, 5.0] {
                        let v = p * m;
                        if v >= min * 0.999_999 && v <= max * 1.000_001 {
                            out.push(v);
                        }
                    }
                    p *= 10.0;
                }
                out
            }
        }
    }
}

/// A "nice" step (1, 2 or 5 times a power of ten) for about `count` ticks.
fn nice_step(span: f64, count: usize) -> f64 {
    let raw = span / count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Ticks at a nice step covering `[min, max]`.
pub fn nice_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    if max.partial_cmp(&min) != Some(std::cmp::Ordering::Greater) {
        return vec![min];
    }
    let step = nice_step(max - min, count);
    let mut v = (min / step).ceil() * step;
    let mut out = Vec::new();
    while v <= max + step * 1e-9 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// A linear scale from 0 to a nice number at or above `max`.
pub fn zero_to_nice(max: f64) -> Scale {
    let max = if max > 0.0 && max.is_finite() { max } else { 1.0 };
    let step = nice_step(max, 5);
    Scale::Linear { min: 0.0, max: (max / step).ceil() * step }
}

/// A plot area inside a chart, with its two scales.
#[derive(Debug, Clone, Copy)]
pub struct Plot {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub x: Scale,
    pub y: Scale,
}

impl Plot {
    pub fn px(&self, x: f64) -> f64 {
        self.left + self.x.unit(x) * self.width
    }

    pub fn py(&self, y: f64) -> f64 {
        self.top + self.height - self.y.unit(y) * self.height
    }

    /// Grid, axes, tick labels and axis labels.
    pub fn axes(
        &self,
        svg: &mut Svg,
        x_ticks: &[(f64, String)],
        y_ticks: &[(f64, String)],
        x_label: &str,
        y_label: &str,
    ) {
        let bottom = self.top + self.height;
        for (v, label) in y_ticks {
            let y = self.py(*v);
            svg.line(self.left, y, self.left + self.width, y, "#e3e3e3", 1.0);
            svg.text(self.left - 5.0, y + 4.0, "end", "#444", label);
        }
        for (v, label) in x_ticks {
            let x = self.px(*v);
            svg.line(x, bottom, x, bottom + 4.0, "#888", 1.0);
            svg.text(x, bottom + 17.0, "middle", "#444", label);
        }
        svg.line(self.left, bottom, self.left + self.width, bottom, "#888", 1.0);
        svg.line(self.left, self.top, self.left, bottom, "#888", 1.0);
        svg.text(self.left + self.width / 2.0, bottom + 34.0, "middle", "#333", x_label);
        if !y_label.is_empty() {
            svg.vertical_text(14.0, self.top + self.height / 2.0, y_label);
        }
    }
}

/// Draws a legend of coloured swatches, wrapping within `width`, starting at
/// (`x`, `y`); returns the height it took.
pub fn legend(svg: &mut Svg, items: &[(String, String)], x: f64, y: f64, width: f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    let (mut cx, mut cy) = (x, y);
    for (color, label) in items {
        let w = 18.0 + text_width(label) + 14.0;
        if cx > x && cx + w > x + width {
            cx = x;
            cy += 18.0;
        }
        svg.rect(cx, cy - 9.0, 12.0, 10.0, color, 1.0);
        svg.text(cx + 16.0, cy, "start", "#333", label);
        cx += w;
    }
    cy - y + 18.0
}

/// Height a legend would take (same layout as [`legend`]).
pub fn legend_height(items: &[(String, String)], width: f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    let (mut cx, mut rows) = (0.0, 1.0);
    for (_, label) in items {
        let w = 18.0 + text_width(label) + 14.0;
        if cx > 0.0 && cx + w > width {
            cx = 0.0;
            rows += 1.0;
        }
        cx += w;
    }
    rows * 18.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_ticks(0.0, 1_000.0, 5), vec![0.0, 200.0, 400.0, 600.0, 800.0, 1_000.0]);
        assert_eq!(nice_ticks(0.0, 7.3, 5), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(nice_ticks(0.0, 9.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        let Scale::Linear { max, .. } = zero_to_nice(1_882.0) else { panic!() };
        assert!((max - 2_000.0).abs() < 1e-9);
        assert_eq!(Scale::Log { min: 1.0, max: 100.0 }.ticks(), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(nice_ticks(5.0, 5.0, 5), vec![5.0]);
    }

    #[test]
    fn text_is_escaped_and_numbers_short() {
        assert_eq!(esc("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
        assert_eq!(n(12.04), "12");
        assert_eq!(n(-0.01), "0");
        assert_eq!(n(3.26), "3.3");
    }
}
