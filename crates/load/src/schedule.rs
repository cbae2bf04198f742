//! When requests are due: the load profile (a start value moved linearly
//! through stages, then held) and its two readings.
//!
//! - Closed model: the profile is a number of users; user `i` is active while
//!   the profile is above `i` ([`Profile::next_above`] says when an idle user
//!   starts). A ramp-up is the stage `RAMP:N` from 0.
//! - Open model: the profile is a rate; the k-th request is due when the
//!   integral of the rate reaches `k` ([`Profile::time_of_count`], an exact
//!   inversion of the piecewise-quadratic integral, so no drift accumulates
//!   over long runs the way `t += 1/rate` would).
//!
//! Times are seconds (f64) since the load started (warm-up included).

use crate::values::StageSpec;

/// A piecewise-linear load profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    start: f64,
    /// `(t0, t1, v0, v1)` per stage.
    segments: Vec<(f64, f64, f64, f64)>,
}

impl Profile {
    pub fn new(start: f64, stages: &[StageSpec]) -> Profile {
        let (mut t, mut v) = (0.0, start);
        let segments = stages
            .iter()
            .map(|s| {
                let seg = (t, t + s.duration.as_secs_f64(), v, s.target);
                t = seg.1;
                v = s.target;
                seg
            })
            .collect();
        Profile { start, segments }
    }

    /// A constant profile.
    pub fn constant(v: f64) -> Profile {
        Profile::new(v, &[])
    }

    /// The value, when it is the same at every time (no stages).
    pub fn constant_value(&self) -> Option<f64> {
        self.segments.is_empty().then_some(self.start)
    }

    /// The value held after the last stage.
    fn last(&self) -> f64 {
        self.segments.last().map_or(self.start, |s| s.3)
    }

    /// The profile's value at `t`.
    pub fn value(&self, t: f64) -> f64 {
        for &(t0, t1, v0, v1) in &self.segments {
            if t < t1 {
                return v0 + (v1 - v0) * ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
            }
        }
        self.last()
    }

    /// The first time `>= from` at which the value is above `k`, if ever.
    pub fn next_above(&self, k: f64, from: f64) -> Option<f64> {
        if self.value(from) > k {
            return Some(from);
        }
        for &(t0, t1, v0, v1) in &self.segments {
            if t1 <= from || v1 <= k {
                continue;
            }
            // Rising through k inside this segment (v0 <= k < v1): a hair past the crossing.
            let cross = if v0 > k { t0 } else { t0 + (k - v0) / (v1 - v0) * (t1 - t0) };
            let t = (cross.max(from) + 1e-9).min(t1);
            if self.value(t) > k {
                return Some(t);
            }
            return Some(t1);
        }
        (self.last() > k).then_some(from.max(self.segments.last().map_or(0.0, |s| s.1)))
    }

    /// The time at which the integral of the profile from 0 reaches `count`
    /// (the due time of request number `count` in the open model), if ever.
    pub fn time_of_count(&self, count: f64) -> Option<f64> {
        let mut done = 0.0;
        let mut end = 0.0;
        for &(t0, t1, v0, v1) in &self.segments {
            let d = t1 - t0;
            let area = f64::midpoint(v0, v1) * d;
            if done + area >= count && area > 0.0 {
                // Solve v0*x + (v1-v0)/(2d)*x^2 = need for x in [0, d].
                let need = count - done;
                let a = (v1 - v0) / (2.0 * d);
                // Nothing needed yet: the count is reached where the segment starts (and the root
                // below would be 0/0 on a ramp from 0).
                let x = if need <= 0.0 {
                    0.0
                } else if a.abs() < 1e-12 {
                    need / v0
                } else {
                    // Numerically stable root of a x^2 + v0 x - need = 0 (the smaller positive one).
                    let disc = (v0 * v0 + 4.0 * a * need).max(0.0);
                    2.0 * need / (v0 + disc.sqrt())
                };
                return Some(t0 + x.clamp(0.0, d));
            }
            done += area;
            end = t1;
        }
        let rate = self.last();
        (rate > 0.0).then(|| end + (count - done).max(0.0) / rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    fn stage(secs: f64, target: f64) -> StageSpec {
        StageSpec { duration: Duration::from_secs_f64(secs), target }
    }

    #[test]
    fn values_interpolate_and_hold() {
        let p = Profile::new(0.0, &[stage(10.0, 100.0), stage(20.0, 100.0), stage(10.0, 0.0)]);
        assert!((p.value(5.0) - 50.0).abs() < 1e-9);
        assert!((p.value(15.0) - 100.0).abs() < 1e-9);
        assert!((p.value(35.0) - 50.0).abs() < 1e-9);
        assert!(p.value(100.0).abs() < 1e-9);
        assert!((Profile::constant(7.0).value(3.0) - 7.0).abs() < 1e-12);
    }

    #[test]
    fn users_start_linearly_over_the_ramp() {
        let p = Profile::new(0.0, &[stage(1.0, 100.0)]);
        assert!(p.next_above(0.0, 0.0).unwrap() < 1e-6);
        assert!((p.next_above(49.0, 0.0).unwrap() - 0.49).abs() < 1e-6);
        assert!((p.next_above(99.0, 0.0).unwrap() - 0.99).abs() < 1e-6);
        assert_eq!(p.next_above(100.0, 0.0), None);
        // After a ramp down, a user above the level never comes back.
        let down = Profile::new(10.0, &[stage(1.0, 0.0)]);
        assert_eq!(down.next_above(5.0, 2.0), None);
        assert_eq!(Profile::constant(3.0).next_above(2.0, 4.0), Some(4.0));
    }

    #[test]
    fn constant_rate_counts_are_exact() {
        let p = Profile::constant(1000.0);
        assert!((p.time_of_count(1.0).unwrap() - 0.001).abs() < 1e-12);
        assert!((p.time_of_count(3_600_000.0).unwrap() - 3600.0).abs() < 1e-9);
        assert_eq!(Profile::constant(0.0).time_of_count(1.0), None);
    }

    #[test]
    fn a_rate_ramp_integrates_quadratically() {
        // 0 -> 100 req/s over 10 s: N(t) = 5 t^2, so request 125 is due at t = 5.
        let p = Profile::new(0.0, &[stage(10.0, 100.0)]);
        assert!((p.time_of_count(125.0).unwrap() - 5.0).abs() < 1e-9);
        // 500 requests in the ramp, then 100/s: request 600 at t = 11.
        assert!((p.time_of_count(600.0).unwrap() - 11.0).abs() < 1e-9);
    }

    #[test]
    fn count_zero_on_a_ramp_from_zero_is_due_at_its_start() {
        // The quadratic's root is 0/0 here; the answer is the ramp's start, never NaN.
        let p = Profile::new(0.0, &[stage(0.1, 480.0), stage(0.1, 0.15)]);
        assert_eq!(p.time_of_count(0.0), Some(0.0));
        let later = Profile::new(0.0, &[stage(2.0, 0.0), stage(1.0, 10.0)]);
        assert_eq!(later.time_of_count(0.0), Some(2.0));
        assert!((later.time_of_count(5.0).unwrap() - 3.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn due_times_increase_and_invert_the_integral(
            start in 0.0f64..500.0,
            targets in proptest::collection::vec((0.1f64..5.0, 0.0f64..500.0), 0..4),
            counts in proptest::collection::vec(0.0f64..2000.0, 1..40),
        ) {
            let stages: Vec<_> = targets.iter().map(|&(d, t)| stage(d, t)).collect();
            let p = Profile::new(start, &stages);
            let mut counts = counts;
            counts.sort_by(f64::total_cmp);
            let mut prev = 0.0;
            for c in counts {
                if let Some(t) = p.time_of_count(c) {
                    prop_assert!(t + 1e-9 >= prev, "{} < {}", t, prev);
                    prev = t;
                    // Numerically integrate the profile up to t and compare, piece by piece
                    // between the stages' ends (a short spike must not fall between samples of
                    // a long hold).
                    let mut cuts: Vec<f64> = stages
                        .iter()
                        .scan(0.0, |end, s| {
                            *end += s.duration.as_secs_f64();
                            Some(*end)
                        })
                        .filter(|&e| e < t)
                        .collect();
                    cuts.insert(0, 0.0);
                    cuts.push(t);
                    let area: f64 = cuts
                        .windows(2)
                        .map(|w| {
                            let (a, b) = (w[0], w[1]);
                            let steps = 2_000;
                            let h = (b - a) / f64::from(steps);
                            (0..steps).map(|i| p.value(a + (f64::from(i) + 0.5) * h) * h).sum::<f64>()
                        })
                        .sum();
                    prop_assert!((area - c).abs() <= 0.01 * c.max(1.0), "area {} vs {}", area, c);
                }
            }
        }
    }
}
