//! `stackbench run PLAN`, `stackbench bench` and `stackbench verify URL`:
//! argument structs, and the wiring of the orchestrator's real parts
//! (processes, prober, load engine, cgroups, `/proc`) plus Ctrl-C handling
//! and the report at the end.
//! Exit codes: [`crate::exit`].

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::exit;

use anyhow::{Context as _, bail};
use clap::Args;
use stackbench_hurl::{Builtin, FileLimits};
use stackbench_record::{ByteSize, Environment, ResultSet};
use stackbench_run::CgroupLimiter;
use stackbench_run::EngineDriver;
use stackbench_run::HyperProber;
use stackbench_run::OsLauncher;
use stackbench_run::{Cancel, Deps, Plan, PlanContext, RunOptions, run_plan};
use stackbench_run::{ProcSource, Procfs};

/// The plan `stackbench bench` runs, built in so it works from any directory.
pub const QUICK_PLAN: &str = include_str!("../../../plans/quick.toml");

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The plan (TOML); see plans/example.toml for every key. Optional with --resume.
    #[arg(value_name = "PLAN.toml", required_unless_present = "resume")]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
    /// Apply the plan's [variants.NAME] overrides (e.g. `full`).
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// The original experiments' durations (5-minute event-log runs, 10-minute bubble-sort runs,
    /// capacity searches of 10-second steps) instead of the short profiles: about 80 minutes on
    /// 2 cores, where the default takes about 5.
    #[arg(long)]
    pub full: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Args)]
pub struct Common {
    /// The result directory. [default: results/<UTC time>]
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Only these contestants (repeat the flag for more).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Continue an interrupted result directory (the same plan).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Measure rounds until every ratio's 95% interval is within this (such as 3%),
    /// instead of a fixed number of repetitions; overrides the plan's `precision`.
    #[arg(long, value_name = "PERCENT", value_parser = precision)]
    pub precision: Option<f64>,
    /// The budget of --precision, in rounds. [default: the plan's, else 20]
    #[arg(long, value_name = "N")]
    pub max_repetitions: Option<u32>,
    /// The budget of --precision, in time from the run's start (such as 5m): no round starts that would pass it.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_time: Option<std::time::Duration>,
    /// Do not print the comparison nor write report.html at the end.
    #[arg(long)]
    pub no_report: bool,
    /// Run every contestant without the plan's `cpu_quota` (bench: without its CPU budget of a third of a
    /// core), with all the CPU its `cpus` give it; the report's header then says "unbudgeted".
    #[arg(long)]
    pub unbudgeted: bool,
}

fn precision(s: &str) -> Result<f64, String> {
    stackbench_report::stats::sequential::parse_precision(s)
}

#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The contestant's URL; for db-read include the driver path (http://127.0.0.1:8080/db/sqlite).
    /// A scenario file without one runs as written (`stackbench verify my.hurl`).
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// event-log, dummy, db-read or bubble-sort.
    #[arg(long, short, conflicts_with = "scenario_file")]
    pub scenario: Option<Builtin>,
    /// A scenario of your own: a .toml scenario file or a .hurl file (docs/scenarios.md,
    /// "Write your own scenario"). Runs its verification cases once.
    #[arg(long, value_name = "FILE")]
    pub scenario_file: Option<PathBuf>,
    /// A variable of the scenario file, NAME=VALUE (repeatable); a value is typed as Hurl
    /// types it (`3` an integer, `true` a boolean, `"3"` a string).
    #[arg(long = "variable", value_name = "NAME=VALUE", requires = "scenario_file")]
    pub variables: Vec<String>,
    /// A file of variables, one NAME=VALUE a line (repeatable), as Hurl's --variables-file.
    /// HURL_VARIABLE_NAME environment variables are variables too (and Hurl 7's HURL_NAME).
    #[arg(long = "variables-file", value_name = "FILE", requires = "scenario_file")]
    pub variables_files: Vec<PathBuf>,
    /// A variable whose value is never printed (`***`), NAME=VALUE (repeatable); so are
    /// HURL_SECRET_NAME environment variables.
    #[arg(long = "secret", value_name = "NAME=VALUE", requires = "scenario_file")]
    pub secrets: Vec<String>,
    /// The directory every file the scenario names must be under; a path, `..` or link leading
    /// out of it is refused. A `.hurl` file's own names start there, as in Hurl.
    /// [default: the scenario file's own directory]
    #[arg(long, value_name = "DIR", requires = "scenario_file")]
    pub file_root: Option<PathBuf>,
    /// The most bytes the scenario file, and each file it names, may have. [default: 64MiB]
    #[arg(long, value_name = "SIZE", requires = "scenario_file")]
    pub max_file_size: Option<ByteSize>,
    /// The longest value a capture may take; a longer one fails its check. [default: 1MiB]
    #[arg(long, value_name = "SIZE", requires = "scenario_file")]
    pub max_capture: Option<ByteSize>,
    /// The scenario file's variable that stands for the target URL (default: `base_url` when
    /// the file uses it, else the file's first origin is the target).
    #[arg(long, value_name = "NAME", requires = "scenario_file")]
    pub base_variable: Option<String>,
    /// Send the scenario file's requests to FROM (an origin it names, http://host:port) to URL
    /// instead (repeatable).
    #[arg(long = "origin", value_name = "FROM=URL")]
    pub origins: Vec<String>,
    /// The store is known to be empty: the count must start at 0 (event-log; a scenario
    /// file with `[reset] by = "contestant"`: its `clean_values` are held).
    #[arg(long)]
    pub clean: bool,
    /// bubble-sort: check the Connect JSON form (POST with {"data": [...]}) instead of gRPC.
    #[arg(long)]
    pub connect_json: bool,
    /// https: trust the certificates of this PEM file instead of the system's roots.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// https: do not check the server's certificate (its name, issuer and dates).
    #[arg(short = 'k', long, help_heading = "TLS")]
    pub insecure: bool,
    /// https: a client certificate (PEM) for mutual TLS, with --key.
    #[arg(long, value_name = "FILE", help_heading = "TLS", requires = "key")]
    pub cert: Option<PathBuf>,
    /// https: the private key of --cert (PEM).
    #[arg(long, value_name = "FILE", help_heading = "TLS", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Connect to ADDR for HOST:PORT (curl's syntax; repeatable).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// Connect to HOST2:PORT2 for HOST1:PORT1 (curl's syntax; repeatable).
    #[arg(long, value_name = "HOST1:PORT1:HOST2:PORT2")]
    pub connect_to: Vec<String>,
}

impl VerifyArgs {
    /// How the probes reach the server: TLS as the flags say, connections routed.
    pub fn reach(&self) -> anyhow::Result<stackbench_run::Reach> {
        let url = self.url.as_deref().unwrap_or("");
        let https = url.trim_start().to_ascii_lowercase().starts_with("https://");
        if !https && self.url.is_some() {
            let tls = [
                ("--cacert", self.cacert.is_some()),
                ("--insecure", self.insecure),
                ("--cert", self.cert.is_some()),
            ];
            if let Some((flag, _)) = tls.iter().find(|(_, set)| *set) {
                anyhow::bail!("{flag}: applies to https:// URLs, and {url} is http://");
            }
        }
        Ok(stackbench_run::Reach {
            tls: stackbench_load::TlsFlags {
                cacert: self.cacert.clone(),
                insecure: self.insecure,
                cert: self.cert.clone(),
                key: self.key.clone(),
                ..stackbench_load::TlsFlags::default()
            },
            route: stackbench_load::Route::new(&self.resolve, &self.connect_to)?,
        })
    }
}

/// The CPUs this process may use: its affinity mask (what `taskset` or a
/// container's cpuset allows), not the machine's online count.
fn cpus() -> Vec<usize> {
    match stackbench_run::affinity() {
        cpus if !cpus.is_empty() => cpus,
        _ => (0..std::thread::available_parallelism().map_or(1, std::num::NonZero::get)).collect(),
    }
}

fn interrupt_on_signals() -> anyhow::Result<Cancel> {
    let cancel = Cancel::new();
    let c = cancel.clone();
    ctrlc::set_handler(move || {
        if !c.is_cancelled() {
            let _ = writeln!(
                std::io::stderr(),
                "\nstopping: saving the current run and stopping the contestant (this takes a moment)…"
            );
        }
        c.cancel();
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(cancel)
}

/// On `--resume`, what the directory was started with: the variant (unless
/// given again, and then it must agree) and the contestants.
fn resumed(common: &Common, variant: Option<String>) -> anyhow::Result<(Option<String>, Vec<String>)> {
    let Some(dir) = &common.resume else { return Ok((variant, common.only.clone())) };
    let Some(stored) = stackbench_run::Invocation::read(dir) else {
        return Ok((variant, common.only.clone()));
    };
    if let Some(v) = &variant
        && stored.variant.as_ref() != Some(v)
    {
        bail!(
            "{} was started with {}; --resume continues it as it was started",
            dir.display(),
            stored.variant.map_or_else(|| "no variant".to_owned(), |s| format!("--variant {s}"))
        );
    }
    let only = if common.only.is_empty() { stored.contestants } else { common.only.clone() };
    Ok((variant.or(stored.variant), only))
}

/// On `--resume`, the rounds as the directory was started: its precision and
/// budget when none is given again, and a refusal when a different one is
/// (the rounds already measured were chosen, and their looks spent, under it).
fn resumed_rounds(plan: &mut Plan, dir: &Path, common: &Common) -> anyhow::Result<()> {
    use stackbench_run::{Invocation, RoundsAsked};
    let Some(stored) = Invocation::read(dir).and_then(|i| i.rounds) else { return Ok(()) };
    let given = common.precision.is_some() || common.max_repetitions.is_some() || common.max_time.is_some();
    if !given {
        plan.set_precision(
            stored.precision,
            stored.max_repetitions,
            stored.max_time_s.map(std::time::Duration::from_secs_f64),
        )
        .map_err(anyhow::Error::msg)?;
        return Ok(());
    }
    let now = RoundsAsked::of(plan.precision.as_ref());
    if now != stored {
        bail!(
            "{} was started with {}; --resume continues it with the same rounds (leave out --precision, \
             --max-repetitions and --max-time, or start a new result directory)",
            dir.display(),
            stored.describe()
        );
    }
    Ok(())
}

/// On `--resume`, the CPU budget as the directory was started: without the plan's
/// `cpu_quota` if `--unbudgeted` dropped it then, and a refusal of `--unbudgeted` now
/// for a directory measured with it (its runs would compare unequal shares of the CPU).
fn resumed_budget(plan: &mut Plan, dir: &Path, common: &Common) -> anyhow::Result<()> {
    let stored = stackbench_run::Invocation::read(dir).is_some_and(|i| i.unbudgeted);
    if common.unbudgeted && !stored {
        bail!(
            "{} was started with the plan's CPU budget; --resume continues it so (leave out --unbudgeted, or \
             start a new result directory)",
            dir.display()
        );
    }
    if stored {
        plan.unbudget();
    }
    Ok(())
}

pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let (variant, only) = resumed(&args.common, args.variant.clone())?;
    let common = Common { only, ..args.common.clone() };
    let ctx = PlanContext { cpus: cpus(), variant };
    let plan = match (&args.plan, &args.common.resume) {
        (Some(path), _) => Plan::load(path, &ctx)?,
        (None, Some(dir)) => {
            let set = ResultSet::load(dir)?;
            let path = set.manifest.plan_path.as_deref().map(Path::new);
            Plan::parse(&set.manifest.plan_text, path, &ctx)?
        }
        (None, None) => bail!("give a PLAN.toml (or --resume DIR)"),
    };
    execute(plan, &common)
}

pub fn bench(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let (variant, only) = resumed(&args.common, args.full.then(|| "full".to_owned()))?;
    let common = Common { only, ..args.common.clone() };
    let ctx = PlanContext { cpus: cpus(), variant };
    let mut plan = Plan::parse(QUICK_PLAN, Some(Path::new("plans/quick.toml")), &ctx)
        .context("the built-in plans/quick.toml")?;
    // The Rust contestants' paths come from placeholders; the other languages' are
    // `{plan_dir}/../contestants/…`, in the clone this stackbench was built in.
    plan.path = repository_root().map(|root| root.join("plans/quick.toml"));
    if plan.path.is_none() {
        let mut out = std::io::stdout().lock();
        for c in plan.contestants.iter().filter(|c| c.optional) {
            writeln!(
                out,
                "not measured: {}: no contestants/ directory beside this stackbench or in the working directory \
                 (run it from a clone of the repository)",
                c.name
            )?;
        }
        plan.contestants.retain(|c| !c.optional);
    }
    execute(plan, &common)
}

/// The clone of the repository holding `plans/quick.toml` and `contestants/`: an
/// ancestor of the executable's directory (`target/release/stackbench`) or of
/// the working directory.
fn repository_root() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok());
    let cwd = std::env::current_dir().ok();
    let starts = exe.as_deref().and_then(Path::parent).into_iter().chain(cwd.as_deref());
    starts
        .flat_map(|start| start.ancestors().take(5))
        .find(|dir| dir.join("plans/quick.toml").is_file() && dir.join("contestants").is_dir())
        .map(Path::to_owned)
}

fn execute(mut plan: Plan, common: &Common) -> anyhow::Result<ExitCode> {
    plan.select(&common.only).map_err(anyhow::Error::msg)?;
    plan.set_precision(common.precision, common.max_repetitions, common.max_time)
        .map_err(anyhow::Error::msg)?;
    if common.unbudgeted {
        plan.unbudget();
    }
    if let Some(dir) = &common.resume {
        resumed_rounds(&mut plan, dir, common)?;
        resumed_budget(&mut plan, dir, common)?;
    }
    let exe = std::env::current_exe().context("cannot tell where the stackbench executable is")?;
    let bin_dir = exe.parent().map_or_else(|| PathBuf::from("."), Path::to_owned);
    let (out, resume) = match (&common.out, &common.resume) {
        (_, Some(dir)) => (dir.clone(), true),
        (Some(dir), None) => (dir.clone(), false),
        (None, None) => {
            (PathBuf::from("results").join(stackbench_run::timestamp_name(stackbench_run::now_ms())), false)
        }
    };
    let interrupt = interrupt_on_signals()?;
    let prober = HyperProber::new().context("cannot start the prober's runtime")?;
    let procs = || Box::new(Procfs::default()) as Box<dyn ProcSource>;
    let deps = Deps {
        launcher: &OsLauncher,
        prober: &prober,
        load: &EngineDriver,
        limiter: &CgroupLimiter,
        procs: &procs,
    };
    let opts = RunOptions {
        out,
        resume,
        stackbench: exe,
        bin_dir,
        interrupt,
        environment: Environment::detect(&stackbench_record::version_with_build(env!("CARGO_PKG_VERSION"))),
        cpus: cpus(),
        seed: stackbench_run::clock_seed(),
        report_follows: !common.no_report,
    };
    let mut err = std::io::stderr();
    // What an earlier stackbench killed with SIGKILL left running (its cleanup never ran).
    for line in stackbench_run::reap_orphans() {
        writeln!(err, "reaped: {line}")?;
    }
    // A panic in the orchestrator is a failure of stackbench, reported as one:
    // every run written before it stays in the result directory.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_plan(&plan, &opts, &deps, &mut |line| {
            let _ = writeln!(err, "{line}");
        })
    }));
    let outcome = match outcome {
        Ok(Err(stackbench_run::RunError::ToolFailure(why))) => {
            eprintln!("error: {why}; the runs written before it are in {}", opts.out.display());
            return Ok(exit::code(exit::TOOL_FAILURE));
        }
        Ok(result) => result?,
        Err(payload) => {
            let why = stackbench_load::describe_panic("the orchestrator", &*payload, None);
            eprintln!("error: {why}; the runs written before it are in {}", opts.out.display());
            return Ok(exit::code(exit::TOOL_FAILURE));
        }
    };
    if !common.no_report {
        report(&outcome.dir)?;
    }
    let mut out = std::io::stdout().lock();
    for (name, why) in &outcome.failed {
        writeln!(out, "left out: {name}: {why}")?;
    }
    for (name, why) in &outcome.skipped {
        writeln!(out, "not measured: {name}: {why}")?;
    }
    writeln!(out, "results: {}", outcome.dir.display())?;
    if outcome.interrupted {
        writeln!(out, "interrupted: continue with `stackbench run --resume {}`", outcome.dir.display())?;
        return Ok(exit::code(exit::INTERRUPTED));
    }
    if outcome.tool_failures > 0 {
        writeln!(
            out,
            "error: stackbench itself failed in {} run(s) (incident tool_failure, printed above); those runs are \
             left out of the report. This is a bug in stackbench: please report it",
            outcome.tool_failures
        )?;
        return Ok(exit::code(exit::TOOL_FAILURE));
    }
    Ok(if outcome.failed.is_empty() { exit::code(exit::OK) } else { exit::code(exit::LEFT_OUT) })
}

/// Prints the comparison and writes `report.html` into the result directory.
fn report(dir: &Path) -> anyhow::Result<()> {
    use stackbench_report::{Analysis, AnalysisOptions, Format, RenderOptions, render};
    let set = ResultSet::load(dir)?;
    // Even without a measured run the report says why each contestant was left out.
    if set.runs.is_empty() && set.contestants.is_empty() {
        return Ok(());
    }
    let analysis = Analysis::from_results(&set, &AnalysisOptions::default());
    let html = dir.join("report.html");
    std::fs::write(&html, render(&analysis, Format::Html, &RenderOptions { color: false }))
        .with_context(|| format!("cannot write {}", html.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", render(&analysis, Format::Terminal, &RenderOptions::for_stdout()))?;
    writeln!(out, "report: {}", html.display())?;
    Ok(())
}

/// Whether a command's URL argument is a scenario file (`stackbench verify my.hurl`).
pub fn is_scenario_file(arg: &str) -> bool {
    let ext = Path::new(arg).extension();
    !arg.contains("://")
        && ext.is_some_and(|e| e.eq_ignore_ascii_case("hurl") || e.eq_ignore_ascii_case("toml"))
}

pub fn verify(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    use stackbench_run::VerifyOptions;
    let named = args.url.as_deref().filter(|u| is_scenario_file(u)).map(PathBuf::from);
    let Some(scenario) = args.scenario else {
        let file = args.scenario_file.clone().or_else(|| named.clone()).context(
            "give --scenario NAME (a built-in) or a scenario file (--scenario-file FILE, or the file alone)",
        )?;
        if named.is_some() && args.scenario_file.is_some() {
            anyhow::bail!("give the scenario file once: as --scenario-file or in place of the URL");
        }
        let url = args.url.as_deref().filter(|_| named.is_none());
        if let Some(url) = url {
            split_url(url)?;
        }
        let defined = stackbench_hurl::DefinedVars::gather(
            &args.variables,
            &args.variables_files,
            &args.secrets,
            std::env::vars(),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        let limits = FileLimits::given(
            args.file_root.clone(),
            args.max_file_size.map(|s| s.0),
            args.max_capture.map(|s| s.0),
        );
        let aim = crate::scenario_file::Aiming {
            url,
            base_variable: args.base_variable.as_deref(),
            origins: &args.origins,
        };
        return crate::scenario_file::verify(aim, &file, &defined, &limits, args.clean, args.reach()?);
    };
    let Some(url) = args.url.as_deref().filter(|_| named.is_none()) else {
        anyhow::bail!("--scenario {scenario}: give the server's URL");
    };
    let (base, path) = split_url(url)?;
    if args.connect_json && !scenario.has_connect_json() {
        anyhow::bail!("--connect-json: {scenario} has no Connect JSON form (bubble-sort has); drop the flag");
    }
    let prober = HyperProber::with_reach(args.reach()?).context("cannot start the prober's runtime")?;
    let opts = VerifyOptions { base_path: path, clean_store: args.clean, connect_json: args.connect_json };
    let v = stackbench_run::verify(&prober, &base, scenario, &opts, &mut || None)?;
    let mut out = std::io::stdout().lock();
    // Every rule checked, with its level and result; then any failure that is
    // not one case's (the server went away).
    let rules = stackbench_run::rules(scenario, &opts);
    for (rule, level) in &rules {
        let mut failed = v.failures.iter().filter(|f| f.rule == *rule).peekable();
        if failed.peek().is_none() {
            writeln!(out, "ok      {level:<9}  {rule}")?;
        }
        for f in failed {
            writeln!(out, "FAILED  {level:<9}  {}: {}", f.rule, f.detail)?;
        }
    }
    for f in v.failures.iter().filter(|f| rules.iter().all(|(r, _)| *r != f.rule)) {
        writeln!(out, "FAILED  {:<9}  {}: {}", f.level, f.rule, f.detail)?;
    }
    let broken = v.failures.iter().filter(|f| f.level == "core").count();
    if v.passed {
        let enforced = v.not_enforced();
        if enforced.is_empty() {
            writeln!(out, "{url}: passes the {} contract ({} rules)", scenario, v.cases)?;
        } else {
            writeln!(
                out,
                "{}: passes the {} contract's core rules, with warnings: does not enforce {} ({} of {} rules broken, all hardening)",
                url,
                scenario,
                enforced.join("; "),
                v.failures.len(),
                v.cases
            )?;
        }
        Ok(exit::code(exit::OK))
    } else {
        writeln!(
            out,
            "{}: broke {broken} core rule(s) of the {} contract ({} of {} rules broken in all)",
            url,
            scenario,
            v.failures.len(),
            v.cases,
        )?;
        Ok(exit::code(exit::ERROR))
    }
}

/// `http://host:port/path` (or `https://`) → (`http://host:port`, `/path`).
fn split_url(url: &str) -> anyhow::Result<(String, String)> {
    let Some((base, path)) = stackbench_run::split_url(url) else {
        bail!("{url:?} is not a URL; write it like http://127.0.0.1:8080");
    };
    if !base.starts_with("http://") && !base.starts_with("https://") {
        bail!("{url:?}: stackbench verifies http:// and https:// servers (HTTP/1.1, or gRPC over HTTP/2)");
    }
    if base == "http://" || base == "https://" {
        bail!("{url:?} has no host");
    }
    // The load engine's check of the rest: a port outside 1–65535 is refused, never taken as 80.
    stackbench_load::parse_target(url)?;
    Ok((base, path))
}
