//! The warm-up: the load before the measured window, kept apart from it, and
//! `--warmup auto`, which ends it once steady.
//!
//! - [`MeasureStart`] (`crate::tally`) is when the measured window begins, shared by the
//!   collector and the workers. A fixed `--warmup` sets it once, before the
//!   load starts. Under `--warmup auto` it starts at `--max-warmup` and the
//!   collector may move it earlier, once, to a whole second of the load at
//!   least [`MARGIN`] ahead, so every worker reads the new value before any
//!   request it decides about is due.
//! - [`Settle`] is the controller: it takes the warm-up's seconds as they
//!   become final and, as soon as their rate (requests completed) and median
//!   latency are steady by the shared detector
//!   ([`stackbench_record::timeline_steady`], a 5-second sliding-window
//!   least-squares slope test, 5% tolerance), confirmed by the [`CONFIRM`]
//!   seconds after that window keeping its level, says when the measured
//!   window begins. Past the maximum it decides nothing: the warm-up ends there, and
//!   the record says it never became steady.
//! - [`WarmPhase`] is the collector's side: it merges the workers' warm-up
//!   seconds (the same [`Collector`] as the measured ones), feeds the
//!   controller, and builds the record's [`Warmup`].

use std::time::Duration;

use stackbench_record::{STEADY_WINDOW, Second, Steady, Warmup, timeline_steady};

use crate::collect::Collector;
use crate::recorder::Interval;
use crate::spec::{LoadSpec, ModelSpec};
use crate::tally::MeasureStart;

/// How far ahead of the decision the measured window begins, at least: the workers read
/// [`MeasureStart`] before deciding about each request, so a boundary this far away is seen by
/// all of them in time.
pub const MARGIN: Duration = Duration::from_millis(250);

/// Seconds after a flat window that must keep its level before the warm-up ends.
pub const CONFIRM: usize = STEADY_WINDOW;

/// The `--warmup auto` controller, on whole seconds of the warm-up (no clock of its own: it is
/// told how long after the start of the load each second became final).
#[derive(Debug)]
pub struct Settle {
    max: Duration,
    seen: Vec<Second>,
    /// The second steady state began, once found.
    steady_from: Option<u32>,
}

impl Settle {
    pub fn new(max: Duration) -> Settle {
        Settle { max, seen: Vec::new(), steady_from: None }
    }

    /// Takes the warm-up's next whole second, final `elapsed` after the start of the load.
    /// Returns when the measured window should begin (an offset from the start) the first
    /// time the seconds so far are steady, if that is before the maximum.
    pub fn second(&mut self, second: &Second, elapsed: Duration) -> Option<Duration> {
        if self.steady_from.is_some() || self.seen.len() as f64 + 1.0 > self.max.as_secs_f64() {
            return None;
        }
        self.seen.push(second.clone());
        let Steady::From(s) = timeline_steady(&self.seen) else { return None };
        // The detector checks a flat window against the seconds after it: with none yet, a
        // noisy trend can pass for flat, so the steady point is taken once a whole window of
        // seconds after it has kept its level.
        if self.seen.len() < s + STEADY_WINDOW + CONFIRM {
            return None;
        }
        self.steady_from = Some(s as u32);
        let at = Duration::from_secs((elapsed + MARGIN).as_secs_f64().ceil() as u64);
        (at < self.max).then_some(at)
    }

    /// What it found: steady from a second, never steady (judged, still drifting), or too
    /// short to tell. Not decided (the maximum, or a stop, came first): what the seconds seen say, confirmed
    /// or not.
    pub fn outcome(&self) -> Steady {
        self.steady_from.map_or_else(|| timeline_steady(&self.seen), |s| Steady::From(s as usize))
    }
}

/// The collector's side of the warm-up.
pub struct WarmPhase {
    collector: Collector,
    /// `--warmup auto`: the controller, and the seconds it has been given.
    settle: Option<Settle>,
    fed: usize,
}

impl WarmPhase {
    pub fn new(spec: &LoadSpec) -> WarmPhase {
        let open = matches!(spec.model, ModelSpec::Open { .. });
        WarmPhase {
            collector: Collector::new(spec.threads.max(1), open, None, None),
            settle: spec.auto_warmup.then(|| Settle::new(spec.warmup)),
            fed: 0,
        }
    }

    /// Takes a worker's warm-up interval, `elapsed` after the start of the load; under `auto`,
    /// moves the measured window's beginning when the seconds final so far are steady.
    pub fn add(&mut self, iv: Interval, elapsed: Duration, measure: &MeasureStart) {
        self.collector.add(iv);
        let Some(settle) = &mut self.settle else { return };
        let timeline = &self.collector.totals.timeline;
        for second in &timeline[self.fed..] {
            if let Some(at) = settle.second(second, elapsed) {
                measure.move_earlier(at);
            }
        }
        self.fed = timeline.len();
    }

    /// The record's warm-up, which lasted `lasted` (`None` when there was none). Steady state is
    /// judged on whole seconds only (a fixed warm-up's last partial second is not one).
    pub fn finish(self, spec: &LoadSpec, lasted: Duration, started_at_ms: u64) -> Option<Warmup> {
        if lasted.is_zero() {
            return None;
        }
        let (mut totals, _) = self.collector.finish();
        let whole = (lasted.as_secs() as usize).min(totals.timeline.len());
        let steady =
            self.settle.as_ref().map_or_else(|| timeline_steady(&totals.timeline[..whole]), Settle::outcome);
        for row in &mut totals.timeline {
            row.at_ms = Some(started_at_ms + 1000 * u64::from(row.t));
        }
        let summary =
            totals.summary(matches!(spec.model, ModelSpec::Open { .. }), lasted.as_secs_f64().max(1e-9));
        Some(Warmup {
            auto: spec.auto_warmup,
            max_s: spec.auto_warmup.then_some(spec.warmup.as_secs_f64()),
            steady_from_s: if let Steady::From(s) = steady { Some(s as u32) } else { None },
            never_steady: steady == Steady::Never,
            summary,
            errors: totals.errors(),
            timeline: std::mem::take(&mut totals.timeline),
        })
    }
}

#[cfg(test)]
mod tests;
