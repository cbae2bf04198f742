//! The exit codes of every command, in one place (documented in the README's
//! exit-code table; scripts rely on them).

use std::process::ExitCode;

/// Everything asked for was done.
pub const OK: u8 = 0;
/// An error: a bad value, an unreachable target, a file that cannot be written.
pub const ERROR: u8 = 1;
/// The command line itself is wrong (clap's convention).
pub const USAGE: u8 = 2;
/// `run`/`bench`: the plan ran, but a contestant was left out (build, start,
/// readiness or verification failed; the reason is printed and stored).
pub const LEFT_OUT: u8 = 3;
/// `compare`: a contestant regressed beyond `--max-regression`.
pub const REGRESSION: u8 = 4;
/// A failure inside stackbench (a panic, a stalled worker): the numbers are
/// not a result (sysexits' EX_SOFTWARE).
pub const TOOL_FAILURE: u8 = 70;
/// `load`: a `--threshold` (or `--slo`) failed (k6's convention).
pub const THRESHOLD: u8 = 99;
/// Interrupted by Ctrl-C or SIGTERM; what ran is saved.
pub const INTERRUPTED: u8 = 130;

pub fn code(c: u8) -> ExitCode {
    ExitCode::from(c)
}
