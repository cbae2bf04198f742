//! A scenario file's contestants through the whole lifecycle, against the
//! same fakes as the built-in scenarios ([`super`]).

use super::*;

const TODO_SCENARIO: &str = r#"name = "todo-unit"
[[flow]]
name = "create"
hurl = '''
POST {{base_url}}/todos
{"title": "milk"}
HTTP 201
[Asserts]
jsonpath "$.done" == false
'''
[reset]
hurl = '''
DELETE {{base_url}}/todos
HTTP 204
'''
"#;

/// A scenario file's contestants: verified by the file's own case (the failed
/// assert's `file:line:col` when wrong), its reset requests sent before each
/// measured run (a failed one is an incident, and that run is not measured),
/// the records under the file's name.
#[test]
fn scenario_file_contestants_are_verified_reset_and_measured_under_its_name() {
    let mut h = Harness::new("file");
    let scenario = h.dir.with_extension("todo.toml");
    std::fs::write(&scenario, TODO_SCENARIO).unwrap();
    let on_file = |name: &str, kind: &str| {
        let path = format!("scenario = {:?}", scenario.display().to_string());
        contestant(name, kind, "").replace("scenario = \"dummy\"", &path)
    };
    let p = plan(&format!(
        "[load.todo-unit]\nconnections = 1\n{}{}{}",
        on_file("a", "good"),
        on_file("w", "wrong"),
        on_file("r", "noreset")
    ));
    let out = h.run(&p);
    std::fs::remove_file(&scenario).unwrap();
    let set = h.results();
    let runs = |name: &str| set.runs.iter().filter(|r| r.label.contestant.as_deref() == Some(name)).count();
    assert_eq!((runs("a"), runs("w"), runs("r")), (2, 0, 0), "{:#?}", h.lines);
    assert!(set.runs.iter().all(|r| r.label.scenario.as_deref() == Some("todo-unit")));
    assert_eq!(out.failed.len(), 1, "{:?}", out.failed);
    let w = set.contestants.iter().find(|c| c.name == "w").unwrap();
    let failure = &w.verification.as_ref().unwrap().failures[0];
    let at = format!("{}:9:", scenario.display());
    assert!(failure.detail.starts_with("POST /todos: ") && failure.detail.contains(&at), "{failure:?}");
    let r = set.contestants.iter().find(|c| c.name == "r").unwrap();
    assert_eq!(r.scenario, "todo-unit");
    assert!(r.verification.as_ref().unwrap().passed, "its case needs no reset");
    let resets: Vec<&str> =
        r.incidents.iter().filter(|i| i.phase == "reset").map(|i| i.message.as_str()).collect();
    assert_eq!(resets.len(), 2, "{:?}", r.incidents);
    assert!(resets[0].contains("expected status 204, got 500"), "{resets:?}");
    // Two measured runs of `a` and two attempts of `r`, each after a reset.
    assert_eq!(h.world.lock().unwrap().deletes, 4);
}
