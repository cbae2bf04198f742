//! A budgeted run's start and warm-up at a larger quota (`warmup_cpu_quota`) against the fakes:
//! each start runs at it until its first verified answer, the group's quota is lifted when the
//! load starts and is the budget again before the measured window, the companion's load starts
//! only then, and the records say so.

use super::*;

#[test]
fn the_warmup_runs_at_the_larger_quota_and_the_companion_starts_with_the_budget() {
    let mut h = Harness::new("warm-core");
    h.world.lock().unwrap().timed_warmups = true;
    let p = plan(&format!(
        "cpu_quota = 0.5\nwarmup_cpu_quota = 1.0\ncompanion = \"c\"\n{}{}",
        contestant("a", "good", "ready_timeout = \"10s\"\nload = { warmup = \"700ms\" }"),
        contestant("c", "good", "ready_timeout = \"10s\"\nload = { warmup = \"500ms\" }"),
    ));
    let out = h.run(&p);
    assert_eq!((out.runs, out.failed.len()), (4, 0), "{:#?}", h.lines);
    let events = h.world.lock().unwrap().events.clone();
    // Every start (the two verifications', each run's and its companion's) runs at the larger
    // quota until its first verified answer. Then a's two runs are lifted for 200 ms, the
    // companion's load after; c's warm-up is no longer than the settle: under the budget
    // throughout, its companion's load from the start.
    let start = ["quota 1", "quota 0.5"];
    assert_eq!(events[..4], [start, start].concat(), "the verifications' starts: {events:?}");
    let a = [start, start, start].concat();
    let c = [start, start].concat();
    let mut expected: Vec<Vec<&str>> = vec![a.clone(), a, c.clone(), c];
    expected.sort();
    let mut seen: Vec<Vec<&str>> = events[4..]
        .split(|e| e == "companion load")
        .filter(|run| !run.is_empty())
        .map(|run| run.iter().map(String::as_str).collect())
        .collect();
    seen.sort();
    assert_eq!(seen, expected, "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("companion load"), "{events:?}");
    let results = h.results();
    for c in &results.contestants {
        assert_eq!(c.start_cpu_quota, Some(1.0), "{}", c.name);
        assert!(!c.cold_start_ms.is_empty(), "{}", c.name);
    }
    for r in &results.runs {
        let cg = r.samples.as_ref().and_then(|s| s.cgroup).expect("budgeted runs are sampled in their group");
        assert!(r.invalid.is_none(), "{:?}", r.invalid);
        if r.label.contestant.as_deref() == Some("a") {
            assert_eq!(cg.warmup_cpu_quota, Some(1.0));
            let before = cg.budget_before_s.unwrap();
            assert!((0.3..=0.55).contains(&before), "the budget was back the settle before: {before}");
        } else {
            assert_eq!((cg.warmup_cpu_quota, cg.budget_before_s), (None, None));
        }
    }
}

#[test]
fn a_start_whose_budget_cannot_be_set_back_is_an_incident_not_a_result() {
    for refused in [1.0, 0.5] {
        let mut h = Harness::new("warm-core-refused");
        h.world.lock().unwrap().refused_quota = Some(refused);
        let p = plan(&format!(
            "cpu_quota = 0.5\nwarmup_cpu_quota = 1.0\n{}",
            contestant("a", "good", "ready_timeout = \"10s\"\nload = { warmup = \"700ms\" }"),
        ));
        let out = h.run(&p);
        assert_eq!(out.runs, 0, "{refused}: {:#?}", h.lines);
        let results = h.results();
        let incidents = &results.contestants[0].incidents;
        let said = if refused > 0.5 {
            "could not be given 1 core(s): 1 refused"
        } else {
            "could not be set after its start: 0.5 refused"
        };
        assert!(
            incidents.iter().any(|i| i.kind == "limits_failed" && i.message.contains(said)),
            "{refused}: {incidents:#?}"
        );
    }
}
