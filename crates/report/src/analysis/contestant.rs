//! One contestant in one scenario: its usable runs turned into a
//! [`ContestantReport`] (or, with no usable run, a [`FailedContestant`] that
//! says why). Latency percentiles come from the runs' HdrHistograms merged
//! (lossless), resource quantiles from the record crate's one routine.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use stackbench_record::{ContestantRecord, Latency, Quantiles, RunRecord, decode_histogram, new_histogram};

use super::{
    ContestantReport, Cost, Errors, FailedContestant, LatencyReport, Resources, RunPoint, RunSeries, Series,
    Spread, SteadyState, Sustained, Throughput,
};
use crate::fmt;
use crate::stats::{Estimate, estimate, rng::seed_from, sample};

/// Analyses one contestant, or says why it has nothing to analyse.
pub(super) fn analyse(
    scenario: &str,
    name: &str,
    runs: &[&RunRecord],
    record: Option<&ContestantRecord>,
    (seed, beside): (u64, Option<f64>),
) -> Result<Analysed, Box<FailedContestant>> {
    let mut warnings = Vec::new();
    let used = select(runs, &mut warnings);
    if used.is_empty() {
        return Err(Box::new(failed(name, record)));
    }

    let Rates { rps, est, sustained, cost: cost_est } =
        rates(&used, seed_from(seed, &[scenario, name]), beside);
    let points = run_points(&used, &rps, &est, &mut warnings);

    let (merged, bad) = merge_histograms(&used);
    for r in bad {
        warnings.push(format!("{}: its latency histogram cannot be read and is left out", run_name(r)));
    }
    let latency = LatencyReport {
        merged: Latency::from_histogram(&merged),
        spread: spread(&used),
        corrected_for_coordinated_omission: used.iter().all(|r| r.summary.corrected_for_coordinated_omission),
    };

    let errors = errors(&used);
    let saturated = saturated(&used, name, &mut warnings);
    unmet_searches(&used, &mut warnings);
    if let Some(rec) = record {
        record_warnings(rec, &mut warnings);
    }
    let external = record.is_some_and(|r| r.external);
    if external {
        warnings.push("external server: no cold start and no resource sampling".to_owned());
    }

    let mut resources = resources(&used);
    if let Some(r) = &mut resources {
        let measured_s: f64 = used.iter().map(|r| r.summary.duration_s).sum();
        r.throttled_share =
            (measured_s > 0.0 && r.cpu_limit_cores.is_some()).then(|| r.throttled_s / measured_s);
        if r.oom_kills > 0 {
            warnings.push(format!(
                "the OOM killer ended {} process(es) of '{name}' under its memory limit{}",
                r.oom_kills,
                r.memory_limit_bytes.map(|b| format!(" of {}", fmt::bytes(b as f64))).unwrap_or_default()
            ));
        }
    }
    let report = ContestantReport {
        name: name.to_owned(),
        language: record.and_then(|r| r.language.clone()),
        framework: record.and_then(|r| r.framework.clone()),
        rank: 0,
        rank_worst: 0,
        tied: false,
        runs: used.len(),
        throughput: Throughput {
            mean: est.mean,
            median: est.median,
            stdev: est.stdev,
            mean_ci: est.mean_ci,
            median_ci: est.median_ci,
            per_minute: est.mean * 60.0,
            runs: points,
            sustained,
        },
        ratio_to_baseline: None,
        latency,
        errors,
        cost: cost_est.as_ref().map(|c| Cost {
            cpu_ms_per_1k: c.mean,
            ci: c.mean_ci,
            rss_peak_bytes: resources.as_ref().map_or(0.0, |r| r.rss_bytes.max),
        }),
        resources,
        cold_start_ms: record.and_then(|r| {
            r.cold_start.or_else(|| (!r.cold_start_ms.is_empty()).then(|| Quantiles::of(&r.cold_start_ms)))
        }),
        cold_start_resolution_ms: record.and_then(|r| r.cold_start_resolution_ms),
        start_cpu_cores: record.and_then(|r| r.start_cpu_quota),
        external,
        artifact_bytes: record.and_then(|r| r.artifact_bytes),
        code: record.and_then(|r| r.code.clone()),
        toolchains: record.map(|r| r.toolchains.clone()).unwrap_or_default(),
        lockfiles: record.map(|r| r.lockfiles.clone()).unwrap_or_default(),
        build_s: record.and_then(|r| r.build_s),
        generator_saturated_runs: saturated,
        steady_state: steady_state(&used, &mut warnings),
        warmup: super::warmup::warmup(&used, &mut warnings),
        per_request: by_name(&used, &mut warnings, |r| &r.per_request),
        iterations: by_name(&used, &mut warnings, |r| r.iterations.as_slice()).pop(),
        warnings,
        tls: super::tls::report(&used),
        series: series(&used, &merged),
    };
    Ok(Analysed { report, throughput: est, cost: cost_est })
}

/// The runs whose load generator saturated its cores, alone or with the companion's beside it
/// on the same cores, each kind with its warning.
fn saturated(used: &[&RunRecord], name: &str, warnings: &mut Vec<String>) -> usize {
    let alone = used.iter().filter(|r| r.generator.saturated).count();
    if alone > 0 {
        warnings.push(format!(
            "the load generator saturated its cores in {alone} of {} runs: these numbers may \
             measure the generator, not '{name}'",
            used.len()
        ));
    }
    let together = super::companion::generators_saturated(used);
    if together > 0 {
        warnings.push(format!(
            "its load generator and the companion's, on the same cores, together saturated them in \
             {together} of {} runs: these rates may measure the generators, not '{name}'",
            used.len()
        ));
    }
    alone + together
}

/// What the contestant's record says beside its numbers: a failed or partial
/// verification, and its incidents.
fn record_warnings(rec: &ContestantRecord, warnings: &mut Vec<String>) {
    if let Some(v) = rec.verification.as_ref().filter(|v| !v.passed) {
        warnings.push(format!("measured although it failed contract verification: {}", verify_reason(v)));
    }
    if let Some(v) = rec.verification.as_ref() {
        let not_enforced = v.not_enforced();
        if !not_enforced.is_empty() {
            warnings.push(format!(
                "does not enforce: {} (hardening rules of its contract: it did less work than a contestant that does)",
                not_enforced.join("; ")
            ));
        }
    }
    // A saturated generator is already summarised above from the runs themselves.
    for i in rec.incidents.iter().filter(|i| i.kind != "generator_saturated") {
        warnings.push(incident_line(i));
    }
}

/// The figures that rank a contestant: each run's throughput and their estimate, and what each answer cost.
struct Rates {
    rps: Vec<f64>,
    est: Estimate,
    sustained: Option<Sustained>,
    cost: Option<Estimate>,
}

/// Runs whose capacity search met nothing: their figure is an upper bound.
fn unmet_searches(used: &[&RunRecord], warnings: &mut Vec<String>) {
    let unmet: Vec<String> = used
        .iter()
        .filter_map(|r| r.find_max.as_ref().filter(|s| s.sustained_rps.is_none()))
        .map(|s| s.slo.join(" and "))
        .collect();
    if let Some(slo) = unmet.first() {
        warnings.push(format!(
            "in {} of {} runs not even the lowest rate tried met {slo}: each such run counts that \
             rate, which broke it, so its throughput is an upper bound (≤)",
            unmet.len(),
            used.len()
        ));
    }
}

/// The runs' rates (each read at the scenario's median companion rate `beside`, when
/// measured beside one) and their estimates.
fn rates(used: &[&RunRecord], seed: u64, beside: Option<f64>) -> Rates {
    // A capacity search's throughput is the rate it sustained under its objectives.
    let rps: Vec<f64> = used
        .iter()
        .map(|r| {
            let rate = r.find_max.as_ref().and_then(|s| s.sustained_rps).unwrap_or(r.summary.ok_rps);
            super::companion::scaled(rate, r, beside)
        })
        .collect();
    let est = estimate(&rps, seed);
    let sustained = used.iter().find_map(|r| r.find_max.as_ref()).map(|s| Sustained {
        slo: s.slo.clone(),
        lower_bound: used.iter().any(|r| r.find_max.as_ref().is_some_and(|s| s.lower_bound)),
        upper_bound: used.iter().any(|r| r.find_max.as_ref().is_some_and(|s| s.sustained_rps.is_none())),
    });
    let costs: Vec<f64> = used.iter().filter_map(|r| cost_ms_per_1k(r)).collect();
    let cost = (costs.len() == used.len() && !costs.is_empty()).then(|| estimate(&costs, seed ^ 0x0c05_7000));
    Rates { rps, est, sustained, cost }
}

/// One contestant's report and the estimates its ranking needs.
pub(super) struct Analysed {
    pub report: ContestantReport,
    pub throughput: Estimate,
    /// CPU ms per 1,000 correct answers, when every run was sampled.
    pub cost: Option<Estimate>,
}

/// CPU time of the contestant's process tree per 1,000 correct answers of a
/// run, ms: the cgroup's CPU time when limits applied, else the sampled CPU.
fn cost_ms_per_1k(r: &RunRecord) -> Option<f64> {
    let s = r.samples.as_ref()?;
    let cpu_s = match s.cgroup.as_ref().filter(|c| c.cpu_s > 0.0) {
        Some(c) => c.cpu_s,
        None if s.points.is_empty() => return None,
        None => s.points.iter().map(|p| p.cpu_percent / 100.0).sum::<f64>() * s.interval_ms as f64 / 1000.0,
    };
    (r.summary.ok > 0).then(|| cpu_s * 1e6 / r.summary.ok as f64)
}

/// The runs the statistics use. A run whose numbers are not a result (the
/// tool failed, nothing progressed) is always left out; an interrupted run is
/// left out unless every run was interrupted.
fn select<'a>(runs: &[&'a RunRecord], warnings: &mut Vec<String>) -> Vec<&'a RunRecord> {
    let mut valid = Vec::with_capacity(runs.len());
    for r in runs {
        match &r.invalid {
            Some(i) => warnings.push(format!(
                "{} is not a result and is left out ({}: {})",
                run_name(r),
                i.kind,
                i.reason
            )),
            None => valid.push(*r),
        }
    }
    let complete: Vec<&RunRecord> = valid.iter().copied().filter(|r| !r.interrupted).collect();
    if complete.is_empty() {
        if !valid.is_empty() {
            warnings.push(format!(
                "every run was interrupted; the {} partial run(s) are used as they are",
                valid.len()
            ));
        }
        valid
    } else {
        for r in valid.iter().filter(|r| r.interrupted) {
            warnings.push(format!("{} was interrupted and is left out", run_name(r)));
        }
        complete
    }
}

/// Each run's throughput with its modified z-score; outliers get a warning.
fn run_points(used: &[&RunRecord], rps: &[f64], est: &Estimate, warnings: &mut Vec<String>) -> Vec<RunPoint> {
    let z = sample::modified_z_scores(rps);
    let points: Vec<RunPoint> = used
        .iter()
        .zip(rps)
        .zip(&z)
        .map(|((r, &rps), &z)| RunPoint {
            repetition: r.label.repetition,
            ok_rps: rps,
            modified_z: z,
            outlier: z.abs() > sample::OUTLIER_Z,
        })
        .collect();
    // With fewer runs than an outlier test needs, a wide spread is said as it is.
    let (lo, hi) = rps.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    if (2..sample::MIN_OUTLIER_RUNS).contains(&rps.len()) && hi > 1.25 * lo {
        warnings.push(format!(
            "its runs differ by up to {} ({} to {} req/s): with fewer than {} runs no run can be called an \
             outlier, and so few runs this far apart make every interval of it wide (a plan with `precision` \
             measures rounds until the ratios are known, or says what stays undecided)",
            if lo > 0.0 { format!("{:.2}x", hi / lo) } else { "everything".to_owned() },
            fmt::rate(lo),
            fmt::rate(hi),
            sample::MIN_OUTLIER_RUNS
        ));
    }
    for p in points.iter().filter(|p| p.outlier) {
        warnings.push(format!(
            "{} is an outlier: {} req/s against a median of {} (modified z-score {:.1}); look for \
             interference on the machine during it",
            p.repetition.map_or("a run".to_owned(), |k| format!("run {k}")),
            fmt::rate(p.ok_rps),
            fmt::rate(est.median),
            p.modified_z
        ));
    }

    points
}

/// A scenario file's entries by name over the runs (`part` picks the requests or the
/// iterations), each rate the mean over the runs.
fn by_name(
    used: &[&RunRecord],
    warnings: &mut Vec<String>,
    part: impl Fn(&RunRecord) -> &[stackbench_record::Named],
) -> Vec<stackbench_record::Named> {
    let duration: f64 = used.iter().map(|r| r.summary.duration_s).sum();
    stackbench_record::Named::merge(used.iter().flat_map(|r| part(r)), duration).unwrap_or_else(|| {
        warnings
            .push("a run's per-request histograms cannot be read: the requests by name are left out".into());
        Vec::new()
    })
}

/// Requests and errors by kind over the runs.
fn errors(used: &[&RunRecord]) -> Errors {
    let mut errors = Errors { requests: 0, errors: 0, rate: 0.0, by_kind: BTreeMap::new() };
    for r in used {
        errors.requests += r.summary.requests;
        errors.errors += r.summary.errors;
        for (k, v) in &r.errors {
            *errors.by_kind.entry(k.clone()).or_default() += v;
        }
    }
    errors.rate = if errors.requests == 0 { 0.0 } else { errors.errors as f64 / errors.requests as f64 };

    errors
}

/// When each plain run's rate and median latency stopped drifting
/// ([`stackbench_record::timeline_steady`]); runs shorter than a window, and capacity
/// searches (whose rate steps on purpose), are not judged.
fn steady_state(used: &[&RunRecord], warnings: &mut Vec<String>) -> Option<SteadyState> {
    use stackbench_record::{Steady, timeline_steady};
    let judged: Vec<(Option<u32>, Steady)> = used
        .iter()
        .filter(|r| r.find_max.is_none())
        .map(|r| (r.label.repetition, timeline_steady(&r.timeline)))
        .filter(|(_, s)| *s != Steady::TooShort)
        .collect();
    if judged.is_empty() {
        return None;
    }
    let from_s: Vec<Option<u32>> =
        judged.iter().map(|(_, s)| if let Steady::From(t) = s { Some(*t as u32) } else { None }).collect();
    let steady: Vec<f64> = from_s.iter().flatten().map(|&t| f64::from(t)).collect();
    let never: Vec<String> = judged
        .iter()
        .filter(|(_, s)| *s == Steady::Never)
        .map(|(rep, _)| rep.map_or_else(|| "a run".to_owned(), |k| format!("run {k}")))
        .collect();
    if !never.is_empty() {
        warnings.push(format!(
            "never steady in {} of {} runs ({}): its rate or median latency still drifted by more than 5% \
             across every 5 s of the measured window; a longer `warmup` would measure it settled",
            never.len(),
            judged.len(),
            never.join(", ")
        ));
    }
    Some(SteadyState {
        from_s,
        median_s: (!steady.is_empty()).then(|| sample::median(&steady)),
        never: never.len(),
    })
}

/// What the charts draw.
fn series(used: &[&RunRecord], merged: &Histogram<u64>) -> Series {
    Series {
        percentiles: percentile_curve(merged),
        signatures: used
            .iter()
            .map(|r| RunSeries {
                repetition: r.label.repetition,
                points: r
                    .timeline
                    .iter()
                    .filter(|s| s.completed > 0)
                    .map(|s| (s.t, s.p50_us, s.p99_us))
                    .collect(),
            })
            .collect(),
        resources: used
            .iter()
            .filter_map(|r| {
                let s = r.samples.as_ref()?;
                Some(RunSeries {
                    repetition: r.label.repetition,
                    points: s
                        .points
                        .iter()
                        .map(|p| (p.t_ms as f64 / 1e3, p.cpu_percent, p.rss_bytes))
                        .collect(),
                })
            })
            .collect(),
    }
}

fn run_name(r: &RunRecord) -> String {
    r.label.repetition.map_or("a run".to_owned(), |k| format!("run {k}"))
}

/// The merged histogram of the runs, and the runs whose histogram is unreadable.
fn merge_histograms<'a>(runs: &[&'a RunRecord]) -> (Histogram<u64>, Vec<&'a RunRecord>) {
    let mut merged = new_histogram();
    let mut bad = Vec::new();
    for r in runs {
        match decode_histogram(&r.histogram).ok().and_then(|h| merged.add(&h).ok()) {
            Some(()) => {}
            None => bad.push(*r),
        }
    }
    (merged, bad)
}

/// A percentile's name and how to read it from a summary.
type Field = (&'static str, fn(&Latency) -> f64);

/// Per-percentile range across runs that completed requests.
fn spread(runs: &[&RunRecord]) -> BTreeMap<String, Spread> {
    let mut out = BTreeMap::new();
    let lat: Vec<&Latency> = runs.iter().map(|r| &r.summary.latency).filter(|l| l.count > 0).collect();
    if lat.is_empty() {
        return out;
    }
    let fields: [Field; 7] = [
        ("mean_us", |l| l.mean_us),
        ("p50_us", |l| l.p50_us as f64),
        ("p90_us", |l| l.p90_us as f64),
        ("p95_us", |l| l.p95_us as f64),
        ("p99_us", |l| l.p99_us as f64),
        ("p999_us", |l| l.p999_us as f64),
        ("max_us", |l| l.max_us as f64),
    ];
    for (key, get) in fields {
        let values = lat.iter().map(|l| get(l));
        let min = values.clone().fold(f64::INFINITY, f64::min);
        let max = values.fold(f64::NEG_INFINITY, f64::max);
        out.insert(key.to_owned(), Spread { min, max });
    }
    out
}

/// CPU and RSS quantiles over every sample of every run (the record crate's
/// nearest-rank routine); a run with a summary but no points contributes its
/// summary's worst values.
fn resources(runs: &[&RunRecord]) -> Option<Resources> {
    let sampled: Vec<_> = runs.iter().filter_map(|r| r.samples.as_ref()).collect();
    if sampled.is_empty() {
        return None;
    }
    let cpu: Vec<f64> = sampled.iter().flat_map(|s| s.points.iter().map(|p| p.cpu_percent)).collect();
    let rss: Vec<f64> = sampled.iter().flat_map(|s| s.points.iter().map(|p| p.rss_bytes as f64)).collect();
    let threads_max = sampled.iter().map(|s| s.threads_max).max().unwrap_or(0);
    let cgroups: Vec<_> = sampled.iter().filter_map(|s| s.cgroup.as_ref()).collect();
    let limits = Resources {
        cpu_percent: Quantiles::default(),
        rss_bytes: Quantiles::default(),
        threads_max,
        cpu_limit_cores: cgroups.iter().find_map(|c| c.cpu_quota),
        memory_limit_bytes: cgroups.iter().find_map(|c| c.memory_limit_bytes),
        throttled_s: cgroups.iter().map(|c| c.throttled_s).sum(),
        throttled_share: None,
        oom_kills: cgroups.iter().map(|c| c.oom_kills).sum(),
    };
    if cpu.is_empty() {
        let worst = |get: fn(&stackbench_record::ProcessSamples) -> Quantiles| {
            let qs: Vec<Quantiles> = sampled.iter().map(|s| get(s)).collect();
            Quantiles {
                n: qs.iter().map(|q| q.n).sum(),
                p50: qs.iter().map(|q| q.p50).fold(0.0, f64::max),
                p95: qs.iter().map(|q| q.p95).fold(0.0, f64::max),
                p99: qs.iter().map(|q| q.p99).fold(0.0, f64::max),
                max: qs.iter().map(|q| q.max).fold(0.0, f64::max),
            }
        };
        return Some(Resources {
            cpu_percent: worst(|s| s.cpu_percent),
            rss_bytes: worst(|s| s.rss_bytes),
            ..limits
        });
    }
    Some(Resources { cpu_percent: Quantiles::of(&cpu), rss_bytes: Quantiles::of(&rss), ..limits })
}

/// Points of the latency-by-percentile curve (HdrHistogram's plots): evenly
/// spaced on the axis `log10(1 / (1 − p))`, from p = 0 to the last percentile
/// the count supports (1 − 1/count), as (percentile 0..100, latency µs).
pub fn percentile_curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let top = (h.len() as f64).log10().max(1.0);
    let steps = (top * 20.0).ceil() as usize;
    (0..=steps)
        .map(|i| {
            let x = top * i as f64 / steps as f64;
            let q = 1.0 - 10f64.powf(-x);
            (q * 100.0, h.value_at_quantile(q) as f64)
        })
        .collect()
}

fn failed(name: &str, record: Option<&ContestantRecord>) -> FailedContestant {
    let reason = match record {
        Some(r) => match (&r.verification, r.incidents.last()) {
            (Some(v), _) if !v.passed => format!("failed contract verification: {}", verify_reason(v)),
            // An optional contestant whose requirement is missing: the reason alone.
            (_, Some(i)) if i.kind == "skipped" => i.message.clone(),
            (_, Some(i)) => incident_line(i),
            _ => "no measured run".to_owned(),
        },
        None => "no measured run".to_owned(),
    };
    FailedContestant {
        name: name.to_owned(),
        language: record.and_then(|r| r.language.clone()),
        framework: record.and_then(|r| r.framework.clone()),
        reason,
        verification: record.and_then(|r| r.verification.clone()),
        incidents: record.map(|r| r.incidents.clone()).unwrap_or_default(),
    }
}

fn verify_reason(v: &stackbench_record::Verification) -> String {
    match v.failures.as_slice() {
        [] => format!("{} case(s) run, none reported", v.cases),
        [f] => format!("{} ({})", f.rule, f.detail),
        [f, rest @ ..] => format!("{} ({}), and {} more rule(s)", f.rule, f.detail, rest.len()),
    }
}

fn incident_line(i: &stackbench_record::Incident) -> String {
    let kind = i.kind.replace('_', " ");
    match (i.phase.as_str(), i.repetition) {
        ("run", Some(k)) => format!("{kind} in run {k}: {}", i.message),
        (phase, Some(k)) => format!("{kind} during {phase} of run {k}: {}", i.message),
        (phase, None) => format!("{kind} during {phase}: {}", i.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{RunSpec, run_record};
    use stackbench_record::Companion;

    #[test]
    fn generators_that_filled_their_cores_alone_or_together_are_warned_of() {
        let run = |own: f64, beside: f64, alone: bool| {
            let mut r = run_record(&RunSpec::new("a", "dummy", 1, 100.0));
            (r.generator.utilization, r.generator.saturated) = (own, alone);
            r.companion =
                Some(Companion { name: "ref".into(), ok_rps: 1000.0, generator_utilization: Some(beside) });
            r
        };
        let runs = [run(0.47, 0.48, false), run(0.33, 0.34, false), run(0.95, 0.2, true)];
        let mut warnings = Vec::new();
        assert_eq!(saturated(&runs.iter().collect::<Vec<_>>(), "a", &mut warnings), 2);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("saturated its cores in 1 of 3 runs"), "{}", warnings[0]);
        assert!(warnings[1].contains("together saturated them in 1 of 3 runs"), "{}", warnings[1]);
        // Two generators with room to spare: no warning.
        let mut quiet = Vec::new();
        assert_eq!(saturated(&[&runs[1]], "a", &mut quiet), 0);
        assert!(quiet.is_empty());
    }
}
