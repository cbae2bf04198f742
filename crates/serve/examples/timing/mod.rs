//! What the side-by-side microbenchmarks in this folder share: timing a call
//! over many calls, and keeping the best of interleaved rounds (the machine is
//! shared: the minimum is the figure least disturbed by other work).

use std::time::Instant;

/// Nanoseconds per call of `f`, over `calls` calls.
pub fn per_call(calls: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        f();
    }
    t.elapsed().as_secs_f64() * 1e9 / f64::from(calls)
}

/// The number of rounds: the first argument, else `default`.
pub fn rounds(default: u32) -> u32 {
    std::env::args().nth(1).map_or(default, |a| a.parse().expect("ROUNDS is a number"))
}

/// Runs `round` `rounds` times and keeps, for each of its timings, the minimum.
pub fn best_of<const N: usize>(rounds: u32, mut round: impl FnMut() -> [f64; N]) -> [f64; N] {
    let mut best = [f64::MAX; N];
    for _ in 0..rounds {
        for (b, t) in best.iter_mut().zip(round()) {
            *b = b.min(t);
        }
    }
    best
}
