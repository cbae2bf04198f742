//! The physical limit of the `bubble-sort` scenario on one core: how many
//! bubble sorts of the original experiment's 1000-number list per second, in-process, with
//! no I/O at all. The gRPC service cannot beat it; `bench/bubble/bench.py`
//! compares the service's throughput with it (pinned to the same core).
//!
//! Each iteration copies the original experiment's list into a buffer and sorts it with the
//! service's own [`bubble_sort`], as a request does. With `--textbook`, the
//! textbook loop (`if v[i-1] > v[i] { swap }`) is measured too, for context.
//!
//!     cargo run --release -p stackbench-serve --example bubble_limit -- [SECONDS] [--textbook]
//!
//! Output: one line per variant, `bubble_limit <variant> sorts_per_s=<f> sorts=<n> seconds=<f>`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use stackbench_contract::bubble::{SEED, SEED_SORTED};
use stackbench_serve::bubble_sort;

/// The textbook loop, with the early exit and the shrinking bound.
fn textbook(v: &mut [i32]) {
    for pass in 0..v.len().saturating_sub(1) {
        let mut swapped = false;
        for i in 1..v.len() - pass {
            if v[i - 1] > v[i] {
                v.swap(i - 1, i);
                swapped = true;
            }
        }
        if !swapped {
            break;
        }
    }
}

/// Sorts copies of the experiment's list for `seconds`, checking every 64th result.
fn measure(name: &str, sort: fn(&mut [i32]), seconds: f64) {
    let mut buf = SEED.clone();
    let budget = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut sorts = 0u64;
    // Bounded in time (the clock is read every 16 sorts, ~3 ms) and count.
    while sorts < 100_000_000 {
        for _ in 0..16 {
            buf.copy_from_slice(&SEED);
            sort(black_box(&mut buf));
            black_box(&buf);
        }
        sorts += 16;
        if sorts.is_multiple_of(64) {
            assert_eq!(buf, *SEED_SORTED, "{name} did not sort the experiment's list");
        }
        if start.elapsed() >= budget {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("bubble_limit {name} sorts_per_s={:.1} sorts={sorts} seconds={secs:.3}", sorts as f64 / secs);
}

fn main() {
    let mut seconds = 5.0;
    let mut with_textbook = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--textbook" => with_textbook = true,
            s => {
                seconds = s.parse().unwrap_or_else(|_| {
                    eprintln!("usage: bubble_limit [SECONDS] [--textbook]; got {s:?}");
                    std::process::exit(2)
                });
            }
        }
    }
    measure("stackbench", bubble_sort, seconds);
    if with_textbook {
        measure("textbook", textbook, seconds);
    }
}
