//! The Rust reference contestants (`sb-dummy`, `sb-event-log`,
//! `sb-bubble-sort`, `sb-db-read`) for tests outside `stackbench-serve`.
//!
//! A test of `stackbench` cannot see another package's `CARGO_BIN_EXE_*`, and
//! `stackbench` no longer links the contestants. [`contestant`] builds the
//! binary into the directory that holds the `stackbench` under test (the
//! `{bin_dir}` of a plan, where `stackbench run` finds `sb-*` too), once per
//! test process, so a test never runs a stale copy left by an earlier build.
//!
//! The contestants in other languages (`contestants/<dir>/`): [`install`]
//! runs a directory's `install.sh` (a visible skip when it fails, a failure
//! under `CI=true`), and [`Stack`] runs its `run.sh` as the plans do, on a
//! free port, in a process group of its own so that SIGKILL reaches whatever
//! it forks.

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::instances::free_port;
use crate::{http, in_ci, skip};

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
        // Every store: the tests reach PostgreSQL, MariaDB and Redis too. The feature is
        // spelled as the README and the plans tell users to, so that a spelling cargo stops
        // honouring fails these tests instead of building the binaries without it.
        .args(["build", "--quiet", "-p", "stackbench-serve", "--features", "stackbench-serve/db-servers"])
        .args(["--bin", name])
        .args(["--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        // Set for a test binary alone to read its per-test times (docs/design.md, "CI's
        // minutes and disk"), it would change every crate's fingerprint here and rebuild the
        // contestants' whole tree instead of finding them built.
        .env_remove("RUSTC_BOOTSTRAP")
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {name}: {e}"));
    assert!(
        out.status.success() && path.is_file(),
        "cargo build -p stackbench-serve --features stackbench-serve/db-servers --bin {name} failed:\n{}",
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

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Runs `contestants/<dir>/install.sh`. `false` after a visible skip when it
/// fails (its toolchain missing, say).
///
/// # Panics
/// When it fails under `CI=true`.
pub fn install(dir: &str) -> bool {
    let out = Command::new(root().join("contestants").join(dir).join("install.sh")).output().unwrap();
    if out.status.success() {
        return true;
    }
    let why = format!("{dir}/install.sh failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    assert!(!in_ci(), "CI=true: {why}");
    skip(&why);
    false
}

/// A contestant in another language, started by its `run.sh` with `PORT`
/// and the given environment. Dropped, its process group gets SIGTERM, then
/// SIGKILL after 10 s.
pub struct Stack {
    pub dir: String,
    pub port: u16,
    child: Child,
    killed: AtomicBool,
}

/// Sends `sig` (`-TERM`, `-KILL`) to the process group `pgid`.
fn signal_group(pgid: u32, sig: &str) {
    let _ = Command::new("kill").args([sig, "--", &format!("-{pgid}")]).stderr(Stdio::null()).status();
}

impl Stack {
    /// Starts `contestants/<dir>/run.sh args` and waits until `GET ready`
    /// answers 200. Its stderr goes to the test's output (shown when the
    /// test fails).
    ///
    /// # Panics
    /// When it exits first, or `ready` does not answer 200 within 60 s.
    pub fn start(dir: &str, args: &[&str], env: &[(&str, String)], ready: &str) -> Stack {
        let port = free_port();
        let mut child = Command::new(root().join("contestants").join(dir).join("run.sh"))
            .args(args)
            .env("PORT", port.to_string())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(stderr) = child.stderr.take() {
            let dir = dir.to_owned();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    eprintln!("{dir}: {line}");
                }
            });
        }
        let mut stack = Stack { dir: dir.to_owned(), port, child, killed: AtomicBool::new(false) };
        let deadline = Instant::now() + Duration::from_mins(1);
        while stack.get(ready).0 != 200 {
            if let Some(status) = stack.child.try_wait().unwrap() {
                panic!("{dir} exited ({status}) before GET {ready} answered 200");
            }
            assert!(Instant::now() < deadline, "{dir}: GET {ready} did not answer 200 within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        stack
    }

    pub fn addr(&self) -> SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    /// `GET path`: status and body (status 0 and the error when no answer).
    pub fn get(&self, path: &str) -> (u16, String) {
        answer(http::get(self.addr(), path))
    }

    /// `POST path` with a JSON body: status and body (0 and the error when no answer).
    pub fn post_json(&self, path: &str, body: &[u8]) -> (u16, String) {
        answer(http::request(self.addr(), "POST", path, &[("Content-Type", "application/json")], body))
    }

    /// SIGKILL to its whole process group (reaped when dropped). Takes
    /// `&self`, so clients on other threads may still be sending.
    pub fn kill(&self) {
        signal_group(self.child.id(), "-KILL");
        self.killed.store(true, Ordering::SeqCst);
    }
}

fn answer(r: std::io::Result<http::Response>) -> (u16, String) {
    match r {
        Ok(r) => (r.status, r.text()),
        Err(e) => (0, e.to_string()),
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if self.killed.load(Ordering::SeqCst) {
            let _ = self.child.wait();
            return;
        }
        signal_group(self.child.id(), "-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_group(self.child.id(), "-KILL");
        let _ = self.child.wait();
    }
}
