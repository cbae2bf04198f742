//! The worker threads of a run ([`Workers`]): one per `--threads`, pinned where `--cpus`
//! says, each with its own current-thread runtime running [`crate::worker::run`]; held at a
//! [`Gate`] until every one has opened its first connections, then released together at the
//! start of the load, or called off.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::fault::Fault;
use crate::load_error::LoadError;
use crate::recorder::{Interval, Spares};
use crate::spec::{Bound, LoadSpec};
use crate::stop::Stop;
use crate::tally::MeasureStart;
use crate::{sys, transport, worker};

/// A run's worker threads, and what the collecting thread shares with them.
pub struct Workers {
    /// Each thread; it returns its CPU time (user, system) at its end.
    pub handles: Vec<JoinHandle<(Duration, Duration)>>,
    /// Each worker's thread id, by which its CPU time is read when the measured phase begins.
    pub tids: Arc<Vec<AtomicI32>>,
    pub fault: Arc<Fault>,
    pub measure: Arc<MeasureStart>,
    /// The workers' seconds.
    pub intervals: Receiver<Interval>,
    /// Histograms for the workers' next seconds, given back by the collector.
    pub spares: Spares,
    gate: Arc<Gate>,
    /// The first thread that could not start, and why (then no worker runs).
    setup_error: Arc<Mutex<Option<LoadError>>>,
    threads: usize,
}

impl Workers {
    /// Starts the worker threads of `spec` against `addr`; each opens its first connections
    /// and waits at the gate ([`Workers::start`]).
    pub fn spawn(spec: &Arc<LoadSpec>, addr: SocketAddr, stop: &Stop) -> Workers {
        let requests = transport::prepare(spec);
        let threads = spec.threads.max(1);
        let (tx, rx) = channel();
        let shares: Vec<u64> = match spec.bound {
            Bound::Requests(n) => {
                (0..threads).map(|i| worker::split(n as usize, threads, i) as u64).collect()
            }
            Bound::Duration(_) => vec![0; threads],
        };
        let mut w = Workers {
            handles: Vec::with_capacity(threads),
            tids: Arc::new((0..threads).map(|_| AtomicI32::new(0)).collect()),
            fault: Arc::new(Fault::default()),
            measure: Arc::new(MeasureStart::new(spec.warmup)),
            intervals: rx,
            spares: Spares::default(),
            gate: Arc::new(Gate::default()),
            setup_error: Arc::new(Mutex::new(None)),
            threads,
        };
        for (index, share) in shares.into_iter().enumerate() {
            let cx = worker::WorkerCx {
                index,
                spec: Arc::clone(spec),
                addr,
                requests: Arc::clone(&requests),
                stop: stop.clone(),
                intervals: tx.clone(),
                fault: Arc::clone(&w.fault),
                measure: Arc::clone(&w.measure),
                spares: w.spares.clone(),
            };
            let thread = Thread {
                cx,
                cpu: spec.cpus.as_ref().map(|c| c[index % c.len()]),
                share,
                gate: Arc::clone(&w.gate),
                error: Arc::clone(&w.setup_error),
                fault: Arc::clone(&w.fault),
                tids: Arc::clone(&w.tids),
                alive: Alive::new(),
            };
            match std::thread::Builder::new().name(format!("sb-load-{index}")).spawn(move || thread.run()) {
                Ok(h) => w.handles.push(h),
                Err(e) => {
                    // Release the threads already waiting, then report.
                    w.setup_error
                        .lock()
                        .expect("no panics")
                        .get_or_insert(LoadError::Thread { index, why: e.to_string() });
                    w.gate.stand_in(threads - w.handles.len());
                    break;
                }
            }
        }
        w
    }

    /// Waits for the workers to be ready (and for `--start-at`), then releases them: returns
    /// the start of the load, or `None` when it was called off before it (a stop, or a worker
    /// that never got ready: then the run's fault says so).
    pub fn start(&mut self, spec: &LoadSpec, stop: &Stop) -> Result<Option<Instant>, LoadError> {
        // The workers connect their first lanes (each within --timeout, ending at a stop); the
        // wait for them is bounded too, so a Ctrl-C ends a run that never got going.
        if !self.gate.wait_ready(self.threads, stop, spec.timeout + Duration::from_secs(5)) {
            self.gate.release(None);
            if !stop.is_stopped() {
                self.fault.record(
                    "the load engine failed: a worker thread did not finish opening its connections \
                     (a bug in stackbench; please report it)"
                        .to_owned(),
                );
            }
            return Ok(None);
        }
        wait_for_start_at(spec, stop);
        // Workers have connected their first lanes; the load starts now, unless it was called off
        // while they did (or while waiting for --start-at): then nothing is sent.
        let start = Instant::now() + Duration::from_millis(5);
        let setup = self.setup_error.lock().expect("no panics").take();
        self.gate.release((setup.is_none() && !stop.is_stopped()).then_some(start));
        // The lock is not held here: a worker reads it on its way out.
        if let Some(e) = setup {
            self.join_all();
            return Err(e);
        }
        if stop.is_stopped() {
            self.join_all();
            return Ok(None);
        }
        Ok(Some(start))
    }

    fn join_all(&mut self) {
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// `--start-at`: the shards of a load begin together.
fn wait_for_start_at(spec: &LoadSpec, stop: &Stop) {
    let Some(at) = spec.start_at else { return };
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
            crate::values::Dur(Duration::from_millis(past.duration().as_millis() as u64))
        ),
        Err(_) => {}
    }
}

/// One worker thread, before it starts.
struct Thread {
    cx: worker::WorkerCx,
    /// The CPU it pins itself to.
    cpu: Option<usize>,
    /// Its share of a `-n` run's requests.
    share: u64,
    gate: Arc<Gate>,
    error: Arc<Mutex<Option<LoadError>>>,
    fault: Arc<Fault>,
    tids: Arc<Vec<AtomicI32>>,
    alive: Alive,
}

impl Thread {
    /// The thread's body: pins itself, builds its runtime, waits at the gate and runs the
    /// worker; returns its CPU time at its end.
    fn run(self) -> (Duration, Duration) {
        let Thread { cx, cpu, share, gate, error, fault, tids, alive } = self;
        let _alive = alive;
        let index = cx.index;
        tids[index].store(sys::thread_id(), Ordering::Relaxed);
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
                error.lock().expect("no panics while holding it").get_or_insert(e);
                None
            }
        };
        let failed = error.lock().expect("no panics while holding it").is_some();
        let waited = std::cell::Cell::new(false);
        // Waits for every worker; `None` when one of them could not start (then none runs).
        let wait_start = || {
            waited.set(true);
            let start = gate.arrive();
            start.filter(|_| error.lock().expect("no panics while holding it").is_none())
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
            fault.record_panic(&*payload);
            if !waited.get() {
                gate.arrive();
            }
        }
        sys::thread_cpu_time()
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
