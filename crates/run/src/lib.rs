//! The orchestrator of stackbench: plans (TOML), the contestant lifecycle
//! (build, start, cold start, verification, reset, warm-up, measured runs,
//! stop), CPU pinning and cgroup limits, the `/proc` sampler, and the durable
//! result store under `results/`.
//!
//! Every side effect sits behind a trait with a real implementation here and a
//! fake in the lifecycle's tests: [`process::Launcher`] (processes),
//! [`client::Prober`] (single requests), [`load::LoadDriver`] (the load
//! engine), [`cgroup::Limiter`] (limits), [`sampler::ProcSource`] (`/proc`).

mod cgroup;
mod client;
mod code;
mod dirlock;
mod engine_driver;
mod interleave;
mod lifecycle;
mod load;
mod logcap;
mod ownership;
mod plan;
mod process;
mod provenance;
mod sampler;
mod store;
mod url;
mod validity;
mod verify;
mod watch;

pub use lifecycle::{Deps, Outcome, RunError, RunOptions, run_plan};
pub use load::{Cancel, LoadDriver, LoadJob};
pub use plan::{Plan, PlanContext, PlanError};

// What the CLI and the crate's process tests use beyond a plan run; the modules
// themselves stay private to the crate.
pub use cgroup::reserve::{available as thread_reservation, reserve_this_thread};
pub use cgroup::track::reap_orphans;
pub use cgroup::{CgroupLimiter, LimitGroup, LimitRequest, Limiter};
pub use client::{HyperProber, Probe, Prober, Reach};
pub use engine_driver::{EngineDriver, setup as setup_load};
pub use interleave::clock_seed;
pub use ownership::TOKEN_VAR;
pub use plan::{Launch, LimitsMode};
pub use process::affinity::get as affinity;
pub use process::{Exit, LaunchSpec, Launcher, OsLauncher};
pub use sampler::{ProcSource, Procfs, Sampler, read_tree};
pub use store::{Invocation, RoundsAsked, now_ms, timestamp_name};
pub use url::split as split_url;
pub use verify::file::{check as check_file, verify as verify_file};
pub use verify::{VerifyOptions, rules, verify};
