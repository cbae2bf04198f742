//! `sb-db-read`: the `db-read` reference contestant alone (the artifact whose
//! size is reported): the db-read router and its eight drivers, nothing else;
//! `sb-db-read seed --store URL` loads the data set a database needs first.
//! Its flags: `stackbench_serve::args::DbReadCli`.

use std::process::ExitCode;

use clap::Parser as _;
use stackbench_serve::args::{DbReadCli, DbReadCommand};
use stackbench_serve::launch;

fn main() -> ExitCode {
    let cli = DbReadCli::parse();
    let result = match &cli.command {
        Some(DbReadCommand::Seed { store }) => launch::seed_db_read(store),
        None => launch::run_db_read("sb-db-read", &cli.args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sb-db-read: error: {e}");
            ExitCode::FAILURE
        }
    }
}
