//! Plans: the TOML file that names contestants and how to load them, parsed
//! and validated before anything starts. Every key is documented in
//! `plans/example.toml` and `docs/plan.md`.
//!
//! Parsing is strict (`deny_unknown_fields`): a misspelt key is refused with
//! the keys that are allowed. Values are validated while they are read
//! (durations, CPU lists, sizes, scenario names), so an error carries the
//! `file:line:col` of the offending value and shows its line. Checks that
//! span several keys (a contestant with both `command` and `url`, duplicate
//! names, CPUs this process may not use) point at the contestant's `name`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use contestant::{check_port, resolve};
pub use precision::Precision;
pub use scenario::{FileScenario, ScenarioRef};

/// A plan as written, before defaults are applied.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// A title for reports.
    #[serde(default)]
    pub name: Option<String>,
    /// What the plan is for, for its readers (docs/plan.md): accepted, shown nowhere yet.
    #[serde(default)]
    #[expect(dead_code, reason = "a plan's own prose; nothing reads it yet")]
    pub description: Option<String>,
    #[serde(default)]
    pub defaults: Settings,
    /// Load profile per scenario: any option of `stackbench load`, by its long flag name.
    #[serde(default)]
    pub load: BTreeMap<String, Spanned<profile::Table>>,
    /// Named variants (`stackbench run --variant NAME`, `bench --full`).
    #[serde(default)]
    pub variants: BTreeMap<String, Variant>,
    #[serde(default, rename = "contestant")]
    pub contestants: Vec<ContestantFile>,
}

/// Overrides applied by `--variant NAME`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// What the variant changes, for the plan's readers: accepted, shown nowhere yet.
    #[serde(default)]
    #[expect(dead_code, reason = "a variant's own prose; nothing reads it yet")]
    pub description: Option<String>,
    #[serde(default)]
    pub defaults: Settings,
    /// Keys merged over `[load.<scenario>]`.
    #[serde(default)]
    pub load: BTreeMap<String, Spanned<profile::Table>>,
}

/// Settings that `[defaults]` gives every contestant and a contestant may override.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Plan-level: measured runs per contestant.
    pub repetitions: Option<Spanned<u32>>,
    /// Plan-level: seed of the interleaved order (omitted: random, printed).
    pub seed: Option<u64>,
    pub cold_starts: Option<Spanned<u32>>,
    pub ready_timeout: Option<Spanned<Dur>>,
    pub stop_grace: Option<Spanned<Dur>>,
    pub cpus: Option<Spanned<CpuList>>,
    pub load_cpus: Option<Spanned<CpuList>>,
    pub cpu_quota: Option<Spanned<f64>>,
    pub memory: Option<ByteSize>,
    pub limits: Option<LimitsMode>,
    pub sample_interval: Option<Spanned<Dur>>,
    /// Pause between the stop of one contestant and the start of the next.
    pub cooldown: Option<Spanned<Dur>>,
    pub verify: Option<VerifyMode>,
    /// Plan-level: rounds until every ratio's interval is within this (`"3%"`).
    pub precision: Option<Spanned<String>>,
    /// Plan-level: the budget of `precision`, in rounds.
    pub max_repetitions: Option<Spanned<u32>>,
    /// Plan-level: the budget of `precision`, in time, counted from the run's start.
    pub max_time: Option<Spanned<Dur>>,
    /// Plan-level: at most this many looks at the data, the last when the budget is spent.
    pub looks: Option<Spanned<u32>>,
    /// Plan-level: run the contestants' builds one after another (the default) or all at once.
    pub builds: Option<BuildsMode>,
    /// Plan-level: a contestant of the plan that runs beside every compared run, as a
    /// reference of how fast the shared cores ran then (docs/design.md, "Measured beside a companion").
    pub companion: Option<Spanned<String>>,
    /// Plan-level: the CPU quota (cores) a budgeted contestant has during its load's warm-up,
    /// its `cpu_quota` again before the measured window (docs/design.md, "The default answer
    /// under a CPU budget").
    pub warmup_cpu_quota: Option<Spanned<f64>>,
}

/// A `[[contestant]]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContestantFile {
    pub name: Spanned<String>,
    /// A built-in scenario's name, or a scenario file's path (relative to the plan).
    pub scenario: Spanned<String>,
    /// A scenario file's variables, `NAME = "VALUE"` (what `--variable` gives `stackbench load`).
    #[serde(default)]
    pub variables: Option<Spanned<BTreeMap<String, String>>>,
    /// A scenario file's root: the directory (relative to the plan) every file it names must be
    /// under (`--file-root`); default: the scenario file's own directory.
    #[serde(default)]
    pub file_root: Option<Spanned<String>>,
    /// The most bytes a scenario file, and each file it names, may have (`--max-file-size`).
    #[serde(default)]
    pub max_file_size: Option<Spanned<ByteSize>>,
    /// The longest value a scenario file's capture may take (`--max-capture`).
    #[serde(default)]
    pub max_capture: Option<Spanned<ByteSize>>,
    /// What it is written in, free text for reports (`"Go 1.19"`).
    #[serde(default)]
    pub language: Option<String>,
    /// Its framework, server or driver, free text for reports (`"Gin 1.8"`).
    #[serde(default)]
    pub framework: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub url: Option<String>,
    /// Started contestants: it serves HTTPS with a certificate stackbench makes for the run
    /// (`{tls_cert}`, `{tls_key}`), and is loaded and verified over TLS trusting it.
    #[serde(default)]
    pub tls: bool,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub port: Option<Spanned<u16>>,
    /// Path the load and the verification use, e.g. `/db/sqlite`.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub reset: Option<Vec<String>>,
    #[serde(default)]
    pub build: Option<Vec<String>>,
    #[serde(default)]
    pub artifact: Option<String>,
    /// Files and directories holding the code its authors wrote for the scenario,
    /// counted in lines of code per language (placeholders allowed). Without
    /// it: the directory of its `{plan_dir}/…` start or build script.
    #[serde(default)]
    pub source: Option<Vec<String>>,
    /// Programs that must be on `PATH` (`["go"]`, `["java", "mvn"]`): when one is
    /// missing the contestant is not measured, with that reason, before its build.
    #[serde(default)]
    pub requires: Vec<Spanned<String>>,
    /// A contestant the plan can do without: when a program it `requires` is
    /// missing or its build fails, it is skipped with the reason, and the plan's
    /// exit code does not change (as `stackbench bench` treats other languages).
    #[serde(default)]
    pub optional: bool,
    /// Keys merged over the scenario's load profile for this contestant.
    #[serde(default)]
    pub load: Option<Spanned<profile::Table>>,
    pub cold_starts: Option<Spanned<u32>>,
    pub ready_timeout: Option<Spanned<Dur>>,
    pub stop_grace: Option<Spanned<Dur>>,
    pub cpus: Option<Spanned<CpuList>>,
    pub load_cpus: Option<Spanned<CpuList>>,
    pub cpu_quota: Option<Spanned<f64>>,
    pub memory: Option<ByteSize>,
    pub limits: Option<LimitsMode>,
    pub verify: Option<VerifyMode>,
}

/// The duration and CPU list of a plan are those of `stackbench load` (one parser each).
pub use stackbench_load::{CpuList, Dur};

/// Which broken verification rules leave a contestant out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyMode {
    /// Core rules (the default): one that fails only hardening rules is
    /// measured, with a warning saying what it does not enforce.
    Standard,
    /// Every rule, hardening included.
    Strict,
}

/// What to do when CPU or memory limits cannot be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitsMode {
    /// Refuse to run (the default).
    Strict,
    /// Run without them and record an incident.
    BestEffort,
}

/// How the contestants' `build` commands run, before any is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildsMode {
    /// One after another, each with the machine to itself: its `build_s` is its own (the default).
    #[default]
    InTurn,
    /// All at once, before the first contestant's cold starts: one language's
    /// compile uses the cores another's download leaves idle. For builds that
    /// share nothing (no directory, no database); identical commands still run
    /// in turn. Each `build_s` is then measured beside the others, and recorded so.
    Concurrent,
}

/// How a contestant is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Launch {
    /// stackbench starts it; with `tls`, it serves HTTPS with the certificate stackbench
    /// makes for it (`{tls_cert}`, `{tls_key}`).
    Command {
        argv: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        port: Option<u16>,
        tls: bool,
    },
    /// A server stackbench does not start: no cold start, no sampling, no reset.
    External { url: String },
}

impl Launch {
    /// `https` for a contestant served over TLS, `http` otherwise.
    pub fn scheme(&self) -> &'static str {
        match self {
            Launch::Command { tls: true, .. } => "https",
            Launch::External { url } if url.starts_with("https://") => "https",
            Launch::Command { .. } | Launch::External { .. } => "http",
        }
    }
}

/// A contestant with every default applied. Strings may still hold
/// placeholders (`{port}`, `{stackbench}`, …), substituted at start.
#[derive(Debug, Clone, PartialEq)]
pub struct Contestant {
    pub name: String,
    pub scenario: ScenarioRef,
    pub language: Option<String>,
    pub framework: Option<String>,
    pub launch: Launch,
    /// Path of the load and verification URL (e.g. `/db/sqlite`); `/` by default.
    pub path: String,
    pub reset: Option<Vec<String>>,
    pub build: Option<Vec<String>>,
    pub artifact: Option<String>,
    /// Where its code is, when the plan says (`source`).
    pub source: Option<Vec<String>>,
    /// Programs that must be on `PATH` before the build.
    pub requires: Vec<String>,
    /// Skipped, not left out, when a required program is missing or its build fails.
    pub optional: bool,
    pub cold_starts: u32,
    pub ready_timeout: Duration,
    pub stop_grace: Duration,
    /// Cores of the contestant and every child; `None`: no pinning.
    pub cpus: Option<Vec<usize>>,
    /// Cores of the load generator; `None`: every core not in `cpus`.
    pub load_cpus: Option<Vec<usize>>,
    pub cpu_quota: Option<f64>,
    pub memory: Option<u64>,
    pub limits: LimitsMode,
    pub verify: VerifyMode,
    /// The load profile: `[load.<scenario>]` with the contestant's `load` merged over it.
    pub profile: toml::Table,
    /// Where each key of `profile` is written in the plan text (byte ranges).
    pub profile_spans: BTreeMap<String, std::ops::Range<usize>>,
}

/// A validated plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: Option<String>,
    pub path: Option<PathBuf>,
    /// The TOML text it was read from.
    pub text: String,
    pub repetitions: u32,
    /// Rounds until a precision is met, within a budget (`precision`).
    pub precision: Option<Precision>,
    pub seed: Option<u64>,
    pub sample_interval: Duration,
    pub cooldown: Duration,
    pub builds: BuildsMode,
    pub contestants: Vec<Contestant>,
    /// The variant applied, if any.
    pub variant: Option<String>,
    /// Every `cpu_quota` dropped ([`Plan::unbudget`], `--unbudgeted`).
    pub unbudgeted: bool,
    /// The contestant that runs beside each run of a scenario with more than one
    /// contestant (`companion`); `None` without one, and `--unbudgeted`.
    pub companion: Option<String>,
    /// The quota a budgeted contestant warms up at (`warmup_cpu_quota`); `None` without
    /// one, and `--unbudgeted`.
    pub warmup_cpu_quota: Option<f64>,
}

/// Why a plan is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}{excerpt}")]
pub struct PlanError {
    /// `file:line:col`, or `file` when no place applies.
    pub location: String,
    pub message: String,
    /// The offending line, indented, with a caret; empty when there is none.
    pub excerpt: String,
}

/// Where to look for things that depend on the machine.
#[derive(Debug, Clone)]
pub struct PlanContext {
    /// The CPUs this process may use (its affinity mask), ascending.
    pub cpus: Vec<usize>,
    /// Named variant to apply.
    pub variant: Option<String>,
}

pub(crate) const DEFAULT_REPETITIONS: u32 = 3;
const DEFAULT_COLD_STARTS: u32 = 3;
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(5);
const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

/// The placeholders allowed in strings, substituted when a contestant starts.
pub const PLACEHOLDERS: [&str; 7] =
    ["{port}", "{stackbench}", "{bin_dir}", "{scratch}", "{plan_dir}", "{tls_cert}", "{tls_key}"];

impl Plan {
    /// Reads and validates a plan file.
    pub fn load(path: &Path, ctx: &PlanContext) -> Result<Plan, PlanError> {
        let text = std::fs::read_to_string(path).map_err(|e| PlanError {
            location: path.display().to_string(),
            message: format!("cannot read the plan: {e}"),
            excerpt: String::new(),
        })?;
        Plan::parse(&text, Some(path), ctx)
    }

    /// Parses and validates plan text; `path` names it in errors.
    pub fn parse(text: &str, path: Option<&Path>, ctx: &PlanContext) -> Result<Plan, PlanError> {
        let file = path.map_or_else(|| "<plan>".to_owned(), |p| p.display().to_string());
        let err = |span: Option<std::ops::Range<usize>>, message: String| locate(&file, text, span, message);
        let raw: PlanFile = toml::from_str(text).map_err(|e| err(e.span(), e.message().to_owned()))?;
        let (defaults, load) = with_variant(&raw, ctx.variant.as_deref()).map_err(|m| err(None, m))?;
        if raw.contestants.is_empty() {
            return Err(err(
                None,
                "the plan has no [[contestant]]; add at least one (see plans/example.toml)".into(),
            ));
        }
        // Empty for a plan in the working directory, so that its files are named as written.
        let plan_dir = path.and_then(Path::parent).unwrap_or(Path::new(""));
        let mut names = BTreeMap::new();
        let mut contestants = Vec::new();
        for c in &raw.contestants {
            let span = Some(c.name.span());
            let name = c.name.get_ref().trim().to_owned();
            if name.is_empty() {
                return Err(err(span, "a contestant's `name` must not be empty".into()));
            }
            if name.chars().count() > limits::NAME_CHARS {
                return Err(err(
                    span,
                    format!(
                        "a contestant's `name` is at most {} characters (it names files), got {}",
                        limits::NAME_CHARS,
                        name.chars().count()
                    ),
                ));
            }
            // Unique as files too: `x/y` and `x_y` would share contestants/x_y.json.
            let file = stackbench_record::file_safe(&name);
            if let Some((other, first)) = names.insert(file.clone(), (name.clone(), c.name.span())) {
                let line = line_col(text, first.start).0;
                let why = if other == name {
                    format!(
                        "two contestants are named {name:?} (the other is on line {line}); names must be unique"
                    )
                } else {
                    format!(
                        "contestants {name:?} and {other:?} (line {line}) would share the file name {file:?} \
                         (characters other than letters, digits, `_`, `.` and `-` become `_`); rename one"
                    )
                };
                return Err(err(span, why));
            }
            check_port(c, &name).map_err(|(sp, m)| err(sp, m))?;
            let scenario = scenario::of(c, &name, plan_dir).map_err(|(sp, m)| err(sp, m))?;
            scenario::check_name(&scenario, &contestants, c.scenario.span()).map_err(|(sp, m)| err(sp, m))?;
            contestants.push(
                resolve(c, scenario, &name, &defaults, &load, ctx).map_err(|(sp, m)| err(sp.or(span), m))?,
            );
        }
        profile::check_profiles(&load, &contestants).map_err(|(sp, m)| err(sp, m))?;
        if contestants.len() > limits::CONTESTANTS {
            return Err(err(None, format!("at most {} contestants in a plan", limits::CONTESTANTS)));
        }
        let (repetitions, precision) = precision::rounds(&defaults).map_err(|(sp, m)| err(sp, m))?;
        let sample_interval =
            bounded_dur(defaults.sample_interval.as_ref(), "sample_interval", limits::SAMPLE_INTERVAL)
                .map_err(|(sp, m)| err(sp, m))?;
        let cooldown = bounded_dur(defaults.cooldown.as_ref(), "cooldown", Duration::ZERO..=limits::WAIT)
            .map_err(|(sp, m)| err(sp, m))?;
        let companion = companion(defaults.companion.as_ref(), &contestants).map_err(|(sp, m)| err(sp, m))?;
        let warmup_cpu_quota = warmup_cpu_quota(defaults.warmup_cpu_quota.as_ref(), &contestants)
            .map_err(|(sp, m)| err(sp, m))?;
        Ok(Plan {
            name: raw.name,
            path: path.map(Path::to_owned),
            text: text.to_owned(),
            repetitions,
            precision,
            seed: defaults.seed,
            sample_interval: sample_interval.unwrap_or(DEFAULT_SAMPLE_INTERVAL),
            cooldown: cooldown.unwrap_or(Duration::ZERO),
            builds: defaults.builds.unwrap_or_default(),
            contestants,
            variant: ctx.variant.clone(),
            unbudgeted: false,
            companion,
            warmup_cpu_quota,
        })
    }

    /// Drops every contestant's `cpu_quota` (`--unbudgeted`): each runs with
    /// all the CPU its `cpus` give it, as a server without a budget would.
    pub fn unbudget(&mut self) {
        self.unbudgeted = true;
        self.companion = None;
        self.warmup_cpu_quota = None;
        for c in &mut self.contestants {
            c.cpu_quota = None;
        }
    }

    /// About how long the plan takes: each contestant's build is not counted,
    /// its cold starts and verification about a second each, its runs as
    /// [`profile::estimated_runs`] says.
    /// With a precision, the whole budget: `max_repetitions` rounds, or
    /// `max_time` from the start when that comes first.
    pub fn estimated_duration(&self) -> Duration {
        let rounds = self.precision.map_or(self.repetitions, |p| p.max_repetitions);
        // A second per cold start started apart (the verification's and the first rounds'
        // starts are timed too), two for the verification.
        let apart = |c: &Contestant| c.cold_starts.saturating_sub(1 + self.repetitions);
        let setup: Duration =
            self.contestants.iter().map(|c| Duration::from_secs(u64::from(apart(c)) + 2)).sum();
        let runs = self
            .contestants
            .iter()
            .map(|c| profile::estimated_runs(&c.scenario, &c.profile, rounds))
            .sum::<Duration>()
            + self.cooldown * (self.contestants.len() as u32 * rounds);
        // `max_time` counts from the run's start: the setup is in it.
        self.precision.and_then(|p| p.max_time).map_or(setup + runs, |t| (setup + runs).min(t))
    }

    /// A refusal at `span` of the plan text (`file:line:col`, the line, a caret).
    pub fn error_at(&self, span: Option<std::ops::Range<usize>>, message: String) -> PlanError {
        let file = self.path.as_ref().map_or_else(|| "<plan>".to_owned(), |p| p.display().to_string());
        locate(&file, &self.text, span, message)
    }

    /// Keeps only the named contestants (`--only`); unknown names are an error listing the known ones.
    pub fn select(&mut self, only: &[String]) -> Result<(), String> {
        if only.is_empty() {
            return Ok(());
        }
        for name in only {
            if !self.contestants.iter().any(|c| &c.name == name) {
                let known: Vec<&str> = self.contestants.iter().map(|c| c.name.as_str()).collect();
                return Err(format!(
                    "--only {name:?}: the plan has no such contestant; it has {}",
                    known.join(", ")
                ));
            }
        }
        self.contestants.retain(|c| only.contains(&c.name));
        // A companion left out is not started: its runs would have no reference beside them.
        self.companion = self.companion.take().filter(|c| only.contains(c));
        Ok(())
    }
}

/// The plan's `[defaults]` and `[load.*]` with the named variant's laid over them.
type Resolved = (Settings, BTreeMap<String, Spanned<profile::Table>>);
fn with_variant(raw: &PlanFile, variant: Option<&str>) -> Result<Resolved, String> {
    let mut defaults = raw.defaults.clone();
    let mut load = raw.load.clone();
    let Some(name) = variant else { return Ok((defaults, load)) };
    let Some(v) = raw.variants.get(name) else {
        let known: Vec<&str> = raw.variants.keys().map(String::as_str).collect();
        return Err(format!(
            "the plan has no variant {name:?}; it has {}",
            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
        ));
    };
    overlay_settings(&mut defaults, &v.defaults);
    for (scenario, table) in &v.load {
        let entry =
            load.entry(scenario.clone()).or_insert_with(|| Spanned::new(table.span(), profile::Table::new()));
        for (k, val) in table.get_ref() {
            entry.get_mut().insert(k.clone(), val.clone());
        }
    }
    Ok((defaults, load))
}

fn overlay_settings(base: &mut Settings, over: &Settings) {
    macro_rules! take {
        ($($f:ident),*) => { $( if over.$f.is_some() { base.$f = over.$f.clone(); } )* };
    }
    take!(
        repetitions,
        seed,
        cold_starts,
        ready_timeout,
        stop_grace,
        cpus,
        load_cpus,
        cpu_quota,
        memory,
        limits,
        sample_interval,
        cooldown,
        verify,
        precision,
        max_repetitions,
        max_time,
        looks,
        builds,
        companion,
        warmup_cpu_quota
    );
}

type Located = (Option<std::ops::Range<usize>>, String);

/// `companion`: a contestant of the plan that stackbench starts, and a plain load drives
/// (no capacity search: its rate must be one figure per second).
fn companion(name: Option<&Spanned<String>>, contestants: &[Contestant]) -> Result<Option<String>, Located> {
    let Some(name) = name else { return Ok(None) };
    let at = Some(name.span());
    let Some(c) = contestants.iter().find(|c| &c.name == name.get_ref()) else {
        let known: Vec<&str> = contestants.iter().map(|c| c.name.as_str()).collect();
        return Err((
            at,
            format!(
                "`companion` names {:?}, which is not a contestant of this plan; it has {}",
                name.get_ref(),
                known.join(", ")
            ),
        ));
    };
    if !matches!(c.launch, Launch::Command { .. }) {
        return Err((
            at,
            format!(
                "`companion` {:?} has a `url`: the companion must be a `command` stackbench starts, beside each run",
                c.name
            ),
        ));
    }
    if c.profile.get("find-max").and_then(toml::Value::as_bool) == Some(true) {
        return Err((
            at,
            format!(
                "`companion` {:?} is measured by a capacity search (`find-max`): the companion needs a plain load, whose rate is known second by second",
                c.name
            ),
        ));
    }
    Ok(Some(c.name.clone()))
}

/// `warmup_cpu_quota`: cores, at least every budgeted contestant's `cpu_quota` (a warm-up
/// under a smaller quota would only be slower), in a plan with a budget to lift.
fn warmup_cpu_quota(q: Option<&Spanned<f64>>, contestants: &[Contestant]) -> Result<Option<f64>, Located> {
    let Some(q) = q else { return Ok(None) };
    let (at, cores) = (Some(q.span()), *q.get_ref());
    if !(cores.is_finite() && cores >= 0.01) {
        return Err((
            at,
            format!("`warmup_cpu_quota` is in cores (1.0 = one core), at least 0.01, got {cores}"),
        ));
    }
    let budgeted: Vec<&Contestant> = contestants.iter().filter(|c| c.cpu_quota.is_some()).collect();
    if budgeted.is_empty() {
        return Err((
            at,
            "`warmup_cpu_quota` lifts a `cpu_quota` during the warm-up, and no contestant has one".to_owned(),
        ));
    }
    if let Some(c) = budgeted.iter().find(|c| c.cpu_quota.is_some_and(|b| b > cores)) {
        return Err((
            at,
            format!(
                "`warmup_cpu_quota` ({cores}) is below contestant {:?}'s `cpu_quota` ({}): the warm-up's \
                 quota is the budget or more",
                c.name,
                c.cpu_quota.unwrap_or_default()
            ),
        ));
    }
    Ok(Some(cores))
}

/// The upper bounds of a plan's counts and durations (the load profile's are the load
/// engine's, which refuses a spec past them).
pub mod limits {
    use std::time::Duration;

    pub const CONTESTANTS: usize = 10_000;
    /// Characters in a contestant's name (it names its files and logs, each at most 255 bytes).
    pub const NAME_CHARS: usize = 100;
    pub const REPETITIONS: u32 = 1_000;
    pub const COLD_STARTS: u32 = 1_000;
    /// `ready_timeout` and `cooldown`.
    pub const WAIT: Duration = Duration::from_hours(1);
    /// `max_time`, the time budget of `precision`.
    pub const MAX_TIME: Duration = Duration::from_hours(24 * 7);
    pub const STOP_GRACE: Duration = Duration::from_mins(10);
    pub const SAMPLE_INTERVAL: std::ops::RangeInclusive<Duration> =
        Duration::from_millis(10)..=Duration::from_mins(1);
}

/// A count within `range`, or an error at its value.
fn bounded(
    v: Option<&Spanned<u32>>,
    key: &str,
    range: std::ops::RangeInclusive<u32>,
) -> Result<Option<u32>, Located> {
    let Some(v) = v else { return Ok(None) };
    let n = *v.get_ref();
    if range.contains(&n) {
        return Ok(Some(n));
    }
    Err((Some(v.span()), format!("`{key}` must be from {} to {}, got {n}", range.start(), range.end())))
}

/// A duration within `range`, or an error at its value.
fn bounded_dur(
    v: Option<&Spanned<Dur>>,
    key: &str,
    range: std::ops::RangeInclusive<Duration>,
) -> Result<Option<Duration>, Located> {
    let Some(v) = v else { return Ok(None) };
    let d = v.get_ref().0;
    if range.contains(&d) {
        return Ok(Some(d));
    }
    let show = |d: &Duration| humantime::format_duration(*d).to_string();
    Err((
        Some(v.span()),
        format!("`{key}` must be from {} to {}, got {}", show(range.start()), show(range.end()), show(&d)),
    ))
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn locate(file: &str, text: &str, span: Option<std::ops::Range<usize>>, message: String) -> PlanError {
    let Some(span) = span else {
        return PlanError { location: file.to_owned(), message, excerpt: String::new() };
    };
    let (line, col) = line_col(text, span.start);
    let source = text.lines().nth(line - 1).unwrap_or("");
    let excerpt = format!("\n{line:>5} | {source}\n      | {}^", " ".repeat(col - 1));
    PlanError { location: format!("{file}:{line}:{col}"), message: message.trim_end().to_owned(), excerpt }
}

mod contestant;
pub mod precision;
pub mod profile;
pub mod scenario;

pub use stackbench_record::ByteSize;
#[cfg(test)]
mod tests;
