//! Ranks and sentences within a scenario. A contestant's rank is 1 + the
//! number of contestants whose throughput is significantly higher (the 95%
//! interval of the ratio of means lies above 1); contestants that share a
//! rank are statistically tied. This is the pairwise form of "overlapping
//! intervals are not ranked", with the interval of the *ratio* rather than
//! two separate intervals: two 95% intervals can overlap while the ratio's
//! interval excludes 1 (overlap is a test at about the 99.5% level), and
//! the sentence printed next to the rank is about the ratio. Without
//! intervals (fewer than 3 runs) ranks follow the means and say so.
//!
//! Sentences follow hyperfine: `'axum' ran 1.74 ± 0.03 times more requests
//! than 'flask'`, where ± is the larger distance from the ratio to an end of
//! its 95% interval.

use crate::fmt;
use crate::stats::{Estimate, MIN_RUNS, ratio};

use super::{BaselineKind, ContestantReport, FailedContestant, ScenarioReport, Statement, Verdict};

pub(super) fn scenario(
    name: &str,
    mut measured: Vec<(ContestantReport, Estimate)>,
    failed: Vec<FailedContestant>,
    reference: Option<&str>,
) -> ScenarioReport {
    measured.sort_by(|a, b| b.1.mean.total_cmp(&a.1.mean).then_with(|| a.0.name.cmp(&b.0.name)));
    let ranks: Vec<usize> = (0..measured.len())
        .map(|i| 1 + (0..measured.len()).filter(|&j| j != i && beats(&measured[j].1, &measured[i].1)).count())
        .collect();
    for (i, (c, _)) in measured.iter_mut().enumerate() {
        c.rank = ranks[i];
        c.tied = ranks.iter().enumerate().any(|(j, &r)| j != i && r == ranks[i]);
    }
    // Stable: equal ranks keep the order of their means.
    measured.sort_by_key(|(c, _)| c.rank);

    let (baseline, kind) = match reference.and_then(|r| measured.iter().position(|(c, _)| c.name == r)) {
        Some(i) => (Some(i), BaselineKind::Reference),
        None => ((!measured.is_empty()).then_some(0), BaselineKind::Best),
    };
    let mut statements = Vec::new();
    if let Some(b) = baseline {
        let base_est = measured[b].1.clone();
        let base_name = measured[b].0.name.clone();
        for (c, est) in &mut measured {
            c.ratio_to_baseline = ratio(est, &base_est);
            if c.name != base_name {
                statements.push(statement(&c.name, est, &base_name, &base_est));
            }
        }
        // Ties among the others are worth a sentence too (seed 000: "Japronto
        // vs Flask didn't bring anything relevant").
        for i in 0..measured.len() {
            for j in i + 1..measured.len() {
                let (a, b) = (&measured[i], &measured[j]);
                if a.0.name != base_name && b.0.name != base_name && a.0.rank == b.0.rank {
                    statements.push(statement(&b.0.name, &b.1, &a.0.name, &a.1));
                }
            }
        }
    }

    let mut notes = Vec::new();
    if measured.iter().any(|(c, _)| c.runs < MIN_RUNS) {
        notes.push(format!(
            "With fewer than {MIN_RUNS} runs no 95% interval is available: those ratios are point \
             estimates and those ranks follow the means only."
        ));
    }
    if measured.iter().any(|(c, _)| !c.latency.corrected_for_coordinated_omission) {
        notes.push(
            "Latency is measured from each request's actual send (closed model): it is not corrected for \
             coordinated omission."
                .to_owned(),
        );
    }
    let resolution = measured
        .iter()
        .filter_map(|(c, _)| c.cold_start_resolution_ms)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    if let Some(r) = resolution {
        notes.push(format!(
            "Cold start is exec to the first verified answer, probed at most {} apart: each figure is at most that late.",
            crate::fmt::millis(r)
        ));
    }
    ScenarioReport {
        name: name.to_owned(),
        baseline: baseline.map(|b| measured[b].0.name.clone()),
        baseline_kind: kind,
        contestants: measured.into_iter().map(|(c, _)| c).collect(),
        failed,
        statements,
        notes,
    }
}

/// Is `a`'s throughput higher than `b`'s: significantly when both have an
/// interval, by the means otherwise.
fn beats(a: &Estimate, b: &Estimate) -> bool {
    match ratio(a, b) {
        Some(r) => r.value > 1.0 && r.significant().unwrap_or(true),
        None => a.mean > 0.0 && b.mean <= 0.0,
    }
}

/// The sentence comparing `name` with the baseline, the higher throughput first.
fn statement(name: &str, est: &Estimate, base: &str, base_est: &Estimate) -> Statement {
    let (hi, hi_est, lo, lo_est) =
        if est.mean >= base_est.mean { (name, est, base, base_est) } else { (base, base_est, name, est) };
    let Some(r) = ratio(hi_est, lo_est) else {
        let text = if hi_est.mean > 0.0 {
            format!("'{lo}' answered no request correctly; '{hi}' ran {} req/s", fmt::rate(hi_est.mean))
        } else {
            format!("neither '{hi}' nor '{lo}' answered a request correctly")
        };
        return Statement {
            faster: hi.to_owned(),
            slower: lo.to_owned(),
            ratio: None,
            verdict: Verdict::NothingAnswered,
            text,
        };
    };
    let (verdict, text) = match (r.ci, r.significant()) {
        (Some(ci), Some(true)) => (
            Verdict::Faster,
            format!(
                "'{hi}' ran {} ± {} times more requests than '{lo}'",
                fmt::ratio(r.value),
                fmt::ratio(ci.plus_minus(r.value))
            ),
        ),
        (Some(ci), _) => (
            Verdict::Tied,
            format!(
                "'{hi}' and '{lo}' are statistically tied: '{hi}' ran {} ± {} times the requests of '{lo}'",
                fmt::ratio(r.value),
                fmt::ratio(ci.plus_minus(r.value))
            ),
        ),
        (None, _) => (
            Verdict::NoInterval,
            format!(
                "'{hi}' ran {} times more requests than '{lo}' (no interval: {})",
                fmt::ratio(r.value),
                too_few(hi, hi_est, lo, lo_est)
            ),
        ),
    };
    Statement { faster: hi.to_owned(), slower: lo.to_owned(), ratio: Some(r), verdict, text }
}

fn too_few(a: &str, ae: &Estimate, b: &str, be: &Estimate) -> String {
    let few: Vec<String> = [(a, ae), (b, be)]
        .iter()
        .filter(|(_, e)| e.n < MIN_RUNS)
        .map(|(n, e)| format!("'{n}' has {} run{}", e.n, if e.n == 1 { "" } else { "s" }))
        .collect();
    format!("{}, {MIN_RUNS} needed", few.join(" and "))
}
