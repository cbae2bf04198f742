//! The command line: every subcommand, its flags, and the help text with an
//! example for each.

use std::net::IpAddr;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "stackbench",
    version,
    about = "Settle stack arguments with trustworthy load numbers.",
    long_about = "stackbench runs standard service contracts (event-log, dummy, db-read, bubble-sort) \
                  against contestants written in any language, and tells you which is faster, by how \
                  much, and how sure that is.",
    after_help = "Examples:\n  stackbench serve dummy --port 8080\n\nSee `stackbench <command> --help` for each command."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a Rust reference contestant (a server implementing one scenario).
    #[command(subcommand)]
    Serve(ServeCommand),
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// The `dummy` scenario: validate an event, answer {"count":1}, no store.
    #[command(after_help = "Example:\n  stackbench serve dummy --port 8080 &\n  \
        curl -s -H 'Content-Type: application/json' -d '{\"type\":\"page_view\"}' http://127.0.0.1:8080/events\n  \
        {\"count\":1}")]
    Dummy(Listen),
}

/// Where a server listens.
#[derive(Debug, Clone, Args)]
pub struct Listen {
    /// TCP port to listen on; 0 picks a free one (printed at start).
    #[arg(long, short, env = "PORT", default_value_t = 8080)]
    pub port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
}
