//! Redirects under load, against a small site of the test's own
//! (`stackbench_testkit::site`): a request whose `[Options]` say `location: true` sends
//! each hop as a request of its own, counted under `<request> → hop N`; only the last
//! answer is judged. A `POST` answered 303 goes on as a `GET` without its body, a 307
//! keeps both, the jar's cookies set on a hop go along; a loop stops at `max-redirs` and a
//! `Location` to another origin is never sent: each counted `check` under the hop's name,
//! with why.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use stackbench_load::{LoadOptions, RunRecord, Stop, run};
use stackbench_record::Named;
use stackbench_testkit::site::{Answer, Asked, start};

/// The site: `POST /form` sets `sid` and answers 303 to `/done`, which wants a `GET`
/// without a body and the cookie; `POST /keep` answers 307 to `/kept`, which wants the
/// same `POST` and body; `/loop` redirects to itself; `/away` to another origin. It
/// counts what reaches `/away`'s target (nothing must).
fn site() -> (std::net::SocketAddr, Arc<AtomicU64>) {
    let strays = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&strays);
    let to = |status: u16, location: &str| Answer { status, ..Answer::default() }.with("Location", location);
    let addr = start(move |a: &Asked| match (a.method.as_str(), a.path.as_str()) {
        ("POST", "/form") => to(303, "/done").with("Set-Cookie", "sid=s1; Path=/"),
        ("GET", "/done") => {
            let cookie = a.header("cookie") == Some("sid=s1");
            let bodiless = a.body.is_empty() && a.header("content-type").is_none();
            let status = if cookie && bodiless { 200 } else { 400 };
            Answer::json(status, &json!({"done": cookie && bodiless}))
        }
        ("POST", "/keep") => to(307, "/kept"),
        ("POST", "/kept") => Answer::json(if a.body == b"x=1" { 200 } else { 400 }, &json!({})),
        ("GET", "/loop") => to(302, "/loop"),
        ("GET", "/away") => to(302, "http://localhost:1/elsewhere"),
        _ => {
            counted.fetch_add(1, Ordering::SeqCst);
            Answer::json(404, &json!({}))
        }
    });
    (addr, strays)
}

/// A load of `text` (a `.hurl` file) at `addr`: one user, `n` iterations.
fn load(text: &str, addr: std::net::SocketAddr, n: u64) -> RunRecord {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("redirects.hurl");
    std::fs::write(&file, text).unwrap();
    let o = LoadOptions {
        scenario_file: Some(file),
        requests: Some(n),
        threads: Some(1),
        connections: Some(1),
        ..LoadOptions::default()
    };
    let spec = o.to_spec(&format!("http://{addr}")).unwrap();
    stackbench_testkit::record::valid(run(&spec, &Stop::new()).unwrap())
}

fn names(r: &RunRecord) -> Vec<&str> {
    r.per_request.iter().map(|n| n.name.as_str()).collect()
}

fn named<'r>(r: &'r RunRecord, name: &str) -> &'r Named {
    r.per_request.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no {name:?} in {:?}", names(r)))
}

#[test]
fn each_hop_is_a_request_of_its_own_and_the_last_answer_is_judged() {
    let (addr, strays) = site();
    let file = "POST {{base_url}}/form\n[Options]\nlocation: true\n```a=1```\nHTTP 200\n[Asserts]\n\
                redirects count == 1\nurl endsWith \"/done\"\njsonpath \"$.done\" == true\n\n\
                POST {{base_url}}/keep\n[Options]\nlocation: true\n```x=1```\nHTTP 200\n";
    let r = load(file, addr, 6);
    assert_eq!(r.summary.errors, 0, "{:?} {:?}", r.errors, r.per_request);
    // The hops never sent (2 to 51) are left out of the record.
    assert_eq!(names(&r), ["POST /form", "POST /form → hop 1", "POST /keep", "POST /keep → hop 1"]);
    for n in &r.per_request {
        assert_eq!((n.requests, n.ok), (6, 6), "{n:?}");
    }
    assert_eq!(r.iterations.as_ref().unwrap().requests, 6);
    assert_eq!(r.summary.requests, 24);
    assert_eq!(strays.load(Ordering::SeqCst), 0);

    // Judged on the last answer: a status the hop does not give fails, on the hop's name.
    let r = load("POST {{base_url}}/form\n[Options]\nlocation: true\nHTTP 302\n", addr, 3);
    assert_eq!(named(&r, "POST /form").ok, 3, "{:?}", r.per_request);
    assert_eq!(named(&r, "POST /form → hop 1").errors.get("check"), Some(&3), "{:?}", r.per_request);
}

#[test]
fn a_loop_stops_at_max_redirs_and_another_origin_is_never_sent() {
    let (addr, strays) = site();
    let r = load("GET {{base_url}}/loop\n[Options]\nlocation: true\nmax-redirs: 2\nHTTP 200\n", addr, 4);
    assert_eq!(names(&r), ["GET /loop", "GET /loop → hop 1", "GET /loop → hop 2", "GET /loop → hop 3"]);
    let sent: Vec<u64> = r.per_request.iter().map(|n| n.ok).collect();
    assert_eq!(sent, [4, 4, 4, 0], "{:?}", r.per_request);
    let past = named(&r, "GET /loop → hop 3");
    assert_eq!(past.errors.get("check"), Some(&4), "{past:?}");
    assert_eq!(past.not_sent.len(), 1, "{past:?}");
    assert!(past.not_sent[0].reason.contains("too many redirects: 2 followed"), "{past:?}");
    assert_eq!(r.iterations.as_ref().unwrap().errors.get("check"), Some(&4));

    let r = load("GET {{base_url}}/away\n[Options]\nlocation: true\nHTTP 200\n", addr, 3);
    assert_eq!(names(&r), ["GET /away", "GET /away → hop 1"]);
    let away = named(&r, "GET /away → hop 1");
    assert_eq!((away.ok, away.errors.get("check")), (0, Some(&3)), "{away:?}");
    let why = &away.not_sent[0].reason;
    assert!(why.contains("redirects.hurl:1:1") && why.contains("http://localhost:1/elsewhere"), "{why}");
    assert!(why.contains("leaves the file's origins"), "{why}");
    assert_eq!(strays.load(Ordering::SeqCst), 0);
}

#[test]
fn redirect_options_under_load_are_bounded_and_written() {
    let (addr, _) = site();
    for (options, says) in [
        ("max-redirs: -1\nlocation: true\n", "at most 50 redirects"),
        ("location: {{follow}}\n", "write its value, not a template"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.hurl");
        std::fs::write(&file, format!("GET {{{{base_url}}}}/loop\n[Options]\n{options}HTTP 200\n")).unwrap();
        let o = LoadOptions {
            scenario_file: Some(file),
            variable: vec!["follow=true".into()],
            ..LoadOptions::default()
        };
        let err = o.to_spec(&format!("http://{addr}")).unwrap_err().to_string();
        assert!(err.contains("bad.hurl:3:1") && err.contains(says), "{err}");
    }
}
