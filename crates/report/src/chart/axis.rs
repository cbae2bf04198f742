//! Axes whose labels fit: a linear axis from zero steps by 1, 2 or 5 times a
//! power of ten (Heckbert, "Nice numbers for graph labels", Graphics Gems,
//! 1990), taking the finest step whose labels, at their estimated width
//! ([`super::text`]), leave a gap between neighbours on the length the axis
//! is drawn at; a log axis thins its 1-2-5 ticks to decades, then to every
//! other decade. Labels are compact (`12k`, `1.5M`) once they reach 10,000,
//! or where `2,000` would not fit but `2k` does; the unit is in the axis
//! title. An axis with fixed ticks (the
//! percentiles) places its labels first-fit on two rows, dropping a label
//! that fits on neither, so no two labels overlap at any width.

use super::text::{FONT, text_width};
use crate::fmt;

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
}

/// Least space between two labels on a horizontal axis, px.
pub const GAP: f64 = 8.0;

/// Least distance between two labels on a vertical axis, px (a line of text and some air).
pub const LINE: f64 = FONT + 4.0;

/// Distance between the baselines of two rows of x labels, px.
pub const ROW: f64 = FONT + 3.0;

/// Ticks: (value, label).
pub type Ticks = Vec<(f64, String)>;

/// What an axis shows; [`Axis::horizontal`] and [`Axis::vertical`] choose
/// its scale and ticks for the length it is drawn at.
#[derive(Debug, Clone)]
pub enum Axis {
    /// Linear from 0 to at least this (a nice number).
    ZeroTo(f64),
    /// Log10 between two powers of ten.
    Log { min: f64, max: f64 },
    /// A given scale and ticks; labels that would collide are staggered or dropped.
    Fixed { scale: Scale, ticks: Ticks },
}

impl Axis {
    /// A horizontal axis from `start` over `length` px, labels kept within `bounds`.
    pub fn horizontal(&self, start: f64, length: f64, bounds: (f64, f64)) -> (Scale, Ticks) {
        let finest = (length / 50.0).floor().clamp(2.0, 8.0) as usize;
        let fits = |scale: &Scale, ticks: &Ticks| {
            let px: Vec<(f64, String)> =
                ticks.iter().map(|(v, l)| (start + scale.unit(*v) * length, l.clone())).collect();
            one_row(&px, bounds)
        };
        self.resolve(finest, &fits)
    }

    /// A vertical axis of `length` px.
    pub fn vertical(&self, length: f64) -> (Scale, Ticks) {
        let finest = (length / 40.0).floor().clamp(2.0, 8.0) as usize;
        let fits = |scale: &Scale, ticks: &Ticks| {
            let mut ys: Vec<f64> = ticks.iter().map(|(v, _)| scale.unit(*v) * length).collect();
            ys.sort_by(f64::total_cmp);
            ys.windows(2).all(|w| w[1] - w[0] >= LINE)
        };
        self.resolve(finest, &fits)
    }

    fn resolve(&self, finest: usize, fits: &dyn Fn(&Scale, &Ticks) -> bool) -> (Scale, Ticks) {
        match self {
            Axis::ZeroTo(max) => zero_to(*max, finest, fits),
            Axis::Log { min, max } => log(*min, *max, fits),
            Axis::Fixed { scale, ticks } => (*scale, ticks.clone()),
        }
    }
}

/// The next nice step: 1 → 2 → 5 → 10 times the same power of ten.
fn next_step(step: f64) -> f64 {
    let mag = 10f64.powf(step.log10().floor());
    let m = (step / mag).round();
    mag * if m < 2.0 {
        2.0
    } else if m < 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A nice step (1, 2 or 5 times a power of ten) for about `count` steps over `span`.
pub fn nice_step(span: f64, count: usize) -> f64 {
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

/// A linear axis from 0: the finest nice step, from about `finest` steps
/// up, whose ticks `fit`, the axis ending on the first tick at or above
/// `max`; at least three ticks with `2,000`-style labels, else with compact
/// ones (`2k`), else a 2.5 step, else the two ends.
fn zero_to(max: f64, finest: usize, fits: &dyn Fn(&Scale, &Ticks) -> bool) -> (Scale, Ticks) {
    let max = if max > 0.0 && max.is_finite() { max } else { 1.0 };
    for compact in [false, true] {
        let mut step = nice_step(max, finest);
        loop {
            let n = (max / step - 1e-9).ceil().max(1.0) as usize;
            let values: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
            let scale = Scale::Linear { min: 0.0, max: n as f64 * step };
            let ticks = if compact {
                values.iter().map(|v| (*v, label(*v, step, true))).collect()
            } else {
                labelled(&values, step)
            };
            if compact && n <= 1 {
                // Before the two ends alone: a 2.5 step (0, 250M, 500M) where
                // 2 crowds the axis and 5 leaves one interval.
                return quarter(max, fits).unwrap_or((scale, ticks));
            }
            if n >= 2 && fits(&scale, &ticks) {
                return (scale, ticks);
            }
            if n <= 1 {
                break;
            }
            step = next_step(step);
        }
    }
    unreachable!("the compact pass ends with two ticks")
}

/// The finest 2.5 × 10^k step with at least two intervals whose compact
/// labels fit, if any.
fn quarter(max: f64, fits: &dyn Fn(&Scale, &Ticks) -> bool) -> Option<(Scale, Ticks)> {
    let top = max.log10().floor() as i32;
    (top - 1..=top).find_map(|k| {
        let step = 2.5 * 10f64.powi(k);
        let n = (max / step - 1e-9).ceil().max(1.0) as usize;
        let values: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
        let scale = Scale::Linear { min: 0.0, max: n as f64 * step };
        let ticks: Ticks = values.iter().map(|v| (*v, label(*v, step, true))).collect();
        (n >= 2 && fits(&scale, &ticks)).then_some((scale, ticks))
    })
}

/// A log axis: 1-2-5 ticks per decade if they fit, else decades, else every
/// 2nd, 3rd, ... decade.
fn log(min: f64, max: f64, fits: &dyn Fn(&Scale, &Ticks) -> bool) -> (Scale, Ticks) {
    let scale = Scale::Log { min, max };
    let (lo, hi) = (min.log10().round() as i32, max.log10().round() as i32);
    let within = |v: f64| v >= min * 0.999_999 && v <= max * 1.000_001;
    let with_labels = |values: Vec<f64>| -> Ticks {
        let compact = values.iter().any(|v| *v >= 10_000.0);
        values.into_iter().map(|v| (v, label(v, v, compact))).collect()
    };
    let dense: Vec<f64> =
        (lo..=hi).flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e))).filter(|v| within(*v)).collect();
    let ticks = with_labels(dense);
    if fits(&scale, &ticks) {
        return (scale, ticks);
    }
    let mut every = 1;
    loop {
        let ticks = with_labels((lo..=hi).step_by(every).map(|e| 10f64.powi(e)).collect());
        if ticks.len() <= 2 || fits(&scale, &ticks) {
            return (scale, ticks);
        }
        every += 1;
    }
}

/// Labels of values that are multiples of `step`; compact once one reaches 10,000.
pub fn labelled(values: &[f64], step: f64) -> Ticks {
    let compact = values.iter().any(|v| v.abs() >= 10_000.0);
    values.iter().map(|v| (*v, label(*v, step, compact))).collect()
}

/// Decimals that show a multiple of `step` exactly (steps are 1, 2, 2.5 or 5 × 10^k).
fn decimals(step: f64) -> usize {
    (0..12)
        .find(|&d| {
            let x = step * 10f64.powi(d);
            (x - x.round()).abs() <= x * 1e-6
        })
        .map_or(12, |d| d as usize)
}

/// `v` with the decimals its `step` needs, trailing zeros trimmed.
fn plain(v: f64, step: f64) -> String {
    let s = format!("{v:.*}", decimals(step));
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_owned() } else { s }
}

/// One tick label: `1,500`, `0.25`; compact: `500`, `1.5k`, `12k`, `1.5M`, `2G`.
pub fn label(v: f64, step: f64, compact: bool) -> String {
    let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
    if compact {
        let a = v.abs();
        for (div, suffix) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] {
            if a >= div {
                return format!("{}{suffix}", plain(v / div, step / div));
            }
        }
        plain(v, step)
    } else if v.abs() >= 1_000.0 && step >= 1.0 {
        fmt::thousands(v.round() as i64)
    } else {
        plain(v, step)
    }
}

/// A label's horizontal extent when centred at `x`, moved inside `bounds`.
pub fn extent(x: f64, text: &str, bounds: (f64, f64)) -> (f64, f64) {
    let w = text_width(text);
    let x = if w >= bounds.1 - bounds.0 {
        f64::midpoint(bounds.0, bounds.1)
    } else {
        x.clamp(bounds.0 + w / 2.0, bounds.1 - w / 2.0)
    };
    (x - w / 2.0, x + w / 2.0)
}

/// Whether labels centred at these x positions fit on one row without touching.
pub fn one_row(labels: &[(f64, String)], bounds: (f64, f64)) -> bool {
    let mut spans: Vec<(f64, f64)> = labels.iter().map(|(x, l)| extent(*x, l, bounds)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    spans.windows(2).all(|w| w[0].1 + GAP <= w[1].0)
}

/// A label placed under a horizontal axis: its centre, row (0 or 1) and text.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub row: usize,
    pub text: String,
}

/// Places labels centred at x positions (ascending) first-fit on two rows;
/// one that fits on neither is left out (its tick mark stays).
pub fn place_x(labels: &[(f64, String)], bounds: (f64, f64)) -> Vec<Placed> {
    let mut last = [f64::NEG_INFINITY; 2];
    let mut out = Vec::new();
    for (x, text) in labels {
        let (lo, hi) = extent(*x, text, bounds);
        if let Some(row) = (0..2).find(|r| last[*r] + GAP <= lo) {
            last[row] = hi;
            out.push(Placed { x: f64::midpoint(lo, hi), row, text: text.clone() });
        }
    }
    out
}

/// Rows the placed labels take (at least 1).
pub fn rows(placed: &[Placed]) -> usize {
    placed.iter().map(|p| p.row + 1).max().unwrap_or(1)
}

#[cfg(test)]
mod tests;
