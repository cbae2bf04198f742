//! `stackbench run` on a plan whose contestants serve a scenario file
//! (`scenario = "todo.toml"`), with real processes: the shipped example
//! server (`scenarios/examples/todo_server.py`, Python 3's standard library)
//! passes the file's verification and is measured, its runs recorded under
//! the scenario's name with the requests by name; a server that answers
//! wrongly (a new todo comes back done) is left out, with the failed
//! assert's `file:line:col`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use stackbench_record::{ResultSet, Status};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples").canonicalize().unwrap()
}

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        Scratch(tempfile::Builder::new().prefix(&format!("sb-run-scenario-file-{tag}-")).tempdir().unwrap())
    }
}

/// Runs a plan of `contestants` over the example todo scenario, with tiny durations.
fn run(s: &Scratch, contestants: &str) -> (Option<i32>, String, ResultSet) {
    assert!(
        Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success()),
        "these tests start the example server with python3, which is not on PATH"
    );
    let plan = format!(
        "[defaults]\nrepetitions = 1\ncold_starts = 1\nready_timeout = \"10s\"\nstop_grace = \"2s\"\n\
         [load.todo]\nconnections = 2\nwarmup = \"200ms\"\nduration = \"1s\"\n{contestants}"
    );
    let path = s.0.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let out = s.0.path().join("results");
    let o = Command::new(BIN)
        .args(["run", "--no-report"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code(), said, stackbench_testkit::record::load_results(&out))
}

fn contestant(name: &str, command: &str) -> String {
    let toml = examples().join("todo.toml");
    format!(
        "[[contestant]]\nname = \"{name}\"\nscenario = \"{}\"\nlanguage = \"Python 3\"\nframework = \"x\"\ncommand = {command}\n",
        toml.display()
    )
}

#[test]
fn the_example_server_passes_and_its_requests_are_recorded_by_name() {
    let s = Scratch::new("ok");
    let server = examples().join("todo_server.py");
    let command = format!("[\"python3\", \"{}\", \"--port\", \"{{port}}\"]", server.display());
    let (code, said, set) = run(&s, &contestant("py", &command));
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(set.manifest.status, Status::Complete);
    let c = &set.contestants[0];
    assert_eq!(c.scenario, "todo", "grouped under the file's `name`");
    let v = c.verification.as_ref().unwrap();
    assert!(v.passed && v.failures.is_empty() && v.cases == 2, "{v:?}");
    assert_eq!(set.runs.len(), 1, "{said}");
    let r = &set.runs[0];
    assert_eq!(r.label.scenario.as_deref(), Some("todo"));
    let names: Vec<&str> = r.per_request.iter().map(|n| n.name.as_str()).collect();
    for name in ["create", "read back", "empty title", "GET /todos?owner={{owner}}&limit={{limit}}"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let requests: u64 = r.per_request.iter().map(|n| n.requests).sum();
    assert_eq!(requests, r.summary.requests, "every request is counted by name: {:?}", r.summary);
    assert!(r.summary.ok > 0 && r.summary.errors == 0, "{:?} {:?}", r.summary, r.errors);
    assert!(r.iterations.as_ref().is_some_and(|i| i.requests > 0), "{:?}", r.iterations);
    assert!(said.contains("verified: 2 contract cases passed"), "{said}");
}

/// `tls = true`: stackbench makes the certificate, the example server serves HTTPS with it
/// (`{tls_cert}`, `{tls_key}`), and the verification and the load go over TLS trusting it.
#[test]
fn a_contestant_with_tls_is_verified_and_loaded_over_https() {
    let s = Scratch::new("tls");
    let server = examples().join("todo_server.py");
    let command = format!(
        "[\"python3\", \"{}\", \"--port\", \"{{port}}\", \"--cert\", \"{{tls_cert}}\", \"--key\", \"{{tls_key}}\"]\ntls = true",
        server.display()
    );
    let (code, said, set) = run(&s, &contestant("py-tls", &command));
    assert_eq!(code, Some(0), "{said}");
    let c = &set.contestants[0];
    assert!(c.verification.as_ref().is_some_and(|v| v.passed), "{:?}", c.verification);
    assert_eq!(set.runs.len(), 1, "{said}");
    let r = &set.runs[0];
    assert!(r.params.url.starts_with("https://127.0.0.1:"), "{}", r.params.url);
    assert!(r.summary.ok > 0 && r.summary.errors == 0, "{:?} {:?}", r.summary, r.errors);
    let tls = r.connections.as_ref().and_then(|c| c.tls.as_ref()).expect("the record says what TLS agreed");
    assert!(tls.version.starts_with("TLSv1."), "{tls:?}");
    assert!(tls.verified_by.starts_with("--cacert ") && tls.verified_by.ends_with("cert.pem"), "{tls:?}");
}

/// A todo server with one thing wrong: a new todo is answered as done.
const WRONG: &str = r#"
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def answer(self, status, body):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer(201, {"id": 1, "title": "milk", "done": True})
    def do_GET(self):
        self.answer(200, [])
    def do_DELETE(self):
        self.answer(204, None)

HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"#;

#[test]
fn a_server_that_answers_wrongly_is_left_out_with_the_failed_check() {
    let s = Scratch::new("wrong");
    let server = s.0.path().join("wrong.py");
    std::fs::write(&server, WRONG).unwrap();
    let (code, said, set) = run(&s, &contestant("done", &format!("[\"python3\", \"{}\"]", server.display())));
    assert_eq!(code, Some(3), "a contestant left out: {said}");
    assert!(set.runs.is_empty(), "not measured: {said}");
    let c = &set.contestants[0];
    let v = c.verification.as_ref().unwrap();
    assert!(!v.passed, "{v:?}");
    let core = v.failures.iter().find(|f| f.level == "core").unwrap();
    assert_eq!(core.rule, "create, read back, refuse an empty title");
    // The assert `jsonpath "$.done" == false`, line 11 of todo.hurl.
    let at = format!("{}:11:", examples().join("todo.hurl").display());
    assert!(core.detail.starts_with("create: ") && core.detail.contains(&at), "{core:?}");
    assert!(
        c.incidents.iter().any(|i| i.kind == "wrong_answer" && i.message.contains(&at)),
        "{:?}",
        c.incidents
    );
    assert!(said.contains("FAILED verification") && said.contains(&at), "{said}");
}
