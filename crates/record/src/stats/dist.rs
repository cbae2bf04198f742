//! The two reference distributions the intervals need, the standard normal and Student's t:
//! their quantiles, from `statrs` (a well-kept crate, property-tested against published
//! tables) rather than a hand-written incomplete beta function. They are needed a few times
//! per report; the tests below hold them to the printed tables.

use statrs::distribution::{ContinuousCDF as _, Normal, StudentsT};

/// The `p`-quantile of Student's t with `df` degrees of freedom (`df` > 0; fractional degrees
/// of freedom, as Welch's formula gives, are fine).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile of p = {p}");
    StudentsT::new(0.0, 1.0, df)
        .unwrap_or_else(|e| panic!("Student's t with {df} degrees of freedom: {e}"))
        .inverse_cdf(p)
}

/// The `p`-quantile of the standard normal.
pub fn normal_quantile(p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile of p = {p}");
    Normal::standard().inverse_cdf(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn normal_matches_tables() {
        assert!(close(normal_quantile(0.5), 0.0, 1e-12));
        assert!(close(normal_quantile(0.975), 1.959_963_984_540_054, 1e-9));
        assert!(close(normal_quantile(0.05), -1.644_853_626_951_472, 1e-9));
        assert!(close(normal_quantile(0.999_75), 3.480_756_404_890_06, 1e-8));
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 95% critical values.
        for (df, want) in [
            (1.0, 12.706_204_736),
            (2.0, 4.302_652_730),
            (4.0, 2.776_445_105),
            (10.0, 2.228_138_852),
            (30.0, 2.042_272_456),
        ] {
            let got = student_t_quantile(0.975, df);
            assert!(close(got, want, 1e-6), "df {df}: {got} vs {want}");
        }
        assert!(close(student_t_quantile(0.5, 3.0), 0.0, 1e-9));
        assert!(close(student_t_quantile(0.25, 1.0), -1.0, 1e-9)); // Cauchy
        // Far out, statrs's inverse loses a little (1.2e-4 at a million degrees of freedom, a
        // relative 6e-5 of an interval's width): the intervals here have a few to a few hundred.
        assert!(close(student_t_quantile(0.975, 300.0), 1.967_903_0, 1e-5));
        assert!(close(student_t_quantile(0.975, 1e6), 1.959_963_984_540_054, 2e-4));
        // Two-sided 99.5% at 3 degrees of freedom (a Bonferroni look), and Welch's fractional df.
        assert!(close(student_t_quantile(0.9975, 3.0), 7.453_319_1, 1e-5));
        assert!(close(student_t_quantile(0.975, 2.5), 3.574_654_8, 1e-5));
    }
}
