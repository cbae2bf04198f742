//! The plan's `companion`: a fresh start of one plan contestant beside every run of a
//! scenario that compares contestants, on the same cores under the same budget, driven by a
//! load of its own on the load's cores. Its correct answers over the seconds of the run's
//! measured window go on the run's record ([`stackbench_record::Companion`]); the report
//! divides each run's rate by it, so a slow minute of a shared machine (a neighbour, the
//! host, the clock) slows both and cancels out. This is duet benchmarking (Bulej et al.,
//! "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE 2020) with one
//! partner for everyone: on 2 cores each contestant's run is a duet with the same reference,
//! so every pair's ratio is the ratio of two such duets. docs/design.md, "Measured beside a
//! companion".

use std::time::Duration;

use stackbench_record::RunRecord;

use super::{Orchestrator, RunError, Started, path_of};
use crate::load::{Cancel, LoadDriver, LoadJob};
use crate::plan::Launch;
use crate::watch::{Target, Watched, drive};

/// The load keys a companion's own load drops: it runs from its start until the measured
/// run ends (then it is stopped), so neither a warm-up nor a length of its own applies.
const OWN_TIMING: [&str; 5] = ["warmup", "max-warmup", "duration", "requests", "stages"];

/// A started companion and the load that drives it.
pub(super) struct Beside {
    /// Its plan index.
    pub j: usize,
    pub started: Started,
    pub job: LoadJob,
}

impl Orchestrator<'_, '_> {
    /// The companion that runs beside a run of `i`: the plan has one, it was set up, and `i`
    /// is started by stackbench, measured by a plain load, in a scenario with another
    /// contestant to compare it with.
    fn companion_for(&self, i: usize) -> Option<usize> {
        let name = self.plan.companion.as_deref()?;
        let j = self.plan.contestants.iter().position(|c| c.name == name)?;
        let c = &self.plan.contestants[i];
        let searched = c.profile.get("find-max").and_then(toml::Value::as_bool) == Some(true);
        let compared = self
            .live
            .iter()
            .zip(&self.plan.contestants)
            .filter(|(l, o)| l.eligible && o.scenario.name() == c.scenario.name())
            .count()
            > 1;
        let local = matches!(c.launch, Launch::Command { .. });
        (self.live[j].eligible && compared && local && !searched).then_some(j)
    }

    /// Starts the companion of a run of `i` (none when it has none, or its start failed:
    /// an incident of the companion's, and the run goes on alone).
    pub(super) fn start_companion(
        &mut self,
        i: usize,
        rep: u32,
        load_cpus: Option<Vec<usize>>,
    ) -> Result<Option<Beside>, RunError> {
        let Some(j) = self.companion_for(i) else { return Ok(None) };
        let Some(started) = self.start(j, "companion", Some(rep))? else { return Ok(None) };
        let r = &self.plan.contestants[j];
        let mut profile = r.profile.clone();
        for key in OWN_TIMING {
            profile.remove(key);
        }
        // Bounded like every load: the measured run's estimate twice over, plus a minute;
        // it is stopped as soon as the measured run ends.
        let c = &self.plan.contestants[i];
        let bound =
            crate::plan::profile::estimated_runs(&c.scenario, &c.profile, 1) * 2 + Duration::from_mins(1);
        profile.insert("duration".into(), format!("{}s", bound.as_secs()).into());
        let job = LoadJob {
            url: format!("{}{}", started.base, path_of(r)),
            scenario: r.scenario.clone(),
            profile,
            cpus: load_cpus,
            bracket: None,
            cacert: self.made_tls(r).map(|m| m.cert),
        };
        Ok(Some(Beside { j, started, job }))
    }

    /// Stops the companion; what its load measured, or why it measured nothing.
    pub(super) fn stop_companion(
        &mut self,
        beside: Beside,
        ran: Option<Result<RunRecord, String>>,
        rep: u32,
    ) -> Result<Ran, RunError> {
        let Beside { j, mut started, .. } = beside;
        let exited = started.process.try_exit();
        self.stop(j, started, &[], Some(rep))?;
        let record = match (ran, exited) {
            (_, Some(exit)) => Err(format!("it ended with {exit} during the run")),
            (Some(r), None) => r,
            (None, None) => Err("its load did not run".to_owned()),
        };
        Ok(Ran { j, record })
    }

    /// Puts the companion's rate over `record`'s measured window on the record, or an
    /// incident of the companion's saying why there is none.
    pub(super) fn attach_companion(
        &mut self,
        ran: Ran,
        record: &mut RunRecord,
        rep: u32,
    ) -> Result<(), RunError> {
        let name = &self.plan.contestants[ran.j].name;
        let beside = ran.record.and_then(|r| {
            reference(name, record, &r)
                .ok_or_else(|| "its load did not cover the run's measured window".to_owned())
        });
        match beside {
            Ok(companion) => {
                record.companion = Some(companion);
                Ok(())
            }
            Err(why) => {
                let msg = format!("no reference beside this run: {why}");
                self.incident(ran.j, "companion", "no_reference", msg, Some(rep))
            }
        }
    }
}

/// What a stopped companion's load measured ([`Orchestrator::stop_companion`]).
pub(super) struct Ran {
    j: usize,
    record: Result<RunRecord, String>,
}

/// [`drive`] with the companion's load (if any) running beside it on the same cores from the
/// moment the run's budget is in force (when a warm-up at a larger quota ends, else at once),
/// stopped when the measured run ends. The companion's load thread gets the reserved share of
/// its cores that a budgeted contestant's load gets.
pub(super) fn drive_beside(
    load: &dyn LoadDriver,
    job: &LoadJob,
    beside: Option<&LoadJob>,
    interrupt: &Cancel,
    target: Option<Target<'_>>,
    interval: Duration,
) -> (Watched, Option<Result<RunRecord, String>>) {
    let Some(other) = beside else { return (drive(load, job, interrupt, target, interval), None) };
    let stop = Cancel::new();
    let (back, mut target) = (Cancel::new(), target);
    match target.as_mut() {
        Some(t) => t.budget_back = Some(back.clone()),
        None => back.cancel(),
    }
    std::thread::scope(|s| {
        let (stop_ref, back) = (&stop, &back);
        let handle = s.spawn(move || {
            while !stop_ref.is_cancelled() && !back.is_cancelled() {
                std::thread::sleep(Duration::from_millis(2));
            }
            if stop_ref.is_cancelled() {
                return Err("the run ended before the companion's load was to start".to_owned());
            }
            let _reserved = crate::cgroup::reserve::reserve_this_thread("companion-load").ok();
            load.run(other, stop_ref)
        });
        let watched = drive(load, job, interrupt, target, interval);
        stop.cancel();
        let ran = handle.join().unwrap_or_else(|payload| {
            Err(stackbench_load::describe_panic("the companion's load thread", &*payload, None))
        });
        (watched, Some(ran))
    })
}

/// What `measured`'s record keeps of its companion `name`, whose load's record is
/// `companion`: its rate over the measured window ([`rate_over`]; `None` without one) and the
/// share of the load's cores its generator used, so that the report can judge the two
/// generators together.
fn reference(
    name: &str,
    measured: &RunRecord,
    companion: &RunRecord,
) -> Option<stackbench_record::Companion> {
    Some(stackbench_record::Companion {
        name: name.to_owned(),
        ok_rps: rate_over(measured, companion)?,
        generator_utilization: Some(companion.generator.utilization),
    })
}

/// The companion's correct answers per second over `measured`'s window, from its
/// per-second timeline by wall clock: each of its seconds weighs by its overlap with the
/// window (its last second may be cut short where its load was stopped). `None` when its
/// seconds cover less than 90% of the window.
pub fn rate_over(measured: &RunRecord, companion: &RunRecord) -> Option<f64> {
    let from = measured.started_at_ms as f64;
    let to = from + measured.summary.duration_s * 1000.0;
    let end = companion.started_at_ms as f64 + companion.summary.duration_s * 1000.0;
    let (mut answers, mut covered) = (0.0, 0.0);
    for s in &companion.timeline {
        let begin = s.at_ms.map_or(companion.started_at_ms as f64 + 1000.0 * f64::from(s.t), |a| a as f64);
        let len = (end.min(begin + 1000.0) - begin).max(0.0);
        let overlap = (to.min(begin + len) - from.max(begin)).max(0.0);
        if len <= 0.0 || overlap <= 0.0 {
            continue;
        }
        let failed: u64 = s.errors.values().sum();
        answers += s.completed.saturating_sub(failed) as f64 * overlap / len;
        covered += overlap;
    }
    (to > from && covered >= 0.9 * (to - from)).then(|| answers / (covered / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn second(t: u32, completed: u64, failed: u64) -> stackbench_record::Second {
        stackbench_record::Second {
            t,
            completed,
            errors: if failed > 0 {
                BTreeMap::from([("timeout".to_owned(), failed)])
            } else {
                BTreeMap::new()
            },
            p50_us: 0,
            p90_us: 0,
            p99_us: 0,
            max_us: 0,
            in_flight: 0,
            bytes_received: 0,
            at_ms: None,
            histogram: None,
        }
    }

    fn record(started_at_ms: u64, duration_s: f64, timeline: Vec<stackbench_record::Second>) -> RunRecord {
        use stackbench_report::synthetic::{RunSpec, run_record};
        let mut r = run_record(&RunSpec { users: 1, duration_s: 1, ..RunSpec::new("", "dummy", 1, 20.0) });
        r.started_at_ms = started_at_ms;
        r.summary.duration_s = duration_s;
        r.timeline = timeline;
        r
    }

    #[test]
    fn the_rate_is_over_the_measured_seconds_only() {
        // Measured from 1 s after the companion's start, for 2 s: its seconds 1 and 2.
        let measured = record(10_000, 2.0, Vec::new());
        let companion = record(
            9_000,
            3.5,
            vec![second(0, 500, 0), second(1, 1000, 0), second(2, 1200, 200), second(3, 300, 0)],
        );
        assert_eq!(rate_over(&measured, &companion), Some(1000.0));
        // Shifted by half a second: half of second 0 (500/s), all of 1, half of 2 (1000/s).
        let shifted = record(9_500, 2.0, Vec::new());
        assert_eq!(rate_over(&shifted, &companion), Some((250.0 + 1000.0 + 500.0) / 2.0));
    }

    #[test]
    fn the_reference_keeps_the_companions_generator_share() {
        let measured = record(10_000, 2.0, Vec::new());
        let mut companion =
            record(9_000, 3.0, vec![second(0, 500, 0), second(1, 1000, 0), second(2, 1000, 0)]);
        companion.generator.utilization = 0.47;
        let kept = reference("ref", &measured, &companion).unwrap();
        assert_eq!(
            (kept.name.as_str(), kept.ok_rps, kept.generator_utilization),
            ("ref", 1000.0, Some(0.47))
        );
        // With this run's generator at 0.45 of the same core, the two together filled it.
        let mut own = measured.generator;
        own.utilization = 0.45;
        assert!(kept.generators_saturated(&own));
        own.utilization = 0.30;
        assert!(!kept.generators_saturated(&own));
        assert_eq!(reference("ref", &record(20_000, 2.0, Vec::new()), &companion), None);
    }

    #[test]
    fn a_last_second_cut_short_counts_at_its_own_rate() {
        // The companion was stopped 0.5 s into its second 2, having answered 400 in it: 800/s.
        let companion = record(0, 2.5, vec![second(0, 1000, 0), second(1, 1000, 0), second(2, 400, 0)]);
        let measured = record(1_000, 1.5, Vec::new());
        assert_eq!(rate_over(&measured, &companion), Some((1000.0 + 400.0) / 1.5));
    }

    #[test]
    fn a_window_the_companion_did_not_cover_has_no_rate() {
        let companion = record(0, 2.0, vec![second(0, 1000, 0), second(1, 1000, 0)]);
        assert_eq!(rate_over(&record(1_000, 2.0, Vec::new()), &companion), None);
        assert_eq!(rate_over(&record(5_000, 2.0, Vec::new()), &companion), None);
        assert_eq!(rate_over(&record(0, 0.0, Vec::new()), &companion), None);
    }
}
