//! The per-worker recorder: one HdrHistogram for the current second (and one
//! for service time in the open model), counters and errors by kind. Nothing
//! is shared with other threads on the per-request path; once a second the
//! worker hands the second's [`Interval`] to the collector (one message per
//! worker per second) and starts a fresh one, so memory stays bounded however
//! long the run.
//!
//! Which requests count: those whose intended send time is inside the
//! measured phase (warm-up requests are not recorded). A request is filed
//! under the second in which it completed (a late request under the second it
//! was due).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use stackbench_record::{ErrorKind, histogram::HIGHEST_US, new_histogram};
use stackbench_scenarios::check::{ResponseView, check};

use crate::parse::CheckEvery;
use crate::transport::{Answer, Prepared};

/// One worker's second (or the final partial second).
#[derive(Debug)]
pub struct Interval {
    pub worker: usize,
    /// 0-based second of the measured phase.
    pub second: u32,
    pub latency: Histogram<u64>,
    pub service: Option<Histogram<u64>>,
    pub completed: u64,
    pub ok: u64,
    pub errors: Vec<(ErrorKind, u64)>,
    pub late: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub checks_performed: u64,
    pub checks_failed: u64,
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
}

/// How a request ended, before recording.
pub type Outcome<'a> = Result<Answer<'a>, ErrorKind>;

/// Records one worker's requests.
#[derive(Debug)]
pub struct Recorder {
    worker: usize,
    measure_from: Instant,
    open_model: bool,
    second: u32,
    current: Interval,
    check_auto: bool,
    check_every: u32,
    since_check: u32,
    /// Time spent in the checker during the current second.
    check_time: Duration,
}

impl Recorder {
    pub fn new(worker: usize, measure_from: Instant, open_model: bool, check: CheckEvery) -> Recorder {
        let (check_auto, check_every) = match check {
            CheckEvery::Auto => (true, 1),
            CheckEvery::Every(k) => (false, k),
        };
        Recorder {
            worker,
            measure_from,
            open_model,
            second: 0,
            current: Recorder::blank(worker, 0, open_model, check_every),
            check_auto,
            check_every,
            since_check: 0,
            check_time: Duration::ZERO,
        }
    }

    fn blank(worker: usize, second: u32, open_model: bool, check_every: u32) -> Interval {
        Interval {
            worker,
            second,
            latency: new_histogram(),
            service: open_model.then(new_histogram),
            completed: 0,
            ok: 0,
            errors: Vec::new(),
            late: 0,
            bytes_sent: 0,
            bytes_received: 0,
            checks_performed: 0,
            checks_failed: 0,
            in_flight: 0,
            check_every,
            last: false,
            elapsed: Duration::ZERO,
            interrupted: false,
        }
    }

    /// Is a request due (or sent, in the closed model) at `t` measured?
    pub fn measured(&self, t: Instant) -> bool {
        t >= self.measure_from
    }

    /// Records a finished request: `intended` is when it was due (the open
    /// model's start for latency), `sent` when it was actually sent, `now`
    /// when it ended. Checks the answer when it is the check's turn.
    pub fn record(
        &mut self,
        req: &Prepared,
        intended: Instant,
        sent: Instant,
        now: Instant,
        outcome: &Outcome<'_>,
    ) {
        if !self.measured(intended) {
            return;
        }
        let c = &mut self.current;
        c.completed += 1;
        // A request that found no connection was never sent.
        if !matches!(outcome, Err(ErrorKind::Connect)) {
            c.bytes_sent += req.sent_size;
        }
        let result = match outcome {
            Err(kind) => Err(*kind),
            Ok(a) => {
                c.bytes_received += a.received;
                self.judge(req, a, now)
            }
        };
        let c = &mut self.current;
        match result {
            Ok(()) => {
                c.ok += 1;
                let lat = micros(now.saturating_duration_since(intended));
                c.latency.saturating_record(lat);
                if let Some(s) = &mut c.service {
                    s.saturating_record(micros(now.saturating_duration_since(sent)));
                }
            }
            Err(kind) => {
                if !matches!(kind, ErrorKind::Timeout | ErrorKind::Connect) {
                    // An answered failure still has a latency; a request that was not
                    // answered (no answer in time, or no connection: refused or not
                    // accepted in time) has none.
                    c.latency.saturating_record(micros(now.saturating_duration_since(intended)));
                    if let Some(s) = &mut c.service {
                        s.saturating_record(micros(now.saturating_duration_since(sent)));
                    }
                }
                add_error(&mut c.errors, kind);
            }
        }
    }

    /// A request that was due at `due` but could not be sent (in-flight limit).
    pub fn late(&mut self, due: Instant) {
        if self.measured(due) {
            self.current.completed += 1;
            self.current.late += 1;
            add_error(&mut self.current.errors, ErrorKind::Late);
        }
    }

    /// A request that was due at `due` but never sent (no connection came free in time).
    pub fn unsent(&mut self, due: Instant, kind: ErrorKind) {
        if self.measured(due) {
            self.current.completed += 1;
            add_error(&mut self.current.errors, kind);
        }
    }

    fn judge(&mut self, req: &Prepared, a: &Answer<'_>, now: Instant) -> Result<(), ErrorKind> {
        if let Some(code) = a.grpc_status.filter(|&c| c != 0) {
            return Err(ErrorKind::Grpc(code));
        }
        let Some(expect) = &req.expect else {
            return if a.status >= 400 { Err(ErrorKind::Http(a.status)) } else { Ok(()) };
        };
        if a.status != 200 {
            return Err(ErrorKind::Http(a.status));
        }
        if self.check_every == 0 {
            return Ok(());
        }
        self.since_check += 1;
        if self.since_check < self.check_every {
            return Ok(());
        }
        self.since_check = 0;
        let view = ResponseView { status: a.status, content_type: a.content_type, body: a.body };
        let verdict = check(expect, &view);
        if self.check_auto {
            self.check_time += now.elapsed();
        }
        self.current.checks_performed += 1;
        if verdict.is_err() {
            self.current.checks_failed += 1;
            return Err(ErrorKind::Check);
        }
        Ok(())
    }

    /// Cuts the current second and starts the next. `auto` check-every
    /// doubles K when checking took more than 5% of the second.
    pub fn cut(&mut self, in_flight: u64, last: bool) -> Interval {
        if self.check_auto && self.check_time > Duration::from_millis(50) && self.check_every < 1 << 16 {
            self.check_every *= 2;
        }
        self.check_time = Duration::ZERO;
        let next = Recorder::blank(self.worker, self.second + 1, self.open_model, self.check_every);
        let mut done = std::mem::replace(&mut self.current, next);
        done.in_flight = in_flight;
        done.last = last;
        self.second += 1;
        done
    }
}

fn add_error(errors: &mut Vec<(ErrorKind, u64)>, kind: ErrorKind) {
    match errors.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, n)) => *n += 1,
        None => errors.push((kind, 1)),
    }
}

/// A duration in whole µs, at least 1 and at most the histogram's top.
fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HIGHEST_US)
}
