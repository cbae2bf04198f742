//! The progress line of a finished run says when an automatic warm-up handed over to the
//! measured window, and says nothing new for a fixed one.

use stackbench_record::Warmup;
use stackbench_report::synthetic::{RunSpec, run_record};

use super::describe;

#[test]
fn an_automatic_warmup_says_when_the_measured_window_began() {
    let mut r = run_record(&RunSpec::new("vertx", "dummy", 1, 1_000.0));
    let fixed = describe(&r);
    let mut summary = r.summary.clone();
    summary.duration_s = 10.0;
    let w = Warmup {
        auto: true,
        max_s: Some(60.0),
        steady_from_s: Some(4),
        never_steady: false,
        summary,
        errors: std::collections::BTreeMap::new(),
        timeline: Vec::new(),
    };
    r.warmup = Some(Warmup { auto: false, ..w.clone() });
    assert_eq!(describe(&r), fixed, "a fixed warm-up's line is as before");
    r.warmup = Some(w.clone());
    assert!(describe(&r).contains("; measured from 10 s, steady from 4 s"), "{}", describe(&r));
    let mut never = w;
    (never.steady_from_s, never.never_steady, never.summary.duration_s) = (None, true, 60.0);
    r.warmup = Some(never);
    assert!(describe(&r).contains("; never steady within 60 s of warm-up"), "{}", describe(&r));
}
