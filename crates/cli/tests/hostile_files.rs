//! Scenario files against hostile files and servers (issue 45, "Trust at the
//! edges, part three", items 4 to 13): each test runs the `stackbench` binary on a
//! file written here against a server written here (`stackbench_testkit::hostile`,
//! which keeps what it was sent), bounded in time and in memory: a run past its
//! bound is killed and fails the test, so a regression cannot take the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use stackbench_testkit::hostile::{Answer, Hostile};

fn stackbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stackbench"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A directory of its own for each test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sb-hostile-files-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `VmHWM` (peak resident set) of a live process, bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// Runs `cmd` to its end, at most `time`, its peak resident set looked at every 10 ms and
/// held under `rss` bytes: past either it is killed and the test fails.
fn bounded(cmd: &mut Command, time: Duration, rss: u64) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let began = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        let peak = peak_rss(child.id()).unwrap_or(0);
        if began.elapsed() > time || peak > rss {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "killed after {:?} at a peak of {} MiB (bounds {time:?}, {} MiB)\n{}",
                began.elapsed(),
                peak >> 20,
                rss >> 20,
                text(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A server that answers every request with `status` and `body` (JSON).
fn answering(status: u16, body: &str) -> Hostile {
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    Hostile::start(Answer::Fixed([head.as_bytes(), body.as_bytes()].concat()))
}

/// Issue 45 #8: `jsonpath "$..a..a..a..a..a..a" count > 0` on a 721-byte answer (`{"a":`
/// 120 deep) took 15 GB in 60 s under `verify`, and `load` aborted. The evaluation stops at
/// its bound: the check fails, with the bound in its message, in `verify` and under load.
#[test]
fn a_jsonpath_that_blows_up_fails_its_check_in_bounded_memory() {
    let body = format!("{}1{}", "{\"a\":".repeat(120), "}".repeat(120));
    let server = answering(200, &body);
    let d = dir("jsonpath");
    let file = write(
        &d,
        "deep.hurl",
        "GET {{base_url}}/deep\nHTTP 200\n[Asserts]\njsonpath \"$..a..a..a..a..a..a\" count > 0\n",
    );
    let out = bounded(
        stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(&file),
        Duration::from_secs(30),
        400 << 20,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("deep.hurl:4:1:") && all.contains("more than 1000000 values"), "{all}");
    let out = bounded(
        stackbench()
            .args([
                "load",
                &server.url(""),
                "-c",
                "1",
                "-n",
                "5",
                // Every answer checked: `auto` checks fewer once checking costs more than 5%
                // of the generator's time, which this check's evaluation does.
                "--check-every",
                "1",
                "--json",
                "-",
                "--quiet",
                "--scenario-file",
            ])
            .arg(&file),
        Duration::from_secs(30),
        400 << 20,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["summary"]["requests"], 5, "{}", record["summary"]);
    assert_eq!(record["errors"]["check"], 5, "{}", record["errors"]);
}
