//! `stackbench serve event-log` wires the same contestant as `sb-event-log`:
//! the announcement lines, the default stack, the store, `--reset`, and a
//! clean stop on SIGTERM (the slim binary's own tests cover the rest).

use std::process::Command;

use stackbench_testkit::http;
use stackbench_testkit::process::Server;

#[test]
fn serves_event_log_on_each_stack_and_stops_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("stackbench-cli-eventlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("events.db").display());
    for stack in ["axum", "actix", "hyper"] {
        let mut server = Server::start(
            Command::new(env!("CARGO_BIN_EXE_stackbench"))
                .args(["serve", "event-log", "--port", "0", "--reset", "--count", "counter"])
                .args(["--stack", stack, "--store", &store]),
        );
        let second = server.read_line().unwrap_or_default();
        let (first, addr) = (server.first_line(), server.addr);
        assert!(
            first.starts_with(&format!("stackbench serve event-log ({stack}, {store}, count=counter)")),
            "{first}"
        );
        assert!(second.starts_with("store: SQLite file") && second.contains("fsynced"), "{second}");
        for n in 1..=3 {
            let r = http::post_json(addr, "/events", r#"{"type":"page_view"}"#).unwrap();
            assert_eq!((r.status, r.text()), (200, format!(r#"{{"count":{n}}}"#)), "{stack}");
        }
        let status = server.terminate();
        assert!(status.success(), "{stack}: SIGTERM is a clean stop");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
