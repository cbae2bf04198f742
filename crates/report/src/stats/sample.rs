//! Descriptive statistics of a handful of repetitions (mean, median, standard
//! deviation) and outlier runs by the median absolute deviation: the modified
//! z-score of Iglewicz and Hoaglin ("How to Detect and Handle Outliers", ASQC
//! 1993), `M = 0.6745 (x − median) / MAD`, an outlier when `|M| > 3.5`. When
//! more than half the runs agree exactly (MAD = 0) the mean absolute deviation
//! stands in (`M = (x − median) / (1.253314 · MeanAD)`), as IBM SPSS does.

pub use stackbench_record::mean;

/// The median: the middle value, or the mean of the two middle values.
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    median_of_sorted(&v)
}

/// The median of an already sorted, non-empty slice.
pub fn median_of_sorted(v: &[f64]) -> f64 {
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { 0.5 * (v[m - 1] + v[m]) }
}

/// Sample standard deviation (n − 1); 0 for fewer than two values.
pub fn stdev(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// Threshold of the modified z-score above which a run is an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// The fewest values the outlier test is applied to. With three, the median
/// absolute deviation is the middle distance, so the score swings with one
/// value: 1,572 against 1,227 and 1,259 scored 6.6 while 256 against 3,847
/// and 2,914 scored 1.9. From five on, one odd run cannot move the MAD much.
pub const MIN_OUTLIER_RUNS: usize = 5;

/// The modified z-score of every value (0 for all when there is no spread or
/// fewer than [`MIN_OUTLIER_RUNS`] values: too few to say which one is odd).
pub fn modified_z_scores(x: &[f64]) -> Vec<f64> {
    if x.len() < MIN_OUTLIER_RUNS {
        return vec![0.0; x.len()];
    }
    let med = median(x);
    let deviations: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&deviations);
    let scale = if mad > 0.0 { mad / 0.6745 } else { 1.253_314 * mean(&deviations) };
    if scale <= 0.0 || !scale.is_finite() {
        return vec![0.0; x.len()];
    }
    x.iter().map(|v| (v - med) / scale).collect()
}

/// Which values are outliers (`|M| > 3.5`).
pub fn outliers(x: &[f64]) -> Vec<bool> {
    modified_z_scores(x).into_iter().map(|z| z.abs() > OUTLIER_Z).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptive() {
        assert!((mean(&[1.0, 2.0, 6.0]) - 3.0).abs() < 1e-12);
        assert!((median(&[5.0, 1.0, 3.0]) - 3.0).abs() < 1e-12);
        assert!((median(&[4.0, 1.0, 3.0, 2.0]) - 2.5).abs() < 1e-12);
        assert!((stdev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) - 2.138_089_935).abs() < 1e-9);
        assert!(median(&[]).is_nan());
        assert!(stdev(&[3.0]).abs() < f64::EPSILON);
    }

    #[test]
    fn flags_the_odd_run_only() {
        let runs = [10_010.0, 9_990.0, 10_005.0, 9_995.0, 6_000.0];
        assert_eq!(outliers(&runs), vec![false, false, false, false, true]);
        // Spread-out but consistent runs: nobody is odd.
        assert!(outliers(&[9_000.0, 10_000.0, 11_000.0, 10_500.0]).iter().all(|o| !o));
        // MAD = 0: most runs agree exactly, one is far off.
        assert_eq!(outliers(&[100.0, 100.0, 100.0, 100.0, 50.0]), vec![false, false, false, false, true]);
        assert_eq!(outliers(&[100.0, 50.0]), vec![false, false]);
        assert_eq!(outliers(&[7.0, 7.0, 7.0]), vec![false, false, false]);
    }
}
