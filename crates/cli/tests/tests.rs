//! The crate's integration tests, one test binary (one link) for all of them, as
//! ripgrep lays out its `tests/`: each file is a module. A new file here must be
//! declared below; `every_test_file_is_a_module` fails otherwise.

mod bubble_sort_verify;
mod builtin_files;
mod contestant_copies;
mod contestants;
mod db_read_outage_contestants;
mod go_gin_event_log_faults;
mod h2_scenario_files;
mod hostile_files;
mod hostile_load;
mod hostile_memory;
mod hurl_sessions;
mod hurl_tls_options;
mod load_cli;
mod load_scenario_file;
mod regression;
mod report_cli;
mod run_plans;
mod run_scenario_file;
mod shards;
mod signals;
mod verify_scenario_file;

#[test]
fn every_test_file_is_a_module() {
    stackbench_testkit::assert_every_test_file_declared(env!("CARGO_MANIFEST_DIR"), include_str!("tests.rs"));
}
