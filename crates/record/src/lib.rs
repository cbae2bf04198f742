//! The `RunRecord`: the serializable result of one measured run, and the
//! contract between the load engine (which produces it), the orchestrator
//! (which labels it, adds the contestant's samples and stores it) and the
//! reports (which read it). Its JSON schema is documented in
//! `docs/run-record.md` and written as a file ([`JSON_SCHEMA`]); change the
//! three together and bump [`SCHEMA_VERSION`] on any change that is not a new
//! optional field.
//!
//! Units are in the names: `_us` microseconds, `_ms` milliseconds, `_s`
//! seconds, `_bytes` bytes. Latency histograms hold microseconds (1 µs to
//! 60 s, 3 significant digits) and travel as HdrHistogram V2 compressed,
//! base64 (the format of HdrHistogram's interval logs).
//!
//! This crate is the one place where the shape of results lives, by concern:
//!
//! - the record's types: [`RunRecord`] and its parts here; the per-request entries
//!   ([`Named`]), the error kinds ([`ErrorKind`]), what a run cost ([`ProcessSamples`],
//!   [`GeneratorUsage`]), connections ([`Connections`]), latency histograms ([`Latency`]),
//!   a capacity search ([`Search`]) and the records' wall-clock times ([`Utc`]);
//! - the result-store layout ([`ResultSet`], written with [`write_json_atomic`]);
//! - the statistics the load engine and the reports share: the one percentile routine
//!   ([`nearest_rank`]) and the steady-state detector ([`timeline_steady`]);
//! - the machine a run was measured on, as read from `/proc` and `/sys` ([`Environment`]);
//! - how a number reads to a person ([`fmt`], [`ByteSize`]) and how it is painted on a terminal
//!   ([`fmt::Paint`]), so that the load engine's summary and the reports say `1.23 ms` the
//!   same way.
//!
//! The modules are private: what other crates use is re-exported here, except [`fmt`], whose
//! functions are read as `fmt::micros`, `fmt::percent` wherever a number is said.

mod connections;
mod env;
mod error_kind;
pub mod fmt;
mod histogram;
mod named;
mod not_sent;
mod quantiles;
mod search;
mod size;
mod stats;
mod store;
mod time;
mod usage;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use connections::{Connections, FirstRequests, TlsRecord};
pub use env::{Environment, count_cpu_list, version_with_build};
pub use error_kind::ErrorKind;
pub use histogram::{HIGHEST_US, HistogramError, Latency, decode_histogram, encode_histogram, new_histogram};
pub use named::Named;
pub use not_sent::NotSent;
pub use quantiles::{Quantiles, nearest_rank};
pub use search::{Search, SearchStep};
pub use size::ByteSize;
pub use stats::dist::{normal_quantile, student_t_quantile};
pub use stats::mean;
pub use stats::steady::{Steady, WINDOW as STEADY_WINDOW, timeline_steady};
pub use store::{
    CodeSize, ContestantRecord, Incident, Lockfile, MANIFEST, Manifest, RUNS_DIR, ResultSet, STOPPING,
    Status, Stopping, StoreError, Verification, VerifyFailure, contestant_path, file_safe, read_json,
    run_file_name, write_json_atomic,
};
pub use time::{Utc, now_ms};
pub use usage::{CgroupUsage, GENERATOR_SATURATION, GeneratorUsage, ProcessSamples, Sample};

/// The record's JSON Schema (draft 2020-12, `crates/record/schema/run-record.schema.json`):
/// what a record of [`SCHEMA_VERSION`] may hold, for tools in any language. The test suite
/// validates every record it writes against it.
pub const JSON_SCHEMA: &str = include_str!("../schema/run-record.schema.json");

/// Version of the record format written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// The result of one measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema: u32,
    /// `stackbench` version that measured it.
    pub tool_version: String,
    /// Wall-clock start of the measured phase (after warm-up), ms since the Unix epoch.
    pub started_at_ms: u64,
    /// Who and what was measured; set by the orchestrator, empty for a bare `stackbench load`.
    #[serde(default)]
    pub label: Label,
    pub params: LoadParams,
    pub environment: Environment,
    pub summary: Summary,
    /// Latency of every completed request, µs, HdrHistogram V2 compressed base64.
    /// Open model: measured from the intended send time (corrected for
    /// coordinated omission). Closed model: from the actual send.
    pub histogram: String,
    /// Open model only: latency from the actual send (the "service time").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<String>,
    /// Errors by kind (see [`ErrorKind`] for the names), over the whole measured run.
    pub errors: BTreeMap<String, u64>,
    /// One entry per second of the measured run.
    pub timeline: Vec<Second>,
    pub generator: GeneratorUsage,
    /// The contestant's process tree, sampled while the run lasted (orchestrator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<ProcessSamples>,
    /// `--threshold` outcomes, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdOutcome>,
    /// The run was stopped early (Ctrl-C, SIGTERM); the record covers what ran.
    #[serde(default)]
    pub interrupted: bool,
    /// Set when the numbers are not a result: the tool failed during the run,
    /// or nothing made progress. Reports leave such a run out of every statistic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<Invalid>,
    /// A capacity search: this record is its confirming step, at the sustained rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<Search>,
    /// A scenario file's requests, one entry per request name, in the file's order
    /// (docs/scenarios.md, "Load"); empty for the built-in scenarios.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_request: Vec<Named>,
    /// A scenario file's iterations (one flow run start to end), named `iteration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Named>,
    /// The warm-up before the measured window: its own figures, and when it became steady.
    /// Absent when there was no warm-up, and in records written before warm-ups were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
    /// What opening connections cost: TCP connects, TLS handshakes and what they agreed,
    /// and the requests that opened their connection with and without that setup.
    /// Absent in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// A plan's `companion`: the reference contestant that ran beside this one, on the same
    /// cores under the same budget, and its correct answers per second over this run's measured
    /// window. Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub companion: Option<Companion>,
}

/// The reference that ran beside a measured run ([`RunRecord::companion`]): a fresh start of
/// one plan contestant, loaded by a generator of its own, whose rate over the same seconds says
/// how fast the shared cores ran then (duet benchmarking, Bulej et al., ICPE 2020).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Companion {
    /// The plan contestant that ran beside it.
    pub name: String,
    /// Its correct answers per second over the seconds of this run's measured window.
    pub ok_rps: f64,
    /// The share of the load's cores its own load generator used over its run (the same
    /// cores as this run's generator): the two generators together are judged against
    /// them ([`Companion::generators_saturated`]). Absent in records written before it
    /// was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_utilization: Option<f64>,
}

impl Companion {
    /// Whether this run's generator and the companion's, sharing the load's cores, together
    /// used at least [`GENERATOR_SATURATION`] of them, the share at which one generator alone
    /// is called saturated: then the run's rate may be the generators', not the servers'.
    /// Unknown (`false`) in records without the companion's share.
    pub fn generators_saturated(&self, own: &GeneratorUsage) -> bool {
        self.generator_utilization.is_some_and(|u| u + own.utilization >= GENERATOR_SATURATION)
    }
}

/// The load before the measured window (`--warmup`), kept apart from it: what it did second by
/// second, and when its rate and median latency stopped drifting ([`stats::steady`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// `--warmup auto`: it ended once steady (at `max_s` at the latest); `false`: a fixed length.
    #[serde(default)]
    pub auto: bool,
    /// `auto`: the longest it could last, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_s: Option<f64>,
    /// The second of the warm-up from which its per-second rate and median latency were
    /// steady. `auto`: what ended it; fixed: judged over the whole warm-up afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_from_s: Option<u32>,
    /// Judged, and still drifting at its end (`auto`: within `max_s`). Neither this nor
    /// `steady_from_s` when it was too short to judge (under 5 s).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never_steady: bool,
    /// Its figures as the measured window's: `duration_s` is how long it lasted (the measured
    /// window began then). Requests sent during it and answered after it are in neither.
    /// Answers are judged by their status only: no response checks.
    pub summary: Summary,
    /// Its errors by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// One entry per second of the warm-up (`t` from its start).
    pub timeline: Vec<Second>,
}

/// More requests a second than any load generator sends: a count beyond what a run's duration
/// allows at this rate was not measured.
const MAX_PLAUSIBLE_RPS: f64 = 1e9;

impl RunRecord {
    /// What in the record contradicts itself, if anything: the load engine writes
    /// `ok + errors = requests`, the errors by kind adding up to `errors`, and the rates as
    /// the counts over the duration, so a record that breaks one of these was changed (or
    /// damaged) after it was written, and its numbers are not a measurement.
    pub fn inconsistency(&self) -> Option<String> {
        let s = &self.summary;
        for (name, v) in [("duration_s", s.duration_s), ("rps", s.rps), ("ok_rps", s.ok_rps)] {
            if !v.is_finite() || v < 0.0 {
                return Some(format!("summary.{name} is {v}, not a finite number of zero or more"));
            }
        }
        if s.ok.checked_add(s.errors) != Some(s.requests) {
            return Some(format!(
                "summary.ok + summary.errors ({} + {}) is not summary.requests ({})",
                s.ok, s.errors, s.requests
            ));
        }
        let by_kind = self.errors.values().try_fold(0u64, |a, &n| a.checked_add(n));
        if by_kind != Some(s.errors) {
            let by_kind = by_kind.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string());
            return Some(format!(
                "the errors by kind add up to {by_kind}, not summary.errors ({})",
                s.errors
            ));
        }
        if s.late > s.errors {
            return Some(format!("summary.late ({}) is more than summary.errors ({})", s.late, s.errors));
        }
        if s.checks.failed > s.checks.performed {
            return Some(format!(
                "summary.checks.failed ({}) is more than summary.checks.performed ({})",
                s.checks.failed, s.checks.performed
            ));
        }
        if s.requests as f64 > MAX_PLAUSIBLE_RPS * s.duration_s.max(1.0) {
            return Some(format!(
                "summary.requests ({}) in {} s is more than a billion a second, more than any load \
                 generator sends",
                s.requests, s.duration_s
            ));
        }
        if s.duration_s > 0.0 {
            // The rates are the counts over the duration, as written; a rounding is allowed for.
            let close = |rate: f64, count: u64| {
                let want = count as f64 / s.duration_s;
                (rate - want).abs() <= 0.01 + 1e-4 * want
            };
            for (name, rate, count, of) in
                [("rps", s.rps, s.requests, "requests"), ("ok_rps", s.ok_rps, s.ok, "ok")]
            {
                if !close(rate, count) {
                    return Some(format!(
                        "summary.{name} ({rate}) is not summary.{of} / summary.duration_s ({count} / {} = {})",
                        s.duration_s,
                        count as f64 / s.duration_s
                    ));
                }
            }
        }
        None
    }
}

/// Why a run's numbers are not a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invalid {
    /// [`Invalid::TOOL_FAILURE`], [`Invalid::NO_PROGRESS`], [`Invalid::STALLED_HOST`], [`Invalid::STARVED`]
    /// or [`Invalid::MISSING_SHARD`].
    pub kind: String,
    /// One sentence: what happened.
    pub reason: String,
}

impl Invalid {
    /// A panic or a stall inside stackbench itself (a load worker, the collector, the orchestrator).
    pub const TOOL_FAILURE: &'static str = "tool_failure";
    /// The measured phase completed no request at all.
    pub const NO_PROGRESS: &'static str = "no_progress";
    /// The timeline has fewer seconds than the measured phase lasted: the host stalled the generator.
    pub const STALLED_HOST: &'static str = "stalled_host";
    /// Every user waited on the contestant while it stayed nearly idle (< 10% of a core).
    pub const STARVED: &'static str = "starved";
    /// A merge of a load's shards from which a shard is missing: it failed or never reported
    /// (`stackbench swarm load --run` knows every shard it started).
    pub const MISSING_SHARD: &'static str = "missing_shard";
    /// The record read back contradicts itself (a summary whose counts or rates disagree, a
    /// file whose name disagrees with its label): edited or damaged after it was written.
    pub const INCONSISTENT: &'static str = "inconsistent";
    /// A second record of the same contestant and repetition (a copied run file).
    pub const DUPLICATE: &'static str = "duplicate";
    /// A warm-up at a larger CPU quota whose budget was not back when the measured window began.
    pub const OVER_BUDGET: &'static str = "over_budget";

    pub fn new(kind: &str, reason: impl Into<String>) -> Invalid {
        Invalid { kind: kind.to_owned(), reason: reason.into() }
    }
}

/// Who and what a run measured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contestant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// 1-based repetition number within the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
}

/// What the load engine was asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadParams {
    pub url: String,
    /// `http1`, `h2c` or `grpc`.
    pub transport: String,
    pub model: Model,
    /// `--stages`, empty when the load is constant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
    /// Measured duration asked for (`-d`), if bounded by time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Request count asked for (`-n`), if bounded by count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    pub warmup_ms: u64,
    pub timeout_ms: u64,
    /// Generator worker threads.
    pub threads: u32,
    /// Scenario whose generator and checker were used, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    pub seed: u64,
    /// Every K-th response was checked (1 = all); 0 when nothing was checked.
    pub check_every: u32,
    /// Anything else the engine wants to keep (e.g. `keepalive`, `streams`, method, headers).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// The load model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Model {
    /// `connections` virtual users; each sends, waits, thinks, repeats.
    Closed { connections: u32, think_ms: u64, ramp_up_ms: u64 },
    /// Requests due at `rate` per second; at most `max_in_flight` outstanding.
    Open { rate: f64, max_in_flight: u64 },
}

/// One stage of `--stages`: move linearly to `target` (users, or requests/s
/// in the open model) over `duration_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub duration_ms: u64,
    pub target: f64,
}

/// The run in the original experiments' terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Measured wall time, seconds.
    pub duration_s: f64,
    /// Requests that completed with any outcome (answered, failed, timed out).
    pub requests: u64,
    /// Requests answered correctly (right status, and the check passed when checked).
    pub ok: u64,
    /// `requests - ok`; the breakdown is [`RunRecord::errors`].
    pub errors: u64,
    /// `requests / duration_s`.
    pub rps: f64,
    /// `ok / duration_s`: the throughput reports compare.
    pub ok_rps: f64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Latency of completed requests (see [`RunRecord::histogram`]).
    pub latency: Latency,
    /// Open model: latency from the actual send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_latency: Option<Latency>,
    /// Open model: requests that were due but could not be sent on time
    /// (`--max-in-flight` reached); each is also counted as an error `late`.
    #[serde(default)]
    pub late: u64,
    /// Responses checked against the scenario, and how many failed.
    pub checks: Checks,
    /// Whether [`Summary::latency`] is measured from the intended send time.
    pub corrected_for_coordinated_omission: bool,
}

/// Response checks of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checks {
    pub performed: u64,
    pub failed: u64,
}

/// One second of a run's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the start of the measured run (0-based).
    pub t: u32,
    /// Requests completed in this second, any outcome.
    pub completed: u64,
    /// Of which failed, by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// Requests outstanding at the end of the second.
    pub in_flight: u64,
    pub bytes_received: u64,
    /// Wall-clock start of this second, Unix milliseconds (`started_at_ms + 1000 t`): what lines
    /// up the timelines of shards run on several generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// The second's latency histogram (encoded like [`RunRecord::histogram`]), kept by
    /// `--shard` runs so a merge's per-second percentiles are exact too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// One `--threshold` and whether the run met it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdOutcome {
    /// As given, e.g. `p99<50ms`.
    pub expression: String,
    /// The measured value, in the expression's unit.
    pub actual: f64,
    pub passed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000 requests in 10 s, 990 of them ok, 10 answered 503.
    fn record() -> RunRecord {
        RunRecord {
            schema: SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            started_at_ms: 1,
            label: Label::default(),
            params: LoadParams {
                url: "http://127.0.0.1:1/".into(),
                transport: "http1".into(),
                model: Model::Closed { connections: 1, think_ms: 0, ramp_up_ms: 0 },
                stages: Vec::new(),
                duration_ms: Some(10_000),
                requests: None,
                warmup_ms: 0,
                timeout_ms: 1_000,
                threads: 1,
                scenario: None,
                seed: 1,
                check_every: 0,
                extra: BTreeMap::new(),
            },
            environment: Environment::default(),
            summary: Summary {
                duration_s: 10.0,
                requests: 1_000,
                ok: 990,
                errors: 10,
                rps: 100.0,
                ok_rps: 99.0,
                bytes_sent: 0,
                bytes_received: 0,
                latency: Latency::default(),
                service_latency: None,
                late: 0,
                checks: Checks::default(),
                corrected_for_coordinated_omission: false,
            },
            histogram: String::new(),
            service_histogram: None,
            errors: BTreeMap::from([("http_503".to_owned(), 10)]),
            timeline: Vec::new(),
            generator: GeneratorUsage {
                cpu_user_s: 0.0,
                cpu_system_s: 0.0,
                cores: 1,
                utilization: 0.0,
                saturated: false,
            },
            samples: None,
            thresholds: Vec::new(),
            interrupted: false,
            invalid: None,
            find_max: None,
            per_request: Vec::new(),
            iterations: None,
            warmup: None,
            connections: None,
            companion: None,
        }
    }

    #[test]
    fn the_warmup_round_trips_and_older_records_still_load() {
        let mut r = record();
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("\"warmup\":"), "no warm-up, no key: {json}");
        assert_eq!(serde_json::from_str::<RunRecord>(&json).unwrap(), r);
        // A record written before warm-ups were kept: no `warmup` key at all.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        old.as_object_mut().unwrap().remove("warmup");
        assert_eq!(serde_json::from_value::<RunRecord>(old).unwrap().warmup, None);
        let second = Second {
            t: 0,
            completed: 90,
            errors: BTreeMap::new(),
            p50_us: 900,
            p90_us: 1_000,
            p99_us: 1_200,
            max_us: 2_000,
            in_flight: 1,
            bytes_received: 0,
            at_ms: Some(1),
            histogram: None,
        };
        r.warmup = Some(Warmup {
            auto: true,
            max_s: Some(30.0),
            steady_from_s: Some(3),
            never_steady: false,
            summary: Summary { duration_s: 9.0, ..r.summary.clone() },
            errors: BTreeMap::new(),
            timeline: vec![second; 9],
        });
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"steady_from_s\":3") && !json.contains("never_steady"), "{json}");
        assert_eq!(serde_json::from_str::<RunRecord>(&json).unwrap(), r);
        // A fixed warm-up that never settled: `auto` and `never_steady` read back as written.
        let w = r.warmup.as_mut().unwrap();
        (w.auto, w.max_s, w.steady_from_s, w.never_steady) = (false, None, None, true);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"never_steady\":true"), "{json}");
        assert_eq!(serde_json::from_str::<RunRecord>(&json).unwrap(), r);
    }

    type Change = fn(&mut RunRecord);

    #[test]
    fn a_record_that_contradicts_itself_says_how() {
        assert_eq!(record().inconsistency(), None);
        let mut r = record();
        r.summary.rps = 100.004; // a rounding
        assert_eq!(r.inconsistency(), None);
        let cases: [(Change, &str); 8] = [
            (|r| r.summary.duration_s = -1.0, "summary.duration_s is -1"),
            (|r| r.summary.ok_rps = f64::NAN, "summary.ok_rps is NaN"),
            (|r| r.summary.requests = 1_000_000_000_000_000_000, "is not summary.requests"),
            (|r| r.summary.ok = u64::MAX, "is not summary.requests"),
            (
                |r| {
                    r.errors.insert("reset".into(), 1);
                },
                "the errors by kind add up to 11",
            ),
            (|r| r.summary.rps = 120.0, "summary.rps (120) is not summary.requests / summary.duration_s"),
            (|r| r.summary.checks.failed = 1, "summary.checks.failed (1) is more than"),
            (
                |r| {
                    let s = &mut r.summary;
                    (s.requests, s.ok, s.errors, s.rps, s.ok_rps) =
                        (u64::MAX, u64::MAX - 10, 10, 1.8e18, 1.8e18);
                },
                "more than a billion a second",
            ),
        ];
        for (change, said) in cases {
            let mut r = record();
            change(&mut r);
            let why = r.inconsistency().expect("found");
            assert!(why.contains(said), "{why} (expected: {said})");
        }
    }
}
