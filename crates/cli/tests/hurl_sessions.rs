//! A Hurl file's session through the binary, against a small site of the test's own
//! (`stackbench_testkit::site`): the cookie jar (fresh each iteration, or kept), redirects
//! followed by `verify` when an entry asks, the file's origins moved to the target
//! (`--base-variable`, `--origin`), and a `[setup]` step run once before a load, in no count.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use stackbench_testkit::site::{Answer, Asked, start};

/// The site: `POST /login` sets the cookie `sid` (and answers a token), `GET /me` answers 200
/// with the cookie or the token, 401 without; `GET /old` redirects to `/me`. It counts logins.
fn site() -> (SocketAddr, Arc<AtomicU64>) {
    let logins = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&logins);
    let addr = start(move |a: &Asked| match (a.method.as_str(), a.path.as_str()) {
        ("POST", "/login") => {
            counted.fetch_add(1, Ordering::SeqCst);
            Answer::json(200, &json!({"token": "t1"})).with("Set-Cookie", "sid=s1; Path=/; HttpOnly")
        }
        ("GET", "/me") => {
            let cookie = a.header("cookie").is_some_and(|c| c.split("; ").any(|c| c == "sid=s1"));
            let token = a.header("authorization") == Some("Bearer t1");
            if cookie || token {
                Answer::json(200, &json!({"user": "ann"}))
            } else {
                Answer::json(401, &json!({"error": "log in"}))
            }
        }
        ("GET", "/old") => Answer { status: 302, ..Answer::default() }.with("Location", "/me"),
        _ => Answer::json(404, &json!({})),
    });
    (addr, logins)
}

fn scratch(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("sb-hurl-sessions-{name}-")).tempdir().unwrap();
    for (file, text) in files {
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    dir
}

fn stackbench(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stackbench")).args(args).arg(file).output().expect("stackbench runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A load of `file` for `iterations` iterations of one user; its record.
fn load(extra: &[&str], iterations: &str, file: &Path) -> serde_json::Value {
    let mut args = vec!["load", "-c", "1", "-n", iterations, "--threads", "1", "--json", "-"];
    args.extend_from_slice(extra);
    args.push("--scenario-file");
    let out = stackbench(&args, file);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    stackbench_testkit::record::record_json(&out.stdout)
}

/// Unauthorised, then logged in by the cookie: each iteration must begin with an empty jar.
const JAR: &str =
    "GET {{base_url}}/me\nHTTP 401\n\nPOST {{base_url}}/login\nHTTP 200\n\nGET {{base_url}}/me\nHTTP 200\n";

#[test]
fn the_jar_is_fresh_each_iteration_unless_kept() {
    let (addr, _) = site();
    let tmp = scratch("jar", &[("jar.hurl", JAR)]);
    let dir = tmp.path();
    let file = dir.join("jar.hurl");
    let target = format!("http://{addr}");
    let out = stackbench(&["verify", &target, "--scenario-file"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let record = load(&[&target], "4", &file);
    assert_eq!(record["summary"]["requests"], 12);
    assert_eq!(record["summary"]["ok"], 12, "a fresh jar each iteration: {}", record["summary"]);

    // Kept: from the second iteration on, the first request is already logged in.
    let record = load(&[&target, "--keep-cookies"], "4", &file);
    assert_eq!(record["summary"]["requests"], 12);
    assert_eq!(record["summary"]["ok"], 9, "{}", record["summary"]);
}

#[test]
fn verify_follows_a_redirect_only_when_the_entry_asks() {
    let (addr, _) = site();
    let followed = "POST {{base_url}}/login\nHTTP 200\n\nGET {{base_url}}/old\n[Options]\nlocation: true\nHTTP 200\n\
                    [Asserts]\nredirects count == 1\nurl endsWith \"/me\"\njsonpath \"$.user\" == \"ann\"\n\n\
                    GET {{base_url}}/old\nHTTP 302\n[Asserts]\nheader \"Location\" == \"/me\"\n";
    let tmp = scratch(
        "redirects",
        &[("followed.hurl", followed), ("wrong.hurl", "GET {{base_url}}/old\nHTTP 200\n")],
    );
    let dir = tmp.path();
    let target = format!("http://{addr}");
    let out = stackbench(&["verify", &target, "--scenario-file"], &dir.join("followed.hurl"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = stackbench(&["verify", &target, "--scenario-file"], &dir.join("wrong.hurl"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("expected status 200, got 302"), "{}", text(&out));
}

#[test]
fn a_files_origins_go_to_the_target_and_where_origin_maps_them() {
    let (addr, _) = site();
    let target = format!("http://{addr}");
    let written = "POST http://api.example.test:8080/login\nHTTP 200\n\nGET http://api.example.test:8080/me\nHTTP 200\n";
    let host = "POST {{host}}/login\nHTTP 200\n\nGET {{host}}/me\nHTTP 200\n";
    let two = "POST http://auth.example.test/login\nHTTP 200\n[Captures]\ntoken: jsonpath \"$.token\"\n\n\
               GET http://api.example.test/me\nAuthorization: Bearer {{token}}\nHTTP 200\n";
    let tmp = scratch("origins", &[("written.hurl", written), ("host.hurl", host), ("two.hurl", two)]);
    let dir = tmp.path();

    // The file's first origin is the target's, said once.
    let out = stackbench(&["verify", &target, "--scenario-file"], &dir.join("written.hurl"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains(&format!("http://api.example.test:8080 go to {target}")), "{}", text(&out));
    let record = load(&[&target], "3", &dir.join("written.hurl"));
    assert_eq!(
        (record["summary"]["requests"].as_u64(), record["summary"]["ok"].as_u64()),
        (Some(6), Some(6))
    );

    // The variable that stands for the target, named.
    let out = stackbench(
        &["verify", &target, "--base-variable", "host", "--scenario-file"],
        &dir.join("host.hurl"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record = load(&[&target, "--base-variable", "host"], "3", &dir.join("host.hurl"));
    assert_eq!(record["summary"]["ok"], 6, "{}", record["summary"]);

    // A second origin left unmapped is refused, named; mapped, it goes where it is told.
    let out = stackbench(&["verify", &target, "--scenario-file"], &dir.join("two.hurl"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("http://api.example.test"), "{}", text(&out));
    let map = format!("http://api.example.test={target}");
    let out = stackbench(&["verify", &target, "--origin", &map, "--scenario-file"], &dir.join("two.hurl"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let record = load(&[&target, "--origin", &map], "3", &dir.join("two.hurl"));
    assert_eq!(record["summary"]["ok"], 6, "{}", record["summary"]);
}

#[test]
fn setup_runs_once_before_the_load_and_is_not_counted() {
    let (addr, logins) = site();
    let toml = "name = \"me\"\nprotocol = \"http1\"\n\n[setup]\nhurl = '''\nPOST {{base_url}}/login\nHTTP 200\n\
                [Captures]\ntoken: jsonpath \"$.token\"\n'''\n\n[[flow]]\nhurl = '''\nGET {{base_url}}/me\n\
                Authorization: Bearer {{token}}\nHTTP 200\n'''\n";
    let tmp = scratch("setup", &[("me.toml", toml)]);
    let dir = tmp.path();
    let record = load(&[&format!("http://{addr}")], "5", &dir.join("me.toml"));
    assert_eq!(logins.load(Ordering::SeqCst), 1, "the setup ran once");
    assert_eq!(record["summary"]["requests"], 5, "only the flow's requests are counted");
    assert_eq!(record["summary"]["ok"], 5, "{}", record["summary"]);
    assert_eq!(record["per_request"].as_array().map(Vec::len), Some(1), "{}", record["per_request"]);
}
