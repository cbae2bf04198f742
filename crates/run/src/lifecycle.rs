//! The lifecycle: what happens to every contestant of a plan, one at a time.
//!
//! 1. Setup, in plan order: `build` (timed) → artifact size → the
//!    `cold_starts` trials (reset, exec, first verified answer, stop) that the
//!    verification's start and the first rounds' starts will not give, each
//!    start being timed alike → contract verification on a clean start. A contestant that cannot build, start,
//!    become ready or answer correctly is recorded with what went wrong (the
//!    rule it broke) and left out; the plan goes on.
//! 2. Measured runs, interleaved ([`crate::interleave`]): for each slot, reset,
//!    start, wait until ready, then the load (warm-up, measured phase) while
//!    the sampler reads the process tree every interval and watches for a
//!    crash, then stop (SIGTERM to the group, SIGKILL after the grace period).
//!    Each run is written the moment it ends.
//!
//! Every side effect goes through a trait in [`Deps`], so the whole lifecycle
//! is tested with fakes (`tests/`-free, no process, no socket).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::verify::VerifyOptions;
use stackbench_record::{ContestantRecord, Environment, Incident, Quantiles, Status, StoreError};

use crate::cgroup::{LimitGroup, LimitRequest, Limiter};
use crate::client::Prober;
use crate::load::{Cancel, LoadDriver, LoadJob};
use crate::plan::{BuildsMode, Contestant, Launch, LimitsMode, Plan, ScenarioRef, VerifyMode};
use crate::process::{Launcher, Process};
use crate::sampler::ProcSource;
use crate::store::{ResultStore, now_ms};
use crate::verify::{Ready, verify};
use launch::{base_of, expand, free_port, on_path, path_of};

/// The side effects of a plan run.
pub struct Deps<'a> {
    pub launcher: &'a dyn Launcher,
    pub prober: &'a dyn Prober,
    pub load: &'a dyn LoadDriver,
    pub limiter: &'a dyn Limiter,
    /// A fresh `/proc` reader for each run.
    pub procs: &'a (dyn Fn() -> Box<dyn ProcSource> + Sync),
}

/// How to run a plan.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The result directory: created, or continued with `resume`.
    pub out: PathBuf,
    pub resume: bool,
    /// What `{stackbench}` and `{bin_dir}` stand for.
    pub stackbench: PathBuf,
    pub bin_dir: PathBuf,
    /// Ctrl-C / SIGTERM: stop the current run, save it, stop.
    pub interrupt: Cancel,
    pub environment: Environment,
    /// The CPUs this process may use (the load gets those the contestant does not use).
    pub cpus: Vec<usize>,
    /// Seed of the order when the plan has none.
    pub seed: u64,
    /// The caller prints the report as soon as the plan ends, and the report says how
    /// the rounds ended: the run then does not say it first (the same lines twice).
    pub report_follows: bool,
}

/// What a plan run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub dir: PathBuf,
    /// Measured runs written by this invocation.
    pub runs: u32,
    /// Contestants left out, with the reason.
    pub failed: Vec<(String, String)>,
    /// `optional` contestants not measured (a required program missing, a failed
    /// build), with the reason: said, but not a failure of the plan.
    pub skipped: Vec<(String, String)>,
    pub interrupted: bool,
    pub seed: u64,
    /// Runs in which stackbench itself failed (each an incident `tool_failure`).
    pub tool_failures: u32,
}

/// Why a plan run stopped before its end (not a contestant's failure: those are recorded).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Refused(String),
    /// Stackbench itself failed in a way that ends the plan (a load thread that would not
    /// stop); the runs written before it stay.
    #[error("{0}")]
    ToolFailure(String),
}

const RESET_TIMEOUT: Duration = Duration::from_mins(2);
const BUILD_TIMEOUT: Duration = Duration::from_hours(1);

/// Runs a validated plan.
pub fn run_plan(
    plan: &Plan,
    opts: &RunOptions,
    deps: &Deps<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, RunError> {
    for c in &plan.contestants {
        let probe = LoadJob {
            url: format!("{}://127.0.0.1:9{}", tls::scheme(c), path_of(c)),
            scenario: c.scenario.clone(),
            profile: c.profile.clone(),
            cpus: None,
            bracket: None,
            cacert: None,
        };
        deps.load.check(&probe).map_err(|e| {
            let span = crate::plan::profile::Profile { spans: c.profile_spans.clone(), ..Default::default() }
                .span_named(&e);
            RunError::Refused(
                plan.error_at(span, format!("contestant {:?}: its {} load profile: {e}", c.name, c.scenario))
                    .to_string(),
            )
        })?;
    }
    let mut limits_ok = Vec::new();
    for c in &plan.contestants {
        let req = limit_request(c);
        let ok = match req {
            Some(req) if matches!(c.launch, Launch::Command { .. }) => {
                match deps.limiter.create("check", req) {
                    Ok(g) => Ok(Some(g.applied().version)),
                    Err(e) if c.limits == LimitsMode::BestEffort => Err(e.to_string()),
                    Err(e) => {
                        return Err(RunError::Refused(format!(
                            "contestant {:?}: {e}. Run as root where cgroup v2 has the cpu and memory controllers (or the v1 hierarchies are writable), or set limits = \"best-effort\" in the plan to run without limits",
                            c.name
                        )));
                    }
                }
            }
            _ => Ok(None),
        };
        limits_ok.push(ok);
    }
    // One writer per result directory, held until this function returns.
    let _lock = crate::dirlock::DirLock::acquire(&opts.out).map_err(|e| RunError::Refused(e.to_string()))?;
    let store = if opts.resume {
        // Both checks come before `resume`, which sets interrupted runs aside.
        let manifest = stackbench_record::Manifest::load(&opts.out)?;
        if manifest.status == Status::Running {
            progress(&format!(
                "{} was left running by a stackbench that is no longer running (it was killed or crashed); \
                 resuming it",
                opts.out.display()
            ));
        }
        if manifest.plan_text != plan.text {
            return Err(RunError::Refused(format!(
                "{} was started with a different plan; --resume continues the same plan (start a new result directory for a changed one)",
                opts.out.display()
            )));
        }
        let changed = manifest.environment.differences(&opts.environment);
        if !changed.is_empty() {
            return Err(RunError::Refused(format!(
                "{} was measured on another machine or stackbench ({}); runs from both would be compared as if alike. Start a new result directory",
                opts.out.display(),
                changed.join(", ")
            )));
        }
        ResultStore::resume(&opts.out)?
    } else {
        let s = ResultStore::create(&opts.out, plan.path.as_deref(), &plan.text, opts.environment.clone())?;
        let invocation = crate::store::Invocation {
            variant: plan.variant.clone(),
            contestants: plan.contestants.iter().map(|c| c.name.clone()).collect(),
            rounds: Some(crate::store::RoundsAsked::of(plan.precision.as_ref())),
            unbudgeted: plan.unbudgeted,
        };
        stackbench_record::write_json_atomic(&opts.out.join(crate::store::INVOCATION), &invocation)?;
        s
    };
    let plan_dir = plan
        .path
        .as_deref()
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let plan_dir = plan_dir.canonicalize().unwrap_or(plan_dir);
    let scratch = crate::cgroup::track::scratch_dir(&std::env::temp_dir(), now_ms());
    let mut o = Orchestrator {
        plan,
        opts,
        deps,
        store,
        progress,
        plan_dir,
        scratch: scratch.clone(),
        live: Vec::new(),
        runs: 0,
        tool_failures: 0,
        earlier: Earlier::default(),
        sources: sources::Known::default(),
        clock: Clock { started: Instant::now(), building: Duration::ZERO },
    };
    let result = o.run(limits_ok);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// The CPU budget the contestants run under, said before anything starts:
/// `CPU budget: 0.5 core per contestant (cgroup v1 CPU quota)`, or why there
/// is none. `None` for a plan that asks no quota (unless `--unbudgeted` dropped it).
fn budget_line(plan: &Plan, checks: &[Result<Option<u8>, String>]) -> Option<String> {
    let started: Vec<(&Contestant, &Result<Option<u8>, String>)> = plan
        .contestants
        .iter()
        .zip(checks)
        .filter(|(c, _)| matches!(c.launch, Launch::Command { .. }))
        .collect();
    let applied =
        |(c, check): &(&Contestant, &Result<Option<u8>, String>)| c.cpu_quota.filter(|_| check.is_ok());
    if let Some((_, Err(why))) = started.iter().find(|(c, check)| c.cpu_quota.is_some() && check.is_err()) {
        return Some(format!(
            "unbudgeted: the plan's cpu_quota cannot be applied here ({why}); runs go on without it"
        ));
    }
    let quotas: Vec<Option<f64>> = started.iter().map(applied).collect();
    let versions: std::collections::BTreeSet<u8> =
        started.iter().filter_map(|(_, check)| check.as_ref().ok().copied().flatten()).collect();
    let via: Vec<String> = versions.iter().map(|v| format!("v{v}")).collect();
    match quotas.first() {
        None | Some(None) if quotas.iter().all(Option::is_none) => {
            plan.unbudgeted.then(|| "unbudgeted (--unbudgeted): no CPU quota on any contestant".to_owned())
        }
        Some(Some(q)) if quotas.iter().all(|x| *x == Some(*q)) => {
            let load = match crate::cgroup::reserve::available() {
                Ok(()) => "the load's share of its cores reserved too".to_owned(),
                Err(why) => format!("the load's share of its cores not reserved: {why}"),
            };
            Some(format!(
                "CPU budget: {q} core(s) per contestant, reserved (a cgroup {} CPU quota and weight){}; {load}",
                via.join(" and "),
                warm_core::said(plan)
            ))
        }
        _ => {
            let each: Vec<String> = started
                .iter()
                .map(|s| format!("{} {}", s.0.name, applied(s).map_or("none".to_owned(), |q| format!("{q}"))))
                .collect();
            Some(format!("CPU budgets differ (cores per contestant): {}", each.join(", ")))
        }
    }
}

fn limit_request(c: &Contestant) -> Option<LimitRequest> {
    (c.cpu_quota.is_some() || c.memory.is_some())
        .then_some(LimitRequest { cpu_quota: c.cpu_quota, memory: c.memory })
}

struct Live {
    record: ContestantRecord,
    eligible: bool,
    /// `Err(why)`: limits asked for but unavailable (best-effort).
    limits: Result<(), String>,
    /// Why it was left out.
    reason: Option<String>,
    /// Left out as an `optional` contestant may be: skipped, not failed.
    skipped: bool,
}

struct Orchestrator<'a, 'p> {
    plan: &'a Plan,
    opts: &'a RunOptions,
    deps: &'a Deps<'a>,
    store: ResultStore,
    progress: &'p mut dyn FnMut(&str),
    plan_dir: PathBuf,
    scratch: PathBuf,
    live: Vec<Live>,
    runs: u32,
    /// Runs in which stackbench itself failed (a panic, a stalled worker).
    tool_failures: u32,
    /// What each contestant's earlier runs tell its next one.
    earlier: Earlier,
    /// Toolchain versions and code counts already taken in this run.
    sources: sources::Known,
    /// What `max_time` counts.
    clock: Clock,
}

/// The time a run has spent of its `max_time`: since it started, first-use builds left out.
struct Clock {
    started: Instant,
    building: Duration,
}

/// What a contestant's earlier runs tell its next one, by plan index.
#[derive(Default)]
struct Earlier {
    /// The capacity-search bracket its last search ended with.
    brackets: BTreeMap<usize, [f64; 2]>,
    /// What its starts said about a `warmup = "auto"`.
    warmups: BTreeMap<usize, warmups::Learned>,
}

/// A started contestant.
struct Started {
    process: Box<dyn Process>,
    base: String,
    group: Option<Box<dyn LimitGroup>>,
    ready: Duration,
    /// The readiness probe's resolution for this start ([`Ready::Yes`]).
    resolution: Duration,
}

impl Orchestrator<'_, '_> {
    fn say(&mut self, line: &str) {
        (self.progress)(line);
    }

    fn interrupted(&self) -> bool {
        self.opts.interrupt.is_cancelled()
    }

    fn run(&mut self, limits_ok: Vec<Result<Option<u8>, String>>) -> Result<Outcome, RunError> {
        let seed = self.plan.seed.unwrap_or(self.opts.seed);
        let minutes = self.plan.estimated_duration().as_secs().div_ceil(60);
        let rounds = match self.plan.precision {
            Some(p) => format!("up to {} rounds", p.max_repetitions),
            None => format!("{} repetitions", self.plan.repetitions),
        };
        self.say(&format!(
            "results: {} ({} contestants, {rounds}, order seed {seed}; about {minutes} min without builds)",
            self.store.dir.display(),
            self.plan.contestants.len(),
        ));
        if let Some(line) = budget_line(self.plan, &limits_ok) {
            self.say(&line);
        }
        if let Some(name) = &self.plan.companion {
            self.say(&format!(
                "companion: a fresh '{name}' runs beside every run of a scenario with two or more contestants; \
                 rates are read relative to it (docs/design.md, \"Measured beside a companion\")"
            ));
        }
        let mut pending = Vec::new();
        for (i, limits) in limits_ok.into_iter().enumerate() {
            let c = &self.plan.contestants[i];
            let existing = self.store.contestants.iter().find(|r| r.name == c.name).cloned();
            let record = existing.clone().unwrap_or_else(|| ContestantRecord {
                name: c.name.clone(),
                scenario: c.scenario.name().to_owned(),
                language: c.language.clone(),
                framework: c.framework.clone(),
                external: matches!(c.launch, Launch::External { .. }),
                artifact_bytes: None,
                code: None,
                toolchains: std::collections::BTreeMap::new(),
                lockfiles: Vec::new(),
                build_s: None,
                build_concurrent: false,
                cold_start_ms: Vec::new(),
                cold_start: None,
                cold_start_resolution_ms: None,
                start_cpu_quota: None,
                verification: None,
                incidents: Vec::new(),
            });
            let limits = limits.map(|_| ());
            self.live.push(Live { record, eligible: false, limits, reason: None, skipped: false });
            if let Some(v) = existing.and_then(|r| r.verification) {
                self.live[i].eligible = v.passed;
                if !v.passed {
                    self.live[i].reason = Some("failed verification (earlier)".into());
                }
            } else {
                pending.push(i);
            }
        }
        let mut built = match self.plan.builds {
            BuildsMode::Concurrent => {
                let t0 = Instant::now();
                let built = self.build_concurrently(&pending);
                self.clock.building += t0.elapsed();
                // Every build has ended: what they wrote is there to count.
                self.prefetch_sources(&pending);
                built
            }
            BuildsMode::InTurn => BTreeMap::new(),
        };
        for i in pending {
            if self.interrupted() {
                break;
            }
            self.setup(i, built.remove(&i))?;
        }
        let eligible: Vec<usize> = (0..self.live.len()).filter(|&i| self.live[i].eligible).collect();
        let done: std::collections::BTreeSet<(usize, u32)> = self
            .store
            .done
            .iter()
            .filter_map(|(name, rep)| {
                eligible.iter().position(|&i| &self.plan.contestants[i].name == name).map(|k| (k, *rep))
            })
            .collect();
        self.rounds(&eligible, seed, &done)?;
        let interrupted = self.interrupted();
        self.store.finish(if interrupted { Status::Interrupted } else { Status::Complete })?;
        let (skipped, failed): (Vec<&Live>, Vec<&Live>) =
            self.live.iter().filter(|l| l.reason.is_some()).partition(|l| l.skipped);
        let named = |l: Vec<&Live>| {
            l.into_iter().filter_map(|l| l.reason.clone().map(|r| (l.record.name.clone(), r))).collect()
        };
        let (failed, skipped) = (named(failed), named(skipped));
        Ok(Outcome {
            dir: self.store.dir.clone(),
            runs: self.runs,
            failed,
            skipped,
            interrupted,
            seed,
            tool_failures: self.tool_failures,
        })
    }

    fn incident(
        &mut self,
        i: usize,
        phase: &str,
        kind: &str,
        message: String,
        repetition: Option<u32>,
    ) -> Result<(), RunError> {
        let name = self.plan.contestants[i].name.clone();
        let rep = repetition.map(|r| format!(" (repetition {r})")).unwrap_or_default();
        self.say(&format!("  ! {name}: {phase}{rep}: {message}"));
        let live = &mut self.live[i];
        live.record.incidents.push(Incident { phase: phase.into(), kind: kind.into(), message, repetition });
        let record = live.record.clone();
        self.store.save_contestant(&record)?;
        Ok(())
    }

    /// An `optional` contestant that cannot be built is skipped; any other is left out.
    fn skip_or_leave_out(&mut self, i: usize, reason: String) -> Result<(), RunError> {
        self.live[i].skipped = self.plan.contestants[i].optional;
        self.leave_out(i, reason)
    }

    fn leave_out(&mut self, i: usize, reason: String) -> Result<(), RunError> {
        self.live[i].eligible = false;
        self.live[i].reason = Some(reason);
        let record = self.live[i].record.clone();
        self.store.save_contestant(&record)?;
        Ok(())
    }

    /// Build (unless `built` ran it already), artifact, cold starts, verification.
    fn setup(&mut self, i: usize, built: Option<builds::Built>) -> Result<(), RunError> {
        let c = &self.plan.contestants[i];
        let scratch = self.scratch.join(stackbench_record::file_safe(&c.name));
        let _ = std::fs::create_dir_all(&scratch);
        self.say(&format!("{} ({}):", c.name, c.scenario.described()));
        if tls::serves_tls(c)
            && let Err(why) = tls::make(&scratch)
        {
            self.incident(i, "start", "failed_to_start", why.clone(), None)?;
            return self.leave_out(i, why);
        }
        let c = &self.plan.contestants[i];
        self.reach(c);
        if let Err(why) = self.live[i].limits.clone() {
            self.incident(
                i,
                "start",
                "limits_not_applied",
                format!("runs without its cpu_quota/memory limits (limits = \"best-effort\"): {why}"),
                None,
            )?;
        }
        if let Some(missing) = c.requires.iter().find(|p| !on_path(p)) {
            let why = format!("no `{missing}` on PATH");
            self.incident(i, "build", "skipped", why.clone(), None)?;
            return self.skip_or_leave_out(i, why);
        }
        if !self.build(i, built)? {
            return Ok(());
        }
        let c = &self.plan.contestants[i];
        if let Some(artifact) = &c.artifact {
            let vars = self.vars(c, None);
            let path = PathBuf::from(expand(artifact, &vars));
            let path =
                if path.is_relative() { self.cwd(c, &vars).unwrap_or_default().join(path) } else { path };
            match std::fs::metadata(&path) {
                Ok(m) => self.live[i].record.artifact_bytes = Some(artifact_size(&path, &m)),
                Err(e) => self.incident(
                    i,
                    "build",
                    "artifact_missing",
                    format!("artifact {}: {e}", path.display()),
                    None,
                )?,
            }
        }
        self.count_code(i)?;
        let opts = VerifyOptions { base_path: c.path.clone(), clean_store: false, connect_json: false };
        if let Launch::External { url } = &c.launch {
            let base = base_of(url);
            self.say(&format!("  external server at {url}: stackbench does not start it, so no cold start, no sampling and no reset"));
            return self.verify_at(i, &base, &VerifyOptions { clean_store: false, ..opts }, None);
        }
        if let ScenarioRef::Builtin(s) = &c.scenario {
            // Its file is parsed now, not while a cold start is timed.
            let _ = s.file(false);
        }
        // Every start is timed the same way (reset, exec, first verified answer, alone on its
        // cores): the verification's and each measured run's count as cold starts, so only
        // the trials the verification and the plan's first rounds will not give are made apart.
        let apart = c.cold_starts.saturating_sub(1 + self.plan.repetitions);
        for _ in 0..apart {
            if self.interrupted() {
                return Ok(());
            }
            let Some(started) = self.start(i, "cold_start", None)? else {
                return self.leave_out(i, "did not start".into());
            };
            self.timed(i, &started);
            self.stop(i, started, &[], None)?;
        }
        if self.interrupted() {
            return Ok(());
        }
        let Some(mut started) = self.start(i, "verify", None)? else {
            return self.leave_out(i, "did not start".into());
        };
        self.timed(i, &started);
        if let Some(q) = self.live[i].record.cold_start {
            self.say(&format!(
                "  cold start: p50 {:.1} ms over {} start(s) so far (probe resolution {:.2} ms); each measured run's start is timed too",
                q.p50,
                q.n,
                self.live[i].record.cold_start_resolution_ms.unwrap_or(0.0)
            ));
        }
        let base = started.base.clone();
        let opts = VerifyOptions { clean_store: true, ..opts };
        let result = self.verify_at(i, &base, &opts, Some(started.process.as_mut()));
        self.stop(i, started, &[], None)?;
        result
    }

    /// Adds a start's time to first verified answer to `i`'s cold starts (none when its
    /// plan asks for no cold starts). The caller saves the record.
    fn timed(&mut self, i: usize, started: &Started) {
        if self.plan.contestants[i].cold_starts == 0 {
            return;
        }
        let r = &mut self.live[i].record;
        r.cold_start_ms.push(started.ready.as_secs_f64() * 1000.0);
        r.cold_start = Some(Quantiles::of(&r.cold_start_ms));
        let res = started.resolution.as_secs_f64() * 1000.0;
        r.cold_start_resolution_ms = Some(r.cold_start_resolution_ms.map_or(res, |x| x.max(res)));
        let boosted =
            started.group.as_ref().and_then(|_| warm_core::start_quota(self.plan, &self.plan.contestants[i]));
        r.start_cpu_quota = r.start_cpu_quota.or(boosted);
    }

    /// Verifies the contestant at `base` (its `process`, when stackbench started
    /// it, is watched: one that dies is reported so). A broken core rule, or
    /// with `verify = "strict"` any rule, leaves it out; broken hardening rules
    /// alone are a warning that follows it into every report.
    fn verify_at(
        &mut self,
        i: usize,
        base: &str,
        opts: &VerifyOptions,
        mut process: Option<&mut dyn Process>,
    ) -> Result<(), RunError> {
        let plan = self.plan;
        let c = &plan.contestants[i];
        let verified = match &c.scenario {
            ScenarioRef::Builtin(s) => {
                let mut exited = || process.as_mut().and_then(|p| p.try_exit()).map(|e| e.to_string());
                verify(self.deps.prober, base, *s, opts, &mut exited)
            }
            ScenarioRef::File(f) => Ok(self.verify_file(c, f, base, opts.clean_store, process)),
        };
        match verified {
            Ok(v) => {
                let strict = c.verify == VerifyMode::Strict;
                let leave_out = !v.passed || (strict && !v.failures.is_empty());
                let rules: Vec<String> = v
                    .failures
                    .iter()
                    .map(|f| format!("\n    - {} ({}): {}", f.rule, f.level, f.detail))
                    .collect();
                let summary = if leave_out {
                    format!(
                        "  FAILED verification ({} of {} cases{}), left out:{}",
                        v.failures.len(),
                        v.cases,
                        if strict { ", verify = \"strict\"" } else { "" },
                        rules.concat()
                    )
                } else if v.failures.is_empty() {
                    format!("  verified: {} contract cases passed", v.cases)
                } else {
                    format!(
                        "  verified with warnings: the core rules hold; does not enforce {} (measured anyway; \
                         verify = \"strict\" would leave it out):{}",
                        v.not_enforced().join("; "),
                        rules.concat()
                    )
                };
                let first = leave_out
                    .then(|| v.failures.iter().find(|f| strict || f.level == "core"))
                    .flatten()
                    .map(|f| format!("broke the rule \"{}\": {}", f.rule, f.detail));
                self.live[i].record.verification = Some(v);
                self.say(&summary);
                if let Some(first) = first {
                    self.live[i].record.incidents.push(Incident {
                        phase: "verify".into(),
                        kind: "wrong_answer".into(),
                        message: first.clone(),
                        repetition: None,
                    });
                    return self.leave_out(i, first);
                }
                self.live[i].eligible = true;
                let record = self.live[i].record.clone();
                self.store.save_contestant(&record)?;
                Ok(())
            }
            Err(e) => {
                self.incident(i, "verify", "failed", e.to_string(), None)?;
                self.leave_out(i, e.to_string())
            }
        }
    }

    /// Reset, start, wait for the first verified answer. `None`: an incident was recorded.
    fn start(&mut self, i: usize, phase: &str, rep: Option<u32>) -> Result<Option<Started>, RunError> {
        let c = &self.plan.contestants[i];
        let Launch::Command { argv, port, .. } = &c.launch else {
            unreachable!("external contestants are not started")
        };
        let port = match port {
            Some(p) => {
                if std::net::TcpListener::bind(("127.0.0.1", *p)).is_err() {
                    self.incident(i, phase, "port_taken", format!("port {p} is already in use by another process: stop it, or remove `port` from the plan and use {{port}} so stackbench picks a free one"), rep)?;
                    return Ok(None);
                }
                *p
            }
            None => free_port().unwrap_or(0),
        };
        if !self.reset_before_start(i, rep)? {
            return Ok(None);
        }
        if let Some(reset) = &c.reset {
            let spec = self.spec(c, reset, Some(port));
            match self.deps.launcher.run(&spec, RESET_TIMEOUT, &self.opts.interrupt) {
                Ok(out) if out.success() => {}
                Ok(out) if out.interrupted => return Ok(None),
                Ok(out) => {
                    let how = out.exit.map_or_else(
                        || format!("did not finish within {RESET_TIMEOUT:?}"),
                        |e| format!("failed with {e}"),
                    );
                    self.incident(
                        i,
                        "reset",
                        "failed",
                        format!("`{}` {how}: {}", spec.display(), out.tail),
                        rep,
                    )?;
                    return Ok(None);
                }
                Err(e) => {
                    self.incident(i, "reset", "failed", e.to_string(), rep)?;
                    return Ok(None);
                }
            }
        }
        let mut spec = self.spec(c, argv, Some(port));
        let mut group = None;
        if let (Some(req), Ok(())) = (limit_request(c), &self.live[i].limits) {
            match warm_core::boost_start(self.plan, c, self.deps.limiter.create(&c.name, req)) {
                Ok(g) => {
                    spec.cgroup_procs = g.procs_files();
                    group = Some(g);
                }
                Err(why) => {
                    self.incident(i, phase, "limits_failed", why, rep)?;
                    return Ok(None);
                }
            }
        }
        let t0 = Instant::now();
        let mut process = match self.deps.launcher.spawn(&spec) {
            Ok(p) => p,
            Err(e) => {
                self.incident(i, phase, "failed_to_start", e.to_string(), rep)?;
                return Ok(None);
            }
        };
        let base = self.base(c, port);
        let interrupt = self.opts.interrupt.clone();
        let mut alive = || process.try_exit().is_none() && !interrupt.is_cancelled();
        let ready = self.wait(c, &base, t0, &mut alive)?;
        let failure = match ready {
            Ready::Yes { after, resolution } => {
                let started = Started { process, base, group, ready: after, resolution };
                return self.after_ready(i, phase, rep, started);
            }
            Ready::Exited if self.interrupted() => None,
            Ready::Exited => {
                let exit =
                    process.try_exit().map_or_else(|| "ended".to_owned(), |e| format!("ended with {e}"));
                Some((
                    "crashed",
                    format!(
                        "{exit} before answering on port {port}; its last output:\n{}",
                        process.output_tail()
                    ),
                ))
            }
            Ready::Timeout(last) => Some((
                "never_ready",
                format!(
                    "no verified answer on port {port} within {:?} (last: {last}); does it listen on the port it is given ({{port}} or PORT)? Its last output:\n{}",
                    c.ready_timeout,
                    process.output_tail()
                ),
            )),
            Ready::Wrong(why) => Some(("wrong_answer", format!("answered, but wrongly: {why}"))),
        };
        process.stop(c.stop_grace, &[]);
        if let Some((kind, message)) = failure {
            self.incident(i, phase, kind, message, rep)?;
        }
        Ok(None)
    }

    fn stop(
        &mut self,
        i: usize,
        mut started: Started,
        seen: &[crate::sampler::ProcId],
        rep: Option<u32>,
    ) -> Result<(), RunError> {
        let grace = self.plan.contestants[i].stop_grace;
        let report = started.process.stop(grace, seen);
        drop(started.group.take());
        if report.killed {
            self.incident(i, "stop", "killed", format!("still running {grace:?} after SIGTERM; killed with SIGKILL (a server should stop on SIGTERM)"), rep)?;
        }
        Ok(())
    }
}

/// A file's size, or a directory's total.
fn artifact_size(path: &Path, meta: &std::fs::Metadata) -> u64 {
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map_or(0, |d| d.flatten().map(|e| e.metadata().map_or(0, |m| artifact_size(&e.path(), &m))).sum())
}

mod builds;
mod companion;
mod file;
mod launch;
mod measure;
mod rounds;
mod sources;
#[cfg(test)]
mod tests;
mod tls;
mod warm_core;
mod warmups;
