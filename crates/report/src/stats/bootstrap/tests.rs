//! Tests of the bootstrap intervals: fixed cases, and coverage on known
//! distributions (the interval must contain the true value about 95% of the
//! time, not 75% as a plain percentile bootstrap does with 3 runs).

use proptest::prelude::*;

use super::*;
use crate::stats::rng::SplitMix64;

/// Known distributions with their true mean and median.
#[derive(Debug, Clone, Copy)]
enum Dist {
    /// Normal(100, 10): steady throughput.
    Normal,
    /// Normal(100, 30): noisy throughput.
    NoisyNormal,
    /// LogNormal(ln 100, 0.3): skewed.
    LogNormal,
    /// Uniform(50, 150).
    Uniform,
}

impl Dist {
    fn draw(self, rng: &mut SplitMix64) -> f64 {
        match self {
            Dist::Normal => 100.0 + 10.0 * std_normal(rng),
            Dist::NoisyNormal => (100.0 + 30.0 * std_normal(rng)).max(0.0),
            Dist::LogNormal => (100f64.ln() + 0.3 * std_normal(rng)).exp(),
            Dist::Uniform => 50.0 + 100.0 * rng.next_f64(),
        }
    }

    fn mean(self) -> f64 {
        match self {
            Dist::LogNormal => 100.0 * (0.3f64 * 0.3 / 2.0).exp(),
            // The clamp at 0 of NoisyNormal moves the mean by < 1e-4.
            _ => 100.0,
        }
    }
}

/// Box–Muller.
fn std_normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Fraction of `trials` intervals of the mean from `n` draws that contain the true mean.
fn coverage(dist: Dist, n: usize, trials: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let hits = (0..trials)
        .filter(|t| {
            let values: Vec<f64> = (0..n).map(|_| dist.draw(&mut rng)).collect();
            estimate_with(&values, seed ^ *t as u64, 1_000).mean_ci.unwrap().contains(dist.mean())
        })
        .count();
    hits as f64 / trials as f64
}

fn median_coverage(dist: Dist, n: usize, trials: usize, seed: u64) -> f64 {
    let truth = match dist {
        Dist::NoisyNormal | Dist::Normal | Dist::LogNormal | Dist::Uniform => 100.0,
    };
    let mut rng = SplitMix64::new(seed);
    let hits = (0..trials)
        .filter(|t| {
            let values: Vec<f64> = (0..n).map(|_| dist.draw(&mut rng)).collect();
            estimate_with(&values, seed ^ *t as u64, 1_000).median_ci.unwrap().contains(truth)
        })
        .count();
    hits as f64 / trials as f64
}

/// Coverage of the ratio interval of `dist` scaled by 1.5 over `dist`.
fn ratio_coverage(dist: Dist, n: usize, m: usize, trials: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let hits = (0..trials)
        .filter(|t| {
            let a: Vec<f64> = (0..n).map(|_| 1.5 * dist.draw(&mut rng)).collect();
            let b: Vec<f64> = (0..m).map(|_| dist.draw(&mut rng)).collect();
            let (ea, eb) =
                (estimate_with(&a, seed ^ *t as u64, 1_000), estimate_with(&b, !(seed ^ *t as u64), 1_000));
            ratio(&ea, &eb).unwrap().ci.unwrap().contains(1.5)
        })
        .count();
    hits as f64 / trials as f64
}

// Coverage measured with 4,000 trials and 1,000 resamples by `coverage_table`
// below (release build):
//
// | distribution | mean n=3 | n=5 | n=10 | n=20 | median n=3 | n=5 | ratio 3 vs 3 | 3 vs 6 | 5 vs 5 |
// |---|---|---|---|---|---|---|---|---|---|
// | Normal | 0.949 | 0.939 | 0.948 | 0.948 | 0.916 | 0.982 | 0.959 | 0.945 | 0.954 |
// | NoisyNormal | 0.949 | 0.940 | 0.949 | 0.947 | 0.916 | 0.983 | 0.962 | 0.949 | 0.955 |
// | LogNormal | 0.942 | 0.926 | 0.937 | 0.941 | 0.916 | 0.983 | 0.957 | 0.946 | 0.951 |
// | Uniform | 0.928 | 0.940 | 0.951 | 0.954 | 0.905 | 0.974 | 0.954 | 0.929 | 0.954 |
//
// (A plain percentile bootstrap covers about 0.75 at n=3.) The tests below
// use fewer trials and a window wide enough for their sampling error
// (±2 standard errors ≈ ±0.018 at 600 trials) around those rates.

const TRIALS: usize = 600;

#[test]
fn mean_interval_covers_at_about_the_stated_rate() {
    for dist in [Dist::Normal, Dist::NoisyNormal, Dist::LogNormal, Dist::Uniform] {
        for n in [3, 5, 10] {
            let c = coverage(dist, n, TRIALS, 11 + n as u64);
            assert!((0.91..=0.985).contains(&c), "{dist:?} n={n}: coverage {c:.3}");
        }
    }
}

#[test]
fn median_interval_covers_at_about_the_stated_rate() {
    for dist in [Dist::Normal, Dist::Uniform] {
        for n in [3, 5] {
            let c = median_coverage(dist, n, TRIALS, 5 + n as u64);
            assert!((0.87..=0.995).contains(&c), "{dist:?} n={n}: coverage {c:.3}");
        }
    }
}

#[test]
fn ratio_interval_covers_at_about_the_stated_rate() {
    for dist in [Dist::Normal, Dist::LogNormal, Dist::Uniform] {
        for (n, m) in [(3, 3), (3, 6), (5, 5)] {
            let c = ratio_coverage(dist, n, m, TRIALS, 9 + n as u64);
            assert!((0.91..=0.985).contains(&c), "{dist:?} n={n} m={m}: coverage {c:.3}");
        }
    }
}

#[test]
fn no_interval_below_three_runs() {
    let e = estimate(&[100.0, 110.0], 1);
    assert_eq!((e.n, e.mean_ci, e.median_ci), (2, None, None));
    assert!((e.mean - 105.0).abs() < 1e-12);
    let f = estimate(&[90.0, 95.0, 100.0], 2);
    let r = ratio(&e, &f).unwrap();
    assert!(r.ci.is_none() && r.significant().is_none());
    assert!((r.value - 105.0 / 95.0).abs() < 1e-12);
    assert_eq!(estimate(&[], 3).n, 0);
    assert!(ratio(&f, &estimate(&[0.0, 0.0, 0.0], 4)).is_none(), "nothing to divide by");
}

#[test]
fn fixed_case_is_reproducible_and_sensible() {
    let runs = [9_800.0, 10_000.0, 10_300.0];
    let (a, b) = (estimate(&runs, 42), estimate(&runs, 42));
    assert_eq!(a, b, "same seed, same interval");
    let ci = a.mean_ci.unwrap();
    assert!(ci.lo < 9_900.0 && ci.hi > 10_100.0 && ci.contains(a.mean), "{ci:?}");
    // Student's t interval for these runs is 10033 ± 627; the bootstrap's is of that size.
    assert!((ci.hi - ci.lo) > 800.0 && (ci.hi - ci.lo) < 2_000.0, "{ci:?}");
    let same = [10_000.0; 4];
    let e = estimate(&same, 1);
    let ci = e.mean_ci.unwrap();
    assert!(
        (ci.lo - 10_000.0).abs() < 1e-6 && (ci.hi - 10_000.0).abs() < 1e-6,
        "identical runs: no spread, {ci:?}"
    );
}

#[test]
fn clear_difference_is_significant_and_small_one_is_not() {
    let fast = estimate(&[17_400.0, 17_500.0, 17_300.0], 1);
    let slow = estimate(&[10_000.0, 10_100.0, 9_950.0], 2);
    let r = ratio(&fast, &slow).unwrap();
    assert_eq!(r.significant(), Some(true), "{r:?}");
    assert!((r.value - 1.7371).abs() < 1e-3);
    let close = estimate(&[10_050.0, 9_900.0, 10_200.0], 3);
    assert_eq!(ratio(&close, &slow).unwrap().significant(), Some(false));
}

proptest! {
    #[test]
    fn ratios_are_consistent_both_ways(
        a in proptest::collection::vec(1.0f64..1e6, 0..8),
        b in proptest::collection::vec(1.0f64..1e6, 0..8),
        sa in any::<u64>(), sb in any::<u64>(),
    ) {
        let (ea, eb) = (estimate_with(&a, sa, 500), estimate_with(&b, sb, 500));
        match (ratio(&ea, &eb), ratio(&eb, &ea)) {
            (Some(ab), Some(ba)) => {
                let inv = ab.inverse();
                prop_assert!((inv.value - ba.value).abs() <= 1e-12 * ba.value);
                prop_assert_eq!(ab.significant(), ba.significant());
                match (inv.ci, ba.ci) {
                    (Some(x), Some(y)) => {
                        prop_assert!((x.lo - y.lo).abs() <= 1e-9 * y.lo, "{:?} vs {:?}", x, y);
                        prop_assert!((x.hi - y.hi).abs() <= 1e-9 * y.hi, "{:?} vs {:?}", x, y);
                    }
                    (None, None) => {}
                    other => prop_assert!(false, "one way has an interval, the other not: {:?}", other),
                }
            }
            (None, None) => prop_assert!(a.is_empty() || b.is_empty()),
            other => prop_assert!(false, "one way exists, the other not: {:?}", other),
        }
    }

    #[test]
    fn intervals_scale_with_the_data(
        v in proptest::collection::vec(1.0f64..1e6, 3..8),
        c in 0.001f64..1000.0, seed in any::<u64>(),
    ) {
        let (e, s) = (estimate_with(&v, seed, 300), estimate_with(&v.iter().map(|x| x * c).collect::<Vec<_>>(), seed, 300));
        let (ci, sci) = (e.mean_ci.unwrap(), s.mean_ci.unwrap());
        prop_assert!((sci.lo - ci.lo * c).abs() <= 1e-9 * sci.lo.max(1e-300));
        prop_assert!((sci.hi - ci.hi * c).abs() <= 1e-9 * sci.hi);
        prop_assert!(ci.lo <= ci.hi);
        let r = ratio(&s, &e).unwrap();
        prop_assert!((r.value - c).abs() <= 1e-9 * c);
    }
}

/// Prints the coverage table quoted in the module docs and the README:
/// `cargo test -p stackbench-report --release --lib -- --ignored coverage_table --nocapture`.
#[test]
#[ignore = "prints the coverage table (about a minute in release)"]
fn coverage_table() {
    println!(
        "| distribution | mean n=3 | n=5 | n=10 | n=20 | median n=3 | n=5 | ratio 3 vs 3 | 3 vs 6 | 5 vs 5 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for dist in [Dist::Normal, Dist::NoisyNormal, Dist::LogNormal, Dist::Uniform] {
        let mean: Vec<String> =
            [3, 5, 10, 20].iter().map(|&n| format!("{:.3}", coverage(dist, n, 4_000, 11))).collect();
        let med: Vec<String> =
            [3, 5].iter().map(|&n| format!("{:.3}", median_coverage(dist, n, 4_000, 5))).collect();
        let rat: Vec<String> = [(3, 3), (3, 6), (5, 5)]
            .iter()
            .map(|&(n, m)| format!("{:.3}", ratio_coverage(dist, n, m, 4_000, 9)))
            .collect();
        println!("| {dist:?} | {} | {} | {} |", mean.join(" | "), med.join(" | "), rat.join(" | "));
    }
}
