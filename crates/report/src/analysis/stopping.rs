//! What the report says about precision-driven rounds: the summary line
//! (`met ±3% after 7 rounds`, or what stopped short of it) and a sentence for
//! each pair that did not meet the precision. The verdicts come from
//! [`crate::stats::sequential`]; this module only words them.

use stackbench_record::Stopping;

use super::{ScenarioReport, StoppingReport};
use crate::stats::sequential::{Pair, PairVerdict};
use crate::stats::{MIN_RUNS, Ratio};

/// What the rounds of a precision-driven run came to.
pub(super) fn report(s: &Stopping, scenarios: &[ScenarioReport]) -> StoppingReport {
    let pairs: Vec<&Pair> = scenarios.iter().flat_map(|sc| &sc.precision).collect();
    let unmet: usize = scenarios.iter().map(|sc| super::rank::unmet(&sc.precision)).sum();
    let met = unmet == 0 && !pairs.is_empty();
    let asked = percent(s.precision);
    let rounds = format!("{} round{}", s.rounds, if s.rounds == 1 { "" } else { "s" });
    let level = format!(
        "intervals at {:.2}% per look, {} over {} planned looks, so 95% over the whole run",
        s.look_confidence * 100.0,
        s.method,
        s.planned_looks
    );
    let summary = if met {
        format!("met {asked} after {rounds} ({level})")
    } else if pairs.is_empty() {
        format!("{asked} asked; nothing to compare after {rounds}")
    } else {
        let why = match s.reason.as_str() {
            "max_repetitions" => format!("the budget of {} rounds is spent", s.max_repetitions),
            "max_time" => format!(
                "the time budget{} is spent",
                s.max_time_s.map(|t| format!(" of {t:.0} s")).unwrap_or_default()
            ),
            "interrupted" => "the run was interrupted".to_owned(),
            other => format!("stopped ({other})"),
        };
        // Decided (which is better, or a tie within the precision) is what
        // the rounds printed as they went; wider is what the precision asked.
        let decided = pairs.iter().filter(|p| decided(p, false).is_some()).count();
        format!(
            "{asked} not met after {rounds}: {why}; {decided} of {} pairs decided, {unmet} wider than {asked} ({level})",
            pairs.len()
        )
    };
    StoppingReport {
        precision: s.precision,
        max_repetitions: s.max_repetitions,
        max_time_s: s.max_time_s,
        method: s.method.clone(),
        planned_looks: s.planned_looks,
        look_confidence: s.look_confidence,
        rounds: s.rounds,
        reason: s.reason.clone(),
        met,
        summary,
        undecided: pairs.iter().filter_map(|p| sentence(p, s.precision)).collect(),
        seed: s.seed,
        orders: s.orders.clone(),
    }
}

/// A precision or half-width as a fraction, said `±3%`, `±1.8%` ([`crate::fmt::percent`]).
pub fn percent(f: f64) -> String {
    format!("±{}", crate::fmt::percent(f * 100.0))
}

/// The sentence for a pair the data have decided, as soon as they have:
/// a real difference (the interval excludes 1) or a tie within the precision
/// asked. `None` for a pair still open. `by_cost` words it as CPU per answer
/// (a scenario [`super::RankedBy::CostPerRequest`]). Each look's intervals
/// are at the Bonferroni-spent level, so a pair said decided at one look
/// keeps the 95% promise whatever later looks show.
pub fn decided(p: &Pair, by_cost: bool) -> Option<String> {
    let (b, w) = (&p.better, &p.worse);
    let r = p.ratio.as_ref()?;
    let ci = r.ci?;
    let value = crate::fmt::ratio_interval(r.value, ci.lo, ci.hi);
    match p.verdict {
        PairVerdict::Met | PairVerdict::Faster if !ci.contains(1.0) => Some(if by_cost {
            format!("'{w}' used {value} times the CPU per correct answer of '{b}'")
        } else {
            format!("'{b}' ran {value} times more requests than '{w}'")
        }),
        PairVerdict::Met => {
            let within = (ci.hi - 1.0).max(1.0 - ci.lo);
            Some(format!("'{b}' and '{w}' are tied: within {} of each other", percent(within)))
        }
        _ => None,
    }
}

/// The sentence for a pair that did not meet the precision (`None` for one that did).
pub fn sentence(p: &Pair, precision: f64) -> Option<String> {
    let (b, w) = (&p.better, &p.worse);
    // Worded as the verdicts are ([`decided`]): `1.74 ± 0.03`, or `9.54 (0.07..328.41)`.
    let ratio = |r: &Ratio| {
        r.ci.map_or_else(|| format!("{:.2}", r.value), |c| crate::fmt::ratio_interval(r.value, c.lo, c.hi))
    };
    let asked = percent(precision);
    Some(match (p.verdict, &p.ratio) {
        (PairVerdict::Met, _) => return None,
        (PairVerdict::NoInterval, _) => {
            format!("'{b}' vs '{w}': too few runs for an interval ({MIN_RUNS} needed)")
        }
        (PairVerdict::Tied, Some(r)) => {
            let within = r.ci.map_or(0.0, |c| (c.hi - 1.0).max(1.0 - c.lo));
            format!(
                "'{b}' and '{w}' are within {} of each other: tied at this budget ({asked} not reached)",
                percent(within)
            )
        }
        (PairVerdict::Undecided, Some(r)) => {
            format!("'{b}' vs '{w}' undecided at this budget: ratio {}", ratio(r))
        }
        (PairVerdict::Faster, Some(r)) => format!(
            "'{b}' is better than '{w}': ratio {}, a real difference, but known only to {} ({asked} asked)",
            ratio(r),
            percent(p.half_width.unwrap_or(0.0))
        ),
        (_, None) => format!("'{b}' vs '{w}': no ratio (one answered nothing)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::estimate_with;
    use crate::stats::sequential::{judge, look_confidence};

    #[test]
    fn percentages_and_sentences() {
        assert_eq!(percent(0.03), "±3%");
        assert_eq!(percent(0.018), "±1.8%");
        let est = |v: &[f64], s| estimate_with(v, s, 2000);
        let wide_a = est(&[900.0, 1100.0, 1000.0], 3);
        let wide_b = est(&[1150.0, 950.0, 1050.0], 4);
        let undecided = judge(("a", &wide_a), ("b", &wide_b), 0.03, look_confidence(4), false);
        let s = sentence(&undecided, 0.03).unwrap();
        assert!(s.starts_with("'b' vs 'a' undecided at this budget: ratio 1.05 "), "{s}");
        // Its interval in the verdicts' words, around the ratio or beside it.
        assert!(s.contains(" ± ") || (s.contains(" (") && s.contains("..") && s.ends_with(')')), "{s}");
        let x = est(&[1000.0, 1010.0, 990.0, 1005.0, 995.0], 5);
        let y = est(&[1000.0, 1030.0, 970.0, 1015.0, 985.0], 7);
        let tied = judge(("x", &x), ("y", &y), 0.02, look_confidence(1), false);
        let s = sentence(&tied, 0.02).unwrap();
        assert_eq!(s, "'x' and 'y' are within ±2.88% of each other: tied at this budget (±2% not reached)");
        let met = judge(("x", &x), ("x2", &x), 0.5, look_confidence(1), false);
        assert_eq!(sentence(&met, 0.5), None);
    }

    #[test]
    fn a_pair_is_said_decided_once_its_interval_settles_it() {
        let est = |v: &[f64], s| estimate_with(v, s, 2000);
        let fast = est(&[2000.0, 2010.0, 1990.0, 2005.0, 1995.0], 1);
        let slow = est(&[1000.0, 1010.0, 990.0, 1005.0, 995.0], 2);
        let faster = judge(("slow", &slow), ("fast", &fast), 0.03, look_confidence(4), false);
        let s = decided(&faster, false).unwrap();
        assert!(s.starts_with("'fast' ran 2.00 ± 0.0"), "{s}");
        assert!(s.ends_with(" times more requests than 'slow'"), "{s}");
        let s = decided(&faster, true).unwrap();
        assert!(
            s.starts_with("'slow' used 2.00 ± 0.0") && s.ends_with("CPU per correct answer of 'fast'"),
            "{s}"
        );
        // The same contestant twice: tied within the precision.
        let same = judge(("a", &slow), ("b", &slow), 0.03, look_confidence(4), false);
        let s = decided(&same, false).unwrap();
        assert!(s.starts_with("'a' and 'b' are tied: within ±"), "{s}");
        // Wide and overlapping: not decided yet.
        let wide_a = est(&[900.0, 1100.0, 1000.0], 3);
        let wide_b = est(&[1150.0, 950.0, 1050.0], 4);
        let open = judge(("a", &wide_a), ("b", &wide_b), 0.03, look_confidence(4), false);
        assert_eq!(decided(&open, false), None);
    }
}
