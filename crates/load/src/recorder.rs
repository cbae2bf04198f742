//! The per-worker recorder: one HdrHistogram for the current second (and one
//! for service time in the open model), counters and errors by kind. Nothing
//! is shared with other threads on the per-request path; once a second the
//! worker hands the second's [`Interval`] to the collector (one message per
//! worker per second) and starts a fresh one, so memory stays bounded however
//! long the run.
//!
//! Which requests count: those whose intended send time is inside the
//! measured phase. Warm-up requests go to the warm-up's own seconds (cut on
//! the grid of the load's start, marked [`Interval::warmup`]), judged by their
//! status only; one answered after the measured phase began is in neither. The
//! measured phase begins at the shared [`MeasureStart`], which `--warmup auto`
//! may move earlier while the load runs. A request is filed under the second
//! in which it completed (a late request under the second it was due).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use stackbench_record::{ErrorKind, HIGHEST_US, NotSent, new_histogram};

use crate::tally::{Counts, FirstTally, MeasureStart, add_error};
use crate::values::CheckEvery;
use crate::wire::{Answer, Prepared};

/// One worker's second (or the final partial second).
#[derive(Debug)]
pub struct Interval {
    pub worker: usize,
    /// 0-based second of the measured phase (of the warm-up, for a warm-up interval).
    pub second: u32,
    /// A second of the warm-up, not of the measured phase.
    pub warmup: bool,
    /// What the second counted.
    pub counts: Counts,
    /// Requests outstanding on this worker when the interval was cut.
    pub in_flight: u64,
    /// The check interval this worker was using.
    pub check_every: u32,
    /// The worker's last interval.
    pub last: bool,
    /// Last interval: time from the start of the measured phase to the worker's end.
    pub elapsed: Duration,
    /// Last interval: the worker stopped because of a stop request.
    pub interrupted: bool,
    /// Last interval, scenario files: the whole run's requests of each name (by index).
    pub named: Vec<Counts>,
    /// Last interval, scenario files: the whole run's iterations.
    pub iterations: Option<Counts>,
    /// Last interval: the measured requests that opened their connection.
    pub first: Option<FirstTally>,
    /// Last interval: what the worker's connections cost (`crate::dial`), set by the worker.
    pub opened: Option<crate::dial::Opened>,
}

/// Histograms the collector has merged and cleared, for the workers' next seconds. A second's
/// histogram has 17,000 buckets (1 µs to 60 s at 3 digits); allocating and zeroing a new one at
/// every cut put that work on the worker's thread once a second (twice in the open model),
/// where a recycled one costs a lock. The collector clears what it has merged and gives it
/// back; a worker finding none makes a new one.
#[derive(Debug, Clone, Default)]
pub struct Spares(Arc<Mutex<Vec<Histogram<u64>>>>);

impl Spares {
    /// Spares kept at most (a few seconds' worth for a few workers).
    const KEEP: usize = 64;

    /// A cleared histogram: a spare, or a new one.
    pub fn take(&self) -> Histogram<u64> {
        self.0.lock().ok().and_then(|mut v| v.pop()).unwrap_or_else(new_histogram)
    }

    /// Clears `h` and keeps it for a worker's next second.
    pub fn give(&self, mut h: Histogram<u64>) {
        h.reset();
        if let Ok(mut v) = self.0.lock()
            && v.len() < Spares::KEEP
        {
            v.push(h);
        }
    }
}

/// Adds a measured second's requests (`iv`) to `name`, but those counted under no name
/// (`unnamed`): a file's one name is added up from its seconds.
fn add_second(name: &mut Counts, iv: &Interval, unnamed: &[(ErrorKind, u64)]) {
    let c = &iv.counts;
    let _ = name.latency.add(&c.latency);
    name.completed += c.completed.saturating_sub(unnamed.iter().map(|&(_, n)| n).sum());
    name.ok += c.ok;
    for &(kind, n) in &c.errors {
        let n = n.saturating_sub(unnamed.iter().find(|(k, _)| *k == kind).map_or(0, |&(_, m)| m));
        match name.errors.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, m)) => *m += n,
            None if n > 0 => name.errors.push((kind, n)),
            None => {}
        }
    }
}

/// How a request ended, before recording.
pub type Outcome<'a> = Result<Answer<'a>, ErrorKind>;

/// A scenario file's request as [`Recorder::record_step`] records it.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Its name (the index in the file's names).
    pub name: usize,
    /// Bytes written.
    pub sent_size: u64,
    /// When it was due, sent, and when it ended.
    pub times: (Instant, Instant, Instant),
    /// Bytes of its answer (`None`: no answer).
    pub received: Option<u64>,
    pub result: Result<(), ErrorKind>,
    /// Checked on its turn: whether a check failed (`None`: not its turn, or no answer).
    pub checked: Option<bool>,
    /// It is its iteration's one request: the iteration is recorded with it.
    pub whole: bool,
}

/// Records one worker's requests.
#[derive(Debug)]
pub struct Recorder {
    worker: usize,
    /// Where each second's histograms come from.
    spares: Spares,
    start: Instant,
    measure: Arc<MeasureStart>,
    open_model: bool,
    second: u32,
    current: Interval,
    /// The warm-up's current second, until the warm-up's last is cut (`None` without one).
    warm: Option<Interval>,
    check_auto: bool,
    check_every: u32,
    since_check: u32,
    /// Time spent in the checker during the current second.
    check_time: Duration,
    /// Scenario files: the requests of each name, and the iterations.
    named: Vec<Counts>,
    iterations: Option<Counts>,
    /// Every iteration is one request (each flow has one): the iterations are then the
    /// names' tallies together, added once when the last second is cut, and `iterations`
    /// keeps only what an iteration has beyond its request (the latency of a request
    /// without an answer, an iteration that sent none).
    one_request: bool,
    /// Measured requests that opened their connection (made at the first).
    first: Option<FirstTally>,
    /// The file's requests have one name: its tally is the measured seconds' requests but
    /// those counted under no name ([`Recorder::late`], [`Recorder::unsent`]), added up as
    /// each second is cut instead of recorded a second time per request. Then `Some`: the
    /// current second's requests counted under no name, by outcome.
    unnamed: Option<Vec<(ErrorKind, u64)>>,
}

impl Recorder {
    /// `start`: the load's; `measure`: when its measured phase begins. `names`: a scenario
    /// file's request names (0 otherwise: no iterations are kept), and whether each of its
    /// iterations is one request. Each second's histograms are taken from `spares`.
    pub fn new(
        worker: usize,
        (start, measure): (Instant, Arc<MeasureStart>),
        open_model: bool,
        check: CheckEvery,
        (names, one_request): (usize, bool),
        spares: Spares,
    ) -> Recorder {
        let (check_auto, check_every) = match check {
            CheckEvery::Auto => (true, 1),
            CheckEvery::Every(k) => (false, k),
        };
        let warm = (!measure.offset().is_zero()).then(|| {
            let mut iv = Recorder::blank(&spares, worker, 0, open_model, check_every);
            iv.warmup = true;
            iv
        });
        let current = Recorder::blank(&spares, worker, 0, open_model, check_every);
        Recorder {
            worker,
            spares,
            start,
            measure,
            open_model,
            second: 0,
            current,
            warm,
            check_auto,
            check_every,
            since_check: 0,
            check_time: Duration::ZERO,
            named: (0..names).map(|_| Counts::default()).collect(),
            iterations: (names > 0).then(Counts::default),
            one_request,
            first: None,
            unnamed: (names == 1).then(Vec::new),
        }
    }

    fn blank(spares: &Spares, worker: usize, second: u32, open_model: bool, check_every: u32) -> Interval {
        Interval {
            worker,
            second,
            warmup: false,
            counts: Counts::new(spares.take(), open_model.then(|| spares.take())),
            in_flight: 0,
            check_every,
            last: false,
            elapsed: Duration::ZERO,
            interrupted: false,
            named: Vec::new(),
            iterations: None,
            first: None,
            opened: None,
        }
    }

    /// Is a request due (or sent, in the closed model) at `t` measured?
    pub fn measured(&self, t: Instant) -> bool {
        t >= self.start + self.measure.offset()
    }

    /// The second a request due at `t` is filed under: the measured one, the warm-up's, or
    /// none (a warm-up request answered after the warm-up's last second was cut).
    fn interval(&mut self, t: Instant) -> Option<&mut Interval> {
        if self.measured(t) { Some(&mut self.current) } else { self.warm.as_mut() }
    }

    /// Records a finished request: `intended` is when it was due (the open
    /// model's start for latency), `sent` when it was actually sent, `now`
    /// when it ended.
    pub fn record(
        &mut self,
        req: &Prepared,
        intended: Instant,
        sent: Instant,
        now: Instant,
        outcome: &Outcome<'_>,
    ) {
        let measured = self.measured(intended);
        if !measured && self.warm.is_none() {
            return;
        }
        let result = match outcome {
            Err(kind) => Err(*kind),
            Ok(a) => Recorder::judge(a),
        };
        let received = outcome.as_ref().ok().map(|a| a.received);
        self.tally(req.sent_size, (intended, sent, now), measured, received, result);
    }

    /// A request due at `intended` and ended at `now` opened its connection, which took
    /// `setup` (the connect and the TLS handshake): a measured one is kept with and without it.
    pub fn opened(&mut self, intended: Instant, now: Instant, setup: Duration) {
        if !self.measured(intended) {
            return;
        }
        let with = now.saturating_duration_since(intended);
        let f = self.first.get_or_insert_with(|| FirstTally {
            requests: 0,
            with: stackbench_record::new_histogram(),
            without: stackbench_record::new_histogram(),
        });
        f.requests += 1;
        f.with.saturating_record(micros(with));
        f.without.saturating_record(micros(with.saturating_sub(setup)));
    }

    /// Records a scenario file's request (`step`, judged by the caller: [`Recorder::check_turn`])
    /// in one call: its second, its name, its check when it had its turn, and, for an
    /// iteration of this one request (`step.whole`), the iteration, as
    /// [`Recorder::record_iteration`] would. Returns its latency in µs from `intended`, when
    /// it has one.
    pub fn record_step(&mut self, step: &Step) -> Option<u64> {
        let (intended, sent, now) = step.times;
        let measured = self.measured(intended);
        if let Some(failed) = step.checked {
            self.check_done(now, measured, failed);
        }
        let latency = self.tally(step.sent_size, (intended, sent, now), measured, step.received, step.result);
        if measured {
            if let Some(t) = self.named.get_mut(step.name).filter(|_| self.unnamed.is_none()) {
                t.add(latency, step.result);
            }
            if step.whole {
                self.whole_iteration(intended, now, latency, step.result);
            }
        }
        latency
    }

    /// Records an iteration that started (was due, in the open model) at `intended` and
    /// ended at `now`; `Ok` when every one of its requests was.
    pub fn record_iteration(&mut self, intended: Instant, now: Instant, result: Result<(), ErrorKind>) {
        if self.measured(intended) {
            self.add_iteration(intended, now, None, result);
        }
    }

    /// A measured iteration of one request, recorded under its name with `latency`: as
    /// [`Recorder::add_iteration`], or only the latency that its name's tally lacks.
    fn whole_iteration(
        &mut self,
        intended: Instant,
        now: Instant,
        latency: Option<u64>,
        result: Result<(), ErrorKind>,
    ) {
        if !self.one_request {
            return self.add_iteration(intended, now, latency, result);
        }
        if let (None, Some(t)) = (latency, &mut self.iterations) {
            t.latency.saturating_record(micros(now.saturating_duration_since(intended)));
        }
    }

    /// [`Recorder::record_iteration`] of a measured iteration; `latency`: its latency in µs
    /// when the caller has it (an iteration of one request, counted from `intended` to `now`).
    fn add_iteration(
        &mut self,
        intended: Instant,
        now: Instant,
        latency: Option<u64>,
        result: Result<(), ErrorKind>,
    ) {
        if let Some(t) = &mut self.iterations {
            let latency = latency.unwrap_or_else(|| micros(now.saturating_duration_since(intended)));
            t.add(Some(latency), result);
        }
    }

    /// Counts one request into its second (measured or warm-up, [`Recorder::interval`]);
    /// returns its latency when it has one.
    fn tally(
        &mut self,
        sent_size: u64,
        (intended, sent, now): (Instant, Instant, Instant),
        measured: bool,
        received: Option<u64>,
        result: Result<(), ErrorKind>,
    ) -> Option<u64> {
        let unsent =
            matches!(result, Err(ErrorKind::Connect | ErrorKind::TlsHandshake | ErrorKind::TlsCertificate));
        let answered = !unsent && result != Err(ErrorKind::Timeout);
        let latency = answered.then(|| micros(now.saturating_duration_since(intended)));
        let c = &mut (if measured { &mut self.current } else { self.warm.as_mut()? }).counts;
        c.completed += 1;
        // A request that found no connection (none made, or no handshake) was never sent.
        if !unsent {
            c.bytes_sent += sent_size;
        }
        c.bytes_received += received.unwrap_or(0);
        // An answered failure still has a latency; a request that was not answered (no answer
        // in time, or no connection: refused or not accepted in time) has none.
        if let Some(lat) = latency {
            c.latency.saturating_record(lat);
            if let Some(s) = &mut c.service {
                s.saturating_record(micros(now.saturating_duration_since(sent)));
            }
        }
        match result {
            Ok(()) => c.ok += 1,
            Err(kind) => add_error(&mut c.errors, kind),
        }
        latency
    }

    /// Scenario files: is it this answer's turn to have its asserts checked (`--check-every`)?
    pub fn check_turn(&mut self) -> bool {
        if self.check_every == 0 {
            return false;
        }
        self.since_check += 1;
        if self.since_check < self.check_every {
            return false;
        }
        self.since_check = 0;
        true
    }

    /// Scenario files: an answer was checked on its turn, from `started`; `failed` when a
    /// check did not hold.
    fn check_done(&mut self, started: Instant, measured: bool, failed: bool) {
        if self.check_auto {
            self.check_time += started.elapsed();
        }
        if measured {
            self.current.counts.checks_performed += 1;
            self.current.counts.checks_failed += u64::from(failed);
        }
    }

    /// A request that was due at `due` but could not be sent (in-flight limit).
    pub fn late(&mut self, due: Instant) {
        if let Some(c) = self.unnamed_second(due, ErrorKind::Late).map(|iv| &mut iv.counts) {
            c.completed += 1;
            c.late += 1;
            add_error(&mut c.errors, ErrorKind::Late);
        }
    }

    /// The second of a request due at `due` counted under no name (as
    /// [`Recorder::interval`]), which the one name's tally then leaves out.
    fn unnamed_second(&mut self, due: Instant, kind: ErrorKind) -> Option<&mut Interval> {
        if self.measured(due)
            && let Some(unnamed) = &mut self.unnamed
        {
            add_error(unnamed, kind);
        }
        self.interval(due)
    }

    /// A scenario file's request of name `name` (its index) that was due at `due` but could
    /// not be written (`why`), counted `check` with no latency; when it is its iteration's
    /// one request (`whole`), the iteration ends with it, now.
    pub fn unsent_step(&mut self, name: usize, due: Instant, why: &str, whole: bool) {
        let kind = ErrorKind::Check;
        if let Some(c) = self.interval(due) {
            Recorder::count_unsent(c, kind);
        }
        if self.measured(due) {
            if let Some(t) = self.named.get_mut(name) {
                NotSent::add(&mut t.not_sent, why, 1);
                if self.unnamed.is_none() {
                    t.add(None, Err(kind));
                }
            }
            if whole {
                self.whole_iteration(due, Instant::now(), None, Err(kind));
            }
        }
    }

    /// A request that was due at `due` but never sent (no connection came free in time).
    pub fn unsent(&mut self, due: Instant, kind: ErrorKind) {
        if let Some(c) = self.unnamed_second(due, kind) {
            Recorder::count_unsent(c, kind);
        }
    }

    /// An unsent request in its second `c`.
    fn count_unsent(c: &mut Interval, kind: ErrorKind) {
        c.counts.completed += 1;
        add_error(&mut c.counts.errors, kind);
    }

    /// A fixed request's answer: its status (a scenario's answers are judged by its file,
    /// [`Recorder::record_step`]).
    fn judge(a: &Answer<'_>) -> Result<(), ErrorKind> {
        if let Some(code) = a.grpc_status.filter(|&c| c != 0) {
            return Err(ErrorKind::Grpc(code));
        }
        if a.status >= 400 { Err(ErrorKind::Http(a.status)) } else { Ok(()) }
    }

    /// Cuts the current second and starts the next. `auto` check-every
    /// doubles K when checking took more than 5% of the second.
    pub fn cut(&mut self, in_flight: u64, last: bool) -> Interval {
        if self.check_auto && self.check_time > Duration::from_millis(50) && self.check_every < 1 << 16 {
            self.check_every *= 2;
        }
        self.check_time = Duration::ZERO;
        let next =
            Recorder::blank(&self.spares, self.worker, self.second + 1, self.open_model, self.check_every);
        let mut done = std::mem::replace(&mut self.current, next);
        if let (Some(t), Some(unnamed)) = (self.named.first_mut(), &mut self.unnamed) {
            add_second(t, &done, unnamed);
            unnamed.clear();
        }
        done.in_flight = in_flight;
        done.last = last;
        if last {
            if let Some(t) = self.iterations.as_mut().filter(|_| self.one_request) {
                self.named.iter().for_each(|n| t.merge(n));
            }
            done.named = std::mem::take(&mut self.named);
            done.iterations = self.iterations.take();
            done.first = self.first.take();
        }
        self.second += 1;
        done
    }
}

impl Recorder {
    /// Cuts the warm-up's current second and, unless `last`, starts its next; `None` once
    /// its last was cut (or without a warm-up).
    pub fn cut_warm(&mut self, in_flight: u64, last: bool) -> Option<Interval> {
        let mut done = self.warm.take()?;
        if !last {
            let mut next = Recorder::blank(
                &self.spares,
                self.worker,
                done.second + 1,
                self.open_model,
                self.check_every,
            );
            next.warmup = true;
            self.warm = Some(next);
        }
        done.in_flight = in_flight;
        done.last = last;
        Some(done)
    }
}

/// A duration in whole µs, at least 1 and at most the histogram's top.
fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HIGHEST_US)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same requests recorded under the first of two names (each request recorded under
    /// it) and under a file's one name (added up from the seconds): the name's tallies agree,
    /// those counted under no name (late, unsent) and the warm-up's left out of both.
    #[test]
    fn one_name_is_added_up_from_its_seconds() {
        let start = Instant::now();
        let warm = Duration::from_millis(500);
        let record = |names: usize| {
            let measure = Arc::new(MeasureStart::new(warm));
            let spares = Spares::default();
            let mut r = Recorder::new(0, (start, measure), true, CheckEvery::Every(1), (names, true), spares);
            let mut last = None;
            for k in 0..3 {
                // The first second is the warm-up's.
                let due = start + warm * k;
                for (result, received) in
                    [(Ok(()), Some(5)), (Err(ErrorKind::Check), Some(5)), (Err(ErrorKind::Timeout), None)]
                {
                    let times = (due, due, due + Duration::from_micros(300 * u64::from(k + 1)));
                    let checked = Some(result.is_err());
                    let step = Step { name: 0, sent_size: 10, times, received, result, checked, whole: true };
                    r.record_step(&step);
                }
                r.unsent_step(0, due, "no value", true);
                r.late(due);
                r.unsent(due, ErrorKind::Timeout);
                last = Some(r.cut(0, k == 2));
            }
            let mut named = last.unwrap().named.swap_remove(0);
            named.errors.sort();
            named
        };
        let (each, summed) = (record(2), record(1));
        assert_eq!(summed.completed, 8);
        assert_eq!((summed.completed, summed.ok, &summed.errors), (each.completed, each.ok, &each.errors));
        assert_eq!(summed.latency, each.latency);
        assert_eq!(summed.latency.len(), 4);
    }
}
