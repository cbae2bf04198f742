//! `sb-db-read`: the `db-read` reference contestant alone (the artifact whose
//! size is reported): the db-read router and its eight drivers, nothing else;
//! `sb-db-read seed --store URL` loads the data set a database needs first.
//! Its flags: `stackbench_serve::DbReadCli`.

use std::process::ExitCode;

use clap::Parser as _;
use stackbench_serve::{DbReadCli, DbReadCommand};

fn main() -> ExitCode {
    let cli = DbReadCli::parse();
    let result = match &cli.command {
        Some(DbReadCommand::Seed { store }) => stackbench_serve::seed_db_read(store),
        None => stackbench_serve::run_db_read("sb-db-read", &cli.args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sb-db-read: error: {e}");
            ExitCode::FAILURE
        }
    }
}
