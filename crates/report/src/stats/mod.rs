//! Pure statistics over a contestant's repetitions: no I/O, no formatting.
//! Functions take slices and return numbers (criterion's `stats/` is the
//! model); everything a report says about uncertainty comes from here.

pub mod bootstrap;
pub mod rng;
pub mod sample;
pub mod sequential;

// The reference distributions and the steady-state detector are shared with the load
// engine (its `--warmup auto`), so they live in the record crate.
pub use stackbench_record::stats::{dist, steady};

pub use bootstrap::{CONFIDENCE, Estimate, Interval, MIN_RUNS, Ratio, estimate, ratio, ratio_at};
