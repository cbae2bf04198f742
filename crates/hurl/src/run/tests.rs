//! `verify` on the shipped todo scenario against an in-memory todo service
//! that answers right, and against ones that break a core or a hardening rule.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::origin::Routes;
use crate::scenario::Scenario;

struct Reply {
    status: u16,
    body: String,
}

impl Answer for Reply {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        (name.eq_ignore_ascii_case("content-type") && nth == 0).then_some("application/json")
    }
    fn body(&self) -> &[u8] {
        self.body.as_bytes()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// A new todo comes back done (a core rule).
    Done,
    /// A 300-character title is stored (a hardening rule).
    LongTitle,
}

#[derive(Default)]
struct Todos {
    store: BTreeMap<i64, String>,
    next: i64,
    resets: usize,
    seen: Vec<String>,
}

impl Todos {
    fn handle(&mut self, fault: Fault, e: &Entry, req: &Request) -> Result<Reply, String> {
        let url = String::from_utf8(req.url.clone()).unwrap();
        let path = url.strip_prefix("http://todo.test").ok_or("wrong base")?;
        self.seen.push(format!("{} {path}", e.method));
        let reply = |status, body: serde_json::Value| Ok(Reply { status, body: body.to_string() });
        match (&*e.method, path) {
            ("POST", "/todos") => {
                let body: serde_json::Value = serde_json::from_slice(&req.body).map_err(|e| e.to_string())?;
                let title = body["title"].as_str().unwrap_or("").to_owned();
                if title.is_empty() || (title.len() > 200 && fault != Fault::LongTitle) {
                    return reply(400, serde_json::json!({"error": "bad title"}));
                }
                self.next += 1;
                self.store.insert(self.next, title.clone());
                reply(201, serde_json::json!({"id": self.next, "title": title, "done": fault == Fault::Done}))
            }
            ("DELETE", "/todos") => {
                self.store.clear();
                self.resets += 1;
                reply(204, serde_json::json!(null))
            }
            ("GET", p) if p.starts_with("/todos?") => reply(200, serde_json::json!([])),
            ("GET", p) => match p
                .strip_prefix("/todos/")
                .and_then(|id| id.parse().ok())
                .and_then(|id: i64| self.store.get(&id))
            {
                Some(t) => reply(200, serde_json::json!({"title": t, "done": false})),
                None => reply(404, serde_json::json!({"error": "no such todo"})),
            },
            _ => reply(404, serde_json::json!({"error": "unknown path"})),
        }
    }
}

fn todo_scenario() -> Scenario {
    Scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.toml"), &[])
        .unwrap()
}

fn run(fault: Fault) -> (Verification, Todos) {
    let s = todo_scenario();
    let mut todos = Todos::default();
    let v = verify(
        &s,
        Aimed { target: Some("http://todo.test"), routes: &Routes::at(&s, "http://todo.test").unwrap() },
        &[],
        1,
        false,
        &mut |e, r| todos.handle(fault, e, r),
        &mut |_| Err("no command".into()),
    );
    (v, todos)
}

#[test]
fn a_right_service_passes() {
    let (v, todos) = run(Fault::None);
    assert!(v.passed());
    assert!(v.cases.iter().all(CaseResult::passed), "{v:?}");
    assert_eq!(todos.resets, 1, "the clean-store case runs after the reset");
    assert_eq!(&todos.seen[..4], ["DELETE /todos", "POST /todos", "GET /todos/1", "POST /todos"]);
    assert_eq!(
        v.cases[0].steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["create", "read back", "empty title"]
    );
}

#[test]
fn a_core_fault_fails_with_the_assert_position() {
    let (v, _) = run(Fault::Done);
    assert!(!v.passed());
    let case = &v.cases[0];
    assert!(!case.passed());
    let text = case.to_string();
    assert!(case.file.ends_with("todo.hurl"));
    assert!(
        text.contains("create: ")
            && text.contains("todo.hurl:11:1: `jsonpath \"$.done\" == false`: actual value is true"),
        "{text}"
    );
    assert!(v.cases[1].passed());
}

#[test]
fn a_hardening_fault_is_reported_but_passes() {
    let (v, _) = run(Fault::LongTitle);
    assert!(v.passed());
    let case = &v.cases[1];
    assert_eq!((case.level, case.passed()), (Level::Hardening, false));
    let toml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.toml"),
    )
    .unwrap();
    let line = toml.lines().position(|l| l == "HTTP 400").unwrap() + 1;
    assert!(
        case.to_string().contains(&format!("todo.toml:{line}:1: `HTTP 400`: expected status 400, got 201")),
        "{case}"
    );
}

#[test]
fn a_request_without_answer_stops_the_iteration() {
    let s = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.hurl"),
        &[],
    )
    .unwrap();
    let mut todos = Todos::default();
    let mut send = |e: &Entry, r: &Request| {
        if e.method.as_ref() == "GET" {
            Err("connection refused".to_owned())
        } else {
            todos.handle(Fault::None, e, r)
        }
    };
    let v = verify(
        &s,
        Aimed { target: Some("http://todo.test"), routes: &Routes::at(&s, "http://todo.test").unwrap() },
        &[],
        1,
        false,
        &mut send,
        &mut |_| Ok(()),
    );
    // Without [[verify]] cases each flow is a core case.
    assert_eq!((v.cases.len(), v.cases[0].level), (1, Level::Core));
    assert!(!v.passed());
    let steps = &v.cases[0].steps;
    assert_eq!(steps.len(), 2);
    // Which request had no answer is said as a failed check is: at its file:line:col.
    let why = steps[1].error.as_deref().unwrap();
    assert!(why.ends_with("todo.hurl:14:1: connection refused"), "{why}");
}

#[test]
fn a_failed_capture_stops_the_iteration_where_the_variable_is_needed() {
    let s = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.hurl"),
        &[],
    )
    .unwrap();
    let mut send = |_: &Entry, _: &Request| Ok(Reply { status: 201, body: "{}".into() });
    let v = verify(
        &s,
        Aimed { target: Some("http://todo.test"), routes: &Routes::at(&s, "http://todo.test").unwrap() },
        &[],
        1,
        false,
        &mut send,
        &mut |_| Ok(()),
    );
    let steps = &v.cases[0].steps;
    assert_eq!(steps.len(), 2);
    assert!(
        steps[0]
            .failures
            .iter()
            .any(|f| matches!(&f.kind, crate::eval::FailureKind::Capture { name } if name == "todo_id"))
    );
    assert!(
        steps[1].error.as_deref().unwrap().contains("todo.hurl:14:24: variable `todo_id` has no value"),
        "{:?}",
        steps[1]
    );
}

/// A counter that starts at `start`: `GET /n` reads it, `POST /n` adds one and answers it;
/// with `broken`, `GET /n` answers 500.
fn counter(start: i64, broken: bool) -> impl FnMut(&Entry, &Request) -> Result<Reply, String> {
    let mut n = start;
    move |e, _| {
        if e.method.as_ref() == "POST" {
            n += 1;
        } else if broken {
            return Ok(Reply { status: 500, body: "{}".into() });
        }
        Ok(Reply { status: 200, body: format!("{{\"n\": {n}}}") })
    }
}

const COUNTER: &str = "[variables]\nn1 = { expr = \"n + 1\" }\n[reset]\nby = \"contestant\"\n[[flow]]\nhurl = \"GET {{base_url}}/n\"\n[[verify]]\nname = \"read\"\nclean_store = true\nclean_values = { n = 0 }\nhurl = '''\nGET {{base_url}}/n\nHTTP 200\n[Captures]\nn: jsonpath \"$.n\"\n'''\n[[verify]]\nname = \"write\"\nhurl = '''\nPOST {{base_url}}/n\nHTTP 200\n[Asserts]\njsonpath \"$.n\" == {{n1}}\n'''\n";

fn run_counter(start: i64, broken: bool, store_emptied: bool) -> Verification {
    let s = Scenario::parse("c.toml", COUNTER, Path::new("."), "c", &[]).unwrap();
    let mut send = counter(start, broken);
    verify(
        &s,
        Aimed { target: Some("http://c.test"), routes: &Routes::at(&s, "http://c.test").unwrap() },
        &[],
        1,
        store_emptied,
        &mut send,
        &mut |_| Err("no command".into()),
    )
}

#[test]
fn a_later_case_uses_what_an_earlier_one_captured() {
    // Not known to be empty: judged from the count read, whatever it is.
    for start in [0, 5] {
        let v = run_counter(start, false, false);
        assert!(v.cases.iter().all(CaseResult::passed), "{start}: {v:?}");
    }
    assert!(run_counter(0, false, true).cases.iter().all(CaseResult::passed));
}

#[test]
fn on_an_emptied_store_the_clean_value_is_held_and_judges_the_rest() {
    let v = run_counter(2, false, true);
    let read = &v.cases[0];
    assert_eq!(read.steps.last().unwrap().name, "clean store");
    let text = read.to_string();
    assert!(
        text.contains("c.toml:10:16: on a store emptied before verification `n` must be 0, got 2"),
        "{text}"
    );
    // The write answers 3 where the contract says 1 (judged from 0, not from 2).
    let write = v.cases[1].to_string();
    assert!(write.contains("actual value is 3"), "{write}");
    assert!(
        write.contains(
            "judged from `n` = 0, its value on a store emptied before verification; the store said 2"
        ),
        "{write}"
    );
    assert!(!v.passed());
}

#[test]
fn a_failed_read_leaves_the_expression_without_value_and_says_why() {
    let v = run_counter(0, true, false);
    assert!(!v.cases[0].passed());
    let write = v.cases[1].to_string();
    assert!(write.contains("variable `n1` has no value (`n1` = `(n + 1)`: `n` has no value)"), "{write}");
    // On an emptied store the contract's value stands in for the failed read.
    let v = run_counter(0, true, true);
    assert!(v.cases[1].passed(), "{}", v.cases[1]);
}
