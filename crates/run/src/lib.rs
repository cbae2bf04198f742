//! The orchestrator of stackbench (to be built, issue "Orchestrator").
//!
//! It will own plans (TOML), the contestant lifecycle (start, cold start,
//! verification, reset, warm-up, measured runs, stop), CPU pinning and cgroup
//! limits, the `/proc` sampler, and the durable result store under `results/`.
