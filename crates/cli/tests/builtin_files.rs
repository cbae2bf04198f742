//! The built-in scenarios as files (`scenarios/builtin/`), through the binary,
//! against the reference contestants: `sb-dummy`, `sb-event-log` (SQLite,
//! emptied at start) and `sb-db-read` (SQLite, seeded) pass every case of
//! their file; `sb-dummy` verified as an event log (a store that ignores
//! writes) fails the count rules, at the case and level the built-in's own
//! verification fails it. Each file's load flow runs under `stackbench load`
//! with every answer checked and right. (Each fault against servers written
//! for the test: `crates/hurl/tests/builtin_files.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stackbench_testkit::contestants::contestant;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn builtin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/builtin").join(name)
}

fn verify(url: &str, file: &str, more: &[&str]) -> (Output, String) {
    let out = Command::new(BIN)
        .args(["verify", url, "--scenario-file"])
        .arg(builtin(file))
        .args(more)
        .output()
        .expect("stackbench runs");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out, said)
}

/// `stackbench load URL --scenario-file F` for a second: every request of the file's flow is
/// answered and passes its under-load checks.
fn loads_cleanly(url: &str, file: &str, more: &[&str], request: &str) {
    let out = Command::new(BIN)
        .args(["load", url, "-c", "2", "-d", "1s", "--threads", "1", "--check-every", "1", "--json", "-"])
        .arg("--scenario-file")
        .arg(builtin(file))
        .args(more)
        .output()
        .expect("stackbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record = stackbench_testkit::record::record_json(&out.stdout);
    let per = &record["per_request"][0];
    assert_eq!(per["name"], request, "{per}");
    assert!(per["requests"].as_u64().unwrap() > 10, "{per}");
    assert_eq!(per["requests"], record["summary"]["ok"], "every answer right: {per}");
}

fn scratch(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("sb-builtin-files-{what}-")).tempdir().unwrap()
}

fn ok_lines(said: &str) -> usize {
    said.lines().filter(|l| l.starts_with("ok      ")).count()
}

#[test]
fn sb_dummy_passes_the_dummy_file() {
    let s = Server::start(Command::new(contestant(BIN, "sb-dummy")).args(["--port", "0"]));
    let (out, said) = verify(&format!("http://{}", s.addr), "dummy.toml", &[]);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok_lines(&said), 25, "{said}");
    assert!(said.contains("ok      hardening  a body over 64 KiB gets 413"), "{said}");
    assert!(said.contains("passes the dummy scenario (25 cases)"), "{said}");
    loads_cleanly(&format!("http://{}", s.addr), "dummy.toml", &[], "POST /events");
}

#[test]
fn sb_event_log_passes_the_event_log_file_on_an_emptied_store_and_after() {
    let tmp = scratch("events");
    let dir = tmp.path();
    let store = format!("sqlite:{}", dir.join("events.db").display());
    let s = Server::start(
        Command::new(contestant(BIN, "sb-event-log")).args(["--port", "0", "--store", &store, "--reset"]),
    );
    let url = format!("http://{}", s.addr);
    let (out, said) = verify(&url, "event-log.toml", &["--clean"]);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok_lines(&said), 29, "{said}");
    assert!(!said.contains("note:"), "{said}");
    // The store now holds the events written: without --clean, counts are judged from it.
    let (out, said) = verify(&url, "event-log.toml", &[]);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok_lines(&said), 29, "{said}");
    assert!(said.contains("note: ") && said.contains("judged from what the store held"), "{said}");
    // With --clean on a store that is not empty, the first read says so.
    let (out, said) = verify(&url, "event-log.toml", &["--clean"]);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("on a store emptied before verification `count0` must be 0, got 10"), "{said}");
    loads_cleanly(&url, "event-log.toml", &[], "POST /events");
}

#[test]
fn sb_db_read_passes_the_db_read_file() {
    let tmp = scratch("items");
    let dir = tmp.path();
    let store = format!("sqlite:{}", dir.join("items.db").display());
    let seeded =
        Command::new(contestant(BIN, "sb-db-read")).args(["seed", "--store", &store]).output().unwrap();
    assert!(seeded.status.success(), "{}", String::from_utf8_lossy(&seeded.stderr));
    let s =
        Server::start(Command::new(contestant(BIN, "sb-db-read")).args(["--port", "0", "--store", &store]));
    let (out, said) = verify(&format!("http://{}", s.addr), "db-read.toml", &["--variable", "driver=sqlite"]);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(ok_lines(&said), 14, "{said}");
    // Under load each answer is checked against the rows its random ids ask for.
    loads_cleanly(
        &format!("http://{}", s.addr),
        "db-read.toml",
        &["--variable", "driver=sqlite"],
        "GET /db/{{driver}}",
    );
    // A driver the server does not have: every row case fails, as core.
    let (out, said) = verify(&format!("http://{}", s.addr), "db-read.toml", &["--variable", "driver=nope"]);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("FAILED  core       rows a and b come back ordered by id"), "{said}");
}

/// `sb-dummy` answers every event {"count": 1}: as an event log it is a store that ignores
/// writes, and the file fails it where the built-in's verification does
/// (crates/run/src/verify.rs, `a_correct_dummy_passes_and_is_wrong_as_an_event_log`).
#[test]
fn a_store_that_ignores_writes_fails_the_event_log_file_at_the_count_rules() {
    let s = Server::start(Command::new(contestant(BIN, "sb-dummy")).args(["--port", "0"]));
    let url = format!("http://{}", s.addr);
    let (out, said) = verify(&url, "event-log.toml", &["--clean"]);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed: Vec<&str> = said.lines().filter(|l| l.starts_with("FAILED")).collect();
    assert!(
        failed[0].starts_with(
            "FAILED  core       GET /events/count answers 200 {\"count\": N} (0 on a clean store)"
        ),
        "{said}"
    );
    assert!(said.contains("`count0` must be 0, got 1"), "{said}");
    assert!(
        failed.iter().any(|l| l.ends_with("core       K sequential writes on a clean store give K")),
        "{said}"
    );
    assert!(said.contains("failed 6 core case(s) of the event-log scenario"), "{said}");
    // Judged from the count it reads, it still fails: the second write does not count.
    let (out, said) = verify(&url, "event-log.toml", &[]);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("FAILED  core       an event with only `type` gets 200"), "{said}");
}
