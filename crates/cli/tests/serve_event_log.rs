//! `stackbench serve event-log` wires the same contestant as `sb-event-log`:
//! the announcement lines, the default stack, the store, `--reset`, and a
//! clean stop on SIGTERM (the slim binary's own tests cover the rest).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_testkit::http;

#[test]
fn serves_event_log_on_each_stack_and_stops_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("stackbench-cli-eventlog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("events.db").display());
    for stack in ["axum", "actix", "hyper"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stackbench"))
            .args(["serve", "event-log", "--port", "0", "--reset", "--count", "counter"])
            .args(["--stack", stack, "--store", &store])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (mut first, mut second) = (String::new(), String::new());
        out.read_line(&mut first).unwrap();
        out.read_line(&mut second).unwrap();
        assert!(
            first.starts_with(&format!("stackbench serve event-log ({stack}, {store}, count=counter)")),
            "{first}"
        );
        assert!(second.starts_with("store: SQLite file") && second.contains("fsynced"), "{second}");
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .and_then(|a| a.parse().ok())
            .unwrap();
        for n in 1..=3 {
            let r = http::post_json(addr, "/events", r#"{"type":"page_view"}"#).unwrap();
            assert_eq!((r.status, r.text()), (200, format!(r#"{{"count":{n}}}"#)), "{stack}");
        }
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "{stack}: no exit within 10 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{stack}: SIGTERM is a clean stop");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
