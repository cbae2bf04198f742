//! `--scenario-file` under load: the shipped todo file's iterations against a
//! todo service written for the tests (`stackbench_testkit::todo`, not one of
//! stackbench's contestants). A right service: no error, every request of an
//! iteration sent (captures feeding the next), counts by name. A service that
//! answers a wrong title: `check` errors on that request's name alone.

use std::path::PathBuf;
use std::time::Duration;

use stackbench_load::{Dur, LoadOptions, RunRecord, Stop, run};
use stackbench_testkit::todo::{Fault, start};

fn todo_hurl() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.hurl")
}

fn load(fault: Fault, o: LoadOptions) -> RunRecord {
    let addr = start(fault);
    let o = LoadOptions {
        scenario_file: Some(todo_hurl()),
        duration: Some(Dur(Duration::from_secs(1))),
        threads: Some(1),
        ..o
    };
    stackbench_testkit::record::valid(
        run(&o.to_spec(&format!("http://{addr}")).unwrap(), &Stop::new()).unwrap(),
    )
}

fn named<'r>(r: &'r RunRecord, name: &str) -> &'r stackbench_record::Named {
    r.per_request
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no {name:?} in {:?}", r.per_request))
}

#[test]
fn a_right_service_answers_every_request_of_every_iteration() {
    let r = load(Fault::None, LoadOptions { connections: Some(4), ..LoadOptions::default() });
    assert_eq!(r.summary.errors, 0, "{:?}", r.errors);
    let names: Vec<&str> = r.per_request.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["POST /todos", "GET /todos/{{todo_id}}"]);
    let (post, get) = (named(&r, "POST /todos"), named(&r, "GET /todos/{{todo_id}}"));
    let it = r.iterations.as_ref().unwrap();
    assert!(it.requests > 20, "{it:?}");
    // Each iteration: create, read back (with the captured id), the refused empty title.
    assert!(get.requests.abs_diff(it.requests) <= 4, "{get:?} {it:?}");
    assert!(post.requests.abs_diff(2 * it.requests) <= 8, "{post:?} {it:?}");
    assert_eq!(r.summary.requests, post.requests + get.requests);
    assert_eq!((post.error_count(), get.error_count(), it.error_count()), (0, 0, 0));
    assert!(r.summary.checks.performed >= r.summary.requests / 2, "{:?}", r.summary.checks);
    assert!(get.latency.count == get.requests && get.latency.p50_us > 0);
    // An iteration lasts its three requests.
    assert!(it.latency.p50_us >= get.latency.p50_us, "{it:?} {get:?}");
    assert_eq!(r.params.scenario.as_deref(), Some("todo"));
    let text = stackbench_load::summary_text(&r, false);
    assert!(text.contains("GET /todos/{{todo_id}}") && text.contains("iteration"), "{text}");
}

#[test]
fn a_wrong_answer_is_a_check_error_of_its_request() {
    let threshold = ["errors{GET /todos/{{todo_id}}}<1%", "errors{POST /todos}<1%", "p99{iteration}<5s"];
    let threshold = threshold.iter().map(|t| t.parse().unwrap()).collect();
    let r =
        load(Fault::WrongTitle, LoadOptions { connections: Some(2), threshold, ..LoadOptions::default() });
    let passed: Vec<bool> = r.thresholds.iter().map(|t| t.passed).collect();
    assert_eq!(passed, [false, true, true], "{:?}", r.thresholds);
    let (post, get) = (named(&r, "POST /todos"), named(&r, "GET /todos/{{todo_id}}"));
    assert!(get.requests > 10, "{get:?}");
    assert_eq!(get.errors.get("check"), Some(&get.requests), "{get:?}");
    assert_eq!(post.error_count(), 0, "{post:?}");
    assert_eq!(r.errors.get("check"), Some(&get.requests));
    assert_eq!(r.summary.checks.failed, get.requests);
    // A failed assert is data: the iteration goes on to its last request.
    assert!(post.requests.abs_diff(2 * get.requests) <= 4, "{post:?} {get:?}");
    let it = r.iterations.as_ref().unwrap();
    assert_eq!(it.error_count(), it.requests);
}

#[test]
fn the_open_model_starts_one_iteration_per_arrival() {
    let r = load(Fault::None, LoadOptions { rate: Some(100.0), ..LoadOptions::default() });
    let it = r.iterations.as_ref().unwrap();
    assert!((90..=101).contains(&it.requests), "{it:?}");
    assert_eq!(named(&r, "GET /todos/{{todo_id}}").requests, it.requests);
    // The GET ends an iteration; an iteration still in flight when the window closes has its
    // POSTs counted but is not an iteration (a few at most at 100 a second, even on a busy machine).
    let posts = named(&r, "POST /todos").requests;
    assert!((2 * it.requests..=2 * it.requests + 10).contains(&posts), "{posts} POSTs, {it:?}");
    assert_eq!(r.summary.errors, 0, "{:?}", r.errors);
    assert!(r.summary.corrected_for_coordinated_omission);
}

#[test]
fn a_count_bound_counts_iterations() {
    let o = LoadOptions { connections: Some(2), requests: Some(7), duration: None, ..LoadOptions::default() };
    let addr = start(Fault::None);
    let o = LoadOptions { scenario_file: Some(todo_hurl()), threads: Some(1), ..o };
    let r = run(&o.to_spec(&format!("http://{addr}")).unwrap(), &Stop::new()).unwrap();
    assert_eq!(r.iterations.as_ref().unwrap().requests, 7);
    assert_eq!(r.summary.requests, 21);
}

/// Iterations of one request each are counted from their requests' names (the recorder
/// adds the names' tallies once, at the end): every iteration, its error and its latency.
#[test]
fn iterations_of_one_request_are_their_requests() {
    let dir = tempfile::Builder::new().prefix("sb-one-request-").tempdir().unwrap();
    let file = dir.path().join("one.toml");
    let flow = |name: &str, title: &str| {
        format!(
            "[[flow]]\nname = \"{name}\"\nnames = [\"{name}\"]\nhurl = '''\nPOST {{{{base_url}}}}/todos\nContent-Type: application/json\n{{\"title\": \"{title}\"}}\nHTTP 201\n'''\n"
        )
    };
    std::fs::write(&file, flow("create", "milk") + &flow("refused", "")).unwrap();
    let addr = start(Fault::None);
    let o = LoadOptions {
        scenario_file: Some(file),
        duration: Some(Dur(Duration::from_secs(1))),
        threads: Some(2),
        connections: Some(4),
        ..LoadOptions::default()
    };
    let r = run(&o.to_spec(&format!("http://{addr}")).unwrap(), &Stop::new()).unwrap();
    drop(dir);
    let (create, refused) = (named(&r, "create"), named(&r, "refused"));
    let it = r.iterations.as_ref().unwrap();
    assert!(create.requests > 10 && refused.requests > 10, "{create:?} {refused:?}");
    assert_eq!(it.requests, create.requests + refused.requests);
    assert_eq!(it.ok, create.requests);
    assert_eq!(it.errors, refused.errors, "{it:?}");
    assert_eq!(refused.errors.get("http_400"), Some(&refused.requests), "{refused:?}");
    assert_eq!(it.latency.count, it.requests);
    assert_eq!(it.latency.max_us, create.latency.max_us.max(refused.latency.max_us));
}
