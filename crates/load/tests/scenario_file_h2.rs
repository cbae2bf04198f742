//! `--scenario-file` over h2c and gRPC against the engine's test server
//! (`common`: hyper, HTTP/1.1 and h2c on one port, and the gRPC bubble-sort
//! method). An h2c file: every request goes over HTTP/2, captures feed the
//! next request, header and body asserts hold, counts by name; a wrong answer
//! is a `check` error of its request. The built-in `bubble-sort`'s gRPC file
//! (`scenarios/builtin/bubble-sort.toml`): every call answered, recorded
//! under the method's name; a non-zero `grpc-status` is an error of its code.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::common::{Behavior, start};
use stackbench_load::{Dur, LoadOptions, RunRecord, Stop, run};

fn bubble_toml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin/bubble-sort.toml")
}

/// The repository: the root of the files the tests' scenarios name (the shipped `.proto`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scenario file written to a directory of its own, removed when the directory is dropped.
fn file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix(&format!("sb-h2-file-{name}-")).tempdir().unwrap();
    let path = dir.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn load(url: &str, path: PathBuf, o: LoadOptions) -> RunRecord {
    let o = LoadOptions {
        scenario_file: Some(path),
        file_root: Some(repo()),
        duration: Some(Dur(Duration::from_secs(1))),
        warmup: Some(stackbench_load::WarmupArg::Fixed(Dur(Duration::ZERO))),
        threads: Some(1),
        connections: Some(2),
        ..o
    };
    stackbench_testkit::record::valid(run(&o.to_spec(url).unwrap(), &Stop::new()).unwrap())
}

fn named<'r>(r: &'r RunRecord, name: &str) -> &'r stackbench_record::Named {
    r.per_request
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no {name:?} in {:?}", r.per_request))
}

const H2C: &str = r#"
protocol = "h2c"

[variables]
n = { int = [1, 9] }

[[flow]]
names = ["post", "read"]
hurl = '''
POST {{base_url}}/events
X-Trace: {{n}}
Connection: keep-alive
{"type": "a", "value": {{n}}}
HTTP 200
Content-Type: application/json
[Captures]
count: jsonpath "$.count"
[Asserts]
header "content-type" == "application/json"
GET {{base_url}}/PATH?after={{count}}
HTTP 200
[Asserts]
jsonpath "$.count" == 1
'''
"#;

#[test]
fn an_h2c_file_sends_every_request_over_http2_with_its_checks() {
    let s = start(Behavior::default());
    let (_dir, path) = file("h2c", &H2C.replace("PATH", "events/count"));
    let r = load(&s.url(""), path, LoadOptions::default());
    assert_eq!(r.params.transport, "h2c");
    assert_eq!(r.summary.errors, 0, "{:?}", r.errors);
    let (post, read) = (named(&r, "post"), named(&r, "read"));
    assert!(read.requests > 20 && post.requests.abs_diff(read.requests) <= 2, "{post:?} {read:?}");
    assert_eq!(r.summary.requests, post.requests + read.requests);
    assert!(r.summary.checks.performed > 0, "{:?}", r.summary.checks);
    assert_eq!(s.stats.h2_requests.load(Ordering::Relaxed), s.stats.requests.load(Ordering::Relaxed));
    // Two shared connections, opened once, and the reachability probe's.
    assert_eq!(s.stats.connections.load(Ordering::Relaxed), 3);
}

#[test]
fn a_wrong_h2c_answer_is_a_check_error_of_its_request() {
    let s = start(Behavior::default());
    let (_dir, path) = file("h2c-wrong", &H2C.replace("PATH", "wrong"));
    let r = load(&s.url(""), path, LoadOptions::default());
    let (post, read) = (named(&r, "post"), named(&r, "read"));
    assert_eq!(post.error_count(), 0, "{post:?}");
    assert!(read.requests > 0 && read.error_count() == read.requests, "{read:?}");
    assert_eq!(read.errors.get("check").copied(), Some(read.requests), "{read:?}");
}

#[test]
fn the_bubble_sort_file_calls_the_method_once_per_iteration() {
    let s = start(Behavior::default());
    let r = load(&s.url(""), bubble_toml(), LoadOptions::default());
    assert_eq!(r.params.transport, "grpc");
    assert_eq!(r.params.scenario.as_deref(), Some("bubble-sort"));
    assert_eq!(r.summary.errors, 0, "{:?}", r.errors);
    let call = named(&r, "sort.v1.SortService/BubbleSort");
    assert_eq!(r.per_request.len(), 1);
    let it = r.iterations.as_ref().unwrap();
    assert!(call.requests > 20 && call.requests == it.requests, "{call:?} {it:?}");
    assert_eq!(s.stats.h2_requests.load(Ordering::Relaxed), s.stats.requests.load(Ordering::Relaxed));
    // The 1000 numbers go out as a List of about 5 KB each time.
    assert!(r.summary.bytes_sent > call.requests * 4000, "{}", r.summary.bytes_sent);

    // The open model too: one call per arrival.
    let r = load(&s.url(""), bubble_toml(), LoadOptions { rate: Some(50.0), ..LoadOptions::default() });
    assert_eq!(r.summary.errors, 0, "{:?}", r.errors);
    assert!((40..=60).contains(&r.summary.requests), "{}", r.summary.requests);
}

#[test]
fn a_non_zero_grpc_status_is_an_error_of_its_code() {
    let s = start(Behavior { grpc_status: Some(8), ..Behavior::default() });
    let r = load(&s.url(""), bubble_toml(), LoadOptions::default());
    let call = named(&r, "sort.v1.SortService/BubbleSort");
    assert!(call.requests > 0, "{call:?}");
    assert_eq!(call.errors.get("grpc_8").copied(), Some(call.requests), "{call:?}");
    assert_eq!(r.summary.errors, r.summary.requests);
}

#[test]
fn a_reply_that_is_not_sorted_fails_the_calls_asserts_under_load() {
    let s = start(Behavior { unsorted: true, ..Behavior::default() });
    let r = load(&s.url(""), bubble_toml(), LoadOptions::default());
    let call = named(&r, "sort.v1.SortService/BubbleSort");
    assert!(call.requests > 0, "{call:?}");
    assert_eq!(call.errors.get("check").copied(), Some(call.requests), "{call:?}");
    assert_eq!(r.summary.errors, r.summary.requests);
}

#[test]
fn a_grpc_file_that_does_not_fit_its_proto_is_refused_with_its_place() {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto");
    let toml = format!(
        "protocol = \"grpc\"\n[grpc]\nproto = {:?}\nmethod = \"sort.v1.SortService/Sort\"\nmessage = '{{}}'\n",
        proto.display().to_string()
    );
    let (_dir, path) = file("bad-method", &toml);
    let o = LoadOptions { scenario_file: Some(path), file_root: Some(repo()), ..LoadOptions::default() };
    let e = o.to_spec("http://127.0.0.1:9").unwrap_err().to_string();
    assert!(
        e.contains("bad-method.toml:4:10") && e.contains("no method \"Sort\"; its methods: BubbleSort"),
        "{e}"
    );
    let toml = toml.replace("/Sort\"", "/BubbleSort\"").replace("'{}'", r#"'{"data": ["x"]}'"#);
    let (_dir, path) = file("bad-message", &toml);
    let o = LoadOptions { scenario_file: Some(path), file_root: Some(repo()), ..LoadOptions::default() };
    let e = o.to_spec("http://127.0.0.1:9").unwrap_err().to_string();
    assert!(e.contains("bad-message.toml:4:10: [grpc] `message`: not a valid sort.v1.List"), "{e}");
}

#[test]
fn a_message_that_stops_fitting_its_type_is_a_check_error_unsent() {
    // The first iteration's number is the largest int32; every later one is past it.
    let s = start(Behavior::default());
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../proto/sort/v1/sort.proto");
    let toml = format!(
        "protocol = \"grpc\"\n[variables]\nn = {{ sequence = 2147483647 }}\n[grpc]\nproto = {:?}\n\
         method = \"sort.v1.SortService/BubbleSort\"\nmessage = '{{\"data\": [{{{{n}}}}]}}'\n",
        proto.display().to_string()
    );
    let o = LoadOptions { requests: Some(5), connections: Some(1), duration: None, ..LoadOptions::default() };
    let (_dir, path) = file("overflow", &toml);
    let o = LoadOptions { scenario_file: Some(path), file_root: Some(repo()), threads: Some(1), ..o };
    let r = run(&o.to_spec(&s.url("")).unwrap(), &Stop::new()).unwrap();
    let call = named(&r, "sort.v1.SortService/BubbleSort");
    assert_eq!((call.requests, call.ok), (5, 1), "{call:?}");
    assert_eq!(call.errors.get("check").copied(), Some(4), "{call:?}");
    // Only the call that went out has a latency, and only it reached the server.
    assert_eq!(call.latency.count, 1, "{call:?}");
    assert_eq!(s.stats.requests.load(Ordering::Relaxed), 1);
}
