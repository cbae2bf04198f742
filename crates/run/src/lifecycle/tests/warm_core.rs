//! A budgeted run's warm-up at a larger quota (`warmup_cpu_quota`) against the fakes: the
//! group's quota is lifted when the load starts and is the budget again before the measured
//! window, the companion's load starts only then, and the record says so.

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
    // a's two runs are lifted for 200 ms, the companion's load after; c's warm-up is no longer
    // than the settle: under the budget throughout, its companion from the start.
    let a = ["quota 1", "quota 0.5", "companion load"];
    let c = ["companion load"];
    let mut expected: Vec<Vec<&str>> = vec![a.to_vec(), a.to_vec(), c.to_vec(), c.to_vec()];
    expected.sort();
    let mut seen: Vec<Vec<&str>> = Vec::new();
    let mut rest = events.iter().map(String::as_str).peekable();
    while rest.peek().is_some() {
        let run: Vec<&str> = if rest.peek() == Some(&"quota 1") {
            rest.by_ref().take(3).collect()
        } else {
            rest.by_ref().take(1).collect()
        };
        seen.push(run);
    }
    seen.sort();
    assert_eq!(seen, expected, "{events:?}");
    for r in &h.results().runs {
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
