//! A budgeted contestant's warm-up at a larger CPU quota (the plan's `warmup_cpu_quota`,
//! e.g. its whole core): from the load's start its group's quota is lifted, and it is the
//! budget (`cpu_quota`) again [`SETTLE`] before the measured window begins, so that a JIT
//! compiles at the larger quota (Vert.x's C2 code arrives in about half the time) while every
//! measured second runs under the budget, settled. The companion's load starts when the
//! budget is back: the warm-up has the contestant's cores to itself. A warm-up no longer
//! than [`SETTLE`], `auto` (it judges its own seconds) or a capacity search's keeps the
//! budget throughout. docs/design.md, "The default answer under a CPU budget".
//!
//! A lifted warm-up's seconds ran at two quotas, so it is not judged for steady state: the
//! measured window, under the budget, is (the report's check over its seconds). A run whose
//! budget was not back when its measured window began is not a result.
//!
//! Every start of such a contestant (exec to its first verified answer) runs at that quota too,
//! and the budget is set as soon as it answers, before its verification or load: a start
//! under a third of a core took a JVM twice as long (Vert.x 7.5 to 8 s, against 4.4 s at half a
//! core), as a cloud's startup CPU boost answers. Its cold starts are timed at that quota.

use std::time::Duration;

use stackbench_record::{Invalid, RunRecord};

use crate::cgroup::{LimitError, LimitGroup};
use crate::plan::{Contestant, Plan};
use crate::watch::{Lift, Lifted};

/// How long before the measured window the budget is back: the seconds measured begin under
/// it, with the answers in flight at the larger quota answered.
pub const SETTLE: Duration = Duration::from_millis(500);

/// What the budget's line before the first run adds for a plan's `warmup_cpu_quota`.
pub(super) fn said(plan: &Plan) -> String {
    plan.warmup_cpu_quota.map_or_else(String::new, |w| {
        format!(
            "; starts and warm-ups at {w} core(s), the budget from each start's first verified answer and again {SETTLE:?} before each measured window"
        )
    })
}

/// The quota `c`'s starts run at: the plan's `warmup_cpu_quota`, when it is larger than `c`'s
/// budget.
pub(super) fn start_quota(plan: &Plan, c: &Contestant) -> Option<f64> {
    let (warm, budget) = (plan.warmup_cpu_quota?, c.cpu_quota?);
    (warm > budget).then_some(warm)
}

/// Gives a start in the group just `created` (nothing in it yet) its [`start_quota`].
pub(super) fn boost_start(
    plan: &Plan,
    c: &Contestant,
    created: Result<Box<dyn LimitGroup>, LimitError>,
) -> Result<Box<dyn LimitGroup>, String> {
    let group = created.map_err(|e| e.to_string())?;
    let Some(warm) = start_quota(plan, c) else { return Ok(group) };
    group.set_cpu_quota(warm).map_err(|why| format!("its start could not be given {warm} core(s): {why}"))?;
    Ok(group)
}

/// Sets the budget back in `group` once its start answered (after [`boost_start`]).
pub(super) fn end_boost(plan: &Plan, c: &Contestant, group: Option<&dyn LimitGroup>) -> Result<(), String> {
    let (Some(group), Some(_), Some(budget)) = (group, start_quota(plan, c), c.cpu_quota) else {
        return Ok(());
    };
    group
        .set_cpu_quota(budget)
        .map_err(|why| format!("its budget of {budget} core(s) could not be set after its start: {why}"))
}

/// The lift of a run of `c` under `plan`, started in a group of its own (`grouped`) or not,
/// if its warm-up gets one.
pub(super) fn lift_for(plan: &Plan, c: &Contestant, grouped: bool) -> Option<Lift> {
    if !grouped {
        return None;
    }
    let (warm, budget) = (plan.warmup_cpu_quota?, c.cpu_quota?);
    if warm <= budget || c.profile.get("find-max").and_then(toml::Value::as_bool) == Some(true) {
        return None;
    }
    // A fixed warm-up only: `auto` ("auto" does not parse as a duration) ends when its own
    // seconds are steady, which they must be under the budget.
    let warmup = c.profile.get("warmup")?.as_str()?.parse::<stackbench_load::Dur>().ok()?.0;
    let until = warmup.checked_sub(SETTLE).filter(|d| !d.is_zero())?;
    Some(Lift { warm, budget, until })
}

/// Puts what a lift did on the run's record: the warm-up's quota and how long before the
/// measured window the budget held again, in its cgroup usage; the warm-up's steady-state
/// judgement dropped. A budget not back by the measured window makes the run not a result.
pub(super) fn settle_record(record: &mut RunRecord, lifted: Option<&Lifted>) {
    let Some(lifted) = lifted else { return };
    if let Some(w) = record.warmup.as_mut() {
        (w.steady_from_s, w.never_steady) = (None, false);
    }
    let before_s = lifted
        .budget_from_ms
        .as_ref()
        .map(|&at| (record.started_at_ms as f64 - at as f64) / 1000.0)
        .map_err(Clone::clone);
    if let Some(cg) = record.samples.as_mut().and_then(|s| s.cgroup.as_mut()) {
        cg.warmup_cpu_quota = Some(lifted.warm);
        cg.budget_before_s = before_s.as_ref().ok().copied();
    }
    let late = match before_s {
        Ok(s) if s >= 0.0 => return,
        Ok(s) => format!("it came back {:.0} ms into the measured window", -s * 1000.0),
        Err(why) => format!("it could not be set back: {why}"),
    };
    if record.invalid.is_none() {
        record.invalid = Some(Invalid::new(
            Invalid::OVER_BUDGET,
            format!(
                "the warm-up ran at {} core(s), and the budget was not in force for the whole measured window: {late}",
                lifted.warm
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanContext;

    fn plan(defaults: &str, load: &str) -> Plan {
        let text = format!(
            "[defaults]\ncpus = \"0\"\ncpu_quota = 0.5\n{defaults}\n[[contestant]]\nname = \"a\"\n\
             scenario = \"dummy\"\ncommand = [\"x\", \"{{port}}\"]\nload = {{ {load} }}\n"
        );
        Plan::parse(&text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap()
    }

    #[test]
    fn a_fixed_warmup_longer_than_the_settle_is_lifted_until_the_settle() {
        let p = plan("warmup_cpu_quota = 1.0", "warmup = \"18s\"");
        let lift = lift_for(&p, &p.contestants[0], true);
        assert_eq!(lift, Some(Lift { warm: 1.0, budget: 0.5, until: Duration::from_millis(17_500) }));
        for (defaults, load) in [
            ("warmup_cpu_quota = 1.0", "warmup = \"500ms\""),
            ("warmup_cpu_quota = 1.0", "warmup = \"auto\""),
            ("warmup_cpu_quota = 1.0", "duration = \"2s\""),
            ("warmup_cpu_quota = 0.5", "warmup = \"18s\""),
            ("", "warmup = \"18s\""),
        ] {
            let p = plan(defaults, load);
            assert_eq!(lift_for(&p, &p.contestants[0], true), None, "{defaults} {load}");
        }
        let mut p = plan("warmup_cpu_quota = 1.0", "warmup = \"18s\"");
        p.unbudget();
        assert_eq!(lift_for(&p, &p.contestants[0], true), None, "--unbudgeted");
        let p = plan("warmup_cpu_quota = 1.0", "warmup = \"18s\"");
        assert_eq!(lift_for(&p, &p.contestants[0], false), None, "no group: no quota to lift");
    }

    fn lifted_run(budget_from_ms: Result<u64, String>) -> RunRecord {
        use stackbench_report::synthetic::{RunSpec, run_record};
        let mut r =
            run_record(&RunSpec { resources: Some((50.0, 10.0)), ..RunSpec::new("a", "dummy", 1, 1e3) });
        r.started_at_ms = 100_000;
        let cgroup = stackbench_record::CgroupUsage { cpu_quota: Some(0.5), ..Default::default() };
        r.samples.as_mut().expect("sampled").cgroup = Some(cgroup);
        r.warmup = Some(stackbench_record::Warmup {
            auto: false,
            max_s: None,
            steady_from_s: None,
            never_steady: true,
            summary: r.summary.clone(),
            errors: std::collections::BTreeMap::new(),
            timeline: Vec::new(),
        });
        settle_record(&mut r, Some(&Lifted { warm: 1.0, budget_from_ms }));
        r
    }

    #[test]
    fn the_record_says_the_warmups_quota_and_is_a_result_only_under_the_budget() {
        let r = lifted_run(Ok(99_480));
        let cg = r.samples.as_ref().and_then(|s| s.cgroup).unwrap();
        assert_eq!((cg.warmup_cpu_quota, cg.budget_before_s), (Some(1.0), Some(0.52)));
        assert!(r.invalid.is_none(), "{:?}", r.invalid);
        let w = r.warmup.unwrap();
        assert!(!w.never_steady && w.steady_from_s.is_none(), "two quotas: not judged");
        let late = lifted_run(Ok(100_030));
        let invalid = late.invalid.unwrap();
        assert_eq!(invalid.kind, Invalid::OVER_BUDGET);
        assert!(invalid.reason.contains("30 ms into the measured window"), "{}", invalid.reason);
        let failed = lifted_run(Err("cannot write".into())).invalid.unwrap();
        assert!(failed.reason.contains("could not be set back: cannot write"), "{}", failed.reason);
    }
}
