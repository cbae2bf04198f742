//! Helpers for the workspace's tests (a dev-dependency only).
//!
//! - [`contestants`]: the `sb-*` binaries, built next to the `stackbench`
//!   under test, for tests of the CLI; and the contestants in other
//!   languages, installed and started by their own scripts.
//! - [`database_url`]: tests that need a database read its URL from an
//!   environment variable (`STACKBENCH_TEST_POSTGRES`, `_MYSQL`, `_REDIS`,
//!   `_INFLUXDB`). Without it they skip with a line on the terminal; under
//!   `CI=true` a missing database fails the test instead, so CI never passes by
//!   skipping.
//! - [`exports`]: what each library crate's root exports; a test holds every root to
//!   exporting only names that another crate (or its own tests, binaries, fuzz targets) uses.
//! - [`frames`]: a response body of given frames (data, trailers) for hyper servers.
//! - [`hdrh`]: interval logs read by Python's `hdrhistogram`, an independent reader.
//! - [`hostile`]: TCP servers that answer with malformed or endless bytes.
//! - [`imports`]: the import graph of a crate's modules; a test holds every crate of the
//!   workspace to having no circle in it, and `module-layers` prints a crate's modules in
//!   layers (docs/design.md's picture of the load engine).
//! - [`instances`]: private PostgreSQL, MariaDB and Redis servers to stop and
//!   start, pause (SIGSTOP: hung) and resume.
//! - [`http`]: a tiny blocking HTTP/1.1 client, so tests of real servers need
//!   no client stack of their own (and do not test ours with ours).
//! - [`record`]: records a test wrote, parsed and validated against the RunRecord's JSON
//!   schema (`crates/record/schema/run-record.schema.json`).
//! - [`process`]: a server process started for a test, its announced address,
//!   SIGTERM and a bounded wait for its exit.
//! - [`site`]: a small HTTP/1.1 server whose answers a function of the request gives.
//! - [`todo`]: a small todo service for the tests of scenario files, right or
//!   with one fault.
//! - [`assert_every_test_file_declared`]: each crate links one integration-test
//!   binary (`tests/tests.rs`); this holds every file of `tests/` to being one of its modules.

pub mod contestants;
pub mod exports;
pub mod frames;
pub mod hdrh;
pub mod hostile;
pub mod http;
pub mod imports;
pub mod instances;
pub mod process;
pub mod record;
pub mod site;
pub mod tls;
pub mod todo;

use std::io::Write as _;

pub const POSTGRES: &str = "STACKBENCH_TEST_POSTGRES";
pub const MYSQL: &str = "STACKBENCH_TEST_MYSQL";
pub const REDIS: &str = "STACKBENCH_TEST_REDIS";
pub const INFLUXDB: &str = "STACKBENCH_TEST_INFLUXDB";

/// Is this a CI run (`CI=true` or `CI=1`)?
pub fn in_ci() -> bool {
    matches!(std::env::var("CI").as_deref(), Ok("true" | "1"))
}

/// The URL of a test database, or `None` after printing a visible skip line.
///
/// # Panics
/// Under `CI=true` when the variable is not set: CI must test every store.
pub fn database_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                !in_ci(),
                "{var} is not set, and CI=true: this test needs its database in CI (see .ci/run)"
            );
            skip(&format!("{var} is not set; set it to run this test against a real database"));
            None
        }
    }
}

/// Prints `SKIPPED <test>: <why>` straight to the terminal. The test harness
/// captures `println!`/`eprintln!` of passing tests; a direct write to the
/// stderr handle is not captured, so the skip is always visible.
pub fn skip(why: &str) {
    let name = std::thread::current().name().unwrap_or("test").to_owned();
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {name}: {why}");
}

/// Fails when a file or module directory of a crate's `tests/` is not declared as a module
/// in its `tests/tests.rs` (`tests_rs`, that file's text): each crate links one
/// integration-test binary, so an undeclared file would silently never run.
pub fn assert_every_test_file_declared(manifest_dir: &str, tests_rs: &str) {
    let dir = std::path::Path::new(manifest_dir).join("tests");
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let name = match path.extension() {
            Some(e) if e == "rs" => path.file_stem(),
            None if path.join("mod.rs").exists() => path.file_name(),
            _ => continue,
        };
        let name = name.expect("a file name").to_string_lossy();
        assert!(
            name == "tests" || tests_rs.contains(&format!("\nmod {name};")),
            "tests/{name} is not declared in tests/tests.rs: it would never run"
        );
    }
}
