//! The report's charts, one function each, as standalone SVG (inline in the
//! HTML report, snapshot-tested one by one): throughput with interval
//! whiskers and run dots; latency by percentile on HdrHistogram's log scale
//! of 1/(1−p); per-second latency "signatures" per contestant (the three-kings experiment's
//! "Individual Performance Signatures"); CPU and RSS over time; cold start
//! and artifact size. Every axis names its unit, its ticks are chosen so
//! that their labels fit ([`axis`]), and every chart scales to the width of
//! its container. A chart without data (nothing sampled, no artifact) is
//! `None`.

pub mod axis;
pub mod bars;
pub mod lines;
pub mod svg;
pub mod text;

use crate::analysis::{ContestantReport, ScenarioReport};
use crate::fmt;
use axis::Axis;
use axis::Scale;
use bars::{Bar, hbars};
use lines::{Line, LineChart};
use svg::{Key, Mark, color};

/// The unit latencies of up to `max_us` read best in: (divisor, name).
fn latency_unit(max_us: f64) -> (f64, &'static str) {
    if max_us < 2_000.0 {
        (1.0, "µs")
    } else if max_us < 2_000_000.0 {
        (1_000.0, "ms")
    } else {
        (1_000_000.0, "s")
    }
}

/// The unit sizes of up to `max_mib` MiB read best in: (divisor from MiB, name).
fn size_unit(max_mib: f64) -> (f64, &'static str) {
    if max_mib < 1.0 {
        (1.0 / 1_024.0, "KiB")
    } else if max_mib < 2_048.0 {
        (1.0, "MiB")
    } else {
        (1_024.0, "GiB")
    }
}

/// Correct answers per second: mean, 95% interval whisker, runs as dots.
pub fn throughput(s: &ScenarioReport) -> Option<String> {
    if s.contestants.is_empty() {
        return None;
    }
    let bars: Vec<Bar> = s
        .contestants
        .iter()
        .enumerate()
        .map(|(i, c)| Bar {
            label: c.name.clone(),
            value: c.throughput.mean,
            whisker: c.throughput.mean_ci.map(|ci| (ci.lo, ci.hi)),
            dots: c.throughput.runs.iter().map(|r| r.ok_rps).collect(),
            color: color(i).to_owned(),
            note: crate::cell::throughput(c),
            short_note: fmt::rate(c.throughput.mean),
        })
        .collect();
    Some(hbars(
        "throughput",
        &format!("{}: throughput", s.name),
        "correct responses per second (req/s)",
        &bars,
    ))
}

/// `−log10(1 − p)`: 0 at p = 0, 1 at 90%, 2 at 99%, ...
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).max(1e-12).log10()
}

/// `0%`, `90%`, `99%`, `99.9%`, ...
fn nines_label(k: usize) -> String {
    match k {
        0 => "0%".to_owned(),
        1 => "90%".to_owned(),
        k => format!("99.{}%", "9".repeat(k - 2)).replace("99.%", "99%"),
    }
}

/// Latency by percentile, all runs merged, one curve per contestant.
pub fn percentiles(s: &ScenarioReport) -> Option<String> {
    let with: Vec<(usize, &ContestantReport)> =
        s.contestants.iter().enumerate().filter(|(_, c)| !c.series.percentiles.is_empty()).collect();
    if with.is_empty() {
        return None;
    }
    let max_us = with.iter().flat_map(|(_, c)| c.series.percentiles.iter().map(|p| p.1)).fold(1.0, f64::max);
    let min_us =
        with.iter().flat_map(|(_, c)| c.series.percentiles.iter().map(|p| p.1)).fold(f64::INFINITY, f64::min);
    let (div, unit) = latency_unit(max_us);
    let top = with
        .iter()
        .filter_map(|(_, c)| c.series.percentiles.last().map(|p| nines(p.0)))
        .fold(2.0, f64::max)
        .ceil();
    let log_y = max_us / min_us.max(1.0) > 50.0;
    let y = if log_y {
        Axis::Log {
            min: 10f64.powf((min_us.max(1.0) / div).log10().floor()),
            max: 10f64.powf((max_us / div).log10().ceil()),
        }
    } else {
        Axis::ZeroTo(max_us / div)
    };
    let ticks = (0..=top as usize).map(|k| (k as f64, nines_label(k))).collect();
    Some(
        LineChart {
            kind: "percentiles",
            title: format!("{}: latency by percentile", s.name),
            x: Axis::Fixed { scale: Scale::Linear { min: 0.0, max: top }, ticks },
            y,
            x_label: "percentile (log scale of 1/(1−p))".to_owned(),
            y_label: format!("latency ({unit}{})", if log_y { ", log scale" } else { "" }),
            lines: with
                .iter()
                .map(|(i, c)| Line {
                    color: color(*i).to_owned(),
                    points: c.series.percentiles.iter().map(|(p, v)| (nines(*p), v / div)).collect(),
                    width: 2.0,
                    opacity: 1.0,
                    dashed: false,
                })
                .collect(),
            legend: with.iter().map(|(i, c)| Key::swatch(color(*i), &c.name)).collect(),
            plot_height: 200.0,
        }
        .render(),
    )
}

/// The highest p99 of any second of any contestant of the scenario, µs (a shared y axis).
fn signature_max(s: &ScenarioReport) -> f64 {
    s.contestants
        .iter()
        .flat_map(|c| c.series.signatures.iter().flat_map(|r| r.points.iter().map(|p| p.2 as f64)))
        .fold(1.0, f64::max)
}

/// One contestant's latency per second of each run: p50 solid, p99 dashed,
/// on the same axes as the other contestants of the scenario.
pub fn signature(s: &ScenarioReport, index: usize) -> Option<String> {
    let c = s.contestants.get(index)?;
    if c.series.signatures.iter().all(|r| r.points.is_empty()) {
        return None;
    }
    let (div, unit) = latency_unit(signature_max(s));
    let t_max = s
        .contestants
        .iter()
        .flat_map(|c| c.series.signatures.iter().flat_map(|r| r.points.iter().map(|p| f64::from(p.0) + 1.0)))
        .fold(1.0, f64::max);
    let col = color(index).to_owned();
    let runs = c.series.signatures.len();
    let opacity = if runs > 1 { 0.75 } else { 1.0 };
    let mut lines = Vec::new();
    for r in &c.series.signatures {
        // A second's values are plotted at its middle.
        let at = |t: u32| f64::from(t) + 0.5;
        lines.push(Line {
            color: col.clone(),
            points: r.points.iter().map(|p| (at(p.0), p.2 as f64 / div)).collect(),
            width: 1.2,
            opacity: opacity * 0.6,
            dashed: true,
        });
        lines.push(Line {
            color: col.clone(),
            points: r.points.iter().map(|p| (at(p.0), p.1 as f64 / div)).collect(),
            width: 1.8,
            opacity,
            dashed: false,
        });
    }
    Some(
        LineChart {
            kind: "signature",
            title: format!("'{}': latency signature", c.name),
            x: Axis::ZeroTo(t_max),
            y: Axis::ZeroTo(signature_max(s) / div),
            x_label: format!("second of the run ({runs} run{})", if runs == 1 { "" } else { "s" }),
            y_label: format!("latency ({unit})"),
            lines,
            legend: vec![
                Key { color: col.clone(), label: "p50".to_owned(), mark: Mark::Solid },
                Key { color: col, label: "p99".to_owned(), mark: Mark::Dashed },
            ],
            plot_height: 130.0,
        }
        .render(),
    )
}

/// Each run's (t, value) points.
type Runs = Vec<Vec<(f64, f64)>>;

/// A resource over time, one line per run, coloured by contestant.
fn resource(
    s: &ScenarioReport,
    kind: &str,
    what: &str,
    get: &dyn Fn(&(f64, f64, u64)) -> f64,
    unit: &dyn Fn(f64) -> (f64, String),
) -> Option<String> {
    let with: Vec<(usize, &ContestantReport)> = s
        .contestants
        .iter()
        .enumerate()
        .filter(|(_, c)| c.series.resources.iter().any(|r| !r.points.is_empty()))
        .collect();
    if with.is_empty() {
        return None;
    }
    let points = |c: &ContestantReport| -> Runs {
        c.series.resources.iter().map(|r| r.points.iter().map(|p| (p.0, get(p))).collect()).collect()
    };
    let all: Vec<(usize, Runs)> = with.iter().map(|(i, c)| (*i, points(c))).collect();
    let y_max = all.iter().flat_map(|(_, runs)| runs.iter().flatten().map(|p| p.1)).fold(1.0, f64::max);
    let t_max = all.iter().flat_map(|(_, runs)| runs.iter().flatten().map(|p| p.0)).fold(1.0, f64::max);
    let (div, y_label) = unit(y_max);
    let lines = all
        .iter()
        .flat_map(|(i, runs)| {
            runs.iter().map(|pts| Line {
                color: color(*i).to_owned(),
                points: pts.iter().map(|(t, v)| (*t, v / div)).collect(),
                width: 1.5,
                opacity: 0.8,
                dashed: false,
            })
        })
        .collect();
    Some(
        LineChart {
            kind,
            title: format!("{}: {what} over time", s.name),
            x: Axis::ZeroTo(t_max),
            y: Axis::ZeroTo(y_max / div),
            x_label: "seconds into the run (a line per run)".to_owned(),
            y_label,
            lines,
            legend: with.iter().map(|(i, c)| Key::swatch(color(*i), &c.name)).collect(),
            plot_height: 170.0,
        }
        .render(),
    )
}

/// CPU of the contestant's process tree, % of one core.
pub fn cpu(s: &ScenarioReport) -> Option<String> {
    resource(s, "cpu", "CPU", &|p| p.1, &|_| (1.0, "CPU (% of one core)".to_owned()))
}

/// Resident memory of the contestant's process tree, MiB (KiB below 1 MiB, GiB from 2 GiB).
pub fn rss(s: &ScenarioReport) -> Option<String> {
    resource(s, "rss", "memory (RSS)", &|p| p.2 as f64 / 1_048_576.0, &|max| {
        let (div, unit) = size_unit(max);
        (div, format!("RSS ({unit})"))
    })
}

/// Cold start p50 with a whisker to p95, in ms (s from 10 s).
pub fn cold_start(s: &ScenarioReport) -> Option<String> {
    let max = s.contestants.iter().filter_map(|c| c.cold_start_ms.filter(|q| q.n > 0)).map(|q| q.p95);
    let (div, unit) = if max.fold(0.0, f64::max) >= 10_000.0 { (1_000.0, "s") } else { (1.0, "ms") };
    let bars: Vec<Bar> = s
        .contestants
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let q = c.cold_start_ms.filter(|q| q.n > 0)?;
            Some(Bar {
                label: c.name.clone(),
                value: q.p50 / div,
                whisker: Some((q.p50 / div, q.p95 / div)),
                dots: Vec::new(),
                color: color(i).to_owned(),
                note: format!("{} (p95 {})", fmt::millis(q.p50), fmt::millis(q.p95)),
                short_note: fmt::millis(q.p50),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        hbars(
            "cold-start",
            &format!("{}: cold start", s.name),
            &format!("exec to first verified answer ({unit})"),
            &bars,
        )
    })
}

/// Size of each contestant's artifact (binary, image, bundle), MiB (KiB below 1 MiB, GiB from 2 GiB).
pub fn artifact(s: &ScenarioReport) -> Option<String> {
    let max = s.contestants.iter().filter_map(|c| c.artifact_bytes).max().unwrap_or(0) as f64;
    let (div, unit) = size_unit(max / 1_048_576.0);
    let bars: Vec<Bar> = s
        .contestants
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let b = c.artifact_bytes? as f64;
            Some(Bar {
                label: c.name.clone(),
                value: b / 1_048_576.0 / div,
                whisker: None,
                dots: Vec::new(),
                color: color(i).to_owned(),
                note: fmt::bytes(b),
                short_note: fmt::bytes(b),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        hbars("artifact", &format!("{}: artifact size", s.name), &format!("artifact size ({unit})"), &bars)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_axis() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert!(nines(0.0).abs() < 1e-12);
        assert_eq!((0..5).map(nines_label).collect::<Vec<_>>(), ["0%", "90%", "99%", "99.9%", "99.99%"]);
        assert_eq!(latency_unit(900.0).1, "µs");
        assert_eq!(latency_unit(1_200_000.0).1, "ms");
        assert_eq!(latency_unit(4_000_000.0).1, "s");
        assert_eq!(size_unit(0.4).1, "KiB");
        assert_eq!(size_unit(900.0).1, "MiB");
        assert_eq!(size_unit(3_000.0).1, "GiB");
    }
}
