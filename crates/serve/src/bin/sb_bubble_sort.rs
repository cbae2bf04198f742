//! `sb-bubble-sort`: the `bubble-sort` reference contestant alone (the artifact
//! whose size is reported, as the original experiment reported its services'
//! image sizes): gRPC `sort.v1.SortService/BubbleSort` over h2c on tonic, and
//! with `--rest` the Connect JSON form. Its flags: `stackbench_serve::BubbleSortCli`.

use std::process::ExitCode;

use clap::Parser as _;
use stackbench_serve::BubbleSortCli;

fn main() -> ExitCode {
    let cli = BubbleSortCli::parse();
    match stackbench_serve::run_bubble_sort("sb-bubble-sort", &cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sb-bubble-sort: error: {e}");
            ExitCode::FAILURE
        }
    }
}
