//! A contestant's warm-ups: the load before each measured window, as the runs
//! kept it (`RunRecord::warmup`): how long it lasted, when its rate and median
//! latency became steady (or that they never did), and what it did compared to
//! the measured window that followed (docs/design.md, "Steady state, checked").

use stackbench_record::RunRecord;

use super::WarmupReport;
use crate::stats::sample;

/// The warm-ups of `used` (its plain runs that kept one); `None` when none did. A run whose
/// warm-up never became steady adds a warning.
pub(super) fn warmup(used: &[&RunRecord], warnings: &mut Vec<String>) -> Option<WarmupReport> {
    let kept: Vec<(&RunRecord, &stackbench_record::Warmup)> =
        used.iter().filter(|r| r.find_max.is_none()).filter_map(|r| Some((*r, r.warmup.as_ref()?))).collect();
    if kept.is_empty() {
        return None;
    }
    let judged: Vec<(&RunRecord, Option<u32>)> = kept
        .iter()
        .filter(|(_, w)| w.steady_from_s.is_some() || w.never_steady)
        .map(|(r, w)| (*r, w.steady_from_s))
        .collect();
    let steady: Vec<f64> = judged.iter().filter_map(|(_, s)| s.map(f64::from)).collect();
    let never: Vec<String> = judged
        .iter()
        .filter(|(_, s)| s.is_none())
        .map(|(r, _)| r.label.repetition.map_or_else(|| "a run".to_owned(), |k| format!("run {k}")))
        .collect();
    let auto = kept.iter().all(|(_, w)| w.auto);
    let max_s = kept
        .iter()
        .filter_map(|(_, w)| w.max_s)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    if !never.is_empty() {
        let within = match (auto, max_s) {
            (true, Some(max)) => format!(
                "within its maximum of {max:.0} s; it was measured still warming, a longer `max-warmup`"
            ),
            _ => "by its end; a longer `warmup` (or `warmup = \"auto\"`)".to_owned(),
        };
        warnings.push(format!(
            "warm-up never steady in {} of {} runs ({}): its rate or median latency still drifted by more than \
             5% across every 5 s {within} would let it settle",
            never.len(),
            judged.len(),
            never.join(", ")
        ));
    }
    let durations: Vec<f64> = kept.iter().map(|(_, w)| w.summary.duration_s).collect();
    let relative: Vec<f64> = kept
        .iter()
        .filter(|(r, w)| r.summary.ok_rps > 0.0 && w.summary.duration_s >= 1.0)
        .map(|(r, w)| w.summary.ok_rps / r.summary.ok_rps)
        .collect();
    let median_of = |f: fn(&stackbench_record::Warmup) -> f64| {
        sample::median(&kept.iter().map(|(_, w)| f(w)).collect::<Vec<f64>>())
    };
    Some(WarmupReport {
        runs: kept.len(),
        auto,
        max_s,
        steady_from_s: judged.iter().map(|(_, s)| *s).collect(),
        median_steady_s: (!steady.is_empty()).then(|| sample::median(&steady)),
        never: never.len(),
        median_duration_s: sample::median(&durations),
        ok_rps: median_of(|w| w.summary.ok_rps),
        relative_rate: (!relative.is_empty()).then(|| sample::median(&relative)),
        p50_us: median_of(|w| w.summary.latency.p50_us as f64),
        p99_us: median_of(|w| w.summary.latency.p99_us as f64),
        requests: kept.iter().map(|(_, w)| w.summary.requests).sum(),
        errors: kept.iter().map(|(_, w)| w.summary.errors).sum(),
        cpu_cores: kept
            .iter()
            .filter_map(|(r, _)| r.samples.as_ref()?.cgroup?.warmup_cpu_quota)
            .fold(None, |m: Option<f64>, q| Some(m.map_or(q, |m| m.max(q)))),
    })
}

/// How a contestant's warm-up reads in a sentence: `vertx steady after 7 s (median of 3 runs), warm-up
/// at 61% of the measured rate`.
pub(super) fn phrase(name: &str, w: &WarmupReport) -> String {
    let judged = w.steady_from_s.len();
    let when = match (w.median_steady_s, w.never) {
        (None, 0) if let Some(q) = w.cpu_cores => format!(
            "{:.0} s at {q} core{}, not judged (its seconds ran at two quotas)",
            w.median_duration_s,
            if q > 1.0 { "s" } else { "" }
        ),
        (Some(t), 0) => format!("steady after {t:.0} s"),
        (Some(t), n) => format!("steady after {t:.0} s, never steady{} in {n} of {judged} runs", within(w)),
        (None, 0) => format!("{:.0} s, too short to judge", w.median_duration_s),
        (None, _) => format!("never steady{}", within(w)),
    };
    let rate = w
        .relative_rate
        .map(|r| format!(", warm-up at {:.0}% of the measured rate", 100.0 * r))
        .unwrap_or_default();
    format!("{name} {when}{rate}")
}

fn within(w: &WarmupReport) -> String {
    match (w.auto, w.max_s) {
        (true, Some(max)) => format!(" within {max:.0} s"),
        _ => " in its warm-up".to_owned(),
    }
}

#[cfg(test)]
mod tests;
