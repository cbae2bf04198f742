//! CSV: one row per contestant and scenario, measured or not, and for a
//! scenario file one row per request name and one for its iterations (status
//! `request`, the name in the last column), with raw numbers (requests per second, microseconds, bytes; no thousands
//! separators, no units in cells) for spreadsheets and scripts. Quoting
//! follows RFC 4180.

use std::fmt::Write as _;

use super::{Exporter, RenderOptions};
use crate::analysis::{Analysis, ContestantReport, ScenarioReport};
use crate::compare::Comparison;

pub struct Csv;

const COLUMNS: &[&str] = &[
    "scenario",
    "contestant",
    "language",
    "framework",
    "status",
    "notes",
    "rank",
    "rank_worst",
    "tied",
    "runs",
    "ok_rps_mean",
    "ok_rps_ci_lo",
    "ok_rps_ci_hi",
    "ok_rps_median",
    "ok_rps_median_ci_lo",
    "ok_rps_median_ci_hi",
    "ok_rps_stdev",
    "ok_rpm_mean",
    "baseline",
    "ratio_to_baseline",
    "ratio_ci_lo",
    "ratio_ci_hi",
    "latency_mean_us",
    "latency_p50_us",
    "latency_p90_us",
    "latency_p95_us",
    "latency_p99_us",
    "latency_p999_us",
    "latency_max_us",
    "latency_p99_us_run_min",
    "latency_p99_us_run_max",
    "requests",
    "errors",
    "error_rate",
    "cpu_percent_p50",
    "cpu_percent_p95",
    "rss_bytes_p50",
    "rss_bytes_p95",
    "rss_peak_bytes",
    "cpu_ms_per_1k",
    "cpu_ms_per_1k_ci_lo",
    "cpu_ms_per_1k_ci_hi",
    "sustained_slo",
    "lower_bound",
    "upper_bound",
    "ranked_by",
    "cold_start_ms_p50",
    "cold_start_ms_p95",
    "artifact_bytes",
    "code_lines",
    "build_s",
    "outlier_runs",
    "tls_version",
    "tls_cipher_suite",
    "tls_group",
    "tls_to_cleartext",
    "tls_to_cleartext_ci_lo",
    "tls_to_cleartext_ci_hi",
    "request",
];

impl Exporter for Csv {
    fn render(&self, analysis: &Analysis, _: &RenderOptions) -> String {
        let mut out = COLUMNS.join(",");
        out.push_str("\r\n");
        for s in &analysis.scenarios {
            for c in &s.contestants {
                line(&mut out, &measured(s, c));
                for n in c.per_request.iter().chain(&c.iterations) {
                    line(&mut out, &request(s, c, n));
                }
            }
            for f in &s.failed {
                let mut cells = vec![String::new(); COLUMNS.len()];
                cells[0].clone_from(&s.name);
                cells[1].clone_from(&f.name);
                cells[2] = f.language.clone().unwrap_or_default();
                cells[3] = f.framework.clone().unwrap_or_default();
                cells[4] = "failed".into();
                cells[5].clone_from(&f.reason);
                cells[8] = "0".into();
                line(&mut out, &cells);
            }
        }
        out
    }

    fn comparison(&self, c: &Comparison, _: &RenderOptions) -> String {
        super::compare::csv(c)
    }
}

fn num(x: f64) -> String {
    if !x.is_finite() {
        return String::new();
    }
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_owned() } else { s.to_owned() }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_default()
}

fn measured(s: &ScenarioReport, c: &ContestantReport) -> Vec<String> {
    let t = &c.throughput;
    let l = &c.latency.merged;
    let p99 = c.latency.spread.get("p99_us");
    let ratio = c.ratio_to_baseline;
    let tls = c.tls.as_ref();
    let pair = s.tls_pairs.iter().find(|p| p.tls == c.name).and_then(|p| p.ratio);
    let outliers: Vec<String> = t
        .runs
        .iter()
        .filter(|r| r.outlier)
        .map(|r| r.repetition.map_or("?".into(), |k| k.to_string()))
        .collect();
    vec![
        s.name.clone(),
        c.name.clone(),
        c.language.clone().unwrap_or_default(),
        c.framework.clone().unwrap_or_default(),
        "measured".into(),
        c.warnings.join("; "),
        c.rank.to_string(),
        c.rank_worst.to_string(),
        c.tied.to_string(),
        c.runs.to_string(),
        num(t.mean),
        opt(t.mean_ci, |i| num(i.lo)),
        opt(t.mean_ci, |i| num(i.hi)),
        num(t.median),
        opt(t.median_ci, |i| num(i.lo)),
        opt(t.median_ci, |i| num(i.hi)),
        num(t.stdev),
        num(t.per_minute),
        s.baseline.clone().unwrap_or_default(),
        opt(ratio, |r| num(r.value)),
        opt(ratio.and_then(|r| r.ci), |i| num(i.lo)),
        opt(ratio.and_then(|r| r.ci), |i| num(i.hi)),
        num(l.mean_us),
        l.p50_us.to_string(),
        l.p90_us.to_string(),
        l.p95_us.to_string(),
        l.p99_us.to_string(),
        l.p999_us.to_string(),
        l.max_us.to_string(),
        opt(p99, |s| num(s.min)),
        opt(p99, |s| num(s.max)),
        c.errors.requests.to_string(),
        c.errors.errors.to_string(),
        num(c.errors.rate),
        opt(c.resources.as_ref(), |r| num(r.cpu_percent.p50)),
        opt(c.resources.as_ref(), |r| num(r.cpu_percent.p95)),
        opt(c.resources.as_ref(), |r| num(r.rss_bytes.p50)),
        opt(c.resources.as_ref(), |r| num(r.rss_bytes.p95)),
        opt(c.resources.as_ref(), |r| num(r.rss_bytes.max)),
        opt(c.cost.as_ref(), |k| num(k.cpu_ms_per_1k)),
        opt(c.cost.as_ref().and_then(|k| k.ci), |i| num(i.lo)),
        opt(c.cost.as_ref().and_then(|k| k.ci), |i| num(i.hi)),
        opt(t.sustained.as_ref(), |x| x.slo.join(" and ")),
        opt(t.sustained.as_ref(), |x| x.lower_bound.to_string()),
        opt(t.sustained.as_ref(), |x| x.upper_bound.to_string()),
        match s.ranked_by {
            crate::analysis::RankedBy::Throughput => "throughput".to_owned(),
            crate::analysis::RankedBy::CostPerRequest => "cost_per_request".to_owned(),
        },
        opt(c.cold_start_ms, |q| num(q.p50)),
        opt(c.cold_start_ms, |q| num(q.p95)),
        opt(c.artifact_bytes, |b| b.to_string()),
        opt(c.code.as_ref(), |k| k.lines.to_string()),
        opt(c.build_s, num),
        outliers.join(" "),
        opt(tls, |x| x.version.clone()),
        opt(tls, |x| x.cipher_suite.clone()),
        opt(tls.and_then(|x| x.key_exchange_group.clone()), |g| g),
        opt(pair, |r| num(r.value)),
        opt(pair.and_then(|r| r.ci), |i| num(i.lo)),
        opt(pair.and_then(|r| r.ci), |i| num(i.hi)),
        String::new(),
    ]
}

/// The row of one request name (or the iterations) of a contestant's scenario file.
fn request(s: &ScenarioReport, c: &ContestantReport, n: &stackbench_record::Named) -> Vec<String> {
    let mut cells = vec![String::new(); COLUMNS.len()];
    let lat = &n.latency;
    let ok_rps = if n.requests == 0 { 0.0 } else { n.rps * n.ok as f64 / n.requests as f64 };
    let rate = if n.requests == 0 { 0.0 } else { n.error_count() as f64 / n.requests as f64 };
    for (column, value) in [
        ("scenario", s.name.clone()),
        ("contestant", c.name.clone()),
        ("language", c.language.clone().unwrap_or_default()),
        ("framework", c.framework.clone().unwrap_or_default()),
        ("status", "request".to_owned()),
        ("runs", c.runs.to_string()),
        ("ok_rps_mean", num(ok_rps)),
        ("ok_rpm_mean", num(ok_rps * 60.0)),
        ("latency_mean_us", num(lat.mean_us)),
        ("latency_p50_us", lat.p50_us.to_string()),
        ("latency_p90_us", lat.p90_us.to_string()),
        ("latency_p95_us", lat.p95_us.to_string()),
        ("latency_p99_us", lat.p99_us.to_string()),
        ("latency_p999_us", lat.p999_us.to_string()),
        ("latency_max_us", lat.max_us.to_string()),
        ("requests", n.requests.to_string()),
        ("errors", n.error_count().to_string()),
        ("error_rate", num(rate)),
        ("request", n.name.clone()),
    ] {
        let at = COLUMNS.iter().position(|name| *name == column).expect("a column of the report");
        cells[at] = value;
    }
    cells
}

fn line(out: &mut String, cells: &[String]) {
    debug_assert_eq!(cells.len(), COLUMNS.len());
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if cell.contains([',', '"', '\n', '\r']) {
            let _ = write!(out, "\"{}\"", cell.replace('"', "\"\""));
        } else {
            out.push_str(cell);
        }
    }
    out.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_numbers() {
        let mut out = String::new();
        let mut cells = vec![String::new(); COLUMNS.len()];
        cells[0] = "a,b".into();
        cells[1] = "say \"hi\"".into();
        line(&mut out, &cells);
        assert!(out.starts_with("\"a,b\",\"say \"\"hi\"\"\","), "{out}");
        assert!(out.ends_with("\r\n"));
        assert_eq!(num(1_881.666_666), "1881.667");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(f64::NAN), "");
        assert_eq!(num(-0.0001), "0");
    }
}
