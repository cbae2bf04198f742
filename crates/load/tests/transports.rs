//! The engine against real servers on port 0, over every transport: what it
//! sends, what it counts, and that failures are data and never abort a run.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::common::{Behavior, Shape, start, start_hangup};
use stackbench_load::{CheckEvery, Dur, Io, LoadOptions, RunRecord, Stop, WarmupArg, run};

thread_local! {
    /// The I/O path the cases run on: epoll (the default), or io_uring in
    /// [`every_case_again_on_io_uring`].
    static IO: std::cell::Cell<Option<Io>> = const { std::cell::Cell::new(None) };
}

fn opts() -> LoadOptions {
    LoadOptions {
        threads: Some(2),
        timeout: Some(Dur(Duration::from_secs(5))),
        io: IO.get(),
        ..LoadOptions::default()
    }
}

/// A scenario's options, every answer checked (`--check-every 1`): `auto` checks every answer
/// only while checking is cheap beside the generator's other work, which a busy machine makes it
/// not be, and these cases count the checks on every transport.
fn checked(scenario: &str) -> LoadOptions {
    LoadOptions { scenario: Some(scenario.into()), check_every: Some(CheckEvery::Every(1)), ..opts() }
}

fn load(o: &LoadOptions, url: &str) -> RunRecord {
    let spec = o.to_spec(url).unwrap();
    stackbench_testkit::record::valid(run(&spec, &Stop::new()).unwrap())
}

fn err(r: &RunRecord, kind: &str) -> u64 {
    r.errors.get(kind).copied().unwrap_or(0)
}

#[test]
fn http1_scenario_requests_are_checked() {
    let s = start(Behavior::default());
    let o = LoadOptions { requests: Some(300), connections: Some(4), ..checked("dummy") };
    let r = load(&o, &s.url("/events"));
    let sum = &r.summary;
    assert_eq!((sum.requests, sum.ok, sum.errors), (300, 300, 0), "{:?}", r.errors);
    assert_eq!(sum.checks.performed, 300);
    assert_eq!(s.stats.requests.load(Ordering::Relaxed), 300);
    // Keep-alive: 4 users, 4 connections (plus the probe).
    assert!(s.stats.connections.load(Ordering::Relaxed) <= 5);
    assert_eq!(sum.latency.count, 300);
    assert!(sum.bytes_received > 300 * 50 && sum.bytes_sent > 300 * 100);
    assert_eq!(r.params.transport, "http1");
    assert!(!r.timeline.is_empty() && !r.interrupted);
    assert_eq!(r.timeline.iter().map(|s| s.completed).sum::<u64>(), 300);
}

#[test]
fn wrong_answers_are_check_errors_not_successes() {
    let s = start(Behavior { shape: Shape::Wrong, ..Behavior::default() });
    let o = LoadOptions { requests: Some(50), connections: Some(2), ..checked("dummy") };
    let r = load(&o, &s.url("/"));
    assert_eq!(r.summary.ok, 0);
    assert_eq!(err(&r, "check"), 50);
    assert_eq!(r.summary.checks.failed, 50);
}

#[test]
fn statuses_and_chunked_and_closing_servers() {
    let s = start(Behavior::default());
    let r = load(&LoadOptions { requests: Some(40), connections: Some(2), ..opts() }, &s.url("/status/503"));
    assert_eq!((r.summary.requests, err(&r, "http_503")), (40, 40));
    let o = LoadOptions { requests: Some(40), connections: Some(2), ..checked("dummy") };
    let chunked = start(Behavior { shape: Shape::Chunked, ..Behavior::default() });
    let r = load(&o, &chunked.url("/"));
    assert_eq!((r.summary.ok, r.summary.checks.performed), (40, 40), "{:?}", r.errors);
    let closing = start(Behavior { shape: Shape::Close, ..Behavior::default() });
    let r = load(&o, &closing.url("/"));
    assert_eq!(r.summary.ok, 40, "{:?}", r.errors);
    // The server closed after every answer, so every request had its own connection.
    assert!(closing.stats.connections.load(Ordering::Relaxed) >= 40);
}

#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let s = start(Behavior::default());
    let o = LoadOptions { requests: Some(30), connections: Some(3), no_keepalive: true, ..opts() };
    let r = load(&o, &s.url("/"));
    assert_eq!(r.summary.ok, 30, "{:?}", r.errors);
    assert_eq!(s.stats.connections.load(Ordering::Relaxed), 31, "30 requests and the probe");
}

#[test]
fn a_server_that_hangs_up_gives_reset_errors() {
    let addr = start_hangup();
    let o = LoadOptions { requests: Some(10), connections: Some(1), threads: Some(1), ..opts() };
    let r = load(&o, &format!("http://{addr}/"));
    assert_eq!(r.summary.requests, 10);
    assert_eq!(err(&r, "reset"), 10, "{:?}", r.errors);
}

#[test]
fn an_h2c_server_that_hangs_up_gives_reset_errors() {
    let addr = start_hangup();
    let o = LoadOptions { http2: true, requests: Some(10), connections: Some(1), threads: Some(1), ..opts() };
    let r = load(&o, &format!("http://{addr}/"));
    assert_eq!(r.summary.requests, 10);
    assert_eq!(err(&r, "reset"), 10, "{:?}", r.errors);
}

#[test]
fn h2c_multiplexes_streams() {
    let s = start(Behavior::default());
    let o = LoadOptions {
        http2: true,
        streams: Some(8),
        connections: Some(2),
        requests: Some(400),
        ..checked("dummy")
    };
    let r = load(&o, &s.url("/events"));
    assert_eq!((r.summary.ok, r.summary.checks.performed), (400, 400), "{:?}", r.errors);
    assert_eq!(s.stats.h2_requests.load(Ordering::Relaxed), 400);
    assert!(s.stats.connections.load(Ordering::Relaxed) <= 3, "2 connections and the probe");
    assert_eq!(r.params.transport, "h2c");
    let o =
        LoadOptions { http2: true, no_keepalive: true, requests: Some(20), connections: Some(2), ..opts() };
    let before = s.stats.connections.load(Ordering::Relaxed);
    let r = load(&o, &s.url("/"));
    assert_eq!(r.summary.ok, 20, "{:?}", r.errors);
    assert_eq!(s.stats.connections.load(Ordering::Relaxed) - before, 21);
}

#[test]
fn grpc_bubble_sort_over_h2c() {
    let s = start(Behavior::default());
    let o = LoadOptions { requests: Some(60), connections: Some(2), ..checked("bubble-sort") };
    let r = load(&o, &s.url(""));
    assert_eq!(r.params.transport, "grpc");
    assert_eq!((r.summary.ok, r.summary.checks.performed), (60, 60), "{:?}", r.errors);
    // The original experiment's k6 profile: a new connection for every call.
    let before = s.stats.connections.load(Ordering::Relaxed);
    let o = LoadOptions { no_keepalive: true, requests: Some(20), ..o };
    let r = load(&o, &s.url(""));
    assert_eq!(r.summary.ok, 20, "{:?}", r.errors);
    assert_eq!(s.stats.connections.load(Ordering::Relaxed) - before, 21);
}

#[test]
fn grpc_statuses_are_counted_by_code() {
    let s = start(Behavior::default());
    let o = LoadOptions { requests: Some(10), connections: Some(1), ..checked("bubble-sort") };
    let spec = o.to_spec(&s.url("")).unwrap();
    let mut bad = spec.clone();
    // Send a body the server refuses (a truncated List message).
    bad.requests = stackbench_load::RequestSource::Fixed {
        method: http::Method::POST,
        headers: vec![(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/grpc"))],
        body: bytes::Bytes::from_static(&[0x0A, 0x05, 0x01]),
    };
    bad.target.path = stackbench_contract::bubble::GRPC_PATH.into();
    let r = run(&bad, &Stop::new()).unwrap();
    assert_eq!(err(&r, "grpc_3"), 10, "{:?}", r.errors);
}

#[test]
fn open_model_keeps_its_rate_and_reports_service_time() {
    let s = start(Behavior::default());
    let o = LoadOptions { rate: Some(400.0), duration: Some(Dur(Duration::from_millis(1500))), ..opts() };
    let r = load(&o, &s.url("/"));
    let n = r.summary.requests;
    assert!((540..=660).contains(&n), "{n} requests for 400/s over 1.5 s");
    assert!(r.summary.corrected_for_coordinated_omission);
    assert!(r.service_histogram.is_some() && r.summary.service_latency.is_some());
    assert_eq!(r.summary.late, 0);
}

#[test]
fn past_max_in_flight_requests_are_late_not_skipped() {
    let s = start(Behavior { delay: Some(Duration::from_millis(300)), ..Behavior::default() });
    let o = LoadOptions {
        rate: Some(100.0),
        max_in_flight: Some(4),
        duration: Some(Dur(Duration::from_secs(1))),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    let sum = &r.summary;
    assert!(sum.late > 50, "{sum:?}");
    assert_eq!(err(&r, "late"), sum.late);
    assert_eq!(sum.requests, sum.ok + sum.errors);
    // Every due request is accounted for: sent or late.
    assert!((95..=101).contains(&sum.requests), "{}", sum.requests);
}

#[test]
fn timeouts_are_errors_of_their_own() {
    let s = start(Behavior { delay: Some(Duration::from_millis(500)), ..Behavior::default() });
    let o = LoadOptions {
        timeout: Some(Dur(Duration::from_millis(50))),
        requests: Some(6),
        connections: Some(2),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    assert_eq!(err(&r, "timeout"), 6, "{:?}", r.errors);
    assert_eq!(r.summary.latency.count, 0);
}

/// A lane's timer is moved to each request's deadline: after hundreds of fast answers it must
/// neither fire early (a fast answer counted a timeout) nor keep an old deadline (a stalled
/// answer waited for instead of given up), over HTTP/1.1 and h2c, in both models.
#[test]
fn a_lanes_timer_follows_each_request() {
    for (http2, rate) in [(false, None), (true, None), (false, Some(400.0)), (true, Some(400.0))] {
        // Requests arriving 0.5–1.3 s after the server started wait until 1.3 s.
        let s = start(Behavior {
            stall: Some((Duration::from_millis(500), Duration::from_millis(1300))),
            ..Behavior::default()
        });
        let o = LoadOptions {
            http2,
            rate,
            timeout: Some(Dur(Duration::from_millis(200))),
            duration: Some(Dur(Duration::from_millis(1600))),
            connections: Some(1),
            threads: Some(1),
            ..opts()
        };
        let r = load(&o, &s.url("/"));
        let case = format!("http2 {http2}, rate {rate:?}: {:?}", r.errors);
        let timeouts = err(&r, "timeout");
        assert_eq!(r.summary.errors, timeouts, "{case}");
        // Every answer inside the timeout (and what a busy machine adds to a timer's wake-up,
        // far below the 800 ms a timer kept at an old deadline waits), and the fast ones were many.
        assert!(r.summary.ok > 100, "{case}");
        let service = r.summary.service_latency.as_ref().unwrap_or(&r.summary.latency);
        assert!(service.max_us < 300_000, "{case}: {service:?}");
        if rate.is_none() {
            // One user: each stalled request given up 200 ms after it was sent (0.5, 0.7,
            // 0.9, 1.1 s), the last perhaps answered at 1.3 s instead. The stall is timed from
            // the server's start, so a load that starts late on a busy machine meets less of
            // it: 2 at least (a timer kept at an old deadline gives none: the stalled answer
            // is waited for, 800 ms, past the service bound above).
            assert!((2..=5).contains(&timeouts), "{case}");
        } else {
            // What is due in the stall (0.8 s at 400/s) fails, but for what is due in its last
            // 200 ms, which may be answered in time.
            assert!((200..=340).contains(&timeouts), "{case}");
        }
    }
}

/// At a low open-model rate nothing but its answer wakes a request's task (no other request
/// is under way on its worker to poll it along), so a wake-up lost on the way (a future that
/// returns pending without the task's waker) leaves the answer unread until the lane's timer
/// fires: every such request a timeout. Over HTTP/1.1 and h2c, each answered when it comes.
#[test]
fn answers_at_a_low_rate_wake_their_request() {
    for http2 in [false, true] {
        let s = start(Behavior::default());
        let o = LoadOptions {
            http2,
            rate: Some(20.0),
            timeout: Some(Dur(Duration::from_secs(2))),
            duration: Some(Dur(Duration::from_secs(3))),
            connections: Some(2),
            threads: Some(1),
            ..opts()
        };
        let r = load(&o, &s.url("/"));
        let case = format!("http2 {http2}: {:?}", r.errors);
        // 60 due; a request under way when the run ends is in no count.
        assert_eq!(r.summary.errors, 0, "{case}");
        assert!((40..=61).contains(&r.summary.ok), "{case}: {} answered", r.summary.ok);
        // Far below the 2 s a lost wake-up waits, whatever a busy machine adds to a wake-up.
        let service = r.summary.service_latency.as_ref().unwrap_or(&r.summary.latency);
        assert!(service.max_us < 1_500_000, "{case}: {service:?}");
    }
}

#[test]
fn a_stop_returns_the_partial_record_promptly() {
    let s = start(Behavior::default());
    let o = LoadOptions { duration: Some(Dur(Duration::from_secs(30))), connections: Some(2), ..opts() };
    let spec = o.to_spec(&s.url("/")).unwrap();
    let stop = Stop::new();
    let stopper = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        stopper.stop();
    });
    let t = Instant::now();
    let r = run(&spec, &stop).unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(r.interrupted);
    assert!(r.summary.requests > 0 && r.summary.duration_s < 2.0, "{:?}", r.summary);
}

#[test]
fn warmup_is_not_recorded() {
    let s = start(Behavior::default());
    let o = LoadOptions {
        warmup: Some(WarmupArg::Fixed(Dur(Duration::from_millis(500)))),
        requests: Some(100),
        connections: Some(2),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    assert_eq!(r.summary.requests, 100);
    let served = s.stats.requests.load(Ordering::Relaxed);
    assert!(served > 100, "the warm-up sent requests too");
    // Its figures are kept apart: all it sent but the few still in flight when it ended.
    let w = r.warmup.expect("the warm-up's figures");
    assert!(!w.auto && w.max_s.is_none());
    assert!((w.summary.duration_s - 0.5).abs() < 1e-9, "{}", w.summary.duration_s);
    assert_eq!(w.timeline.len(), 1, "one partial second");
    assert_eq!(w.timeline[0].completed, w.summary.requests);
    assert!(w.summary.requests > 0 && w.summary.errors == 0, "{:?}", w.summary);
    let counted = w.summary.requests + r.summary.requests;
    assert!(counted <= served && served - counted <= 2, "{counted} counted of {served} served");
    // Under half a second: too short to judge steady state.
    assert!(w.steady_from_s.is_none() && !w.never_steady);
}

#[test]
fn unreachable_targets_fail_before_the_run() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let spec = opts().to_spec(&format!("http://127.0.0.1:{port}/")).unwrap();
    let e = run(&spec, &Stop::new()).unwrap_err().to_string();
    assert!(e.contains("cannot connect") && e.contains("is the server running"), "{e}");
    let spec = opts().to_spec("http://no-such-host.invalid/").unwrap();
    assert!(run(&spec, &Stop::new()).unwrap_err().to_string().contains("cannot resolve"));
}

#[test]
fn ramp_up_starts_users_gradually() {
    // 50-ms answers keep the full strength (20 users: ~400 req/s) far below what a busy machine's
    // debug builds serve, so the second second is the users' pace, not the CPU's.
    let s = start(Behavior { delay: Some(Duration::from_millis(50)), ..Behavior::default() });
    let o = LoadOptions {
        connections: Some(20),
        ramp_up: Some(Dur(Duration::from_secs(1))),
        duration: Some(Dur(Duration::from_secs(2))),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    // The first second ramps (about half of the second's).
    let first = r.timeline[0].completed as f64;
    let second = r.timeline[1].completed as f64;
    assert!(first < 0.8 * second, "first {first}, second {second}");
    assert_eq!(r.params.stages.len(), 1);
}

#[test]
fn an_explicit_connection_count_caps_the_open_model() {
    // 100 req/s against 100 ms answers needs ~10 connections; with -c 2 requests wait for one,
    // and the wait shows in the latency (from the due time) but not in the service time.
    let s = start(Behavior { delay: Some(Duration::from_millis(100)), ..Behavior::default() });
    let o = LoadOptions {
        rate: Some(100.0),
        connections: Some(2),
        duration: Some(Dur(Duration::from_secs(1))),
        threads: Some(1),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    assert!(s.stats.connections.load(Ordering::Relaxed) <= 3, "2 connections and the probe");
    let service = r.summary.service_latency.unwrap();
    assert!(service.p50_us < 150_000, "{service:?}");
    assert!(r.summary.latency.p90_us > 500_000, "{:?}", r.summary.latency);
    assert!(r.summary.requests > 0);
}

#[test]
fn a_request_waiting_for_a_connection_times_out_and_is_counted() {
    let s = start(Behavior { delay: Some(Duration::from_millis(100)), ..Behavior::default() });
    let o = LoadOptions {
        rate: Some(100.0),
        connections: Some(1),
        timeout: Some(Dur(Duration::from_millis(300))),
        duration: Some(Dur(Duration::from_secs(1))),
        threads: Some(1),
        ..opts()
    };
    let r = load(&o, &s.url("/"));
    // Every due request is accounted for: answered, timed out waiting, or still waiting when
    // the run ended (unfinished: in no count).
    let unfinished = r.timeline.last().map_or(0, |t| t.in_flight);
    assert!(
        (99..=101).contains(&(r.summary.requests + unfinished)),
        "{:?}, {unfinished} unfinished",
        r.summary
    );
    assert!(err(&r, "timeout") > 50, "{:?}", r.errors);
}

#[test]
fn grpc_calls_any_unary_method_from_its_proto() {
    let s = start(Behavior::default());
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/sort/v1/sort.proto");
    let o = LoadOptions {
        proto: Some(proto.into()),
        call: Some("sort.v1.SortService/BubbleSort".into()),
        data: Some(r#"{"data":[3,1,2]}"#.into()),
        requests: Some(30),
        connections: Some(2),
        ..opts()
    };
    let r = load(&o, &s.url(""));
    assert_eq!(r.params.transport, "grpc");
    assert_eq!((r.summary.requests, r.summary.ok), (30, 30), "{:?}", r.errors);
    // A status other than OK is counted by code: the server refuses more than 10,000 numbers.
    let data = format!(r#"{{"data":[{}]}}"#, vec!["1"; 10_001].join(","));
    let r = load(&LoadOptions { data: Some(data), requests: Some(5), ..o.clone() }, &s.url(""));
    assert_eq!(err(&r, "grpc_3"), 5, "{:?}", r.errors);
    // The URL carries no path: --call sets it.
    let e = o.to_spec(&s.url("/x")).unwrap_err().to_string();
    assert!(e.starts_with("--call: sets the path"), "{e}");
}

/// Where the kernel refuses io_uring, says so and skips (never in CI).
fn no_io_uring() -> bool {
    let Err(why) = stackbench_load::io_uring_available() else { return false };
    assert!(!stackbench_testkit::in_ci(), "CI=true and no io_uring: {why}");
    stackbench_testkit::skip(&why);
    true
}

/// Every case above on the io_uring path (`--io io_uring`), where the kernel allows it.
#[test]
fn every_case_again_on_io_uring() {
    if no_io_uring() {
        return;
    }
    IO.set(Some(Io::Uring));
    http1_scenario_requests_are_checked();
    wrong_answers_are_check_errors_not_successes();
    statuses_and_chunked_and_closing_servers();
    no_keepalive_opens_a_connection_per_request();
    a_server_that_hangs_up_gives_reset_errors();
    an_h2c_server_that_hangs_up_gives_reset_errors();
    h2c_multiplexes_streams();
    grpc_bubble_sort_over_h2c();
    grpc_statuses_are_counted_by_code();
    open_model_keeps_its_rate_and_reports_service_time();
    past_max_in_flight_requests_are_late_not_skipped();
    timeouts_are_errors_of_their_own();
    a_lanes_timer_follows_each_request();
    a_stop_returns_the_partial_record_promptly();
    warmup_is_not_recorded();
    unreachable_targets_fail_before_the_run();
    ramp_up_starts_users_gradually();
    an_explicit_connection_count_caps_the_open_model();
    a_request_waiting_for_a_connection_times_out_and_is_counted();
    grpc_calls_any_unary_method_from_its_proto();
    let r = load(
        &LoadOptions { requests: Some(10), connections: Some(1), ..opts() },
        &start(Behavior::default()).url("/"),
    );
    assert_eq!(r.params.extra["io"], "io_uring");
}

/// On io_uring the answer does not wait for its request's send: a server that
/// answers after the head, reading none of a large body, is answered ok, and
/// the connection (which cannot carry another request) is replaced. (On epoll
/// the write comes first and such a request waits for the timeout.)
#[test]
fn an_answer_before_the_whole_request_went_replaces_the_connection_on_io_uring() {
    use std::io::{Read as _, Write as _};
    if no_io_uring() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/upload", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        // Each connection: read the head, answer, and hold the socket without reading on.
        let mut held = Vec::new();
        for _ in 0..3 {
            let Ok((mut s, _)) = listener.accept() else { break };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").unwrap();
            held.push(s);
            if held.len() == 3 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
        held.len()
    });
    let o = LoadOptions {
        io: Some(Io::Uring),
        threads: Some(1),
        connections: Some(1),
        requests: Some(2),
        method: Some("POST".into()),
        // Far more than the socket buffers take while the server reads nothing.
        body: Some("x".repeat(32 << 20)),
        timeout: Some(Dur(Duration::from_secs(3))),
        ..LoadOptions::default()
    };
    let started = Instant::now();
    let r = load(&o, &url);
    assert_eq!((r.summary.ok, r.summary.errors), (2, 0), "{:?}", r.errors);
    assert!(started.elapsed() < Duration::from_secs(3), "no answer waited for the timeout");
    // The probe's connection, then one per request.
    assert_eq!(server.join().unwrap(), 3);
}
