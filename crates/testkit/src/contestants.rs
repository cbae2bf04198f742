//! The Rust reference contestants (`sb-dummy`, `sb-event-log`,
//! `sb-bubble-sort`, `sb-db-read`) for tests outside `stackbench-serve`.
//!
//! A test of `stackbench` cannot see another package's `CARGO_BIN_EXE_*`, and
//! `stackbench` no longer links the contestants. [`contestant`] builds the
//! binary into the directory that holds the `stackbench` under test (the
//! `{bin_dir}` of a plan, where `stackbench run` finds `sb-*` too), once per
//! test process, so a test never runs a stale copy left by an earlier build.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// The binaries built so far by this process.
static BUILT: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// `name` (e.g. `sb-dummy`) built next to `stackbench` (the path in
/// `CARGO_BIN_EXE_stackbench`), with the same profile; returns its path.
///
/// # Panics
/// When the build fails (the panic holds cargo's output).
pub fn contestant(stackbench: &str, name: &str) -> PathBuf {
    let bin_dir = Path::new(stackbench).parent().expect("CARGO_BIN_EXE_stackbench has a directory");
    let path = bin_dir.join(name);
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if built.get_or_insert_with(HashSet::new).contains(name) {
        return path;
    }
    let target_dir = bin_dir.parent().expect("a profile directory lives in a target directory");
    let profile = match bin_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    // The cargo that builds this test (set for every crate it compiles).
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "stackbench-serve", "--bin", name, "--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {name}: {e}"));
    assert!(
        out.status.success() && path.is_file(),
        "cargo build -p stackbench-serve --bin {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    built.as_mut().map(|b| b.insert(name.to_owned()));
    path
}

/// Every shipped plan: `plans/*.toml`, each contestant directory's
/// `plan.toml` (a contestant directory without one fails the test) and the
/// example scenarios' plans (`scenarios/examples/*-plan.toml`), sorted.
pub fn shipped_plans() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut plans: Vec<PathBuf> = std::fs::read_dir(root.join("plans"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    for dir in std::fs::read_dir(root.join("contestants")).unwrap().flatten() {
        let plan = dir.path().join("plan.toml");
        assert!(plan.exists(), "{} has no plan.toml", dir.path().display());
        plans.push(plan);
    }
    for e in std::fs::read_dir(root.join("scenarios/examples")).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with("-plan.toml") {
            plans.push(e.path());
        }
    }
    plans.sort();
    plans
}
