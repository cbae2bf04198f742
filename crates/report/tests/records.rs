//! The synthetic records the snapshot tests render, and the CLI's tests write to disk and
//! report on, are records of the documented schema (crates/record/schema).

use stackbench_report::synthetic::{extremes, three_kings};

#[test]
fn every_synthetic_record_validates_against_the_schema() {
    let sets = [three_kings("r"), extremes("x")];
    let runs: Vec<_> = sets.iter().flat_map(|s| &s.runs).collect();
    assert!(runs.len() > 20, "{} runs", runs.len());
    for run in runs {
        stackbench_testkit::record::valid(run.clone());
    }
}
