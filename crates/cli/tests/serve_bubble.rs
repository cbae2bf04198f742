//! `stackbench serve bubble-sort` as a user runs it: the start line the
//! orchestrator parses, the Connect JSON call with `--rest`, and a clean stop
//! on SIGTERM. (The gRPC side and the slim binary are tested in
//! `crates/serve/tests/bubble_*.rs`.)

use std::process::Command;

use stackbench_testkit::http;
use stackbench_testkit::process::Server;

#[test]
fn serves_connect_json_with_rest_and_stops_on_sigterm() {
    let mut server = Server::start(Command::new(env!("CARGO_BIN_EXE_stackbench")).args([
        "serve",
        "bubble-sort",
        "--port",
        "0",
        "--rest",
    ]));
    let (line, addr) = (server.first_line(), server.addr);
    assert!(line.starts_with("stackbench serve bubble-sort (tonic): listening on http://"), "{line}");

    let r = http::post_json(addr, "/sort.v1.SortService/BubbleSort", r#"{"data":[5,-1,3]}"#).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, r#"{"data":[-1,3,5]}"#));

    let status = server.terminate();
    assert!(status.success(), "SIGTERM is a clean stop: {status}");
}
