//! What a run counts, with no other part of the engine beneath it: [`Counts`] (requests,
//! their latency and errors by kind, bytes, checks), which a worker's second, a scenario
//! file's requests of one name, its iterations and the run's totals all are, merged by one
//! [`Counts::merge`]; [`FirstTally`], the measured requests that opened their connection; and
//! [`MeasureStart`], when the measured window begins, which decides what counts at all.
//!
//! The recorder fills these on the per-request path (`crate::recorder`), the collector merges
//! them (`crate::collect`), the engine writes them into the record (`crate::engine`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use stackbench_record::{ErrorKind, NotSent, new_histogram};

/// Requests counted: a second of one worker or of all, a scenario file's requests of one
/// name or its iterations (which keep only `latency`, `completed`, `ok`, `errors` and
/// `not_sent`), or a whole run.
#[derive(Debug)]
pub struct Counts {
    /// Latency from the intended send time (µs).
    pub latency: Histogram<u64>,
    /// The open model's service time, from the actual send (µs).
    pub service: Option<Histogram<u64>>,
    pub completed: u64,
    pub ok: u64,
    /// Failed requests by kind, in the order first seen.
    pub errors: Vec<(ErrorKind, u64)>,
    pub late: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub checks_performed: u64,
    pub checks_failed: u64,
    /// Requests that could not be written, by reason (counted in `errors` too).
    pub not_sent: Vec<NotSent>,
}

impl Counts {
    /// Nothing counted yet, into these histograms (`service`: the open model's).
    pub fn new(latency: Histogram<u64>, service: Option<Histogram<u64>>) -> Counts {
        Counts {
            latency,
            service,
            completed: 0,
            ok: 0,
            errors: Vec::new(),
            late: 0,
            bytes_sent: 0,
            bytes_received: 0,
            checks_performed: 0,
            checks_failed: 0,
            not_sent: Vec::new(),
        }
    }

    /// Counts one outcome; `latency` is `None` for a request without an answer.
    pub fn add(&mut self, latency: Option<u64>, result: Result<(), ErrorKind>) {
        self.completed += 1;
        if let Some(l) = latency {
            self.latency.saturating_record(l);
        }
        match result {
            Ok(()) => self.ok += 1,
            Err(kind) => add_error(&mut self.errors, kind),
        }
    }

    /// Adds `other`'s counts (another worker's, or another second's). The histograms have
    /// the same bounds, so the merge loses nothing; a service time is kept where both have one.
    pub fn merge(&mut self, other: &Counts) {
        self.latency.add(&other.latency).expect("same histogram bounds");
        if let (Some(a), Some(b)) = (&mut self.service, &other.service) {
            a.add(b).expect("same histogram bounds");
        }
        self.completed += other.completed;
        self.ok += other.ok;
        for &(kind, n) in &other.errors {
            match self.errors.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, m)) => *m += n,
                None => self.errors.push((kind, n)),
            }
        }
        self.late += other.late;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.checks_performed += other.checks_performed;
        self.checks_failed += other.checks_failed;
        NotSent::merge(&mut self.not_sent, &other.not_sent);
    }
}

impl Default for Counts {
    fn default() -> Counts {
        Counts::new(new_histogram(), None)
    }
}

/// Counts one more error of `kind`.
pub fn add_error(errors: &mut Vec<(ErrorKind, u64)>, kind: ErrorKind) {
    match errors.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, n)) => *n += 1,
        None => errors.push((kind, 1)),
    }
}

/// Measured requests that opened the connection they went on: their latency with the
/// connect and handshake (as the headline counts it) and without.
#[derive(Debug)]
pub struct FirstTally {
    pub requests: u64,
    pub with: Histogram<u64>,
    pub without: Histogram<u64>,
}

impl FirstTally {
    pub fn merge(&mut self, other: &FirstTally) {
        self.requests += other.requests;
        self.with.add(&other.with).expect("same bounds");
        self.without.add(&other.without).expect("same bounds");
    }
}

/// When the measured window begins, as an offset from the start of the load; shared by the
/// collector and the workers (`crate::warmup` says who moves it, and when).
#[derive(Debug)]
pub struct MeasureStart(AtomicU64);

impl MeasureStart {
    /// The measured window begins `warmup` after the start (the longest, under `auto`).
    pub fn new(warmup: Duration) -> MeasureStart {
        MeasureStart(AtomicU64::new(u64::try_from(warmup.as_nanos()).unwrap_or(u64::MAX)))
    }

    /// The offset now.
    pub fn offset(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Acquire))
    }

    /// Moves the beginning to `offset` if that is earlier.
    pub fn move_earlier(&self, offset: Duration) {
        let ns = u64::try_from(offset.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_min(ns, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers' counts merged: every counter adds up, errors of one kind become one entry
    /// (in the order first seen), the latencies are one histogram of both, a service time
    /// only where both have one.
    #[test]
    fn merge_adds_every_counter() {
        let mut a = Counts::new(new_histogram(), Some(new_histogram()));
        a.add(Some(100), Ok(()));
        a.add(None, Err(ErrorKind::Timeout));
        a.late = 1;
        a.bytes_sent = 10;
        let mut b = Counts::new(new_histogram(), Some(new_histogram()));
        b.add(Some(300), Err(ErrorKind::Http(500)));
        b.add(None, Err(ErrorKind::Timeout));
        b.bytes_received = 7;
        b.checks_performed = 2;
        b.checks_failed = 1;
        b.service.as_mut().unwrap().record(50).unwrap();
        NotSent::add(&mut b.not_sent, "no value", 2);
        a.merge(&b);
        assert_eq!((a.completed, a.ok, a.late), (4, 1, 1));
        assert_eq!(a.errors, vec![(ErrorKind::Timeout, 2), (ErrorKind::Http(500), 1)]);
        assert_eq!((a.bytes_sent, a.bytes_received, a.checks_performed, a.checks_failed), (10, 7, 2, 1));
        assert_eq!((a.latency.len(), a.latency.max()), (2, 300));
        assert_eq!(a.service.as_ref().unwrap().len(), 1);
        assert_eq!(a.not_sent.len(), 1);
        let mut closed = Counts::default();
        closed.merge(&a);
        assert!(closed.service.is_none(), "a count without service time stays without");
        assert_eq!(closed.completed, 4);
    }

    #[test]
    fn the_measured_window_only_moves_earlier() {
        let m = MeasureStart::new(Duration::from_secs(30));
        assert_eq!(m.offset(), Duration::from_secs(30));
        m.move_earlier(Duration::from_secs(7));
        m.move_earlier(Duration::from_secs(12));
        assert_eq!(m.offset(), Duration::from_secs(7));
    }
}
