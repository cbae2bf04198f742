//! Scenario files against hostile files and servers (issue 45, "Trust at the
//! edges, part three", items 4 to 13): each test runs the `stackbench` binary on a
//! file written here against a server written here (`stackbench_testkit::hostile`,
//! which keeps what it was sent), bounded in time and in memory: a run past its
//! bound is killed and fails the test, so a regression cannot take the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use stackbench_testkit::hostile::{Answer, Hostile};

fn stackbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stackbench"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A directory of its own for each test's files.
fn dir(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("sb-hostile-files-{test}-")).tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `cmd` to its end, at most `time`, its peak resident set looked at every 10 ms and
/// held under `rss` bytes: past either it is killed and the test fails.
fn bounded(cmd: &mut Command, time: Duration, rss: u64) -> Output {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    stackbench_testkit::process::finish(child, time, Some(rss), "bounded run").output
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
    let tmp = dir("jsonpath");
    let d = tmp.path();
    let file = write(
        d,
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
    // Every answer checked (`--check-every 1`: `auto` may skip a costly check).
    assert_eq!(record["errors"]["check"], 5, "{}", record["errors"]);
}

/// Issue 45 #6: `file,/etc/shadow;`, `file,../../x;` and `file,/proc/self/environ;` were read
/// and sent. Files are read under the scenario's directory (or `--file-root`): each is refused
/// when the file loads, at its `file:line:col`, and nothing is sent.
#[test]
fn files_outside_the_scenario_are_refused_before_anything_is_sent() {
    let server = answering(200, "{}");
    let tmp = dir("outside");
    let d = tmp.path();
    write(d, "secret.txt", "the secret");
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
    // A root that holds the file lets it be read; as in Hurl, the `.hurl` file's names then
    // start at that root, so `../secret.txt` leads out of it and `secret.txt` is the file.
    let with_root = |file: &Path| {
        bounded(
            stackbench()
                .args(["verify", &server.url(""), "--file-root"])
                .arg(d)
                .arg("--scenario-file")
                .arg(file),
            Duration::from_secs(30),
            400 << 20,
        )
    };
    let out = with_root(&inner.join("up.hurl"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("up.hurl:2:6: cannot read") && text(&out).contains("outside"),
        "{}",
        text(&out)
    );
    assert_eq!(server.received(), "", "nothing was sent");
    let out = with_root(&write(&inner, "named.hurl", "POST {{base_url}}/x\nfile,secret.txt;\nHTTP 200\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(server.received().ends_with("the secret"), "{}", server.received());
}

/// Issue 45 #7: a scenario file that is a link to `/dev/zero`, or `file,/dev/zero;`, grew to
/// 6.5 GB in 20 s and never ended. Each fails at once, in bounded memory; a file past
/// `--max-file-size` is refused with the size and how to raise it.
#[test]
fn unbounded_files_fail_fast() {
    let server = answering(200, "{}");
    let tmp = dir("unbounded");
    let d = tmp.path();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.toml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.json")).unwrap();
    let body = write(d, "body.hurl", "POST {{base_url}}/x\nfile,zero.json;\nHTTP 200\n");
    let big =
        write(d, "big.hurl", &format!("GET {{{{base_url}}}}/x\nHTTP 200\n{}", "# padding\n".repeat(200)));
    let cases: [(&Path, &[&str], &str); 4] = [
        (&d.join("zero.toml"), &[], "zero.toml:1:1: cannot read it: it is not a regular file"),
        (&body, &[], "body.hurl:2:6: cannot read"),
        (&body, &["--file-root", "/"], "cannot read /zero.json"),
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
    // Under `--file-root /` the `.hurl` file's names start at `/`, as in Hurl.
    let rooted = format!("POST {{{{base_url}}}}/x\nfile,{};\nHTTP 200\n", d.join("zero.json").display());
    let rooted = write(d, "rooted.hurl", rooted.replacen("file,/", "file,", 1).as_str());
    let out = stackbench()
        .args(["verify", &server.url(""), "--file-root", "/", "--scenario-file"])
        .arg(&rooted)
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
    let tmp = dir("capture");
    let d = tmp.path();
    let file = write(
        d,
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
                "8",
                // 20 MiB answers take their time on a busy machine: a timeout is not what
                // this case is about.
                "--timeout",
                "100s",
                "--json",
                "-",
                "--quiet",
                "--scenario-file",
            ])
            .arg(&file),
        Duration::from_mins(4),
        1 << 30,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["errors"]["check"], 8, "{}", record["errors"]);
    assert_eq!(record["summary"]["requests"], 8, "the second request is never sent: {}", record["summary"]);
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
    let tmp = dir("builtin-name");
    let d = tmp.path();
    let file = write(d, "mine.toml", "name = \"dummy\"\n[[flow]]\nhurl = \"GET {{base_url}}/\"\n");
    for cmd in ["verify", "load"] {
        let out =
            stackbench().args([cmd, "http://127.0.0.1:9", "--scenario-file"]).arg(&file).output().unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(all.contains("mine.toml:1:8: `name = \"dummy\"` is a built-in scenario's"), "{all}");
    }
}

/// What a server received holds no line that a value smuggled in: no `Evil` header, no second
/// request.
fn nothing_smuggled(server: &Hostile) {
    let got = server.received();
    assert!(!got.contains("Evil") && !got.contains("smuggled"), "{got}");
}

/// Issue 45 #4: a captured `"a\r\nEvil: 1"` written into a header added a header, and into a
/// URL split the request (the server read a second `GET /smuggled`); the same through a CSV
/// row or `--variable`. Such a request is not sent: `verify` fails its case with the reason,
/// `load` counts it `check`.
#[test]
fn a_value_with_cr_lf_or_nul_never_reaches_a_request_line_or_header() {
    let server =
        answering(200, r#"{"h": "a\r\nEvil: 1", "u": "a HTTP/1.1\r\n\r\nGET /smuggled", "z": "a\u0000b"}"#);
    let tmp = dir("inject");
    let d = tmp.path();
    let take = "GET {{base_url}}/take\nHTTP 200\n[Captures]\nh: jsonpath \"$.h\"\nu: jsonpath \"$.u\"\nz: jsonpath \"$.z\"\n\n";
    let cases = [
        ("header.hurl", "GET {{base_url}}/give\nX-H: {{h}}\nHTTP 200\n", "a carriage return (CR)"),
        ("url.hurl", "GET {{base_url}}/give/{{u}}\nHTTP 200\n", "a carriage return (CR)"),
        ("nul.hurl", "GET {{base_url}}/give\nX-Z: {{z}}\nHTTP 200\n", "a NUL byte"),
    ];
    for (name, give, said) in cases {
        let file = write(d, name, &format!("{take}{give}"));
        let out = bounded(
            stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(&file),
            Duration::from_secs(30),
            400 << 20,
        );
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {all}");
        assert!(all.contains(said) && all.contains("the request is not sent"), "{name}: {all}");
        let out = bounded(
            stackbench()
                .args([
                    "load",
                    &server.url(""),
                    "-c",
                    "1",
                    "-n",
                    "5",
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
        assert_eq!(record["errors"]["check"], 5, "{name}: {}", record["errors"]);
    }
    // A data row, and --variable.
    write(d, "rows.csv", "v\n\"a\r\nEvil: 1\"\n");
    let rows = write(
        d,
        "rows.toml",
        "[[rows]]\nfile = \"rows.csv\"\n[[flow]]\nhurl = \"GET {{base_url}}/row/{{v}}\\nHTTP 200\\n\"\n",
    );
    let var = write(d, "var.hurl", "GET {{base_url}}/var\nX-V: {{v}}\nHTTP 200\n");
    for (file, extra) in [(&rows, &[][..]), (&var, &["--variable", "v=a\r\nEvil: 1"][..])] {
        let out = stackbench()
            .args(["verify", &server.url(""), "--scenario-file"])
            .arg(file)
            .args(extra)
            .output()
            .unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(all.contains("variable `v` holds a carriage return (CR)"), "{all}");
    }
    nothing_smuggled(&server);
}

/// Issue 45 #5: `verify` followed a captured absolute URL, or a capture that extends the
/// target's host, to another host and said "passes"; `load` sent nothing there. A host comes
/// from the file or the user: the request is refused and the other host hears nothing.
#[test]
fn verify_never_follows_an_answer_to_another_host() {
    let elsewhere = answering(200, "{}");
    let other = elsewhere.addr;
    let server = answering(200, &format!(r#"{{"next": "http://{other}/x", "tail": "@{other}/x"}}"#));
    let tmp = dir("hosts");
    let d = tmp.path();
    let take = "GET {{base_url}}/take\nHTTP 200\n[Captures]\nnext: jsonpath \"$.next\"\ntail: jsonpath \"$.tail\"\n\n";
    for (name, give) in [
        ("absolute.hurl", "GET {{next}}\nHTTP 200\n"),
        ("userinfo.hurl", "GET {{base_url}}{{tail}}\nHTTP 200\n"),
    ] {
        let file = write(d, name, &format!("{take}{give}"));
        let out =
            stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(&file).output().unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {all}");
        // Refused when the file loads, at the request's place: nothing is sent.
        assert!(all.contains(&format!("{name}:7:")), "{all}");
        assert!(all.contains("whose value is not known when the file loads"), "{all}");
    }
    // A data file's `base_url`, and a capture of it, are refused when the file loads.
    write(d, "hosts.csv", &format!("base_url\nhttp://{other}\n"));
    let rows = write(
        d,
        "rows.toml",
        "[[rows]]\nfile = \"hosts.csv\"\n[[flow]]\nhurl = \"GET {{base_url}}/x\\nHTTP 200\\n\"\n",
    );
    let capture = write(
        d,
        "capture.hurl",
        "GET {{base_url}}/take\nHTTP 200\n[Captures]\nbase_url: jsonpath \"$.next\"\n\nGET {{base_url}}/x\nHTTP 200\n",
    );
    for (file, said) in [
        (&rows, "rows.toml:2:8: a data file cannot set `base_url`"),
        (&capture, "capture.hurl:4:1: a capture cannot set `base_url`"),
    ] {
        let out =
            stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(file).output().unwrap();
        assert!(text(&out).contains(said), "{said} not in {}", text(&out));
    }
    assert_eq!(elsewhere.received(), "", "the other host heard nothing");
}

/// Issue 45 #11: a 10 MiB URL was sent under `load`, and `verify` printed 20 MB. The values a
/// request's line and headers carry are bounded (64 KiB): past it the request is not sent
/// (`check`); and what `verify` prints of one failure is cut, and says so.
#[test]
fn huge_request_lines_are_not_sent_and_verify_says_little() {
    let long = "x".repeat(10 << 20);
    let server = answering(200, &format!(r#"{{"t": "{long}", "s": "{}"}}"#, "a b".repeat(20_000)));
    let tmp = dir("huge");
    let d = tmp.path();
    let file = write(
        d,
        "huge.hurl",
        "GET {{base_url}}/take\nHTTP 200\n[Captures]\nt: jsonpath \"$.t\"\n\nGET {{base_url}}/give/{{t}}\nHTTP 200\n",
    );
    let out = bounded(
        stackbench()
            .args([
                "load",
                &server.url(""),
                "-c",
                "2",
                "-n",
                "6",
                "--max-capture",
                "32MiB",
                "--json",
                "-",
                "--quiet",
            ])
            .arg("--scenario-file")
            .arg(&file),
        Duration::from_mins(1),
        1 << 30,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["errors"]["check"], 6, "{}", record["errors"]);
    assert!(!server.received().contains("/give"), "no such request was sent");
    let out = bounded(
        stackbench()
            .args(["verify", &server.url(""), "--max-capture", "32MiB", "--scenario-file"])
            .arg(&file),
        Duration::from_mins(1),
        1 << 30,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{}", &all[..all.len().min(2000)]);
    assert!(
        all.len() < 4000 && all.contains("is too long"),
        "{} bytes: {}",
        all.len(),
        &all[..all.len().min(2000)]
    );
    // A message that would carry a value of an answer is cut, and says so.
    let spaced = write(
        d,
        "spaced.hurl",
        "GET {{base_url}}/take\nHTTP 200\n[Captures]\ns: jsonpath \"$.s\"\n\nGET {{base_url}}/give/{{s}}\nHTTP 200\n",
    );
    let out = bounded(
        stackbench().args(["verify", &server.url(""), "--scenario-file"]).arg(&spaced),
        Duration::from_mins(1),
        1 << 30,
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{}", &all[..all.len().min(2000)]);
    assert!(
        all.len() < 4000 && all.contains("(cut: "),
        "{} bytes: {}",
        all.len(),
        &all[..all.len().min(2000)]
    );
}

/// Issue 45 #12: a file's `Host:` was sent beside the computed one (two Host headers), and
/// `Content-Length: 0` with `Transfer-Encoding: chunked` and a 5-byte body was sent as
/// written. The file's Host replaces the computed one; a Content-Length that matches its body
/// is sent once; one that does not, and Transfer-Encoding, are refused where they are written.
#[test]
fn a_request_has_one_host_and_one_framing() {
    let server = answering(200, "{}");
    let tmp = dir("framing");
    let d = tmp.path();
    let good = write(
        d,
        "good.hurl",
        "POST {{base_url}}/x\nHost: vhost.example\nContent-Length: 5\n`hello`\nHTTP 200\n",
    );
    for cmd in ["verify", "load"] {
        let mut c = stackbench();
        c.args([cmd, &server.url(""), "--scenario-file"]).arg(&good);
        if cmd == "load" {
            c.args(["-c", "1", "-n", "1", "--quiet"]);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out));
    }
    let got = server.received();
    let heads: Vec<&str> = got.split("POST /x HTTP/1.1\r\n").skip(1).collect();
    assert_eq!(heads.len(), 2, "{got}");
    for head in heads {
        let head = head.to_ascii_lowercase();
        assert_eq!(head.matches("\r\nhost: ").count() + usize::from(head.starts_with("host: ")), 1, "{head}");
        assert!(head.contains("host: vhost.example\r\n"), "{head}");
        assert_eq!(head.matches("content-length: 5\r\n").count(), 1, "{head}");
    }
    let bad = [
        (
            "length.hurl",
            "POST {{base_url}}/x\nContent-Length: 0\n`hello`\nHTTP 200\n",
            "length.hurl:2:1: `Content-Length: 0` does not match the body, 5 bytes",
        ),
        (
            "chunked.hurl",
            "POST {{base_url}}/x\nTransfer-Encoding: chunked\n`hello`\nHTTP 200\n",
            "chunked.hurl:2:1: stackbench frames every request's body itself",
        ),
        (
            "hosts.hurl",
            "GET {{base_url}}/x\nHost: a\nHost: b\nHTTP 200\n",
            "hosts.hurl:3:1: `Host` is given twice",
        ),
    ];
    for (name, hurl, said) in bad {
        let file = write(d, name, hurl);
        for cmd in ["verify", "load"] {
            let out =
                stackbench().args([cmd, &server.url(""), "--scenario-file"]).arg(&file).output().unwrap();
            let all = text(&out);
            assert_eq!(out.status.code(), Some(1), "{cmd} {name}: {all}");
            assert!(all.contains(said), "{said} not in {all}");
        }
    }
}
