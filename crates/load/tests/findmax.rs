//! The capacity search against a server of known capacity: it serves one
//! request at a time (a lock held for a fixed service time), so its capacity
//! is 1 / service time, measured by the server itself. The search must find a
//! sustained rate within 10% below that capacity, and never above it.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stackbench_load::{Dur, LoadOptions, Percent, Stop, WarmupArg, run};

/// Requests served, and the time spent serving them.
#[derive(Default)]
struct Served {
    requests: u64,
    busy: Duration,
}

/// A server that answers one request at a time, each after `service`.
fn one_at_a_time(service: Duration) -> (String, Arc<Mutex<Served>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let served = Arc::new(Mutex::new(Served::default()));
    let counter = Arc::clone(&served);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                let mut conn = conn;
                let _ = conn.set_nodelay(true);
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        {
                            let mut s = counter.lock().unwrap();
                            let t = Instant::now();
                            std::thread::sleep(service);
                            s.busy += t.elapsed();
                            s.requests += 1;
                        }
                        if conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").is_err() {
                            return;
                        }
                    }
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                    }
                }
            });
        }
    });
    (url, served)
}

#[test]
fn finds_a_known_capacity_from_below() {
    // 5 ms a request: long beside a busy machine's scheduling delays (a few ms each), which
    // widen the service time's spread and with it the queue's latencies below the capacity.
    let (url, served) = one_at_a_time(Duration::from_millis(5));
    let o = LoadOptions {
        find_max: true,
        // p90, not p99: one stall of a busy machine (50 ms holds ~10 requests queued behind it,
        // 1.5% of a step) breaks a p99 at any rate; past the capacity the queue grows through the
        // whole step (and requests go late), which breaks a p90 too.
        slo: vec!["p90<62ms".parse().unwrap()],
        step: Some(Dur(Duration::from_millis(1500))),
        warmup: Some(WarmupArg::Fixed(Dur(Duration::from_millis(500)))),
        precision: Some(Percent(0.05)),
        connections: Some(8),
        threads: Some(1),
        ..LoadOptions::default()
    };
    let record = stackbench_testkit::record::valid(run(&o.to_spec(&url).unwrap(), &Stop::new()).unwrap());
    let search = record.find_max.as_ref().unwrap();
    let s = served.lock().unwrap();
    // The server's own capacity: what one-at-a-time service takes, sleep overshoot included.
    let capacity = s.requests as f64 / s.busy.as_secs_f64();
    let sustained = search.sustained_rps.unwrap_or_else(|| panic!("nothing sustained: {search:#?}"));
    assert!(!search.lower_bound, "{search:#?}");
    // Never above (1% for what the server's clock and ours disagree by), at most 10% below.
    assert!(sustained <= capacity * 1.01, "{sustained} above the capacity {capacity:.0}: {search:#?}");
    assert!(sustained >= capacity * 0.90, "{sustained} more than 10% below {capacity:.0}: {search:#?}");
    assert_eq!(search.steps.last().unwrap().phase, "confirm");
    assert!(
        (record.summary.ok_rps - sustained).abs() < sustained * 0.05,
        "the record is the confirming step's"
    );
}
