//! `stackbench serve bubble-sort` as a user runs it: the start line the
//! orchestrator parses, the Connect JSON call with `--rest`, and a clean stop
//! on SIGTERM. (The gRPC side and the slim binary are tested in
//! `crates/serve/tests/bubble_*.rs`.)

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_testkit::http;

#[test]
fn serves_connect_json_with_rest_and_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        .args(["serve", "bubble-sort", "--port", "0", "--rest"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("stackbench starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("stackbench serve bubble-sort (tonic): listening on http://"), "{line}");
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));

    let r = http::post_json(addr, "/sort.v1.SortService/BubbleSort", r#"{"data":[5,-1,3]}"#).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, r#"{"data":[-1,3,5]}"#));

    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not stop within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "SIGTERM is a clean stop: {status}");
}
