//! The whole lifecycle against fakes: a launcher whose "processes" are
//! behaviours named by `argv[0]`, a prober that answers as the running fake
//! would, a load driver that sleeps and returns a synthetic record, and a
//! limiter that can refuse. No process, no socket.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stackbench_record::{Environment, Label, ResultSet, RunRecord, Status};
use stackbench_report::synthetic::{RunSpec, run_record};

use super::*;
use crate::cgroup::{Applied, CgroupCounters, LimitError};
use crate::client::{Probe, ProbeError, Reply};
use crate::plan::PlanContext;
use crate::process::{Exit, LaunchError, LaunchSpec, StopReport};
use crate::sampler::ProcId;
use crate::sampler::Stat;

#[derive(Default)]
struct World {
    /// The behaviour of the running fake server and when it started.
    running: Option<(String, Instant)>,
    load_started: Option<Instant>,
    spawned: Vec<String>,
    stops: u32,
    max_alive: u32,
    alive: u32,
    interrupt_on_load: Option<Cancel>,
    /// What the next loads do, in order: `"zero"` completes nothing, `"panic"`
    /// panics in the load's thread, `"stuck"` leaves a load thread running; empty: a normal run.
    load_script: std::collections::VecDeque<&'static str>,
    /// A load left a thread running ([`LoadDriver::stuck`]).
    stuck: bool,
    /// The correct answers per second of the next runs, in order; empty: 20.
    rates: std::collections::VecDeque<f64>,
    /// How long the next loads take, in order; empty: 60 ms.
    took: std::collections::VecDeque<Duration>,
    /// The second from which the next warm-ups (of profiles with a `warmup`) were steady, in
    /// order (`None`: never steady); empty: a run without a warm-up.
    steady: std::collections::VecDeque<Option<u32>>,
    /// The `warmup` of each load's profile, in order.
    warmups_asked: Vec<String>,
    /// `DELETE /todos` requests answered (a scenario file's reset).
    deletes: u32,
    peers: builds::Peers,
    /// A plan's companion, running beside the contestant: its port and its correct answers
    /// per second; the contestant beside it answers a tenth of that (a fast machine, a slow one).
    beside: Option<(String, f64)>,
    /// The companions' rates, one per start, in order; empty: 100.
    beside_rates: std::collections::VecDeque<f64>,
    /// Last output asked of a process still running (the real one waits for it to end).
    live_tails: u32,
    /// A fixed `warmup` is waited out before the measured window (`started_at_ms`) begins.
    timed_warmups: bool,
    /// CPU quotas written to live groups, and companions' loads started, in order.
    events: Vec<String>,
    /// A CPU quota whose write fails.
    refused_quota: Option<f64>,
}

type Shared = Arc<Mutex<World>>;

struct FakeLauncher(Shared);
struct FakeProcess {
    world: Shared,
    kind: String,
    exit: Option<Exit>,
    stopped: bool,
    beside: bool,
}

impl Launcher for FakeLauncher {
    fn spawn(&self, spec: &LaunchSpec) -> Result<Box<dyn Process>, LaunchError> {
        let kind = spec.argv[0].clone();
        if kind == "missing" {
            return Err(LaunchError::Spawn {
                program: kind,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
                hint: String::new(),
            });
        }
        if let Some(n) = kind.strip_prefix("peer:") {
            return Ok(builds::peer(&self.0, n.parse().unwrap(), spec));
        }
        let mut w = self.0.lock().unwrap();
        w.spawned.push(spec.argv.join(" "));
        let exit = kind.strip_prefix("exit:").map(|c| Exit::Code(c.parse().unwrap()));
        // A second process while one runs is a plan's companion, beside it.
        let beside = exit.is_none() && w.running.is_some();
        if beside {
            assert!(w.beside.is_none(), "three contestants at once");
            let rate = w.beside_rates.pop_front().unwrap_or(100.0);
            w.beside = Some((spec.argv.last().cloned().unwrap_or_default(), rate));
        } else if exit.is_none() {
            w.running = Some((kind.clone(), Instant::now()));
        }
        if exit.is_none() {
            w.alive += 1;
            w.max_alive = w.max_alive.max(w.alive);
        }
        Ok(Box::new(FakeProcess { world: Arc::clone(&self.0), kind, exit, stopped: false, beside }))
    }
}

impl Process for FakeProcess {
    fn pid(&self) -> u32 {
        4242
    }
    fn try_exit(&mut self) -> Option<Exit> {
        if self.exit.is_some() || self.stopped {
            return self.exit;
        }
        let mut w = self.world.lock().unwrap();
        let crash = match self.kind.as_str() {
            "crash-on-start" => true,
            "crash-mid-run" => w.load_started.is_some_and(|t| t.elapsed() > Duration::from_millis(30)),
            _ => false,
        };
        if crash {
            self.exit = Some(Exit::Signal(libc::SIGSEGV));
            w.running = None;
            w.alive -= 1;
        }
        self.exit
    }
    fn stop(&mut self, _: Duration, _: &[ProcId]) -> StopReport {
        let already_exited = self.try_exit().is_some();
        let mut w = self.world.lock().unwrap();
        if !already_exited && !self.stopped {
            if self.beside {
                w.beside = None;
            } else {
                w.running = None;
            }
            w.alive -= 1;
            w.stops += 1;
        }
        self.stopped = true;
        let killed = self.kind == "ignores-sigterm" && !already_exited;
        StopReport { exit: self.exit.or(Some(Exit::Signal(libc::SIGTERM))), killed, already_exited }
    }
    fn output_tail(&self) -> String {
        if self.exit.is_none() && !self.stopped {
            self.world.lock().unwrap().live_tails += 1;
        }
        format!("last words of {}", self.kind)
    }
}

struct FakeProber(Shared);

impl FakeProber {
    /// A dummy (or event-log) contestant of kind `kind`: good events get {"count":1}
    /// (`"wrong"`: {"count":2}), bad ones 400 (`"lenient"`: 200).
    fn events(kind: &str, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
        let json = Some(b"application/json".to_vec());
        let count = if kind == "wrong" { r#"{"count":2}"# } else { r#"{"count":1}"# };
        let ok_event = content_type == Some("application/json")
            && body.len() <= 65536
            && stackbench_contract::event::parse_event(body).is_ok();
        let (status, body, headers) = match (method, path) {
            ("GET", "/events/count") => (200, count, vec![]),
            ("POST", "/events") if body.len() > 65536 => (413, r#"{"error":"big"}"#, vec![]),
            ("POST", "/events") if ok_event || kind == "lenient" => (200, count, vec![]),
            ("POST", "/events") => (400, r#"{"error":"field `type` or `timestamp` is bad"}"#, vec![]),
            (_, "/events") => (405, r#"{"error":"m"}"#, vec![("allow".to_owned(), b"POST".to_vec())]),
            _ => (404, r#"{"error":"no"}"#, vec![]),
        };
        let headers = [vec![("content-type".to_owned(), b"application/json".to_vec())], headers].concat();
        Reply {
            status,
            content_type: json,
            headers,
            grpc_status: None,
            body: body.as_bytes().to_vec(),
            peer: None,
        }
    }
}

impl Prober for FakeProber {
    /// The built-in scenarios' requests (their files'), and a todo service for scenario
    /// files: `POST /todos` 201 a new todo (`"wrong"`: done already), `DELETE /todos` 204
    /// (`"noreset"`: 500), anything else 404.
    fn send_http1(&self, probe: &Probe<'_>) -> Result<Reply, ProbeError> {
        let Probe { url, method, headers, body, .. } = *probe;
        let mut w = self.0.lock().unwrap();
        let path = url.splitn(4, '/').nth(3).unwrap_or("");
        let kind = match &w.running {
            Some((k, _)) if k == "never-ready" && path.starts_with("events") => {
                return Err(ProbeError::Refused);
            }
            Some((k, t)) if t.elapsed() >= Duration::from_millis(3) => k.clone(),
            _ => return Err(ProbeError::Refused),
        };
        if path.starts_with("events") {
            let content_type =
                headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|h| h.1);
            return Ok(FakeProber::events(&kind, method, &format!("/{path}"), content_type, body));
        }
        let (status, body) = match (method, path) {
            ("POST", "todos") => (201, format!(r#"{{"id":1,"title":"milk","done":{}}}"#, kind == "wrong")),
            ("DELETE", "todos") => {
                w.deletes += 1;
                (if kind == "noreset" { 500 } else { 204 }, String::new())
            }
            _ => (404, r#"{"error":"no"}"#.to_owned()),
        };
        let json = Some(b"application/json".to_vec());
        Ok(Reply {
            status,
            content_type: json,
            headers: vec![],
            grpc_status: None,
            body: body.into_bytes(),
            peer: None,
        })
    }
}

struct FakeLoad(Shared);

fn record(url: &str, interrupted: bool) -> RunRecord {
    let spec = RunSpec {
        users: 1,
        duration_s: 1,
        resources: None,
        interrupted,
        ..RunSpec::new("", "dummy", 1, 20.0)
    };
    let mut r = run_record(&spec);
    // The orchestrator labels a run and samples its contestant; the engine does neither.
    r.label = Label::default();
    r.params.url = url.into();
    // Nobody waits on a fake contestant, whose sampled CPU is next to nothing: not starved.
    for second in &mut r.timeline {
        second.in_flight = 0;
    }
    r
}

impl LoadDriver for FakeLoad {
    fn check(&self, job: &LoadJob) -> Result<(), String> {
        match job.profile.keys().find(|k| *k == "seed") {
            Some(k) => Err(format!("this driver cannot take `{k}`")),
            None => Ok(()),
        }
    }
    fn run(&self, job: &LoadJob, cancel: &Cancel) -> Result<RunRecord, String> {
        let beside = self.0.lock().unwrap().beside.clone();
        if let Some((_, rate)) = beside
            .as_ref()
            .filter(|(p, _)| job.url.ends_with(&format!(":{p}")) || job.url.contains(&format!(":{p}/")))
        {
            self.0.lock().unwrap().events.push("companion load".to_owned());
            return Ok(FakeLoad::companion(job, cancel, *rate));
        }
        if let Some((_, rate)) = beside {
            self.0.lock().unwrap().rates.push_front(rate / 10.0);
        }
        let hook = {
            let mut w = self.0.lock().unwrap();
            w.load_started = Some(Instant::now());
            assert!(w.running.is_some() || job.url.contains(":9"), "load without a contestant");
            // "twice" doubles the rate it is given; "forty" answers 40/s, or 41 when given an odd one.
            let kind = w.running.as_ref().map(|(k, _)| k.clone()).unwrap_or_default();
            let asked = job.profile.get("warmup").map(|v| v.as_str().unwrap_or_default().to_owned());
            if w.running.is_some() {
                w.warmups_asked.extend(asked);
            }
            (
                w.interrupt_on_load.take(),
                w.load_script.pop_front(),
                w.rates.pop_front().map(|r| match kind.as_str() {
                    "twice" => 2.0 * r,
                    "forty" => 40.0 + r % 2.0,
                    _ => r,
                }),
            )
        };
        let (hook, script, rate) = hook;
        let took = self.0.lock().unwrap().took.pop_front().unwrap_or(Duration::from_millis(60));
        // Only a profile that asks for a warm-up gets one.
        let steady = job.profile.get("warmup").and_then(|_| self.0.lock().unwrap().steady.pop_front());
        if script == Some("panic") {
            self.0.lock().unwrap().load_started = None;
            panic!("a fake engine bug");
        }
        if let Some(c) = hook {
            c.cancel();
        }
        let fixed = job.profile.get("warmup").and_then(|v| v.as_str()?.parse::<stackbench_load::Dur>().ok());
        let warm = fixed.filter(|_| self.0.lock().unwrap().timed_warmups).map_or(Duration::ZERO, |d| d.0);
        let started_at_ms = crate::store::now_ms() + warm.as_millis() as u64;
        let until = Instant::now() + warm + took;
        while Instant::now() < until && !cancel.is_cancelled() {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.0.lock().unwrap().load_started = None;
        let mut r = RunRecord { started_at_ms, ..record(&job.url, cancel.is_cancelled()) };
        if let Some(rate) = rate {
            // Counts over one second, so that the record agrees with itself.
            let s = &mut r.summary;
            (s.duration_s, s.requests, s.ok, s.rps, s.ok_rps) = (1.0, rate as u64, rate as u64, rate, rate);
        }
        if let Some(steady_from_s) = steady {
            r.warmup = Some(stackbench_record::Warmup {
                auto: job.profile.get("warmup").and_then(toml::Value::as_str) == Some("auto"),
                max_s: None,
                steady_from_s,
                never_steady: steady_from_s.is_none(),
                summary: r.summary.clone(),
                errors: BTreeMap::new(),
                timeline: Vec::new(),
            });
        }
        if script == Some("zero") {
            r.summary.requests = 0;
            r.summary.ok = 0;
        }
        if script == Some("stuck") {
            self.0.lock().unwrap().stuck = true;
            r.invalid = Some(stackbench_record::Invalid::new("tool_failure", "sb-load-0 did not finish"));
        }
        Ok(r)
    }

    fn stuck(&self) -> Option<String> {
        self.0.lock().unwrap().stuck.then(|| "1 load worker thread(s) are still running".to_owned())
    }
}

impl FakeLoad {
    /// A companion's load: until the run beside it ends, then a record whose seconds cover
    /// the last ten, each at its next rate.
    fn companion(job: &LoadJob, cancel: &Cancel, rate: f64) -> RunRecord {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until && !cancel.is_cancelled() {
            std::thread::sleep(Duration::from_millis(2));
        }
        let started_at_ms = crate::store::now_ms() - 9_000;
        let mut r = RunRecord { started_at_ms, ..record(&job.url, true) };
        let second = r.timeline[0].clone();
        r.timeline = (0..10)
            .map(|t| stackbench_record::Second { t, completed: rate as u64, ..second.clone() })
            .collect();
        r.summary.duration_s = 10.0;
        r
    }
}

struct FakeLimiter(bool, Shared);
struct NoGroup(Shared);
impl LimitGroup for NoGroup {
    fn set_cpu_quota(&self, cores: f64) -> Result<(), String> {
        let mut w = self.0.lock().unwrap();
        w.events.push(format!("quota {cores}"));
        if w.refused_quota == Some(cores) { Err(format!("{cores} refused")) } else { Ok(()) }
    }
    fn procs_files(&self) -> Vec<PathBuf> {
        vec![]
    }
    fn counters(&self) -> CgroupCounters {
        CgroupCounters { memory_bytes: 5, ..CgroupCounters::default() }
    }
    fn applied(&self) -> Applied {
        Applied { request: LimitRequest { cpu_quota: Some(1.0), memory: None }, version: 2 }
    }
}
impl Limiter for FakeLimiter {
    fn create(&self, _: &str, _: LimitRequest) -> Result<Box<dyn LimitGroup>, LimitError> {
        if self.0 {
            Ok(Box::new(NoGroup(Arc::clone(&self.1))))
        } else {
            Err(LimitError { what: "cpu_quota = 1".into(), why: "no cgroups here".into() })
        }
    }
}

struct NoProcs;
impl ProcSource for NoProcs {
    fn all(&mut self) -> Vec<Stat> {
        vec![Stat { pid: 4242, state: 'S', ppid: 1, pgrp: 4242, ticks: 0, threads: 3, start: 1 }]
    }
    fn rss_bytes(&mut self, _: i32) -> u64 {
        1 << 20
    }
    fn fds(&mut self, _: i32) -> u64 {
        7
    }
    fn ticks_per_second(&self) -> u64 {
        100
    }
}

struct Harness {
    world: Shared,
    /// The result directory, in `_scratch` (removed with the harness).
    dir: PathBuf,
    _scratch: tempfile::TempDir,
    lines: Vec<String>,
    /// The machine the next run says it runs on.
    environment: Environment,
    report_follows: bool,
}

#[test]
fn the_toolchains_required_and_the_lockfiles_of_the_sources_are_recorded() {
    let mut h = Harness::new("provenance");
    let scratch = tempfile::Builder::new().prefix("sb-lifecycle-provenance-src-").tempdir().unwrap();
    let src = scratch.path();
    std::fs::create_dir_all(src.join("node_modules")).unwrap();
    std::fs::write(src.join("go.sum"), b"abc").unwrap();
    std::fs::write(src.join("node_modules/package-lock.json"), b"installed, not pinned").unwrap();
    let p = plan(&contestant(
        "ok",
        "good",
        &format!("requires = [\"sh\"]\nsource = [{:?}]", src.display().to_string()),
    ));
    h.run(&p);
    let set = h.results();
    let ok = set.contestants.iter().find(|c| c.name == "ok").unwrap();
    assert_eq!(ok.toolchains.keys().collect::<Vec<_>>(), ["sh"], "{ok:?}");
    let lockfiles: Vec<(&str, &str)> =
        ok.lockfiles.iter().map(|l| (l.path.as_str(), l.sha256.as_str())).collect();
    assert_eq!(lockfiles, [("go.sum", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")]);
}

fn plan(contestants: &str) -> Plan {
    let text = format!(
        "[defaults]\nrepetitions = 2\ncold_starts = 2\nready_timeout = \"300ms\"\nsample_interval = \"10ms\"\nseed = 3\n{contestants}"
    );
    Plan::parse(&text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap()
}

fn contestant(name: &str, kind: &str, extra: &str) -> String {
    format!(
        "[[contestant]]\nname = \"{name}\"\nscenario = \"dummy\"\ncommand = [\"{kind}\", \"--port\", \"{{port}}\"]\n{extra}\n"
    )
}

impl Harness {
    fn new(tag: &str) -> Harness {
        let scratch = tempfile::Builder::new().prefix(&format!("sb-lifecycle-{tag}-")).tempdir().unwrap();
        Harness {
            world: Shared::default(),
            dir: scratch.path().join("results"),
            _scratch: scratch,
            lines: Vec::new(),
            environment: Environment::default(),
            report_follows: false,
        }
    }

    fn run_with(
        &mut self,
        plan: &Plan,
        limits: bool,
        resume: bool,
        interrupt: Cancel,
    ) -> Result<Outcome, RunError> {
        let launcher = FakeLauncher(Arc::clone(&self.world));
        let prober = FakeProber(Arc::clone(&self.world));
        let load = FakeLoad(Arc::clone(&self.world));
        let limiter = FakeLimiter(limits, Arc::clone(&self.world));
        let procs = || Box::new(NoProcs) as Box<dyn ProcSource>;
        let deps =
            Deps { launcher: &launcher, prober: &prober, load: &load, limiter: &limiter, procs: &procs };
        let opts = RunOptions {
            out: self.dir.clone(),
            resume,
            stackbench: PathBuf::from("/opt/stackbench"),
            bin_dir: PathBuf::from("/opt"),
            interrupt,
            environment: self.environment.clone(),
            cpus: vec![0, 1],
            seed: 1,
            report_follows: self.report_follows,
        };
        let lines = &mut self.lines;
        run_plan(plan, &opts, &deps, &mut |l| lines.push(l.to_owned()))
    }

    fn run(&mut self, plan: &Plan) -> Outcome {
        self.run_with(plan, true, false, Cancel::new()).unwrap()
    }

    fn results(&self) -> ResultSet {
        ResultSet::load(&self.dir).unwrap()
    }
}

#[test]
fn good_contestants_are_measured_interleaved_one_at_a_time() {
    let mut h = Harness::new("good");
    let p =
        plan(&(contestant("a", "good", "") + &contestant("b", "good", "") + &contestant("c", "good", "")));
    let out = h.run(&p);
    assert_eq!((out.runs, out.interrupted, out.failed.len()), (6, false, 0), "{:#?}", h.lines);
    let set = h.results();
    assert_eq!(set.manifest.status, Status::Complete);
    assert_eq!(set.runs.len(), 6);
    let order: Vec<(String, u32)> =
        set.runs.iter().map(|r| (r.label.contestant.clone().unwrap(), r.label.repetition.unwrap())).collect();
    assert!(order[..3].iter().all(|(_, r)| *r == 1) && order[3..].iter().all(|(_, r)| *r == 2), "{order:?}");
    assert!(order.windows(2).all(|w| w[0].0 != w[1].0), "nobody twice in a row: {order:?}");
    for r in &set.runs {
        let s = r.samples.as_ref().expect("started contestants are sampled");
        assert_eq!((s.threads_max, s.fds_max), (3, 7));
        assert!(s.cgroup.is_none());
        assert_eq!(r.label.scenario.as_deref(), Some("dummy"));
        assert!(r.params.url.starts_with("http://127.0.0.1:"));
    }
    for c in &set.contestants {
        // The verification's start and each run's are the 2 cold starts asked for, and one more.
        assert_eq!(c.cold_start_ms.len(), 3);
        assert_eq!(c.cold_start.unwrap().n, 3);
        assert!(c.verification.as_ref().unwrap().passed);
        assert!(c.incidents.is_empty(), "{:?}", c.incidents);
    }
    let w = h.world.lock().unwrap();
    assert_eq!(w.max_alive, 1, "one contestant at a time");
    assert_eq!(w.alive, 0, "every start was stopped");
    // 3 × (1 verification + 2 runs): no start apart for the cold starts
    assert_eq!(w.spawned.len(), 9);
    assert!(w.spawned.iter().all(|a| !a.contains("{port}")), "{:?}", w.spawned);
}

#[test]
fn cold_starts_beyond_what_the_runs_give_are_started_apart_and_none_when_asked_for_none() {
    let mut h = Harness::new("cold");
    let p = plan(&(contestant("a", "good", "cold_starts = 5") + &contestant("b", "good", "cold_starts = 0")));
    h.run(&p);
    let set = h.results();
    let cold = |n: &str| set.contestants.iter().find(|c| c.name == n).unwrap().clone();
    // 5 asked: 2 apart, the verification's start, 2 runs' starts.
    assert_eq!(cold("a").cold_start_ms.len(), 5);
    assert!(cold("a").cold_start_resolution_ms.is_some());
    assert!(cold("b").cold_start_ms.is_empty() && cold("b").cold_start.is_none());
    let w = h.world.lock().unwrap();
    // a: 2 apart + 1 verification + 2 runs; b: 1 verification + 2 runs.
    assert_eq!(w.spawned.len(), 8);
    assert!(h.lines.iter().any(|l| l.contains("over 3 start(s) so far")), "{:#?}", h.lines);
}

#[test]
fn optional_contestants_are_skipped_with_the_reason_not_left_out() {
    let mut h = Harness::new("optional");
    let p = plan(
        &[
            contestant("nogo", "good", "optional = true\nrequires = [\"no-such-program-sb\"]"),
            contestant("badinstall", "good", "optional = true\nbuild = [\"exit:1\"]"),
            contestant("required", "good", "build = [\"exit:1\"]"),
            contestant("ok", "good", "requires = [\"sh\"]"),
        ]
        .concat(),
    );
    let out = h.run(&p);
    let skipped: BTreeMap<String, String> = out.skipped.into_iter().collect();
    let failed: BTreeMap<String, String> = out.failed.into_iter().collect();
    assert_eq!(skipped.keys().collect::<Vec<_>>(), ["badinstall", "nogo"], "{skipped:?}");
    assert_eq!(skipped["nogo"], "no `no-such-program-sb` on PATH");
    assert_eq!(failed.keys().collect::<Vec<_>>(), ["required"], "{failed:?}");
    let set = h.results();
    let nogo = set.contestants.iter().find(|c| c.name == "nogo").unwrap();
    assert_eq!((nogo.incidents[0].phase.as_str(), nogo.incidents[0].kind.as_str()), ("build", "skipped"));
    assert!(set.runs.iter().any(|r| r.label.contestant.as_deref() == Some("ok")));
    assert!(!set.runs.iter().any(|r| r.label.contestant.as_deref() == Some("nogo")));
}

#[test]
fn failures_are_recorded_and_the_plan_goes_on() {
    let mut h = Harness::new("failures");
    let p = plan(
        &[
            contestant("never", "never-ready", ""),
            contestant("crash", "crash-on-start", ""),
            contestant("wrong", "wrong", ""),
            contestant("lenient", "lenient", ""),
            contestant("strict", "lenient", "verify = \"strict\""),
            contestant("missing", "missing", ""),
            contestant("mid", "crash-mid-run", ""),
            contestant("badreset", "good", "reset = [\"exit:3\"]"),
            contestant("ok", "good", "reset = [\"exit:0\"]"),
        ]
        .concat(),
    );
    let out = h.run(&p);
    let failed: BTreeMap<String, String> = out.failed.into_iter().collect();
    assert_eq!(failed.len(), 6, "{failed:?}");
    assert!(!failed.contains_key("lenient") && failed.contains_key("strict"), "{failed:?}");
    let set = h.results();
    let incident = |name: &str| set.contestants.iter().find(|c| c.name == name).unwrap().incidents.clone();
    assert_eq!(incident("never")[0].kind, "never_ready");
    assert!(incident("never")[0].message.contains("last words"), "{:?}", incident("never"));
    assert_eq!(incident("crash")[0].kind, "crashed");
    assert_eq!(incident("missing")[0].kind, "failed_to_start");
    assert_eq!(incident("badreset")[0].phase, "reset");
    // A wrong answer to the readiness probe already stops it at its first start.
    assert_eq!(
        (incident("wrong")[0].phase.as_str(), incident("wrong")[0].kind.as_str()),
        ("verify", "wrong_answer")
    );
    // One that accepts bad input breaks hardening rules only: measured, with what it does not
    // enforce; under verify = "strict" the same contestant is left out with the rule it broke.
    let lenient = set.contestants.iter().find(|c| c.name == "lenient").unwrap();
    let v = lenient.verification.as_ref().unwrap();
    assert!(v.passed && v.failures.iter().any(|f| f.rule == "malformed JSON gets 400"), "{v:?}");
    assert!(v.not_enforced().contains(&"JSON syntax"), "{v:?}");
    assert!(lenient.incidents.is_empty(), "{:?}", lenient.incidents);
    assert!(failed["strict"].contains("broke the rule"), "{failed:?}");
    let strict = set.contestants.iter().find(|c| c.name == "strict").unwrap();
    assert_eq!(strict.incidents[0].kind, "wrong_answer");
    // Crashing mid-run is measured (the errors are data), recorded, and the next repetition starts afresh.
    let mid = incident("mid");
    assert_eq!(mid.iter().filter(|i| i.kind == "crashed" && i.phase == "run").count(), 2, "{mid:?}");
    let measured: Vec<&str> = set.runs.iter().filter_map(|r| r.label.contestant.as_deref()).collect();
    assert_eq!(measured.iter().filter(|n| **n == "ok").count(), 2);
    assert_eq!(measured.iter().filter(|n| **n == "mid").count(), 2);
    assert!(!measured.contains(&"wrong") && !measured.contains(&"never") && !measured.contains(&"strict"));
    assert_eq!(measured.iter().filter(|n| **n == "lenient").count(), 2);
    assert_eq!(h.world.lock().unwrap().alive, 0);
}

#[test]
fn an_interrupt_saves_the_current_run_and_resume_finishes_the_plan() {
    let mut h = Harness::new("interrupt");
    let p = plan(&(contestant("a", "good", "") + &contestant("b", "good", "")));
    let interrupt = Cancel::new();
    h.world.lock().unwrap().interrupt_on_load = Some(interrupt.clone());
    let out = h.run_with(&p, true, false, interrupt).unwrap();
    assert!(out.interrupted && out.runs == 1);
    let set = h.results();
    assert_eq!(set.manifest.status, Status::Interrupted);
    assert!(set.runs[0].interrupted);
    assert_eq!(h.world.lock().unwrap().alive, 0, "nothing left running");

    h.environment.kernel = "another-kernel".to_owned();
    let e = h.run_with(&p, true, true, Cancel::new()).unwrap_err().to_string();
    assert!(e.contains("another machine") && e.contains("kernel: \"\" → \"another-kernel\""), "{e}");
    assert_eq!(h.results().manifest.status, Status::Interrupted, "a refused resume changes nothing");
    h.environment.kernel = String::new();
    let out = h.run_with(&p, true, true, Cancel::new()).unwrap();
    assert_eq!((out.runs, out.interrupted), (4, false));
    let set = h.results();
    assert_eq!(set.manifest.status, Status::Complete);
    assert_eq!(set.runs.len(), 4, "the interrupted run was set aside and measured again");
    assert!(set.runs.iter().all(|r| !r.interrupted));
    assert!(
        h.lines.iter().filter(|l| l.contains("verified")).count() == 2,
        "no second verification on resume"
    );
    let changed = plan(&contestant("a", "good", ""));
    let e = h.run_with(&changed, true, true, Cancel::new()).unwrap_err().to_string();
    assert!(e.contains("different plan"), "{e}");
}

#[test]
fn limits_refuse_to_run_unless_best_effort() {
    let mut h = Harness::new("limits");
    let strict = plan(&contestant("a", "good", "cpu_quota = 1.0"));
    let e = h.run_with(&strict, false, false, Cancel::new()).unwrap_err().to_string();
    assert!(e.contains("best-effort") && e.contains("no cgroups"), "{e}");
    assert!(!h.dir.join("manifest.json").exists(), "refused before anything started");

    let best = plan(&contestant("a", "good", "cpu_quota = 1.0\nlimits = \"best-effort\""));
    let out = h.run_with(&best, false, false, Cancel::new()).unwrap();
    assert_eq!(out.runs, 2);
    let set = h.results();
    assert_eq!(set.contestants[0].incidents[0].kind, "limits_not_applied");

    let mut h2 = Harness::new("limits-ok");
    h2.run(&strict);
    let cg = h2.results().runs[0].samples.as_ref().unwrap().cgroup.unwrap();
    assert_eq!(cg.cpu_quota, Some(1.0));
}

#[test]
fn bad_load_profiles_are_refused_first_and_external_servers_are_not_started() {
    let mut h = Harness::new("profile");
    // A key the plan accepts but the driver refuses: refused before anything starts, at its place.
    let bad = plan(&contestant("a", "good", "load = { seed = 13 }"));
    let e = h.run_with(&bad, true, false, Cancel::new()).unwrap_err().to_string();
    assert!(e.contains("\"a\"") && e.contains("cannot take `seed`"), "{e}");
    assert!(e.starts_with("<plan>:11:17:"), "{e}");
    assert!(h.world.lock().unwrap().spawned.is_empty());

    // An external server: verified and loaded, never started, sampled or reset.
    h.world.lock().unwrap().running =
        Some(("good".into(), Instant::now().checked_sub(Duration::from_secs(1)).unwrap()));
    let ext = plan("[[contestant]]\nname = \"ext\"\nscenario = \"dummy\"\nurl = \"http://127.0.0.1:9\"\n");
    let out = h.run(&ext);
    assert_eq!(out.runs, 2);
    let set = h.results();
    assert!(set.runs.iter().all(|r| r.samples.is_none()));
    assert!(set.contestants[0].external && set.contestants[0].cold_start.is_none());
    assert!(h.lines.iter().any(|l| l.contains("no cold start, no sampling")));
}

#[test]
fn rounds_stop_as_soon_as_the_precision_is_met() {
    let mut h = Harness::new("precision-met");
    let p = plan(&format!(
        "precision = \"3%\"\nmax_repetitions = 6\n{}{}",
        contestant("a", "good", ""),
        contestant("b", "good", "")
    ));
    let out = h.run(&p);
    assert_eq!(out.runs, 6, "{:#?}", h.lines);
    let set = h.results();
    let s = set.stopping.clone().unwrap();
    assert_eq!((s.reason.as_str(), s.rounds, s.first_look, s.planned_looks), ("met", 3, 3, 4));
    assert!((s.look_confidence - 0.9875).abs() < 1e-12);
    assert_eq!(s.orders.len(), 3);
    assert!(
        s.orders.iter().all(|o| {
            let mut o = o.clone();
            o.sort();
            o == ["a", "b"]
        }),
        "{:?}",
        s.orders
    );
    assert!(h.lines.iter().any(|l| l.starts_with("precision: met ±3% after 3 rounds")), "{:#?}", h.lines);
    let decided: Vec<_> = h.lines.iter().filter(|l| l.starts_with("decided after round")).collect();
    assert_eq!(decided.len(), 1, "{:#?}", h.lines);
    assert!(decided[0].contains(": 'a' and 'b' are tied: within ±"), "{}", decided[0]);
}

#[test]
fn a_budget_without_a_precision_is_refused() {
    let text = "[defaults]\nmax_repetitions = 5\n[[contestant]]\nname = \"a\"\nscenario = \"dummy\"\ncommand = [\"x\"]\n";
    let e = Plan::parse(text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap_err();
    assert!(e.message.contains("set `precision`"), "{e}");
    let text = text.replace("max_repetitions = 5", "precision = \"3%\"\nmax_repetitions = 2");
    let e = Plan::parse(&text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap_err();
    assert!(e.message.contains("at least 3"), "{e}");
    let text = text.replace("max_repetitions = 2", "max_time = \"90s\"");
    let p = Plan::parse(&text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap();
    assert_eq!(p.precision.unwrap().max_time, Some(Duration::from_secs(90)));
    assert!(p.estimated_duration() <= Duration::from_secs(90 + 5), "{:?}", p.estimated_duration());
    let mut p = p;
    assert!(p.set_precision(Some(0.05), Some(4), None).is_ok());
    assert_eq!(p.precision.unwrap().max_repetitions, 4);
}

#[test]
fn a_time_budget_alone_sizes_the_looks_to_the_rounds_it_holds() {
    let text = |time: &str| {
        format!(
            "[defaults]\nprecision = \"5%\"\nmax_time = \"{time}\"\n[load.dummy]\nwarmup = \"1s\"\nduration = \"9s\"\n\
             [[contestant]]\nname = \"a\"\nscenario = \"dummy\"\ncommand = [\"x\"]\n"
        )
    };
    let ctx = PlanContext { cpus: vec![0, 1], variant: None };
    // A run is 1 s of warm-up, 9 s measured and 1 s of overhead: 90 s hold 8 rounds.
    let mut p = Plan::parse(&text("90s"), None, &ctx).unwrap();
    p.set_precision(None, None, None).unwrap();
    let pr = p.precision.unwrap();
    assert_eq!((pr.max_repetitions, pr.max_repetitions_given), (8, false));
    assert_eq!(pr.looks(p.repetitions), (3, 6, 1.0 - 0.05 / 6.0));
    // Never fewer than the first look, never more than the default budget.
    let mut p = Plan::parse(&text("20s"), None, &ctx).unwrap();
    p.set_precision(None, None, None).unwrap();
    assert_eq!(p.precision.unwrap().max_repetitions, 3);
    let mut p = Plan::parse(&text("1h"), None, &ctx).unwrap();
    p.set_precision(None, None, None).unwrap();
    assert_eq!(p.precision.unwrap().max_repetitions, 20);
    // A count given (in the plan or on the command line) is kept as given.
    let mut p = Plan::parse(&text("90s"), None, &ctx).unwrap();
    p.set_precision(None, Some(12), None).unwrap();
    assert_eq!(p.precision.unwrap().max_repetitions, 12);
}

mod builds;
mod companion;
mod file;
mod incidents;
mod precision;
mod warm_core;
mod warmups;
