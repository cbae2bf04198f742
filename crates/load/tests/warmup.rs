//! `--warmup auto` against a real server that warms up (its answers get faster over its first
//! seconds, then hold still): the measured window begins after the climb, the warm-up's own
//! figures are kept, and a server still warming at `--max-warmup` is measured then, marked
//! never steady.

use std::time::Duration;

use crate::common::{Behavior, start};
use stackbench_load::{Dur, LoadOptions, RunRecord, Stop, WarmupArg, run};

fn load(o: &LoadOptions, url: &str) -> RunRecord {
    stackbench_testkit::record::valid(run(&o.to_spec(url).unwrap(), &Stop::new()).unwrap())
}

fn auto(max_s: u64) -> LoadOptions {
    LoadOptions {
        connections: Some(4),
        threads: Some(1),
        duration: Some(Dur(Duration::from_secs(3))),
        warmup: Some(WarmupArg::Auto),
        max_warmup: Some(Dur(Duration::from_secs(max_s))),
        ..LoadOptions::default()
    }
}

#[test]
fn the_measured_window_begins_after_the_climb() {
    // 2 ms answers, held 18 ms more at first, fading to none over the first 6 s.
    let climb = Duration::from_secs(6);
    let s = start(Behavior {
        delay: Some(Duration::from_millis(2)),
        slow_start: Some((Duration::from_millis(18), climb)),
        ..Behavior::default()
    });
    let r = load(&auto(30), &s.url("/"));
    let w = r.warmup.expect("the warm-up's figures");
    assert!(w.auto && w.max_s == Some(30.0));
    let from = w.steady_from_s.expect("steady before the maximum");
    assert!(!w.never_steady);
    // Steady once the climb is over, and the measured window two whole windows later (one
    // judged flat, one confirming its level).
    assert!(from >= 4, "steady from second {from}, during the climb");
    assert!(w.summary.duration_s >= f64::from(from) + 10.0, "{}", w.summary.duration_s);
    assert!(w.summary.duration_s < 30.0, "ended at the maximum");
    assert!(w.summary.duration_s.fract() == 0.0, "on a whole second");
    assert!((w.timeline.len() as f64 - w.summary.duration_s).abs() < 1e-9);
    // The climb is in the warm-up's figures, not in the measured window's.
    let first = &w.timeline[0];
    assert!(first.p50_us > 10_000, "first second's median {} µs", first.p50_us);
    assert!(r.summary.latency.p50_us < 5_000, "measured median {} µs", r.summary.latency.p50_us);
    assert!(w.summary.rps < r.summary.rps, "{} vs {}", w.summary.rps, r.summary.rps);
    assert_eq!(r.params.warmup_ms, 30_000);
    assert_eq!(r.timeline.len(), 3);
}

#[test]
fn a_server_still_warming_at_the_maximum_is_never_steady() {
    // Held 40 ms more at first, fading over 20 s: still ten times as slow when the 10 s run out.
    let s = start(Behavior {
        delay: Some(Duration::from_millis(2)),
        slow_start: Some((Duration::from_millis(40), Duration::from_secs(20))),
        ..Behavior::default()
    });
    // The interval log starts where the measured window does, not where the load did.
    let dir = tempfile::Builder::new().prefix("stackbench-warmup-").tempdir().unwrap();
    let hlog = dir.path().join("run.hlog");
    let mut spec = auto(10).to_spec(&s.url("/")).unwrap();
    spec.hlog = Some(hlog.clone());
    let r = run(&spec, &Stop::new()).unwrap();
    let log = std::fs::read_to_string(&hlog).unwrap();
    let start: f64 = log
        .lines()
        .find_map(|l| l.strip_prefix("#[StartTime: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|t| t.parse().ok())
        .expect("a StartTime");
    assert!((start - r.started_at_ms as f64 / 1000.0).abs() < 0.002, "{start} vs {}", r.started_at_ms);
    assert_eq!(log.lines().filter(|l| !l.starts_with('#') && !l.starts_with('"')).count(), 3);
    let w = r.warmup.expect("the warm-up's figures");
    assert!(w.never_steady && w.steady_from_s.is_none(), "{w:?}");
    assert!((w.summary.duration_s - 10.0).abs() < 1e-9, "{}", w.summary.duration_s);
    assert_eq!(w.timeline.len(), 10);
    assert!(w.summary.requests > 0 && r.summary.requests > 0);
}
