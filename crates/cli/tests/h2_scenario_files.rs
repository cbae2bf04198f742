//! h2c and gRPC scenario files through the binary, against real servers: the
//! shipped `scenarios/examples/bubble-sort.toml` against the Rust reference
//! server (`sb-bubble-sort`), with `verify` (every case passes), `load` (the
//! call recorded under the method's name) and `run` (a plan's contestant
//! verified and measured under the file's name); the same file against a gRPC
//! server that answers every list as it came (hyper, in this test) fails
//! verification with the failed assert's `file:line:col`; and an h2c file
//! against `sb-dummy`, whose accept loop serves h2c beside HTTP/1.1.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Output, Stdio};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Body, Frame};
use stackbench_record::store::ResultSet;
use stackbench_testkit::contestants::contestant;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples").join(name).canonicalize().unwrap()
}

fn serve(name: &str) -> Server {
    Server::start(Command::new(contestant(BIN, name)).args(["--port", "0"]))
}

fn stackbench(args: &[&str], file: &Path) -> Output {
    Command::new(BIN).args(args).arg("--scenario-file").arg(file).output().expect("stackbench runs")
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-h2-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_reference_server_passes_the_bubble_sort_file_and_is_measured() {
    let s = serve("sb-bubble-sort");
    let url = format!("http://{}", s.addr);
    let out = stackbench(&["verify", &url], &example("bubble-sort.toml"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("ok      core       a short list comes back sorted"), "{stdout}");
    assert!(stdout.contains("passes the bubble-sort-file scenario (6 cases)"), "{stdout}");

    let out = stackbench(
        &["load", &url, "-c", "2", "-d", "1s", "--threads", "1", "--json", "-"],
        &example("bubble-sort.toml"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["params"]["transport"], "grpc");
    let per = &record["per_request"][0];
    assert_eq!(per["name"], "sort.v1.SortService/BubbleSort");
    assert!(per["requests"].as_u64().unwrap() > 5, "{per}");
    assert_eq!(record["summary"]["errors"], 0, "{}", record["errors"]);
    assert_eq!(record["iterations"]["requests"], per["requests"]);
    assert!(stderr.contains("sort.v1.SortService/BubbleSort"), "{stderr}");
}

#[test]
fn a_plan_contestant_serving_the_grpc_file_is_verified_and_measured() {
    let dir = std::env::temp_dir().join(format!("sb-h2-files-plan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bin_dir = Path::new(&contestant(BIN, "sb-bubble-sort")).parent().unwrap().to_owned();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[defaults]\nrepetitions = 1\ncold_starts = 1\nready_timeout = \"10s\"\nstop_grace = \"2s\"\n\
             [load.bubble-sort-file]\nconnections = 2\nwarmup = \"200ms\"\nduration = \"1s\"\n\
             [[contestant]]\nname = \"tonic\"\nscenario = \"{}\"\nlanguage = \"Rust\"\nframework = \"tonic\"\n\
             command = [\"{}/sb-bubble-sort\", \"--port\", \"{{port}}\"]\n",
            example("bubble-sort.toml").display(),
            bin_dir.display()
        ),
    )
    .unwrap();
    let out = dir.join("results");
    let o = Command::new(BIN)
        .args(["run", "--no-report"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{said}");
    let set = ResultSet::load(&out).unwrap();
    let c = &set.contestants[0];
    assert_eq!(c.scenario, "bubble-sort-file");
    let v = c.verification.as_ref().unwrap();
    assert!(v.passed && v.cases == 6, "{v:?}");
    assert_eq!(set.runs.len(), 1, "{said}");
    let run = &set.runs[0];
    assert_eq!(run.label.scenario.as_deref(), Some("bubble-sort-file"));
    assert_eq!(run.per_request[0].name, "sort.v1.SortService/BubbleSort");
    assert!(run.summary.requests > 0 && run.summary.errors == 0, "{:?}", run.errors);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_that_does_not_sort_fails_with_the_asserts_place() {
    let addr = echo_server();
    let out = stackbench(&["verify", &format!("http://{addr}")], &example("bubble-sort.toml"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("FAILED  core       the 1000 numbers of the experiment come back sorted"),
        "{stdout}"
    );
    assert!(stdout.contains("FAILED  core       a short list comes back sorted"), "{stdout}");
    assert!(stdout.contains("ok      core       a one-element list comes back as is"), "{stdout}");
    let toml = std::fs::read_to_string(example("bubble-sort.toml")).unwrap();
    let line = toml.lines().position(|l| l == "jsonpath \"$.data[0]\" == 1").unwrap() + 1;
    let expected = format!("bubble-sort.toml:{line}:1: `jsonpath \"$.data[0]\" == 1`: actual value is 5");
    assert!(stdout.contains(&expected), "{expected} not in\n{stdout}");
    assert!(stdout.contains("failed 3 core case(s) of the bubble-sort-file scenario"), "{stdout}");
}

const H2C: &str = r#"
name = "events-h2c"
protocol = "h2c"

[[flow]]
names = ["event", "count"]
hurl = '''
POST {{base_url}}/events
{"type": "signup"}
HTTP 200
[Captures]
n: jsonpath "$.count"
GET {{base_url}}/events/count
HTTP 200
[Asserts]
header "content-type" contains "application/json"
jsonpath "$.count" >= 1
'''
"#;

#[test]
fn an_h2c_file_is_verified_and_loaded_over_http2() {
    let s = serve("sb-dummy");
    let url = format!("http://{}", s.addr);
    let file = temp("events-h2c.toml", H2C);
    let out = stackbench(&["verify", &url], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("passes the events-h2c scenario (1 cases)"), "{stdout}");
    let out = stackbench(&["load", &url, "-c", "2", "-d", "1s", "--threads", "1", "--json", "-"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["params"]["transport"], "h2c");
    assert_eq!(record["summary"]["errors"], 0, "{}", record["errors"]);
    let names: Vec<&str> =
        record["per_request"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["event", "count"]);
    // A wrong expectation fails verification with its place in the TOML.
    let file = temp("events-h2c-wrong.toml", &H2C.replace(">= 1", "== 0"));
    let out = stackbench(&["verify", &url], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("events-h2c-wrong.toml:17:1: `jsonpath \"$.count\" == 0`"), "{stdout}");
}

/// A gRPC server over h2c that answers every call with the message it was sent (a list comes
/// back unsorted), on a loopback port until the test process ends.
fn echo_server() -> SocketAddr {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tokio::spawn(async move {
                    let svc =
                        hyper::service::service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(http_body_util::Collected::to_bytes)
                                .unwrap_or_default();
                            let mut trailers = http::HeaderMap::new();
                            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
                            let frames = vec![Frame::data(body), Frame::trailers(trailers)];
                            let mut r = hyper::Response::new(Frames(frames.into()));
                            r.headers_mut()
                                .insert("content-type", http::HeaderValue::from_static("application/grpc"));
                            Ok::<_, Infallible>(r)
                        });
                    let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
    });
    addr
}

/// A body of given frames (data, then trailers).
struct Frames(std::collections::VecDeque<Frame<Bytes>>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }
}
