//! A plan's `companion` against the fakes: a fresh start of it beside every run of a
//! scenario with two or more contestants, stopped with the run, its rate over the run's
//! measured window on the record, and the report's rates read relative to it.

use super::*;
use stackbench_report::{Analysis, AnalysisOptions};

#[test]
fn the_companion_runs_beside_each_compared_run_and_the_report_reads_rates_against_it() {
    let mut h = Harness::new("companion");
    {
        let mut w = h.world.lock().unwrap();
        // Each run meets a machine as fast as its companion's rate says: half as fast at 100.
        w.beside_rates = [100.0, 200.0, 100.0, 200.0, 100.0, 200.0].into();
    }
    let p = plan(&format!(
        "companion = \"c\"\n{}{}{}",
        contestant("a", "good", "ready_timeout = \"10s\""),
        contestant("b", "twice", "ready_timeout = \"10s\""),
        contestant("c", "good", "ready_timeout = \"10s\""),
    ));
    let out = h.run(&p);
    assert_eq!((out.runs, out.failed.len()), (6, 0), "{:#?}", h.lines);
    {
        let w = h.world.lock().unwrap();
        assert_eq!((w.max_alive, w.alive), (2, 0), "the companion beside the run, both stopped");
        assert!(
            w.beside_rates.is_empty() && w.beside.is_none(),
            "a companion for the six compared runs only"
        );
    }
    let set = h.results();
    for r in &set.runs {
        let name = r.label.contestant.as_deref().unwrap();
        let c = r.companion.as_ref().map(|c| (c.name.as_str(), c.ok_rps));
        let c = c.unwrap_or_else(|| panic!("{name}: no companion; {:#?}", h.lines));
        assert_eq!(c.0, "c");
        let near = |x: f64, y: f64| (x - y).abs() < 1e-9;
        assert!(near(c.1, 100.0) || near(c.1, 200.0), "{c:?}");
        assert!(near(r.summary.ok_rps / c.1, if name == "b" { 0.2 } else { 0.1 }), "{name}: {c:?}");
    }
    let analysis = Analysis::from_results(&set, &AnalysisOptions::default());
    let dummy = analysis.scenarios.iter().find(|s| s.name == "dummy").unwrap();
    let mean = |n: &str| dummy.contestants.iter().find(|c| c.name == n).unwrap().throughput.mean;
    // At the companion's median rate, 150: a steady 15 and 30 a second whatever the machine did.
    assert_eq!((mean("a"), mean("b"), mean("c")), (15.0, 30.0, 15.0));
    assert!(
        analysis.notes.iter().any(|n| n.contains("beside a companion") && n.contains("'c'")),
        "{:?}",
        analysis.notes
    );
}

#[test]
fn a_contestant_alone_in_its_scenario_runs_without_the_companion() {
    let mut h = Harness::new("companion-alone");
    let p = plan(&format!("companion = \"c\"\n{}", contestant("c", "good", "ready_timeout = \"10s\"")));
    let out = h.run(&p);
    assert_eq!((out.runs, out.failed.len()), (2, 0), "{:#?}", h.lines);
    assert_eq!(h.world.lock().unwrap().max_alive, 1, "nothing to compare it with: nothing beside it");
    assert!(h.results().runs.iter().all(|r| r.companion.is_none()));
}
