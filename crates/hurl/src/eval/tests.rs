//! The issue's todo example run against fake answers, right and wrong, and
//! each predicate on values that satisfy it and values that do not.

use std::fmt::Write as _;

use super::*;
use crate::parse::parse;
use crate::template::{Kind, Vars};

mod compiled;

struct Fake {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    body: String,
}

impl Answer for Fake {
    fn status(&self) -> u16 {
        self.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).nth(nth).map(|(_, v)| *v)
    }
    fn body(&self) -> &[u8] {
        self.body.as_bytes()
    }
}

fn fake(status: u16, body: &str) -> Fake {
    Fake { status, headers: vec![("Content-Type", "application/json")], body: body.to_owned() }
}

/// Runs every entry of `file` against `answers` in order; returns the rendered requests and failures.
fn run(text: &str, answers: &[Fake]) -> (Vec<Request>, Vec<Failure>) {
    let f = parse("t.hurl", text).unwrap();
    crate::check_variables(&f, |n| n == "base_url").unwrap();
    let mut vars = Vars::new(42);
    vars.set("base_url", "http://127.0.0.1:8080", Kind::String);
    let (mut reqs, mut failures, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    for (e, a) in f.entries.iter().zip(answers) {
        let mut req = Request::default();
        e.render(&mut vars, &mut req).unwrap();
        reqs.push(req);
        e.check(a, &mut vars, &mut scratch, &mut failures);
    }
    (reqs, failures)
}

#[test]
fn todo_example_right_answers_pass() {
    let answers = [
        fake(201, r#"{"id": 17, "title": "buy milk x", "done": false}"#),
        fake(200, r#"{"id": 17, "title": "buy milk x", "done": false}"#),
        fake(400, r#"{"error": "empty title"}"#),
    ];
    let (reqs, failures) = run(crate::parse::tests::TODO, &answers);
    assert_eq!(failures, []);
    assert_eq!(reqs[0].url, b"http://127.0.0.1:8080/todos");
    let body: serde_json::Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let title = body["title"].as_str().unwrap();
    assert!(title.starts_with("buy milk ") && title.len() == 9 + 36, "{title}");
    assert_eq!(reqs[0].headers, b"Content-Type: application/json\r\nAccept: */*\r\n");
    // The capture feeds the next entry's URL.
    assert_eq!(reqs[1].url, b"http://127.0.0.1:8080/todos/17");
    assert_eq!(reqs[1].body, b"");
    assert_eq!(reqs[2].body, br#"{"title": ""}"#);
}

#[test]
fn todo_example_wrong_answers_fail_where_written() {
    let answers = [
        fake(201, r#"{"id": "17", "title": "buy milk x", "done": true}"#),
        fake(200, r#"{"id": 17, "title": "other"}"#),
        fake(201, r#"{"id": 18}"#),
    ];
    let (_, failures) = run(crate::parse::tests::TODO, &answers);
    let got: Vec<(u32, &str)> = failures.iter().map(|f| (f.pos.line, f.source.as_str())).collect();
    assert_eq!(
        got,
        [
            (10, r#"jsonpath "$.id" isInteger"#),
            (11, r#"jsonpath "$.done" == false"#),
            (17, r#"jsonpath "$.title" == "{{todo_title}}""#),
            (23, "HTTP 400"),
        ]
    );
    assert_eq!(failures[3].kind, FailureKind::Status { expected: 400, actual: 201 });
    assert_eq!(failures[1].kind, FailureKind::Assert { actual: "true".into() });
    assert_eq!(failures[2].kind, FailureKind::Assert { actual: "\"other\"".into() });
    assert_eq!(
        failures[2].to_string(),
        "17:1: `jsonpath \"$.title\" == \"{{todo_title}}\"`: actual value is \"other\""
    );
}

#[test]
fn missing_capture_and_non_json_body() {
    let text = "GET http://h/a\nHTTP 200\n[Captures]\nid: jsonpath \"$.id\"\n[Asserts]\njsonpath \"$.x\" exists\nbody contains \"ok\"\n";
    let f = parse("t.hurl", text).unwrap();
    let (mut vars, mut scratch, mut failures) = (Vars::new(1), Vec::new(), Vec::new());
    f.entries[0].check(&fake(200, "ok, not json"), &mut vars, &mut scratch, &mut failures);
    // As in Hurl, a capture that fails ends the entry's checks.
    assert_eq!(
        failures.iter().map(|f| (f.pos.line, &f.kind)).collect::<Vec<_>>(),
        [(4, &FailureKind::NotJson)]
    );
    failures.clear();
    f.entries[0].check(&fake(200, r#"{"x": 1}"#), &mut vars, &mut scratch, &mut failures);
    assert_eq!(
        failures.iter().map(|f| (f.pos.line, &f.kind)).collect::<Vec<_>>(),
        [(4, &FailureKind::Capture { name: "id".into() })]
    );
    failures.clear();
    f.entries[0].check(&fake(200, r#"{"id": 1}"#), &mut vars, &mut scratch, &mut failures);
    assert_eq!(
        failures.iter().map(|f| (f.pos.line, &f.kind)).collect::<Vec<_>>(),
        [
            (6, &FailureKind::Assert { actual: "none (nothing found)".into() }),
            (7, &FailureKind::Assert { actual: "\"{\\\"id\\\": 1}\"".into() })
        ]
    );
}

/// Issue 45 #8: overlapping descendant steps on a 721-byte answer (`{"a":` 120 deep) took
/// 15 GB in a minute; the check now fails at the bound of one evaluation, and a path that
/// stays within it is still judged on the same answer.
#[test]
fn a_jsonpath_past_its_bound_fails_its_check() {
    let text = "GET http://h/a\nHTTP 200\n[Asserts]\njsonpath \"$..a..a..a..a..a..a\" count > 0\njsonpath \"$..a..a\" count == 7140\n";
    let f = parse("t.hurl", text).unwrap();
    let (mut vars, mut scratch, mut failures) = (Vars::new(1), Vec::new(), Vec::new());
    let body = crate::jsonpath::tests::nested(120);
    f.entries[0].check(&fake(200, &body), &mut vars, &mut scratch, &mut failures);
    let limit = crate::jsonpath::MIN_BUDGET;
    assert_eq!(
        failures.iter().map(|f| (f.pos.line, &f.kind)).collect::<Vec<_>>(),
        [(4, &FailureKind::TooMuch(crate::jsonpath::TooMuch { limit }))]
    );
    let said = failures[0].to_string();
    assert!(said.contains("more than 1000000 values") && said.contains("per byte of the answer"), "{said}");
}

/// Each assert line holds on `pass` and fails on `fail`.
fn predicate_case(assert: &str, pass: &str, fail: Option<&str>) {
    let capture = if assert.contains("{{k}}") { "[Captures]\nk: jsonpath \"$.k\"\n" } else { "" };
    let text = format!("GET http://h\nHTTP *\n{capture}[Asserts]\n{assert}\n");
    let f = parse("p.hurl", &text).unwrap_or_else(|e| panic!("{assert}: {e}"));
    let e = &f.entries[0];
    for (body, want) in [(Some(pass), true), (fail, false)] {
        let Some(body) = body else { continue };
        let (mut vars, mut scratch, mut failures) = (Vars::new(1), Vec::new(), Vec::new());
        let mut a = fake(201, body);
        a.headers.push(("X-Id", "abc-42"));
        e.check(&a, &mut vars, &mut scratch, &mut failures);
        failures.retain(|f| !matches!(f.kind, FailureKind::Capture { .. }));
        assert_eq!(failures.is_empty(), want, "{assert} on {body}: {failures:?}");
    }
}

#[test]
fn predicates() {
    let cases: &[(&str, &str, &str)] = &[
        ("jsonpath \"$.a\" == 1", r#"{"a": 1}"#, r#"{"a": 2}"#),
        ("jsonpath \"$.a\" == 1.5", r#"{"a": 1.5}"#, r#"{"a": 1}"#),
        ("jsonpath \"$.a\" == \"x\"", r#"{"a": "x"}"#, r#"{"a": "y"}"#),
        ("jsonpath \"$.a\" == null", r#"{"a": null}"#, r#"{"a": 0}"#),
        ("jsonpath \"$.a\" != 1", r#"{"a": 2}"#, r#"{"a": 1}"#),
        ("jsonpath \"$.a\" > 1", r#"{"a": 2}"#, r#"{"a": 1}"#),
        ("jsonpath \"$.a\" >= 1", r#"{"a": 1}"#, r#"{"a": 0.5}"#),
        ("jsonpath \"$.a\" < 1", r#"{"a": 0}"#, r#"{"a": 1}"#),
        ("jsonpath \"$.a\" <= 1", r#"{"a": 1}"#, r#"{"a": 3}"#),
        ("jsonpath \"$.a\" > \"b\"", r#"{"a": "c"}"#, r#"{"a": "a"}"#),
        ("jsonpath \"$.a\" exists", r#"{"a": null}"#, r#"{"b": 1}"#),
        ("jsonpath \"$.a\" not exists", r#"{"b": 1}"#, r#"{"a": 1}"#),
        ("jsonpath \"$.a\" isInteger", r#"{"a": 3}"#, r#"{"a": 3.5}"#),
        ("jsonpath \"$.a\" isFloat", r#"{"a": 3.5}"#, r#"{"a": 3}"#),
        ("jsonpath \"$.a\" isString", r#"{"a": "3"}"#, r#"{"a": 3}"#),
        ("jsonpath \"$.a\" isBoolean", r#"{"a": false}"#, r#"{"a": "false"}"#),
        ("jsonpath \"$.a\" isCollection", r#"{"a": []}"#, r#"{"a": "[]"}"#),
        ("jsonpath \"$.a\" isEmpty", r#"{"a": []}"#, r#"{"a": [1]}"#),
        ("jsonpath \"$.a\" contains \"il\"", r#"{"a": "milk"}"#, r#"{"a": "bread"}"#),
        ("jsonpath \"$.a\" contains \"milk\"", r#"{"a": ["milk", "eggs"]}"#, r#"{"a": ["milky"]}"#),
        ("jsonpath \"$.a[*].n\" contains \"x\"", r#"{"a": [{"n": "x"}]}"#, r#"{"a": [{"n": "y"}]}"#),
        ("jsonpath \"$.a\" startsWith \"mi\"", r#"{"a": "milk"}"#, r#"{"a": "bread"}"#),
        ("jsonpath \"$.a\" endsWith \"lk\"", r#"{"a": "milk"}"#, r#"{"a": "bread"}"#),
        ("jsonpath \"$.a\" matches /^m\\w+$/", r#"{"a": "milk"}"#, r#"{"a": "a milk"}"#),
        ("jsonpath \"$.a\" count == 2", r#"{"a": [1, 2]}"#, r#"{"a": [1]}"#),
        ("jsonpath \"$.a[*].n\" count == 2", r#"{"a": [{"n": 1}, {"n": 2}]}"#, r#"{"a": [{"n": 1}]}"#),
        ("jsonpath \"$.a[*].n\" includes 2", r#"{"a": [{"n": 1}, {"n": 2}]}"#, r#"{"a": [{"n": 1}]}"#),
        ("jsonpath \"$.a\" == {{k}}", r#"{"a": 7, "k": 7}"#, r#"{"a": 7, "k": 8}"#),
        ("jsonpath \"$.a\" == \"id-{{k}}\"", r#"{"a": "id-x", "k": "x"}"#, r#"{"a": "id-x", "k": "y"}"#),
        ("regex \"\\\"n\\\": (\\\\d+)\" == \"12\"", r#"{"n": 12}"#, r#"{"n": 13}"#),
        ("body contains \"milk\"", r#"{"a": "milk"}"#, r#"{"a": "bread"}"#),
    ];
    for (assert, pass, fail) in cases {
        predicate_case(assert, pass, Some(fail));
    }
    // Status and header asserts, whose values do not come from the body.
    let pairs = [
        ("status == 201", "status == 200"),
        ("status >= 201", "status > 201"),
        ("header \"x-id\" == \"abc-42\"", "header \"x-id\" == \"abc-43\""),
        ("header \"X-Id\" exists", "header \"X-Id\" not exists"),
        ("header \"X-None\" not exists", "header \"X-None\" exists"),
        ("header \"set-cookie\" count == 2", "header \"Set-Cookie\" count == 1"),
        ("header \"Set-Cookie\" contains \"b=2\"", "header \"Set-Cookie\" contains \"b=\""),
        ("header \"Set-Cookie\" isCollection", "header \"X-Id\" isCollection"),
    ];
    for (holds, fails) in pairs {
        for (assert, want) in [(holds, 0), (fails, 1)] {
            let f = parse("p.hurl", &format!("GET http://h\nHTTP *\n[Asserts]\n{assert}\n")).unwrap();
            let mut failures = Vec::new();
            let mut a = fake(201, "{}");
            a.headers.extend([("X-Id", "abc-42"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]);
            f.entries[0].check(&a, &mut Vars::new(1), &mut Vec::new(), &mut failures);
            assert_eq!(failures.len(), want, "{assert}");
        }
    }
}

#[test]
fn request_headers_and_default_content_type() {
    let f = parse("r.hurl", "PUT {{base_url}}/x\nX-A: {{a}}\n{\"n\": {{n}}, \"s\": {{a}}}\n").unwrap();
    let mut vars = Vars::new(1);
    vars.set("base_url", "http://h", Kind::String);
    vars.set("a", "q\"", Kind::String);
    vars.set("n", "5", Kind::Integer);
    let mut req = Request::default();
    f.entries[0].render(&mut vars, &mut req).unwrap();
    assert_eq!(req.headers, b"X-A: q\"\r\nContent-Type: application/json\r\nAccept: */*\r\n");
    assert_eq!(req.body, br#"{"n": 5, "s": "q\""}"#);
    // Buffers are reused: a second render replaces, it does not append.
    f.entries[0].render(&mut vars, &mut req).unwrap();
    assert_eq!(req.body, br#"{"n": 5, "s": "q\""}"#);
}

/// Predicates of every kind, for the property below; `{{c0}}` is the entry's first capture.
const PREDICATES: &[&str] = &[
    "== 1",
    "== 1.5",
    "== \"a\"",
    "== null",
    "== true",
    "== {{c0}}",
    "!= \"b\"",
    "> 0",
    "<= \"b\"",
    "startsWith \"a\"",
    "endsWith \"c\"",
    "contains \"a\"",
    "includes 1",
    "exists",
    "not exists",
    "isEmpty",
    "isInteger",
    "isFloat",
    "isBoolean",
    "isString",
    "isCollection",
    "count == 2",
];

proptest::proptest! {
    /// On any body, the one pass over the answer and the whole document give the same
    /// failures (kinds, messages, actual values) and the same captured variables, with
    /// the asserts and without.
    #[test]
    fn one_pass_checks_equal_the_whole_document(
        doc in crate::jsonpath::tests::arb_json(),
        broken in proptest::option::of(proptest::prelude::any::<proptest::sample::Index>()),
        paths in crate::jsonpath::stream::tests::arb_paths(),
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..6),
    ) {
        let mut text = String::from("GET http://h\nHTTP *\n[Captures]\n");
        for (i, p) in paths.iter().enumerate() {
            writeln!(text, "c{i}: jsonpath \"{p}\"").unwrap();
        }
        text += "[Asserts]\n";
        for (i, pick) in picks.iter().enumerate() {
            let path = &paths[i % paths.len()];
            let filter = if i % 3 == 2 { " count" } else { "" };
            writeln!(text, "jsonpath \"{path}\"{filter} {}", PREDICATES[pick.index(PREDICATES.len())]).unwrap();
        }
        let f = parse("p.hurl", &text).unwrap();
        let mut body = serde_json::to_string(&doc).unwrap();
        if let Some(at) = broken {
            body.truncate(at.index(body.len() + 1));
        }
        let answer = fake(200, &body);
        let compiled = Compiled::default();
        let run = |one_pass: bool, asserts: bool| {
            let (mut vars, mut failures) = (Vars::new(1), Vec::new());
            let c = one_pass.then_some(&compiled);
            f.entries[0].check_read(c, &answer, &mut vars, &mut Vec::new(), &mut failures, asserts);
            let captured: Vec<_> = (0..paths.len()).map(|i| vars.get(&format!("c{i}")).cloned()).collect();
            (failures, captured)
        };
        // Off the check's turn first: the plan is worked out then, and must serve both.
        proptest::prop_assert_eq!(run(true, false), run(false, false));
        proptest::prop_assert_eq!(run(true, true), run(false, true));
    }
}

proptest::proptest! {
    /// The direct search agrees with `str::contains`, short haystacks and long.
    #[test]
    fn contains_is_str_contains(h in "[ab\\u{e9}]{0,80}", n in "[ab\\u{e9}]{0,4}") {
        proptest::prop_assert_eq!(contains(&h, &n), h.contains(&*n));
    }
}

/// Predicates the compiled checks test themselves, and others they leave to [`holds`], for
/// the property below; the values of [`crate::jsonpath::tests::arb_json`] meet them often.
const QUICK_PREDICATES: &[&str] = &[
    "exists",
    "not exists",
    "isInteger",
    "isString",
    "isBoolean",
    "== 0",
    "== \"\"",
    "== \"a\"",
    "contains \"a\"",
    "not contains \"b\"",
    "!= 1",
    ">= 0",
    "startsWith \"a\"",
    "isEmpty",
    "== {{c0}}",
];

/// Whether the compiled checks pass `answer` for the first entry of `f`, and the variables
/// they capture (`None` when the entry is not compiled).
fn quick(
    f: &crate::model::HurlFile,
    answer: &impl Answer,
    captures: usize,
) -> Option<(bool, Vec<Option<crate::template::Value>>)> {
    quick_laid_out(f, answer, captures, 0)
}

/// [`quick`], the checks worked out with variables that hold `pad` others before the
/// captures, and run with variables that hold `2 - pad`: the captures' slots are the same
/// only when `pad` is 1.
fn quick_laid_out(
    f: &crate::model::HurlFile,
    answer: &impl Answer,
    captures: usize,
    pad: usize,
) -> Option<(bool, Vec<Option<crate::template::Value>>)> {
    let r = f.entries[0].response.as_ref()?;
    let plan = plan(r)?;
    let mut first = Vars::new(1);
    for i in 0..pad {
        first.index(&format!("pad{i}"));
    }
    let quick = Quick::new(r, &plan, &mut first)?;
    let mut vars = Vars::new(1);
    for i in 0..2usize.saturating_sub(pad) {
        vars.index(&format!("pad{i}"));
    }
    let passed = quick.passes(r, &plan, answer, &mut vars, &mut Vec::new(), true);
    Some((passed, (0..captures).map(|i| vars.get(&format!("c{i}")).cloned()).collect()))
}

proptest::proptest! {
    /// The compiled checks pass only answers the general evaluator finds nothing wrong with,
    /// and capture what it captures; the load engine's checks equal the general evaluator's
    /// whether they pass or not.
    #[test]
    fn compiled_checks_pass_only_what_the_evaluator_passes(
        doc in crate::jsonpath::tests::arb_json(),
        paths in crate::jsonpath::stream::tests::arb_paths(),
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..5),
        pad in 0..3usize,
        status in proptest::prop_oneof![proptest::strategy::Just(200u16), proptest::strategy::Just(201)],
        content_type in proptest::prop_oneof![
            proptest::strategy::Just("application/json"),
            proptest::strategy::Just("text/plain; charset=latin1; x=\u{e9}"),
            proptest::strategy::Just("Application/JSON; q=1"),
        ],
        header_check in proptest::prop_oneof![
            proptest::strategy::Just("contains \"json\""),
            proptest::strategy::Just("== \"application/json\""),
            proptest::strategy::Just("startsWith \"app\""),
            proptest::strategy::Just("not exists"),
            proptest::strategy::Just("matches /^(?i)[ \\t]*application\\/json[ \\t]*(;.*)?$/"),
            proptest::strategy::Just("not matches /plain/"),
            proptest::strategy::Just("matches /\\w=\\w/"),
        ],
        found in proptest::bool::weighted(0.5),
        walks in proptest::collection::vec(
            proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 0..4),
            1..crate::jsonpath::stream::MAX,
        ),
    ) {
        // Half the cases capture values the document has, under checks that hold: random paths
        // and checks seldom let every capture be found, and the compiled captures are compared
        // with the evaluator's only when all the checks pass.
        let (paths, status, content_type, header_check, predicates) = if found {
            let walked = walks.iter().map(|w| crate::jsonpath::tests::path_to(&doc, w).0).collect();
            (walked, 200, "application/json", "contains \"json\"", &["exists"][..])
        } else {
            (paths, status, content_type, header_check, QUICK_PREDICATES)
        };
        let mut text = String::from("GET http://h\nHTTP 200\n[Captures]\n");
        for (i, p) in paths.iter().enumerate() {
            writeln!(text, "c{i}: jsonpath \"{p}\"").unwrap();
        }
        writeln!(text, "[Asserts]\nheader \"Content-Type\" {header_check}\nstatus == 200").unwrap();
        for (i, pick) in picks.iter().enumerate() {
            let path = &paths[i % paths.len()];
            writeln!(text, "jsonpath \"{path}\" {}", predicates[pick.index(predicates.len())]).unwrap();
        }
        let f = parse("q.hurl", &text).unwrap();
        let answer = Fake { status, headers: vec![("Content-Type", content_type)], body: serde_json::to_string(&doc).unwrap() };
        let compiled = Compiled::default();
        let general = |one_pass: bool| {
            let (mut vars, mut failures) = (Vars::new(1), Vec::new());
            let c = one_pass.then_some(&compiled);
            f.entries[0].check_read(c, &answer, &mut vars, &mut Vec::new(), &mut failures, true);
            let captured: Vec<_> = (0..paths.len()).map(|i| vars.get(&format!("c{i}")).cloned()).collect();
            (failures, captured)
        };
        let (failures, captured) = general(false);
        if let Some((true, quick_captured)) = quick_laid_out(&f, &answer, paths.len(), pad) {
            proptest::prop_assert_eq!(&failures, &vec![]);
            proptest::prop_assert_eq!(&quick_captured, &captured);
        }
        proptest::prop_assert_eq!(general(true), (failures, captured));
    }
}

/// `Set-Cookie` values for the property below: repeated names, attributes in any case, an
/// unreadable date, non-cookies.
const SET_COOKIES: &[&str] = &[
    "sid=abc; Path=/; HttpOnly",
    "sid=abd",
    " sid = ab ; path=/a; SECURE; Max-Age=60",
    "b=1; Domain=example.test; SameSite=Lax; Expires=Wed, 13 Jan 2021 22:23:01 GMT",
    "b=2; Max-Age=x; Expires=soon",
    "c=; Domain; Path",
    "novalue",
    "=x",
    "\x0bsid=abc\t; x",
    "sid=ab\u{e9}; Path=/",
    "sid=abc; Path=/\u{e9}",
    "sid=abc\u{3000}",
];

/// `cookie` asserts, compiled or left to [`holds`].
const COOKIE_ASSERTS: &[&str] = &[
    "cookie \"sid\" == \"abc\"",
    "cookie \"sid\" not == \"abd\"",
    "cookie \"sid\" exists",
    "cookie \"sid\" isString",
    "cookie \"sid\" not isInteger",
    "cookie \"sid\" == 1",
    "cookie \"sid[Value]\" contains \"a\"",
    "cookie \"sid[Path]\" == \"/\"",
    "cookie \"sid[Secure]\" exists",
    "cookie \"sid[HttpOnly]\" not exists",
    "cookie \"sid[Max-Age]\" == 60",
    "cookie \"b[Expires]\" exists",
    "cookie \"b[Domain]\" == \"example.test\"",
    "cookie \"b[SameSite]\" startsWith \"L\"",
    "cookie \"b[Max-Age]\" not exists",
    "cookie \"c\" isEmpty",
    "cookie \"c[Domain]\" exists",
    "cookie \"none\" not exists",
];

proptest::proptest! {
    /// The compiled `cookie` checks pass only answers the general evaluator passes, and the
    /// load engine's checks of cookies equal the general evaluator's.
    #[test]
    fn compiled_cookie_checks_judge_as_the_evaluator(
        set in proptest::strategy::Strategy::prop_shuffle(proptest::sample::subsequence(SET_COOKIES, 0..5)),
        picks in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 1..4),
    ) {
        let mut text = String::from("GET http://h\nHTTP 200\n[Captures]\nc0: jsonpath \"$.count\"\n[Asserts]\n");
        for pick in &picks {
            writeln!(text, "{}", COOKIE_ASSERTS[pick.index(COOKIE_ASSERTS.len())]).unwrap();
        }
        let f = parse("c.hurl", &text).unwrap();
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend(set.iter().map(|v| ("Set-Cookie", *v)));
        let answer = Fake { status: 200, headers, body: r#"{"count":1}"#.to_owned() };
        let compiled = Compiled::default();
        let general = |one_pass: bool| {
            let (mut vars, mut failures) = (Vars::new(1), Vec::new());
            let c = one_pass.then_some(&compiled);
            f.entries[0].check_read(c, &answer, &mut vars, &mut Vec::new(), &mut failures, true);
            (failures, vars.get("c0").cloned())
        };
        let (failures, captured) = general(false);
        let (passed, quick_captured) = quick(&f, &answer, 1).expect("compiled");
        if passed {
            proptest::prop_assert_eq!(&failures, &vec![]);
            proptest::prop_assert_eq!(&quick_captured[0], &captured);
        }
        proptest::prop_assert_eq!(general(true), (failures, captured));
    }
}

/// bench/load/dummy-like.hurl's checks, compiled: a right answer passes them, a wrong one
/// is judged by the general evaluator, with its failures.
#[test]
fn compiled_checks_judge_the_benchmarked_entry() {
    let f = parse(
        "d.hurl",
        "POST http://h/events\n{\"a\": \"{{newUuid}}\"}\nHTTP 200\n[Captures]\nc0: jsonpath \"$.count\"\n[Asserts]\nheader \"Content-Type\" contains \"json\"\njsonpath \"$.count\" == 1\njsonpath \"$.count\" isInteger\n",
    )
    .unwrap();
    let right = fake(200, r#"{"count":1}"#);
    let (passed, captured) = quick(&f, &right, 1).expect("compiled");
    assert!(passed);
    assert_eq!(captured[0].as_ref().map(|v| (v.text.as_str(), v.kind)), Some(("1", Kind::Integer)));
    let wrong = fake(200, r#"{"count":2}"#);
    assert_eq!(quick(&f, &wrong, 1).map(|q| q.0), Some(false));
    let (mut vars, mut failures) = (Vars::new(1), Vec::new());
    f.entries[0].check(&wrong, &mut vars, &mut Vec::new(), &mut failures);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].source, "jsonpath \"$.count\" == 1");
    assert_eq!(vars.get("c0").map(|v| v.text.as_str()), Some("2"));
}

/// bench/load/cookie-like.hurl's checks, compiled: the `cookie` assert is read in place on
/// the answer that passes; a wrong cookie is judged by the general evaluator.
#[test]
fn compiled_checks_judge_the_benchmarked_cookie_entry() {
    let f = parse(
        "c.hurl",
        "POST http://h/session\nHTTP 200\n[Captures]\nc0: jsonpath \"$.count\"\n[Asserts]\ncookie \"sid\" == \"3f2a9c\"\njsonpath \"$.count\" == 1\njsonpath \"$.count\" isInteger\n",
    )
    .unwrap();
    let answer = |cookie: &'static str| Fake {
        status: 200,
        headers: vec![("Content-Type", "application/json"), ("Set-Cookie", cookie)],
        body: r#"{"count":1}"#.to_owned(),
    };
    assert_eq!(quick(&f, &answer("sid=3f2a9c; Path=/; HttpOnly"), 1).map(|q| q.0), Some(true));
    let wrong = answer("sid=other; Path=/");
    assert_eq!(quick(&f, &wrong, 1).map(|q| q.0), Some(false));
    let (mut vars, mut failures) = (Vars::new(1), Vec::new());
    f.entries[0].check(&wrong, &mut vars, &mut Vec::new(), &mut failures);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].source, "cookie \"sid\" == \"3f2a9c\"");
}

/// An answer whose `Set-Cookie` headers are bytes, not all text.
struct RawCookies(Vec<&'static [u8]>);

impl Answer for RawCookies {
    fn status(&self) -> u16 {
        200
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        let cookie = name.eq_ignore_ascii_case("set-cookie").then(|| self.0.get(nth)).flatten();
        std::str::from_utf8(cookie?).ok()
    }
    fn first_set_cookie(&self) -> (Option<&[u8]>, bool) {
        (self.0.first().copied(), self.0.len() > 1)
    }
    fn body(&self) -> &[u8] {
        b"{}"
    }
}

/// A first `Set-Cookie` that is not text sets no cookie the `cookie` query sees, compiled
/// or not (the compiled check reads an ASCII one's bytes; this one is not ASCII).
#[test]
fn a_set_cookie_that_is_not_text_sets_nothing_the_checks_see() {
    let f = parse("c.hurl", "GET http://h\nHTTP 200\n[Asserts]\ncookie \"sid\" == \"abc\"\n").unwrap();
    for (headers, passes) in [
        (vec![&b"sid=abc; Path=/"[..]], true),
        (vec![&b"sid=abc; Path=/\xff"[..]], false),
        (vec![&b"sid=abc; Path=/\xff"[..], b"sid=abc"], false),
        (vec![&b"x=1"[..], b"sid=abc"], true),
    ] {
        let answer = RawCookies(headers);
        let compiled = Compiled::default();
        for c in [None, Some(&compiled)] {
            let mut failures = Vec::new();
            f.entries[0].check_read(c, &answer, &mut Vars::new(1), &mut Vec::new(), &mut failures, true);
            assert_eq!(failures.is_empty(), passes, "{:?}, compiled: {}", answer.0, c.is_some());
        }
        assert!(compiled.is_compiled());
    }
}

/// Renders the second entry of `text` after the first's capture took `value` (as `v`).
fn render_after_capture(text: &str, value: &str) -> Result<Request, crate::template::RenderError> {
    let f = parse("t.hurl", text).unwrap();
    let mut vars = Vars::new(1);
    vars.set("base_url", "http://127.0.0.1:8080", Kind::String);
    let body = serde_json::json!({ "v": value }).to_string();
    f.entries[0].check(&fake(200, &body), &mut vars, &mut Vec::new(), &mut Vec::new());
    let mut req = Request::default();
    f.entries[1].render(&mut vars, &mut req).map(|()| req)
}

/// Issue 45 #4: a value a placeholder's filter makes (`{{v urlDecode}}` of `a%0D%0AEvil: 1`)
/// is held to the same rule as a variable's.
#[test]
fn a_filtered_value_that_would_end_a_line_refuses_the_request() {
    use crate::template::Unwritable;
    let take = "GET {{base_url}}/a\nHTTP 200\n[Captures]\nv: jsonpath \"$.v\"\n\n";
    for second in ["GET {{base_url}}/b\nX-V: {{v urlDecode}}\n", "GET {{base_url}}/{{v urlDecode}}\n"] {
        let e = render_after_capture(&format!("{take}{second}"), "a%0D%0AEvil: 1").unwrap_err();
        assert_eq!((&e.why, e.name.as_str()), (&Unwritable::Byte(b'\r'), "v"), "{second}");
        assert!(e.refused(), "{e}");
    }
    let req =
        render_after_capture(&format!("{take}GET {{{{base_url}}}}/{{{{v urlDecode}}}}\n"), "x%20y").unwrap();
    assert_eq!(req.url, b"http://127.0.0.1:8080/x y");
}

/// Issue 45 #4: a captured CR LF written into a header added a header, and into a URL split
/// the request. A value with a CR, LF or NUL refuses the request, wherever it would go in its
/// line or headers; in a body it is sent as it is.
#[test]
fn a_value_that_would_end_a_line_refuses_the_request() {
    use crate::template::Unwritable;
    let take = "GET {{base_url}}/a\nHTTP 200\n[Captures]\nv: jsonpath \"$.v\"\n\n";
    for (second, at) in [
        ("GET {{base_url}}/b\nX-V: {{v}}\n", (7, 6)),
        ("GET {{base_url}}/b/{{v}}\n", (6, 20)),
        ("GET {{base_url}}/b?q={{v}}\n", (6, 22)),
        ("GET {{base_url}}/b\n[Cookies]\nc: {{v}}\n", (8, 4)),
        ("GET {{base_url}}/b\n[Query]\n{{v}}: 1\n", (8, 1)),
        ("GET {{base_url}}/b\n[Options]\nheader: X-V: {{v}}\n", (8, 14)),
    ] {
        for (value, byte) in [("a\r\nEvil: 1", b'\r'), ("a\nGET /smuggled", b'\n'), ("a\0b", 0)] {
            let e = render_after_capture(&format!("{take}{second}"), value).unwrap_err();
            assert_eq!((&e.why, e.name.as_str()), (&Unwritable::Byte(byte), "v"), "{second} {value:?}");
            assert_eq!((e.pos.line, e.pos.col), at, "{second}");
            assert!(e.to_string().contains("the request is not sent"), "{e}");
        }
    }
    let body =
        render_after_capture(&format!("{take}POST {{{{base_url}}}}/b\n{{\"v\": \"{{{{v}}}}\"}}\n"), "a\r\nb");
    assert_eq!(body.unwrap().body, br#"{"v": "a\r\nb"}"#, "JSON-escaped in a body");
}

/// Issue 45 #11: a 10 MiB URL was sent. The values a request's line and headers carry are
/// bounded; past the bound the request is refused, before the value is written.
#[test]
fn a_head_past_its_bound_refuses_the_request() {
    use crate::template::{MAX_HEAD_VALUES, Unwritable};
    let text = "GET {{base_url}}/a\nHTTP 200\n[Captures]\nv: jsonpath \"$.v\"\n\nGET {{base_url}}/b/{{v}}\nX-V: {{v}}\n";
    let half = "x".repeat(MAX_HEAD_VALUES / 2);
    assert!(render_after_capture(text, &half).is_ok(), "two halves fit");
    let e = render_after_capture(text, &format!("{half}y")).unwrap_err();
    assert_eq!((&e.why, e.pos.line), (&Unwritable::TooLong { max: MAX_HEAD_VALUES }, 7), "{e}");
}

/// Issue 45 #5: a captured absolute URL, or a capture that extends the target's host (`@`,
/// `.`), was followed to another host by `verify`. A value from an answer may write a path,
/// never a host.
#[test]
fn a_host_never_comes_from_an_answer() {
    use crate::template::Unwritable;
    let take = "GET {{base_url}}/a\nHTTP 200\n[Captures]\nv: jsonpath \"$.v\"\n\n";
    for (second, value) in [
        ("GET {{v}}\n", "http://elsewhere.example/x"),
        ("GET {{base_url}}{{v}}\n", "@elsewhere.example/x"),
        ("GET {{base_url}}{{v}}\n", ".elsewhere.example/x"),
        ("GET http://{{v}}/x\n", "elsewhere.example"),
    ] {
        let e = render_after_capture(&format!("{take}{second}"), value).unwrap_err();
        assert_eq!(e.why, Unwritable::Host, "{second} {value}");
    }
    for (second, value) in [
        ("GET {{base_url}}{{v}}\n", "/x@y"),
        ("GET {{base_url}}/{{v}}\n", "a.b@c"),
        ("GET http://h/{{v}}\n", "x"),
    ] {
        assert!(render_after_capture(&format!("{take}{second}"), value).is_ok(), "{second} {value}");
    }
}
