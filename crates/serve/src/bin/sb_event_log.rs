//! `sb-event-log`: the `event-log` reference contestant alone (the artifact
//! whose size is reported): the event API on axum, actix-web or hyper over the
//! embedded SQLite, PostgreSQL, MySQL/MariaDB, Redis or InfluxDB store. Its
//! flags: `stackbench_serve::EventLogCli`.

use std::process::ExitCode;

use clap::Parser as _;
use stackbench_serve::EventLogCli;

/// mimalloc: fewer cycles per request than the system allocator for the
/// many small, short-lived allocations of an HTTP server (bench/event-log).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = EventLogCli::parse();
    match stackbench_serve::run_event_log("sb-event-log", &cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sb-event-log: error: {e}");
            ExitCode::FAILURE
        }
    }
}
