//! `cargo bench`: the load engine's hot paths, guarded by instruction counts.
//!
//! Runs `bench/load/guard.py` (callgrind's user-space instructions per request of HTTP/1.1,
//! h2c, gRPC unary, a scenario file and the open model, each against a local server) on the
//! `stackbench` this bench was built with, and compares each path with the committed baseline
//! (`bench/load/guard-baseline.toml`); `cargo bench --bench hot_paths -- --check` fails on a
//! rise of more than 3%. docs/design.md, "The load engine's hot paths, guarded".
//!
//! The gRPC path's server is `sb-bubble-sort`, which `cargo bench` at the workspace root
//! builds beside `stackbench` (the serve crate is a default member).

use std::path::Path;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stackbench = Path::new(env!("CARGO_BIN_EXE_stackbench"));
    let bubble = stackbench.with_file_name("sb-bubble-sort");
    let status = Command::new("python3")
        .arg(root.join("bench/load/guard.py"))
        .arg("--stackbench")
        .arg(stackbench)
        .arg("--bubble")
        .arg(&bubble)
        // `cargo bench -- ARGS` passes ARGS (and `--bench`, which the runner ignores).
        .args(std::env::args_os().skip(1))
        .status();
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => {
            eprintln!("bench/load/guard.py failed ({s})");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cannot run python3 bench/load/guard.py: {e}");
            ExitCode::FAILURE
        }
    }
}
