//! Verification of the built-ins through their files, in memory: a dummy server right,
//! lenient and dying, readiness through refusals and timeouts; `bubble-sort`'s two forms
//! against a sorter with each fault ([`bubble`]).

mod bubble;

use super::*;
use crate::client::{Probe, Reply};
use std::sync::Mutex;

/// A dummy contestant in memory: every good event gets {"count":1}, bad ones 400;
/// the first `refuse_first` requests are refused, as a server still starting.
struct DummyServer {
    calls: Mutex<u32>,
    refuse_first: u32,
    /// Answers every POST {"count":1}, whatever its body.
    lenient: bool,
}

fn dummy(refuse_first: u32) -> DummyServer {
    DummyServer { calls: Mutex::new(0), refuse_first, lenient: false }
}

impl Prober for DummyServer {
    fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, .. } = *probe;
        let mut calls = self.calls.lock().unwrap();
        *calls += 1;
        if *calls <= self.refuse_first {
            return Err(ProbeError::Refused);
        }
        let json = b"application/json".to_vec();
        let content_type = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|h| h.1);
        let good =
            content_type == Some("application/json") && stackbench_contract::event::parse_event(body).is_ok();
        let path = crate::url::split(url).map(|(_, path)| path).unwrap_or_default();
        let (status, body, headers) = match (method, path.as_str()) {
            (_, p) if p != "/events" && p != "/events/count" => (404, r#"{"error":"no"}"#, vec![]),
            ("GET", "/events/count") => (200, r#"{"count":1}"#, vec![]),
            ("POST", "/events") if self.lenient => (200, r#"{"count":1}"#, vec![]),
            ("POST", "/events") if body.len() > 65536 => (413, r#"{"error":"big"}"#, vec![]),
            ("POST", "/events") if good => (200, r#"{"count":1}"#, vec![]),
            ("POST", _) => (400, r#"{"error":"field `type` or `timestamp` is bad"}"#, vec![]),
            _ => (405, r#"{"error":"method"}"#, vec![("allow".to_owned(), b"POST".to_vec())]),
        };
        Ok(Reply {
            status,
            content_type: Some(json.clone()),
            headers: [vec![("content-type".to_owned(), json)], headers].concat(),
            grpc_status: None,
            body: body.as_bytes().to_vec(),
            peer: None,
        })
    }
}

#[test]
fn a_correct_dummy_passes_and_is_wrong_as_an_event_log() {
    let server = dummy(0);
    let v = verify(&server, "http://x", Builtin::DUMMY, &VerifyOptions::default(), &mut || None).unwrap();
    assert!(v.passed && v.failures.is_empty(), "{:?}", v.failures);
    assert_eq!(v.cases, 25);
    let opts = VerifyOptions { clean_store: true, ..VerifyOptions::default() };
    let v = verify(&server, "http://x", Builtin::EVENT_LOG, &opts, &mut || None).unwrap();
    assert!(!v.passed);
    assert!(v.failures[0].rule.contains("clean store"), "{:?}", v.failures);
    assert!(v.failures[0].detail.contains("`count0` must be 0, got 1"), "{:?}", v.failures);
    assert!(v.failures.iter().any(|f| f.rule == "K sequential writes on a clean store give K"));
    // db-read needs its driver in the path.
    assert!(verify(&server, "http://x", Builtin::DB_READ, &VerifyOptions::default(), &mut || None).is_err());
}

/// A server that validates nothing breaks only hardening rules: it is
/// measured, and what it does not enforce is named.
#[test]
fn hardening_failures_alone_pass_with_what_is_not_enforced() {
    let lenient = DummyServer { lenient: true, ..dummy(0) };
    let v = verify(&lenient, "http://x", Builtin::DUMMY, &VerifyOptions::default(), &mut || None).unwrap();
    assert!(v.passed, "core rules hold: {:?}", v.failures);
    assert!(v.failures.iter().all(|f| f.level == "hardening"), "{:?}", v.failures);
    let not = v.not_enforced();
    for what in ["duplicate keys", "`timestamp` type", "the 64 KiB body cap"] {
        assert!(not.contains(&what), "{what} in {not:?}");
    }
}

/// Regression: a contestant that died during verification was reported
/// as every later case's refused connection.
#[test]
fn a_contestant_that_dies_is_reported_so() {
    struct DiesAfter<'a>(&'a DummyServer, u32);
    impl Prober for DiesAfter<'_> {
        fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError> {
            if *self.0.calls.lock().unwrap() >= self.1 {
                Err(ProbeError::Refused)
            } else {
                self.0.send_http1(probe)
            }
        }
    }
    let server = dummy(0);
    let dies = DiesAfter(&server, 3);
    let v = verify(&dies, "http://x", Builtin::DUMMY, &VerifyOptions::default(), &mut || {
        Some("exit code 101".to_owned())
    })
    .unwrap();
    assert!(!v.passed);
    assert_eq!(v.failures.len(), 1, "{:?}", v.failures);
    assert!(
        v.failures[0].detail.starts_with("it exited with exit code 101 after case 4 ("),
        "{:?}",
        v.failures
    );
}

#[test]
fn readiness_waits_through_refusals_and_gives_up_on_time() {
    let server = dummy(5);
    let opts = VerifyOptions::default();
    let wait =
        |server: &DummyServer, s: Builtin, o: &VerifyOptions, t0: Instant, d: Duration, alive: bool| {
            wait_ready_builtin(server, "http://x", s, o, t0, d, &mut || alive).unwrap()
        };
    let t0 = Instant::now();
    let r = wait(&server, Builtin::DUMMY, &opts, t0, Duration::from_secs(5), true);
    let Ready::Yes { after, resolution } = r else { panic!("{r:?}") };
    // Five refusals, 50 + 100 + 200 + 400 + 800 µs of pauses: ready in a few ms, at
    // sub-millisecond resolution (the 2 ms poll it replaced quantized a 5 ms start by 40%).
    assert!(
        after >= Duration::from_micros(1_550) && after < t0.elapsed() + Duration::from_micros(1),
        "{after:?}"
    );
    // The last pause asked is 800 µs; what a sleep takes on a loaded machine is the
    // kernel's business (3.1 ms was seen while a build ran), so only its order is checked.
    assert!(
        resolution >= Duration::from_micros(800) && resolution < Duration::from_millis(50),
        "{resolution:?}"
    );
    assert_eq!(max_pause(Duration::from_millis(5)), Duration::from_millis(1));
    assert_eq!(max_pause(Duration::from_secs(3)), Duration::from_millis(30));
    let never = dummy(u32::MAX);
    let r = wait(&never, Builtin::DUMMY, &opts, Instant::now(), Duration::from_millis(50), true);
    assert_eq!(r, Ready::Timeout("connection refused".into()));
    let r = wait(&never, Builtin::DUMMY, &opts, Instant::now(), Duration::from_secs(5), false);
    assert_eq!(r, Ready::Exited);
    let db = VerifyOptions { base_path: "/db/x".into(), ..Default::default() };
    let r = wait(&server, Builtin::DB_READ, &db, Instant::now(), Duration::from_millis(50), true);
    assert!(matches!(r, Ready::Wrong(_)), "{r:?}");
}
