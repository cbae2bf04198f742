//! [`run`]: one load run from a [`LoadSpec`] to a [`RunRecord`]. It resolves
//! and probes the target, starts one pinned worker thread per core (each with
//! its own current-thread runtime, see [`crate::worker`]), collects their
//! seconds on the calling thread (the warm-up's apart, [`crate::warmup`], which
//! may end it early under `--warmup auto`), measures the generator's own CPU
//! time over the measured phase, and builds the record.

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use stackbench_record::{
    Environment, GeneratorUsage, LoadParams, Model, Named, RunRecord, SCHEMA_VERSION, Stage, encode_histogram,
};

use crate::collect::{Collector, Progress, Totals};
use crate::fault::{self, Fault};
use crate::hlog::HlogWriter;
use crate::load_error::LoadError;
use crate::spec::{Bound, LoadSpec, ModelSpec, RequestSource};
use crate::stop::Stop;
use crate::sys;
use crate::tally::{Counts, MeasureStart};
use crate::values::CheckEvery;
use crate::warmup::WarmPhase;

mod threads;

use threads::Workers;
pub use threads::live_workers;

/// How long the workers have to end after a stop before the run ends without them.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Utilization of its cores above which the generator is called saturated.
pub const SATURATION: f64 = stackbench_record::GENERATOR_SATURATION;

/// One measured run of the load `spec` describes, until its end or until
/// `stop` is set (a capacity search is [`crate::run`]'s, through `findmax`): the target
/// checked, the worker threads started and released together, their seconds collected,
/// the record built.
pub fn run(spec: &LoadSpec, stop: &Stop) -> Result<RunRecord, LoadError> {
    let (spec, addr) = prepare(spec)?;
    let mut workers = Workers::spawn(&spec, addr, stop);
    let Some(start) = workers.start(&spec, stop)? else {
        return Ok(called_off(&spec, &workers.fault));
    };
    let mut collecting = Collecting::new(&spec, start, &workers)?;
    collecting.collect(stop, &workers);
    collecting.finish(stop, workers)
}

/// What is settled before any thread starts: the CPUs and the open-file limit are enough,
/// the target is there (and over TLS, what its handshake agreed decides what the run speaks).
fn prepare(spec: &LoadSpec) -> Result<(Arc<LoadSpec>, SocketAddr), LoadError> {
    check_cpus(spec)?;
    check_file_limit(spec)?;
    // A large answer's buffer leaves the process when freed: its whole memory stays within the
    // answer budget and a fixed rest (docs/design.md, "Answers are held in bounded memory").
    sys::map_large_allocations(crate::budget::MAPPED_FROM);
    let addr = resolve(spec)?;
    let agreed = probe(spec, addr)?;
    fault::install_hook();
    Ok((Arc::new(crate::tls_probe::settle(spec, agreed, addr)?), addr))
}

/// The calling thread's side of a started run: the workers' seconds merged as they come (the
/// warm-up's apart), the CPU time and the interval log from the start of the measured phase.
struct Collecting<'a> {
    spec: &'a LoadSpec,
    start: Instant,
    /// `start` on the wall clock.
    start_wall: SystemTime,
    /// When the measured phase begins (which `--warmup auto` may move earlier).
    measure: Arc<MeasureStart>,
    collector: Collector,
    warm: WarmPhase,
    /// CPU time is read when the measured phase starts and when the workers are done.
    cpu_start: Option<GeneratorCpu>,
    /// The interval log could not be opened when the measured phase began.
    hlog_failed: Option<LoadError>,
    /// A worker did not end in time: the run ended without it.
    stalled: bool,
}

impl<'a> Collecting<'a> {
    fn new(spec: &'a LoadSpec, start: Instant, workers: &Workers) -> Result<Collecting<'a>, LoadError> {
        let progress = spec
            .progress
            .then(|| Progress { planned_s: spec.duration().map(|d| d.as_secs_f64()), shown: false });
        let open = matches!(spec.model, ModelSpec::Open { .. });
        let mut collector = Collector::new(spec.threads.max(1), open, None, progress);
        collector.keep_histograms = spec.shard.is_some();
        collector.spares = Some(workers.spares.clone());
        let mut c = Collecting {
            spec,
            start,
            start_wall: SystemTime::now() + start.saturating_duration_since(Instant::now()),
            measure: Arc::clone(&workers.measure),
            collector,
            warm: WarmPhase::new(spec),
            cpu_start: None,
            hlog_failed: None,
            stalled: false,
        };
        // A fixed warm-up's measured start is known now: its interval log is opened at once, as
        // before (an unwritable path fails before the warm-up is spent).
        if !spec.auto_warmup {
            c.collector.hlog = open_hlog(spec, c.start_wall + c.measure.offset())?;
        }
        Ok(c)
    }

    /// When the measured phase begins; its wall-clock start, and the interval log that
    /// carries it, are taken when it begins.
    fn measure_from(&self) -> Instant {
        self.start + self.measure.offset()
    }

    /// Takes the workers' seconds until every worker has sent its last, or one is overdue.
    fn collect(&mut self, stop: &Stop, workers: &Workers) {
        // Every worker ends by itself within --timeout of the end (or of a stop);
        // one that does not is a fault, and the run ends without it.
        let grace = self.spec.timeout + Duration::from_secs(5);
        let mut cut_short: Option<Instant> = None;
        while !self.collector.done() {
            let now = Instant::now();
            if self.cpu_start.is_none() && now >= self.measure_from() {
                self.measured_phase_begins(workers);
            }
            // A stop is answered at once: the workers look at it every 50 ms and wait for nothing
            // after it, so one that has not ended within STOP_GRACE is stuck, and the run ends
            // without it (Ctrl-C ends `stackbench load` within 2 s whatever the workers do).
            if stop.is_stopped() {
                cut_short = Some(cut_short.map_or(now + STOP_GRACE, |c| c.min(now + STOP_GRACE)));
            } else if workers.fault.is_set() {
                cut_short.get_or_insert(now + grace);
            }
            let deadline = [self.spec.duration().map(|d| self.measure_from() + d + grace), cut_short]
                .into_iter()
                .flatten()
                .min();
            if deadline.is_some_and(|d| now >= d) {
                let (within, of) =
                    if stop.is_stopped() { (STOP_GRACE, "the stop") } else { (grace, "the end of the run") };
                workers.fault.record(format!(
                    "the load engine failed: worker thread(s) {} did not finish within {} of {of} \
                     (a bug in stackbench; please report it)",
                    (self.collector.unfinished().iter().map(|w| format!("sb-load-{w}")))
                        .collect::<Vec<_>>()
                        .join(", "),
                    humantime::format_duration(within)
                ));
                self.stalled = true;
                break;
            }
            let wait = if self.cpu_start.is_none() {
                self.measure_from().saturating_duration_since(Instant::now()).min(Duration::from_millis(100))
            } else {
                Duration::from_millis(100)
            };
            match workers.intervals.recv_timeout(wait) {
                Ok(iv) if iv.warmup => self.warm.add(iv, self.start.elapsed(), &self.measure),
                Ok(iv) => self.collector.add(iv),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// The measured phase begins: the CPU time is read from here on, and under `--warmup auto`
    /// the interval log is opened.
    fn measured_phase_begins(&mut self, workers: &Workers) {
        self.cpu_start = Some(GeneratorCpu::start(&workers.tids));
        if self.spec.auto_warmup {
            // Failing here, the workers are ended (as by a fault) before the error is returned.
            match open_hlog(self.spec, self.start_wall + self.measure.offset()) {
                Ok(h) => self.collector.hlog = h,
                Err(e) => {
                    workers.fault.record(e.to_string());
                    self.hlog_failed = Some(e);
                }
            }
        }
    }

    /// Joins the workers (but stuck ones) and builds the record.
    fn finish(self, stop: &Stop, workers: Workers) -> Result<RunRecord, LoadError> {
        let spec = self.spec;
        let Workers { handles, fault, .. } = workers;
        let mut ended = Vec::with_capacity(handles.len());
        if !self.stalled {
            for h in handles {
                let joined = h.join().ok();
                if joined.is_none() {
                    fault.record("the load engine failed: a worker thread panicked".to_owned());
                }
                ended.push(joined);
            }
        }
        if let Some(e) = self.hlog_failed {
            return Err(e);
        }
        let measure_from = self.measure_from();
        let cpu = self.cpu_start.map_or((sys::cpu_time(), sys::cpu_time()), |c| c.end(&ended));
        // Stopped during the warm-up: the measured phase began at the stop.
        let lasted = self.measure.offset().min(self.start.elapsed());
        let started_wall = self.start_wall + lasted;
        let mut collector = self.collector;
        if spec.hlog.is_some() && collector.hlog.is_none() {
            collector.hlog = open_hlog(spec, started_wall)?;
        }
        let (mut totals, hlog_error) = collector.finish();
        if self.stalled {
            // The stuck workers' time is the run's too, though they sent no last second.
            totals.elapsed = totals.elapsed.max(Instant::now().saturating_duration_since(measure_from));
        }
        if let (Some(e), Some(path)) = (hlog_error, &spec.hlog) {
            return Err(LoadError::Hlog { path: path.display().to_string(), why: e.to_string() });
        }
        let wall_ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let started_at_ms = wall_ms(started_wall);
        let mut record = record(spec, &totals, started_at_ms, cpu, stop.is_stopped());
        for row in &mut record.timeline {
            row.at_ms = Some(started_at_ms + 1000 * u64::from(row.t));
        }
        record.warmup = self.warm.finish(spec, lasted, wall_ms(self.start_wall));
        record.invalid = fault
            .take()
            .map(|why| stackbench_record::Invalid::new(stackbench_record::Invalid::TOOL_FAILURE, why));
        Ok(record)
    }
}

/// The interval log of `spec`, if it asks for one, for a measured phase that began at
/// `started_wall`.
fn open_hlog(spec: &LoadSpec, started_wall: SystemTime) -> Result<Option<HlogWriter>, LoadError> {
    match &spec.hlog {
        Some(path) => HlogWriter::create(path, started_wall, &format!("stackbench load {}", spec.target.url))
            .map(Some)
            .map_err(|e| LoadError::Hlog { path: path.display().to_string(), why: e.to_string() }),
        None => Ok(None),
    }
}

/// The CPU time the generator spends in its measured phase: its workers' threads and the
/// collecting thread's, not the whole process's (a process that embeds the engine, such as
/// the test harness or an orchestrator, does other work beside it).
struct GeneratorCpu {
    /// The collecting thread's, when the measured phase began.
    own: (Duration, Duration),
    /// Each worker's then; `None` for one that had already ended.
    workers: Vec<Option<(Duration, Duration)>>,
}

impl GeneratorCpu {
    fn start(tids: &[AtomicI32]) -> Self {
        let workers = tids.iter().map(|t| sys::task_cpu_time(t.load(Ordering::Relaxed))).collect();
        Self { own: sys::thread_cpu_time(), workers }
    }

    /// The generator's CPU time at the start and at the end, given each worker's at its end
    /// (`None` for one not joined): only what each thread spent after the start counts.
    fn end(&self, ended: &[Option<(Duration, Duration)>]) -> CpuPair {
        let add = |a: (Duration, Duration), b: (Duration, Duration)| (a.0 + b.0, a.1 + b.1);
        let (mut start, mut end) = (self.own, sys::thread_cpu_time());
        for (begun, ended) in self.workers.iter().zip(ended) {
            if let (Some(begun), Some(ended)) = (begun, ended) {
                start = add(start, *begun);
                end = add(end, (ended.0.max(begun.0), ended.1.max(begun.1)));
            }
        }
        (start, end)
    }
}

/// The record of a run called off before its load started: nothing sent, marked interrupted.
fn called_off(spec: &LoadSpec, fault: &Fault) -> RunRecord {
    let totals =
        Collector::new(spec.threads.max(1), matches!(spec.model, ModelSpec::Open { .. }), None, None)
            .finish()
            .0;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let cpu = sys::cpu_time();
    let mut record = record(spec, &totals, now, (cpu, cpu), true);
    record.invalid = fault
        .take()
        .map(|why| stackbench_record::Invalid::new(stackbench_record::Invalid::TOOL_FAILURE, why));
    record
}

/// `--cpus` names only CPUs this process may run on; checked before any thread starts (a
/// worker that cannot pin itself would otherwise fail after the others began).
fn check_cpus(spec: &LoadSpec) -> Result<(), LoadError> {
    let (Some(cpus), Some(allowed)) = (&spec.cpus, sys::allowed_cpus()) else { return Ok(()) };
    match cpus.iter().find(|c| !allowed.contains(c)) {
        Some(&cpu) => {
            Err(LoadError::NoSuchCpu { cpu, available: crate::values::CpuList(allowed).to_string() })
        }
        None => Ok(()),
    }
}

/// Descriptors besides the connections: stdio, outputs, the signal watcher's runtime; and per
/// worker thread its runtime's epoll and wake-up, its two timerfds (the clock's, the open
/// model's dispatcher's) and, with io_uring, its ring.
const SPARE_FDS: u64 = 32;
const FDS_PER_THREAD: u64 = 6;

/// Raises the open-file limit as far as the hard limit allows, and refuses a load whose
/// connections it cannot hold (each would otherwise fail, or spin, at its first request).
fn check_file_limit(spec: &LoadSpec) -> Result<(), LoadError> {
    let connections = match spec.model {
        ModelSpec::Closed { connections, streams, .. } => match spec.transport {
            crate::spec::Transport::Http1 => connections * streams,
            _ => connections,
        },
        ModelSpec::Open { connections, max_connections, .. } => match spec.transport {
            crate::spec::Transport::Http1 => max_connections.max(connections),
            _ => connections,
        },
    };
    let need = connections as u64 + SPARE_FDS + FDS_PER_THREAD * spec.threads as u64;
    match sys::raise_open_file_limit() {
        Some((soft, hard)) if soft < need => Err(LoadError::FileLimit { connections, need, soft, hard }),
        _ => Ok(()),
    }
}

/// The address the connections go to: where the URL's host resolves, or where `--resolve`
/// and `--connect-to` send them.
fn resolve(spec: &LoadSpec) -> Result<SocketAddr, LoadError> {
    let t = &spec.target;
    spec.route.address(&t.host, t.port).map_err(|why| LoadError::Resolve { host: t.host.clone(), why })
}

/// One connection before anything starts: a target that is not there is a
/// setup error (one clear line), not a run full of connect errors; over TLS, its
/// handshake too (a certificate that does not verify is said once, with the reason), and
/// what it agreed decides what the run speaks ([`crate::tls_probe::settle`]).
fn probe(spec: &LoadSpec, addr: SocketAddr) -> Result<Option<crate::tls::Negotiated>, LoadError> {
    let tcp = TcpStream::connect_timeout(&addr, spec.timeout.min(Duration::from_secs(5)))
        .map_err(|e| LoadError::Unreachable { url: spec.target.url.clone(), addr, why: e.to_string() })?;
    match &spec.tls {
        None => Ok(None),
        Some(tls) => crate::tls_probe::handshake(tls, tcp, spec.timeout.min(Duration::from_secs(10)))
            .map(Some)
            .map_err(|why| LoadError::Tls { url: spec.target.url.clone(), addr, why }),
    }
}

type CpuPair = ((Duration, Duration), (Duration, Duration));

fn record(spec: &LoadSpec, t: &Totals, started_at_ms: u64, cpu: CpuPair, stopped: bool) -> RunRecord {
    let interrupted = t.interrupted || stopped;
    let duration = match spec.bound {
        Bound::Duration(d) if !interrupted => d,
        _ => t.elapsed,
    };
    let duration_s = duration.as_secs_f64().max(1e-9);
    let user = cpu.1.0.saturating_sub(cpu.0.0).as_secs_f64();
    let system = cpu.1.1.saturating_sub(cpu.0.1).as_secs_f64();
    // The cores the workers could use: their pins, or the process's CPUs, at most one per thread.
    let environment = Environment::detect(&stackbench_record::version_with_build(env!("CARGO_PKG_VERSION")));
    let available = match &spec.cpus {
        Some(cpus) => cpus.len() as u32,
        None => stackbench_record::count_cpu_list(&environment.affinity),
    };
    let threads = spec.threads.max(1) as u32;
    let cores = if available == 0 { threads } else { threads.min(available) };
    let utilization = ((user + system) / (duration_s * f64::from(cores))).clamp(0.0, 1.0);
    let summary = t.summary(matches!(spec.model, ModelSpec::Open { .. }), duration_s);
    let named = |name: &str, t: &Counts| {
        let errors = t.errors.iter().map(|(k, n)| (k.key(), *n)).collect();
        Named::from_parts(name, &t.latency, t.completed, t.ok, errors, duration_s)
    };
    let (per_request, iterations) = match spec.requests.file() {
        Some(f) => (
            f.names
                .iter()
                .enumerate()
                // A redirect's hop that was never sent is left out (a chain is as long as the
                // server makes it, up to `max-redirs`).
                .filter(|&(i, _)| {
                    !f.hops.get(i).copied().unwrap_or(false)
                        || t.named.get(i).is_some_and(|t| t.completed > 0 || !t.errors.is_empty())
                })
                .map(|(i, n)| match t.named.get(i) {
                    Some(t) => Named { not_sent: t.not_sent.clone(), ..named(n, t) },
                    None => named(n, &Counts::default()),
                })
                .collect(),
            Some(named("iteration", t.iterations.as_ref().unwrap_or(&Counts::default()))),
        ),
        None => (Vec::new(), None),
    };
    let thresholds = spec
        .thresholds
        .iter()
        .map(|th| th.evaluate_run(&summary, &per_request, iterations.as_ref()))
        .collect();
    RunRecord {
        schema: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at_ms,
        label: stackbench_record::Label::default(),
        params: params(spec, t),
        environment,
        summary,
        histogram: encode_histogram(&t.counts.latency),
        service_histogram: t.counts.service.as_ref().map(encode_histogram),
        errors: t.errors(),
        timeline: t.timeline.clone(),
        generator: GeneratorUsage {
            cpu_user_s: user,
            cpu_system_s: system,
            cores,
            utilization,
            saturated: utilization >= SATURATION,
        },
        samples: None,
        thresholds,
        interrupted,
        invalid: None,
        find_max: None,
        per_request,
        iterations,
        warmup: None,
        connections: crate::dial::record(t.opened.as_ref(), t.first.as_ref(), spec.tls.as_deref()),
        companion: None,
    }
}

fn params(spec: &LoadSpec, t: &Totals) -> LoadParams {
    let model = match spec.model {
        ModelSpec::Closed { connections, streams, think, ramp_up } => Model::Closed {
            connections: (connections * streams) as u32,
            think_ms: think.as_millis() as u64,
            ramp_up_ms: ramp_up.as_millis() as u64,
        },
        ModelSpec::Open { rate, max_in_flight, .. } => {
            Model::Open { rate, max_in_flight: max_in_flight as u64 }
        }
    };
    let mut extra = std::collections::BTreeMap::new();
    let json = |v: &dyn ToString| serde_json::Value::String(v.to_string());
    extra.insert("keepalive".into(), serde_json::Value::Bool(spec.new_connection.is_none()));
    if let Some(n) = spec.new_connection {
        extra.insert("new_connection".into(), json(&n.name()));
    }
    extra.insert("io".into(), json(&spec.io.name()));
    if !spec.timer_slack.is_zero() {
        extra.insert("timer_slack_us".into(), (spec.timer_slack.as_micros() as u64).into());
    }
    match spec.model {
        ModelSpec::Closed { connections, streams, .. } => {
            extra.insert("tcp_connections".into(), connections.into());
            extra.insert("streams".into(), streams.into());
        }
        ModelSpec::Open { connections, max_connections, .. } => {
            extra.insert("initial_connections".into(), connections.into());
            extra.insert("max_connections".into(), max_connections.into());
        }
    }
    if let Some(cpus) = &spec.cpus {
        extra.insert("cpus".into(), serde_json::json!(cpus));
    }
    // A shard's model keeps the whole load's rate (its schedule), its own share of the users.
    if let Some(s) = spec.shard {
        extra.insert("shard".into(), json(&s.shard));
    }
    let (scenario, seed) = match &spec.requests {
        RequestSource::Fixed { method, headers, body } => {
            extra.insert("method".into(), json(method));
            if !headers.is_empty() {
                let hs: Vec<String> = headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())))
                    .collect();
                extra.insert("headers".into(), serde_json::json!(hs));
            }
            extra.insert("body_bytes".into(), body.len().into());
            (None, 0)
        }
        RequestSource::File(f) => {
            if !f.builtin {
                extra.insert("scenario_file".into(), serde_json::Value::Bool(true));
            }
            (Some(f.scenario.name.clone()), f.seed)
        }
    };
    let check_every = match (spec.check_every, &spec.requests) {
        (_, RequestSource::Fixed { .. }) | (CheckEvery::Every(0), _) => 0,
        (CheckEvery::Every(k), _) => k,
        (CheckEvery::Auto, _) => t.check_every.max(1),
    };
    LoadParams {
        url: spec.target.url.clone(),
        transport: spec.transport.name().to_owned(),
        model,
        stages: spec
            .stages
            .iter()
            .map(|s| Stage { duration_ms: s.duration.as_millis() as u64, target: s.target })
            .collect(),
        duration_ms: spec.duration().map(|d| d.as_millis() as u64),
        requests: match spec.bound {
            Bound::Requests(n) => Some(n),
            Bound::Duration(_) => None,
        },
        warmup_ms: spec.warmup.as_millis() as u64,
        timeout_ms: spec.timeout.as_millis() as u64,
        threads: spec.threads as u32,
        scenario,
        seed,
        check_every,
        extra,
    }
}
