//! From a result store to what a report says: contestants grouped by
//! scenario, each with its throughput estimate (mean, median, 95% bootstrap
//! intervals), merged latency percentiles and their spread across
//! repetitions, errors, resources, cold start and artifact size; then ranks
//! (ties when the ratio's interval includes 1) and the comparison sentences.
//!
//! Everything here is computed once; the exporters only format it. The
//! serialized form of [`Analysis`] is the JSON report (`docs/report-json.md`).

mod budget;
mod companion;
mod contestant;
mod rank;
pub mod stopping;
pub mod tls;
mod warmup;

use std::collections::BTreeMap;

use serde::Serialize;
use stackbench_record::{
    ContestantRecord, Environment, Incident, Latency, Quantiles, ResultSet, RunRecord, Status, Verification,
};

use crate::stats::{CONFIDENCE, Interval, MIN_RUNS, Ratio};

pub use budget::Budget;
pub use tls::{TlsPair, TlsReport};

/// Version of the JSON report's shape; bumped on any change that is not a new field.
pub const REPORT_SCHEMA: u32 = 1;

/// How to analyse a result set.
#[derive(Debug, Clone, Default)]
pub struct AnalysisOptions {
    /// Compare every contestant with this one (in the scenarios where it
    /// runs) instead of the best.
    pub reference: Option<String>,
    /// Seed of the bootstrap; the same records and seed give the same report.
    pub seed: u64,
}

/// Everything a report says about a result set.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// [`REPORT_SCHEMA`].
    pub schema: u32,
    pub source: Source,
    /// The CPU each contestant stackbench started was allowed (its cgroup
    /// quota), said in every header; `None` when no contestant was sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Confidence level of every interval (0.95).
    pub confidence: f64,
    /// Fewest runs for which an interval is given.
    pub min_runs_for_interval: usize,
    /// `--reference`, when given.
    pub reference: Option<String>,
    pub scenarios: Vec<ScenarioReport>,
    /// How many rounds were measured and why, for plans with `precision`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopping: Option<StoppingReport>,
    /// About the whole result set (incomplete, frequency governor, ...).
    pub notes: Vec<String>,
}

/// The outcome of precision-driven rounds: the target, the budget, the rule
/// that keeps the 95% promise over the looks, and what stays undecided.
#[derive(Debug, Clone, Serialize)]
pub struct StoppingReport {
    pub precision: f64,
    pub max_repetitions: u32,
    pub max_time_s: Option<f64>,
    /// `bonferroni`: each of `planned_looks` looks at level `look_confidence`.
    pub method: String,
    pub planned_looks: u32,
    /// The level every ratio interval of this report is computed at.
    pub look_confidence: f64,
    pub rounds: u32,
    /// Why the rounds ended: `met`, `max_repetitions`, `max_time`, `interrupted`, `running`.
    pub reason: String,
    /// Every compared pair's interval is within the precision.
    pub met: bool,
    /// One line: `met ±3% after 7 rounds`, or what stopped short of it.
    pub summary: String,
    /// A sentence for each pair that did not meet the precision.
    pub undecided: Vec<String>,
    pub seed: u64,
    /// Each round's order of contestants.
    pub orders: Vec<Vec<String>>,
}

/// Where the numbers come from.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub dir: String,
    pub tool_version: String,
    pub created_at_ms: u64,
    pub finished_at_ms: Option<u64>,
    /// `running`, `complete` or `interrupted`.
    pub status: String,
    pub plan_path: Option<String>,
    pub git_commit: Option<String>,
    pub environment: Environment,
    /// The plan's TOML (shown folded in the HTML report, not in the JSON).
    #[serde(skip)]
    pub plan_text: String,
}

/// One scenario: its contestants, ranked.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioReport {
    pub name: String,
    /// The contestant every ratio is relative to.
    pub baseline: Option<String>,
    /// `best` (the highest mean throughput) or `reference` (`--reference`).
    pub baseline_kind: BaselineKind,
    /// Contestants with measured runs, by rank then mean throughput.
    pub contestants: Vec<ContestantReport>,
    /// Contestants without a usable run, and why.
    pub failed: Vec<FailedContestant>,
    /// The comparison sentences, with their numbers.
    pub statements: Vec<Statement>,
    /// What the ranks and sentences compare.
    pub ranked_by: RankedBy,
    /// Each contestant `NAME-tls` over TLS beside its namesake in the clear, with the
    /// ratio of their throughputs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tls_pairs: Vec<TlsPair>,
    pub notes: Vec<String>,
    /// Each pair judged at the precision asked (plans with `precision`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub precision: Vec<crate::stats::sequential::Pair>,
}

/// What a scenario's ranks and sentences compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankedBy {
    /// Correct answers per second (or the rate sustained under the objectives).
    Throughput,
    /// CPU per correct answer: the rates are lower bounds (the load generator
    /// saturated first), so the rate cannot rank the contestants; what each
    /// answer cost holds whatever the load.
    CostPerRequest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    Best,
    Reference,
}

/// One contestant's numbers in one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ContestantReport {
    pub name: String,
    /// What it is written in, as the plan says (`"Go 1.19"`).
    pub language: Option<String>,
    /// Its framework, server or driver, as the plan says (`"Gin 1.8"`).
    pub framework: Option<String>,
    /// The best place the data allow: 1 + the number of contestants
    /// significantly better (or, without an interval, with a better mean).
    pub rank: usize,
    /// The worst place the data allow: n − the number significantly worse.
    pub rank_worst: usize,
    /// The place is not decided (`rank < rank_worst`): statistically tied
    /// with a neighbour.
    pub tied: bool,
    /// Runs used.
    pub runs: usize,
    pub throughput: Throughput,
    /// This contestant's mean throughput over the baseline's.
    pub ratio_to_baseline: Option<Ratio>,
    pub latency: LatencyReport,
    pub errors: Errors,
    /// CPU and RSS of the contestant's process tree; `None` when not sampled.
    pub resources: Option<Resources>,
    /// CPU per correct answer and peak RSS; `None` when not sampled.
    pub cost: Option<Cost>,
    /// Exec to first verified answer.
    pub cold_start_ms: Option<Quantiles>,
    /// How late a cold start figure may be: the readiness probes' spacing, ms.
    pub cold_start_resolution_ms: Option<f64>,
    /// The CPU quota (cores) its starts ran at, when larger than its budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_cpu_cores: Option<f64>,
    /// A server stackbench did not start.
    pub external: bool,
    pub artifact_bytes: Option<u64>,
    /// The code its authors wrote: lines without blanks and comments, per language.
    pub code: Option<stackbench_record::CodeSize>,
    /// The versions of the toolchains it requires, as they report them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub toolchains: BTreeMap<String, String>,
    /// Its lockfiles with their SHA-256.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lockfiles: Vec<stackbench_record::Lockfile>,
    pub build_s: Option<f64>,
    /// Runs in which the load generator saturated its cores, alone or with the
    /// companion's generator on the same cores.
    pub generator_saturated_runs: usize,
    /// When each run's rate and median latency stopped drifting within its
    /// measured window; `None` when no run is long enough to tell (or all were capacity searches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    /// The warm-ups before the measured windows, as the runs kept them; `None` when none did
    /// (no warm-up, or records written before warm-ups were kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupReport>,
    /// A scenario file's requests by name, over every run used (rate: the mean over the runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_request: Vec<stackbench_record::Named>,
    /// A scenario file's iterations, over every run used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<stackbench_record::Named>,
    pub warnings: Vec<String>,
    /// What its TLS connections negotiated and what the handshakes cost; `None` in the clear.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsReport>,
    /// What the charts draw (not part of the JSON report: the run records have it).
    #[serde(skip)]
    pub series: Series,
}

/// Steady state within the measured windows (`stats::steady`: a sliding-window slope test).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SteadyState {
    /// Per run judged, in order: the second of the measured window from which
    /// it was steady, or `None`: never steady.
    pub from_s: Vec<Option<u32>>,
    /// Median over the runs that became steady, seconds.
    pub median_s: Option<f64>,
    /// Runs that never became steady.
    pub never: usize,
}

/// A contestant's warm-ups (`RunRecord::warmup`; docs/design.md, "Steady state, checked").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarmupReport {
    /// Runs that kept a warm-up.
    pub runs: usize,
    /// Every one was `--warmup auto`: it ended once steady.
    pub auto: bool,
    /// `auto`: the longest a warm-up could last, seconds.
    pub max_s: Option<f64>,
    /// Per run judged (at least 5 s), in order: the second of the warm-up from which its rate
    /// and median latency were steady, or `None`: never steady.
    pub steady_from_s: Vec<Option<u32>>,
    /// Time to steady state: the median over the runs that became steady, seconds.
    pub median_steady_s: Option<f64>,
    /// Runs whose warm-up never became steady.
    pub never: usize,
    /// How long the warm-ups lasted, the median, seconds.
    pub median_duration_s: f64,
    /// The warm-ups' correct answers per second, the median.
    pub ok_rps: f64,
    /// Each warm-up's rate over its measured window's, the median (1 = as fast as measured).
    pub relative_rate: Option<f64>,
    /// The warm-ups' median and 99th-percentile latency, the medians over the runs, µs.
    pub p50_us: f64,
    pub p99_us: f64,
    /// Requests and errors of all the warm-ups.
    pub requests: u64,
    pub errors: u64,
    /// The larger CPU quota its warm-ups ran at (a plan's `warmup_cpu_quota`), in cores, when
    /// they did: then they are not judged (the measured window, under the budget, is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
}

/// Correct answers per second across repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    pub mean: f64,
    pub median: f64,
    pub stdev: f64,
    /// 95% interval of the mean; `None` with fewer than 3 runs.
    pub mean_ci: Option<Interval>,
    pub median_ci: Option<Interval>,
    /// `mean * 60`, the original experiments' requests per minute.
    pub per_minute: f64,
    pub runs: Vec<RunPoint>,
    /// The runs were capacity searches: the throughput is the rate sustained
    /// with these objectives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sustained: Option<Sustained>,
}

/// The objectives of the capacity searches a throughput comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sustained {
    pub slo: Vec<String>,
    /// In at least one search the generator saturated before an objective broke:
    /// the rate is a lower bound of the contestant's.
    pub lower_bound: bool,
    /// In at least one search not even the lowest rate tried met the objectives:
    /// that run counts the lowest rate tried, which broke them, so the rate is an
    /// upper bound of the contestant's.
    pub upper_bound: bool,
}

/// What each correct answer cost the contestant, across repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    /// CPU time of the contestant's process tree per 1,000 correct answers, ms (mean over runs).
    pub cpu_ms_per_1k: f64,
    /// 95% interval of the mean; `None` with fewer than 3 runs.
    pub ci: Option<Interval>,
    /// The highest resident set size sampled, bytes.
    pub rss_peak_bytes: f64,
}

/// One repetition's throughput.
#[derive(Debug, Clone, Serialize)]
pub struct RunPoint {
    pub repetition: Option<u32>,
    pub ok_rps: f64,
    /// Modified z-score against the other repetitions.
    pub modified_z: f64,
    pub outlier: bool,
}

/// Latency of every correct and failed request of all runs together.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyReport {
    /// From the merged histograms of every run.
    pub merged: Latency,
    /// Lowest and highest per-run value of each percentile.
    pub spread: BTreeMap<String, Spread>,
    /// From the intended send time (open model) rather than the actual send.
    pub corrected_for_coordinated_omission: bool,
}

/// The range of a value across repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
}

/// Requests that failed, over all runs.
#[derive(Debug, Clone, Serialize)]
#[allow(clippy::struct_field_names, reason = "the field names are the JSON report's (`errors.errors`)")]
pub struct Errors {
    pub requests: u64,
    pub errors: u64,
    /// `errors / requests`, 0..=1.
    pub rate: f64,
    pub by_kind: BTreeMap<String, u64>,
}

/// The contestant's process tree over all sampled runs.
#[derive(Debug, Clone, Serialize)]
pub struct Resources {
    /// Percent of one core (200 = two cores busy).
    pub cpu_percent: Quantiles,
    pub rss_bytes: Quantiles,
    pub threads_max: u64,
    /// CPU limit (cores) applied through a cgroup, if any.
    pub cpu_limit_cores: Option<f64>,
    /// Memory limit applied through a cgroup, if any.
    pub memory_limit_bytes: Option<u64>,
    /// Time throttled by the CPU limit, seconds, over all runs.
    pub throttled_s: f64,
    /// `throttled_s` over the measured time of those runs.
    pub throttled_share: Option<f64>,
    /// Processes the OOM killer ended, over all runs.
    pub oom_kills: u64,
}

/// A contestant that was not measured.
#[derive(Debug, Clone, Serialize)]
pub struct FailedContestant {
    pub name: String,
    pub language: Option<String>,
    pub framework: Option<String>,
    /// One line: what went wrong.
    pub reason: String,
    pub verification: Option<Verification>,
    pub incidents: Vec<Incident>,
}

/// One comparison: `faster` ran `ratio` times the requests of `slower`.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    pub faster: String,
    pub slower: String,
    /// `faster / slower`, at least 1.
    pub ratio: Option<Ratio>,
    pub verdict: Verdict,
    /// The sentence, as the terminal and Markdown print it.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval of the ratio excludes 1.
    Faster,
    /// The interval includes 1: no ranking between the two.
    Tied,
    /// Too few runs for an interval: the ratio is a point estimate only.
    NoInterval,
    /// `slower` answered no request correctly.
    NothingAnswered,
}

/// Time series for the charts.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// (percentile 0..100, latency µs) from the merged histogram.
    pub percentiles: Vec<(f64, f64)>,
    /// Per run: (second, p50 µs, p99 µs).
    pub signatures: Vec<RunSeries<(u32, u64, u64)>>,
    /// Per run: (seconds since start, CPU %, RSS bytes).
    pub resources: Vec<RunSeries<(f64, f64, u64)>>,
}

/// One repetition's points.
#[derive(Debug, Clone)]
pub struct RunSeries<T> {
    pub repetition: Option<u32>,
    pub points: Vec<T>,
}

/// The runs by scenario, then by contestant, in the order first seen; a contestant with a
/// record but no run is listed too (with none).
fn group_runs(results: &ResultSet) -> Vec<(String, Vec<Group<'_>>)> {
    let mut groups: Vec<(String, Vec<Group>)> = Vec::new();
    for run in &results.runs {
        let scenario = scenario_of(run);
        let contestant = run.label.contestant.clone().unwrap_or_else(|| run.params.url.clone());
        let idx = position_or_push(&mut groups, &scenario);
        let contestants = &mut groups[idx].1;
        let c = contestants.iter().position(|(n, _)| *n == contestant).unwrap_or_else(|| {
            contestants.push((contestant, Vec::new()));
            contestants.len() - 1
        });
        contestants[c].1.push(run);
    }
    for record in &results.contestants {
        let idx = position_or_push(&mut groups, &record.scenario);
        if !groups[idx].1.iter().any(|(n, _)| *n == record.name) {
            groups[idx].1.push((record.name.clone(), Vec::new()));
        }
    }
    groups
}

impl Analysis {
    /// Analyses a whole result store.
    pub fn from_results(results: &ResultSet, options: &AnalysisOptions) -> Analysis {
        let groups = group_runs(results);
        let record_of = |scenario: &str, name: &str| -> Option<&ContestantRecord> {
            results.contestants.iter().find(|c| c.name == name && c.scenario == scenario)
        };
        let judging = results
            .stopping
            .as_ref()
            .map(|s| rank::Judging { precision: s.precision, confidence: s.look_confidence });
        let mut beside = companion::Beside::default();
        let scenarios: Vec<ScenarioReport> = groups
            .iter()
            .map(|(scenario, contestants)| {
                let at =
                    beside.scale(scenario, contestants.iter().flat_map(|(_, runs)| runs.iter().copied()));
                let mut measured = Vec::new();
                let mut failed = Vec::new();
                for (name, runs) in contestants {
                    match contestant::analyse(
                        scenario,
                        name,
                        runs,
                        record_of(scenario, name),
                        (options.seed, at),
                    ) {
                        Ok(analysed) => measured.push(analysed),
                        Err(f) => failed.push(*f),
                    }
                }
                rank::scenario(scenario, measured, failed, options.reference.as_deref(), judging.as_ref())
            })
            .collect();
        let budget = budget::budget(results);
        let mut scenarios = scenarios;
        for s in &mut scenarios {
            budget::throttled(s, budget.as_ref());
        }
        let stopping = results.stopping.as_ref().map(|s| stopping::report(s, &scenarios));
        let mut notes = Vec::new();
        match results.manifest.status {
            Status::Complete => {}
            Status::Running => notes.push(
                "This result set is still being written (or its run was killed): contestants not yet \
                 measured are missing."
                    .to_owned(),
            ),
            Status::Interrupted => {
                notes.push("This plan was interrupted: contestants not yet measured are missing.".to_owned());
            }
        }
        if let Some(reference) = &options.reference
            && !scenarios.iter().any(|s| s.baseline.as_deref() == Some(reference.as_str()))
        {
            notes.push(format!(
                "--reference '{reference}' has no measured run here; ratios are to the best of each scenario."
            ));
        }
        notes.extend(beside.note());
        let env = &results.manifest.environment;
        if let Some(g) = env.governor.as_deref().filter(|g| *g != "performance") {
            notes.push(format!(
                "The CPU frequency governor was '{g}', not 'performance': clock speed may have varied between runs."
            ));
        }
        let m = &results.manifest;
        Analysis {
            schema: REPORT_SCHEMA,
            source: Source {
                dir: results.dir.display().to_string(),
                tool_version: m.tool_version.clone(),
                created_at_ms: m.created_at_ms,
                finished_at_ms: m.finished_at_ms,
                status: match m.status {
                    Status::Running => "running",
                    Status::Complete => "complete",
                    Status::Interrupted => "interrupted",
                }
                .to_owned(),
                plan_path: m.plan_path.clone(),
                git_commit: m.git_commit.clone(),
                environment: m.environment.clone(),
                plan_text: m.plan_text.clone(),
            },
            budget,
            confidence: CONFIDENCE,
            min_runs_for_interval: MIN_RUNS,
            reference: options.reference.clone(),
            scenarios,
            stopping,
            notes,
        }
    }

    /// Every contestant name that has a measured run, in report order.
    pub fn contestant_names(&self) -> Vec<&str> {
        self.scenarios.iter().flat_map(|s| s.contestants.iter().map(|c| c.name.as_str())).collect()
    }
}

/// A contestant's name and runs.
type Group<'a> = (String, Vec<&'a RunRecord>);

/// The scenario a run belongs to: its label, else the generator's scenario.
fn scenario_of(run: &RunRecord) -> String {
    run.label.scenario.clone().or_else(|| run.params.scenario.clone()).unwrap_or_else(|| "(none)".to_owned())
}

fn position_or_push<T: Default>(groups: &mut Vec<(String, T)>, key: &str) -> usize {
    groups.iter().position(|(k, _)| k == key).unwrap_or_else(|| {
        groups.push((key.to_owned(), T::default()));
        groups.len() - 1
    })
}
