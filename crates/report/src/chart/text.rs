//! How wide a chart's text will be, without a font at hand: advance widths
//! of DejaVu Sans (what `system-ui, sans-serif` resolves to on a bare Linux,
//! and wider than Segoe UI, Roboto or San Francisco), measured in Chromium
//! and rounded up, so an estimate is an upper bound on every common system.
//! Layout uses it to choose ticks whose labels do not overlap, to stagger
//! or drop labels that would, and to shorten names that do not fit.

/// Font size of tick labels, legends and axis titles, px (the SVG default).
pub const FONT: f64 = 13.0;

/// Font size of a chart's title, px (bold).
pub const TITLE_FONT: f64 = 15.0;

/// Width of `c` in DejaVu Sans, em.
fn advance(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '\'' => 0.28,
        'I' | 'J' => 0.30,
        ' ' | ',' | '.' | '·' | ':' | ';' | '|' | '/' | '\\' => 0.34,
        'f' | '-' | 'r' | 't' | '(' | ')' | '[' | ']' | '!' => 0.40,
        '"' | '*' | '_' | '`' => 0.50,
        'c' | 'k' | 's' | 'z' | '?' => 0.58,
        'a' | 'e' | 'o' | 'v' | 'x' | 'y' | 'F' | 'L' => 0.62,
        '0'..='9'
        | 'b'
        | 'd'
        | 'g'
        | 'h'
        | 'n'
        | 'p'
        | 'q'
        | 'u'
        | '$'
        | '{'
        | '}'
        | 'µ'
        | 'E'
        | 'P'
        | 'S'
        | 'T'
        | 'Y' => 0.64,
        'A' | 'B' | 'C' | 'K' | 'R' | 'V' | 'X' | 'Z' => 0.70,
        'D' | 'G' | 'H' | 'N' | 'O' | 'Q' | 'U' | '&' => 0.79,
        'w' | '#' | '+' | '<' | '=' | '>' | '^' | '~' | '±' | '−' | '×' | '≤' | '…' => 0.84,
        // 'M', '%', 'm', 'W', '@', other scripts, symbols: as wide as a square.
        _ => 1.0,
    }
}

/// Estimated width of `s` in pixels at `size` px; bold text (weight 600) 15% wider.
pub fn width_at(s: &str, size: f64, bold: bool) -> f64 {
    let em: f64 = s.chars().map(advance).sum();
    em * size * if bold { 1.15 } else { 1.0 }
}

/// Estimated width of `s` in pixels at the charts' font size.
pub fn text_width(s: &str) -> f64 {
    width_at(s, FONT, false)
}

/// `s`, shortened with an ellipsis until it is at most `max` px wide at `size`.
pub fn fit(s: &str, max: f64, size: f64, bold: bool) -> String {
    if width_at(s, size, bold) <= max {
        return s.to_owned();
    }
    let mut out: String = s.to_owned();
    while !out.is_empty() {
        out.pop();
        let candidate = format!("{}…", out.trim_end());
        if width_at(&candidate, size, bold) <= max {
            return candidate;
        }
    }
    "…".to_owned()
}

/// [`fit`] at the charts' font size, not bold.
pub fn fit_plain(s: &str, max: f64) -> String {
    fit(s, max, FONT, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_an_upper_bound_of_dejavu_sans() {
        // Measured in Chromium with DejaVu Sans at 13 px (bold 600 at 15 px).
        for (s, measured) in [
            ("1,500", 37.2),
            ("99.999%", 57.8),
            ("japronto", 54.1),
            ("correct responses per second (req/s)", 238.4),
        ] {
            let w = text_width(s);
            assert!(w >= measured && w < measured * 1.1, "{s}: {w} for {measured}");
        }
        let title = width_at("dummy: latency by percentile", TITLE_FONT, true);
        assert!((252.3..252.3 * 1.1).contains(&title), "{title}");
    }

    #[test]
    fn long_text_is_shortened_with_an_ellipsis() {
        assert_eq!(fit_plain("plug", 100.0), "plug");
        let short = fit_plain("a-very-long-contestant-name-indeed", 80.0);
        assert!(short.ends_with('…') && text_width(&short) <= 80.0, "{short}");
        assert_eq!(fit_plain("abc", 1.0), "…");
    }
}
