//! Memory against a hostile server (the peak RSS of the one `stackbench load`
//! it starts). An endless chunked answer on
//! each of 10 connections must cost each connection about one answer cap
//! (64 MiB), not the 2.3 caps it once did (1.48 GB for `-c 10`): the cap bounds
//! what is held, not only what is kept.

use std::process::{Command, Stdio};
use std::time::Duration;

use stackbench_testkit::hostile::{Answer, Hostile};

#[test]
fn endless_chunked_answers_hold_one_cap_per_connection() {
    let mut chunk = b"4000\r\n".to_vec();
    chunk.resize(chunk.len() + 0x4000, b'x');
    chunk.extend_from_slice(b"\r\n");
    let s = Hostile::start(Answer::Endless {
        head: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
        repeat: chunk,
    });
    let child = Command::new(env!("CARGO_BIN_EXE_stackbench"))
        // A count, not a duration: a run bounded by time cuts off the answers under way at its
        // end, and on a loaded machine none may have reached the cap by then.
        .args(["load", &s.url("/"), "-c", "10", "-n", "10", "--timeout", "30s", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let f = stackbench_testkit::process::finish(child, Duration::from_mins(1), None, "stackbench load");
    let (out, peak) = (f.output, f.peak_rss);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("protocol"), "answers past the cap are protocol errors:\n{stdout}");
    assert!(
        stdout.contains("requests      10 total"),
        "each connection's answer ended at the cap:\n{stdout}"
    );
    let cap = 64 << 20;
    assert!(peak > 2 * cap, "the answers did reach the cap (peak {} MiB)", peak >> 20);
    assert!(peak < 10 * cap + cap / 2 + (64 << 20), "peak RSS {} MiB for 10 connections", peak >> 20);
}
