//! `stackbench load URL --scenario-file F --variable N=V` through the binary,
//! against the tests' todo service (`stackbench_testkit::todo`): the record on
//! stdout has the requests by name and the iterations, and the summary shows
//! them; a file that does not load is refused with its position, exit 1.

use std::process::Command;

use stackbench_testkit::todo::{Fault, start};

/// A file in a directory of its own, removed with the `TempDir`.
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new().prefix("sb-load-file-").tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn the_record_has_the_requests_by_name() {
    let addr = start(Fault::None);
    let (_dir, file) = temp_file(
        "create.hurl",
        "POST {{base_url}}/todos\n{\"title\": \"{{title}}\"}\nHTTP 201\n[Asserts]\njsonpath \"$.title\" == \"{{title}}\"\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["load", &format!("http://{addr}"), "-c", "2", "-d", "1s", "--threads", "1", "--json", "-"])
        .arg("--scenario-file")
        .arg(&file)
        .args(["--variable", "title=milk & \"eggs\""])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record = stackbench_testkit::record::record_json(&out.stdout);
    let per = &record["per_request"][0];
    assert_eq!(per["name"], "POST /todos");
    assert!(per["requests"].as_u64().unwrap() > 10, "{per}");
    assert_eq!(per["requests"], record["summary"]["ok"], "every answer right: {per}");
    assert_eq!(record["iterations"]["requests"], per["requests"]);
    // One request per iteration under one name: the summary's by-request table would restate
    // the totals, and is left out (the record keeps the entries, above).
    assert!(!stderr.contains("by request"), "{stderr}");
}

#[test]
fn a_bad_file_is_refused_before_anything_starts() {
    let (_dir, file) = temp_file("bad.hurl", "GET {{base_url}}/{{id}}\nHTTP 200\n");
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["load", "http://127.0.0.1:9", "--scenario-file"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.hurl:1:18: unknown variable `id`"), "{stderr}");
}

#[test]
fn a_connection_per_iteration_carries_its_requests() {
    let addr = start(Fault::None);
    let (_dir, file) = temp_file(
        "create-read.hurl",
        "POST {{base_url}}/todos\n{\"title\": \"a\"}\nHTTP 201\n[Captures]\nid: jsonpath \"$.id\"\n\n\
         GET {{base_url}}/todos/{{id}}\nHTTP 200\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["load", &format!("http://{addr}"), "-c", "2", "-n", "6", "--threads", "1", "--json", "-"])
        .args(["--new-connection", "iteration", "--scenario-file"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["summary"]["requests"], 12, "{stderr}");
    assert_eq!(record["summary"]["errors"], 0, "{stderr}");
    // Six iterations, six connections, each opened by its iteration's first request.
    assert_eq!(record["connections"]["opened"], 6);
    assert_eq!(record["connections"]["first_requests"]["requests"], 6);
    assert_eq!(record["params"]["extra"]["new_connection"], "iteration");
    assert_eq!(record["params"]["extra"]["keepalive"], false);

    let out = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["load", &format!("http://{addr}"), "--new-connection", "iteration", "-n", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("needs a scenario"), "{stderr}");
}
