//! How numbers read in every report: throughput with thousands separators,
//! latencies and sizes with a unit chosen for 3 significant digits (µs, ms,
//! s; B, KiB, MiB, GiB), compact per-minute counts (the original experiments' "~10k RPM").
//! One place, so the load engine's summary and the terminal, Markdown and
//! HTML reports say the same thing; and [`Paint`], the one ANSI painter.

/// ANSI styles when on, plain text when off (a pipe, `NO_COLOR`).
#[derive(Debug, Clone)]
pub struct Paint(pub bool);

impl Paint {
    /// `s` in the SGR style `code` (`"1"` bold, `"31;1"` bold red, …).
    pub fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_owned() }
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
}

/// `12,345` for large values, `45.3` and `3.14` for small ones.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x.abs() >= 100.0 {
        thousands(x.round() as i64)
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `1,234,567`.
pub fn thousands(v: i64) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 { format!("-{out}") } else { out }
}

/// `1,882 ± 63`, `166.8 ± 1.9`, `3.14 ± 0.12`: the error with two
/// significant digits, the value to the same decimal place.
pub fn with_error(value: f64, error: f64) -> String {
    if !value.is_finite() || !error.is_finite() {
        return format!("{} ± {}", rate(value), rate(error));
    }
    // An error far below the value's own precision (identical runs) is shown as 0.
    let negligible = error <= value.abs() * 1e-9;
    let error = if negligible { 0.0 } else { error };
    // Two significant digits of the error; with no error, three of the value
    // (a rate under 1 req/s must not print as 0).
    let decimals = if error > 0.0 {
        (1 - error.log10().floor() as i32).clamp(0, 6) as usize
    } else if value != 0.0 {
        (2 - value.abs().log10().floor() as i32).clamp(0, 6) as usize
    } else {
        0
    };
    let fixed = |x: f64| {
        let s = format!("{:.decimals$}", x.abs());
        let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
        let int = thousands(int.parse::<i64>().unwrap_or(0));
        let sign = if x < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
        if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
    };
    let error = fixed(error);
    // An error that rounds to nothing at these decimals is 0, not 0.000000.
    let error = if error.chars().any(|c| c.is_ascii_digit() && c != '0') { error } else { "0".to_owned() };
    format!("{} ± {error}", fixed(value))
}

/// `950`, `10.2k`, `2.89M`: counts such as requests per minute.
pub fn compact(x: f64) -> String {
    let a = x.abs();
    if a >= 1e9 {
        format!("{}G", sig3(x / 1e9))
    } else if a >= 1e6 {
        format!("{}M", sig3(x / 1e6))
    } else if a >= 1e3 {
        format!("{}k", sig3(x / 1e3))
    } else {
        format!("{}", x.round())
    }
}

/// 3 significant digits, no exponent: `1.23`, `12.3`, `123`, `1230`.
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() { "0".into() } else { "–".into() };
    }
    let mut magnitude = x.abs().log10().floor() as i32;
    let unit = 10f64.powi(magnitude.min(2) - 2);
    let rounded = (x / unit).round() * unit;
    // Rounding may have added a digit (9.996 -> 10.0).
    if rounded.abs() >= 10f64.powi(magnitude + 1) {
        magnitude += 1;
    }
    let decimals = (2 - magnitude).max(0) as usize;
    format!("{rounded:.decimals$}")
}

/// A latency in microseconds: `812 µs`, `1.23 ms`, `123 ms`, `1.23 s`.
pub fn micros(us: f64) -> String {
    if !us.is_finite() {
        return "–".into();
    }
    if us < 999.5 {
        format!("{} µs", sig3(us.round()))
    } else if us < 999_500.0 {
        format!("{} ms", sig3(us / 1e3))
    } else {
        format!("{} s", sig3(us / 1e6))
    }
}

/// A duration in milliseconds, as [`micros`] would say it.
pub fn millis(ms: f64) -> String {
    micros(ms * 1e3)
}

/// A size: `512 B`, `812 KiB`, `12.3 MiB`, `1.50 GiB`.
pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b < K {
        format!("{} B", b.round())
    } else if b < K * K {
        format!("{} KiB", sig3(b / K))
    } else if b < K * K * K {
        format!("{} MiB", sig3(b / (K * K)))
    } else {
        format!("{} GiB", sig3(b / (K * K * K)))
    }
}

/// A percentage: `99%`, `12.5%`, `1.25%`, `5%`, `0.012%`, `0`.
pub fn percent(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p.abs() >= 99.95 {
        format!("{p:.0}%")
    } else {
        format!("{}%", trim_zeros(&sig3(p)))
    }
}

/// `5.00` → `5`, `12.50` → `12.5`.
fn trim_zeros(s: &str) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_owned() } else { s.to_owned() }
}

/// A ratio with two decimals: `1.74`.
pub fn ratio(r: f64) -> String {
    if r.is_finite() { format!("{r:.2}") } else { "∞".into() }
}

/// A ratio and its interval `[lo, hi]`, as hyperfine says it, `1.74 ± 0.03`,
/// when the interval is about symmetric around it (one side at most 1.5
/// times the other) and `±` cannot suggest a ratio below 0; otherwise the
/// ends, `9.54 (0.07..328.41)`: a ratio interval is symmetric on a log scale,
/// and `9.54 ± 318.87` would misstate both ends.
pub fn ratio_interval(value: f64, lo: f64, hi: f64) -> String {
    let (below, above) = ((value - lo).max(0.0), (hi - value).max(0.0));
    let (near, far) = (below.min(above), below.max(above));
    if far <= 1.5 * near && value - far > 0.0 || far == 0.0 {
        format!("{} ± {}", ratio(value), ratio(far))
    } else {
        format!("{} ({}..{})", ratio(value), ratio(lo), ratio(hi))
    }
}

/// A signed change in percent: `+3.8%`, `−12%`.
pub fn change(fraction: f64) -> String {
    let p = fraction * 100.0;
    let body = sig3(p.abs());
    match p {
        p if p >= 0.005 => format!("+{body}%"),
        p if p <= -0.005 => format!("−{body}%"),
        _ => "0%".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_intervals_use_plus_minus_only_when_about_symmetric() {
        assert_eq!(ratio_interval(1.74, 1.71, 1.77), "1.74 ± 0.03");
        assert_eq!(ratio_interval(3.11, 1.87, 4.85), "3.11 ± 1.74");
        assert_eq!(ratio_interval(9.54, 0.07, 328.41), "9.54 (0.07..328.41)");
        assert_eq!(ratio_interval(1.2, 0.3, 2.1), "1.20 ± 0.90");
        assert_eq!(ratio_interval(1.08, 0.72, 1.60), "1.08 ± 0.52", "0.52 is 1.44 times 0.36");
        assert_eq!(ratio_interval(2.72, 0.43, 6.85), "2.72 (0.43..6.85)", "± 4.13 would reach below 0");
        assert_eq!(ratio_interval(2.0, 2.0, 2.0), "2.00 ± 0.00");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(rate(12_345.4), "12,345");
        assert_eq!(rate(1_234_567.0), "1,234,567");
        assert_eq!(rate(45.26), "45.3");
        assert_eq!(rate(3.046), "3.05");
        assert_eq!(thousands(-1000), "-1,000");
        assert_eq!(compact(10_200.0), "10.2k");
        assert_eq!(compact(2_890_000.0), "2.89M");
        assert_eq!(compact(950.0), "950");
        assert_eq!(sig3(9.996), "10.0");
        assert_eq!(sig3(0.012_34), "0.0123");
        assert_eq!(sig3(1234.0), "1234");
        assert_eq!(with_error(1_881.67, 63.4), "1,882 ± 63");
        assert_eq!(with_error(166.83, 1.9), "166.8 ± 1.9");
        assert_eq!(with_error(1.7371, 0.0312), "1.737 ± 0.031");
        assert_eq!(with_error(415.67, 11.8), "416 ± 12");
        assert_eq!(with_error(10_000.0, 0.0), "10,000 ± 0");
        // Identical runs: the interval is 0 up to rounding noise (regression: printed 490.000000 ± 0.000000).
        assert_eq!(with_error(490.0, 490.0 * 1e-13), "490 ± 0");
        // Under 1 req/s (regression: printed 0 ± 0).
        assert_eq!(with_error(0.4217, 0.0), "0.422 ± 0");
        assert_eq!(with_error(0.4217, 0.0213), "0.422 ± 0.021");
        assert_eq!(with_error(0.4217, 1e-8), "0.421700 ± 0");
        assert_eq!(with_error(0.0, 0.0), "0 ± 0");
    }

    #[test]
    fn units_are_chosen_for_three_digits() {
        assert_eq!(micros(812.0), "812 µs");
        assert_eq!(micros(999.7), "1.00 ms");
        assert_eq!(micros(1_234.0), "1.23 ms");
        assert_eq!(micros(559_000.0), "559 ms");
        assert_eq!(micros(1_144_000.0), "1.14 s");
        assert_eq!(millis(166.56), "167 ms");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(2.1 * 1024.0 * 1024.0), "2.10 MiB");
        assert_eq!(bytes(45.5e6), "43.4 MiB");
        assert_eq!(bytes(1023.9 * 1024.0), "1024 KiB");
        assert_eq!(percent(99.96), "100%");
        assert_eq!(percent(12.5), "12.5%");
        assert_eq!(percent(5.0), "5%");
        assert_eq!(percent(0.2875), "0.288%");
        assert_eq!(change(0.0), "0%");
        assert_eq!(percent(0.0), "0");
        assert_eq!(change(0.038), "+3.80%");
        assert_eq!(change(-0.12), "−12.0%");
        assert_eq!(ratio(f64::INFINITY), "∞");
    }
}

/// A Unix time in ms as `2025-11-30 00:00 UTC`.
pub fn utc(ms: u64) -> String {
    let t = crate::time::Utc::from_ms(ms);
    format!("{:04}-{:02}-{:02} {:02}:{:02} UTC", t.year, t.month, t.day, t.hour, t.minute)
}

#[cfg(test)]
mod date_tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc(1_764_460_800_000), "2025-11-30 00:00 UTC");
        assert_eq!(super::utc(951_782_400_000 + 3_660_000), "2000-02-29 01:01 UTC");
    }
}
