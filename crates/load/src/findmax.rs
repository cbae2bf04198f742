//! The capacity search (`--find-max`): the highest rate a target sustains
//! while every objective (`--slo`) holds, found the way Nighthawk's adaptive
//! load controller finds it: open-model steps at a constant rate, each
//! measured for a fixed time after a short settle; the rate doubled from a
//! low start until a step breaks, then bisected between the last passing and
//! the first failing rate to `--precision`; the best passing rate held once
//! more to confirm it.
//!
//! A step breaks when an objective fails, when requests fail (unless an
//! `errors` objective says how many may), or when requests were `late` (the
//! generator could not send them on time: the target is past its capacity).
//! When the generator saturates its cores on a step that would pass, the
//! search stops: what it found is a lower bound, and says so.
//! A step that breaks at half or less of a rate that already held runs once
//! more before its verdict counts (a stall of the machine, not the target).
//!
//! Without `--start-rate` a closed-model probe (one step of `-c` users, 64 by
//! default) measures what the target does flat out; the doubling starts at
//! half of it. A plan's later repetitions pass the bracket of the one before
//! and go straight to bisecting it; when what held there breaks now, the
//! search halves down until a rate holds and bisects once more, and when
//! everything held up to its top, the top is measured and the search ramps
//! up from it: a bracket is where a search starts, not a ceiling.
//!
//! The search is written against [`Stepper`], so its logic is tested with a
//! model of a server of known capacity; [`EngineStepper`] runs real steps.

use std::time::Duration;

use stackbench_record::{RunRecord, Search, SearchStep};

use crate::load_error::LoadError;
use crate::spec::{Bound, LoadSpec, ModelSpec, SearchSpec};
use crate::stop::Stop;

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepKind {
    /// Closed model with this many users, flat out.
    Probe(usize),
    /// Open model at this rate, req/s.
    Rate(f64),
}

/// Runs one step (a whole measured run) and returns its record.
pub trait Stepper {
    fn step(&mut self, kind: StepKind) -> Result<RunRecord, LoadError>;
}

/// Steps on the real engine: each is `engine::run` of the template spec with
/// the step's model, `warmup` to settle and `step` measured.
pub struct EngineStepper<'a> {
    pub template: &'a LoadSpec,
    pub stop: &'a Stop,
}

impl Stepper for EngineStepper<'_> {
    fn step(&mut self, kind: StepKind) -> Result<RunRecord, LoadError> {
        let search = self.template.search.as_ref().expect("a search spec");
        let mut spec = self.template.clone();
        spec.search = None;
        spec.thresholds = Vec::new();
        spec.bound = Bound::Duration(search.step);
        spec.stages = Vec::new();
        spec.hlog = None;
        spec.progress = false;
        spec.model = match (kind, spec.model) {
            (StepKind::Probe(users), ModelSpec::Open { .. }) => ModelSpec::Closed {
                connections: users,
                streams: 1,
                think: Duration::ZERO,
                ramp_up: Duration::ZERO,
            },
            (StepKind::Rate(rate), ModelSpec::Open { max_in_flight, connections, max_connections, .. }) => {
                ModelSpec::Open { rate, max_in_flight, connections, max_connections }
            }
            (_, closed) => closed,
        };
        if let ModelSpec::Closed { connections, .. } = spec.model {
            spec.threads = spec.threads.min(connections).max(1);
        }
        let record = crate::engine::run(&spec, self.stop)?;
        // The target still answers what the step left in flight; let it, so that
        // the next step is judged on its own load.
        let until = std::time::Instant::now() + backlog(&record);
        while !self.stop.is_stopped() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(record)
    }
}

/// The longest a search waits for a step's backlog.
const MAX_BACKLOG: Duration = Duration::from_secs(5);

/// How long the target takes to answer what a step left outstanding (the last
/// second's `in_flight`) at the rate it answered during the step, at most
/// [`MAX_BACKLOG`]. A step past the capacity leaves up to `max_in_flight`
/// requests queued in the target, which it answers after the step ends (each
/// connection's pipelined requests, already read); a next step at a rate near
/// the capacity would inherit that queue for the whole of its settle and
/// measured window, and break for the step before it.
fn backlog(record: &RunRecord) -> Duration {
    let left = record.timeline.last().map_or(0, |s| s.in_flight);
    if left == 0 {
        return Duration::ZERO;
    }
    let rate = record.summary.ok_rps.max(1.0);
    Duration::from_secs_f64(left as f64 / rate).min(MAX_BACKLOG)
}

/// Runs the search of `spec` (its `search` must be set) on the engine.
pub fn run(
    spec: &LoadSpec,
    stop: &Stop,
    on_step: &mut dyn FnMut(&SearchStep),
) -> Result<RunRecord, LoadError> {
    let search = spec.search.as_ref().expect("a search spec");
    let mut stepper = EngineStepper { template: spec, stop };
    let mut record = find_max(search, &mut stepper, stop, on_step)?;
    // What the record's own parameters say: the search, not one step.
    record.params.extra.insert("find_max".into(), serde_json::Value::Bool(true));
    record.thresholds = spec
        .thresholds
        .iter()
        .map(|t| t.evaluate_run(&record.summary, &record.per_request, record.iterations.as_ref()))
        .collect();
    Ok(record)
}

/// Why the search stopped before its end.
enum Halt {
    Load(LoadError),
    /// A step is not a result (the engine failed): it ends the search, and is its record.
    Invalid(Box<RunRecord>),
}

impl From<LoadError> for Halt {
    fn from(e: LoadError) -> Halt {
        Halt::Load(e)
    }
}

/// Runs the search; `on_step` sees each step as it ends (for a live line).
/// Returns the record of the confirming step (the run at the sustained rate,
/// or the last step when none held) with the whole search in `find_max`.
pub fn find_max(
    search: &SearchSpec,
    stepper: &mut dyn Stepper,
    stop: &Stop,
    on_step: &mut dyn FnMut(&SearchStep),
) -> Result<RunRecord, LoadError> {
    let mut s =
        State { search, stepper, on_step, steps: Vec::new(), kept: None, saturated_at: None, held_at: 0.0 };
    let (outcome, mut record) = match s.search(stop) {
        Ok(outcome) => (outcome, s.kept.take()),
        Err(Halt::Load(e)) => return Err(e),
        Err(Halt::Invalid(r)) => (Outcome { ended: "failed", lo: None, hi: None, sustained: None }, Some(*r)),
    };
    let Outcome { ended, lo, hi, sustained } = outcome;
    // A failure at or below a rate where the generator saturated may be the generator's own.
    let lower_bound = ended == "saturated" || s.saturated_at.is_some_and(|r| hi.is_none_or(|h| r <= h));
    let broke = hi
        .and_then(|h| s.steps.iter().rev().find(|st| !st.passed && (st.rate - h).abs() < 0.5))
        .map(|st| st.broke.join("; "));
    let result = Search {
        slo: search.slo.iter().map(|t| t.expression.clone()).collect(),
        precision: search.precision,
        step_s: search.step.as_secs_f64(),
        steps: std::mem::take(&mut s.steps),
        sustained_rps: sustained,
        lower_bound: lower_bound && sustained.is_some(),
        broke_at_rps: hi,
        broke,
        bracket: match (sustained.or(lo), hi) {
            (Some(a), Some(b)) if b > a => Some([a, b]),
            _ => None,
        },
        ended: if lower_bound && ended == "converged" { "saturated" } else { ended }.to_owned(),
    };
    let mut record =
        record.take().ok_or_else(|| LoadError::Thread { index: 0, why: "the search ran no step".into() })?;
    record.find_max = Some(result);
    Ok(record)
}

struct Outcome {
    ended: &'static str,
    lo: Option<f64>,
    hi: Option<f64>,
    sustained: Option<f64>,
}

/// The lowest rate a search tries.
const FLOOR: f64 = 1.0;

/// How confirming a rate ended.
enum Confirmed {
    Held(f64),
    Broke,
    Interrupted,
}

struct State<'a> {
    search: &'a SearchSpec,
    stepper: &'a mut dyn Stepper,
    on_step: &'a mut dyn FnMut(&SearchStep),
    steps: Vec<SearchStep>,
    /// The record the search keeps: the last rate step that held (at the end,
    /// the confirming one), or the last one at all while none has held.
    kept: Option<RunRecord>,
    /// The lowest rate at which the generator saturated its cores.
    saturated_at: Option<f64>,
    /// The highest rate (ok req/s) a step achieved while every objective held,
    /// the closed-model probe included.
    held_at: f64,
}

impl State<'_> {
    fn search(&mut self, stop: &Stop) -> Result<Outcome, Halt> {
        let search = self.search;
        let (mut lo, mut hi) = (None, None);
        let mut ended = "converged";
        if let Some([a, b]) = search.bracket.filter(|[a, b]| *a >= FLOOR && b > a) {
            // An earlier search's bracket, widened by twice the precision on each side
            // so that this repetition measures anew rather than repeating its end.
            let widen = 2.0 * search.precision;
            let top = (b * (1.0 + widen)).round();
            (lo, hi) = (Some((a * (1.0 - widen)).round().max(FLOOR)), Some(top));
            if !self.bisect(stop, &mut lo, &mut hi, &mut ended)? {
                return Ok(Outcome { ended: "interrupted", lo, hi, sustained: None });
            }
            // Every rate bisected held up to the bracket's top, which no step of this
            // search measured: the earlier search may have run on a slower machine (a
            // stall, a neighbour). Measure the top, and ramp up from it while it holds,
            // rather than cap this repetition at the earlier one's answer.
            if ended == "converged" && hi == Some(top) && search.max_rate.is_none_or(|m| top <= m) {
                if stop.is_stopped() {
                    return Ok(Outcome { ended: "interrupted", lo, hi, sustained: None });
                }
                if self.rate("top", top)? {
                    (lo, hi) = (Some(top), None);
                    match self.above(top) {
                        Ok(next) => {
                            if let Some(o) = self.ramp(stop, next, &mut lo, &mut hi, &mut ended)? {
                                return Ok(o);
                            }
                        }
                        Err(why) => ended = why,
                    }
                }
            }
        } else {
            let start = match search.start_rate {
                Some(r) => r,
                None => (self.run("probe", StepKind::Probe(search.probe_users))?.0.summary.ok_rps / 2.0)
                    .max(FLOOR),
            };
            let rate = search.max_rate.map_or(start, |m| start.min(m)).round().max(FLOOR);
            if let Some(o) = self.ramp(stop, rate, &mut lo, &mut hi, &mut ended)? {
                return Ok(o);
            }
        }
        // What held before (an earlier repetition's bracket, or this search's
        // own steps) may break when confirmed: the target is slower now (a JIT
        // not warm yet, a noisy neighbour). Then, once, halve below the lowest
        // rate that broke until one holds, and bisect and confirm again,
        // rather than end with nothing where a lower rate would have held.
        for second_pass in [false, true] {
            if ended == "converged" && !self.bisect(stop, &mut lo, &mut hi, &mut ended)? {
                return Ok(Outcome { ended: "interrupted", lo, hi, sustained: None });
            }
            match self.confirm(stop, &mut lo, &mut hi)? {
                Confirmed::Held(r) => return Ok(Outcome { ended, lo, hi, sustained: Some(r) }),
                Confirmed::Interrupted => {
                    return Ok(Outcome { ended: "interrupted", lo, hi, sustained: None });
                }
                Confirmed::Broke => {}
            }
            let Some(broke) = hi.filter(|_| !second_pass) else { break };
            let mut rate = (broke / 2.0).round().max(FLOOR);
            loop {
                if stop.is_stopped() {
                    return Ok(Outcome { ended: "interrupted", lo, hi, sustained: None });
                }
                if self.rate("down", rate)? {
                    lo = Some(rate);
                    break;
                }
                hi = Some(rate);
                if rate <= FLOOR {
                    return Ok(Outcome { ended: "nothing_met", lo, hi, sustained: None });
                }
                rate = (rate / 2.0).round().max(FLOOR);
            }
            ended = if self.saturated_at.is_some_and(|s| s <= rate) { "saturated" } else { "converged" };
        }
        Ok(Outcome { ended: "nothing_met", lo, hi, sustained: None })
    }

    /// Ramps from `rate`: doubles it while it holds, until a step breaks above one that
    /// held; halves it while it breaks, until one holds. It stops going up where the
    /// generator saturated or at `max_rate` (and says so in `ended`); `Some` ends the
    /// search (interrupted, or nothing met).
    fn ramp(
        &mut self,
        stop: &Stop,
        mut rate: f64,
        lo: &mut Option<f64>,
        hi: &mut Option<f64>,
        ended: &mut &'static str,
    ) -> Result<Option<Outcome>, Halt> {
        loop {
            if stop.is_stopped() {
                return Ok(Some(Outcome { ended: "interrupted", lo: *lo, hi: *hi, sustained: None }));
            }
            if self.rate("ramp", rate)? {
                *lo = Some(rate);
                if self.saturated_at == Some(rate) {
                    *ended = "saturated";
                    return Ok(None);
                }
                if hi.is_some() {
                    return Ok(None);
                }
                match self.above(rate) {
                    Ok(next) => rate = next,
                    Err(why) => {
                        *ended = why;
                        return Ok(None);
                    }
                }
            } else {
                *hi = Some(rate);
                if lo.is_some() {
                    return Ok(None);
                }
                if rate <= FLOOR {
                    return Ok(Some(Outcome { ended: "nothing_met", lo: *lo, hi: *hi, sustained: None }));
                }
                // Even the start broke: halve until a rate holds.
                rate = (rate / 2.0).round().max(FLOOR);
            }
        }
    }

    /// The next rate to try above `rate`, which held: twice it, up to `max_rate`; or why
    /// the search goes no higher (`saturated`: the generator, not the target, was at its
    /// limit there; `max_rate`: the highest rate allowed).
    fn above(&self, rate: f64) -> Result<f64, &'static str> {
        if self.saturated_at == Some(rate) {
            return Err("saturated");
        }
        match self.search.max_rate {
            Some(m) if rate >= m => Err("max_rate"),
            Some(m) => Ok((rate * 2.0).min(m)),
            None => Ok(rate * 2.0),
        }
    }

    /// Bisects between the rate that held (`lo`) and the one that broke (`hi`)
    /// to the precision; `false` when stopped.
    fn bisect(
        &mut self,
        stop: &Stop,
        lo: &mut Option<f64>,
        hi: &mut Option<f64>,
        ended: &mut &'static str,
    ) -> Result<bool, Halt> {
        while let (Some(a), Some(b)) = (*lo, *hi) {
            if stop.is_stopped() {
                return Ok(false);
            }
            if (b - a) / a <= self.search.precision || b - a < 2.0 {
                break;
            }
            let mid = f64::midpoint(a, b).round();
            if self.rate("bisect", mid)? {
                *lo = Some(mid);
                if self.saturated_at == Some(mid) {
                    *ended = "saturated";
                    break;
                }
            } else {
                *hi = Some(mid);
            }
        }
        Ok(true)
    }

    /// Confirms the best passing rate once more; if it breaks now, steps down
    /// by the precision (at most three times) rather than report a rate that
    /// did not hold twice.
    fn confirm(
        &mut self,
        stop: &Stop,
        lo: &mut Option<f64>,
        hi: &mut Option<f64>,
    ) -> Result<Confirmed, Halt> {
        let mut rate = *lo;
        for _ in 0..3 {
            let Some(r) = rate else { break };
            if stop.is_stopped() {
                return Ok(Confirmed::Interrupted);
            }
            if self.rate("confirm", r)? {
                return Ok(Confirmed::Held(r));
            }
            *hi = Some(hi.map_or(r, |h| h.min(r)));
            *lo = None;
            rate = Some((r * (1.0 - self.search.precision)).round().max(FLOOR)).filter(|&x| x < r);
        }
        Ok(Confirmed::Broke)
    }

    /// Runs a rate step; returns whether it held.
    ///
    /// A break at half or less of a rate that already met every objective (the
    /// probe, flat out, or an earlier step) contradicts what was measured: a
    /// pause of the machine (a scheduler stall, a neighbour's burst), not the
    /// target's limit. Such a step runs once more, as phase `again`, and that
    /// verdict stands; otherwise one stall at the ramp's start would cap the
    /// whole search at half the capacity.
    fn rate(&mut self, phase: &str, rate: f64) -> Result<bool, Halt> {
        let held_before = self.held_at;
        if self.run(phase, StepKind::Rate(rate))?.1 {
            return Ok(true);
        }
        if rate <= (held_before / 2.0).round() {
            return Ok(self.run("again", StepKind::Rate(rate))?.1);
        }
        Ok(false)
    }

    /// Runs a step, judges it, tells `on_step`; the record and whether it held.
    fn run(&mut self, phase: &str, kind: StepKind) -> Result<(RunRecord, bool), Halt> {
        let record = self.stepper.step(kind)?;
        let s = &record.summary;
        let mut broke = Vec::new();
        let errors_objective = self.search.slo.iter().any(|t| t.expression.starts_with("errors"));
        for t in &self.search.slo {
            let o = t.evaluate(s);
            if !o.passed {
                broke.push(t.missed(&o));
            }
        }
        if s.errors > 0 && !errors_objective {
            broke.push(format!("{} of {} requests failed", s.errors, s.requests));
        }
        if s.late > 0 {
            broke.push(format!("{} requests were late: the target fell behind the rate", s.late));
        }
        let (rate, is_probe) = match kind {
            StepKind::Probe(users) => (users as f64, true),
            StepKind::Rate(r) => (r, false),
        };
        let passed = is_probe || broke.is_empty();
        if broke.is_empty() {
            self.held_at = self.held_at.max(s.ok_rps);
        }
        if record.generator.saturated && !is_probe {
            self.saturated_at = Some(self.saturated_at.map_or(rate, |r: f64| r.min(rate)));
        }
        let step = SearchStep {
            phase: phase.to_owned(),
            rate,
            achieved_rps: s.rps,
            ok_rps: s.ok_rps,
            p50_us: s.latency.p50_us,
            p99_us: s.latency.p99_us,
            requests: s.requests,
            errors: s.errors,
            late: s.late,
            generator_utilization: record.generator.utilization,
            passed,
            broke,
        };
        (self.on_step)(&step);
        self.steps.push(step);
        if record.invalid.is_some() {
            return Err(Halt::Invalid(Box::new(record)));
        }
        if !is_probe && (passed || self.steps.iter().all(|st| !st.passed || st.phase == "probe")) {
            self.kept = Some(record.clone());
        }
        Ok((record, passed))
    }
}

/// The sentence of a search's result:
/// `sustains 41,200 req/s with p99<10ms (p99 7.9 ms at that rate); 48,000 broke p99 (14.2 ms)`.
pub fn sentence(search: &Search, record: &RunRecord) -> String {
    let fmt_rate = |r: f64| {
        let n = r.round() as u64;
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let slo = search.slo.join(" and ");
    let p99 = record.summary.latency.p99_us as f64 / 1000.0;
    let broke = match (search.broke_at_rps, &search.broke) {
        (Some(r), Some(b)) => format!("; {} req/s broke it ({b})", fmt_rate(r)),
        _ => String::new(),
    };
    match (search.sustained_rps, search.ended.as_str()) {
        (None, "interrupted") => "the search was interrupted before a rate was confirmed".to_owned(),
        (None, _) => format!("not even the lowest rate tried met {slo}{broke}"),
        (Some(r), "saturated") => format!(
            "sustains at least {} req/s with {slo} (p99 {p99:.2} ms at that rate): the load generator saturated \
             its cores ({:.0}% busy) before an objective broke, so the target's capacity is higher",
            fmt_rate(r),
            record.generator.utilization * 100.0
        ),
        (Some(r), "max_rate") => {
            format!(
                "sustains {} req/s, the highest rate allowed (--max-rate), with {slo} (p99 {p99:.2} ms)",
                fmt_rate(r)
            )
        }
        (Some(r), _) => {
            format!("sustains {} req/s with {slo} (p99 {p99:.2} ms at that rate){broke}", fmt_rate(r))
        }
    }
}

#[cfg(test)]
mod tests {
    use stackbench_record::Model;

    use super::*;

    /// A server of known capacity: every rate up to it is met with a p99 of
    /// 2 ms; past it the queue grows (p99 50 ms) and requests are late. The
    /// generator saturates above `generator_limit`.
    struct Server {
        capacity: f64,
        generator_limit: f64,
        calls: Vec<StepKind>,
    }

    impl Stepper for Server {
        fn step(&mut self, kind: StepKind) -> Result<RunRecord, LoadError> {
            self.calls.push(kind);
            let mut r = crate::summary::tests::record(Model::Open { rate: 1.0, max_in_flight: 1000 });
            let rate = match kind {
                StepKind::Probe(_) => self.capacity.min(self.generator_limit),
                StepKind::Rate(x) => x,
            };
            let held = rate <= self.capacity;
            let s = &mut r.summary;
            s.rps = rate.min(self.capacity);
            s.ok_rps = s.rps;
            s.requests = (s.rps * 5.0) as u64;
            s.ok = s.requests;
            s.errors = 0;
            s.late = if held { 0 } else { ((rate - self.capacity) * 5.0) as u64 + 1 };
            s.latency.p99_us = if held { 2_000 } else { 50_000 };
            let busy = rate / self.generator_limit;
            r.generator.utilization = busy.min(1.0);
            r.generator.saturated = busy >= 0.9;
            Ok(r)
        }
    }

    fn spec(bracket: Option<[f64; 2]>, max_rate: Option<f64>) -> SearchSpec {
        SearchSpec {
            slo: vec!["p99<10ms".parse().unwrap()],
            step: Duration::from_secs(5),
            max_rate,
            start_rate: None,
            precision: 0.05,
            probe_users: 64,
            bracket,
        }
    }

    fn search(server: &mut Server, spec: &SearchSpec) -> Search {
        let mut seen = 0;
        let record = find_max(spec, server, &Stop::new(), &mut |_| seen += 1).unwrap();
        let found = record.find_max.unwrap();
        assert_eq!(seen, found.steps.len(), "every step is shown as it ends");
        found
    }

    /// The search finds the capacity within the precision, never above it.
    #[test]
    fn finds_the_capacity_from_below() {
        for capacity in [37.0, 1_000.0, 41_234.0, 250_000.0] {
            let mut server = Server { capacity, generator_limit: f64::INFINITY, calls: Vec::new() };
            let found = search(&mut server, &spec(None, None));
            let sustained = found.sustained_rps.unwrap();
            assert!(sustained <= capacity && sustained >= capacity * 0.95 - 1.0, "{capacity}: {found:?}");
            assert!(!found.lower_bound && found.ended == "converged", "{found:?}");
            assert_eq!(found.steps.first().map(|s| s.phase.as_str()), Some("probe"));
            assert_eq!(found.steps.last().map(|s| s.phase.as_str()), Some("confirm"));
            let [lo, hi] = found.bracket.unwrap();
            assert!(lo <= capacity && hi > capacity, "{found:?}");
            assert!(found.broke.as_deref().unwrap_or("").contains("late"), "{found:?}");
            assert!(found.steps.len() <= 12, "{} steps", found.steps.len());
        }
    }

    /// A later repetition bisects the bracket of the first at once (widened
    /// by twice the precision, so it measures anew).
    #[test]
    fn a_bracket_skips_the_probe_and_the_ramp() {
        let mut server = Server { capacity: 41_234.0, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(Some([40_000.0, 42_000.0]), None));
        assert!(found.steps.iter().all(|s| s.phase == "bisect" || s.phase == "confirm"), "{found:?}");
        assert!((2..=5).contains(&found.steps.len()), "{found:?}");
        assert!(found.sustained_rps.unwrap() <= 41_234.0);
    }

    /// The search of a server of `capacity` given an earlier `bracket`: it finds the
    /// capacity within the precision, ends confirming it, in at most 20 steps.
    fn found_from_bracket(capacity: f64, bracket: [f64; 2]) -> Search {
        let mut server = Server { capacity, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(Some(bracket), None));
        let sustained = found.sustained_rps.unwrap_or_else(|| panic!("{capacity}: {found:?}"));
        assert!(sustained <= capacity && sustained >= capacity * 0.95 - 1.0, "{capacity}: {found:?}");
        assert_eq!(found.steps.last().map(|s| s.phase.as_str()), Some("confirm"));
        assert!(found.steps.len() <= 20, "{} steps: {found:?}", found.steps.len());
        found
    }

    /// A later repetition whose target is slower than the bracket it was given
    /// (a JIT still cold, a noisy neighbour) halves down and still finds its
    /// rate, in a bounded number of steps; one that holds nothing ends with nothing.
    #[test]
    fn a_bracket_that_breaks_now_halves_down_to_the_rate_that_holds() {
        for capacity in [20_000.0, 9_000.0, 1_234.0] {
            let found = found_from_bracket(capacity, [40_000.0, 42_000.0]);
            assert!(found.steps.iter().any(|s| s.phase == "down"), "{found:?}");
            assert_eq!(found.ended, "converged");
        }
        let mut server = Server { capacity: 0.5, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(Some([40_000.0, 42_000.0]), None));
        assert_eq!((found.sustained_rps, found.ended.as_str()), (None, "nothing_met"), "{found:?}");
        assert!(found.steps.len() <= 25, "{} steps", found.steps.len());
    }

    /// A later repetition whose target is faster than the bracket it was given (the
    /// earlier search ran on a slower machine: a stall, a neighbour) measures the
    /// bracket's top once every rate below it held, and ramps up from it: the earlier
    /// answer is where it starts, not a ceiling. Where the top breaks, it is the break.
    #[test]
    fn a_bracket_that_holds_up_to_its_top_ramps_above_it() {
        for capacity in [3_000.0, 500.0, 41_234.0] {
            let found = found_from_bracket(capacity, [291.0, 317.0]);
            let top = found.steps.iter().find(|s| s.phase == "top").unwrap_or_else(|| panic!("{found:?}"));
            assert!(top.passed && (top.rate - 349.0).abs() < 0.5, "{found:?}"); // 317 widened by 10%
        }
        // Capacity just under the top: the top is measured, and it is the break.
        let mut server = Server { capacity: 345.0, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(Some([291.0, 317.0]), None));
        assert!(found.steps.iter().any(|s| s.phase == "top" && !s.passed), "{found:?}");
        assert!(found.steps.iter().all(|s| s.phase != "ramp"), "{found:?}");
        assert_eq!(found.broke_at_rps, Some(349.0));
        assert!(found.broke.as_deref().unwrap_or("").contains("late"), "{found:?}");
        // Above the top only up to --max-rate.
        let mut server = Server { capacity: 3_000.0, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(Some([291.0, 317.0]), Some(1_000.0)));
        assert_eq!((found.sustained_rps, found.ended.as_str()), (Some(1_000.0), "max_rate"), "{found:?}");
    }

    /// A step that left requests in flight gives the target the time to answer them at
    /// the rate it answered during the step, and no more than [`MAX_BACKLOG`]; a step that
    /// left none, none.
    #[test]
    fn a_step_s_backlog_is_answered_before_the_next() {
        let mut r = crate::summary::tests::record(Model::Open { rate: 1.0, max_in_flight: 1000 });
        r.summary.ok_rps = 3_000.0;
        let second = r.timeline.last_mut().expect("a second");
        second.in_flight = 1_000;
        assert_eq!(backlog(&r).as_millis(), 333);
        r.timeline.last_mut().unwrap().in_flight = 0;
        assert_eq!(backlog(&r), Duration::ZERO);
        r.timeline.last_mut().unwrap().in_flight = 1_000;
        r.summary.ok_rps = 0.0;
        assert_eq!(backlog(&r), MAX_BACKLOG);
    }

    /// The server of `Server`, but the machine stalls during one step: its
    /// p99 is 50 ms whatever the rate.
    struct Stall<'a> {
        server: &'a mut Server,
        step: usize,
    }

    impl Stepper for Stall<'_> {
        fn step(&mut self, kind: StepKind) -> Result<RunRecord, LoadError> {
            let mut r = self.server.step(kind)?;
            if self.server.calls.len() == self.step {
                r.summary.latency.p99_us = 50_000;
            }
            Ok(r)
        }
    }

    /// One stall at the ramp's first rate, half of what the probe met its
    /// objectives at, is run again rather than taken as the capacity; a stall
    /// where nothing contradicts it (above every rate that held) stands.
    #[test]
    fn a_stall_below_what_held_is_run_again() {
        let capacity = 1_000.0;
        let mut server = Server { capacity, generator_limit: f64::INFINITY, calls: Vec::new() };
        let mut stall = Stall { server: &mut server, step: 2 };
        let found =
            find_max(&spec(None, None), &mut stall, &Stop::new(), &mut |_| {}).unwrap().find_max.unwrap();
        let phases: Vec<&str> = found.steps.iter().map(|s| s.phase.as_str()).collect();
        assert_eq!(phases[..3], ["probe", "ramp", "again"], "{found:?}");
        assert!((found.steps[1].rate - found.steps[2].rate).abs() < f64::EPSILON);
        assert!(!found.steps[1].passed && found.steps[2].passed, "{found:?}");
        let sustained = found.sustained_rps.unwrap();
        assert!(sustained <= capacity && sustained >= capacity * 0.95 - 1.0, "{found:?}");

        // The ramp's second rate (the probe's, doubled from half) is no lower
        // than what held: its break is the search's answer to bisect below.
        let mut server = Server { capacity, generator_limit: f64::INFINITY, calls: Vec::new() };
        let mut stall = Stall { server: &mut server, step: 3 };
        let found =
            find_max(&spec(None, None), &mut stall, &Stop::new(), &mut |_| {}).unwrap().find_max.unwrap();
        assert!(found.steps.iter().all(|s| s.phase != "again"), "{found:?}");
        assert!(found.sustained_rps.unwrap() < capacity, "{found:?}");
    }

    /// The generator saturating before any objective broke: a lower bound, said so.
    #[test]
    fn a_saturated_generator_gives_a_lower_bound() {
        let mut server = Server { capacity: 100_000.0, generator_limit: 30_000.0, calls: Vec::new() };
        let record = find_max(&spec(None, None), &mut server, &Stop::new(), &mut |_| {}).unwrap();
        let found = record.find_max.as_ref().unwrap();
        assert!(found.lower_bound, "{found:?}");
        assert!(found.sustained_rps.unwrap() <= 30_000.0, "{found:?}");
        assert!(sentence(found, &record).starts_with("sustains at least "), "{}", sentence(found, &record));
    }

    #[test]
    fn nothing_met_and_max_rate() {
        let mut server = Server { capacity: 0.5, generator_limit: f64::INFINITY, calls: Vec::new() };
        let record = find_max(&spec(None, None), &mut server, &Stop::new(), &mut |_| {}).unwrap();
        let found = record.find_max.as_ref().unwrap();
        assert_eq!((found.sustained_rps, found.ended.as_str()), (None, "nothing_met"), "{found:?}");
        assert!(sentence(found, &record).starts_with("not even the lowest rate"));

        let mut server = Server { capacity: 50_000.0, generator_limit: f64::INFINITY, calls: Vec::new() };
        let found = search(&mut server, &spec(None, Some(10_000.0)));
        assert_eq!((found.sustained_rps, found.ended.as_str()), (Some(10_000.0), "max_rate"), "{found:?}");
        assert!(server.calls.iter().all(|k| !matches!(k, StepKind::Rate(r) if *r > 10_000.0)));
    }
}
