//! A small SVG writer for the report's charts: one element per line (a
//! snapshot diff reads element by element), numbers rounded to a tenth of a
//! pixel (stable snapshots, small files), scales (linear and log10), axes
//! with labelled units whose tick labels never overlap ([`super::axis`]),
//! and a legend. A chart has a `viewBox` and no fixed size: it takes the
//! width of its container, the page sets how wide at most. Text uses the
//! reader's own sans-serif font: nothing is fetched.

use std::fmt::Write as _;

use super::axis::{self, ROW, Scale};
pub use super::text::text_width;
use super::text::{FONT, TITLE_FONT, fit, fit_plain};

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
    width: f64,
}

impl Svg {
    /// Starts a chart of `kind` (the `data-chart` attribute tests look for)
    /// with a view box of `width` × `height` and no fixed size; the title is
    /// shortened to fit (the `<title>` keeps it whole).
    pub fn new(kind: &str, title: &str, width: f64, height: f64) -> Svg {
        let mut buf = String::new();
        let _ = writeln!(
            buf,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" viewBox=\"0 0 {} {}\" \
             role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" \
             font-size=\"{}\"><title>{}</title>",
            esc(kind),
            n(width),
            n(height),
            n(FONT),
            esc(title)
        );
        let _ = writeln!(
            buf,
            "<text x=\"4\" y=\"16\" font-size=\"{}\" font-weight=\"600\" fill=\"#222\">{}</text>",
            n(TITLE_FONT),
            esc(&fit(title, width - 8.0, TITLE_FONT, true))
        );
        Svg { buf, width }
    }

    /// Width of the view box.
    pub fn width(&self) -> f64 {
        self.width
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = writeln!(
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
        let _ = writeln!(
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
        let _ = writeln!(
            self.buf,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
            n(x),
            n(y),
            n(r)
        );
    }

    /// Text; `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, fill: &str, s: &str) {
        let _ = writeln!(
            self.buf,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"{fill}\">{}</text>",
            n(x),
            n(y),
            esc(s)
        );
    }

    /// Text rotated a quarter turn counter-clockwise (a y-axis label).
    pub fn vertical_text(&mut self, x: f64, y: f64, s: &str) {
        let _ = writeln!(
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
        let _ = writeln!(
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

/// A plot area inside a chart, with its two scales.
#[derive(Debug, Clone, Copy)]
pub struct Plot {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub x: Scale,
    pub y: Scale,
    /// Width of the whole chart: labels stay within it.
    pub view_width: f64,
}

/// From the plot's bottom to the first row of x labels' baseline, px.
const X_LABELS: f64 = 17.0;

impl Plot {
    pub fn px(&self, x: f64) -> f64 {
        self.left + self.x.unit(x) * self.width
    }

    pub fn py(&self, y: f64) -> f64 {
        self.top + self.height - self.y.unit(y) * self.height
    }

    /// The x tick labels as placed: staggered on a second row or left out
    /// where they would collide ([`axis::place_x`]).
    pub fn x_labels(&self, ticks: &[(f64, String)]) -> Vec<axis::Placed> {
        let at: Vec<(f64, String)> = ticks.iter().map(|(v, l)| (self.px(*v), l.clone())).collect();
        axis::place_x(&at, (2.0, self.view_width - 2.0))
    }

    /// Height below the plot that the x tick labels and the axis title take.
    pub fn below(&self, ticks: &[(f64, String)]) -> f64 {
        X_LABELS + ROW * (axis::rows(&self.x_labels(ticks)) as f64 - 1.0) + ROW + 8.0
    }

    /// Grid, axes, tick labels and axis labels (`y_label` is shortened to the plot's height).
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
        for (v, _) in x_ticks {
            let x = self.px(*v);
            svg.line(x, bottom, x, bottom + 4.0, "#888", 1.0);
        }
        let placed = self.x_labels(x_ticks);
        for p in &placed {
            svg.text(p.x, bottom + X_LABELS + ROW * p.row as f64, "middle", "#444", &p.text);
        }
        svg.line(self.left, bottom, self.left + self.width, bottom, "#888", 1.0);
        svg.line(self.left, self.top, self.left, bottom, "#888", 1.0);
        let title = fit_plain(x_label, self.view_width - 8.0);
        let (lo, hi) = axis::extent(self.left + self.width / 2.0, &title, (4.0, self.view_width - 4.0));
        let baseline = bottom + X_LABELS + ROW * axis::rows(&placed) as f64;
        svg.text(f64::midpoint(lo, hi), baseline, "middle", "#333", &title);
        if !y_label.is_empty() {
            svg.vertical_text(14.0, self.top + self.height / 2.0, &fit_plain(y_label, self.height + 20.0));
        }
    }
}

/// How a legend entry shows its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// A filled square (a series told by its colour).
    Swatch,
    /// A short solid line.
    Solid,
    /// A short dashed line.
    Dashed,
}

/// A legend entry.
#[derive(Debug, Clone)]
pub struct Key {
    pub color: String,
    pub label: String,
    pub mark: Mark,
}

impl Key {
    pub fn swatch(color: &str, label: &str) -> Key {
        Key { color: color.to_owned(), label: label.to_owned(), mark: Mark::Swatch }
    }
}

/// Height of a legend row, px.
const LEGEND_ROW: f64 = 18.0;

/// Legend entries laid out within `width`: (x offset, row, shortened label).
fn legend_layout(items: &[Key], width: f64) -> Vec<(f64, usize, String)> {
    let mut out = Vec::new();
    let (mut cx, mut row) = (0.0, 0);
    for k in items {
        let label = fit_plain(&k.label, width - 22.0);
        let w = 22.0 + text_width(&label) + 14.0;
        if cx > 0.0 && cx + w - 14.0 > width {
            cx = 0.0;
            row += 1;
        }
        out.push((cx, row, label));
        cx += w;
    }
    out
}

/// Draws a legend, wrapping within `width`, its first baseline at (`x`, `y`).
pub fn legend(svg: &mut Svg, items: &[Key], x: f64, y: f64, width: f64) {
    for (k, (dx, row, label)) in items.iter().zip(legend_layout(items, width)) {
        let (cx, cy) = (x + dx, y + LEGEND_ROW * row as f64);
        match k.mark {
            Mark::Swatch => svg.rect(cx, cy - 9.0, 12.0, 10.0, &k.color, 1.0),
            Mark::Solid | Mark::Dashed => svg.polyline(
                &[(cx, cy - 4.0), (cx + 18.0, cy - 4.0)],
                &k.color,
                2.0,
                1.0,
                k.mark == Mark::Dashed,
            ),
        }
        svg.text(cx + 22.0, cy, "start", "#333", &label);
    }
}

/// Height a legend takes (same layout as [`legend`]).
pub fn legend_height(items: &[Key], width: f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    let rows = legend_layout(items, width).iter().map(|(_, r, _)| r + 1).max().unwrap_or(1);
    LEGEND_ROW * rows as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_short() {
        assert_eq!(esc("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
        assert_eq!(n(12.04), "12");
        assert_eq!(n(-0.01), "0");
        assert_eq!(n(3.26), "3.3");
    }

    /// Regression: a chart had a fixed pixel size, wider than a phone.
    #[test]
    fn a_chart_has_a_view_box_and_no_fixed_size() {
        let svg = Svg::new("k", "a title", 420.0, 200.0).finish();
        let root = &svg[..svg.find('>').unwrap()];
        assert!(root.contains("viewBox=\"0 0 420 200\""), "{root}");
        assert!(!root.contains(" width=") && !root.contains(" height="), "{root}");
    }

    #[test]
    fn a_long_title_is_shortened_and_kept_whole_in_title() {
        let long = "a-scenario-with-a-very-long-name: latency by percentile and more";
        let svg = Svg::new("k", long, 300.0, 100.0).finish();
        assert!(svg.contains(&format!("<title>{long}</title>")));
        assert!(svg.contains('…'));
    }

    #[test]
    fn legends_wrap_within_their_width() {
        let items: Vec<Key> = (0..6).map(|i| Key::swatch(color(i), &format!("contestant-{i}"))).collect();
        for (dx, _, label) in legend_layout(&items, 200.0) {
            assert!(dx + 22.0 + text_width(&label) <= 200.0 + 1e-9);
        }
        assert!(legend_height(&items, 200.0) > legend_height(&items, 2000.0));
    }
}
