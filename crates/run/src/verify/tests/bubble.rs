//! `bubble-sort` verified by its two embedded files, gRPC and Connect JSON, through
//! the real [`Sender`](crate::verify::file::Sender) (the gRPC form's calls encoded with the
//! embedded `.proto`, replies decoded to JSON) against a sorter written for these
//! tests, in memory: right, and with one fault at a time (a sort that does nothing,
//! no 10,000-number cap, the cap refused with the wrong grpc-status, every call
//! failing, answers without a grpc-status, errors that are not JSON, answers that
//! are not JSON). The cases that fail are those the Rust case lists these files
//! replaced failed on the same faults, at the same levels.

use std::time::{Duration, Instant};

use stackbench_contract::bubble::{GRPC_PATH, MAX_LEN, decode_list, encode_list};
use stackbench_hurl::Builtin;

use crate::client::{Probe, ProbeError, Prober, Reply};
use crate::verify::{Ready, VerifyOptions, rules, verify, wait_ready_builtin};

/// One way a sorter breaks the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Every list comes back as it came.
    NoSort,
    /// Any number of numbers is sorted.
    NoCap,
    /// The cap is refused with grpc-status 8 (RESOURCE_EXHAUSTED), not 3.
    CapStatus8,
    /// Every call fails with grpc-status 13 (INTERNAL).
    Internal,
    /// A right answer without a grpc-status.
    NoGrpcStatus,
    /// Connect JSON: the refusal is plain text.
    PlainErrors,
    /// Connect JSON: every answer says `text/plain`.
    TextPlain,
}

struct Sorter(Fault);

impl Sorter {
    /// The list as the sorter sends it back, or `None` for the cap's refusal.
    fn sort(&self, mut list: Vec<i32>) -> Option<Vec<i32>> {
        if list.len() > MAX_LEN && self.0 != Fault::NoCap {
            return None;
        }
        if self.0 != Fault::NoSort {
            list.sort_unstable();
        }
        Some(list)
    }
}

fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

impl Prober for Sorter {
    /// Connect JSON.
    fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, .. } = *probe;
        assert!(url.ends_with(GRPC_PATH) && method == "POST", "{method} {url}");
        assert_eq!(header(headers, "content-type"), Some("application/json"));
        let v: serde_json::Value = serde_json::from_slice(body).expect("a JSON request");
        let list: Vec<i32> = serde_json::from_value(v["data"].clone()).expect("a list of int32");
        let (status, text) = match self.sort(list) {
            None if self.0 == Fault::PlainErrors => (400, "too many numbers".to_owned()),
            None => (400, r#"{"error":"at most 10000 numbers"}"#.to_owned()),
            // proto3 JSON leaves an empty list out.
            Some(l) if l.is_empty() => (200, "{}".to_owned()),
            Some(l) => (200, serde_json::json!({ "data": l }).to_string()),
        };
        let json = if self.0 == Fault::TextPlain { "text/plain" } else { "application/json" };
        let headers = vec![("content-type".to_owned(), json.as_bytes().to_vec())];
        Ok(Reply {
            status,
            content_type: Some(json.into()),
            headers,
            grpc_status: None,
            body: text.into(),
            peer: None,
        })
    }

    /// gRPC: `body` is the unframed message.
    fn send_h2(&self, probe: &Probe<'_>, grpc: bool) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, .. } = *probe;
        assert!(grpc && url.ends_with(GRPC_PATH) && method == "POST", "{method} {url}");
        assert_eq!(header(headers, "content-type"), Some("application/grpc"));
        let list = decode_list(body).expect("a List message");
        let (code, message) = match self.sort(list) {
            _ if self.0 == Fault::Internal => (Some(13), Vec::new()),
            None if self.0 == Fault::CapStatus8 => (Some(8), Vec::new()),
            None => (Some(3), Vec::new()),
            Some(l) => {
                let mut out = Vec::new();
                encode_list(&l, &mut out);
                ((self.0 != Fault::NoGrpcStatus).then_some(0), out)
            }
        };
        let mut headers = vec![("content-type".to_owned(), b"application/grpc".to_vec())];
        headers.extend(code.map(|c| ("grpc-status".to_owned(), c.to_string().into_bytes())));
        Ok(Reply {
            status: 200,
            content_type: Some(b"application/grpc".to_vec()),
            headers,
            grpc_status: code,
            body: message,
            peer: None,
        })
    }
}

/// The cases (numbered from 1) the Rust verification failed, by form and fault.
const EXPECTED: &[(bool, Fault, &[usize])] = &[
    (false, Fault::None, &[]),
    (false, Fault::NoSort, &[1, 3]),
    (false, Fault::NoCap, &[5]),
    (false, Fault::CapStatus8, &[5]),
    (false, Fault::Internal, &[1, 2, 3, 4, 5]),
    (false, Fault::NoGrpcStatus, &[1, 2, 3, 4]),
    (true, Fault::None, &[]),
    (true, Fault::NoSort, &[1, 3]),
    (true, Fault::NoCap, &[5]),
    (true, Fault::PlainErrors, &[5]),
    (true, Fault::TextPlain, &[1, 2, 3, 4, 5]),
];

#[test]
fn each_fault_fails_the_cases_the_rust_verification_failed() {
    for &(connect_json, fault, want) in EXPECTED {
        let opts = VerifyOptions { connect_json, ..VerifyOptions::default() };
        let v = verify(&Sorter(fault), "http://sorter", Builtin::BUBBLE_SORT, &opts, &mut || None).unwrap();
        let rules = rules(Builtin::BUBBLE_SORT, &opts);
        assert_eq!(v.cases, 5);
        let mut failed: Vec<usize> = v
            .failures
            .iter()
            .map(|f| {
                let k = rules.iter().position(|(r, _)| *r == f.rule).unwrap();
                assert_eq!(f.level, rules[k].1, "{f:?}");
                k + 1
            })
            .collect();
        failed.dedup();
        assert_eq!(failed, want, "connect_json {connect_json}, {fault:?}: {:?}", v.failures);
        assert_eq!(v.passed, want.iter().all(|&k| k == 5), "{fault:?}");
        if want.contains(&5) && v.passed {
            assert_eq!(v.not_enforced(), ["the 10,000-number cap"]);
        }
    }
}

#[test]
fn the_rules_are_the_contracts_in_its_order() {
    for connect_json in [false, true] {
        let rules = rules(Builtin::BUBBLE_SORT, &VerifyOptions { connect_json, ..VerifyOptions::default() });
        let levels: Vec<&str> = rules.iter().map(|r| r.1).collect();
        assert_eq!(levels, ["core", "core", "core", "core", "hardening"]);
        assert_eq!(rules[0].0, "the 1000 numbers of the experiment come back sorted");
        assert_eq!(rules[4].0, "more than 10,000 numbers is refused (INVALID_ARGUMENT, or 400 over JSON)");
    }
}

#[test]
fn failures_say_what_was_wrong() {
    let detail = |connect_json: bool, fault: Fault, k: usize| -> String {
        let opts = VerifyOptions { connect_json, ..VerifyOptions::default() };
        let v = verify(&Sorter(fault), "http://sorter", Builtin::BUBBLE_SORT, &opts, &mut || None).unwrap();
        let rule = &rules(Builtin::BUBBLE_SORT, &opts)[k - 1].0;
        v.failures.iter().find(|f| f.rule == *rule).map(|f| f.detail.clone()).unwrap_or_default()
    };
    let d = detail(false, Fault::NoSort, 1);
    assert!(d.contains("scenarios/builtin/bubble-sort.toml:") && d.contains("jsonpath \"$.data\" =="), "{d}");
    let d = detail(false, Fault::CapStatus8, 5);
    assert!(d.contains("`header \"grpc-status\" == \"3\"`: actual value is \"8\""), "{d}");
    assert!(detail(false, Fault::Internal, 2).contains("the call failed with grpc-status 13"));
    assert!(detail(false, Fault::NoGrpcStatus, 4).contains("no grpc-status"));
    let d = detail(true, Fault::NoCap, 5);
    assert!(
        d.contains("bubble-sort-connect-json.toml:") && d.contains("expected status 400, got 200"),
        "{d}"
    );
}

/// The readiness probe is the one-element list, in either form: a sorter is ready at its
/// first right answer; one whose calls all fail is wrong, not ready.
#[test]
fn readiness_is_the_one_element_list() {
    for connect_json in [false, true] {
        let opts = VerifyOptions { connect_json, ..VerifyOptions::default() };
        // The wait includes compiling the built-in file (its .proto), which a busy machine
        // can stretch past any tight budget; a wrong sorter keeps being retried to the end.
        let wait = |fault| {
            let t0 = Instant::now();
            let timeout = if fault == Fault::None || fault == Fault::NoSort {
                Duration::from_secs(30)
            } else {
                Duration::from_secs(5)
            };
            wait_ready_builtin(
                &Sorter(fault),
                "http://sorter",
                Builtin::BUBBLE_SORT,
                &opts,
                t0,
                timeout,
                &mut || true,
            )
            .unwrap()
        };
        let r = wait(Fault::None);
        assert!(matches!(r, Ready::Yes { .. }), "{r:?}");
        // A sort that does nothing leaves one element as it is: ready.
        assert!(matches!(wait(Fault::NoSort), Ready::Yes { .. }));
        let wrong = if connect_json { Fault::TextPlain } else { Fault::Internal };
        let r = wait(wrong);
        let Ready::Wrong(why) = r else { panic!("{r:?}") };
        assert!(why.starts_with("a one-element list comes back as is: "), "{why}");
    }
}
