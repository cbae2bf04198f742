//! The exit codes of every command, defined once: the constants the commands
//! return, and the table every `--help` text and the README's exit-code
//! table are generated from (a test holds the README to it). Scripts rely
//! on these numbers.

use std::fmt::Write as _;
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

/// One exit code: what it means and which commands can end with it
/// (empty: every command).
pub struct Meaning {
    pub code: u8,
    pub what: &'static str,
    pub commands: &'static [&'static str],
}

/// Every exit code, in order. The help texts and the README say exactly this.
pub const TABLE: &[Meaning] = &[
    Meaning { code: OK, what: "done", commands: &[] },
    Meaning {
        code: ERROR,
        what: "an error: a bad value, an unreachable target, a result directory in use; `verify`: a core rule broke",
        commands: &[],
    },
    Meaning { code: USAGE, what: "the command line does not parse (clap's usage error)", commands: &[] },
    Meaning {
        code: LEFT_OUT,
        what: "`run`/`bench`: the plan ran, but a contestant was left out (the reason is printed and stored)",
        commands: &["run", "bench"],
    },
    Meaning {
        code: REGRESSION,
        what: "`compare`: a contestant regressed beyond `--max-regression`",
        commands: &["compare"],
    },
    Meaning {
        code: TOOL_FAILURE,
        what: "stackbench itself failed (a panic, a stalled load worker), or a shard of `swarm load --run` failed or never reported: the numbers are not a result",
        commands: &["load", "run", "bench", "merge", "swarm load"],
    },
    Meaning {
        code: THRESHOLD,
        what: "`load`, `merge`, `swarm load`: a `--threshold` failed, or `--find-max` found no rate that met its objectives",
        commands: &["load", "merge", "swarm load"],
    },
    Meaning {
        code: INTERRUPTED,
        what: "interrupted by Ctrl-C or SIGTERM; what ran is saved",
        commands: &["load", "run", "bench", "merge", "swarm load"],
    },
];

/// A command's `--help` epilogue: `before` (its examples and notes), then
/// the exit codes that command can end with, one per line.
pub fn after_help(command: &str, before: &str) -> String {
    let mut out = String::from(before);
    out.push_str("\n\nExit codes:");
    for m in TABLE.iter().filter(|m| m.commands.is_empty() || m.commands.contains(&command)) {
        // Backquotes are Markdown, for the README; a terminal shows the words.
        let _ = write!(out, "\n  {:<4} {}", m.code, m.what.replace('`', ""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's exit-code table, as Markdown.
    fn markdown_table() -> String {
        let mut out = String::from("| code | meaning |\n|---|---|\n");
        for m in TABLE {
            let _ = writeln!(out, "| {} | {} |", m.code, m.what);
        }
        out
    }

    #[test]
    fn the_readme_says_what_the_table_says() {
        let readme = include_str!("../../../README.md");
        let table = markdown_table();
        assert!(
            readme.contains(&table),
            "README.md's exit-code table differs from crates/cli/src/exit.rs; put this in it:\n{table}"
        );
    }

    #[test]
    fn help_lists_only_the_codes_a_command_can_end_with() {
        let load = after_help("load", "Examples: x");
        assert!(load.starts_with("Examples: x\n\nExit codes:\n  0    done"));
        assert!(load.contains("\n  99   load, merge, swarm load: a --threshold failed"));
        assert!(!load.contains("\n  4 "), "{load}");
        let compare = after_help("compare", "");
        assert!(compare.contains("\n  4    compare: a contestant regressed"));
        assert!(!compare.contains("\n  99 "), "{compare}");
    }

    #[test]
    fn codes_are_listed_once_in_order() {
        assert!(TABLE.windows(2).all(|w| w[0].code < w[1].code));
    }
}
