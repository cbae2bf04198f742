//! Precision-driven rounds in a plan: `precision`, `max_repetitions` and
//! `max_time` under `[defaults]` (or `stackbench run --precision`). With a
//! precision the orchestrator adds interleaved rounds until every ratio's
//! interval is within it or the budget is spent
//! ([`stackbench_report::stats::sequential`] decides and names the rule);
//! `repetitions` is then the round of the first look (at least 3).

use std::time::Duration;

use stackbench_report::stats::sequential::{self, first_look, parse_precision};
use toml::Spanned;

use super::{Located, Plan, Settings, bounded, bounded_dur, limits};

/// Rounds a plan with `precision` may measure when it sets no `max_repetitions`.
pub const DEFAULT_MAX_REPETITIONS: u32 = 20;

/// The target and the budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// The half-width asked of every ratio's interval, as a fraction (0.03 for ±3%).
    pub target: f64,
    pub max_repetitions: u32,
    /// Counted from the run's start, first-use builds left out: after the
    /// first look no round starts that would pass it.
    pub max_time: Option<Duration>,
    /// `looks`: at most this many looks ([`sequential::looks_after`]); none
    /// given, one after every round from the first.
    pub looks: Option<u32>,
    /// `max_repetitions` was given (plan or command line). When it was not
    /// and `max_time` was, [`Plan::set_precision`] sizes it to the rounds the
    /// plan's estimate fits in `max_time`, so the looks (and each look's
    /// level) are those the time allows, not those of 20 rounds.
    pub max_repetitions_given: bool,
}

impl Precision {
    /// How many looks the budget allows, and each look's confidence.
    pub fn looks(&self, repetitions: u32) -> (u32, u32, f64) {
        let first = first_look(repetitions);
        let every_round = sequential::planned_looks(first, self.max_repetitions);
        let looks = self.looks.map_or(every_round, |n| n.min(every_round));
        (first, looks, sequential::look_confidence(looks))
    }
}

/// `repetitions` and the precision of `[defaults]`.
pub(super) fn rounds(d: &Settings) -> Result<(u32, Option<Precision>), Located> {
    let repetitions = bounded(d.repetitions.as_ref(), "repetitions", 1..=limits::REPETITIONS)?
        .unwrap_or(super::DEFAULT_REPETITIONS);
    Ok((repetitions, resolve(d, repetitions)?))
}

/// The `[defaults]` keys as a [`Precision`], checked against `repetitions`.
fn resolve(d: &Settings, repetitions: u32) -> Result<Option<Precision>, Located> {
    let max_repetitions = bounded(d.max_repetitions.as_ref(), "max_repetitions", 1..=limits::REPETITIONS)?;
    let max_time = bounded_dur(d.max_time.as_ref(), "max_time", Duration::from_secs(1)..=limits::MAX_TIME)?;
    let looks = bounded(d.looks.as_ref(), "looks", 1..=limits::REPETITIONS)?;
    let Some(p) = &d.precision else {
        if let Some(v) = d.looks.as_ref() {
            return Err((
                Some(v.span()),
                "`looks` is how often `precision` looks at the data; set `precision` (such as \"3%\") too"
                    .into(),
            ));
        }
        if let Some(v) = d.max_repetitions.as_ref() {
            return Err((Some(v.span()), "`max_repetitions` is the budget of `precision`; set `precision` (such as \"3%\"), or use `repetitions` for a fixed count".into()));
        }
        if let Some(v) = d.max_time.as_ref() {
            return Err((
                Some(v.span()),
                "`max_time` is the budget of `precision`; set `precision` (such as \"3%\") too".into(),
            ));
        }
        return Ok(None);
    };
    let target = parse_precision(p.get_ref()).map_err(|e| (Some(p.span()), e))?;
    let precision = Precision {
        target,
        max_repetitions: max_repetitions.unwrap_or(DEFAULT_MAX_REPETITIONS.max(first_look(repetitions))),
        max_time,
        looks,
        max_repetitions_given: max_repetitions.is_some(),
    };
    check(&precision, repetitions).map_err(|e| (d.max_repetitions.as_ref().map(Spanned::span), e))?;
    Ok(Some(precision))
}

fn check(p: &Precision, repetitions: u32) -> Result<(), String> {
    let first = first_look(repetitions);
    if p.max_repetitions < first {
        return Err(format!(
            "max_repetitions = {} leaves no look at the data: the first interval needs {first} rounds (`repetitions` or 3); raise it to at least {first}",
            p.max_repetitions
        ));
    }
    Ok(())
}

impl Plan {
    /// How many rounds of the plan's measured runs fit in `t` by
    /// [`super::profile::estimated_runs`] (a capacity search's first
    /// repetition is the longest), with the cool-downs between runs.
    fn rounds_within(&self, t: Duration) -> u32 {
        let cost = |n: u32| {
            self.contestants
                .iter()
                .map(|c| super::profile::estimated_runs(&c.scenario, &c.profile, n))
                .sum::<Duration>()
                + self.cooldown * (self.contestants.len() as u32 * n)
        };
        (1..=limits::REPETITIONS).take_while(|&n| cost(n) <= t).last().unwrap_or(0)
    }

    /// `stackbench run --precision/--max-repetitions/--max-time`: over the plan's own keys.
    pub fn set_precision(
        &mut self,
        target: Option<f64>,
        max_repetitions: Option<u32>,
        max_time: Option<Duration>,
    ) -> Result<(), String> {
        let base = self.precision;
        let Some(target) = target.or(base.map(|p| p.target)) else {
            if max_repetitions.is_some() || max_time.is_some() {
                return Err("--max-repetitions and --max-time are the budget of a precision: add --precision (such as 3%)".into());
            }
            return Ok(());
        };
        let given = max_repetitions.or(base.filter(|p| p.max_repetitions_given).map(|p| p.max_repetitions));
        let max_time = max_time.or(base.and_then(|p| p.max_time));
        let default = DEFAULT_MAX_REPETITIONS.max(first_look(self.repetitions));
        let p = Precision {
            target,
            max_repetitions: given.unwrap_or_else(|| {
                max_time
                    .map_or(default, |t| self.rounds_within(t).clamp(first_look(self.repetitions), default))
            }),
            max_time,
            looks: base.and_then(|p| p.looks),
            max_repetitions_given: given.is_some(),
        };
        check(&p, self.repetitions)?;
        self.precision = Some(p);
        Ok(())
    }
}
