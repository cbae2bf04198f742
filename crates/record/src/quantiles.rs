//! Quantiles of a small sample set (the sampler's 250 ms CPU and RSS readings,
//! cold-start trials): nearest-rank, so every reported value is one that was
//! actually observed. The one routine for this in the workspace; latency
//! percentiles come from HdrHistogram instead ([`crate::Latency`]).

use serde::{Deserialize, Serialize};

/// p50/p95/p99/max of a sample set; all 0 for an empty set (`n == 0`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub n: u64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// Quantiles of `values` (any order; NaNs are ignored).
    pub fn of(values: &[f64]) -> Quantiles {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Quantiles::default();
        }
        v.sort_by(f64::total_cmp);
        Quantiles {
            n: v.len() as u64,
            p50: nearest_rank(&v, 0.50),
            p95: nearest_rank(&v, 0.95),
            p99: nearest_rank(&v, 0.99),
            max: v[v.len() - 1],
        }
    }
}

/// The nearest-rank `q`-quantile of sorted, non-empty `sorted`: the smallest
/// value with at least `q * n` values at or below it.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "nearest_rank of an empty slice");
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let q = Quantiles::of(&v);
        assert_eq!((q.n, q.p50, q.p95, q.p99, q.max), (100, 50.0, 95.0, 99.0, 100.0));
        assert_eq!(Quantiles::of(&[]), Quantiles::default());
        assert!((Quantiles::of(&[f64::NAN, 3.0]).max - 3.0).abs() < f64::EPSILON);
    }

    proptest! {
        #[test]
        fn quantiles_are_observed_and_ordered(v in proptest::collection::vec(-1e9f64..1e9, 1..300)) {
            let q = Quantiles::of(&v);
            for x in [q.p50, q.p95, q.p99, q.max] {
                prop_assert!(v.contains(&x));
            }
            prop_assert!(q.p50 <= q.p95 && q.p95 <= q.p99 && q.p99 <= q.max);
            let below = v.iter().filter(|&&x| x <= q.p50).count();
            prop_assert!(below * 2 >= v.len());
        }
    }
}
