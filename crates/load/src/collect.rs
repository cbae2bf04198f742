//! The collector, on the calling thread: merges the workers' per-second
//! [`Interval`]s (HdrHistogram merging is lossless) into the timeline and the
//! run's totals, writes each second to the interval log, and prints the live
//! progress line. A second is final once every worker has reported it (or has
//! finished earlier).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::Duration;

use stackbench_record::{Latency, Second, Summary, encode_histogram, new_histogram};

use crate::dial::Opened;
use crate::hlog::HlogWriter;
use crate::recorder::{Interval, Spares};
use crate::tally::{Counts, FirstTally};

/// Totals of a run, merged from every worker.
#[derive(Debug)]
pub struct Totals {
    /// The measured seconds' counts together.
    pub counts: Counts,
    pub timeline: Vec<Second>,
    /// Largest check interval any worker used.
    pub check_every: u32,
    /// Longest worker time from the measured start to its end.
    pub elapsed: Duration,
    pub interrupted: bool,
    /// Scenario files: the requests of each name (by index), and the iterations.
    pub named: Vec<Counts>,
    pub iterations: Option<Counts>,
    /// Measured requests that opened their connection, and what every connection cost.
    pub first: Option<FirstTally>,
    pub opened: Option<Opened>,
}

impl Totals {
    /// The errors by kind as the record keys them.
    pub fn errors(&self) -> BTreeMap<String, u64> {
        let mut errors = BTreeMap::new();
        for (k, n) in &self.counts.errors {
            *errors.entry(k.key()).or_insert(0) += n;
        }
        errors
    }

    /// The figures over `duration_s` (the measured window's, or the warm-up's); `open`: the
    /// load was of the open model (its latency corrected for coordinated omission).
    pub fn summary(&self, open: bool, duration_s: f64) -> Summary {
        let c = &self.counts;
        Summary {
            duration_s,
            requests: c.completed,
            ok: c.ok,
            errors: c.completed - c.ok,
            rps: c.completed as f64 / duration_s,
            ok_rps: c.ok as f64 / duration_s,
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
            latency: Latency::from_histogram(&c.latency),
            service_latency: c.service.as_ref().map(Latency::from_histogram),
            late: c.late,
            checks: stackbench_record::Checks { performed: c.checks_performed, failed: c.checks_failed },
            corrected_for_coordinated_omission: open,
        }
    }
}

/// Merges intervals as they arrive.
pub struct Collector {
    open_model: bool,
    /// Seconds not yet final: merged interval and how many workers reported it.
    pending: BTreeMap<u32, (Interval, usize)>,
    /// Per worker: the last second it reported, and whether it has finished.
    reported: Vec<(Option<u32>, bool)>,
    pub totals: Totals,
    /// The interval log, once the measured phase began (its start is in the log's header).
    pub hlog: Option<HlogWriter>,
    hlog_error: Option<std::io::Error>,
    progress: Option<Progress>,
    /// Keep each second's histogram in the timeline (`--shard`: a merge adds them).
    pub keep_histograms: bool,
    /// Where the histograms of the seconds merged go back to, for the workers.
    pub spares: Option<Spares>,
}

/// The live progress line.
pub struct Progress {
    pub planned_s: Option<f64>,
    pub shown: bool,
}

impl Collector {
    pub fn new(
        workers: usize,
        open_model: bool,
        hlog: Option<HlogWriter>,
        progress: Option<Progress>,
    ) -> Collector {
        Collector {
            open_model,
            pending: BTreeMap::new(),
            reported: vec![(None, false); workers],
            totals: Totals {
                counts: Counts::new(new_histogram(), open_model.then(new_histogram)),
                timeline: Vec::new(),
                check_every: 0,
                elapsed: Duration::ZERO,
                interrupted: false,
                named: Vec::new(),
                iterations: None,
                first: None,
                opened: None,
            },
            hlog,
            hlog_error: None,
            progress,
            keep_histograms: false,
            spares: None,
        }
    }

    /// Have all workers sent their last interval?
    pub fn done(&self) -> bool {
        self.reported.iter().all(|r| r.1)
    }

    /// The workers that have not sent their last interval.
    pub fn unfinished(&self) -> Vec<usize> {
        self.reported.iter().enumerate().filter(|(_, r)| !r.1).map(|(w, _)| w).collect()
    }

    /// Takes one worker's interval.
    pub fn add(&mut self, mut iv: Interval) {
        let w = iv.worker;
        for (i, t) in std::mem::take(&mut iv.named).into_iter().enumerate() {
            match self.totals.named.get_mut(i) {
                Some(m) => m.merge(&t),
                None => self.totals.named.push(t),
            }
        }
        if let Some(t) = iv.iterations.take() {
            match &mut self.totals.iterations {
                Some(m) => m.merge(&t),
                None => self.totals.iterations = Some(t),
            }
        }
        if let Some(f) = iv.first.take() {
            match &mut self.totals.first {
                Some(m) => m.merge(&f),
                None => self.totals.first = Some(f),
            }
        }
        if let Some(o) = iv.opened.take() {
            match &mut self.totals.opened {
                Some(m) => m.merge(o),
                None => self.totals.opened = Some(o),
            }
        }
        self.reported[w] = (Some(iv.second), iv.last);
        self.totals.check_every = self.totals.check_every.max(iv.check_every);
        if iv.last {
            self.totals.elapsed = self.totals.elapsed.max(iv.elapsed);
            self.totals.interrupted |= iv.interrupted;
        }
        match self.pending.get_mut(&iv.second) {
            Some((merged, n)) => {
                merged.counts.merge(&iv.counts);
                merged.in_flight += iv.in_flight;
                *n += 1;
                self.recycle(iv);
            }
            None => {
                self.pending.insert(iv.second, (iv, 1));
            }
        }
        self.finalize_ready();
    }

    /// Finalizes every pending second that no worker can still add to.
    fn finalize_ready(&mut self) {
        while let Some((&s, _)) = self.pending.first_key_value() {
            let ready =
                self.reported.iter().all(|&(last, finished)| finished || last.is_some_and(|l| l >= s));
            if !ready {
                break;
            }
            let (iv, _) = self.pending.remove(&s).expect("first key exists");
            self.finalize(s, &iv);
            self.recycle(iv);
        }
    }

    /// Gives a merged interval's histograms back for the workers' next seconds.
    fn recycle(&self, iv: Interval) {
        if let Some(spares) = &self.spares {
            spares.give(iv.counts.latency);
            if let Some(s) = iv.counts.service {
                spares.give(s);
            }
        }
    }

    fn finalize(&mut self, s: u32, iv: &Interval) {
        let t = &mut self.totals;
        let h = &iv.counts.latency;
        let mut errors = BTreeMap::new();
        for (k, n) in &iv.counts.errors {
            *errors.entry(k.key()).or_insert(0) += n;
        }
        // A second no worker reported after a gap is still a row (of zeros).
        while t.timeline.len() < s as usize {
            let gap = t.timeline.len() as u32;
            let mut row = empty_second(gap);
            if self.keep_histograms {
                row.histogram = Some(encode_histogram(&new_histogram()));
            }
            t.timeline.push(row);
        }
        t.timeline.push(Second {
            t: s,
            completed: iv.counts.completed,
            errors,
            p50_us: h.value_at_quantile(0.50),
            p90_us: h.value_at_quantile(0.90),
            p99_us: h.value_at_quantile(0.99),
            max_us: h.max(),
            in_flight: iv.in_flight,
            bytes_received: iv.counts.bytes_received,
            at_ms: None,
            histogram: self.keep_histograms.then(|| encode_histogram(h)),
        });
        t.counts.merge(&iv.counts);
        if let Some(Err(e)) = self.hlog.as_mut().map(|w| w.interval(f64::from(s), 1.0, h)) {
            self.hlog_error.get_or_insert(e);
        }
        if let Some(p) = &mut self.progress {
            p.show(s, iv, &self.totals, self.open_model);
        }
    }

    /// Finalizes everything left (all workers are done) and returns the totals.
    pub fn finish(mut self) -> (Totals, Option<std::io::Error>) {
        for r in &mut self.reported {
            r.1 = true;
        }
        self.finalize_ready();
        if let Some(p) = &mut self.progress {
            p.clear();
        }
        (self.totals, self.hlog_error)
    }
}

/// A second in which nothing completed (a gap in a timeline).
pub(crate) fn empty_second(t: u32) -> Second {
    Second {
        t,
        completed: 0,
        errors: BTreeMap::new(),
        p50_us: 0,
        p90_us: 0,
        p99_us: 0,
        max_us: 0,
        in_flight: 0,
        bytes_received: 0,
        at_ms: None,
        histogram: None,
    }
}

impl Progress {
    fn show(&mut self, s: u32, iv: &Interval, totals: &Totals, open_model: bool) {
        let elapsed = match self.planned_s {
            Some(p) => format!("{}s/{}s", s + 1, p.round()),
            None => format!("{}s", s + 1),
        };
        let errors: u64 = iv.counts.errors.iter().map(|e| e.1).sum();
        let p99 = iv.counts.latency.value_at_quantile(0.99) as f64 / 1000.0;
        let late = if open_model { format!(", late {}", iv.counts.late) } else { String::new() };
        let line = format!(
            "[{elapsed}] {} req total, {} req/s, p99 {p99:.2} ms, errors {errors}{late}, in flight {}",
            totals.counts.completed, iv.counts.completed, iv.in_flight
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
