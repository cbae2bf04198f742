//! `stackbench report DIR` (re-render a result store in any format) and
//! `stackbench compare BASE NEW` (changes between two, exit code 4 on a
//! regression, for CI).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::exit;

use anyhow::{Context as _, bail};
use clap::Args;
use stackbench_record::ResultSet;
use stackbench_report::{Analysis, AnalysisOptions, Format, RenderOptions, render, render_comparison};

/// `stackbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result directory written by `stackbench run` or `stackbench bench`.
    pub dir: PathBuf,
    /// terminal, md, csv, json or html [default: from --out's extension, else terminal]
    #[arg(long, short, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// State every ratio against this contestant instead of the best of its scenario.
    #[arg(long, value_name = "NAME")]
    pub reference: Option<String>,
}

/// `stackbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The result directory to compare against (e.g. main's last run).
    pub base: PathBuf,
    /// The result directory to judge.
    pub new: PathBuf,
    /// Largest drop in throughput that is not a regression, e.g. 5% (a bare number is a percentage too).
    #[arg(long, default_value = "5%", value_parser = parse_percent, value_name = "PERCENT")]
    pub max_regression: f64,
    /// terminal, md, csv, json or html [default: from --out's extension, else terminal]
    #[arg(long, short, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Write the comparison to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse().map_err(|e: stackbench_report::UnknownFormat| e.to_string())
}

/// `5%`, `5` or `2.5%` as a fraction.
fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(p / 100.0),
        Ok(_) => Err(format!("'{s}' is not a percentage from 0 to 100 (e.g. 5%)")),
        Err(_) => Err(format!("'{s}' is not a percentage (e.g. 5%)")),
    }
}

fn load(dir: &Path) -> anyhow::Result<ResultSet> {
    ResultSet::load(dir).with_context(|| format!("cannot read the result directory {}", dir.display()))
}

/// The format asked for, else the one `--out` names, else the terminal's.
fn format_of(format: Option<Format>, out: Option<&Path>) -> anyhow::Result<Format> {
    match (format, out) {
        (Some(f), _) => Ok(f),
        (None, Some(path)) => Format::from_path(path).with_context(|| {
            format!("cannot tell the format from {}: add --format terminal|md|csv|json|html", path.display())
        }),
        (None, None) => Ok(Format::Terminal),
    }
}

/// Writes `text` to `out` (creating its directory), or prints it.
fn emit(text: &str, out: Option<&Path>) -> anyhow::Result<()> {
    let Some(path) = out else {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        return Ok(());
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn options(out: Option<&Path>) -> RenderOptions {
    if out.is_some() { RenderOptions { color: false } } else { RenderOptions::for_stdout() }
}

pub fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let format = format_of(args.format, args.out.as_deref())?;
    let set = load(&args.dir)?;
    let analysis = Analysis::from_results(
        &set,
        &AnalysisOptions { reference: args.reference.clone(), ..AnalysisOptions::default() },
    );
    if let Some(reference) = &args.reference {
        let names = analysis.contestant_names();
        if !names.contains(&reference.as_str()) {
            bail!(
                "--reference {reference}: no measured contestant of that name in {}; measured: {}",
                args.dir.display(),
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            );
        }
    }
    emit(&render(&analysis, format, &options(args.out.as_deref())), args.out.as_deref())
}

pub fn compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let format = format_of(args.format, args.out.as_deref())?;
    let (base, new) = (load(&args.base)?, load(&args.new)?);
    let comparison = stackbench_report::compare(&base, &new, args.max_regression);
    emit(&render_comparison(&comparison, format, &options(args.out.as_deref())), args.out.as_deref())?;
    if comparison.has_regression() {
        if args.out.is_some() || format != Format::Terminal {
            for r in comparison.regressions() {
                eprintln!("regression: '{}' ({}): {}", r.contestant, r.scenario, r.text);
            }
        }
        return Ok(exit::code(exit::REGRESSION));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("5%"), Ok(0.05));
        assert_eq!(parse_percent(" 2.5 % "), Ok(0.025));
        assert_eq!(parse_percent("10"), Ok(0.1));
        assert!(parse_percent("-1%").unwrap_err().contains("0 to 100"));
        assert!(parse_percent("five").unwrap_err().contains("not a percentage"));
    }

    #[test]
    fn format_follows_the_output_file() {
        assert_eq!(format_of(None, Some(Path::new("r.html"))).unwrap(), Format::Html);
        assert_eq!(format_of(Some(Format::Csv), Some(Path::new("r.html"))).unwrap(), Format::Csv);
        assert_eq!(format_of(None, None).unwrap(), Format::Terminal);
        assert!(format_of(None, Some(Path::new("report"))).unwrap_err().to_string().contains("--format"));
    }
}
