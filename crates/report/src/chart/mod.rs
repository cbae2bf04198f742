//! The report's charts, one function each, as standalone SVG (inline in the
//! HTML report, snapshot-tested one by one): throughput with interval
//! whiskers and run dots; latency by percentile on HdrHistogram's log scale
//! of 1/(1−p); per-second latency "signatures" per contestant (seed 000's
//! "Individual Performance Signatures"); CPU and RSS over time; cold start
//! and artifact size. Every axis names its unit. A chart without data
//! (nothing sampled, no artifact) is `None`.

pub mod bars;
pub mod lines;
pub mod svg;

use crate::analysis::{ContestantReport, ScenarioReport};
use crate::export::table;
use crate::fmt;
use bars::{Bar, hbars};
use lines::{Line, LineChart};
use svg::{Scale, color, zero_to_nice};

/// An axis label for a value: `1,500`, `0.5`, `2.25`.
fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        fmt::thousands(v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// The unit latencies of up to `max_us` read best in: (divisor, name).
fn latency_unit(max_us: f64) -> (f64, &'static str) {
    if max_us < 2_000.0 {
        (1.0, "µs")
    } else if max_us < 20_000_000.0 {
        (1_000.0, "ms")
    } else {
        (1_000_000.0, "s")
    }
}

fn ticks_of(scale: Scale) -> Vec<(f64, String)> {
    scale.ticks().into_iter().map(|v| (v, tick_label(v))).collect()
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
            note: table::throughput(c),
        })
        .collect();
    Some(hbars(
        "throughput",
        &format!("{}: throughput", s.name),
        "correct responses per second (req/s)",
        &bars,
        &tick_label,
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
        Scale::Log {
            min: 10f64.powf((min_us.max(1.0) / div).log10().floor()),
            max: 10f64.powf((max_us / div).log10().ceil()),
        }
    } else {
        zero_to_nice(max_us / div)
    };
    let x_ticks = (0..=top as usize).map(|k| (k as f64, nines_label(k))).collect();
    Some(
        LineChart {
            kind: "percentiles",
            title: format!("{}: latency by percentile", s.name),
            x: Scale::Linear { min: 0.0, max: top },
            y,
            x_ticks,
            y_ticks: ticks_of(y),
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
            legend: with.iter().map(|(i, c)| (color(*i).to_owned(), c.name.clone())).collect(),
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
    let y = zero_to_nice(signature_max(s) / div);
    let t_max = s
        .contestants
        .iter()
        .flat_map(|c| c.series.signatures.iter().flat_map(|r| r.points.iter().map(|p| f64::from(p.0) + 1.0)))
        .fold(1.0, f64::max);
    let x = zero_to_nice(t_max);
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
            x,
            y,
            x_ticks: ticks_of(x),
            y_ticks: ticks_of(y),
            x_label: format!("second of the run ({runs} run{})", if runs == 1 { "" } else { "s" }),
            y_label: format!("latency ({unit})"),
            lines,
            legend: vec![(col.clone(), "p50 (solid)".to_owned()), (col, "p99 (dashed)".to_owned())],
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
    y_label: &str,
    get: &dyn Fn(&(f64, f64, u64)) -> f64,
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
    let (x, y) = (zero_to_nice(t_max), zero_to_nice(y_max));
    let lines = all
        .iter()
        .flat_map(|(i, runs)| {
            runs.iter().map(|pts| Line {
                color: color(*i).to_owned(),
                points: pts.clone(),
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
            x,
            y,
            x_ticks: ticks_of(x),
            y_ticks: ticks_of(y),
            x_label: "seconds into the run (a line per run)".to_owned(),
            y_label: y_label.to_owned(),
            lines,
            legend: with.iter().map(|(i, c)| (color(*i).to_owned(), c.name.clone())).collect(),
            plot_height: 170.0,
        }
        .render(),
    )
}

/// CPU of the contestant's process tree, % of one core.
pub fn cpu(s: &ScenarioReport) -> Option<String> {
    resource(s, "cpu", "CPU", "CPU (% of one core)", &|p| p.1)
}

/// Resident memory of the contestant's process tree, MiB.
pub fn rss(s: &ScenarioReport) -> Option<String> {
    resource(s, "rss", "memory (RSS)", "RSS (MiB)", &|p| p.2 as f64 / 1_048_576.0)
}

/// Cold start p50 with a whisker to p95.
pub fn cold_start(s: &ScenarioReport) -> Option<String> {
    let bars: Vec<Bar> = s
        .contestants
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let q = c.cold_start_ms.filter(|q| q.n > 0)?;
            Some(Bar {
                label: c.name.clone(),
                value: q.p50,
                whisker: Some((q.p50, q.p95)),
                dots: Vec::new(),
                color: color(i).to_owned(),
                note: format!("{} (p95 {})", fmt::millis(q.p50), fmt::millis(q.p95)),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        hbars(
            "cold-start",
            &format!("{}: cold start", s.name),
            "exec to first verified answer (ms)",
            &bars,
            &tick_label,
        )
    })
}

/// Size of each contestant's artifact (binary, image, bundle), MiB.
pub fn artifact(s: &ScenarioReport) -> Option<String> {
    let bars: Vec<Bar> = s
        .contestants
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let b = c.artifact_bytes? as f64;
            Some(Bar {
                label: c.name.clone(),
                value: b / 1_048_576.0,
                whisker: None,
                dots: Vec::new(),
                color: color(i).to_owned(),
                note: fmt::bytes(b),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        hbars("artifact", &format!("{}: artifact size", s.name), "artifact size (MiB)", &bars, &tick_label)
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
        assert_eq!(tick_label(1500.0), "1,500");
        assert_eq!(tick_label(0.25), "0.25");
    }
}
