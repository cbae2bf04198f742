//! The crate's integration tests, one test binary (one link) for all of them, as
//! ripgrep lays out its `tests/`: each file is a module. A new file here must be
//! declared below; `every_test_file_is_a_module` fails otherwise.

mod accuracy;
mod common;
mod findmax;
mod hlog_python;
mod redirects;
mod scenario_file;
mod scenario_file_h2;
mod tls;
mod transports;
mod warmup;

#[test]
fn every_test_file_is_a_module() {
    stackbench_testkit::assert_every_test_file_declared(env!("CARGO_MANIFEST_DIR"), include_str!("tests.rs"));
}
