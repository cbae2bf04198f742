//! The two reference distributions the intervals need: the standard normal
//! and Student's t, their CDFs and quantiles. The t CDF is the regularized
//! incomplete beta function, evaluated with the continued fraction of
//! Numerical Recipes (Press et al., 3rd ed., §6.4) and the Lanczos log-gamma;
//! quantiles invert the CDFs by bisection (they are needed a few times per
//! report, so exactness beats speed).

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error below 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1-x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
#[allow(clippy::many_single_char_names)] // the textbook's notation
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T <= t) for Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p`-quantile of Student's t with `df` degrees of freedom.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    bisect(|t| student_t_cdf(t, df), p)
}

/// P(Z <= z) for the standard normal: Φ(z) = ½ erfc(−z/√2), with erfc from
/// W. J. Cody's rational approximations via the series/continued fraction of
/// the incomplete gamma function (Numerical Recipes `erffc`), exact to ~1e-15.
pub fn normal_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    // erfc(x) = Q(1/2, x²) for x >= 0 (regularized upper incomplete gamma).
    let q = upper_gamma_half(x * x);
    let erfc = if x >= 0.0 { q } else { 2.0 - q };
    0.5 * erfc
}

/// Q(1/2, x) = Γ(1/2, x)/Γ(1/2), by series for small x and continued fraction otherwise.
#[allow(clippy::many_single_char_names)] // the textbook's notation
fn upper_gamma_half(x: f64) -> f64 {
    let a = 0.5;
    if x <= 0.0 {
        return 1.0;
    }
    let gln = ln_gamma(a);
    if x < a + 1.0 {
        let (mut ap, mut sum) = (a, 1.0 / a);
        let mut del = sum;
        for _ in 0..500 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * (-x + a * x.ln() - gln).exp()
    } else {
        const TINY: f64 = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let an = -f64::from(i) * (f64::from(i) - a);
            b += 2.0;
            d = an * d + b;
            d = if d.abs() < TINY { TINY } else { d };
            c = b + an / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (-x + a * x.ln() - gln).exp() * h
    }
}

/// The `p`-quantile of the standard normal.
pub fn normal_quantile(p: f64) -> f64 {
    bisect(normal_cdf, p)
}

/// Inverts an increasing CDF on (-1e6, 1e6) by bisection.
fn bisect(cdf: impl Fn(f64) -> f64, p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "quantile of p = {p}");
    let (mut lo, mut hi) = (-1e6, 1e6);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * (1.0 + mid.abs()) {
            break;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn normal_matches_tables() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-15));
        assert!(close(normal_cdf(1.0), 0.841_344_746_068_543, 1e-12));
        assert!(close(normal_cdf(-2.0), 0.022_750_131_948_179_2, 1e-13));
        assert!(close(normal_quantile(0.975), 1.959_963_984_540_054, 1e-9));
        assert!(close(normal_quantile(0.05), -1.644_853_626_951_472, 1e-9));
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
        assert!(close(student_t_cdf(0.0, 3.0), 0.5, 1e-15));
        assert!(close(student_t_cdf(-1.0, 1.0), 0.25, 1e-12)); // Cauchy
        assert!(close(student_t_quantile(0.975, 1e6), 1.959_963_984_540_054, 1e-5));
    }
}
