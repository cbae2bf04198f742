//! Runs that go wrong against the fakes: a server that ignores SIGTERM, a run without
//! progress, a load thread that does not stop or panics; and the URL placeholders.

use super::*;

#[test]
fn a_server_that_ignores_sigterm_is_killed_and_says_so() {
    let mut h = Harness::new("sigterm");
    let out = h.run(&plan(&contestant("stubborn", "ignores-sigterm", "")));
    assert_eq!(out.runs, 2);
    let incidents = &h.results().contestants[0].incidents;
    assert!(incidents.iter().all(|i| i.kind == "killed"), "{incidents:?}");
    assert!(incidents.len() >= 2);
}

/// A contestant's last output is read for a crash only: asked of a live process, the real
/// one waits up to half a second for its output to end, and every run paid that.
#[test]
fn a_contestant_that_stays_up_is_stopped_without_waiting_for_its_output() {
    let mut h = Harness::new("live-tail");
    let out = h.run(&plan(&[contestant("up", "good", ""), contestant("mid", "crash-mid-run", "")].concat()));
    assert_eq!(h.world.lock().unwrap().live_tails, 0, "{:#?}", h.lines);
    let set = h.results();
    let mid = &set.contestants.iter().find(|c| c.name == "mid").unwrap().incidents;
    assert!(mid.iter().any(|i| i.kind == "crashed" && i.message.contains("last words")), "{mid:?}");
    assert!(out.runs >= 2, "{out:?}");
}

#[test]
fn placeholders_and_urls() {
    let vars = BTreeMap::from([("{port}", "80".to_owned()), ("{stackbench}", "/sb".to_owned())]);
    assert_eq!(expand("{stackbench} --port={port} {other}", &vars), "/sb --port=80 {other}");
    assert_eq!(base_of("http://h:1/db/x"), "http://h:1");
    let p = plan("[[contestant]]\nname='e'\nscenario='db-read'\nurl='http://h:1/db/x'\n");
    assert_eq!(path_of(&p.contestants[0]), "/db/x");
}

/// Regression: a run that completed nothing was stored as a result and
/// averaged in. It is an incident `no_progress`, marked invalid in its
/// record, and the repetition is measured once more.
#[test]
fn a_run_without_progress_is_an_incident_and_is_measured_again() {
    let mut h = Harness::new("no-progress");
    h.world.lock().unwrap().load_script.push_back("zero");
    let out = h.run(&plan(&contestant("a", "good", "")));
    assert_eq!((out.runs, out.tool_failures, out.failed.len()), (3, 0, 0), "{:#?}", h.lines);
    let set = h.results();
    let invalid: Vec<&RunRecord> = set.runs.iter().filter(|r| r.invalid.is_some()).collect();
    assert_eq!(invalid.len(), 1);
    assert_eq!(invalid[0].invalid.as_ref().unwrap().kind, "no_progress");
    let valid: Vec<u32> =
        set.runs.iter().filter(|r| r.invalid.is_none()).filter_map(|r| r.label.repetition).collect();
    assert_eq!(valid.len(), 2, "both repetitions have a result: {valid:?}");
    let c = &set.contestants[0];
    assert!(c.incidents.iter().any(|i| i.kind == "no_progress" && i.phase == "run"), "{:?}", c.incidents);
    assert!(h.lines.iter().any(|l| l.contains("is measured once more")), "{:#?}", h.lines);
}

/// Issue 45 #1: a load whose thread does not stop ends the plan: its run is kept (not a
/// result), the incident recorded, and no other run starts beside the thread.
#[test]
fn a_load_thread_that_does_not_stop_ends_the_plan() {
    let mut h = Harness::new("load-stuck");
    h.world.lock().unwrap().load_script.push_back("stuck");
    let err = h.run_with(&plan(&contestant("a", "good", "")), true, false, Cancel::new()).unwrap_err();
    assert!(matches!(&err, RunError::ToolFailure(why) if why.contains("still running")), "{err}");
    let set = h.results();
    assert_eq!(set.runs.len(), 1, "nothing ran after it");
    assert!(set.runs[0].invalid.is_some());
    let c = &set.contestants[0];
    assert!(c.incidents.iter().any(|i| i.kind == "tool_failure" && i.message.contains("still running")));
    assert_eq!(h.world.lock().unwrap().alive, 0, "the contestant was stopped");
}

/// A panic in the load's thread is a tool failure: recorded, counted (the
/// command exits 70), the plan goes on, the repetition is measured again.
#[test]
fn a_panic_in_the_load_is_a_tool_failure_and_the_plan_goes_on() {
    let mut h = Harness::new("load-panic");
    h.world.lock().unwrap().load_script.push_back("panic");
    let out = h.run(&plan(&contestant("a", "good", "")));
    assert_eq!((out.runs, out.tool_failures, out.interrupted), (2, 1, false), "{:#?}", h.lines);
    let c = &h.results().contestants[0];
    let i = c.incidents.iter().find(|i| i.kind == "tool_failure").expect("a tool_failure incident");
    assert!(i.message.contains("panicked") && i.message.contains("a fake engine bug"), "{}", i.message);
    assert_eq!(h.world.lock().unwrap().alive, 0, "the contestant was stopped");
}
