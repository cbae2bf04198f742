//! `stackbench`: the one binary. It parses arguments, calls into the library
//! crates, and maps the outcome to an exit code (0 success, 1 error, 2 usage
//! error from clap). Nothing here is worth testing in isolation.

mod cli;
mod seed;
mod serve;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let result = match args.command {
        cli::Command::Serve(cmd) => serve::run(cmd),
        cli::Command::Seed(cmd) => seed::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
