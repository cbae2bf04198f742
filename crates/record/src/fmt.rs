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
/// significant digits, the value to the same decimal place. For an interval
/// that may be lopsided, [`with_interval`].
fn with_error(value: f64, error: f64) -> String {
    if !value.is_finite() || !error.is_finite() {
        return format!("{} ± {}", rate(value), rate(error));
    }
    // An error far below the value's own precision (identical runs) is shown as 0.
    let negligible = error <= value.abs() * 1e-9;
    let error = if negligible { 0.0 } else { error };
    let decimals = error_decimals(value, error);
    let error = fixed(error, decimals);
    // An error that rounds to nothing at these decimals is 0, not 0.000000.
    let error = if error.chars().any(|c| c.is_ascii_digit() && c != '0') { error } else { "0".to_owned() };
    format!("{} ± {error}", fixed(value, decimals))
}

/// A value and its interval `[lo, hi]`: `1,882 ± 63` when both ends lie the
/// same distance from it to the two significant digits the error is given
/// with (what [`with_error`] prints, the larger distance), otherwise the
/// ends, `73,459 (12,020..188,491)`, to the decimals of the nearer end's two
/// significant digits: `± 115,032` would claim a rate below 0 and overstate
/// the near end by nine times.
pub fn with_interval(value: f64, lo: f64, hi: f64) -> String {
    if ![value, lo, hi].iter().all(|x| x.is_finite()) {
        return format!("{} ({}..{})", rate(value), rate(lo), rate(hi));
    }
    let (below, above) = (distance(value, lo), distance(hi, value));
    let (near, far) = (below.min(above), below.max(above));
    let negligible = |d: f64| d <= value.abs() * 1e-9;
    if negligible(far) || (sig2(near) - sig2(far)).abs() <= far * 1e-9 {
        return with_error(value, far);
    }
    let decimals = error_decimals(value, if negligible(near) { far } else { near });
    format!("{} ({}..{})", fixed(value, decimals), fixed(lo, decimals), fixed(hi, decimals))
}

/// `a - b`, at least 0 (and never `-0`).
fn distance(a: f64, b: f64) -> f64 {
    (a - b).max(0.0).abs()
}

/// `x` rounded to two significant digits (0 stays 0).
fn sig2(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    let unit = 10f64.powi(x.abs().log10().floor() as i32 - 1);
    (x / unit).round() * unit
}

/// Decimals that give `error` two significant digits; with no error, three of
/// the value (a rate under 1 req/s must not print as 0).
fn error_decimals(value: f64, error: f64) -> usize {
    if error > 0.0 {
        (1 - error.log10().floor() as i32).clamp(0, 6) as usize
    } else if value != 0.0 {
        (2 - value.abs().log10().floor() as i32).clamp(0, 6) as usize
    } else {
        0
    }
}

/// `x` to `decimals` places, with thousands separators: `12,345.6`.
fn fixed(x: f64, decimals: usize) -> String {
    let s = format!("{:.decimals$}", x.abs());
    let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
    let int = thousands(int.parse::<i64>().unwrap_or(0));
    let sign = if x < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
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
fn sig3(x: f64) -> String {
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

/// A ratio and its interval `[lo, hi]`: `1.74 ± 0.03`, as hyperfine says
/// it, only when the interval is symmetric at the printed precision (both ends
/// the same distance from the ratio, to two decimals); otherwise the ends,
/// `12.05 (3.10..54.00)`. A ratio's interval is symmetric on a log scale, not
/// on this one, and `12.05 ± 41.95` (the larger distance) would put its lower
/// end below 0 and misstate both ends.
pub fn ratio_interval(value: f64, lo: f64, hi: f64) -> String {
    let (below, above) = (ratio(distance(value, lo)), ratio(distance(hi, value)));
    if below == above {
        format!("{} ± {below}", ratio(value))
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
    fn ratio_intervals_use_plus_minus_only_when_symmetric_as_printed() {
        assert_eq!(ratio_interval(1.74, 1.71, 1.77), "1.74 ± 0.03");
        assert_eq!(ratio_interval(1.74, 1.709, 1.772), "1.74 ± 0.03", "0.031 and 0.032 both print 0.03");
        assert_eq!(ratio_interval(3.11, 1.87, 4.85), "3.11 (1.87..4.85)", "1.24 below, 1.74 above");
        assert_eq!(ratio_interval(9.54, 0.07, 328.41), "9.54 (0.07..328.41)");
        assert_eq!(ratio_interval(1.2, 0.3, 2.1), "1.20 ± 0.90");
        assert_eq!(ratio_interval(1.08, 0.72, 1.60), "1.08 (0.72..1.60)");
        // Regression (issue 48): the larger distance, `12.05 ± 41.95`, put the lower end below 0.
        assert_eq!(ratio_interval(12.05, 3.10, 54.0), "12.05 (3.10..54.00)");
        assert_eq!(ratio_interval(2.0, 2.0, 2.0), "2.00 ± 0.00");
        assert_eq!(ratio_interval(1.0, 1.0 + 1e-12, 1.5), "1.00 (1.00..1.50)", "never `-0.00`");
        assert_eq!(ratio_interval(2.0, 1.0, f64::INFINITY), "2.00 (1.00..∞)");
    }

    #[test]
    fn mean_intervals_use_plus_minus_only_when_symmetric_to_two_digits() {
        assert_eq!(with_interval(1_881.67, 1_818.3, 1_945.0), "1,882 ± 63");
        assert_eq!(with_interval(46_231.0, 42_887.0, 49_575.0), "46,231 ± 3,344");
        assert_eq!(
            with_interval(46_231.0, 42_950.0, 49_575.0),
            "46,231 ± 3,344",
            "3,281 and 3,344: 3,300 both"
        );
        assert_eq!(with_interval(73_459.0, 12_020.0, 188_491.0), "73,459 (12,020..188,491)");
        assert_eq!(with_interval(0.4217, 0.40, 0.50), "0.422 (0.400..0.500)");
        assert_eq!(with_interval(166.83, 164.8, 168.8), "166.8 ± 2.0", "2.03 and 1.97: 2.0 both");
        assert_eq!(with_interval(166.83, 164.9, 168.8), "166.8 (164.9..168.8)", "1.9 below, 2.0 above");
        assert_eq!(with_interval(490.0, 490.0, 490.0), "490 ± 0");
        assert_eq!(with_interval(490.0, 490.0, 500.0), "490 (490..500)");
        assert_eq!(with_interval(490.0, 490.0 - 1e-10, 490.0 + 1e-10), "490 ± 0", "identical runs");
    }

    /// The numbers a printed interval states: `(value, lo, hi)`.
    fn stated(s: &str) -> (f64, f64, f64) {
        let num = |t: &str| t.replace(',', "").parse::<f64>().unwrap_or(f64::INFINITY);
        if let Some((v, e)) = s.split_once(" ± ") {
            let (v, e) = (num(v), num(e));
            (v, v - e, v + e)
        } else {
            let (v, rest) = s.split_once(" (").unwrap();
            let (lo, hi) = rest.trim_end_matches(')').split_once("..").unwrap();
            (num(v), num(lo), num(hi.trim_end_matches(')')))
        }
    }

    proptest::proptest! {
        /// Whatever the interval, the printed form states both its ends to the
        /// printed precision: `±` only when the two distances print alike
        /// (then each implied end is off by at most the rounding of the value
        /// and of the error, 0.01), and otherwise the ends themselves.
        #[test]
        fn a_printed_ratio_interval_states_both_ends(
            value in 0.01f64..100.0,
            below in 0.0f64..1.0,
            above in 0.0f64..30.0,
        ) {
            let (lo, hi) = (value * (1.0 - below), value + above);
            let s = ratio_interval(value, lo, hi);
            let (v, l, h) = stated(&s);
            proptest::prop_assert!((v - value).abs() <= 0.005 + 1e-9, "{s}");
            let symmetric = ratio(value - lo) == ratio(hi - value);
            proptest::prop_assert_eq!(s.contains(" ± "), symmetric, "{}", s);
            proptest::prop_assert!((l - lo).abs() <= 0.01 + 1e-9 && (h - hi).abs() <= 0.01 + 1e-9, "{s}");
            proptest::prop_assert!(l >= 0.0, "a ratio's interval never reaches below 0: {s}");
        }

        /// A mean's interval: with `±`, both distances round alike to two
        /// significant digits, so each implied end is off by less than one unit
        /// of the error's second significant digit (12.5 and 13.4 both read 13)
        /// plus the rounding of the value and of the error (one unit of the last
        /// digit); otherwise the ends are printed, each to its rounding.
        #[test]
        fn a_printed_mean_interval_states_both_ends(
            value in 0.1f64..1e6,
            below in 0.0f64..1.0,
            above in 0.0f64..2.0,
        ) {
            let (lo, hi) = (value * (1.0 - below), value * (1.0 + above));
            let s = with_interval(value, lo, hi);
            let (v, l, h) = stated(&s);
            let far = (value - lo).max(hi - value);
            let unit = |t: &str| t.split_once('.').map_or(1.0, |(_, f)| 10f64.powi(-(f.len() as i32)));
            let value_text = s.split(' ').next().unwrap();
            let u = unit(value_text);
            proptest::prop_assert!((v - value).abs() <= u / 2.0 + 1e-9, "{s}");
            let second_digit = 10f64.powi(far.log10().floor() as i32 - 1);
            let slack = if s.contains(" ± ") { second_digit + u } else { u / 2.0 };
            proptest::prop_assert!((l - lo).abs() <= slack + 1e-6 && (h - hi).abs() <= slack + 1e-6, "{s}: {lo}..{hi}");
        }
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
