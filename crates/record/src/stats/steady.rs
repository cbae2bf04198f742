//! Steady state in a run's per-second series (requests completed, median
//! latency): the first second from which the series stops drifting, by a
//! sliding-window least-squares slope test.
//!
//! A window of [`WINDOW`] seconds is *flat* when the straight line fitted to
//! it moves by at most [`TOLERANCE`] of the window's mean across the window,
//! or when its slope is not significantly different from zero (Student's t at
//! 95% with `WINDOW − 2` degrees of freedom: noise, not drift). The series is
//! steady from the first flat window whose mean the rest of the series keeps
//! to within [`TOLERANCE`] (a flat stretch before a later jump is not steady
//! state). JIT warm-up (Barrett et al., "Virtual machine warmup blows hot and
//! cold", OOPSLA 2017) shows as a rate that climbs, then flattens: the second
//! it flattens is the time to steady state; a series with no such window
//! never became steady. Fewer than [`WINDOW`] seconds cannot tell.

use super::dist::student_t_quantile;
use super::mean;

/// Seconds in a window.
pub const WINDOW: usize = 5;
/// Largest drift across a window, and largest gap between a window and the rest, as a fraction of the mean.
pub const TOLERANCE: f64 = 0.05;

/// What a series says about steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steady {
    /// Steady from this second on (0 = from the start).
    From(usize),
    /// Still drifting in its last window.
    Never,
    /// Shorter than a window.
    TooShort,
}

/// Where a timeline becomes steady: the later of its per-second rate's (requests completed)
/// and median latency's steady points ([`both`]).
pub fn timeline_steady(timeline: &[crate::Second]) -> Steady {
    let rate: Vec<f64> = timeline.iter().map(|s| s.completed as f64).collect();
    let p50: Vec<f64> = timeline.iter().map(|s| s.p50_us as f64).collect();
    both(steady_from(&rate), steady_from(&p50))
}

/// Where `series` (one value per second) becomes steady.
pub fn steady_from(series: &[f64]) -> Steady {
    if series.len() < WINDOW {
        return Steady::TooShort;
    }
    for s in 0..=series.len() - WINDOW {
        let window = &series[s..s + WINDOW];
        let level = mean(window);
        let rest = &series[s + WINDOW..];
        let keeps = rest.is_empty() || (mean(rest) - level).abs() <= TOLERANCE * level.abs();
        if flat(window) && keeps {
            return Steady::From(s);
        }
    }
    Steady::Never
}

/// The later of two series' steady points (`Never` if either never settles).
pub fn both(a: Steady, b: Steady) -> Steady {
    match (a, b) {
        (Steady::Never, _) | (_, Steady::Never) => Steady::Never,
        (Steady::From(x), Steady::From(y)) => Steady::From(x.max(y)),
        (Steady::From(x), Steady::TooShort) | (Steady::TooShort, Steady::From(x)) => Steady::From(x),
        (Steady::TooShort, Steady::TooShort) => Steady::TooShort,
    }
}

/// Is the window's fitted line flat: a small drift, or a slope within its noise?
fn flat(window: &[f64]) -> bool {
    let n = window.len() as f64;
    let t_mean = (n - 1.0) / 2.0;
    let y_mean = mean(window);
    let sxx: f64 = (0..window.len()).map(|t| (t as f64 - t_mean).powi(2)).sum();
    let sxy: f64 = window.iter().enumerate().map(|(t, y)| (t as f64 - t_mean) * (y - y_mean)).sum();
    let slope = sxy / sxx;
    if y_mean.abs() > 0.0 && (slope * (n - 1.0)).abs() <= TOLERANCE * y_mean.abs() {
        return true;
    }
    let residual: f64 =
        window.iter().enumerate().map(|(t, y)| (y - y_mean - slope * (t as f64 - t_mean)).powi(2)).sum();
    let se = (residual / (n - 2.0) / sxx).sqrt();
    if se <= 0.0 {
        return slope == 0.0;
    }
    (slope / se).abs() < student_t_quantile(0.975, n - 2.0)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_climb_then_a_plateau_is_steady_where_it_flattens() {
        // A JIT: 2,000 req/s climbing 1,000 a second to 8,000, then flat with small noise.
        let mut s: Vec<f64> = (0..7).map(|t| 2_000.0 + 1_000.0 * f64::from(t)).collect();
        s.extend([8_010.0, 7_990.0, 8_005.0, 7_995.0, 8_000.0, 8_012.0, 7_988.0, 8_001.0]);
        assert_eq!(steady_from(&s), Steady::From(5));
    }

    #[test]
    fn a_steady_climb_never_settles_and_short_series_cannot_tell() {
        let climb: Vec<f64> = (0..20).map(|t| 1_000.0 + 100.0 * f64::from(t)).collect();
        assert_eq!(steady_from(&climb), Steady::Never);
        assert_eq!(steady_from(&[1.0, 2.0, 3.0]), Steady::TooShort);
        // A flat stretch followed by a jump is not steady state until after the jump.
        let mut jump = vec![1_000.0; 6];
        jump.extend(vec![2_000.0; 6]);
        assert_eq!(steady_from(&jump), Steady::From(6));
        assert_eq!(both(Steady::From(2), Steady::From(4)), Steady::From(4));
        assert_eq!(both(Steady::From(2), Steady::Never), Steady::Never);
        assert_eq!(both(Steady::TooShort, Steady::From(1)), Steady::From(1));
    }

    proptest! {
        /// A constant rate with noise well inside the tolerance is steady from the start,
        /// whatever the scale.
        #[test]
        fn noise_alone_is_steady(scale in 1.0f64..1e6, noise in proptest::collection::vec(-0.01f64..0.01, 5..40)) {
            let s: Vec<f64> = noise.iter().map(|e| scale * (1.0 + e)).collect();
            prop_assert_eq!(steady_from(&s), Steady::From(0));
        }

        /// Scaling a series (by a power of two, exactly) does not move its steady point.
        #[test]
        fn scale_free(series in proptest::collection::vec(1.0f64..1e4, 0..30), k in -8i32..8) {
            let scaled: Vec<f64> = series.iter().map(|x| x * 2f64.powi(k)).collect();
            prop_assert_eq!(steady_from(&series), steady_from(&scaled));
        }
    }
}
