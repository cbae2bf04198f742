//! `stackbench verify URL --scenario-file F` on the shipped todo scenario,
//! against a small todo service written here (not one of stackbench's
//! contestants): one that answers right, one that answers a new todo as done
//! (a core rule) and one that stores a 300-character title (a hardening rule).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    Done,
    LongTitle,
}

/// Serves the todo API on a loopback port until the test process ends; one request per connection.
fn todo_service(fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut store: BTreeMap<u64, String> = BTreeMap::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut parts = line.split_whitespace();
            let (method, path) =
                (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
            let mut length = 0;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let (status, answer) = answer(fault, &mut store, &method, &path, &body);
            let answer = answer.to_string();
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            )
            .unwrap();
        }
    });
    addr
}

fn answer(
    fault: Fault,
    store: &mut BTreeMap<u64, String>,
    method: &str,
    path: &str,
    body: &[u8],
) -> (u16, serde_json::Value) {
    use serde_json::json;
    match (method, path) {
        ("POST", "/todos") => {
            let title = serde_json::from_slice::<serde_json::Value>(body).unwrap()["title"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            if title.is_empty() || (title.len() > 200 && fault != Fault::LongTitle) {
                return (400, json!({"error": "a title is 1 to 200 characters"}));
            }
            let id = store.len() as u64 + 1;
            store.insert(id, title.clone());
            (201, json!({"id": id, "title": title, "done": fault == Fault::Done}))
        }
        ("DELETE", "/todos") => {
            store.clear();
            (204, json!(null))
        }
        ("GET", p) if p.starts_with("/todos?") => (200, json!([])),
        ("GET", p) => {
            match p.strip_prefix("/todos/").and_then(|id| id.parse().ok()).and_then(|id: u64| store.get(&id))
            {
                Some(t) => (200, json!({"id": 1, "title": t, "done": false})),
                None => (404, json!({"error": "no such todo"})),
            }
        }
        _ => (404, json!({"error": "unknown path"})),
    }
}

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
    let dir = std::env::temp_dir().join(format!("sb-verify-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.hurl");
    std::fs::write(&file, "GET {{base_url}}/{{nope}}\nHTTP 200\n").unwrap();
    let out = verify("http://127.0.0.1:9", &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.hurl:1:18: unknown variable `nope`"), "{stderr}");
}
