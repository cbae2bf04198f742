//! `stackbench load` against hostile servers (issue: trust at the edges). A
//! malformed answer is a `protocol` error counted in the run, never a panic;
//! a panic inside the engine is a failed run (exit 70, `invalid` in the
//! record), never a clean one.

use std::process::{Command, Output};

use stackbench_testkit::hostile::{Answer, Hostile};

fn load(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .arg("load")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("stackbench runs")
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("sb-hostile-load-").tempdir().unwrap()
}

fn record(path: &std::path::Path) -> serde_json::Value {
    stackbench_testkit::record::record_file(path)
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Regression: a chunk size of 2^64-1 made `size + 2` overflow; the worker
/// panicked and the run printed `requests 0 total … errors 0`, exit 0.
#[test]
fn an_overflowing_chunk_size_is_a_protocol_error() {
    let s = Hostile::start(Answer::Fixed(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nxx\r\n0\r\n\r\n".to_vec(),
    ));
    let dir = scratch();
    let json = dir.path().join("overflow.json");
    let out = load(&[&s.url("/"), "-c", "1", "-d", "1s", "--json", json.to_str().unwrap()], &[]);
    let all = text(&out);
    assert!(!all.contains("panicked"), "{all}");
    assert_eq!(out.status.code(), Some(0), "{all}");
    let r = record(&json);
    let requests = r["summary"]["requests"].as_u64().unwrap();
    assert!(requests > 0, "{all}");
    assert_eq!(r["errors"]["protocol"].as_u64(), Some(requests), "{}", r["errors"]);
    assert!(r.get("invalid").is_none(), "{}", r["invalid"]);
}

/// Heads, chunk-size lines and trailers without an end are refused once
/// they pass the head cap (64 KiB), not buffered until the answer cap.
#[test]
fn endless_heads_and_framing_lines_are_protocol_errors() {
    let cases: [(&str, &[u8], &[u8]); 3] = [
        ("head", b"HTTP/1.1 200 OK\r\n", b"X-Endless: yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\r\n"),
        ("chunk-size line", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"0000000000000000"),
        ("trailers", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n", b"X-T: y\r\n"),
    ];
    let dir = scratch();
    for (what, head, repeat) in cases {
        let s = Hostile::start(Answer::Endless { head: head.to_vec(), repeat: repeat.to_vec() });
        let json = dir.path().join(format!("endless-{}.json", what.replace(' ', "-")));
        let out = load(&[&s.url("/"), "-c", "2", "-d", "1s", "--json", json.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        let r = record(&json);
        let requests = r["summary"]["requests"].as_u64().unwrap();
        assert!(requests > 0, "{what}: {}", text(&out));
        assert_eq!(r["errors"]["protocol"].as_u64(), Some(requests), "{what}: {}", r["errors"]);
    }
}

/// A panic in a load worker (forced by the engine's failpoint) fails the run
/// loudly: the reason on stderr and in the record, exit code 70.
#[test]
fn a_worker_panic_is_a_failed_run() {
    let s = Hostile::start(Answer::Fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec()));
    let dir = scratch();
    let json = dir.path().join("panic.json");
    let out = load(
        &[&s.url("/"), "-c", "2", "-d", "3s", "--threads", "2", "--json", json.to_str().unwrap()],
        &[("STACKBENCH_FAILPOINT", "worker-panic:20")],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(70), "{all}");
    assert!(all.contains("FAILED (tool_failure)") && all.contains("sb-load-"), "{all}");
    let r = record(&json);
    assert_eq!(r["invalid"]["kind"], "tool_failure", "{}", r["invalid"]);
    let reason = r["invalid"]["reason"].as_str().unwrap();
    assert!(reason.contains("panicked at") && reason.contains("worker.rs"), "{reason}");
    // It stopped at once instead of running out its 3 seconds with a dead worker.
    assert!(r["summary"]["duration_s"].as_f64().unwrap() < 2.5, "{}", r["summary"]);
}
