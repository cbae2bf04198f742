//! Pure statistics that the load engine and the reports share: the reference
//! distributions ([`dist`]) and the steady-state detector ([`steady`]), which
//! decides both where a measured window's per-second series stops drifting
//! (the report) and when an automatic warm-up may end (the load engine's
//! `--warmup auto`). No I/O, no formatting; the rest of the reports'
//! statistics live in the report crate.

pub mod dist;
pub mod steady;

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}
