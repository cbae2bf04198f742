//! The Rust reference contestants of stackbench: fast, correct servers for
//! every scenario of `docs/scenarios.md`, on the HTTP stacks and stores a Rust team
//! would choose between. Every stack validates through the same code
//! ([`events`] over `stackbench-scenarios`); a stack module is a thin adapter.

pub mod actix_stack;
pub mod app;
pub mod args;
pub mod axum_stack;
pub mod bubble;
pub mod db_read;
pub mod drain;
mod error_chain;
pub mod events;
pub mod hyper_stack;
pub mod launch;
pub mod server;
pub mod store;
pub mod tls;

/// Why a store that needs a database server cannot be used: this build left it out.
pub fn not_built(database: &str) -> String {
    format!(
        "{database} is not in this build (built without the `db-servers` feature); \
         build it with `cargo build --release --features stackbench-serve/db-servers`"
    )
}

#[cfg(test)]
mod contract_tests;
