//! `stackbench verify URL --scenario-file F` on the shipped todo scenario,
//! against a small todo service written for the tests (`stackbench_testkit::todo`, not one of
//! stackbench's contestants): one that answers right, one that answers a new todo as done
//! (a core rule) and one that stores a 300-character title (a hardening rule).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stackbench_testkit::todo::{Fault, start as todo_service};

fn todo_toml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/todo.toml")
}

fn verify(url: &str, file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["verify", url, "--scenario-file"])
        .arg(file)
        .output()
        .expect("stackbench runs")
}

#[test]
fn a_right_service_passes() {
    let addr = todo_service(Fault::None);
    let out = verify(&format!("http://{addr}"), &todo_toml());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("ok      core       create, read back, refuse an empty title"), "{stdout}");
    assert!(stdout.contains("passes the todo scenario (2 cases)"), "{stdout}");
}

#[test]
fn a_core_failure_exits_1_with_the_assert_line() {
    let addr = todo_service(Fault::Done);
    let out = verify(&format!("http://{addr}"), &todo_toml());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAILED  core"), "{stdout}");
    assert!(
        stdout.contains("todo.hurl:11:1: `jsonpath \"$.done\" == false`: actual value is true"),
        "{stdout}"
    );
}

#[test]
fn a_hardening_failure_warns_and_exits_0() {
    let addr = todo_service(Fault::LongTitle);
    let out = verify(&format!("http://{addr}"), &todo_toml());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("FAILED  hardening  a 300-character title is refused"), "{stdout}");
    assert!(
        stdout.contains("todo.toml:") && stdout.contains("`HTTP 400`: expected status 400, got 201"),
        "{stdout}"
    );
    assert!(stdout.contains("with warnings: 1 hardening case(s) failed"), "{stdout}");
}

#[test]
fn a_bad_scenario_file_is_refused_with_its_position() {
    let scratch = tempfile::Builder::new().prefix("sb-verify-file-").tempdir().unwrap();
    let dir = scratch.path();
    let file = dir.join("bad.hurl");
    std::fs::write(&file, "GET {{base_url}}/{{nope}}\nHTTP 200\n").unwrap();
    let out = verify("http://127.0.0.1:9", &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.hurl:1:18: unknown variable `nope`"), "{stderr}");
}

#[test]
fn a_builtin_refuses_a_form_or_a_path_it_does_not_have() {
    let verify = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_stackbench"))
            .arg("verify")
            .args(args)
            .output()
            .expect("stackbench runs")
    };
    let out = verify(&["http://127.0.0.1:9", "--scenario", "dummy", "--connect-json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--connect-json: dummy has no Connect JSON form"), "{stderr}");
    let out = verify(&["http://127.0.0.1:9/api", "--scenario", "event-log"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("event-log is sent to the server's root"), "{stderr}");
}
