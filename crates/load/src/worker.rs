//! The one worker loop: a thread with its own current-thread tokio runtime,
//! its own connections ([`Pool`]/[`Lane`]) and its own [`Recorder`], driven by
//! the schedule ([`Profile`]) of the closed or the open model. Any schedule
//! drives any transport through [`Lane::send`]; nothing is copied per
//! combination, and no lock or channel is touched per request.
//!
//! - Closed model: one task per virtual user: wait until the profile
//!   activates it, send, wait for the answer, think, repeat. Latency counts
//!   from the actual send (not corrected for coordinated omission).
//! - Open model: a dispatcher computes the k-th due time from the profile's
//!   integral and queues each request as it falls due for a runner, a
//!   long-lived task that sends it on a lane from the pool. Runners are
//!   started as the load needs them, up to the worker's share of the
//!   connection cap (HTTP/1.1) or of the in-flight limit (h2c), and wait
//!   for the next due request when idle: no task, allocation or permit per
//!   request. Latency counts from the due time, service time from the actual
//!   send. A queued request counts as in flight; past the in-flight limit a
//!   due request is counted `late` instead of being sent, and one that waits
//!   for a runner past `--timeout` is counted `timeout` unsent.
//!
//! Once a second the worker cuts its recorder's [`Interval`] and sends it to
//! the collector: the warm-up's seconds on the grid of the load's start until
//! the measured phase begins (read from [`MeasureStart`] each time, as
//! `--warmup auto` may move it), then the measured phase's, and its last one at
//! the end: a run bounded by time ends at its end, and what is under way then
//! is in no count (the last interval's `in_flight`); a run of `-n` requests lets
//! those under way finish (at most `--timeout`); after a stop nothing is waited for.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use stackbench_record::ErrorKind;
use tokio::time::sleep_until;

use crate::fault::{self, Fault};
use crate::recorder::{Interval, Recorder, Spares};
use crate::schedule::Profile;
use crate::spec::{Bound, LoadSpec, ModelSpec};
use crate::stop::Stop;
use crate::sys;
use crate::tally::MeasureStart;
use crate::transport::{Lane, Pool};
use crate::wire::Prepared;

/// What a worker needs, shared read-only with the other workers.
pub struct WorkerCx {
    pub index: usize,
    pub spec: Arc<LoadSpec>,
    pub addr: SocketAddr,
    pub requests: Arc<[Prepared]>,
    pub stop: Stop,
    pub intervals: Sender<Interval>,
    /// Where a panic in this worker is recorded; it ends the run.
    pub fault: Arc<Fault>,
    /// When the measured phase begins.
    pub measure: Arc<MeasureStart>,
    /// Histograms for each second's interval, given back by the collector.
    pub spares: Spares,
}

/// Per-worker state shared by its tasks (one thread: `Rc`/`Cell`, no locks).
struct Local {
    cx: WorkerCx,
    profile: Profile,
    start: Instant,
    recorder: std::cell::RefCell<Recorder>,
    in_flight: Cell<u64>,
    /// Measured requests this worker may still start (`-n`), `u64::MAX` when bounded by time.
    tickets: Cell<u64>,
    /// Set when no new request may start.
    ending: Cell<bool>,
    /// User tasks (closed) or the dispatcher (open) still running.
    active: Cell<usize>,
    cursor: Cell<usize>,
    pool: Pool,
    /// How the worker opens its connections, and what they cost so far.
    dial: Rc<crate::dial::Dial>,
    /// Open model: requests due and not yet taken by a runner, oldest first.
    queue: RefCell<VecDeque<Instant>>,
    /// Open model: the wakers of idle runners (the last to go idle is woken first).
    idle: RefCell<Vec<Waker>>,
    /// Open model: runners started so far, and how many this worker may start.
    runners: Cell<usize>,
    max_runners: usize,
    /// Open model: set when the dispatcher has queued its last request.
    dispatched: Cell<bool>,
    /// Open model: the index in this worker's schedule of the next request the dispatcher
    /// starts (it may be waiting for it: for its due time, or the `--timer-slack` grid).
    next_k: Cell<u64>,
    /// [`fault::FAILPOINT`]: what this worker does on purpose, and in how many requests.
    failpoint: Option<(fault::Failpoint, Cell<u64>)>,
    /// Scenario files: iterations this worker has started.
    iterations: Cell<u64>,
}

impl Local {
    /// When the measured phase begins (`--warmup auto` may move it earlier while the load runs).
    fn measure_from(&self) -> Instant {
        self.start + self.cx.measure.offset()
    }

    /// When it ends, if bounded by time.
    fn end_at(&self) -> Option<Instant> {
        self.cx.spec.duration().map(|d| self.measure_from() + d)
    }

    fn next_request(&self) -> &Prepared {
        let i = self.cursor.get();
        self.cursor.set((i + 1) % self.cx.requests.len());
        &self.cx.requests[i]
    }

    /// Takes a ticket for a request starting at `t` (only measured requests need one).
    fn ticket(&self, t: Instant) -> bool {
        if t < self.measure_from() {
            return true;
        }
        match self.tickets.get() {
            0 => false,
            u64::MAX => true,
            n => {
                self.tickets.set(n - 1);
                true
            }
        }
    }

    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    fn at(&self, secs: f64) -> Instant {
        self.start + Duration::from_secs_f64(secs.max(0.0))
    }

    /// Counts a request towards [`fault::FAILPOINT`], and trips it (once) at its count.
    #[inline]
    fn failpoint_tick(&self) {
        if let Some((what, left)) = &self.failpoint {
            match left.get() {
                u64::MAX => {}
                0 | 1 => {
                    left.set(u64::MAX);
                    fault::trip(*what);
                }
                n => left.set(n - 1),
            }
        }
    }

    /// Sends one request on `lane` now (`sent`, just read off the clock) and records it;
    /// returns whether it was answered.
    async fn exchange(&self, lane: &mut Lane, intended: Instant, sent: Instant) -> bool {
        let spec = &self.cx.spec;
        let req = self.next_request();
        self.in_flight.set(self.in_flight.get() + 1);
        let outcome = lane.send(req, spec.transport, spec.keepalive(), sent + spec.timeout).await;
        let now = Instant::now();
        let mut recorder = self.recorder.borrow_mut();
        recorder.record(req, intended, sent, now, &outcome);
        let answered = outcome.is_ok();
        if let Some(setup) = lane.take_opened() {
            recorder.opened(intended, now, setup);
        }
        drop(recorder);
        self.in_flight.set(self.in_flight.get() - 1);
        self.failpoint_tick();
        answered
    }
}

/// Runs one worker until the end of the run. It opens its connections, then
/// calls `wait_start` (which waits for the other workers and returns the
/// shared start of the load, or `None` when the run is called off), then
/// drives the load.
pub async fn run(cx: WorkerCx, share: u64, wait_start: impl FnOnce() -> Option<Instant>) {
    let spec = Arc::clone(&cx.spec);
    let threads = spec.threads;
    let open = matches!(spec.model, ModelSpec::Open { .. });
    let (profile, connections) = match spec.model {
        ModelSpec::Closed { connections, streams, .. } => {
            // A shard's users keep their numbers in the whole load (`crate::shard`): all of
            // them are active under a constant profile that reaches its last one.
            let first = spec.shard.map_or(0, |s| s.first_user);
            let users = (first + connections * streams) as f64;
            let p = if spec.stages.is_empty() {
                Profile::constant(users)
            } else {
                Profile::new(0.0, &spec.stages)
            };
            (p, split(connections, threads, cx.index))
        }
        ModelSpec::Open { rate, connections, .. } => {
            (Profile::new(rate, &spec.stages), split(connections, threads, cx.index))
        }
    };
    let _ring = start_ring(&cx);
    let dial = crate::dial::Dial::new(cx.addr, connector(&spec, cx.index));
    // A connection per iteration: each lane opens its own, never one shared with other lanes.
    let pool = Pool::new(&dial, spec.transport, connections, spec.per_iteration());
    // The open model's runners: one per HTTP/1.1 connection this worker may open (its share of
    // the cap), or one per request it may have in flight on its shared h2c connections.
    let max_runners = match (&spec.model, &pool) {
        (ModelSpec::Open { max_connections, .. }, Pool::Http1 { .. }) => {
            split(*max_connections, threads, cx.index).max(1)
        }
        (ModelSpec::Open { max_in_flight, .. }, Pool::H2 { .. }) => max_in_flight.div_ceil(threads).max(1),
        (ModelSpec::Closed { .. }, _) => 0,
    };
    // Connections are opened before the clock starts (failures are left for the first request
    // to meet and count), all of them within one --timeout, and not after a stop: a server
    // that accepts nothing must not hold the run before it begins.
    let opening = Instant::now() + spec.timeout;
    let mut lanes = Vec::new();
    match spec.model {
        ModelSpec::Closed { streams, .. } => {
            for _ in 0..connections * streams {
                let mut lane = pool.take();
                // Without keep-alive, each request (or iteration) opens its connection.
                if spec.new_connection.is_none() {
                    bounded(lane.connect(), opening, &cx.stop).await;
                }
                lanes.push(lane);
            }
        }
        ModelSpec::Open { .. } => {
            for _ in 0..if spec.new_connection.is_none() { connections } else { 0 } {
                let mut lane = pool.take();
                bounded(lane.connect(), opening, &cx.stop).await;
                pool.give_back(lane);
            }
        }
    }

    let Some(start) = wait_start() else { return };
    let names = spec.requests.file().map_or((0, false), |f| (f.names.len(), f.one_request_each()));
    let measure = (start, Arc::clone(&cx.measure));
    let recorder = Recorder::new(cx.index, measure, open, spec.check_every, names, cx.spares.clone());
    let local = Rc::new(Local {
        recorder: RefCell::new(recorder),
        iterations: Cell::new(0),
        // Shards' workers start at different places too, so N generators send what N times
        // the threads of one would.
        cursor: Cell::new(start_offset(
            cx.requests.len(),
            cx.index + spec.shard.map_or(0, |s| (s.shard.index as usize - 1) * threads),
        )),
        cx,
        profile,
        start,
        in_flight: Cell::new(0),
        tickets: Cell::new(match spec.bound {
            Bound::Requests(_) => share,
            Bound::Duration(_) => u64::MAX,
        }),
        ending: Cell::new(false),
        active: Cell::new(0),
        pool,
        dial,
        queue: RefCell::new(VecDeque::new()),
        idle: RefCell::new(Vec::new()),
        runners: Cell::new(0),
        max_runners,
        dispatched: Cell::new(false),
        next_k: Cell::new(0),
        failpoint: fault::failpoint().map(|(what, n)| (what, Cell::new(n))),
    });

    match spec.model {
        ModelSpec::Closed { think, .. } => {
            for (u, lane) in lanes.into_iter().enumerate() {
                // Users of all workers interleave, so a ramp starts them evenly across threads;
                // a shard's users keep their numbers in the whole load.
                let first = local.cx.spec.shard.map_or(0, |s| s.first_user);
                let global = first + u * threads + local.cx.index;
                local.active.set(local.active.get() + 1);
                spawn(&local, user(Rc::clone(&local), lane, global as f64, think));
            }
        }
        ModelSpec::Open { max_in_flight, .. } => {
            let limit = max_in_flight.div_ceil(threads) as u64;
            local.active.set(1);
            spawn(&local, dispatcher(Rc::clone(&local), limit));
        }
    }

    let interrupted = clock(&local).await;
    finish(&local, interrupted).await;
}

/// Runs `f` until it ends, `deadline` passes or the run is stopped (checked every 20 ms),
/// whichever comes first.
async fn bounded(f: impl Future<Output = ()>, deadline: Instant, stop: &Stop) {
    if stop.is_stopped() || Instant::now() >= deadline {
        return;
    }
    let stopped = async {
        while !stop.is_stopped() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        () = f => {}
        () = sleep_until(deadline.into()) => {}
        () = stopped => {}
    }
}

/// Spawns one of the worker's tasks; a panic in it is recorded as the run's
/// fault (tokio would otherwise drop the task silently) and ends the run.
fn spawn(local: &Rc<Local>, task: impl Future<Output = ()> + 'static) {
    let l = Rc::clone(local);
    tokio::task::spawn_local(fault::guard(task, move |p| l.cx.fault.record_panic(p)));
}

/// Cuts a second at each boundary until the end, a stop, a fault, or every
/// task is done: the warm-up's each second from the start and at the beginning of
/// the measured phase, then the measured phase's each second from its beginning.
/// Returns whether the run was cut short.
async fn clock(local: &Local) -> bool {
    // The kernel's timer, not tokio's 1 ms wheel: the run ends at its end, not up to a
    // millisecond of answers after it.
    let timer = PreciseSleep::new();
    let mut next_warm = local.start + Duration::from_secs(1);
    // The measured phase's next cut, once it has begun.
    let mut next_cut: Option<Instant> = None;
    loop {
        let cut_at = next_cut.unwrap_or_else(|| next_warm.min(local.measure_from()));
        let mut wake = (Instant::now() + Duration::from_millis(50)).min(cut_at);
        if let Some(end) = local.end_at() {
            wake = wake.min(end);
        }
        timer.until(wake, Instant::now()).await;
        let now = Instant::now();
        if local.cx.stop.is_stopped() || local.cx.fault.is_set() {
            return true;
        }
        if local.end_at().is_some_and(|e| now >= e) || local.active.get() == 0 {
            return false;
        }
        expire(local, now);
        match next_cut {
            None if now >= local.measure_from() => {
                send_warm(local, true);
                next_cut = Some(local.measure_from() + Duration::from_secs(1));
            }
            None if now >= next_warm => {
                send_warm(local, false);
                next_warm += Duration::from_secs(1);
            }
            Some(at) if now >= at => {
                let iv = local.recorder.borrow_mut().cut(local.in_flight.get(), false);
                let _ = local.cx.intervals.send(iv);
                next_cut = Some(at + Duration::from_secs(1));
            }
            _ => {}
        }
    }
}

/// Cuts the warm-up's second (its `last`), if it is still being recorded, and sends it.
fn send_warm(local: &Local, last: bool) {
    if let Some(iv) = local.recorder.borrow_mut().cut_warm(local.in_flight.get(), last) {
        let _ = local.cx.intervals.send(iv);
    }
}

/// Sends the worker's last interval. A run bounded by time ends at its end: the requests
/// still under way then are cut off, in no count (the last interval's `in_flight`, which the
/// summary reports as unfinished), so that every count is of answers within the window and
/// every rate over the window alone, as wrk counts (k6 instead waits `gracefulStop` for its
/// iterations). A run of `-n` requests lets those under way finish (each within
/// `--timeout`), and in the open model waits for the dispatcher, which still starts every
/// request due (with `--timer-slack`, up to the slack after it). After a stop nothing is
/// waited for.
async fn finish(local: &Local, interrupted: bool) {
    local.ending.set(true);
    if !interrupted {
        let open = matches!(local.cx.spec.model, ModelSpec::Open { .. });
        let busy = || local.in_flight.get() > 0 || (open && local.active.get() > 0);
        let mut deadline = Instant::now() + local.cx.spec.timeout + Duration::from_millis(100);
        // Every task may be done before the end (the open model's last due time passed):
        // what is under way is still cut off at the end.
        if let Some(end) = local.end_at() {
            deadline = deadline.min(end);
        }
        let timer = PreciseSleep::new();
        while busy() && Instant::now() < deadline && !local.cx.stop.is_stopped() {
            let now = Instant::now();
            timer.until((now + Duration::from_millis(2)).min(deadline), now).await;
        }
    }
    let unstarted = if interrupted { 0 } else { unstarted(local) };
    // Ended during the warm-up (a stop, or every task done): its last second goes first.
    send_warm(local, true);
    let mut iv = local.recorder.borrow_mut().cut(local.in_flight.get() + unstarted, true);
    iv.opened = Some(local.dial.take());
    iv.elapsed = Instant::now().saturating_duration_since(local.measure_from());
    iv.interrupted = interrupted;
    let _ = local.cx.intervals.send(iv);
}

/// io_uring: this worker's ring, which the connections it opens use (`crate::uring`).
fn start_ring(cx: &WorkerCx) -> Option<crate::uring::Entered> {
    if cx.spec.io != crate::spec::Io::Uring {
        return None;
    }
    match crate::uring::Ring::start() {
        Ok(ring) => Some(crate::uring::enter(ring)),
        Err(e) => {
            // Checked when the spec was made; a worker that still cannot is a fault (the run
            // goes on, on epoll, and is marked not a result).
            cx.fault.record(format!(
                "io_uring: worker {} cannot make its ring ({e}); run with --io epoll",
                cx.index
            ));
            None
        }
    }
}

/// A closed-model virtual user.
async fn user(local: Rc<Local>, mut lane: Lane, index: f64, think: Duration) {
    let mut state = local.iter_state(index as usize);
    // Under a constant profile that reaches it, the user is active throughout: the profile
    // is not read per request.
    let always = local.profile.constant_value().is_some_and(|users| users > index);
    sleep_until(local.start.into()).await;
    loop {
        if local.ending.get() {
            break;
        }
        let now = Instant::now();
        if !always {
            let t = local.secs(now);
            if local.profile.value(t) <= index {
                // Not active now: sleep until the profile reaches this user (or stop for good).
                let Some(next) = local.profile.next_above(index, t) else { break };
                let wake = local.at(next).min(now + Duration::from_millis(50));
                sleep_until(wake.into()).await;
                continue;
            }
        }
        if !local.ticket(now) {
            break;
        }
        // Sent now: in the closed model a request is due when it is sent. One request, or for
        // a scenario file one iteration; awaited here, not in a function of its own, whose
        // state machine every wake-up of every request would pass through.
        let answered = match state.as_mut() {
            Some(st) => local.iterate(&mut lane, st, now, now).await,
            None => local.exchange(&mut lane, now, now).await,
        };
        if !answered {
            // Nothing may have waited (a request that could not be written, a refused
            // connection): the clock, and so the end of the run and a stop, get their turn.
            tokio::task::yield_now().await;
        }
        if !think.is_zero() {
            tokio::time::sleep(think).await;
        }
    }
    local.active.set(local.active.get() - 1);
}

/// The open-model dispatcher: starts each request when it is due.
async fn dispatcher(local: Rc<Local>, limit: u64) {
    let timer = PreciseSleep::new();
    loop {
        let k = local.next_k.get();
        let Some(due) = due_time(&local, k) else { break };
        if local.end_at().is_some_and(|e| due >= e) {
            break;
        }
        // With --timer-slack, a request not yet due waits for the next step of the grid, which
        // starts every request due by then in one wake-up (each still timed from its own due time).
        let now = Instant::now();
        if due > now + EARLY {
            timer.until(slack_wake(local.start, due, local.cx.spec.timer_slack), now).await;
        }
        // Only a stop or a fault ends the schedule early; the end of the run ends the worker,
        // and what is due but not started then is counted unfinished ([`unstarted`]).
        if local.cx.stop.is_stopped() || local.cx.fault.is_set() {
            break;
        }
        local.next_k.set(k + 1);
        if !local.ticket(due) {
            break;
        }
        if local.in_flight.get() >= limit {
            local.recorder.borrow_mut().late(due);
            continue;
        }
        // In flight from now: queued for a runner, then sent.
        local.in_flight.set(local.in_flight.get() + 1);
        local.queue.borrow_mut().push_back(due);
        let idle = local.idle.borrow_mut().pop();
        match idle {
            Some(runner) => runner.wake(),
            None if local.runners.get() < local.max_runners => {
                local.runners.set(local.runners.get() + 1);
                spawn(&local, runner(Rc::clone(&local)));
            }
            // Every runner is busy: the first to finish takes it.
            None => {}
        }
    }
    local.dispatched.set(true);
    for runner in local.idle.take() {
        runner.wake();
    }
    local.active.set(local.active.get() - 1);
}

/// When request `k` of this worker's schedule is due (`None`: the profile has no more).
fn due_time(local: &Local, k: u64) -> Option<Instant> {
    // This worker's requests are numbers index+1, index+1+threads, ... of its shard's, and a
    // shard's every N-th of the whole schedule.
    let threads = local.cx.spec.threads as u64;
    let n = crate::shard::schedule_number(k, threads, local.cx.index as u64, local.cx.spec.shard);
    local.profile.time_of_count(n as f64).map(|s| local.at(s))
}

/// Open model, a run ended at its end: the requests due before it that the dispatcher had
/// not started (it was waiting for the `--timer-slack` grid, or behind), which are under way
/// as much as the queued ones.
fn unstarted(local: &Local) -> u64 {
    let open = matches!(local.cx.spec.model, ModelSpec::Open { .. });
    let Some(end) = local.end_at().filter(|_| open && !local.dispatched.get()) else { return 0 };
    let mut n = 0;
    while due_time(local, local.next_k.get() + n).is_some_and(|due| due < end) {
        n += 1;
    }
    n
}

/// An open-model runner: sends the requests the dispatcher queues, one at a time, each on a
/// lane taken from the pool for it (so h2c streams still go round the connections), until the
/// dispatcher is done and the queue is empty.
async fn runner(local: Rc<Local>) {
    let mut state = local.iter_state(local.runners.get());
    while let Some((due, now)) = next_due(&local).await {
        // Counted in flight again while it is sent.
        local.in_flight.set(local.in_flight.get() - 1);
        let mut lane = local.pool.take();
        // Whether an answer came does not matter here: the runner waits for the next due.
        let _ = match state.as_mut() {
            Some(st) => local.iterate(&mut lane, st, due, now).await,
            None => local.exchange(&mut lane, due, now).await,
        };
        local.pool.give_back(lane);
    }
}

/// The oldest queued request still within its `--timeout`, with the time it was taken (older
/// ones are counted by [`expire`] first); `None` once the dispatcher is done and the queue is
/// empty, or the run is called off. Waits while idle.
async fn next_due(local: &Local) -> Option<(Instant, Instant)> {
    std::future::poll_fn(|cx| {
        if local.cx.stop.is_stopped() || local.cx.fault.is_set() {
            // Called off: what is queued stays in flight in the last interval, as it was.
            return Poll::Ready(None);
        }
        if !local.queue.borrow().is_empty() {
            let now = Instant::now();
            expire(local, now);
            if let Some(due) = local.queue.borrow_mut().pop_front() {
                return Poll::Ready(Some((due, now)));
            }
        }
        if local.dispatched.get() {
            return Poll::Ready(None);
        }
        local.idle.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    })
    .await
}

/// Counts the queued requests that waited for a runner past `--timeout` as unsent `timeout`s
/// (the queue is in due order, so they are at its front). A runner calls it before it takes
/// one, and the clock every 50 ms, so they are counted even while every runner is busy.
fn expire(local: &Local, now: Instant) {
    let timeout = local.cx.spec.timeout;
    let mut queue = local.queue.borrow_mut();
    while let Some(&due) = queue.front() {
        if due + timeout > now {
            break;
        }
        queue.pop_front();
        local.recorder.borrow_mut().unsent(due, ErrorKind::Timeout);
        local.in_flight.set(local.in_flight.get() - 1);
    }
}

/// A request due this soon is started now rather than slept for.
const EARLY: Duration = Duration::from_micros(20);

/// When the dispatcher wakes for a request `due` with `slack`: the first step of the grid
/// `start + k × slack` at or after it (with no slack, `due` itself).
fn slack_wake(start: Instant, due: Instant, slack: Duration) -> Instant {
    if slack.is_zero() {
        return due;
    }
    let since = due.saturating_duration_since(start).as_nanos();
    let step = slack.as_nanos();
    let ceil = since.div_ceil(step) * step;
    start + Duration::from_nanos(u64::try_from(ceil).unwrap_or(u64::MAX))
}

/// Sleeps until an `Instant` with the kernel's high-resolution timers
/// (a timerfd in the worker's runtime), not tokio's 1 ms wheel: the open
/// model's due times must not drift by a millisecond of timer rounding.
struct PreciseSleep {
    fd: Option<tokio::io::unix::AsyncFd<sys::TimerFd>>,
}

impl PreciseSleep {
    fn new() -> PreciseSleep {
        // Without a timerfd (not Linux, or out of descriptors) fall back to tokio's timer.
        PreciseSleep { fd: sys::async_timer() }
    }

    /// Sleeps until `deadline`; `now` was read off the clock just before.
    async fn until(&self, deadline: Instant, now: Instant) {
        let Some(fd) = &self.fd else {
            sleep_until(deadline.into()).await;
            return;
        };
        if deadline <= now + EARLY {
            return;
        }
        if fd.get_ref().arm(deadline - now).is_err() {
            sleep_until(deadline.into()).await;
            return;
        }
        loop {
            let Ok(mut guard) = fd.readable().await else {
                sleep_until(deadline.into()).await;
                return;
            };
            // The expiration is not read: arming the timer again resets its count, and the
            // registration is edge-triggered, so each expiration wakes once (a syscall fewer
            // per request). A readiness left from an earlier arming is told by the clock.
            guard.clear_ready();
            if Instant::now() + EARLY >= deadline {
                return;
            }
        }
    }
}

/// Worker `index`'s handshakes, for an `https://` target: with room for a TLS session ticket
/// for each connection it may hold at once (its share of the closed model's users, or of the
/// open model's cap), taken when they are opened per request or iteration, or opened again.
fn connector(spec: &LoadSpec, index: usize) -> Option<crate::tls::Connector> {
    let at_once = match spec.model {
        ModelSpec::Closed { connections, streams, .. } => split(connections, spec.threads, index) * streams,
        ModelSpec::Open { connections, max_connections, .. } => {
            split(max_connections.max(connections), spec.threads, index)
        }
    };
    spec.tls.as_ref().map(|t| t.connector(at_once, spec.new_connection.is_none()))
}

/// Worker `index`'s share of `total` items split over `parts`.
pub fn split(total: usize, parts: usize, index: usize) -> usize {
    total / parts + usize::from(index < total % parts)
}

/// Where worker `index` starts in a request pool of `len` (spread out, like `RequestGen::fork`).
fn start_offset(len: usize, index: usize) -> usize {
    (index * (len / 7).max(1)) % len.max(1)
}

mod iterate;

#[cfg(test)]
mod tests;
