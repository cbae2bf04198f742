//! `parse_event` (its one-pass fast path) against `parse_event_with_serde` (the
//! serde path every body took before), on the event the benchmarks send.
//! Interleaved rounds; the minimum of each (the machine is shared: the minimum
//! is the figure least disturbed by other work).
//!
//!     taskset -c 0 cargo run --release -p stackbench-scenarios --example event_parse -- [ROUNDS]
//!
//! Output: one line, `event_parse serde_ns=… fast_ns=… ratio=…`.

use std::hint::black_box;
use std::time::Instant;

use stackbench_scenarios::event::{parse_event, parse_event_with_serde};

/// Calls per timing.
const CALLS: u32 = 20_000;
/// The body `bench/event-log/bench.py` and `stackbench bench` send.
const BODY: &[u8] = br#"{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}"#;

/// Nanoseconds per call of `f`, over [`CALLS`] calls.
fn per_call(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    t.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
}

fn main() {
    let rounds: u32 = std::env::args().nth(1).map_or(30, |a| a.parse().expect("ROUNDS is a number"));
    assert_eq!(parse_event(BODY), parse_event_with_serde(BODY));
    let mut best = [f64::MAX; 2];
    for _ in 0..rounds {
        let times = [
            per_call(|| drop(black_box(parse_event_with_serde(black_box(BODY)).expect("valid")))),
            per_call(|| drop(black_box(parse_event(black_box(BODY)).expect("valid")))),
        ];
        for (b, t) in best.iter_mut().zip(times) {
            *b = b.min(t);
        }
    }
    println!("event_parse serde_ns={:.0} fast_ns={:.0} ratio={:.3}", best[0], best[1], best[1] / best[0]);
}
