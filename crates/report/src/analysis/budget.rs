//! The CPU budget the contestants ran under, said once in every report's
//! header: a rate measured under a cgroup CPU quota (`cpu_quota`, the same
//! for each contestant) is the server's, and one measured without it may be
//! the load generator's, so a reader must know which a table holds. Read from
//! the run records (each sampled run carries its cgroup's quota and version)
//! and the contestants' `limits_not_applied` incidents, which say why a quota
//! the plan asked for was not applied.

use std::collections::BTreeMap;

use serde::Serialize;
use stackbench_record::ResultSet;

use crate::fmt;

/// The CPU each contestant stackbench started was allowed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budget {
    /// Cores of CPU time per second each contestant could use, when every
    /// one had the same quota; `None` when none had one, or they differ.
    pub cpu_cores: Option<f64>,
    /// The cgroup versions the quotas were applied through (1, 2).
    pub cgroup_versions: Vec<u8>,
    /// Each contestant's quota in cores (`None`: unbudgeted), when they differ.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_contestant: BTreeMap<String, Option<f64>>,
    /// Why a quota the plan asked for was not applied, when one was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<String>,
    /// The larger quota warm-ups ran at (a plan's `warmup_cpu_quota`), in cores, when any did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_cpu_cores: Option<f64>,
    /// The header's line: `CPU budget: 0.5 core per contestant …`, `unbudgeted: …`.
    pub line: String,
}

/// The budget of the contestants with a sampled run (stackbench started
/// them); `None` when there is none (external servers alone, nothing measured).
pub fn budget(results: &ResultSet) -> Option<Budget> {
    let mut quotas: BTreeMap<String, Option<f64>> = BTreeMap::new();
    let mut versions = Vec::new();
    // The warm-ups' larger quota, and the least time before a measured window the budget was back.
    let mut warmed: Option<(f64, f64)> = None;
    for run in &results.runs {
        let (Some(name), Some(samples)) = (&run.label.contestant, &run.samples) else { continue };
        let cgroup = samples.cgroup.as_ref().filter(|c| c.cpu_quota.is_some());
        let entry = quotas.entry(name.clone()).or_insert(None);
        if let Some(c) = cgroup {
            *entry = entry.or(c.cpu_quota);
            versions.extend(c.version.filter(|v| !versions.contains(v)));
            if let (Some(q), Some(before)) = (c.warmup_cpu_quota, c.budget_before_s) {
                warmed = Some(warmed.map_or((q, before), |(wq, wb)| (wq.max(q), wb.min(before))));
            }
        }
    }
    if quotas.is_empty() {
        return None;
    }
    // The larger quota the starts ran at (the same plan key as the warm-ups').
    let started = results.contestants.iter().filter_map(|c| c.start_cpu_quota).reduce(f64::max);
    versions.sort_unstable();
    let not_applied = results
        .contestants
        .iter()
        .flat_map(|c| &c.incidents)
        .find(|i| i.kind == "limits_not_applied")
        .map(|i| i.message.split_once("): ").map_or(i.message.as_str(), |(_, why)| why).to_owned());
    let mut distinct: Vec<Option<f64>> = Vec::new();
    for q in quotas.values() {
        if !distinct.contains(q) {
            distinct.push(*q);
        }
    }
    let via = match versions.as_slice() {
        [] => String::new(),
        vs => {
            let vs: Vec<String> = vs.iter().map(|v| format!("v{v}")).collect();
            format!(" (a cgroup {} CPU quota)", vs.join(" and "))
        }
    };
    let unbudgeted = match &not_applied {
        Some(why) => format!("unbudgeted: the plan's CPU quota was not applied ({why})"),
        None => "unbudgeted: no CPU quota on any contestant".to_owned(),
    };
    let (cpu_cores, line, per_contestant) = match distinct.as_slice() {
        [Some(q)] => {
            // Said where it applied: a warm-up longer than the settle, of a budgeted contestant;
            // the starts, exec to their first verified answer.
            let warm = match (started, warmed) {
                (None, None) => String::new(),
                (Some(sq), None) => {
                    format!("; starts at {}, the budget from each one's first verified answer", cores_of(sq))
                }
                (s, Some((wq, before))) => format!(
                    "; {} at {}, the budget in force from at least {} before each measured window",
                    if s.is_some() { "starts and warm-ups" } else { "warm-ups" },
                    cores_of(s.map_or(wq, |s| s.max(wq))),
                    fmt::millis(before * 1000.0)
                ),
            };
            (
                Some(*q),
                format!("CPU budget: {} per contestant, the same for each{via}{warm}", cores_of(*q)),
                BTreeMap::new(),
            )
        }
        [None] => (None, unbudgeted, BTreeMap::new()),
        _ => {
            let groups: Vec<String> = distinct
                .iter()
                .map(|q| {
                    let names: Vec<String> =
                        quotas.iter().filter(|(_, v)| *v == q).map(|(n, _)| format!("'{n}'")).collect();
                    let what = q.map_or_else(|| "unbudgeted".to_owned(), cores_of);
                    format!("{what} for {}", names.join(", "))
                })
                .collect();
            let why = not_applied.as_deref().map(|w| format!(" (not applied: {w})")).unwrap_or_default();
            let line = format!(
                "CPU budgets differ, so rates compare unequal shares of the CPU: {}{via}{why}",
                groups.join("; ")
            );
            (None, line, quotas)
        }
    };
    let warmup_cpu_cores = warmed.map(|(q, _)| q);
    Some(Budget { cpu_cores, cgroup_versions: versions, per_contestant, not_applied, warmup_cpu_cores, line })
}

/// Throttled share above which a contestant is said to have reached its CPU limit.
const THROTTLED: f64 = 0.05;

/// Says which contestants reached their CPU limit (throttled for more than 5%
/// of the measured time). Under one budget for all, that is the point (the
/// rate is the budget's), said once for the scenario; under a limit that
/// differs or that a plan set as a ceiling, a warning on each contestant.
pub fn throttled(s: &mut super::ScenarioReport, budget: Option<&Budget>) {
    let share = |c: &super::ContestantReport| c.resources.as_ref().and_then(|r| r.throttled_share);
    let over: Vec<f64> = s.contestants.iter().filter_map(share).filter(|x| *x > THROTTLED).collect();
    if over.is_empty() {
        return;
    }
    if let Some(cores) = budget.and_then(|b| b.cpu_cores) {
        let (lo, hi) = over.iter().fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
        let range = if fmt::percent(100.0 * lo) == fmt::percent(100.0 * hi) {
            fmt::percent(100.0 * hi)
        } else {
            format!("{}–{}", fmt::percent(100.0 * lo), fmt::percent(100.0 * hi))
        };
        s.notes.push(format!(
            "{} of {} contestants used their whole budget of {} (throttled for {range} of the measured time): \
             their rates are what that much CPU answers",
            over.len(),
            s.contestants.len(),
            cores_of(cores)
        ));
        return;
    }
    for c in &mut s.contestants {
        if let Some(x) = share(c).filter(|x| *x > THROTTLED) {
            let limit = c.resources.as_ref().and_then(|r| r.cpu_limit_cores);
            c.warnings.push(format!(
                "throttled by its CPU limit{} for {} of the measured time",
                limit.map(|q| format!(" of {}", cores_of(q))).unwrap_or_default(),
                fmt::percent(100.0 * x)
            ));
        }
    }
}

/// `0.5 core`, `1 core`, `2 cores`.
pub(super) fn cores_of(q: f64) -> String {
    format!("{q} core{}", if q > 1.0 { "s" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{RunSpec, contestant, result_set};
    use stackbench_record::CgroupUsage;

    /// Three sampled runs per contestant, each with this quota (applied through cgroup v1).
    fn set(quotas: &[(&str, Option<f64>)], incident: Option<&str>) -> ResultSet {
        let records = quotas.iter().map(|(n, _)| contestant(n, "dummy", Some(10.0), None)).collect();
        let runs: Vec<RunSpec> =
            quotas.iter().flat_map(|(n, _)| (1..=3).map(|r| RunSpec::new(n, "dummy", r, 1000.0))).collect();
        let mut set = result_set("budget", records, &runs);
        for run in &mut set.runs {
            let name = run.label.contestant.clone().unwrap();
            let quota = quotas.iter().find(|(n, _)| *n == name).unwrap().1;
            let samples = run.samples.as_mut().unwrap();
            samples.cgroup = quota.map(|q| CgroupUsage {
                cpu_quota: Some(q),
                memory_limit_bytes: None,
                cpu_s: 1.0,
                throttled_periods: 300,
                throttled_s: 3.0,
                memory_peak_bytes: 0,
                oom_kills: 0,
                version: Some(1),
                ..CgroupUsage::default()
            });
        }
        if let Some(why) = incident {
            set.contestants[0].incidents.push(stackbench_record::Incident {
                phase: "start".into(),
                kind: "limits_not_applied".into(),
                message: format!(
                    "runs without its cpu_quota/memory limits (limits = \"best-effort\"): {why}"
                ),
                repetition: None,
            });
        }
        set
    }

    #[test]
    fn one_quota_for_every_contestant_is_said_with_its_cgroup() {
        let b = budget(&set(&[("a", Some(0.5)), ("b", Some(0.5))], None)).unwrap();
        assert_eq!(b.cpu_cores, Some(0.5));
        assert_eq!(b.line, "CPU budget: 0.5 core per contestant, the same for each (a cgroup v1 CPU quota)");
        assert!(b.per_contestant.is_empty());
    }

    #[test]
    fn warmups_at_a_larger_quota_are_said_with_the_budget() {
        let mut s = set(&[("a", Some(0.5)), ("b", Some(0.5))], None);
        for (k, run) in
            s.runs.iter_mut().enumerate().filter(|(_, r)| r.label.contestant.as_deref() == Some("b"))
        {
            let cg = run.samples.as_mut().and_then(|s| s.cgroup.as_mut()).unwrap();
            (cg.warmup_cpu_quota, cg.budget_before_s) = (Some(1.0), Some(0.5 - 0.01 * k as f64));
        }
        let b = budget(&s).unwrap();
        assert_eq!(b.warmup_cpu_cores, Some(1.0));
        assert_eq!(
            b.line,
            "CPU budget: 0.5 core per contestant, the same for each (a cgroup v1 CPU quota); warm-ups at 1 core, \
             the budget in force from at least 450 ms before each measured window"
        );
        s.contestants[0].start_cpu_quota = Some(1.0);
        assert!(
            budget(&s).unwrap().line.ends_with(
                "; starts and warm-ups at 1 core, the budget in force from at least 450 ms before each measured window"
            ),
            "{}",
            budget(&s).unwrap().line
        );
        for run in &mut s.runs {
            let cg = run.samples.as_mut().and_then(|s| s.cgroup.as_mut()).unwrap();
            (cg.warmup_cpu_quota, cg.budget_before_s) = (None, None);
        }
        assert!(
            budget(&s)
                .unwrap()
                .line
                .ends_with("; starts at 1 core, the budget from each one's first verified answer"),
            "{}",
            budget(&s).unwrap().line
        );
        let cold = |set: &ResultSet| {
            let a = crate::Analysis::from_results(set, &crate::AnalysisOptions::default());
            a.scenarios[0].notes.iter().find(|n| n.starts_with("Cold start")).cloned().unwrap()
        };
        assert!(cold(&s).starts_with("Cold start is exec to the first verified answer (at 1 core, the budget set once it answered), probed"), "{}", cold(&s));
        s.contestants[0].start_cpu_quota = None;
        assert!(
            cold(&s).starts_with("Cold start is exec to the first verified answer, probed"),
            "{}",
            cold(&s)
        );
    }

    #[test]
    fn no_quota_is_unbudgeted_with_the_reason_when_one_was_asked() {
        let b = budget(&set(&[("a", None), ("b", None)], None)).unwrap();
        assert_eq!((b.cpu_cores, b.line.as_str()), (None, "unbudgeted: no CPU quota on any contestant"));
        let b = budget(&set(&[("a", None)], Some("cannot apply cpu_quota = 0.5: not root"))).unwrap();
        assert_eq!(
            b.line,
            "unbudgeted: the plan's CPU quota was not applied (cannot apply cpu_quota = 0.5: not root)"
        );
    }

    #[test]
    fn differing_quotas_name_each_contestant() {
        let b = budget(&set(&[("a", Some(0.5)), ("b", None), ("c", Some(2.0))], None)).unwrap();
        assert_eq!(b.cpu_cores, None);
        assert_eq!(
            b.line,
            "CPU budgets differ, so rates compare unequal shares of the CPU: 0.5 core for 'a'; unbudgeted for 'b'; \
             2 cores for 'c' (a cgroup v1 CPU quota)"
        );
        assert_eq!(b.per_contestant.len(), 3);
    }

    /// Throttled 3 s of each 10 s run: under one budget that is said once, as the point of it;
    /// under limits that differ, on each limited contestant.
    #[test]
    fn reaching_the_budget_is_a_note_and_reaching_a_limit_a_warning() {
        let analyse =
            |set: &ResultSet| crate::Analysis::from_results(set, &crate::AnalysisOptions::default());
        let a = analyse(&set(&[("a", Some(0.5)), ("b", Some(0.5))], None));
        let s = &a.scenarios[0];
        assert!(s.contestants.iter().all(|c| c.warnings.iter().all(|w| !w.contains("throttled"))));
        assert!(
            s.notes.contains(
                &"2 of 2 contestants used their whole budget of 0.5 core (throttled for 30% of the measured \
                  time): their rates are what that much CPU answers"
                    .to_owned()
            ),
            "{:?}",
            s.notes
        );
        let a = analyse(&set(&[("a", Some(0.5)), ("b", None)], None));
        let a_report = a.scenarios[0].contestants.iter().find(|c| c.name == "a").unwrap();
        assert!(
            a_report
                .warnings
                .contains(&"throttled by its CPU limit of 0.5 core for 30% of the measured time".to_owned()),
            "{:?}",
            a_report.warnings
        );
    }
}
