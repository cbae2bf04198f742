//! A contestant's warm-ups summed up: time to steady state as the median over runs, the runs
//! never steady named in a warning, the warm-up's rate relative to the measured one, and old
//! records without a warm-up leaving nothing.

use stackbench_record::{RunRecord, Warmup};

use super::{phrase, warmup};
use crate::synthetic::{RunSpec, run_record};

/// A run of `ok_rps` measured after a warm-up at `warm_rps` that lasted `lasted_s`, steady from
/// `steady` (`None`: never).
fn run(repetition: u32, warm_rps: f64, lasted_s: f64, steady: Option<u32>) -> RunRecord {
    let mut r = run_record(&RunSpec::new("vertx", "dummy", repetition, 1_000.0));
    let mut summary = r.summary.clone();
    summary.duration_s = lasted_s;
    summary.ok_rps = warm_rps;
    summary.rps = warm_rps;
    summary.requests = (warm_rps * lasted_s) as u64;
    r.warmup = Some(Warmup {
        auto: true,
        max_s: Some(30.0),
        steady_from_s: steady,
        never_steady: steady.is_none(),
        summary,
        errors: std::collections::BTreeMap::new(),
        timeline: Vec::new(),
    });
    r
}

#[test]
fn time_to_steady_state_is_the_median_and_never_is_counted() {
    let runs = [run(1, 600.0, 12.0, Some(7)), run(2, 700.0, 10.0, Some(5)), run(3, 500.0, 30.0, None)];
    let used: Vec<&RunRecord> = runs.iter().collect();
    let mut warnings = Vec::new();
    let w = warmup(&used, &mut warnings).expect("kept");
    assert_eq!(w.steady_from_s, [Some(7), Some(5), None]);
    assert_eq!((w.median_steady_s, w.never, w.runs), (Some(6.0), 1, 3));
    assert!((w.median_duration_s - 12.0).abs() < 1e-9);
    assert!((w.relative_rate.unwrap() - 0.6).abs() < 1e-3, "{:?}", w.relative_rate);
    assert!(w.auto && w.max_s == Some(30.0));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("warm-up never steady in 1 of 3 runs (run 3)"), "{}", warnings[0]);
    assert!(warnings[0].contains("within its maximum of 30 s"), "{}", warnings[0]);
    assert_eq!(
        phrase("vertx", &w),
        "vertx steady after 6 s, never steady within 30 s in 1 of 3 runs, warm-up at 60% of the measured rate"
    );
}

#[test]
fn all_never_steady_says_so_and_old_records_have_no_warmup() {
    let runs = [run(1, 500.0, 30.0, None), run(2, 500.0, 30.0, None)];
    let used: Vec<&RunRecord> = runs.iter().collect();
    let w = warmup(&used, &mut Vec::new()).unwrap();
    assert_eq!((w.median_steady_s, w.never), (None, 2));
    assert!(phrase("node", &w).starts_with("node never steady within 30 s, warm-up at 50%"));
    let old = run_record(&RunSpec::new("vertx", "dummy", 1, 1_000.0));
    assert!(old.warmup.is_none());
    let mut warnings = Vec::new();
    assert_eq!(warmup(&[&old], &mut warnings), None);
    assert!(warnings.is_empty());
}

#[test]
fn warmups_at_a_larger_quota_say_so_and_are_not_judged() {
    let mut runs = [run(1, 2_000.0, 18.0, None), run(2, 1_800.0, 18.0, None)];
    for r in &mut runs {
        let w = r.warmup.as_mut().unwrap();
        (w.auto, w.max_s, w.never_steady) = (false, None, false);
        let cg = stackbench_record::CgroupUsage {
            cpu_quota: Some(0.5),
            warmup_cpu_quota: Some(1.0),
            ..Default::default()
        };
        r.samples.as_mut().unwrap().cgroup = Some(cg);
    }
    let used: Vec<&RunRecord> = runs.iter().collect();
    let mut warnings = Vec::new();
    let w = warmup(&used, &mut warnings).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!((w.cpu_cores, w.never, w.steady_from_s.len()), (Some(1.0), 0, 0));
    assert_eq!(
        phrase("vertx", &w),
        "vertx 18 s at 1 core, not judged (its seconds ran at two quotas), warm-up at 190% of the measured rate"
    );
}
