//! `parse_event` (its one-pass fast path) against `parse_event_with_serde` (the
//! serde path every body took before), on the event the benchmarks send.
//! Interleaved rounds; the minimum of each (the machine is shared: the minimum
//! is the figure least disturbed by other work).
//!
//!     taskset -c 0 cargo run --release -p stackbench-serve --example event_parse -- [ROUNDS]
//!
//! Output: one line, `event_parse serde_ns=… fast_ns=… ratio=…`.
//!
//! `-- --calls N` instead runs only `parse_event` N times and no timing: under
//! valgrind's callgrind, the count with N = 100,000 minus the count with
//! N = 0, divided by N, is the instructions per parse (README).
//!
//!     valgrind --tool=callgrind target/release/examples/event_parse --calls 100000

use std::hint::black_box;

use stackbench_contract::event::{parse_event, parse_event_with_serde};
use timing::{best_of, per_call, rounds};

mod timing;

/// Calls per timing.
const CALLS: u32 = 20_000;
/// The body `bench/event-log/bench.py` and `stackbench bench` send.
const BODY: &[u8] = br#"{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}"#;

fn main() {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--calls") {
        let calls: u32 = args.next().and_then(|n| n.parse().ok()).expect("--calls takes a number");
        for _ in 0..calls {
            drop(black_box(parse_event(black_box(BODY)).expect("valid")));
        }
        return;
    }
    assert_eq!(parse_event(BODY), parse_event_with_serde(BODY));
    let [serde, fast] = best_of(rounds(30), || {
        [
            per_call(CALLS, || drop(black_box(parse_event_with_serde(black_box(BODY)).expect("valid")))),
            per_call(CALLS, || drop(black_box(parse_event(black_box(BODY)).expect("valid")))),
        ]
    });
    println!("event_parse serde_ns={serde:.0} fast_ns={fast:.0} ratio={:.3}", fast / serde);
}
