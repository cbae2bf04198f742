//! Confidence intervals for a handful of repetitions, by the bootstrap
//! (Efron and Tibshirani, "An Introduction to the Bootstrap", 1993).
//!
//! Each contestant's runs are resampled with replacement [`RESAMPLES`] times
//! (a seeded [`SplitMix64`], so reports are reproducible); each resample's mean and
//! median are taken on the log scale (throughput is a positive, multiplicative
//! quantity: intervals stay positive and ratios become differences).
//!
//! The plain percentile interval is too narrow for few runs: with 3 runs it
//! can never leave the range of the data, and covers the true mean about 75%
//! of the time instead of 95%. So every replicate is moved away from the
//! estimate by the factor `√(n/(n−1)) · t(df) / z`, which turns the
//! bootstrap's spread (a standard error computed with n, not n−1) into the
//! width of Student's t interval while keeping the bootstrap's shape
//! (asymmetry) — the idea of Hesterberg's "expanded percentile interval"
//! ("What Teachers Should Know About the Bootstrap", The American
//! Statistician 69(4), 2015), applied as a rescaling. For one contestant
//! `df = n − 1`.
//!
//! A ratio between two contestants is the difference of their log replicates,
//! pair by pair (independent streams), rescaled with the Welch–Satterthwaite
//! degrees of freedom of the two bootstrap variances (Welch, Biometrika 34,
//! 1947), so `A/B` and `B/A` have exactly reciprocal intervals. The property
//! tests check the coverage of both on known distributions. Below
//! [`MIN_RUNS`] runs no interval is given.

use serde::{Deserialize, Serialize};
use stackbench_record::{normal_quantile, student_t_quantile};

use super::rng::SplitMix64;
use super::sample::{mean, median, median_of_sorted, stdev};

/// Confidence level of every interval in a report.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples per contestant.
pub const RESAMPLES: usize = 10_000;
/// Fewest runs for which an interval is stated.
pub const MIN_RUNS: usize = 3;

/// A confidence interval `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// The larger distance from `point` to either end: the half-width a
    /// precision is judged by, never understating the interval. (Reports
    /// print a lopsided interval by its ends: `fmt::ratio_interval`.)
    pub fn plus_minus(&self, point: f64) -> f64 {
        (point - self.lo).max(self.hi - point).max(0.0)
    }

    /// Do two intervals share a point?
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

/// Throughput (or any positive measure) of one contestant across its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub stdev: f64,
    /// 95% interval of the mean; `None` below [`MIN_RUNS`] runs.
    pub mean_ci: Option<Interval>,
    /// 95% interval of the median; `None` below [`MIN_RUNS`] runs.
    pub median_ci: Option<Interval>,
    /// ln(mean).
    log_mean: f64,
    /// Bootstrap replicates of ln(mean) minus `log_mean`, times `√(n/(n−1))`,
    /// in draw order (empty below [`MIN_RUNS`]).
    log_devs: Vec<f64>,
}

/// `t_{1−α/2}(df) / z_{1−α/2}`: how much wider than a normal interval.
fn t_over_z(df: f64, confidence: f64) -> f64 {
    let p = 1.0 - (1.0 - confidence) / 2.0;
    student_t_quantile(p, df) / normal_quantile(p)
}

/// Fewest replicates beyond each end of a percentile interval for its ends
/// to be read from the replicates; past that (levels above 99% with
/// [`RESAMPLES`]) the interval is `±t·sd` of the replicates instead.
const MIN_TAIL: f64 = 50.0;

/// Estimates mean and median with their intervals, drawing from `seed`.
pub fn estimate(values: &[f64], seed: u64) -> Estimate {
    estimate_with(values, seed, RESAMPLES)
}

/// [`estimate`] with a chosen number of resamples (the property tests use fewer).
pub fn estimate_with(values: &[f64], seed: u64, resamples: usize) -> Estimate {
    let n = values.len();
    let mut e = Estimate {
        n,
        mean: if n == 0 { 0.0 } else { mean(values) },
        median: if n == 0 { 0.0 } else { median(values) },
        stdev: stdev(values),
        mean_ci: None,
        median_ci: None,
        log_mean: 0.0,
        log_devs: Vec::new(),
    };
    if n < MIN_RUNS {
        return e;
    }
    let bias = (n as f64 / (n as f64 - 1.0)).sqrt();
    let mut rng = SplitMix64::new(seed);
    let mut buf = vec![0.0; n];
    let (mut means, mut medians) = (Vec::with_capacity(resamples), Vec::with_capacity(resamples));
    for _ in 0..resamples {
        for slot in &mut buf {
            *slot = values[rng.index(n)];
        }
        buf.sort_unstable_by(f64::total_cmp);
        means.push(mean(&buf));
        medians.push(median_of_sorted(&buf));
    }
    let devs = |point: f64, reps: &[f64]| -> Vec<f64> {
        let lp = ln(point);
        reps.iter().map(|&r| bias * (ln(r) - lp)).collect()
    };
    let k = t_over_z(n as f64 - 1.0, CONFIDENCE);
    e.log_mean = ln(e.mean);
    e.log_devs = devs(e.mean, &means);
    e.mean_ci = Some(rescaled_interval(e.log_mean, &e.log_devs, k, CONFIDENCE));
    e.median_ci = Some(rescaled_interval(ln(e.median), &devs(e.median, &medians), k, CONFIDENCE));
    e
}

/// `a.mean / b.mean` and its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub value: f64,
    /// `None` when either side has fewer than [`MIN_RUNS`] runs.
    pub ci: Option<Interval>,
}

impl Ratio {
    /// The same comparison the other way round (`b / a`).
    #[must_use]
    pub fn inverse(&self) -> Ratio {
        Ratio { value: 1.0 / self.value, ci: self.ci.map(|c| Interval { lo: 1.0 / c.hi, hi: 1.0 / c.lo }) }
    }

    /// Is the difference real: does the interval exclude 1? `None` without an interval.
    pub fn significant(&self) -> Option<bool> {
        self.ci.map(|c| !c.contains(1.0))
    }
}

/// The ratio of two contestants' mean throughput, `a / b`, with its 95%
/// interval; `None` when `b` has no positive mean (nothing to divide by).
pub fn ratio(a: &Estimate, b: &Estimate) -> Option<Ratio> {
    ratio_at(a, b, CONFIDENCE)
}

/// [`ratio`] with its interval at another `confidence` (the per-look level
/// of precision-driven rounds, [`super::sequential`]). While each tail holds
/// at least [`MIN_TAIL`] replicates the interval is the rescaled percentile
/// one; beyond, the replicates cannot place its ends, and it is
/// `exp(ln a/b ± t(df)·sd)` with the replicates' standard deviation, the
/// same spread and degrees of freedom on a normal shape.
pub fn ratio_at(a: &Estimate, b: &Estimate, confidence: f64) -> Option<Ratio> {
    if b.mean <= 0.0 || !b.mean.is_finite() || !a.mean.is_finite() || a.n == 0 {
        return None;
    }
    let ci = (a.n >= MIN_RUNS && b.n >= MIN_RUNS && a.log_devs.len() == b.log_devs.len()).then(|| {
        let devs: Vec<f64> = a.log_devs.iter().zip(&b.log_devs).map(|(x, y)| x - y).collect();
        let (va, vb) = (variance(&a.log_devs), variance(&b.log_devs));
        let df = welch_df(va, a.n, vb, b.n);
        let point = a.log_mean - b.log_mean;
        if devs.len() as f64 * (1.0 - confidence) / 2.0 >= MIN_TAIL {
            rescaled_interval(point, &devs, t_over_z(df, confidence), confidence)
        } else {
            let half = student_t_quantile(1.0 - (1.0 - confidence) / 2.0, df) * (va + vb).sqrt();
            Interval { lo: (point - half).exp(), hi: (point + half).exp() }
        }
    });
    Some(Ratio { value: a.mean / b.mean, ci })
}

/// Welch–Satterthwaite degrees of freedom of a sum of two variances.
fn welch_df(va: f64, na: usize, vb: f64, nb: usize) -> f64 {
    let den = va * va / (na as f64 - 1.0) + vb * vb / (nb as f64 - 1.0);
    if den > 0.0 {
        ((va + vb) * (va + vb) / den).max(1.0)
    } else {
        // No spread on either side: any df gives the same zero-width interval.
        (na + nb - 2) as f64
    }
}

fn variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64
}

/// `exp` of the percentile interval of `log_point + k · dev`.
fn rescaled_interval(log_point: f64, devs: &[f64], k: f64, confidence: f64) -> Interval {
    let reps = devs.iter().map(|d| log_point + k * d).collect();
    let i = percentile_interval(reps, confidence);
    Interval { lo: i.lo.exp(), hi: i.hi.exp() }
}

/// ln with a floor, so a resample of all-zero runs is a very small number, not −∞.
fn ln(x: f64) -> f64 {
    x.max(f64::MIN_POSITIVE).ln()
}

/// The central `confidence` range of replicates: the k-th smallest and the
/// k-th largest, `k = ⌊B·α/2⌋`, symmetric by construction (so a negated set
/// of replicates gives the negated interval exactly).
fn percentile_interval(mut reps: Vec<f64>, confidence: f64) -> Interval {
    reps.sort_by(f64::total_cmp);
    let k = (reps.len() as f64 * (1.0 - confidence) / 2.0).floor() as usize;
    Interval { lo: reps[k], hi: reps[reps.len() - 1 - k] }
}

#[cfg(test)]
mod tests;
