//! Precision-driven rounds: when to stop measuring, and what to say when the
//! budget ran out first.
//!
//! A plan with `precision = "3%"` adds interleaved rounds until the interval
//! of every ratio the report prints lies within ±3% of the ratio, or its
//! budget (`max_repetitions`, `max_time`) is spent. Looking at the data after
//! every round and stopping when it looks good inflates false differences: at
//! 95% per look, ten looks at two copies of one server call them different
//! far more often than 5%. So the 5% error is *spent* over the looks the
//! budget allows (an alpha-spending rule): with `L` planned looks each look's
//! interval is at level `1 − 0.05/L` (Bonferroni). By the union bound the
//! chance that *any* look's interval misses the true ratio is at most 5%,
//! whatever rule decides when to stop, so the interval printed at the end
//! keeps the 95% promise. The budget is known before the first round
//! (`max_repetitions` is always set), which is why a uniform split over the
//! planned looks is used rather than an open-ended sequence such as
//! `α·6/(π²k²)`: for a budget of a few looks it gives every look, and the
//! last one above all, a narrower interval.
//!
//! Each pair is then judged ([`judge`]): `Met` (the interval's larger
//! half-width is within the precision), or, with the budget spent, `Faster`
//! (the interval excludes 1 but is wider than asked), `Tied` (it includes 1
//! and lies within twice the precision of 1, as a met interval that includes
//! 1 does: the two are within that much of each other) or `Undecided` (it
//! includes 1 and reaches farther: a difference that matters may or may not
//! be there). What is said about each verdict is the report's
//! (`analysis::stopping`); this module only computes.

use super::bootstrap::{CONFIDENCE, Estimate, MIN_RUNS, Ratio, ratio_at};

/// The name of the rule, as records and reports give it.
pub const METHOD: &str = "bonferroni";

/// Largest precision a plan may ask for.
pub const MAX_PRECISION: f64 = 0.5;

/// Reads a precision: a percentage such as `"3%"` or `"0.5 %"`, as a fraction.
pub fn parse_precision(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let Some(number) = t.strip_suffix('%') else {
        return Err(format!("precision {s:?}: give a percentage, such as \"3%\""));
    };
    let v: f64 = number.trim().parse().map_err(|_| {
        format!("precision {s:?}: {:?} is not a number; give a percentage, such as \"3%\"", number.trim())
    })?;
    let f = v / 100.0;
    if !(f > 0.0 && f <= MAX_PRECISION) {
        return Err(format!(
            "precision {s:?}: give a percentage above 0% and at most {}%",
            MAX_PRECISION * 100.0
        ));
    }
    Ok(f)
}

/// The first round after which the data are looked at: the first with an interval.
pub fn first_look(repetitions: u32) -> u32 {
    repetitions.max(MIN_RUNS as u32)
}

/// How many looks a budget of `max_repetitions` rounds allows, the first after round `first`.
pub fn planned_looks(first: u32, max_repetitions: u32) -> u32 {
    max_repetitions.saturating_sub(first) + 1
}

/// Whether the data are looked at after `round`, with at most `looks` looks of
/// which the first is after round `first`: after each round from the first
/// while fewer than `looks − 1` have been taken, and after the budget's `last`
/// round (the one no further round follows: `max_repetitions`, or no open
/// pair's round fits in the time left). So `looks = 2` looks once after the
/// plan's `repetitions`, to pick the pairs still open, and once at the end,
/// however many rounds of those pairs run between; never more than `looks`.
pub fn looks_after(round: u32, first: u32, looks: u32, last: bool) -> bool {
    round >= first && (last || round - first + 1 < looks)
}

/// The confidence of each look's intervals: `1 − 0.05/looks`.
pub fn look_confidence(looks: u32) -> f64 {
    1.0 - (1.0 - CONFIDENCE) / f64::from(looks.max(1))
}

/// What the data say about one pair at the precision asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairVerdict {
    /// The interval is within the precision.
    Met,
    /// Wider than asked, but the interval excludes 1.
    Faster,
    /// Wider than asked, includes 1, and lies within twice the precision of 1.
    Tied,
    /// Wider than asked, includes 1, and reaches farther than twice the precision from 1.
    Undecided,
    /// Too few runs for an interval.
    NoInterval,
}

/// One pair, the better first (`ratio` = better / worse, at least 1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pair {
    pub better: String,
    pub worse: String,
    pub ratio: Option<Ratio>,
    /// The interval's larger distance from the ratio, as a fraction of it.
    pub half_width: Option<f64>,
    pub verdict: PairVerdict,
}

/// Judges `a` against `b` (either order) at `precision`, with intervals at
/// `confidence`. `lower_is_better` for costs.
pub fn judge(
    (a_name, a): (&str, &Estimate),
    (b_name, b): (&str, &Estimate),
    precision: f64,
    confidence: f64,
    lower_is_better: bool,
) -> Pair {
    let a_first = if lower_is_better { a.mean <= b.mean } else { a.mean >= b.mean };
    let ((better, be), (worse, we)) =
        if a_first { ((a_name, a), (b_name, b)) } else { ((b_name, b), (a_name, a)) };
    // The ratio is always "how many times better": throughput better/worse, cost worse/better.
    let r = if lower_is_better { ratio_at(we, be, confidence) } else { ratio_at(be, we, confidence) };
    let ci = r.and_then(|r| r.ci.map(|c| (r.value, c)));
    let (half_width, verdict) = match ci {
        None => (None, PairVerdict::NoInterval),
        Some((value, ci)) => {
            let half = ci.plus_minus(value) / value;
            let verdict = if half <= precision {
                PairVerdict::Met
            } else if !ci.contains(1.0) {
                PairVerdict::Faster
            } else if (ci.hi - 1.0).max(1.0 - ci.lo) <= 2.0 * precision {
                PairVerdict::Tied
            } else {
                PairVerdict::Undecided
            };
            (Some(half), verdict)
        }
    };
    Pair { better: better.to_owned(), worse: worse.to_owned(), ratio: r, half_width, verdict }
}

/// Every pair of `contestants` judged ([`judge`]), in order.
pub fn judge_all(
    contestants: &[(&str, &Estimate)],
    precision: f64,
    confidence: f64,
    lower_is_better: bool,
) -> Vec<Pair> {
    let mut out = Vec::new();
    for (i, a) in contestants.iter().enumerate() {
        for b in &contestants[i + 1..] {
            out.push(judge(*a, *b, precision, confidence, lower_is_better));
        }
    }
    out
}

#[cfg(test)]
mod tests;
