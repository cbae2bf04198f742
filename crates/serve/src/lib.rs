//! The Rust reference contestants of stackbench: fast, correct servers for
//! every scenario of `docs/scenarios.md`, on the HTTP stacks and stores a Rust team
//! would choose between. Every stack validates through the same code
//! (`events.rs` over `stackbench-contract`); a stack module is a thin adapter.

mod actix_stack;
mod app;
mod args;
mod axum_stack;
mod bubble;
mod db_read;
mod drain;
mod error_chain;
mod events;
mod hyper_stack;
mod launch;
mod server;
mod store;
mod tls;

// The four binaries' doors: their arguments and the function each `main` calls.
pub use args::{BubbleSortCli, DbReadCli, DbReadCommand, DummyCli, EventLogCli};
pub use launch::{LaunchError, run_bubble_sort, run_db_read, run_dummy, run_event_log, seed_db_read};

// What the crate's tests and examples drive in-process; the modules stay private.
pub use bubble::sort::bubble_sort;
pub use bubble::{Options as BubbleOptions, proto, router as bubble_router, serve as serve_bubble_sort};
pub use db_read::seed::{Outcome as SeedOutcome, Store as SeedStore, seed};
pub use db_read::{Config as DbReadConfig, Drivers, connect, router as db_read_router};
pub use server::bind;

/// Why a store that needs a database server cannot be used: this build left it out.
pub(crate) fn not_built(database: &str) -> String {
    format!(
        "{database} is not in this build (built without the `db-servers` feature); \
         build it with `cargo build --release --features stackbench-serve/db-servers`"
    )
}

#[cfg(test)]
mod contract_tests;
