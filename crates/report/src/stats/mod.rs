//! Pure statistics over a contestant's repetitions: no I/O, no formatting.
//! Functions take slices and return numbers (criterion's `stats/` is the
//! model); everything a report says about uncertainty comes from here.

pub mod bootstrap;
pub mod rng;
pub mod sample;
pub mod sequential;

pub use bootstrap::{CONFIDENCE, Estimate, Interval, MIN_RUNS, Ratio, estimate, ratio, ratio_at};
