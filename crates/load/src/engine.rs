//! [`run`]: one load run from a [`LoadSpec`] to a [`RunRecord`]. It resolves
//! and probes the target, starts one pinned worker thread per core (each with
//! its own current-thread runtime, see [`crate::worker`]), collects their
//! seconds on the calling thread (the warm-up's apart, [`crate::warmup`], which
//! may end it early under `--warmup auto`), measures the generator's own CPU
//! time over the measured phase, and builds the record.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use stackbench_record::{
    Environment, GeneratorUsage, LoadParams, Model, Named, RunRecord, SCHEMA_VERSION, Stage, encode_histogram,
};

use crate::collect::{Collector, Progress, Totals};
use crate::fault::{self, Fault};
use crate::hlog::HlogWriter;
use crate::load_error::LoadError;
use crate::parse::CheckEvery;
use crate::recorder::Spares;
use crate::spec::{Bound, LoadSpec, ModelSpec, RequestSource};
use crate::stop::Stop;
use crate::tally::{Counts, MeasureStart};
use crate::warmup::WarmPhase;
use crate::{sys, transport, worker};

/// How long the workers have to end after a stop before the run ends without them.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Utilization of its cores above which the generator is called saturated.
pub const SATURATION: f64 = 0.9;

/// One measured run of the load `spec` describes, until its end or until
/// `stop` is set (a capacity search is [`crate::run`]'s, through `findmax`).
#[allow(clippy::too_many_lines)] // start, collect, finish: one sequence, read top to bottom
pub fn run(spec: &LoadSpec, stop: &Stop) -> Result<RunRecord, LoadError> {
    check_cpus(spec)?;
    check_file_limit(spec)?;
    // A large answer's buffer leaves the process when freed: its whole memory stays within the
    // answer budget and a fixed rest (docs/design.md, "Answers are held in bounded memory").
    sys::map_large_allocations(crate::budget::MAPPED_FROM);
    let addr = resolve(spec)?;
    let agreed = probe(spec, addr)?;
    fault::install_hook();
    let fault = Arc::new(Fault::default());
    let spec = Arc::new(crate::tls_probe::settle(spec, agreed, addr)?);
    let requests = transport::prepare(&spec);
    let threads = spec.threads.max(1);
    let (tx, rx) = channel();
    let measure = Arc::new(MeasureStart::new(spec.warmup));
    let gate = Arc::new(Gate::default());
    let setup_error: Arc<Mutex<Option<LoadError>>> = Arc::new(Mutex::new(None));
    let shares: Vec<u64> = match spec.bound {
        Bound::Requests(n) => (0..threads).map(|i| worker::split(n as usize, threads, i) as u64).collect(),
        Bound::Duration(_) => vec![0; threads],
    };

    let spares = Spares::default();
    let mut handles = Vec::with_capacity(threads);
    // Each worker's thread id, by which its CPU time is read when the measured phase begins.
    let tids: Arc<Vec<AtomicI32>> = Arc::new((0..threads).map(|_| AtomicI32::new(0)).collect());
    for index in 0..threads {
        let cx = worker::WorkerCx {
            index,
            spec: Arc::clone(&spec),
            addr,
            requests: Arc::clone(&requests),
            stop: stop.clone(),
            intervals: tx.clone(),
            fault: Arc::clone(&fault),
            measure: Arc::clone(&measure),
            spares: spares.clone(),
        };
        let (t_gate, t_error, t_fault) = (Arc::clone(&gate), Arc::clone(&setup_error), Arc::clone(&fault));
        let cpu = spec.cpus.as_ref().map(|c| c[index % c.len()]);
        let share = shares[index];
        let t_tids = Arc::clone(&tids);
        let alive = Alive::new();
        let spawned = std::thread::Builder::new().name(format!("sb-load-{index}")).spawn(move || {
            let _alive = alive;
            t_tids[index].store(sys::thread_id(), Ordering::Relaxed);
            let setup = || -> Result<tokio::runtime::Runtime, LoadError> {
                if let Some(cpu) = cpu {
                    sys::pin_current_thread(cpu).map_err(|e| LoadError::Pin { cpu, why: e.to_string() })?;
                }
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| LoadError::Thread { index, why: e.to_string() })
            };
            let runtime = match setup() {
                Ok(rt) => Some(rt),
                Err(e) => {
                    t_error.lock().expect("no panics while holding it").get_or_insert(e);
                    None
                }
            };
            let failed = t_error.lock().expect("no panics while holding it").is_some();
            let waited = std::cell::Cell::new(false);
            // Waits for every worker; `None` when one of them could not start (then none runs).
            let wait_start = || {
                waited.set(true);
                let start = t_gate.arrive();
                start.filter(|_| t_error.lock().expect("no panics while holding it").is_none())
            };
            // A panic outside the worker's tasks ends the thread here, recorded; the
            // barriers are still passed, so the other threads are not left waiting.
            let body = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match (runtime, failed) {
                (Some(runtime), false) => {
                    let local = tokio::task::LocalSet::new();
                    local.block_on(&runtime, worker::run(cx, share, wait_start));
                }
                _ => {
                    wait_start();
                }
            }));
            if let Err(payload) = body {
                t_fault.record_panic(&*payload);
                if !waited.get() {
                    t_gate.arrive();
                }
            }
            sys::thread_cpu_time()
        });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Release the threads already waiting, then report.
                setup_error
                    .lock()
                    .expect("no panics")
                    .get_or_insert(LoadError::Thread { index, why: e.to_string() });
                gate.stand_in(threads - handles.len());
                break;
            }
        }
    }
    drop(tx);
    // The workers connect their first lanes (each within --timeout, ending at a stop); the
    // wait for them is bounded too, so a Ctrl-C ends a run that never got going.
    if !gate.wait_ready(threads, stop, spec.timeout + Duration::from_secs(5)) {
        gate.release(None);
        if !stop.is_stopped() {
            fault.record(
                "the load engine failed: a worker thread did not finish opening its connections \
                 (a bug in stackbench; please report it)"
                    .to_owned(),
            );
        }
        return Ok(called_off(&spec, &fault));
    }
    // `--start-at`: the shards of a load begin together.
    if let Some(at) = spec.start_at {
        match at.duration_since(SystemTime::now()) {
            Ok(_) => {
                while let Ok(left) = at.duration_since(SystemTime::now()) {
                    if stop.is_stopped() {
                        break;
                    }
                    std::thread::sleep(left.min(Duration::from_millis(10)));
                }
            }
            Err(past) if past.duration() > Duration::from_millis(100) => eprintln!(
                "warning: --start-at was {} ago when this generator was ready: it starts now, late \
                 (stackbench merge will say how far the shards' starts differ)",
                crate::parse::Dur(Duration::from_millis(past.duration().as_millis() as u64))
            ),
            Err(_) => {}
        }
    }
    // Workers have connected their first lanes; the load starts now, unless it was called off
    // while they did (or while waiting for --start-at): then nothing is sent.
    let start = Instant::now() + Duration::from_millis(5);
    let setup = setup_error.lock().expect("no panics").take();
    gate.release((setup.is_none() && !stop.is_stopped()).then_some(start));
    // The lock is not held here: a worker reads it on its way out.
    if let Some(e) = setup {
        for h in handles {
            let _ = h.join();
        }
        return Err(e);
    }
    if stop.is_stopped() {
        for h in handles {
            let _ = h.join();
        }
        return Ok(called_off(&spec, &fault));
    }

    // The measured phase begins at `measure` (which `--warmup auto` may move earlier); its
    // wall-clock start, and the interval log that carries it, are taken when it begins.
    let measure_from = || start + measure.offset();
    let start_wall = SystemTime::now() + start.saturating_duration_since(Instant::now());
    let open_hlog = |started_wall: SystemTime| match &spec.hlog {
        Some(path) => HlogWriter::create(path, started_wall, &format!("stackbench load {}", spec.target.url))
            .map(Some)
            .map_err(|e| LoadError::Hlog { path: path.display().to_string(), why: e.to_string() }),
        None => Ok(None),
    };
    let progress =
        spec.progress.then(|| Progress { planned_s: spec.duration().map(|d| d.as_secs_f64()), shown: false });
    let mut collector = Collector::new(threads, matches!(spec.model, ModelSpec::Open { .. }), None, progress);
    collector.keep_histograms = spec.shard.is_some();
    collector.spares = Some(spares);
    // A fixed warm-up's measured start is known now: its interval log is opened at once, as
    // before (an unwritable path fails before the warm-up is spent).
    if !spec.auto_warmup {
        collector.hlog = open_hlog(start_wall + measure.offset())?;
    }
    let mut warm = WarmPhase::new(&spec);

    // CPU time is read when the measured phase starts and when the workers are done.
    let mut cpu_start = None;
    // Every worker ends by itself within --timeout of the end (or of a stop);
    // one that does not is a fault, and the run ends without it.
    let grace = spec.timeout + Duration::from_secs(5);
    let mut cut_short: Option<Instant> = None;
    let mut hlog_failed: Option<LoadError> = None;
    let mut stalled = false;
    while !collector.done() {
        let now = Instant::now();
        if cpu_start.is_none() && now >= measure_from() {
            cpu_start = Some(GeneratorCpu::start(&tids));
            if spec.auto_warmup {
                // Failing here, the workers are ended (as by a fault) before the error is returned.
                match open_hlog(start_wall + measure.offset()) {
                    Ok(h) => collector.hlog = h,
                    Err(e) => {
                        fault.record(e.to_string());
                        hlog_failed = Some(e);
                    }
                }
            }
        }
        // A stop is answered at once: the workers look at it every 50 ms and wait for nothing
        // after it, so one that has not ended within STOP_GRACE is stuck, and the run ends
        // without it (Ctrl-C ends `stackbench load` within 2 s whatever the workers do).
        if stop.is_stopped() {
            cut_short = Some(cut_short.map_or(now + STOP_GRACE, |c| c.min(now + STOP_GRACE)));
        } else if fault.is_set() {
            cut_short.get_or_insert(now + grace);
        }
        let deadline =
            [spec.duration().map(|d| measure_from() + d + grace), cut_short].into_iter().flatten().min();
        if deadline.is_some_and(|d| now >= d) {
            let (within, of) =
                if stop.is_stopped() { (STOP_GRACE, "the stop") } else { (grace, "the end of the run") };
            fault.record(format!(
                "the load engine failed: worker thread(s) {} did not finish within {} of {of} \
                 (a bug in stackbench; please report it)",
                collector.unfinished().iter().map(|w| format!("sb-load-{w}")).collect::<Vec<_>>().join(", "),
                humantime::format_duration(within)
            ));
            stalled = true;
            break;
        }
        let wait = if cpu_start.is_none() {
            measure_from().saturating_duration_since(Instant::now()).min(Duration::from_millis(100))
        } else {
            Duration::from_millis(100)
        };
        match rx.recv_timeout(wait) {
            Ok(iv) if iv.warmup => warm.add(iv, start.elapsed(), &measure),
            Ok(iv) => collector.add(iv),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let mut ended = Vec::with_capacity(handles.len());
    if !stalled {
        for h in handles {
            let joined = h.join().ok();
            if joined.is_none() {
                fault.record("the load engine failed: a worker thread panicked".to_owned());
            }
            ended.push(joined);
        }
    }
    if let Some(e) = hlog_failed {
        return Err(e);
    }
    let cpu = cpu_start.map_or((sys::cpu_time(), sys::cpu_time()), |c| c.end(&ended));
    // Stopped during the warm-up: the measured phase began at the stop.
    let lasted = measure.offset().min(start.elapsed());
    let started_wall = start_wall + lasted;
    if spec.hlog.is_some() && collector.hlog.is_none() {
        collector.hlog = open_hlog(started_wall)?;
    }
    let (mut totals, hlog_error) = collector.finish();
    if stalled {
        // The stuck workers' time is the run's too, though they sent no last second.
        totals.elapsed = totals.elapsed.max(Instant::now().saturating_duration_since(measure_from()));
    }
    if let (Some(e), Some(path)) = (hlog_error, &spec.hlog) {
        return Err(LoadError::Hlog { path: path.display().to_string(), why: e.to_string() });
    }
    let wall_ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let started_at_ms = wall_ms(started_wall);
    let mut record = record(&spec, &totals, started_at_ms, cpu, stop.is_stopped());
    for row in &mut record.timeline {
        row.at_ms = Some(started_at_ms + 1000 * u64::from(row.t));
    }
    record.warmup = warm.finish(&spec, lasted, wall_ms(start_wall));
    record.invalid = fault
        .take()
        .map(|why| stackbench_record::Invalid::new(stackbench_record::Invalid::TOOL_FAILURE, why));
    Ok(record)
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

/// The worker threads of this process that have not ended ([`live_workers`]).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Counts a worker thread from its making to its end, however it ends.
struct Alive;

impl Alive {
    fn new() -> Alive {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How many load worker threads of this process have not ended. A run joins its workers
/// before it returns, except those still running past its bound (a stuck worker, recorded
/// as the run's fault), which nothing can end but the process's exit: a caller that runs
/// one load after another (the orchestrator) must not start the next beside them.
pub fn live_workers() -> usize {
    LIVE.load(Ordering::SeqCst)
}

/// Where the workers meet before the load starts: each [`Gate::arrive`]s and waits; the
/// calling thread waits for all of them with a bound ([`Gate::wait_ready`]) and
/// [`Gate::release`]s them with the start of the load, or `None` when it is called off.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: std::sync::Condvar,
}

#[derive(Default)]
struct GateState {
    ready: usize,
    released: bool,
    /// The start of the load once released; `None` when called off.
    start: Option<Instant>,
}

impl Gate {
    /// A worker is ready; waits for the release and returns its start.
    fn arrive(&self) -> Option<Instant> {
        let mut s = self.state.lock().expect("no panics while holding it");
        s.ready += 1;
        self.changed.notify_all();
        while !s.released {
            s = self.changed.wait(s).expect("no panics while holding it");
        }
        s.start
    }

    /// Counts `n` workers that will never come (their threads could not be started) as ready.
    fn stand_in(&self, n: usize) {
        self.state.lock().expect("no panics while holding it").ready += n;
        self.changed.notify_all();
    }

    /// Waits until `threads` workers are ready. Gives up (`false`) a second after a stop, or
    /// `bound` after the start of the wait.
    fn wait_ready(&self, threads: usize, stop: &Stop, bound: Duration) -> bool {
        let begun = Instant::now();
        let mut stopped_at = None;
        let mut s = self.state.lock().expect("no panics while holding it");
        while s.ready < threads {
            let now = Instant::now();
            if stop.is_stopped() {
                let at = *stopped_at.get_or_insert(now);
                if now >= at + Duration::from_secs(1) {
                    return false;
                }
            }
            if now >= begun + bound {
                return false;
            }
            s = self
                .changed
                .wait_timeout(s, Duration::from_millis(20))
                .expect("no panics while holding it")
                .0;
        }
        true
    }

    fn release(&self, start: Option<Instant>) {
        let mut s = self.state.lock().expect("no panics while holding it");
        s.released = true;
        s.start = start;
        self.changed.notify_all();
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
            Err(LoadError::NoSuchCpu { cpu, available: crate::parse::CpuList(allowed).to_string() })
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
    let environment =
        Environment::detect(&stackbench_record::env::version_with_build(env!("CARGO_PKG_VERSION")));
    let available = match &spec.cpus {
        Some(cpus) => cpus.len() as u32,
        None => stackbench_record::env::count_cpu_list(&environment.affinity),
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
