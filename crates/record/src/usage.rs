//! What a run cost: the load generator's own CPU ([`GeneratorUsage`]), and the contestant's
//! process tree and cgroup as sampled while the run lasted ([`ProcessSamples`]).

use serde::{Deserialize, Serialize};

use crate::Quantiles;

/// The share of its cores from which a load generator is called saturated: its
/// `utilization` alone, or with a companion's generator on the same cores.
pub const GENERATOR_SATURATION: f64 = 0.9;

/// The load generator's own cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeneratorUsage {
    /// User CPU seconds of the generator process during the measured run.
    pub cpu_user_s: f64,
    /// System CPU seconds.
    pub cpu_system_s: f64,
    /// Cores the generator could run on.
    pub cores: u32,
    /// `(user + system) / (duration * cores)`, 0..=1.
    pub utilization: f64,
    /// The generator used (nearly) all its cores: the result may measure the generator.
    pub saturated: bool,
}

/// A contestant's process tree sampled over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSamples {
    pub interval_ms: u64,
    pub points: Vec<Sample>,
    pub cpu_percent: Quantiles,
    pub rss_bytes: Quantiles,
    pub threads_max: u64,
    pub fds_max: u64,
    /// The contestant's cgroup over the run, when CPU or memory limits applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupUsage>,
}

/// Counters of a contestant's cgroup over one run (limits applied).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupUsage {
    /// The CPU limit, in cores (1.0 = one core), if one applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    /// The memory limit, if one applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// CPU time the cgroup used during the run, seconds.
    pub cpu_s: f64,
    /// Scheduler periods in which the cgroup was throttled by its quota.
    pub throttled_periods: u64,
    /// Time spent throttled, seconds.
    pub throttled_s: f64,
    /// Highest memory use seen (the cgroup's own peak counter when it has one).
    pub memory_peak_bytes: u64,
    /// Processes the kernel's OOM killer ended in the cgroup during the run.
    pub oom_kills: u64,
    /// The cgroup version the limits were applied through: 1 or 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u8>,
    /// The CPU limit during the load's warm-up, in cores, when it was lifted above
    /// `cpu_quota` (a plan's `warmup_cpu_quota`); the counters above are the measured
    /// window's, under `cpu_quota`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_cpu_quota: Option<f64>,
    /// With `warmup_cpu_quota`: how long before the measured window `cpu_quota` held again, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_before_s: Option<f64>,
}

/// One sample of a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Since the start of the measured run.
    pub t_ms: u64,
    /// CPU used since the previous sample, percent of one core (200 = two cores busy).
    pub cpu_percent: f64,
    pub rss_bytes: u64,
    pub threads: u64,
    pub fds: u64,
}
