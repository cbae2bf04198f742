//! `stackbench load` as a user runs it, against `sb-dummy`:
//! the files it writes, its exit codes (0; 1 for bad input, 2 for a command
//! line that does not parse, each in one line; 99 for a failed threshold; 130
//! after Ctrl-C with the partial result written).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use stackbench_testkit::contestants::contestant;
use stackbench_testkit::process::Server;

fn serve_dummy() -> Server {
    let sb_dummy = contestant(env!("CARGO_BIN_EXE_stackbench"), "sb-dummy");
    Server::start(Command::new(sb_dummy).args(["--port", "0"]))
}

fn load(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench")).arg("load").args(args).output().expect("stackbench runs")
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("sb-load-cli-").tempdir().unwrap()
}

#[test]
fn writes_the_record_the_timeline_and_the_interval_log() {
    let s = serve_dummy();
    let dir = scratch();
    let (json, csv, hlog) = (dir.path().join("r.json"), dir.path().join("t.csv"), dir.path().join("h.hlog"));
    let url = format!("http://{}/events", s.addr);
    let out = load(&[
        &url,
        "--scenario",
        "dummy",
        "-c",
        "4",
        "-d",
        "2s",
        "--threads",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "--hlog",
        hlog.to_str().unwrap(),
        "--threshold",
        "errors<1%",
        // Every answer (`auto` may check fewer in a debug build, where checking is slow).
        "--check-every",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    for words in
        ["req/s", "req/min", "p99.9", "errors", "NOT corrected for coordinated omission", "pass errors<1%"]
    {
        assert!(stdout.contains(words), "{words:?} missing from\n{stdout}");
    }
    let record = stackbench_testkit::record::record_file(&json);
    assert_eq!(record["schema"], 1);
    assert_eq!(record["params"]["scenario"], "dummy");
    assert_eq!(record["params"]["model"]["kind"], "closed");
    let requests = record["summary"]["requests"].as_u64().unwrap();
    assert!(requests > 10 && record["summary"]["ok"] == requests, "{}", record["summary"]);
    assert_eq!(record["summary"]["checks"]["performed"].as_u64(), Some(requests));
    assert!(record["histogram"].as_str().unwrap().starts_with("HISTF"));
    let seconds = record["timeline"].as_array().unwrap().len();
    assert_eq!(seconds, 2);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(csv.starts_with("t_s,completed,errors,p50_us"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + seconds);
    let hlog = std::fs::read_to_string(&hlog).unwrap();
    assert!(
        hlog.contains("#[StartTime:") && hlog.lines().filter(|l| l.contains(",HISTF")).count() == seconds
    );
}

#[test]
fn a_failed_threshold_exits_with_2_and_says_which() {
    let s = serve_dummy();
    let url = format!("http://{}/events", s.addr);
    let out = load(&[&url, "-n", "50", "-c", "2", "--threshold", "p50<1us", "--threshold", "rps>1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(99), "{stdout}");
    assert!(stdout.contains("FAIL p50<1us") && stdout.contains("pass rps>1"), "{stdout}");
}

#[test]
fn bad_input_is_one_line_and_exit_code_1_or_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("http://127.0.0.1:{port}/");
    // 2: the command line does not parse (clap's usage error); 1: it parses, but does not hold.
    let cases: [(&[&str], &str, i32); 13] = [
        (&["127.0.0.1:8080"], "no scheme", 1),
        (&["ftp://127.0.0.1/"], "unsupported scheme", 1),
        (&["http://127.0.0.1:1/", "--insecure"], "applies to https:// URLs", 1),
        (&["http://127.0.0.1:1/", "-d", "ten"], "not a duration", 2),
        (&["http://127.0.0.1:1/", "--rate", "0"], "--rate", 1),
        (&["http://127.0.0.1:1/", "-d", "1s", "-n", "5"], "cannot be used together", 1),
        (&["http://127.0.0.1:1/", "--threshold", "p99<5"], "needs a unit", 2),
        (&["http://127.0.0.1:1/", "--stages", "30s"], "DURATION:TARGET", 2),
        (&[&unreachable, "-d", "1s"], "is the server running", 1),
        (&["http://127.0.0.1:1/", "--warmup", "soon"], "or `auto`", 2),
        (&["http://127.0.0.1:1/", "--warmup", "auto", "--max-warmup", "5s"], "at least 10s", 1),
        // A built-in names its own paths: the URL is the server's root (db-read's, its driver).
        (&["http://127.0.0.1:1/api", "--scenario", "dummy"], "dummy is sent to the server's root", 1),
        (&["http://127.0.0.1:1/", "--scenario", "db-read"], "like http://127.0.0.1:8080/db/sqlite", 1),
    ];
    for (args, says, code) in cases {
        let out = load(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: not one line:\n{stderr}");
        assert!(stderr.contains(says) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn ctrl_c_stops_and_writes_the_partial_result() {
    let s = serve_dummy();
    let dir = scratch();
    let json = dir.path().join("partial.json");
    let url = format!("http://{}/events", s.addr);
    let child = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["load", &url, "-c", "2", "-d", "60s", "--threads", "1", "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "took {:?} to stop", t.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("interrupted"), "{stdout}");
    let record = stackbench_testkit::record::record_file(&json);
    assert_eq!(record["interrupted"], true);
    assert!(record["summary"]["requests"].as_u64().unwrap() > 0);
    assert!(record["summary"]["duration_s"].as_f64().unwrap() < 5.0);
}
