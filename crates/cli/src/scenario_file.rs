//! `stackbench verify URL --scenario-file F`: a scenario of the user's own
//! (a `.toml` scenario or a `.hurl` file, `crates/hurl`), its verification
//! cases run once against URL with the orchestrator's prober, each failed
//! check printed with its `file:line:col`; without a URL the file runs as
//! written, as Hurl runs it. Exit 0 when every core case holds, 1 otherwise
//! (and for a scenario file that does not load).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;
use stackbench_hurl::{
    Aim, Aimed, DefinedVars, FileLimits, Routes, Scenario, StoreReset, Verification, VerifyLevel,
};
use stackbench_run::HyperProber;

use crate::exit;

/// Where a verification sends a file's requests: the target URL (`None`: as written), the
/// variable that stands for it, and `--origin FROM=URL` maps.
#[derive(Debug, Clone, Copy)]
pub struct Aiming<'a> {
    pub url: Option<&'a str>,
    pub base_variable: Option<&'a str>,
    pub origins: &'a [String],
}

pub fn verify(
    aiming: Aiming<'_>,
    path: &Path,
    given: &DefinedVars,
    limits: &FileLimits,
    clean: bool,
    reach: stackbench_run::Reach,
) -> anyhow::Result<ExitCode> {
    let defined: Vec<(&str, &str)> = given.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // The variable that stands for the target takes the target's value: it needs no other.
    let base = aiming.base_variable.filter(|_| aiming.url.is_some());
    let names: Vec<&str> = defined.iter().map(|(k, _)| *k).chain(base).collect();
    let scenario = Scenario::load_with(path, &names, limits)?;
    stackbench_run::check_file(&scenario, &defined).map_err(|why| anyhow!(why))?;
    let maps =
        stackbench_hurl::parse_origin_maps(aiming.origins).map_err(|why| anyhow!("--origin: {why}"))?;
    let target = aiming.url.map(|u| u.trim_end_matches('/'));
    let aim = Aim { target, base_variable: aiming.base_variable, maps: &maps };
    let routes = Routes::new(&scenario, &given.vars, aim).map_err(|why| anyhow!(why))?;
    for note in &routes.notes {
        println!("note: {note}");
    }
    let url = target.map_or_else(|| routes.first().unwrap_or_default(), str::to_owned);
    let prober = HyperProber::with_reach(reach)?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut reset = |argv: &[String]| -> Result<(), String> {
        let status = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .status()
            .map_err(|e| format!("cannot run {:?}: {e}", argv[0]))?;
        if status.success() { Ok(()) } else { Err(format!("{argv:?} exited with {status}")) }
    };
    let aimed = Aimed { target, routes: &routes };
    let v = stackbench_run::verify_file(&prober, &scenario, aimed, &defined, clean, &mut reset, &mut || None);
    print(&v, &url, &scenario.name, given)?;
    if matches!(scenario.reset, Some(StoreReset::Contestant))
        && !clean
        && scenario.verify.iter().any(|c| c.clean_store)
    {
        println!(
            "note: {} says the orchestrator empties its store; here it was not known to be empty, so its clean-store cases \
             were judged from what the store held (--clean: the store is empty, hold their clean values)",
            path.display()
        );
    }
    Ok(exit::code(if v.passed() { exit::OK } else { exit::ERROR }))
}

/// Prints each case and its failures, the secrets' values redacted.
fn print(v: &Verification, url: &str, name: &str, given: &DefinedVars) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for c in &v.cases {
        let level = match c.level {
            VerifyLevel::Core => "core",
            VerifyLevel::Hardening => "hardening",
        };
        let result = if c.passed() { "ok    " } else { "FAILED" };
        writeln!(out, "{result}  {level:<9}  {}", given.redact(&c.name))?;
        write!(out, "{}", given.redact(&c.to_string()))?;
    }
    let failed = |level| v.cases.iter().filter(|c| c.level == level && !c.passed()).count();
    match (failed(VerifyLevel::Core), failed(VerifyLevel::Hardening)) {
        (0, 0) => writeln!(out, "{url}: passes the {name} scenario ({} cases)", v.cases.len()),
        (0, h) => writeln!(
            out,
            "{url}: passes the {name} scenario's core cases, with warnings: {h} hardening case(s) failed"
        ),
        (c, _) => writeln!(out, "{url}: failed {c} core case(s) of the {name} scenario"),
    }
}
