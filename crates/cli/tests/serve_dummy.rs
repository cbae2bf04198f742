//! `stackbench serve dummy` as a user runs it: a real process on a real port,
//! answering the contract, and stopping cleanly on SIGTERM.

use std::process::Command;

use stackbench_testkit::http;
use stackbench_testkit::process::Server;

/// Starts `stackbench serve dummy --port 0`.
fn start() -> Server {
    Server::start(Command::new(env!("CARGO_BIN_EXE_stackbench")).args(["serve", "dummy", "--port", "0"]))
}

fn error_message(r: &http::Response) -> String {
    let v: serde_json::Value =
        serde_json::from_slice(&r.body).unwrap_or_else(|_| panic!("not JSON: {}", r.text()));
    v["error"].as_str().unwrap_or_else(|| panic!("no error in {}", r.text())).to_owned()
}

#[test]
fn serves_the_dummy_contract_and_stops_on_sigterm() {
    let mut server = start();
    let addr = server.addr;

    let ok = http::post_json(addr, "/events", r#"{"type":"page_view","source":"web","value":1.5}"#).unwrap();
    assert_eq!((ok.status, ok.text().as_str()), (200, r#"{"count":1}"#));
    assert_eq!(ok.header("content-type"), Some("application/json"));

    for (body, field) in [
        (r#"{"value":1}"#, "`type`"),
        (r#"{"type":"bad type!"}"#, "`type`"),
        (r#"{"type":"a","source":""}"#, "`source`"),
        (r#"{"type":"a","value":[1]}"#, "`value`"),
        (r#"{"type":"a","timestamp":9007199254740992}"#, "`timestamp`"),
    ] {
        let r = http::post_json(addr, "/events", body).unwrap();
        assert_eq!(r.status, 400, "{body}");
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(error_message(&r).contains(field), "{body}: {}", r.text());
    }

    let r = http::get(addr, "/missing").unwrap();
    assert_eq!(r.status, 404);
    error_message(&r);
    let r = http::request(addr, "PUT", "/events", &[("Content-Type", "application/json")], b"{}").unwrap();
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    error_message(&r);
    let big = vec![b'x'; 70_000];
    let r = http::request(addr, "POST", "/events", &[("Content-Type", "application/json")], &big).unwrap();
    assert_eq!(r.status, 413);
    error_message(&r);

    assert!(server.terminate().success(), "SIGTERM is a clean stop");
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let mut first = start();
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["serve", "dummy", "--port", &first.addr.port().to_string()])
        .output()
        .unwrap();
    first.terminate();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot listen on") && err.contains("--port"), "{err}");
}

#[test]
fn help_and_version() {
    let out = Command::new(env!("CARGO_BIN_EXE_stackbench")).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("stackbench "));
    let out =
        Command::new(env!("CARGO_BIN_EXE_stackbench")).args(["serve", "dummy", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Example") && help.contains("--port") && help.contains("--bind"), "{help}");
}
