//! `stackbench`: the one binary. It parses arguments, calls into the library
//! crates, and maps the outcome to an exit code ([`exit`]: 0 success, 1 error,
//! 2 usage). Nothing here is worth testing in isolation.

mod cli;
mod deploy;
mod exit;
mod k8s;
mod load;
mod merge;
mod report;
mod run;
mod scenario_file;
mod swarm;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(&e),
    };
    let mut code = ExitCode::SUCCESS;
    let result = match args.command {
        cli::Command::Load(args) => load::run(&args).map(|c| code = c),
        cli::Command::Run(args) => run::run(&args).map(|c| code = c),
        cli::Command::Bench(args) => run::bench(&args).map(|c| code = c),
        cli::Command::Verify(args) => run::verify(&args).map(|c| code = c),
        cli::Command::Report(args) => report::report(&args),
        cli::Command::Compare(args) => report::compare(&args).map(|c| code = c),
        cli::Command::Merge(args) => merge::run(&args).map(|c| code = c),
        cli::Command::K8s(cmd) => k8s::run(&cmd, &std::env::args().collect::<Vec<_>>()),
        cli::Command::Swarm(cmd) => swarm::run(&cmd, &std::env::args().collect::<Vec<_>>()).map(|c| code = c),
    };
    match result {
        Ok(()) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::code(exit::ERROR)
        }
    }
}

/// Help and version print as clap has them; a usage mistake is one line on
/// stderr and exit code 2.
fn usage_error(e: &clap::Error) -> ExitCode {
    if !e.use_stderr() {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    let line: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    eprintln!("{} (see --help)", line.join("; "));
    exit::code(exit::USAGE)
}
