//! Ranks and sentences within a scenario. A contestant's rank is the range
//! of places the data allow: best = 1 + the number of contestants
//! significantly better (the 95% interval of the ratio of means lies above
//! 1), worst = n − the number significantly worse, printed `4–9` (a single
//! number when both agree). The table is ordered by the point estimate, so
//! a reader never sees a higher rate below a lower one, and ranks never
//! jump: this is the pairwise form of "overlapping intervals are not
//! ranked" (TechEmpower's issue #992 asked for exactly this), with the
//! interval of the *ratio* rather than two separate intervals: two 95%
//! intervals can overlap while the ratio's interval excludes 1 (overlap is
//! a test at about the 99.5% level). One matrix of significant wins gives
//! the ranks, the ties and the sentences. Without intervals (fewer than 3
//! runs) ranks follow the means and say so.
//!
//! Sentences follow hyperfine: `'axum' ran 1.74 ± 0.03 times more requests
//! than 'flask'`, with ± only where the 95% interval is symmetric as printed,
//! and its ends otherwise: `12.05 (3.10..54.00)` (`fmt::ratio_interval`).

use crate::fmt;
use crate::stats::sequential::{self, Pair};
use crate::stats::{Estimate, MIN_RUNS, ratio_at};

use super::contestant::Analysed;
use super::{BaselineKind, ContestantReport, FailedContestant, RankedBy, ScenarioReport, Statement, Verdict};

pub(super) fn scenario(
    name: &str,
    analysed: Vec<Analysed>,
    failed: Vec<FailedContestant>,
    reference: Option<&str>,
    stopping: Option<&Judging>,
) -> ScenarioReport {
    let level = stopping.map_or(crate::stats::CONFIDENCE, |j| j.confidence);
    // A rate the generator capped cannot rank contestants: what an answer cost can.
    let lower_bound =
        analysed.iter().any(|a| a.report.throughput.sustained.as_ref().is_some_and(|s| s.lower_bound));
    let by_cost = lower_bound && !analysed.is_empty() && analysed.iter().all(|a| a.cost.is_some());
    let ranked_by = if by_cost { RankedBy::CostPerRequest } else { RankedBy::Throughput };
    let tls_pairs = {
        let m: Vec<_> = analysed.iter().map(|a| (&a.report, &a.throughput)).collect();
        super::tls::pairs(&m, level)
    };
    let mut measured: Vec<(ContestantReport, Estimate)> = analysed
        .into_iter()
        .map(|a| {
            let key = if by_cost { a.cost.expect("checked above") } else { a.throughput };
            (a.report, key)
        })
        .collect();
    // Best first: the highest throughput, or the lowest cost.
    measured.sort_by(|a, b| {
        let order = if by_cost { a.1.mean.total_cmp(&b.1.mean) } else { b.1.mean.total_cmp(&a.1.mean) };
        order.then_with(|| a.0.name.cmp(&b.0.name))
    });
    let (mut measured, wins) = rank(measured, by_cost, level);

    let (baseline, kind) = match reference.and_then(|r| measured.iter().position(|(c, _)| c.name == r)) {
        Some(i) => (Some(i), BaselineKind::Reference),
        None => ((!measured.is_empty()).then_some(0), BaselineKind::Best),
    };
    let sentence = |a: usize, b: usize, measured: &[(ContestantReport, Estimate)]| {
        let (x, y) = (&measured[a], &measured[b]);
        if by_cost {
            cost_statement(&x.0.name, &x.1, &y.0.name, &y.1, level)
        } else {
            statement(&x.0.name, &x.1, &y.0.name, &y.1, level)
        }
    };
    let mut statements = Vec::new();
    if let Some(b) = baseline {
        let base_est = measured[b].1.clone();
        for (c, est) in &mut measured {
            c.ratio_to_baseline = ratio_at(est, &base_est, level);
        }
        for i in 0..measured.len() {
            if i != b {
                statements.push(sentence(i, b, &measured));
            }
        }
        // Ties among the others are worth a sentence too ("Japronto vs Flask
        // didn't bring anything relevant", as the three-kings post put it):
        // neighbours in the table that the data cannot order.
        let undecided = |i: usize, j: usize| !wins[i][j] && !wins[j][i];
        for j in 1..measured.len() {
            let i = j - 1;
            if i != b && j != b && undecided(i, j) {
                statements.push(sentence(j, i, &measured));
            }
        }
    }

    let notes = notes(&measured, by_cost, lower_bound);
    let precision = stopping.map_or_else(Vec::new, |j| {
        let named: Vec<(&str, &Estimate)> = measured.iter().map(|(c, e)| (c.name.as_str(), e)).collect();
        sequential::judge_all(&named, j.precision, j.confidence, by_cost)
    });
    ScenarioReport {
        name: name.to_owned(),
        baseline: baseline.map(|b| measured[b].0.name.clone()),
        baseline_kind: kind,
        contestants: measured.into_iter().map(|(c, _)| c).collect(),
        failed,
        statements,
        ranked_by,
        tls_pairs,
        notes,
        precision,
    }
}

/// The precision a plan asked for and the level of each look's intervals.
#[derive(Debug, Clone, Copy)]
pub(super) struct Judging {
    pub precision: f64,
    pub confidence: f64,
}

/// Every pair's verdict at the precision asked, for [`super::Stopping`].
pub(super) fn unmet(pairs: &[Pair]) -> usize {
    pairs.iter().filter(|p| p.verdict != sequential::PairVerdict::Met).count()
}

/// The notes under a scenario's table: what its numbers are and are not.
fn notes(measured: &[(ContestantReport, Estimate)], by_cost: bool, lower_bound: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if measured.iter().any(|(c, _)| c.runs < MIN_RUNS) {
        notes.push(format!(
            "With fewer than {MIN_RUNS} runs no 95% interval is available: those ratios are point \
             estimates and those ranks follow the means only."
        ));
    }
    if let Some(s) = measured.iter().find_map(|(c, _)| c.throughput.sustained.as_ref()) {
        notes.push(format!(
            "Throughput is the rate each contestant sustained with {} (a capacity search per run); \
             ≥ marks a lower bound: the load generator saturated its cores before an objective broke.",
            s.slo.join(" and ")
        ));
    }
    if measured.iter().any(|(c, _)| c.throughput.sustained.as_ref().is_some_and(|s| s.upper_bound)) {
        notes.push(
            "≤ marks an upper bound: in some run not even the lowest rate tried met the objectives, and \
             that run counts the rate that broke them (~: a lower bound in one run, an upper in another)."
                .to_owned(),
        );
    }
    if by_cost {
        notes.push(
            "Ranked by CPU per correct answer, lower first: a sustained rate is a lower bound here, so the \
             rates cannot rank the contestants; what each answer cost the contestant holds whatever the load."
                .to_owned(),
        );
    } else if lower_bound {
        notes.push(
            "A sustained rate is a lower bound, and not every contestant was sampled, so the ranking still \
             follows the rates: read the ≥ rates as minimums."
                .to_owned(),
        );
    }
    if measured.iter().any(|(c, _)| !c.latency.corrected_for_coordinated_omission) {
        notes.push(
            "Latency is measured from each request's actual send (closed model): it is not corrected for \
             coordinated omission."
                .to_owned(),
        );
    }
    let steady: Vec<String> = measured
        .iter()
        .filter_map(|(c, _)| {
            let s = c.steady_state.as_ref()?;
            let when = match (s.median_s, s.never) {
                (Some(t), 0) => format!("{t:.0} s"),
                (Some(t), n) => format!("{t:.0} s, never in {n} of {} runs", s.from_s.len()),
                (None, _) => "never steady".to_owned(),
            };
            Some(format!("{} {when}", c.name))
        })
        .collect();
    if !steady.is_empty() {
        notes.push(format!(
            "Time to steady state within the measured window (rate and median latency, 5 s sliding-window \
             slope test; median over runs): {}.",
            steady.join(", ")
        ));
    }
    let warmups: Vec<String> = measured
        .iter()
        .filter_map(|(c, _)| Some(super::warmup::phrase(&c.name, c.warmup.as_ref()?)))
        .collect();
    if !warmups.is_empty() {
        notes.push(format!(
            "Warm-up, kept apart from the measured window (time to steady state by the same test, median over runs): {}.",
            warmups.join("; ")
        ));
    }
    let resolution = measured
        .iter()
        .filter_map(|(c, _)| c.cold_start_resolution_ms)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let boosted = measured
        .iter()
        .filter_map(|(c, _)| c.start_cpu_cores)
        .fold(None, |m: Option<f64>, q| Some(m.map_or(q, |m| m.max(q))));
    if let Some(r) = resolution {
        let at = boosted.map_or_else(String::new, |q| {
            format!(" (at {}, the budget set once it answered)", super::budget::cores_of(q))
        });
        notes.push(format!(
            "Cold start is exec to the first verified answer{at}, probed at most {} apart: each figure is at most that late.",
            crate::fmt::millis(r)
        ));
    }
    notes
}

/// Ranks `measured`, already ordered best first by the key estimate (for
/// `by_cost` lower is better): each contestant's range of places from one
/// matrix of significant wins, which is returned (`wins[j][i]`: j is
/// significantly better than i) for the sentences.
fn rank(
    mut measured: Vec<(ContestantReport, Estimate)>,
    by_cost: bool,
    level: f64,
) -> (Vec<(ContestantReport, Estimate)>, Vec<Vec<bool>>) {
    let better = |a: &Estimate, b: &Estimate| if by_cost { beats(b, a, level) } else { beats(a, b, level) };
    let n = measured.len();
    let wins: Vec<Vec<bool>> =
        (0..n).map(|j| (0..n).map(|i| i != j && better(&measured[j].1, &measured[i].1)).collect()).collect();
    for (i, (c, _)) in measured.iter_mut().enumerate() {
        let (best, worst) = places(&wins, i);
        c.rank = best;
        c.rank_worst = worst;
        c.tied = best != worst;
    }
    (measured, wins)
}

/// The range of places contestant `i` can take given the significant wins:
/// best = 1 + those better than it, worst = n − those worse than it.
pub(crate) fn places(wins: &[Vec<bool>], i: usize) -> (usize, usize) {
    let n = wins.len();
    let better = (0..n).filter(|&j| wins[j][i]).count();
    let worse = (0..n).filter(|&j| wins[i][j]).count();
    (1 + better, n - worse)
}

/// Is `a`'s throughput higher than `b`'s: significantly when both have an
/// interval, by the means otherwise.
fn beats(a: &Estimate, b: &Estimate, level: f64) -> bool {
    match ratio_at(a, b, level) {
        Some(r) => r.value > 1.0 && r.significant().unwrap_or(true),
        None => a.mean > 0.0 && b.mean <= 0.0,
    }
}

/// The sentence comparing `name` with the baseline, the higher throughput first.
fn statement(name: &str, est: &Estimate, base: &str, base_est: &Estimate, level: f64) -> Statement {
    let (hi, hi_est, lo, lo_est) =
        if est.mean >= base_est.mean { (name, est, base, base_est) } else { (base, base_est, name, est) };
    let Some(r) = ratio_at(hi_est, lo_est, level) else {
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
                "'{hi}' ran {} times more requests than '{lo}'",
                fmt::ratio_interval(r.value, ci.lo, ci.hi)
            ),
        ),
        (Some(ci), _) => (
            Verdict::Tied,
            format!(
                "'{hi}' and '{lo}' are statistically tied: '{hi}' ran {} times the requests of '{lo}'",
                fmt::ratio_interval(r.value, ci.lo, ci.hi)
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

/// The sentence comparing two contestants' CPU per correct answer, the
/// cheaper (better) one named `faster`, the ratio costlier / cheaper.
fn cost_statement(name: &str, est: &Estimate, base: &str, base_est: &Estimate, level: f64) -> Statement {
    let (lo, lo_est, hi, hi_est) =
        if est.mean <= base_est.mean { (name, est, base, base_est) } else { (base, base_est, name, est) };
    let Some(r) = ratio_at(hi_est, lo_est, level) else {
        return Statement {
            faster: lo.to_owned(),
            slower: hi.to_owned(),
            ratio: None,
            verdict: Verdict::NothingAnswered,
            text: format!("'{lo}' and '{hi}' cannot be compared by CPU per answer (one used none)"),
        };
    };
    let (verdict, text) = match (r.ci, r.significant()) {
        (Some(ci), Some(true)) => (
            Verdict::Faster,
            format!(
                "'{hi}' used {} times the CPU per correct answer of '{lo}'",
                fmt::ratio_interval(r.value, ci.lo, ci.hi)
            ),
        ),
        (Some(ci), _) => (
            Verdict::Tied,
            format!(
                "'{lo}' and '{hi}' are statistically tied in CPU per answer: '{hi}' used {} times the CPU of '{lo}'",
                fmt::ratio_interval(r.value, ci.lo, ci.hi)
            ),
        ),
        (None, _) => (
            Verdict::NoInterval,
            format!(
                "'{hi}' used {} times the CPU per correct answer of '{lo}' (no interval: {})",
                fmt::ratio(r.value),
                too_few(hi, hi_est, lo, lo_est)
            ),
        ),
    };
    Statement { faster: lo.to_owned(), slower: hi.to_owned(), ratio: Some(r), verdict, text }
}

fn too_few(a: &str, ae: &Estimate, b: &str, be: &Estimate) -> String {
    let few: Vec<String> = [(a, ae), (b, be)]
        .iter()
        .filter(|(_, e)| e.n < MIN_RUNS)
        .map(|(n, e)| format!("'{n}' has {} run{}", e.n, if e.n == 1 { "" } else { "s" }))
        .collect();
    format!("{}, {MIN_RUNS} needed", few.join(" and "))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::places;

    proptest! {
        /// Wins that agree with the order of the means (only an earlier row can
        /// beat a later one): every range holds its own row, and the first and
        /// last places go to one contestant each at most.
        #[test]
        fn a_range_holds_its_row(n in 1usize..12, bits in proptest::collection::vec(any::<bool>(), 144)) {
            let wins: Vec<Vec<bool>> = (0..n).map(|j| (0..n).map(|i| j < i && bits[j * 12 + i]).collect()).collect();
            for i in 0..n {
                let (best, worst) = places(&wins, i);
                let row = i + 1;
                prop_assert!(best <= row && row <= worst, "row {}: {}–{}", row, best, worst);
                prop_assert!(worst <= n);
            }
            let decided_first = (0..n).filter(|&i| places(&wins, i).1 == 1).count();
            prop_assert!(decided_first <= 1);
        }
    }

    #[test]
    fn no_wins_leave_every_place_open() {
        let wins = vec![vec![false; 4]; 4];
        assert!((0..4).all(|i| places(&wins, i) == (1, 4)));
    }
}
