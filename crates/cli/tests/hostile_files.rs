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
    let record = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(record["summary"]["requests"], 5, "{}", record["summary"]);
    assert_eq!(record["errors"]["check"], 5, "{}", record["errors"]);
}

/// Issue 45 #6: `file,/etc/shadow;`, `file,../../x;` and `file,/proc/self/environ;` were read
/// and sent. Files are read under the scenario's directory (or `--file-root`): each is refused
/// when the file loads, at its `file:line:col`, and nothing is sent.
#[test]
fn files_outside_the_scenario_are_refused_before_anything_is_sent() {
    let server = answering(200, "{}");
    let d = dir("outside");
    write(&d, "secret.txt", "the secret");
    let inner = d.join("scenario");
    std::fs::create_dir_all(&inner).unwrap();
    for (name, body) in [("abs", "/etc/passwd"), ("up", "../secret.txt"), ("proc", "/proc/self/environ")] {
        let file = write(
            &inner,
            &format!("{name}.hurl"),
            &format!("POST {{{{base_url}}}}/x\nfile,{body};\nHTTP 200\n"),
        );
        for cmd in ["verify", "load"] {
            let out = bounded(
                stackbench().args([cmd, &server.url(""), "--scenario-file"]).arg(&file),
                Duration::from_secs(30),
                400 << 20,
            );
            let all = text(&out);
            assert_eq!(out.status.code(), Some(1), "{cmd} {name}: {all}");
            assert!(
                all.contains(&format!("{name}.hurl:2:6: cannot read")) && all.contains("outside"),
                "{all}"
            );
        }
    }
    assert_eq!(server.received(), "", "nothing was sent");
    // A root that holds the file lets it be read.
    let file = inner.join("up.hurl");
    let out = bounded(
        stackbench()
            .args(["verify", &server.url(""), "--file-root"])
            .arg(&d)
            .arg("--scenario-file")
            .arg(&file),
        Duration::from_secs(30),
        400 << 20,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(server.received().ends_with("the secret"), "{}", server.received());
}

/// Issue 45 #7: a scenario file that is a link to `/dev/zero`, or `file,/dev/zero;`, grew to
/// 6.5 GB in 20 s and never ended. Each fails at once, in bounded memory; a file past
/// `--max-file-size` is refused with the size and how to raise it.
#[test]
fn unbounded_files_fail_fast() {
    let server = answering(200, "{}");
    let d = dir("unbounded");
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.toml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.json")).unwrap();
    let body = write(&d, "body.hurl", "POST {{base_url}}/x\nfile,zero.json;\nHTTP 200\n");
    let big =
        write(&d, "big.hurl", &format!("GET {{{{base_url}}}}/x\nHTTP 200\n{}", "# padding\n".repeat(200)));
    let cases: [(&Path, &[&str], &str); 4] = [
        (&d.join("zero.toml"), &[], "zero.toml:1:1: cannot read it: it is not a regular file"),
        (&body, &[], "body.hurl:2:6: cannot read"),
        (&body, &["--file-root", "/"], "body.hurl:2:6: cannot read"),
        (
            &big,
            &["--max-file-size", "1KiB"],
            "larger than 1 KiB, the most a scenario's file may have (--max-file-size",
        ),
    ];
    for (file, extra, said) in cases {
        let out = bounded(
            stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(file).args(extra),
            Duration::from_secs(30),
            400 << 20,
        );
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(all.contains(said), "{said} not in {all}");
    }
    let out = stackbench()
        .args(["verify", &server.url(""), "--file-root", "/", "--scenario-file"])
        .arg(&body)
        .output()
        .unwrap();
    assert!(text(&out).contains("it is not a regular file"), "{}", text(&out));
    assert_eq!(server.received(), "", "nothing was sent");
}

/// Issue 45 #10: a 20 MiB capture sent back as a header took 1.2 to 1.5 GB at `-c 20`, with no
/// error. A capture longer than 1 MiB (`--max-capture`) fails: `check` on its request, and the
/// request that would send it back is not sent.
#[test]
fn a_capture_past_its_cap_fails_and_is_not_sent_back() {
    let big = "x".repeat(20 << 20);
    let server = answering(200, &format!("{{\"t\": \"{big}\"}}"));
    let d = dir("capture");
    let file = write(
        &d,
        "echo.hurl",
        "GET {{base_url}}/take\nHTTP 200\n[Captures]\nt: jsonpath \"$.t\"\n\nGET {{base_url}}/give\nX-T: {{t}}\nHTTP 200\n",
    );
    let out = bounded(
        stackbench()
            .args([
                "load",
                &server.url(""),
                "-c",
                "4",
                "-n",
                "20",
                "--json",
                "-",
                "--quiet",
                "--scenario-file",
            ])
            .arg(&file),
        Duration::from_mins(1),
        1 << 30,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["errors"]["check"], 20, "{}", record["errors"]);
    assert_eq!(record["summary"]["requests"], 20, "the second request is never sent: {}", record["summary"]);
    assert!(!server.received().contains("/give"), "nothing sent it back");
    let out = bounded(
        stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(&file),
        Duration::from_mins(1),
        1 << 30,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("echo.hurl:4:1: `t: ...`: capture `t` would take 20971520 bytes, more than 1048576"),
        "{all}"
    );
}

/// Issue 45 #13: a file named like a built-in passed `verify` and `load` (a plan refused it);
/// only the built-in's own file may be loaded under its name.
#[test]
fn a_file_may_not_take_a_builtins_name() {
    let d = dir("builtin-name");
    let file = write(&d, "mine.toml", "name = \"dummy\"\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n");
    for cmd in ["verify", "load"] {
        let out =
            stackbench().args([cmd, "http://127.0.0.1:9", "--scenario-file"]).arg(&file).output().unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(all.contains("mine.toml:1:8: `name = \"dummy\"` is a built-in scenario's"), "{all}");
    }
}
