//! How a contestant's figures read in one cell, where a table and a chart's note must
//! say the same thing: a leaf under both `export` and `chart`.

use crate::analysis::ContestantReport;
use crate::fmt;

/// `1,882 ± 45` (or `1,882 (1,801..1,990)` for a lopsided interval,
/// [`fmt::with_interval`]), or `499 (2 runs)` without an interval; `≥ 41,200 ± 300` for
/// a sustained rate that is a lower bound, `≤ 900 ± 40` for one that is an
/// upper bound (a search met nothing), `~` for one that is both in different runs.
pub fn throughput(c: &ContestantReport) -> String {
    let t = &c.throughput;
    let at_least = match t.sustained.as_ref().map(|s| (s.lower_bound, s.upper_bound)) {
        Some((true, false)) => "≥ ",
        Some((false, true)) => "≤ ",
        Some((true, true)) => "~ ",
        _ => "",
    };
    match t.mean_ci {
        Some(ci) => format!("{at_least}{}", fmt::with_interval(t.mean, ci.lo, ci.hi)),
        None => {
            format!("{at_least}{} ({} run{})", fmt::rate(t.mean), c.runs, if c.runs == 1 { "" } else { "s" })
        }
    }
}
