//! Rates measured beside a companion (a plan's `companion`, docs/design.md "Measured beside a
//! companion"): each run's record holds the reference's correct answers per second over the
//! same seconds, and a run's rate is read relative to it, at the scenario's median reference
//! rate, so the unit stays answers per second while a slow minute of the shared machine,
//! which slows the reference as much, cancels out.

use stackbench_record::RunRecord;

use crate::stats::sample::median;

/// The scenarios whose rates were read relative to a companion, and its name.
#[derive(Default)]
pub(super) struct Beside {
    name: Option<String>,
    scenarios: Vec<String>,
}

impl Beside {
    /// The median companion rate of `scenario`'s runs to read its rates at ([`scale`]),
    /// noting the scenario when there is one.
    pub(super) fn scale<'a>(
        &mut self,
        scenario: &str,
        runs: impl Iterator<Item = &'a RunRecord>,
    ) -> Option<f64> {
        let runs: Vec<&RunRecord> = runs.collect();
        let (name, at) = scale(&runs)?;
        self.name.get_or_insert(name);
        self.scenarios.push(scenario.to_owned());
        Some(at)
    }

    /// The report's note on how the rates were measured, if any was read relative to a companion.
    pub(super) fn note(&self) -> Option<String> {
        self.name.as_deref().map(|name| note(name, &self.scenarios))
    }
}

/// The scenario's median reference rate, when every valid run of it was measured beside the
/// same companion; `None` otherwise (then no rate is scaled: a mix would compare a scaled
/// rate with a raw one).
pub(super) fn scale(runs: &[&RunRecord]) -> Option<(String, f64)> {
    let valid: Vec<&RunRecord> = runs.iter().copied().filter(|r| r.invalid.is_none()).collect();
    let name = valid.first()?.companion.as_ref()?.name.clone();
    let mut rates = Vec::with_capacity(valid.len());
    for r in &valid {
        let c = r.companion.as_ref().filter(|c| c.name == name && c.ok_rps > 0.0)?;
        rates.push(c.ok_rps);
    }
    Some((name, median(&rates)))
}

/// How many of `runs` had a generator that was not saturated alone but was with the
/// companion's beside it, on the same cores ([`stackbench_record::Companion::generators_saturated`]).
pub(super) fn generators_saturated(runs: &[&RunRecord]) -> usize {
    let together = |r: &RunRecord| r.companion.as_ref().is_some_and(|c| c.generators_saturated(&r.generator));
    runs.iter().filter(|r| !r.generator.saturated && together(r)).count()
}

/// `rate` of run `r`, at the scenario's median reference rate `at` (unchanged without one).
pub(super) fn scaled(rate: f64, r: &RunRecord, at: Option<f64>) -> f64 {
    match (at, r.companion.as_ref().filter(|c| c.ok_rps > 0.0)) {
        (Some(at), Some(c)) => rate * at / c.ok_rps,
        _ => rate,
    }
}

fn note(name: &str, scenarios: &[String]) -> String {
    format!(
        "Measured beside a companion: every run of {} had a fresh start of '{name}' beside it, on the \
         same cores under the same budget with a load of its own; each run's rate is read relative to \
         the companion's over the same seconds (at the median of the companion's rates), so the shared \
         machine's speed at the time cancels out.",
        scenarios.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{RunSpec, run_record};
    use stackbench_record::{Companion, Invalid};

    fn run(rate: f64, beside: Option<f64>) -> RunRecord {
        let mut r = run_record(&RunSpec::new("a", "dummy", 1, rate));
        r.companion =
            beside.map(|ok_rps| Companion { name: "ref".into(), ok_rps, generator_utilization: None });
        r
    }

    #[test]
    fn rates_are_read_at_the_median_reference_rate() {
        let runs = [run(100.0, Some(1000.0)), run(90.0, Some(900.0)), run(120.0, Some(1100.0))];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let (name, at) = scale(&refs).unwrap();
        assert_eq!((name.as_str(), at), ("ref", 1000.0));
        // A run that met a slower machine is read as it would have run at the median speed.
        assert!((scaled(90.0, &runs[1], Some(at)) - 100.0).abs() < 1e-9);
        assert!((scaled(90.0, &runs[1], None) - 90.0).abs() < 1e-9);
    }

    #[test]
    fn a_scenario_with_a_run_measured_alone_is_not_scaled() {
        let runs = [run(100.0, Some(1000.0)), run(90.0, None)];
        assert!(scale(&runs.iter().collect::<Vec<_>>()).is_none());
        // An invalid run does not count: it is in no statistic.
        let mut bad = run(90.0, None);
        bad.invalid = Some(Invalid { kind: Invalid::TOOL_FAILURE.into(), reason: "x".into() });
        let runs = [run(100.0, Some(1000.0)), bad];
        assert_eq!(scale(&runs.iter().collect::<Vec<_>>()).map(|s| s.1), Some(1000.0));
        let mut other = run(100.0, Some(800.0));
        other.companion.as_mut().unwrap().name = "other".into();
        let runs = [run(100.0, Some(1000.0)), other];
        assert!(scale(&runs.iter().collect::<Vec<_>>()).is_none());
    }

    #[test]
    fn two_generators_that_fill_their_core_together_are_counted() {
        let share = |own: f64, beside: Option<f64>| {
            let mut r = run(100.0, Some(1000.0));
            r.generator.utilization = own;
            r.companion.as_mut().unwrap().generator_utilization = beside;
            r
        };
        // 0.47 and 0.48 of core 1: together past 0.9; 0.31 and 0.33 leave it a third idle.
        let runs = [share(0.47, Some(0.48)), share(0.31, Some(0.33)), share(0.47, None)];
        assert_eq!(generators_saturated(&runs.iter().collect::<Vec<_>>()), 1);
        // A generator saturated alone is counted as such already, not twice.
        let mut alone = share(0.95, Some(0.3));
        alone.generator.saturated = true;
        assert_eq!(generators_saturated(&[&alone]), 0);
    }
}
