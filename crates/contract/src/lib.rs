//! The contracts of the built-in scenarios (`docs/scenarios.md`) as code, for the
//! reference contestants: what an `event-log`/`dummy` event is ([`event`]), the
//! `db-read` data set ([`dbread`]), `bubble-sort`'s messages ([`bubble`]), the
//! shared names ([`contract`]), a checker of their answers for the contestants' own tests
//! ([`check`]); and the seeded RNG every part of stackbench draws from ([`rng`]).
//!
//! This crate does no I/O. The scenarios themselves (the requests sent, the checks
//! under load, the verification cases) are scenario files, `scenarios/builtin/`,
//! run by `stackbench-hurl`, `stackbench-load` and `stackbench-run` as any file is.
//!
//! Each module is public and is the door: a contract's terms are named by the contract
//! (`bubble::SEED`, `dbread::ROWS`, `event::Event`, `rng::SplitMix64`), and other crates use
//! each of them; at the root those names would need the module's name again, and `SEED`,
//! `MAX_LEN` or `Item` alone say nothing.

pub mod bubble;
pub mod check;
pub mod contract;
pub mod dbread;
pub mod event;
pub mod rng;
