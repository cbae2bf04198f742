//! Synthetic result stores: run records and contestant records made from a
//! few numbers (throughput, latency, errors, resource use, the shape of the
//! latency over time), deterministic from a seed. The report's snapshot and
//! browser tests render them, the CLI's tests write them to disk and run
//! `stackbench report` and `stackbench compare` on them, and anyone can try
//! the reports without measuring anything first.
//!
//! [`three_kings`] is the "tale of three kings" in miniature: `dummy`
//! and `event-log` with the four stacks of the three-kings experiment at about their published
//! throughputs (Elixir 113k RPM, Japronto 95k, Go 80k, Flask 25k on `dummy`;
//! Go 10k RPM, Elixir 6k, Japronto 3.8% over Flask on `event-log`), one
//! contestant that fails verification, one that crashes, and a `bubble-sort`
//! with too few runs for an interval. [`extremes`] stretches the charts:
//! from a fraction of a request per second to millions, alone or with
//! long-named neighbours.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use stackbench_record::{
    Checks, ContestantRecord, Environment, GeneratorUsage, Incident, Label, Latency, LoadParams, MANIFEST,
    Manifest, Model, ProcessSamples, Quantiles, RUNS_DIR, ResultSet, RunRecord, Sample, Second, Status,
    StoreError, Summary, Verification, VerifyFailure, contestant_path, encode_histogram, nearest_rank,
    new_histogram, run_file_name, write_json_atomic,
};

use crate::stats::rng::{SplitMix64, seed_from};

/// How latency moves over a run (the original experiment's "performance signatures").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Steady.
    Flat,
    /// Rises linearly by half over the run (Go's in the original experiment).
    Rising,
    /// A wave with a 4-second period (Elixir's).
    Wave,
    /// Jumps around (Japronto's).
    Erratic,
    /// Flat with a bump in the middle (Flask's).
    Bump,
}

/// One measured run, in a few numbers.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub contestant: String,
    pub scenario: String,
    pub repetition: u32,
    /// Correct answers per second.
    pub ok_rps: f64,
    /// Closed-model virtual users; median latency is `users / rps`.
    pub users: u32,
    /// Spread of latency (σ of its logarithm).
    pub sigma: f64,
    pub duration_s: u32,
    /// Failed requests by kind, on top of the correct ones.
    pub errors: Vec<(String, u64)>,
    pub shape: Shape,
    /// Mean CPU % of one core, and RSS in MiB at the start (grows 20% over the run); `None`: not sampled.
    pub resources: Option<(f64, f64)>,
    pub saturated: bool,
    pub interrupted: bool,
}

impl RunSpec {
    pub fn new(contestant: &str, scenario: &str, repetition: u32, ok_rps: f64) -> RunSpec {
        RunSpec {
            contestant: contestant.to_owned(),
            scenario: scenario.to_owned(),
            repetition,
            ok_rps,
            users: 100,
            sigma: 0.25,
            duration_s: 10,
            errors: Vec::new(),
            shape: Shape::Flat,
            resources: Some((90.0, 40.0)),
            saturated: false,
            interrupted: false,
        }
    }
}

/// The fixed machine of synthetic records.
pub fn environment() -> Environment {
    Environment {
        os: "linux".into(),
        kernel: "6.1.0-synthetic".into(),
        cpu_model: "Synthetic CPU @ 2.90GHz".into(),
        cores: 2,
        affinity: "1".into(),
        governor: Some("performance".into()),
        boost: Some("off".into()),
        cgroup: Some("v2".into()),
        stackbench_version: "0.1.0".into(),
    }
}

fn std_normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn shape_factor(shape: Shape, t: u32, duration: u32, rng: &mut SplitMix64) -> f64 {
    let x = f64::from(t) / f64::from(duration.max(1));
    match shape {
        Shape::Flat => 1.0,
        Shape::Rising => 0.75 + 0.5 * x,
        Shape::Wave => 1.0 + 0.35 * (2.0 * std::f64::consts::PI * f64::from(t) / 4.0).sin(),
        Shape::Erratic => 0.7 + 0.7 * rng.next_f64(),
        Shape::Bump => {
            if (x - 0.4).abs() < 0.12 {
                1.5
            } else {
                1.0
            }
        }
    }
}

/// A run record as the load engine and orchestrator would write it.
pub fn run_record(spec: &RunSpec) -> RunRecord {
    let mut rng =
        SplitMix64::new(seed_from(7, &[&spec.contestant, &spec.scenario, &spec.repetition.to_string()]));
    let duration = f64::from(spec.duration_s);
    let ok = (spec.ok_rps * duration).round() as u64;
    let failed: u64 = spec.errors.iter().map(|(_, n)| n).sum();
    let requests = ok + failed;
    let (histogram, timeline) = latencies(spec, requests, &mut rng);
    let samples = spec.resources.map(|(cpu, rss_mib)| samples(spec, cpu, rss_mib, &mut rng));
    let errors: BTreeMap<String, u64> = spec.errors.iter().cloned().collect();
    RunRecord {
        schema: stackbench_record::SCHEMA_VERSION,
        tool_version: "0.1.0".into(),
        started_at_ms: 1_764_460_800_000 + u64::from(spec.repetition) * 60_000,
        label: Label {
            contestant: Some(spec.contestant.clone()),
            scenario: Some(spec.scenario.clone()),
            repetition: Some(spec.repetition),
        },
        params: params(spec),
        environment: environment(),
        summary: Summary {
            duration_s: duration,
            requests,
            ok,
            errors: failed,
            rps: requests as f64 / duration,
            ok_rps: ok as f64 / duration,
            bytes_sent: requests * 80,
            bytes_received: requests * 120,
            latency: Latency::from_histogram(&histogram),
            service_latency: None,
            late: 0,
            checks: Checks { performed: requests, failed: errors.get("check").copied().unwrap_or(0) },
            corrected_for_coordinated_omission: false,
        },
        histogram: encode_histogram(&histogram),
        service_histogram: None,
        errors,
        timeline,
        generator: GeneratorUsage {
            cpu_user_s: duration * 0.3,
            cpu_system_s: duration * 0.2,
            cores: 1,
            utilization: if spec.saturated { 0.99 } else { 0.5 },
            saturated: spec.saturated,
        },
        samples,
        thresholds: Vec::new(),
        interrupted: spec.interrupted,
        invalid: None,
        find_max: None,
        per_request: Vec::new(),
        iterations: None,
        warmup: None,
        connections: None,
        companion: None,
    }
}

/// The run's histogram and timeline: 20 latency draws per second, each
/// standing for its share of the second's requests.
fn latencies(spec: &RunSpec, requests: u64, rng: &mut SplitMix64) -> (Histogram<u64>, Vec<Second>) {
    let median_us = (f64::from(spec.users) / spec.ok_rps.max(1e-3) * 1e6).min(50e6);
    let mut histogram = new_histogram();
    let mut timeline = Vec::new();
    let per_second = requests / u64::from(spec.duration_s.max(1));
    for t in 0..spec.duration_s {
        let f = shape_factor(spec.shape, t, spec.duration_s, rng);
        let draws = 20u64;
        let mut second: Vec<f64> = (0..draws)
            .map(|_| (median_us * f * (spec.sigma * std_normal(rng)).exp()).clamp(1.0, 60e6).round())
            .collect();
        for v in &second {
            histogram.record_n(*v as u64, (per_second / draws).max(1)).expect("value within bounds");
        }
        second.sort_by(f64::total_cmp);
        let q = |p: f64| nearest_rank(&second, p) as u64;
        let mut errors = BTreeMap::new();
        for (kind, n) in &spec.errors {
            let share =
                n / u64::from(spec.duration_s) + u64::from(u64::from(t) < n % u64::from(spec.duration_s));
            if share > 0 {
                errors.insert(kind.clone(), share);
            }
        }
        timeline.push(Second {
            t,
            completed: per_second,
            errors,
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            max_us: q(1.0),
            in_flight: u64::from(spec.users),
            bytes_received: per_second * 120,
            at_ms: None,
            histogram: None,
        });
    }
    (histogram, timeline)
}

/// 250 ms samples around `cpu` % with RSS growing from `rss_mib` by a fifth.
fn samples(spec: &RunSpec, cpu: f64, rss_mib: f64, rng: &mut SplitMix64) -> ProcessSamples {
    let points: Vec<Sample> = (0..spec.duration_s * 4)
        .map(|i| {
            let x = f64::from(i) / f64::from(spec.duration_s * 4);
            Sample {
                t_ms: u64::from(i) * 250,
                cpu_percent: (cpu + 4.0 * std_normal(rng)).clamp(0.0, 200.0),
                rss_bytes: (rss_mib * (1.0 + 0.2 * x) * 1_048_576.0) as u64,
                threads: 8,
                fds: 120,
            }
        })
        .collect();
    let cpu: Vec<f64> = points.iter().map(|p| p.cpu_percent).collect();
    let rss: Vec<f64> = points.iter().map(|p| p.rss_bytes as f64).collect();
    ProcessSamples {
        interval_ms: 250,
        cpu_percent: Quantiles::of(&cpu),
        rss_bytes: Quantiles::of(&rss),
        points,
        threads_max: 8,
        fds_max: 120,
        cgroup: None,
    }
}

fn params(spec: &RunSpec) -> LoadParams {
    LoadParams {
        url: "http://127.0.0.1:8080/events".into(),
        transport: if spec.scenario == "bubble-sort" { "grpc" } else { "http1" }.into(),
        model: Model::Closed { connections: spec.users, think_ms: 0, ramp_up_ms: 1_000 },
        stages: Vec::new(),
        duration_ms: Some(u64::from(spec.duration_s) * 1_000),
        requests: None,
        warmup_ms: 2_000,
        timeout_ms: 10_000,
        threads: 1,
        scenario: Some(spec.scenario.clone()),
        seed: 1,
        check_every: 1,
        extra: BTreeMap::new(),
    }
}

/// A contestant record with cold starts around `cold_ms` and an optional artifact size.
pub fn contestant(
    name: &str,
    scenario: &str,
    cold_ms: Option<f64>,
    artifact_bytes: Option<u64>,
) -> ContestantRecord {
    // The stacks of the three-kings experiment, as a plan's `language`/`framework` keys name them.
    let stack = match name {
        "flask" | "flask-influx" => Some(("Python 3.11", "Flask 3.1")),
        "gin" => Some(("Go 1.19", "Gin 1.8")),
        "plug" => Some(("Elixir 1.14", "Plug on Cowboy")),
        _ => None,
    };
    // The first experiment's own comparison: about 35 lines of Python, 100 of Go, 20 of Elixir.
    let code = stack.map(|(language, _)| {
        let (tokei_name, lines) = match language.split(' ').next() {
            Some("Python") => ("Python", 35),
            Some("Go") => ("Go", 100),
            _ => ("Elixir", 20),
        };
        stackbench_record::CodeSize {
            lines,
            files: 1,
            languages: BTreeMap::from([(tokei_name.to_owned(), lines)]),
        }
    });
    let cold: Vec<f64> =
        cold_ms.map(|c| (0..5).map(|i| c * (0.95 + 0.025 * f64::from(i))).collect()).unwrap_or_default();
    ContestantRecord {
        name: name.to_owned(),
        scenario: scenario.to_owned(),
        language: stack.map(|s| s.0.to_owned()),
        framework: stack.map(|s| s.1.to_owned()),
        external: false,
        artifact_bytes,
        code,
        // What a Python contestant's record says of its toolchain and pinned packages.
        toolchains: if name == "flask-influx" {
            BTreeMap::from([("python3".to_owned(), "Python 3.11.2".to_owned())])
        } else {
            BTreeMap::new()
        },
        lockfiles: if name == "flask-influx" {
            vec![stackbench_record::Lockfile {
                path: "requirements.txt".to_owned(),
                sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".to_owned(),
            }]
        } else {
            Vec::new()
        },
        build_s: artifact_bytes.map(|_| 41.5),
        build_concurrent: false,
        cold_start: (!cold.is_empty()).then(|| Quantiles::of(&cold)),
        cold_start_resolution_ms: (!cold.is_empty()).then_some(0.8),
        start_cpu_quota: None,
        cold_start_ms: cold,
        verification: Some(Verification { passed: true, cases: 14, failures: Vec::new() }),
        incidents: Vec::new(),
    }
}

/// Two contestants with verification failures: `fastify` broke a core rule
/// (not measured), `japronto` only a hardening rule (measured, with a warning).
fn verified_contestants() -> (ContestantRecord, ContestantRecord) {
    let mut fastify = contestant("fastify", "dummy", Some(310.0), None);
    fastify.verification = Some(Verification {
        passed: false,
        cases: 14,
        failures: vec![
            VerifyFailure {
                rule: "a valid event gets 200 {\"count\": 1}".into(),
                detail: "got 500 with an HTML body".into(),
                level: "core".into(),
                enforces: String::new(),
            },
            VerifyFailure {
                rule: "a body over 64 KiB gets 413".into(),
                detail: "got 200".into(),
                level: "hardening".into(),
                enforces: "the 64 KiB body cap".into(),
            },
        ],
    });
    // Measured, but it does not refuse what the contract says to refuse.
    let mut japronto = contestant("japronto", "dummy", Some(298.0), None);
    japronto.verification = Some(Verification {
        passed: true,
        cases: 21,
        failures: vec![VerifyFailure {
            rule: "a key given twice gets 400".into(),
            detail: "expected HTTP status 400, got 200".into(),
            level: "hardening".into(),
            enforces: "duplicate keys".into(),
        }],
    });
    (fastify, japronto)
}

/// A result set with a fixed manifest (created 2025-11-30, complete).
pub fn result_set(dir: &str, contestants: Vec<ContestantRecord>, runs: &[RunSpec]) -> ResultSet {
    let mut contestants = contestants;
    contestants.sort_by(|a, b| a.name.cmp(&b.name));
    ResultSet {
        dir: PathBuf::from(dir),
        manifest: Manifest {
            schema: stackbench_record::SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            created_at_ms: 1_764_460_800_000,
            finished_at_ms: Some(1_764_461_400_000),
            plan_path: Some("plans/three-kings.toml".into()),
            plan_text: "# synthetic\n[defaults]\nrepetitions = 3\n".into(),
            environment: environment(),
            git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            status: Status::Complete,
        },
        contestants,
        runs: runs.iter().map(run_record).collect(),
        stopping: None,
    }
}

/// The original experiments' comparison in miniature; `factor(contestant)` scales a
/// contestant's throughput (1.0 for the published figures), so a second set
/// can show a regression.
pub fn three_kings_with(dir: &str, factor: impl Fn(&str) -> f64) -> ResultSet {
    let mut runs = Vec::new();
    let mut push = |name: &str, scenario: &str, rps: &[f64], shape: Shape, edit: &dyn Fn(&mut RunSpec)| {
        for (i, r) in rps.iter().enumerate() {
            let mut spec = RunSpec::new(name, scenario, i as u32 + 1, r * factor(name));
            spec.shape = shape;
            edit(&mut spec);
            runs.push(spec);
        }
    };
    // dummy: RPM 113k, 95k, 80k, 25k.
    push("plug", "dummy", &[1_880.0, 1_905.0, 1_860.0], Shape::Wave, &|s| {
        s.resources = Some((140.0, 60.0));
        s.saturated = s.repetition == 2;
    });
    push("japronto", "dummy", &[1_590.0, 1_570.0, 1_600.0], Shape::Erratic, &|s| {
        s.resources = Some((99.0, 22.0));
    });
    push("gin", "dummy", &[1_330.0, 1_345.0, 1_320.0], Shape::Rising, &|s| s.resources = Some((96.0, 14.0)));
    push("flask", "dummy", &[415.0, 420.0, 412.0], Shape::Bump, &|s| {
        s.resources = Some((100.0, 48.0));
        s.errors = vec![("timeout".into(), 12)];
    });
    // event-log: RPM 10k, 6k, and Japronto 3.8% over Flask (5 runs each).
    push("gin-influx", "event-log", &[168.0, 166.0, 167.5, 165.0, 168.5], Shape::Rising, &|s| {
        s.resources = Some((60.0, 16.0));
    });
    push("plug-influx", "event-log", &[97.0, 95.5, 96.0, 98.0, 94.0], Shape::Wave, &|s| {
        s.resources = Some((55.0, 70.0));
    });
    push("japronto-influx", "event-log", &[86.0, 88.5, 84.0, 87.5, 85.0], Shape::Erratic, &|s| {
        s.resources = Some((70.0, 30.0));
        s.errors = vec![("http_503".into(), 4)];
    });
    push("flask-influx", "event-log", &[83.5, 84.0, 83.0, 82.5, 62.0], Shape::Bump, &|s| {
        s.resources = Some((75.0, 52.0));
    });
    push("crashy-influx", "event-log", &[120.0], Shape::Flat, &|s| s.resources = Some((80.0, 35.0)));
    // bubble-sort: too few runs for an interval (the Bubble Benchmark's figures, iterations/s).
    push("tonic", "bubble-sort", &[501.0, 498.0], Shape::Flat, &|s| {
        s.users = 250;
        s.resources = Some((80.5, 2.0));
    });
    push("go-grpc", "bubble-sort", &[369.0, 372.0], Shape::Flat, &|s| {
        s.users = 250;
        s.resources = Some((84.5, 9.0));
    });
    push("node-grpc", "bubble-sort", &[273.0], Shape::Flat, &|s| {
        s.users = 250;
        s.resources = Some((79.5, 54.0));
    });

    let mib = |m: f64| Some((m * 1_048_576.0) as u64);
    let mut crashy = contestant("crashy-influx", "event-log", Some(35.0), mib(6.0));
    crashy.incidents.push(Incident {
        phase: "run".into(),
        kind: "crashed".into(),
        message: "exited with signal 11 (SIGSEGV) after 3.2 s".into(),
        repetition: Some(2),
    });
    let (fastify, japronto) = verified_contestants();
    let contestants = vec![
        contestant("plug", "dummy", Some(812.0), mib(25.3)),
        japronto,
        contestant("gin", "dummy", Some(11.6), mib(9.8)),
        contestant("flask", "dummy", Some(455.0), None),
        fastify,
        contestant("gin-influx", "event-log", Some(14.2), mib(10.4)),
        contestant("plug-influx", "event-log", Some(840.0), mib(26.0)),
        contestant("japronto-influx", "event-log", Some(305.0), None),
        contestant("flask-influx", "event-log", Some(470.0), None),
        crashy,
        contestant("tonic", "bubble-sort", Some(166.6), Some(2_100_000)),
        contestant("go-grpc", "bubble-sort", Some(295.1), Some(3_200_000)),
        contestant("node-grpc", "bubble-sort", Some(1_018.7), Some(45_500_000)),
    ];
    result_set(dir, contestants, &runs)
}

/// [`three_kings_with`] at the published figures.
pub fn three_kings(dir: &str) -> ResultSet {
    three_kings_with(dir, |_| 1.0)
}

/// TLS beside cleartext, as `plans/three-kings-tls.toml` measures it: `dummy` with
/// `gin` and `flask` in the clear and their `-tls` twins over TLS 1.3 (Go agrees
/// X25519MLKEM768, Python's OpenSSL 3.0 X25519), and `nginx-tls` without a twin; 3 runs
/// each, a full handshake per connection.
pub fn tls_beside_cleartext(dir: &str) -> ResultSet {
    // Name, each run's rate, and over TLS its group and handshake time (µs).
    type Stack = (&'static str, [f64; 3], Option<(&'static str, u64)>);
    let stacks: [Stack; 5] = [
        ("gin", [1_330.0, 1_345.0, 1_320.0], None),
        ("gin-tls", [960.0, 975.0, 950.0], Some(("X25519MLKEM768", 900))),
        ("flask", [415.0, 420.0, 412.0], None),
        ("flask-tls", [300.0, 318.0, 296.0], Some(("X25519", 2_400))),
        ("nginx-tls", [2_100.0, 2_080.0, 2_120.0], Some(("X25519", 600))),
    ];
    let mut runs = Vec::new();
    let mut contestants = Vec::new();
    for (name, rps, tls) in stacks {
        for (i, r) in rps.iter().enumerate() {
            let mut run = run_record(&RunSpec::new(name, "dummy", i as u32 + 1, *r));
            run.connections = tls.map(|(group, handshake_us)| tls_connections(group, 64, handshake_us));
            runs.push(run);
        }
        contestants.push(contestant(name, "dummy", Some(12.0), None));
    }
    let mut set = result_set(dir, contestants, &[]);
    set.runs = runs;
    set
}

/// A keep-alive run's connections over TLS 1.3: `opened` full handshakes of about
/// `handshake_us` each.
fn tls_connections(group: &str, opened: u64, handshake_us: u64) -> stackbench_record::Connections {
    let mut connect = new_histogram();
    let mut handshake = new_histogram();
    for i in 0..opened {
        connect.record(80 + i % 7).expect("in range");
        handshake.record(handshake_us + 13 * (i % 11)).expect("in range");
    }
    stackbench_record::Connections {
        opened,
        connect: Latency::from_histogram(&connect),
        connect_histogram: encode_histogram(&connect),
        tls: Some(stackbench_record::TlsRecord {
            version: "TLSv1.3".into(),
            cipher_suite: "TLS13_AES_128_GCM_SHA256".into(),
            key_exchange_group: Some(group.into()),
            alpn: Some("http/1.1".into()),
            others: Vec::new(),
            verified_by: "--cacert cert.pem".into(),
            resumption: false,
            full: opened,
            resumed: 0,
            failed: 0,
            handshake: Latency::from_histogram(&handshake),
            handshake_histogram: encode_histogram(&handshake),
        }),
        first_requests: None,
    }
}

/// One scenario of [`extremes`]: throughput, virtual users, run length,
/// CPU %, RSS MiB, cold start ms and artifact bytes of its first contestant.
type Extreme = (&'static str, f64, u32, u32, f64, f64, f64, u64);

const EXTREMES: [Extreme; 5] = [
    ("tiny", 0.42, 1, 3, 0.8, 0.4, 2.5, 48_000),
    ("small", 95.0, 10, 10, 35.0, 12.0, 35.0, 900_000),
    ("typical", 48_123.0, 256, 30, 190.0, 140.0, 812.0, 25_000_000),
    ("huge", 5_300_000.0, 10, 600, 1_580.0, 12_500.0, 45_000.0, 3_400_000_000),
    ("slow", 3.0, 400, 60, 99.0, 800.0, 9_000.0, 700_000_000),
];

/// Contestants of [`extremes`]; the `-alone` scenarios have the first only.
pub const EXTREME_NAMES: [&str; 5] =
    ["plug", "japronto", "a-contestant-with-a-really-long-name-indeed", "gin", "flask"];

/// Scenarios at the edges of what the charts must show: for each of
/// `tiny`, `small`, `typical`, `huge` and `slow`, five contestants (one with
/// a long name) and, as `<name>-alone`, the first of them alone; 3 runs each.
/// Names repeat across scenarios: for rendering, not for [`write`].
pub fn extremes(dir: &str) -> ResultSet {
    let mut runs = Vec::new();
    let mut contestants = Vec::new();
    for (name, rps, users, seconds, cpu, rss, cold, artifact) in EXTREMES {
        for (scenario, names) in
            [(name.to_owned(), &EXTREME_NAMES[..]), (format!("{name}-alone"), &EXTREME_NAMES[..1])]
        {
            for (i, c) in names.iter().enumerate() {
                let f = 1.0 - 0.17 * i as f64;
                for rep in 1..=3 {
                    let mut spec = RunSpec::new(c, &scenario, rep, rps * f * (1.0 + 0.01 * f64::from(rep)));
                    spec.users = users;
                    spec.duration_s = seconds;
                    spec.shape =
                        [Shape::Wave, Shape::Erratic, Shape::Rising, Shape::Bump, Shape::Flat][i % 5];
                    spec.resources = Some((cpu * f, rss * f));
                    runs.push(spec);
                }
                contestants.push(contestant(
                    c,
                    &scenario,
                    Some(cold * f),
                    Some((artifact as f64 * f) as u64),
                ));
            }
        }
    }
    result_set(dir, contestants, &runs)
}

/// Writes a result set as the orchestrator lays it out (manifest,
/// `contestants/`, `runs/`), into `dir`.
pub fn write(set: &ResultSet, dir: &Path) -> Result<(), StoreError> {
    write_json_atomic(&dir.join(MANIFEST), &set.manifest)?;
    for c in &set.contestants {
        write_json_atomic(&contestant_path(dir, &c.name), c)?;
    }
    for (i, r) in set.runs.iter().enumerate() {
        let name = r.label.contestant.as_deref().unwrap_or("unnamed");
        let path =
            dir.join(RUNS_DIR).join(run_file_name(i as u32 + 1, name, r.label.repetition.unwrap_or(1)));
        write_json_atomic(&path, r)?;
    }
    Ok(())
}
