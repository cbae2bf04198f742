//! `stackbench merge RECORD...`: one run from the records of a load's shards
//! (`stackbench load --shard I/N` on several generators), with thresholds
//! judged on the whole ([`stackbench_load::merge`] does the work). Records
//! come from files or, with `-` or none, from stdin (`kubectl logs` output).
//! Exit codes as `stackbench load`'s: 70 when a shard's numbers are not a
//! result, 99 when a threshold fails on the merge, 130 when a shard was
//! interrupted.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use stackbench_load::Threshold;
use stackbench_load::merge::{self, Input, Merged};
use stackbench_load::timeline_csv;

use crate::load::{create, exit_code, print_summary, write_to};

/// `stackbench merge` arguments.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Run records (`stackbench load --json`) of the shards; `-`, or none, reads stdin: one
    /// record per line among other lines (`kubectl logs` of the shards' pods).
    #[arg(value_name = "RECORD")]
    pub records: Vec<PathBuf>,
    /// Pass/fail criterion judged on the merged whole, e.g. 'p99<50ms'; repeat for more
    /// (none: the shards' own --threshold expressions are judged on the whole). A failed
    /// one makes the exit code 99.
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<Threshold>,
    #[command(flatten)]
    pub out: MergedOutputs,
}

/// Where a merged record goes (`stackbench merge`, `stackbench swarm load --run`).
#[derive(Debug, Args, Default)]
pub struct MergedOutputs {
    /// Write the merged RunRecord as JSON to this file (`-`: stdout, one line).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// Write the merged per-second timeline as CSV to this file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub csv: Option<PathBuf>,
    /// Write the merged HdrHistogram interval log (one histogram per second) to this file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub hlog: Option<PathBuf>,
}

/// The output files, created before the long part so that an unwritable one is refused first.
pub struct Opened {
    json: Option<(std::fs::File, PathBuf)>,
    csv: Option<(std::fs::File, PathBuf)>,
}

impl MergedOutputs {
    pub fn is_empty(&self) -> bool {
        self.json.is_none() && self.csv.is_none() && self.hlog.is_none()
    }

    pub fn open(&self) -> anyhow::Result<Opened> {
        let to_stdout = self.json.as_deref() == Some(Path::new("-"));
        Ok(Opened {
            json: self.json.as_deref().filter(|_| !to_stdout).map(create).transpose()?,
            csv: self.csv.as_deref().map(create).transpose()?,
        })
    }
}

pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let opened = args.out.open()?;
    let mut inputs: Vec<Input> = Vec::new();
    let mut skipped = 0;
    let sources: Vec<&Path> = if args.records.is_empty() {
        vec![Path::new("-")]
    } else {
        args.records.iter().map(PathBuf::as_path).collect()
    };
    for source in sources {
        let (name, text) = if source == Path::new("-") {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("cannot read stdin")?;
            ("stdin".to_owned(), text)
        } else {
            let text = std::fs::read_to_string(source)
                .with_context(|| format!("cannot read {}", source.display()))?;
            (source.display().to_string(), text)
        };
        let (mut records, n) = merge::read_records(&name, &text)?;
        skipped += n;
        inputs.append(&mut records);
    }
    let count = inputs.len();
    let merged = merge::merge(inputs, &args.thresholds)?;
    report(&merged, count, skipped, &args.out, opened)
}

/// Shows the merge (warnings, summary, how many records) and writes the outputs;
/// `stackbench load`'s exit code for the merged record.
pub fn report(
    merged: &Merged,
    count: usize,
    skipped: usize,
    out: &MergedOutputs,
    opened: Opened,
) -> anyhow::Result<ExitCode> {
    let json_to_stdout = out.json.as_deref() == Some(Path::new("-"));
    for w in &merged.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &out.hlog {
        merge::write_hlog(&merged.record, path)?;
    }
    print_summary(&merged.record, json_to_stdout);
    let line = format!(
        "  merged        {count} record{}, measured starts within {} ms{}",
        if count == 1 { "" } else { "s" },
        merged.start_skew_ms,
        if skipped > 0 { format!("; {skipped} other lines skipped") } else { String::new() }
    );
    if json_to_stdout {
        eprintln!("{line}");
        println!("{}", serde_json::to_string(&merged.record)?);
    } else {
        println!("{line}");
    }
    if let Some((file, path)) = opened.json {
        write_to(file, &path, serde_json::to_string_pretty(&merged.record)?.as_bytes())?;
    }
    if let Some((file, path)) = opened.csv {
        write_to(file, &path, timeline_csv(&merged.record).as_bytes())?;
    }
    Ok(exit_code(&merged.record, false))
}
