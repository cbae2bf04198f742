//! `sb-dummy`: the `dummy` reference contestant alone (the artifact whose size
//! is reported): the event API's parsing and validation on axum, actix-web or
//! hyper, no store. Its flags: `stackbench_serve::DummyCli`.

use std::process::ExitCode;

use clap::Parser as _;
use stackbench_serve::DummyCli;

/// mimalloc: fewer cycles per request than the system allocator for the
/// many small, short-lived allocations of an HTTP server (bench/event-log).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = DummyCli::parse();
    match stackbench_serve::run_dummy("sb-dummy", &cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sb-dummy: error: {e}");
            ExitCode::FAILURE
        }
    }
}
