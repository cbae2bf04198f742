//! `stackbench load URL`: drive a server with the load engine, print the
//! summary, write the record (`--json`, or `--json -` to stdout), the
//! timeline (`--csv`) and the interval log (`--hlog`). Ctrl-C (or SIGTERM) stops the run and still
//! prints and writes what was measured. Exit codes are those of
//! [`crate::exit`]: 0, 1 (bad input or the target is not there), 70 (the
//! engine failed), 99 (a `--threshold` failed), 130 (interrupted).

use std::fs::File;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::exit;

use anyhow::Context as _;
use clap::Args;
use stackbench_load::{LoadOptions, RunRecord, Stop, summary_text, timeline_csv};

/// `stackbench load` arguments: the target, the load options, and where results go.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Target URL, e.g. http://127.0.0.1:8080/events. A --scenario-file without one runs as
    /// written, at the server its requests name.
    #[arg(value_name = "URL", required_unless_present = "scenario_file")]
    pub url: Option<String>,
    #[command(flatten)]
    pub options: LoadOptions,
    /// Write the RunRecord (docs/run-record.md) as JSON to this file; `-` writes it to stdout
    /// as one line and the summary to stderr (what `stackbench merge` reads from a pipe).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// Write the per-second timeline as CSV to this file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub csv: Option<PathBuf>,
    /// Write an HdrHistogram interval log (one histogram per second) to this file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub hlog: Option<PathBuf>,
    /// No live progress line (there is none when stderr is not a terminal either).
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,
}

pub fn run(args: &LoadArgs) -> anyhow::Result<ExitCode> {
    // `stackbench load my.hurl`: the file alone, run as written.
    let named = args.url.as_deref().filter(|u| crate::run::is_scenario_file(u));
    let mut options = args.options.clone();
    if let Some(file) = named {
        anyhow::ensure!(
            options.scenario_file.is_none(),
            "give the scenario file once: as --scenario-file or in place of the URL"
        );
        options.scenario_file = Some(file.into());
    }
    let url = args.url.as_deref().filter(|_| named.is_none()).unwrap_or("");
    let mut spec = options.to_spec(url)?;
    spec.progress = !args.quiet && std::io::stderr().is_terminal();
    spec.hlog.clone_from(&args.hlog);
    // Refuse unwritable outputs now rather than after a long run.
    let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
    let json = args.json.as_deref().filter(|_| !json_to_stdout).map(create).transpose()?;
    let csv = args.csv.as_deref().map(create).transpose()?;
    stackbench_run::setup_load(&options, &mut spec).map_err(|why| anyhow::anyhow!(why))?;

    let stop = Stop::new();
    watch_signals(stop.clone());
    let record = if spec.search.is_some() {
        let quiet = args.quiet;
        stackbench_load::find_max(&spec, &stop, &mut |step| {
            if !quiet {
                eprintln!("{}", stackbench_load::step_line(step));
            }
        })?
    } else {
        stackbench_load::run(&spec, &stop)?
    };

    print_summary(&record, json_to_stdout);
    if json_to_stdout {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(&record)?)
            .and_then(|()| out.flush())
            .context("cannot write the record to stdout")?;
    }
    if let Some((file, path)) = json {
        write_to(file, &path, serde_json::to_string_pretty(&record)?.as_bytes())?;
    }
    if let Some((file, path)) = csv {
        write_to(file, &path, timeline_csv(&record).as_bytes())?;
    }
    Ok(exit_code(&record, stop.is_stopped()))
}

/// The summary on stdout, or on stderr when stdout carries the record.
pub fn print_summary(record: &RunRecord, to_stderr: bool) {
    let no_color = std::env::var_os("NO_COLOR").is_some();
    if to_stderr {
        eprint!("{}", summary_text(record, std::io::stderr().is_terminal() && !no_color));
    } else {
        print!("{}", summary_text(record, std::io::stdout().is_terminal() && !no_color));
    }
}

/// 70 when the record is not a result, 99 when a threshold (or the capacity search) failed,
/// 130 when interrupted, else 0; but 130 for a run the user `stopped` that is not a result
/// either (its workers did not stop in time: Ctrl-C ends with 130 whatever they do).
pub fn exit_code(record: &RunRecord, stopped: bool) -> ExitCode {
    if let Some(invalid) = &record.invalid {
        eprintln!("error: {}", invalid.reason);
        exit::code(if stopped { exit::INTERRUPTED } else { exit::TOOL_FAILURE })
    } else if record.thresholds.iter().any(|t| !t.passed)
        || record.find_max.as_ref().is_some_and(|s| s.sustained_rps.is_none() && s.ended != "interrupted")
    {
        exit::code(exit::THRESHOLD)
    } else if record.interrupted {
        exit::code(exit::INTERRUPTED)
    } else {
        exit::code(exit::OK)
    }
}

pub fn create(path: &Path) -> anyhow::Result<(File, PathBuf)> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    Ok((file, path.to_owned()))
}

pub fn write_to(mut file: File, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Ctrl-C or SIGTERM: stop the run (the partial result is kept); a second one exits at once.
/// The handler is installed here, before the run starts (ctrlc, as `stackbench run` uses).
fn watch_signals(stop: Stop) {
    let installed = ctrlc::set_handler(move || {
        if stop.is_stopped() {
            std::process::exit(130);
        }
        stop.stop();
    });
    // Without the handler, Ctrl-C simply ends the process: nothing to report.
    drop(installed);
}
