//! `stackbench compare BASE NEW`: each contestant's change in throughput
//! between two result stores, with its 95% interval, and whether it is a
//! regression. The rule is criterion's: a change counts only when its whole
//! interval lies beyond the allowed threshold (`--max-regression`), so noise
//! never fails a CI job; a significant drop whose interval straddles the
//! threshold is reported as a possible regression. A contestant measured in
//! BASE that fails (verification, crash) in NEW is a regression too.

use serde::Serialize;
use stackbench_record::ResultSet;

use crate::analysis::{Analysis, AnalysisOptions, ContestantReport, ScenarioReport};
use crate::stats::{Interval, MIN_RUNS, Ratio, estimate, ratio, rng::seed_from};

/// One side of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub dir: String,
    pub created_at_ms: u64,
    pub git_commit: Option<String>,
    pub status: String,
}

/// The changes between two result stores.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: u32,
    pub base: Side,
    pub new: Side,
    /// Allowed drop, as a fraction (0.05 = 5%).
    pub max_regression: f64,
    pub confidence: f64,
    pub changes: Vec<Change>,
    pub notes: Vec<String>,
}

/// What happened to one contestant.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub scenario: String,
    pub contestant: String,
    pub base_ok_rps: Option<f64>,
    pub new_ok_rps: Option<f64>,
    pub base_ci: Option<Interval>,
    pub new_ci: Option<Interval>,
    pub base_runs: usize,
    pub new_runs: usize,
    /// New over base mean throughput.
    pub ratio: Option<Ratio>,
    pub base_p99_us: Option<u64>,
    pub new_p99_us: Option<u64>,
    pub verdict: ChangeVerdict,
    /// One sentence.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    /// The whole interval of the change is below `−max_regression`.
    Regression,
    /// Measured in BASE, not measured in NEW (failed verification, crashed, never ready).
    NowFailing,
    /// Significantly lower, but the interval reaches into the allowed range.
    PossibleRegression,
    /// No significant change, or a significant one within the allowed range.
    Unchanged,
    /// The whole interval of the change is above `+max_regression`.
    Improvement,
    /// Too few runs on one side for an interval.
    NotTestable,
    /// Failed in BASE, measured in NEW.
    Fixed,
    /// Failed in both.
    StillFailing,
    /// Only in NEW.
    Added,
    /// Only in BASE.
    Removed,
}

impl ChangeVerdict {
    /// Does this fail `compare` (exit code 4)?
    pub fn is_regression(self) -> bool {
        matches!(self, ChangeVerdict::Regression | ChangeVerdict::NowFailing)
    }
}

impl Comparison {
    /// Is there a significant regression beyond the threshold (or a contestant that now fails)?
    pub fn has_regression(&self) -> bool {
        self.changes.iter().any(|c| c.verdict.is_regression())
    }

    /// The changes that fail the comparison.
    pub fn regressions(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.verdict.is_regression())
    }
}

fn side(set: &ResultSet, a: &Analysis) -> Side {
    Side {
        dir: set.dir.display().to_string(),
        created_at_ms: set.manifest.created_at_ms,
        git_commit: set.manifest.git_commit.clone(),
        status: a.source.status.clone(),
    }
}

/// Compares two result stores; `max_regression` is a fraction (0.05 for 5%).
pub fn compare(base: &ResultSet, new: &ResultSet, max_regression: f64) -> Comparison {
    let options = AnalysisOptions::default();
    let (a, b) = (Analysis::from_results(base, &options), Analysis::from_results(new, &options));
    let mut changes = Vec::new();
    for sa in &a.scenarios {
        let sb = b.scenarios.iter().find(|s| s.name == sa.name);
        for c in &sa.contestants {
            changes.push(change_of(&sa.name, Some(c), sb, &c.name, max_regression, false));
        }
        for f in &sa.failed {
            changes.push(change_of(&sa.name, None, sb, &f.name, max_regression, true));
        }
    }
    for sb in &b.scenarios {
        let sa = a.scenarios.iter().find(|s| s.name == sb.name);
        let known = |name: &str| {
            sa.is_some_and(|s| {
                s.contestants.iter().any(|c| c.name == name) || s.failed.iter().any(|f| f.name == name)
            })
        };
        for c in sb.contestants.iter().filter(|c| !known(&c.name)) {
            changes.push(simple(
                &sb.name,
                &c.name,
                None,
                Some(c),
                ChangeVerdict::Added,
                "only in NEW".to_owned(),
            ));
        }
        for f in sb.failed.iter().filter(|f| !known(&f.name)) {
            let text = format!("only in NEW, and not measured there: {}", f.reason);
            changes.push(simple(&sb.name, &f.name, None, None, ChangeVerdict::Added, text));
        }
    }
    let mut notes = Vec::new();
    for (label, an) in [("BASE", &a), ("NEW", &b)] {
        if an.source.status != "complete" {
            notes.push(format!(
                "{label} is not complete (status: {}): some contestants may be missing.",
                an.source.status
            ));
        }
    }
    if a.source.environment.cpu_model != b.source.environment.cpu_model
        || a.source.environment.cores != b.source.environment.cores
    {
        notes.push(format!(
            "BASE and NEW were measured on different machines ({}, {} cores vs {}, {} cores): a change may be the machine's.",
            a.source.environment.cpu_model,
            a.source.environment.cores,
            b.source.environment.cpu_model,
            b.source.environment.cores
        ));
    }
    Comparison {
        schema: crate::analysis::REPORT_SCHEMA,
        base: side(base, &a),
        new: side(new, &b),
        max_regression,
        confidence: crate::stats::CONFIDENCE,
        changes,
        notes,
    }
}

fn simple(
    scenario: &str,
    name: &str,
    base: Option<&ContestantReport>,
    new: Option<&ContestantReport>,
    verdict: ChangeVerdict,
    text: String,
) -> Change {
    Change {
        scenario: scenario.to_owned(),
        contestant: name.to_owned(),
        base_ok_rps: base.map(|c| c.throughput.mean),
        new_ok_rps: new.map(|c| c.throughput.mean),
        base_ci: base.and_then(|c| c.throughput.mean_ci),
        new_ci: new.and_then(|c| c.throughput.mean_ci),
        base_runs: base.map_or(0, |c| c.runs),
        new_runs: new.map_or(0, |c| c.runs),
        ratio: None,
        base_p99_us: base.filter(|c| c.latency.merged.count > 0).map(|c| c.latency.merged.p99_us),
        new_p99_us: new.filter(|c| c.latency.merged.count > 0).map(|c| c.latency.merged.p99_us),
        verdict,
        text,
    }
}

/// The change of contestant `name`, measured (`base`) or failed (`base_failed`) in BASE.
fn change_of(
    scenario: &str,
    base: Option<&ContestantReport>,
    new_scenario: Option<&ScenarioReport>,
    name: &str,
    max: f64,
    base_failed: bool,
) -> Change {
    let new = new_scenario.and_then(|s| s.contestants.iter().find(|c| c.name == name));
    let new_failed = new_scenario.and_then(|s| s.failed.iter().find(|f| f.name == name));
    let (verdict, text) = match (base, new, new_failed) {
        (_, None, None) => (ChangeVerdict::Removed, "not in NEW".to_owned()),
        (Some(_), None, Some(f)) => {
            (ChangeVerdict::NowFailing, format!("measured in BASE, not in NEW: {}", f.reason))
        }
        (None, None, Some(f)) => {
            (ChangeVerdict::StillFailing, format!("not measured in either: {}", f.reason))
        }
        (None, Some(_), _) if base_failed => {
            (ChangeVerdict::Fixed, "not measured in BASE, measured in NEW".to_owned())
        }
        (None, Some(_), _) => (ChangeVerdict::Added, "only in NEW".to_owned()),
        (Some(b), Some(n), _) => return measured_change(scenario, b, n, max),
    };
    simple(scenario, name, base, new, verdict, text)
}

fn measured_change(scenario: &str, base: &ContestantReport, new: &ContestantReport, max: f64) -> Change {
    let runs = |c: &ContestantReport| c.throughput.runs.iter().map(|r| r.ok_rps).collect::<Vec<f64>>();
    // Distinct streams for the two sides: the same contestant must not be
    // resampled with the same indices in BASE and NEW.
    let eb = estimate(&runs(base), seed_from(0, &["base", scenario, &base.name]));
    let en = estimate(&runs(new), seed_from(0, &["new", scenario, &new.name]));
    let r = ratio(&en, &eb);
    let pct = |x: f64| crate::fmt::change(x - 1.0);
    let (verdict, text) = match r {
        None if en.mean <= 0.0 && eb.mean > 0.0 => {
            (ChangeVerdict::NowFailing, "answered no request correctly in NEW".to_owned())
        }
        None => (ChangeVerdict::NotTestable, "answered no request correctly in BASE".to_owned()),
        Some(Ratio { value, ci: None }) => (
            ChangeVerdict::NotTestable,
            format!(
                "{} (no interval: {} run(s) in BASE and {} in NEW, {MIN_RUNS} needed on each side)",
                pct(value),
                eb.n,
                en.n
            ),
        ),
        Some(Ratio { value, ci: Some(ci) }) => {
            let range = format!("{} (95% interval {} to {})", pct(value), pct(ci.lo), pct(ci.hi));
            let limit = crate::fmt::percent(max * 100.0);
            if ci.hi < 1.0 - max {
                (ChangeVerdict::Regression, format!("{range}: slower by more than the {limit} allowed"))
            } else if ci.lo > 1.0 + max {
                (ChangeVerdict::Improvement, format!("{range}: faster by more than {limit}"))
            } else if ci.hi < 1.0 && value < 1.0 - max {
                (
                    ChangeVerdict::PossibleRegression,
                    format!(
                        "{range}: significantly slower, possibly by more than {limit}; rerun with more repetitions"
                    ),
                )
            } else if ci.hi < 1.0 || ci.lo > 1.0 {
                (ChangeVerdict::Unchanged, format!("{range}: a significant change within ±{limit}"))
            } else {
                (ChangeVerdict::Unchanged, format!("{range}: no significant change"))
            }
        }
    };
    let mut c = simple(scenario, &base.name, Some(base), Some(new), verdict, text);
    c.ratio = r;
    c
}

#[cfg(test)]
mod tests;
