//! A measured run as it happens: the load runs on its own thread while this
//! one (moved to the load's cores for the time) samples the contestant's process tree (and cgroup) every interval,
//! watches for the contestant ending (a crash stops the load at once: its
//! errors up to then are the record), and forwards Ctrl-C to the load.
//! Afterwards the samples taken during the warm-up are cut off (they precede
//! the record's `started_at_ms`) and the rest summarised onto the record.

use std::time::{Duration, Instant};

use stackbench_record::RunRecord;

use crate::cgroup::{Applied, CgroupCounters, LimitGroup};
use crate::load::{Cancel, LoadDriver, LoadJob};
use crate::process::{Exit, Process};
use crate::sampler::{ProcSource, Sampler, read_tree};
use crate::store::now_ms;

/// What a watched run produced.
#[derive(Debug)]
pub struct Watched {
    pub result: Result<RunRecord, String>,
    pub sampler: Sampler,
    /// Cgroup counters with the wall clock (ms) they were read at.
    pub readings: Vec<(u64, CgroupCounters)>,
    /// The contestant ended during the run.
    pub crashed: Option<Exit>,
    /// The load's thread panicked (a failure of stackbench, not a result).
    pub panicked: Option<String>,
    /// The warm-up ran at a larger quota ([`Lift`]): when the budget came back.
    pub lifted: Option<Lifted>,
}

/// A budgeted run's warm-up at a larger CPU quota: the contestant's group has `warm` cores
/// from the load's start and `budget` again `until` after it (before the measured window).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lift {
    pub warm: f64,
    pub budget: f64,
    pub until: Duration,
}

/// What a [`Lift`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifted {
    pub warm: f64,
    /// The wall clock (ms) from which the budget held again, or why it did not.
    pub budget_from_ms: Result<u64, String>,
}

/// The contestant side of a watched run.
pub struct Target<'a> {
    pub process: &'a mut dyn Process,
    pub group: Option<&'a dyn LimitGroup>,
    pub procs: Box<dyn ProcSource>,
    /// Its warm-up at a larger quota (a budgeted group only).
    pub lift: Option<Lift>,
    /// Fired once the budget is in force: when a lift ends, or at once without one.
    pub budget_back: Option<Cancel>,
}

/// Runs `job` to its end, watching `target` (none for an external server).
pub fn drive(
    load: &dyn LoadDriver,
    job: &LoadJob,
    interrupt: &Cancel,
    target: Option<Target<'_>>,
    interval: Duration,
) -> Watched {
    // The watching thread (sampler, crash watch) runs beside the load, off the
    // contestant's cores; its affinity is restored afterwards so later
    // processes do not inherit it.
    let previous = crate::process::affinity::get();
    let moved = job.cpus.as_deref().is_some_and(crate::process::affinity::set);
    let cancel = Cancel::new();
    let mut w = Watched {
        result: Err(String::new()),
        sampler: Sampler::default(),
        readings: Vec::new(),
        crashed: None,
        panicked: None,
        lifted: None,
    };
    let joined = std::thread::scope(|s| {
        // A budgeted contestant's load gets a reserved share of its cores, as the contestant has.
        let reserve =
            target.as_ref().and_then(|t| t.group).is_some_and(|g| g.applied().request.cpu_quota.is_some());
        let cancel = &cancel;
        // The warm-up's quota, from before the load's first request (a failed write leaves the
        // budget in force, and nothing to undo).
        let lift = target.as_ref().and_then(|t| Some((t.group?, t.lift?)));
        let mut lift = lift.filter(|(g, l)| g.set_cpu_quota(l.warm).is_ok());
        let back = target.as_ref().and_then(|t| t.budget_back.clone());
        if let Some(b) = back.as_ref().filter(|_| lift.is_none()) {
            b.cancel();
        }
        let handle = s.spawn(move || {
            let _reserved = reserve.then(|| crate::cgroup::reserve::reserve_this_thread("load").ok());
            load.run(job, cancel)
        });
        let Some(mut t) = target else {
            while !handle.is_finished() {
                if interrupt.is_cancelled() {
                    cancel.cancel();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            return handle.join();
        };
        let hz = t.procs.ticks_per_second();
        let pid = t.process.pid() as i32;
        let t0 = Instant::now();
        let mut next = t0;
        while !handle.is_finished() {
            if lift.is_some_and(|(_, l)| t0.elapsed() >= l.until) {
                restore(&mut lift, &mut w, back.as_ref());
            }
            if interrupt.is_cancelled() {
                cancel.cancel();
            }
            if w.crashed.is_none()
                && let Some(exit) = t.process.try_exit()
            {
                w.crashed = Some(exit);
                cancel.cancel();
            }
            let now = Instant::now();
            if now >= next {
                let reading = read_tree(t.procs.as_mut(), pid);
                w.sampler.add(now.duration_since(t0).as_millis() as u64, now_ms(), reading, hz);
                if let Some(g) = t.group {
                    w.readings.push((now_ms(), g.counters()));
                }
                next += interval;
            }
            std::thread::sleep(next.saturating_duration_since(Instant::now()).min(Duration::from_millis(10)));
        }
        // A load that ended before the warm-up did (a crash, Ctrl-C): the budget comes back.
        restore(&mut lift, &mut w, back.as_ref());
        handle.join()
    });
    match joined {
        Ok(result) => w.result = result,
        Err(payload) => {
            w.panicked = Some(stackbench_load::describe_panic("the load thread", &*payload, None));
        }
    }
    if moved {
        crate::process::affinity::set(&previous);
    }
    w
}

/// Ends a [`Lift`]: the budget back, and when.
fn restore(lift: &mut Option<(&dyn LimitGroup, Lift)>, w: &mut Watched, budget_back: Option<&Cancel>) {
    if let Some((g, l)) = lift.take() {
        let back = g.set_cpu_quota(l.budget).map(|()| now_ms());
        w.lifted = Some(Lifted { warm: l.warm, budget_from_ms: back });
        if let Some(b) = budget_back {
            b.cancel();
        }
    }
}

/// Puts the measured part of the samples (and the cgroup's usage) on the record.
pub fn attach_samples(record: &mut RunRecord, w: &Watched, interval: Duration, limits: Option<Applied>) {
    let from = record.started_at_ms;
    let mut samples = w.sampler.summary(interval.as_millis() as u64, from);
    if let Some(applied) = limits {
        let after: Vec<&(u64, CgroupCounters)> = w.readings.iter().filter(|(t, _)| *t >= from).collect();
        let first = w.readings.iter().rev().find(|(t, _)| *t <= from).or(after.first().copied());
        if let (Some((_, start)), Some((_, end))) = (first, w.readings.last()) {
            let peak = after.iter().map(|(_, c)| c.memory_bytes).max().unwrap_or(0);
            samples.cgroup = Some(end.since(start, applied, peak));
        }
    }
    record.samples = Some(samples);
}

/// One progress line for a finished run.
pub fn describe(record: &RunRecord) -> String {
    use std::fmt::Write as _;
    if let Some(search) = &record.find_max {
        let steps = search.steps.len();
        return format!(
            "  {} ({steps} steps of {:.1} s)",
            stackbench_load::search_sentence(search, record),
            search.step_s
        );
    }
    let s = &record.summary;
    let mut line = format!(
        "  {:.0} ok/s, p50 {:.2} ms, p99 {:.2} ms, {} errors of {} requests",
        s.ok_rps,
        s.latency.p50_us as f64 / 1000.0,
        s.latency.p99_us as f64 / 1000.0,
        s.errors,
        s.requests
    );
    // `warmup = "auto"`: when the measured window began, and why.
    if let Some(w) = record.warmup.as_ref().filter(|w| w.auto) {
        let _ = match w.steady_from_s {
            Some(t) => write!(line, "; measured from {:.0} s, steady from {t} s", w.summary.duration_s),
            None if w.never_steady => {
                write!(line, "; never steady within {:.0} s of warm-up", w.summary.duration_s)
            }
            None => Ok(()),
        };
    }
    if let Some(sm) = &record.samples {
        let _ = write!(
            line,
            "; contestant CPU p50 {:.0}%, RSS max {:.1} MiB",
            sm.cpu_percent.p50,
            sm.rss_bytes.max / 1_048_576.0
        );
        if let Some(cg) = &sm.cgroup {
            let _ = write!(line, ", throttled {:.2} s", cg.throttled_s);
        }
    }
    if !record.errors.is_empty() {
        let kinds: Vec<String> = record.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = write!(line, " [{}]", kinds.join(", "));
    }
    if record.interrupted {
        line.push_str(" (interrupted: partial run saved)");
    }
    line
}

#[cfg(test)]
mod tests;
