//! The orchestrator of stackbench: plans (TOML), the contestant lifecycle
//! (build, start, cold start, verification, reset, warm-up, measured runs,
//! stop), CPU pinning and cgroup limits, the `/proc` sampler, and the durable
//! result store under `results/`.
//!
//! Every side effect sits behind a trait with a real implementation here and a
//! fake in the lifecycle's tests: [`process::Launcher`] (processes),
//! [`client::Prober`] (single requests), [`load::LoadDriver`] (the load
//! engine), [`cgroup::Limiter`] (limits), [`sampler::ProcSource`] (`/proc`).

pub mod cgroup;
pub mod client;
pub mod code;
pub mod dirlock;
pub mod engine;
pub mod lifecycle;
pub mod load;
pub mod logcap;
pub mod ownership;
pub mod plan;
pub mod process;
pub mod provenance;
pub mod sampler;
pub mod schedule;
pub mod store;
pub mod url;
pub mod validity;
pub mod verify;
pub mod watch;

pub use lifecycle::{Deps, Outcome, RunError, RunOptions, run_plan};
pub use load::{Cancel, LoadDriver, LoadJob};
pub use plan::{Plan, PlanContext, PlanError};
