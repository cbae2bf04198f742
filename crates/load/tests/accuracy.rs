//! Does the engine measure what happened? A server that holds every answer
//! 20 ms must read as 20 ms; a server that stalls must show the stall in the
//! open model's tail, while the closed model (which stops sending while it
//! waits) hides most of it — the coordinated omission the open model corrects.
//! The strict figures (p50 within 5% on an idle machine) are in
//! `bench/load/accuracy.sh`; these tests use margins that hold on a busy
//! 2-core machine.

use std::time::Duration;

use crate::common::{Behavior, start};
use stackbench_load::{Dur, LoadOptions, Stop, run};
use stackbench_testkit::record::valid;

#[test]
fn a_fixed_delay_reads_as_that_delay() {
    let s = start(Behavior { delay: Some(Duration::from_millis(20)), ..Behavior::default() });
    let o = LoadOptions {
        connections: Some(10),
        duration: Some(Dur(Duration::from_secs(2))),
        threads: Some(1),
        ..LoadOptions::default()
    };
    let r = valid(run(&o.to_spec(&s.url("/")).unwrap(), &Stop::new()).unwrap());
    let mut holds = s.stats.holds.lock().unwrap().clone();
    holds.sort();
    let server_p50 = holds[holds.len() / 2].as_micros() as f64;
    let p50 = r.summary.latency.p50_us as f64;
    // The client sees the server's hold plus a loopback round trip.
    assert!(p50 >= server_p50 * 0.99, "client p50 {p50} µs below the server's hold {server_p50} µs");
    assert!(p50 <= server_p50 * 1.05 + 300.0, "client p50 {p50} µs vs server hold {server_p50} µs");
    // (On a busy machine the server's own timer runs late, so the absolute 20 ms is checked in bench/.)
    assert!(p50 >= 19_800.0, "p50 {p50} µs below the 20 ms the server waits at least");
}

#[test]
fn the_open_model_shows_a_stall_the_closed_model_hides() {
    // Requests arriving between 1.0 s and 2.0 s after the server starts wait until 2.0 s.
    let stall =
        Behavior { stall: Some((Duration::from_secs(1), Duration::from_secs(2))), ..Behavior::default() };
    let open = start(stall.clone());
    let o = LoadOptions {
        rate: Some(200.0),
        duration: Some(Dur(Duration::from_secs(3))),
        threads: Some(1),
        ..LoadOptions::default()
    };
    let r = valid(run(&o.to_spec(&open.url("/")).unwrap(), &Stop::new()).unwrap());
    let l = &r.summary.latency;
    // About a third of the requests were due during the stall and waited up to a second.
    assert!(l.p90_us >= 300_000, "open p90 {} µs should show the stall", l.p90_us);
    assert!(l.p99_us >= 700_000, "open p99 {} µs should show the stall", l.p99_us);
    assert!(r.summary.corrected_for_coordinated_omission);

    let closed = start(stall);
    let o = LoadOptions {
        connections: Some(4),
        duration: Some(Dur(Duration::from_secs(3))),
        threads: Some(1),
        ..LoadOptions::default()
    };
    let r = valid(run(&o.to_spec(&closed.url("/")).unwrap(), &Stop::new()).unwrap());
    // Only the 4 requests caught in the stall waited; thousands of fast ones dilute them.
    assert!(r.summary.latency.p90_us < 100_000, "closed p90 {} µs", r.summary.latency.p90_us);
    assert!(!r.summary.corrected_for_coordinated_omission);
    assert!(r.summary.latency.max_us >= 500_000, "the closed model still saw the stall once");
}

#[test]
fn timer_slack_is_counted_in_the_latency() {
    // 400 req/s with a 20 ms slack: requests due every 2.5 ms start in bursts on a 20 ms grid, so
    // each waits 0..20 ms (about 9 ms at the median) after its due time, and that wait is latency.
    let s = start(Behavior::default());
    let run_with = |slack: Option<Duration>| {
        let o = LoadOptions {
            rate: Some(400.0),
            duration: Some(Dur(Duration::from_secs(2))),
            threads: Some(1),
            timer_slack: slack.map(Dur),
            ..LoadOptions::default()
        };
        valid(run(&o.to_spec(&s.url("/")).unwrap(), &Stop::new()).unwrap())
    };
    let r = run_with(Some(Duration::from_millis(20)));
    assert_eq!(r.summary.errors, 0, "{:?}", r.summary);
    assert_eq!(r.params.extra["timer_slack_us"], 20_000);
    let (latency, service) = (&r.summary.latency, r.summary.service_latency.as_ref().unwrap());
    assert!(
        latency.p50_us >= service.p50_us + 4_000,
        "latency p50 {} µs should hold the wait for the grid (service p50 {} µs)",
        latency.p50_us,
        service.p50_us
    );
    assert!(latency.p50_us <= 60_000, "latency p50 {} µs", latency.p50_us);
    // Without slack each request starts on time: no wait of that size. The same requests were
    // due, each answered in the window or counted unfinished at its end (with slack, those of
    // the last grid step, due before the end and started after it, too).
    let due =
        |r: &stackbench_load::RunRecord| r.summary.requests + r.timeline.last().map_or(0, |t| t.in_flight);
    let slacked = due(&r);
    let r = run_with(None);
    assert_eq!(slacked, due(&r), "due with slack {slacked}, without {}", due(&r));
    assert!(!r.params.extra.contains_key("timer_slack_us"));
    let (latency, service) = (&r.summary.latency, r.summary.service_latency.as_ref().unwrap());
    assert!(
        latency.p50_us < service.p50_us + 2_000,
        "latency p50 {} µs, service p50 {} µs",
        latency.p50_us,
        service.p50_us
    );
}

/// The strict figure, run by `bench/load/accuracy.sh` (an idle machine, a release build):
/// against a server holding every answer 20 ms, the closed and the open model's p50
/// are within 5% of 20 ms.
#[test]
#[ignore = "a benchmark: run by bench/load/accuracy.sh on an idle machine"]
fn strict_p50_within_5_percent_of_20ms() {
    let s = start(Behavior { delay: Some(Duration::from_millis(20)), ..Behavior::default() });
    let closed = LoadOptions {
        connections: Some(20),
        duration: Some(Dur(Duration::from_secs(10))),
        threads: Some(1),
        ..LoadOptions::default()
    };
    let open = LoadOptions {
        rate: Some(500.0),
        duration: Some(Dur(Duration::from_secs(10))),
        threads: Some(1),
        ..LoadOptions::default()
    };
    for (name, o) in [("closed", closed), ("open", open)] {
        let mut spec = o.to_spec(&s.url("/")).unwrap();
        spec.cpus = Some(vec![1]);
        let r = valid(run(&spec, &Stop::new()).unwrap());
        let p50 = r.summary.latency.p50_us as f64;
        let off = (p50 - 20_000.0) / 20_000.0 * 100.0;
        let mut holds = std::mem::take(&mut *s.stats.holds.lock().unwrap());
        holds.sort();
        println!(
            "{name} model: p50 {:.3} ms ({off:+.2}% from 20 ms; the server's median hold {:.3} ms), p99 {:.3} ms, {} requests",
            p50 / 1000.0,
            holds.get(holds.len() / 2).map_or(0.0, |h| h.as_secs_f64() * 1000.0),
            r.summary.latency.p99_us as f64 / 1000.0,
            r.summary.requests
        );
        assert!(off.abs() <= 5.0, "{name}: p50 {p50} µs is {off:.2}% from 20 ms");
    }
}
