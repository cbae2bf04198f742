//! `stackbench verify URL --scenario bubble-sort` (gRPC) and `--connect-json`, which run
//! the built-in's embedded files (`scenarios/builtin/bubble-sort*.toml`), over real
//! sockets: the reference contestant `sb-bubble-sort` (with `--rest` for the JSON form)
//! passes every rule, and answers the JSON form's load flow right; a sorter written for
//! this test (hyper, gRPC over h2c and Connect JSON over HTTP/1.1 on one port) with one
//! fault at a time fails at the rule and level the Rust verification these files
//! replaced failed it: a sort that does nothing (core, exit 1), no 10,000-number cap
//! (hardening: measured, with a warning), the cap refused with the wrong grpc-status
//! (hardening).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Frame;
use stackbench_contract::bubble::{MAX_LEN, decode_list, encode_list};
use stackbench_testkit::contestants::contestant;
use stackbench_testkit::frames::Frames;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn verify(url: &str, more: &[&str]) -> (Output, String) {
    let out = Command::new(BIN).args(["verify", url]).args(more).output().expect("stackbench runs");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out, said)
}

const RULES: [&str; 5] = [
    "core       the 1000 numbers of the experiment come back sorted",
    "core       an empty list is valid and comes back empty",
    "core       negative numbers and duplicates are sorted too",
    "core       a one-element list comes back as is",
    "hardening  more than 10,000 numbers is refused (INVALID_ARGUMENT, or 400 over JSON)",
];

/// The rules (numbered from 1) `verify` printed as failed, each once.
fn failed(said: &str) -> Vec<usize> {
    let mut out: Vec<usize> = said
        .lines()
        .filter_map(|l| l.strip_prefix("FAILED  "))
        .map(|l| RULES.iter().position(|r| l.starts_with(r)).unwrap_or_else(|| panic!("{l}")) + 1)
        .collect();
    out.dedup();
    out
}

#[test]
fn sb_bubble_sort_passes_both_forms() {
    let s = Server::start(Command::new(contestant(BIN, "sb-bubble-sort")).args(["--port", "0", "--rest"]));
    let url = format!("http://{}", s.addr);
    for more in [&["--scenario", "bubble-sort"][..], &["--scenario", "bubble-sort", "--connect-json"]] {
        let (out, said) = verify(&url, more);
        assert_eq!(out.status.code(), Some(0), "{more:?}: {said}");
        for rule in RULES {
            assert!(said.contains(&format!("ok      {rule}")), "{more:?}: {rule} in\n{said}");
        }
        assert!(said.contains("passes the bubble-sort contract (5 rules)"), "{said}");
    }
    // The JSON form's load flow: every answer checked, and right.
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin/bubble-sort-connect-json.toml");
    let out = Command::new(BIN)
        .args(["load", &url, "-c", "2", "-d", "1s", "--threads", "1", "--check-every", "1", "--json", "-"])
        .arg("--scenario-file")
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let record = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(record["params"]["transport"], "http1");
    assert!(record["summary"]["requests"].as_u64().unwrap() > 5, "{}", record["summary"]);
    assert_eq!(record["summary"]["errors"], 0, "{}", record["errors"]);
    assert_eq!(record["summary"]["checks"]["performed"], record["summary"]["requests"]);
}

/// Which rule the test's sorter breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Every list comes back as it came.
    NoSort,
    /// Any number of numbers is sorted.
    NoCap,
    /// The cap is refused with grpc-status 8 (RESOURCE_EXHAUSTED), not 3.
    CapStatus8,
}

#[test]
fn each_fault_fails_its_rule_at_its_level() {
    for (fault, form, want, code) in [
        (Fault::NoSort, &[][..], &[1, 3][..], 1),
        (Fault::NoSort, &["--connect-json"][..], &[1, 3], 1),
        (Fault::NoCap, &[], &[5], 0),
        (Fault::NoCap, &["--connect-json"], &[5], 0),
        (Fault::CapStatus8, &[], &[5], 0),
    ] {
        let url = format!("http://{}", sorter(fault));
        let (out, said) = verify(&url, &[&["--scenario", "bubble-sort"][..], form].concat());
        assert_eq!(out.status.code(), Some(code), "{fault:?} {form:?}: {said}");
        assert_eq!(failed(&said), want, "{fault:?} {form:?}: {said}");
        if code == 0 {
            assert!(said.contains("with warnings: does not enforce the 10,000-number cap"), "{said}");
        }
    }
    // What was wrong, at its place in the file.
    let (_, said) = verify(&format!("http://{}", sorter(Fault::CapStatus8)), &["--scenario", "bubble-sort"]);
    assert!(said.contains("`header \"grpc-status\" == \"3\"`: actual value is \"8\""), "{said}");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin/bubble-sort.toml");
    let toml = std::fs::read_to_string(&file).unwrap();
    let line = toml.lines().position(|l| l == "jsonpath \"$.data[0]\" == -2147483648").unwrap() + 1;
    let url = format!("http://{}", sorter(Fault::NoSort));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (_, said) =
        verify(&url, &["--scenario-file", file.to_str().unwrap(), "--file-root", repo.to_str().unwrap()]);
    let expected =
        format!("bubble-sort.toml:{line}:1: `jsonpath \"$.data[0]\" == -2147483648`: actual value is 5");
    assert!(said.contains(&expected), "{expected} not in\n{said}");
}

/// The test's sorter, with `fault`, on a loopback port until the test process ends: gRPC
/// over h2c and Connect JSON over HTTP/1.1, as `sb-bubble-sort --rest` serves them.
fn sorter(fault: Fault) -> SocketAddr {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| answer(fault, req));
                    let _ =
                        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                            .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                            .await;
                });
            }
        });
    });
    addr
}

/// The list as the sorter sends it back, or `None` for the cap's refusal.
fn sort(fault: Fault, mut list: Vec<i32>) -> Option<Vec<i32>> {
    if list.len() > MAX_LEN && fault != Fault::NoCap {
        return None;
    }
    if fault != Fault::NoSort {
        list.sort_unstable();
    }
    Some(list)
}

async fn answer(
    fault: Fault,
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Frames>, Infallible> {
    let grpc =
        req.headers().get("content-type").is_some_and(|t| t.as_bytes().starts_with(b"application/grpc"));
    let body = req.into_body().collect().await.map(http_body_util::Collected::to_bytes).unwrap_or_default();
    if !grpc {
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let list: Vec<i32> = serde_json::from_value(v["data"].clone()).unwrap_or_default();
        let (status, text) = match sort(fault, list) {
            None => (400, r#"{"error":"at most 10000 numbers"}"#.to_owned()),
            Some(l) => (200, serde_json::json!({ "data": l }).to_string()),
        };
        let mut r = hyper::Response::new(Frames(vec![Frame::data(Bytes::from(text))].into()));
        *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
        r.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
        return Ok(r);
    }
    // The 5-byte frame header, then the message.
    let list = decode_list(body.get(5..).unwrap_or_default()).unwrap_or_default();
    let (code, message) = match sort(fault, list) {
        None => (if fault == Fault::CapStatus8 { "8" } else { "3" }, Vec::new()),
        Some(l) => {
            let mut m = Vec::new();
            encode_list(&l, &mut m);
            ("0", m)
        }
    };
    let mut framed = vec![0];
    framed.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    framed.extend_from_slice(&message);
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static(code));
    let frames = vec![Frame::data(Bytes::from(framed)), Frame::trailers(trailers)];
    let mut r = hyper::Response::new(Frames(frames.into()));
    r.headers_mut().insert("content-type", http::HeaderValue::from_static("application/grpc"));
    Ok(r)
}
