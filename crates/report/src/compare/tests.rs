//! Comparisons of synthetic result stores whose changes are known.

use super::*;
use crate::synthetic::three_kings_with;

fn verdict_of(c: &Comparison, name: &str) -> ChangeVerdict {
    c.changes.iter().find(|x| x.contestant == name).unwrap_or_else(|| panic!("{name} missing")).verdict
}

#[test]
fn same_results_have_no_regression() {
    let a = three_kings_with("a", |_| 1.0);
    let c = compare(&a, &a, 0.05);
    assert!(!c.has_regression(), "{:#?}", c.regressions().collect::<Vec<_>>());
    assert_eq!(verdict_of(&c, "plug"), ChangeVerdict::Unchanged);
    assert_eq!(verdict_of(&c, "tonic"), ChangeVerdict::NotTestable);
    assert_eq!(verdict_of(&c, "fastify"), ChangeVerdict::StillFailing);
}

#[test]
fn a_clear_drop_is_a_regression_and_a_clear_gain_an_improvement() {
    let a = three_kings_with("a", |_| 1.0);
    let b = three_kings_with("b", |n| match n {
        "flask" => 0.80,
        "gin" => 1.30,
        "japronto" => 0.97,
        _ => 1.0,
    });
    let c = compare(&a, &b, 0.05);
    assert!(c.has_regression());
    assert_eq!(verdict_of(&c, "flask"), ChangeVerdict::Regression);
    assert_eq!(verdict_of(&c, "gin"), ChangeVerdict::Improvement);
    // 3% slower: allowed by a 5% threshold.
    assert_eq!(verdict_of(&c, "japronto"), ChangeVerdict::Unchanged);
    let flask = c.changes.iter().find(|x| x.contestant == "flask").unwrap();
    let r = flask.ratio.unwrap();
    assert!((r.value - 0.80).abs() < 0.01 && r.ci.unwrap().hi < 0.95, "{r:?}");
    assert!(flask.text.contains("−20.0%"), "{}", flask.text);
    // The same drop is allowed by a 25% threshold.
    assert_eq!(verdict_of(&compare(&a, &b, 0.25), "flask"), ChangeVerdict::Unchanged);
}

#[test]
fn a_contestant_that_now_fails_is_a_regression() {
    let a = three_kings_with("a", |_| 1.0);
    let mut b = three_kings_with("b", |_| 1.0);
    b.runs.retain(|r| r.label.contestant.as_deref() != Some("gin"));
    let gin = b.contestants.iter_mut().find(|c| c.name == "gin").unwrap();
    gin.incidents.push(stackbench_record::Incident {
        phase: "start".into(),
        kind: "never_ready".into(),
        message: "no answer on port 41234 within 10 s".into(),
        repetition: None,
    });
    let c = compare(&a, &b, 0.05);
    assert_eq!(verdict_of(&c, "gin"), ChangeVerdict::NowFailing);
    assert!(c.has_regression());
    let text = &c.changes.iter().find(|x| x.contestant == "gin").unwrap().text;
    assert!(text.contains("no answer on port 41234"), "{text}");
    // And the other way round it is fixed, not a regression.
    let back = compare(&b, &a, 0.05);
    assert_eq!(verdict_of(&back, "gin"), ChangeVerdict::Fixed);
    assert!(!back.has_regression());
}

#[test]
fn added_and_removed_contestants_are_named() {
    let a = three_kings_with("a", |_| 1.0);
    let mut b = a.clone();
    b.runs.retain(|r| r.label.contestant.as_deref() != Some("node-grpc"));
    b.contestants.retain(|c| c.name != "node-grpc");
    let c = compare(&a, &b, 0.05);
    assert_eq!(verdict_of(&c, "node-grpc"), ChangeVerdict::Removed);
    assert_eq!(verdict_of(&compare(&b, &a, 0.05), "node-grpc"), ChangeVerdict::Added);
    assert!(!c.has_regression());
}
