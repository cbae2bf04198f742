//! The record of a capacity search (`stackbench load --find-max`, or
//! `find-max = true` in a plan): every step measured, and the rate the target
//! sustains while every SLO holds. Kept on the [`crate::RunRecord`] of the
//! confirming step (the run at the sustained rate) as `find_max`.

use serde::{Deserialize, Serialize};

/// A whole search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The objectives, as given (`p99<10ms`, `errors<0.1%`).
    pub slo: Vec<String>,
    /// The search stops when the bracket is this narrow (0.05: 5% of the lower end).
    pub precision: f64,
    /// Each step's measured phase, seconds.
    pub step_s: f64,
    pub steps: Vec<SearchStep>,
    /// The highest rate that met every objective, confirmed by a last step;
    /// `None` when not even the lowest rate tried met them.
    pub sustained_rps: Option<f64>,
    /// The generator saturated its cores before any objective broke: the
    /// sustained rate is a lower bound of the target's, not its capacity.
    pub lower_bound: bool,
    /// The lowest rate that broke an objective, and what broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_at_rps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<String>,
    /// `[passing, failing]` rates the search ended between (a next search may start from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracket: Option<[f64; 2]>,
    /// Why it ended: `converged`, `max_rate` (the highest rate allowed held),
    /// `saturated` (a lower bound), `nothing_met`, or `interrupted`.
    pub ended: String,
}

/// One step: a constant rate, measured after a short settle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    /// `probe` (closed model, to find where to start), `ramp` (doubling),
    /// `bisect`, `confirm`.
    pub phase: String,
    /// The rate asked for, req/s (for the probe: the users).
    pub rate: f64,
    /// Requests completed per second, any outcome.
    pub achieved_rps: f64,
    pub ok_rps: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub requests: u64,
    pub errors: u64,
    pub late: u64,
    /// The generator's busy share of its cores.
    pub generator_utilization: f64,
    pub passed: bool,
    /// What broke, one phrase each (`p99 14.2 ms, not < 10 ms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broke: Vec<String>,
}
