//! The measured rounds: every eligible contestant once per round, in the
//! round's shuffled order ([`crate::interleave`]). A plan without `precision`
//! measures its `repetitions` rounds. With one, the result directory is
//! analysed exactly as the report will analyse it (`stackbench_report`, the
//! intervals at the per-look level of [`stackbench_report::stats::sequential`])
//! at each look: after every round from the first with an interval, or, with
//! `looks`, after the first and when the budget is spent
//! ([`sequential::looks_after`]). The rounds stop when every compared pair
//! meets the precision, or when the budget (`max_repetitions`, `max_time`
//! counted from the run's start) is spent; `stopping.json` records which, with
//! the seed and each round's order.
//!
//! After a look, the next rounds measure what is still open: while some pair is
//! undecided (its interval holds 1 and is wider than the precision), only the
//! contestants of undecided pairs; once every pair is decided, those of pairs
//! still wider than the precision; and of those, with a time budget, the pairs
//! that fit in the time left, the cheapest first (each contestant costing what
//! its longest run took). A pair already answered gets no more runs for its own
//! sake, so the budget goes to the questions left (a stack decided against
//! every other, or alone in its scenario, has its plan's `repetitions`). The
//! looks and their levels stay as planned: which runs a look sees does not
//! change how many looks spend the 5%.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use stackbench_record::{ResultSet, Stopping};
use stackbench_report::stats::sequential::{self, Pair, PairVerdict};
use stackbench_report::{Analysis, AnalysisOptions};
use stackbench_report::{RankedBy, decided_sentence, precision_percent};

use super::{Orchestrator, RunError};
use crate::interleave::{Slot, interleaved};

impl Orchestrator<'_, '_> {
    /// Measures the rounds over `eligible` (plan indices), skipping `done` (index into `eligible`, repetition).
    pub(super) fn rounds(
        &mut self,
        eligible: &[usize],
        seed: u64,
        done: &BTreeSet<(usize, u32)>,
    ) -> Result<(), RunError> {
        let Some(precision) = self.plan.precision else {
            let slots = interleaved(eligible.len(), self.plan.repetitions, seed, done);
            let total = slots.len();
            for (n, slot) in slots.into_iter().enumerate() {
                if self.interrupted() {
                    break;
                }
                self.slot(eligible, slot, n, total)?;
            }
            return Ok(());
        };
        let (first, looks, _) = precision.looks(self.plan.repetitions);
        let mut stopping = self.announce(precision, seed);
        // The longest of each contestant's slots so far: what its next run may cost. Its
        // last alone underestimates a round whose runs take longer than before (a start,
        // a warm-up), and the budget is a limit, not a target.
        let mut took: BTreeMap<usize, Duration> = BTreeMap::new();
        // The pairs (indices into `eligible`) the last look left open; before
        // the first look, every contestant.
        let mut open: Option<Vec<[usize; 2]>> = None;
        let mut focus: Option<BTreeSet<usize>> = None;
        let mut said = BTreeSet::new();
        for round in 1..=precision.max_repetitions {
            if self.interrupted() {
                break;
            }
            // The plan's `repetitions` always run: a time budget that stopped
            // before the first look would leave no interval at all.
            let measured = |k: &usize| focus.as_ref().is_none_or(|f| f.contains(k));
            let all = interleaved(eligible.len(), round, seed, &BTreeSet::new());
            let order: Vec<Slot> =
                all.into_iter().filter(|s| s.repetition == round && measured(&s.contestant)).collect();
            stopping.orders.push(
                order.iter().map(|s| self.plan.contestants[eligible[s.contestant]].name.clone()).collect(),
            );
            let todo: Vec<Slot> =
                order.into_iter().filter(|s| !done.contains(&(s.contestant, round))).collect();
            let total = todo.len();
            for (n, slot) in todo.into_iter().enumerate() {
                if self.interrupted() {
                    break;
                }
                let t0 = Instant::now();
                self.slot(eligible, slot, n, total)?;
                let t = took.entry(slot.contestant).or_default();
                *t = (*t).max(t0.elapsed());
            }
            if self.interrupted() {
                break;
            }
            stopping.rounds = round;
            self.store.save_stopping(&stopping)?;
            if round < first {
                continue;
            }
            // Between looks the next round measures the pairs the last look left
            // open, as many as fit in the time left; when none fits, or the
            // rounds are spent, this round is the budget's last and is looked at.
            let scheduled = sequential::looks_after(round, first, looks, false);
            let mut next = if scheduled { None } else { self.fitting(eligible, open.as_deref(), &took) };
            let by_count = round == precision.max_repetitions;
            if !scheduled && !by_count && next.is_some() {
                self.say_next(eligible, round, next.as_ref(), focus.as_ref());
                focus = next;
                continue;
            }
            let analysis = self.analyse()?;
            self.say_decided(&analysis, round, &mut said);
            let Some(report) = analysis.stopping else { continue };
            if report.met {
                stopping.reason = String::from("met");
                break;
            }
            let pairs: Vec<&Pair> = analysis.scenarios.iter().flat_map(|s| &s.precision).collect();
            let undecided = pairs.iter().filter(|p| decided_sentence(p, false).is_none()).count();
            self.say(&format!(
                "round {round}: {} of {} pairs decided, {undecided} still open at {}",
                pairs.len() - undecided,
                pairs.len(),
                precision_percent(precision.target),
            ));
            if by_count {
                stopping.reason = String::from("max_repetitions");
                break;
            }
            open = Some(self.still_open(eligible, &pairs));
            next = self.fitting(eligible, open.as_deref(), &took);
            if next.is_none() || !scheduled {
                stopping.reason = String::from("max_time");
                break;
            }
            self.say_next(eligible, round, next.as_ref(), None);
            focus = next;
        }
        if self.interrupted() {
            stopping.reason = String::from("interrupted");
        } else if stopping.reason == "running" {
            stopping.reason = String::from("max_repetitions");
        }
        self.store.save_stopping(&stopping)?;
        self.say_stopping()
    }

    /// The seconds of `max_time` still to spend: counted from the run's start,
    /// first-use builds left out. `None` without a time budget.
    fn time_left(&self, budget: Option<Duration>) -> Option<Duration> {
        let spent = self.clock.started.elapsed().saturating_sub(self.clock.building);
        budget.map(|b| b.saturating_sub(spent))
    }

    /// The contestants (indices into `eligible`) of the next round: those of
    /// the `open` pairs (`None`: every contestant) that fit in the time left,
    /// each costing what its longest run took, the cheapest pairs first. `None`
    /// when no pair fits.
    fn fitting(
        &self,
        eligible: &[usize],
        open: Option<&[[usize; 2]]>,
        took: &BTreeMap<usize, Duration>,
    ) -> Option<BTreeSet<usize>> {
        let groups: Vec<Vec<usize>> = match open {
            Some(pairs) => pairs.iter().map(|p| p.to_vec()).collect(),
            None => vec![(0..eligible.len()).collect()],
        };
        let left = self.plan.precision.and_then(|p| self.time_left(p.max_time));
        let chosen = cheapest_that_fit(groups, |k| took.get(&k).copied().unwrap_or_default(), left);
        (!chosen.is_empty()).then_some(chosen)
    }

    /// Says what the round after `round` measures, when it is not everyone, nor what was said before.
    fn say_next(
        &mut self,
        eligible: &[usize],
        round: u32,
        next: Option<&BTreeSet<usize>>,
        before: Option<&BTreeSet<usize>>,
    ) {
        let Some(next) = next.filter(|n| n.len() < eligible.len() && Some(*n) != before) else { return };
        let names: Vec<&str> =
            next.iter().map(|&k| self.plan.contestants[eligible[k]].name.as_str()).collect();
        let left = self.plan.precision.and_then(|p| self.time_left(p.max_time));
        let within =
            left.map(|l| format!(" (what fits in the {:.0} s left)", l.as_secs_f64())).unwrap_or_default();
        self.say(&format!("round {} measures {}{within}", round + 1, names.join(", ")));
    }

    /// The pairs (indices into `eligible`) still open: the undecided ones while
    /// there are any, else those wider than the precision.
    fn still_open(&self, eligible: &[usize], pairs: &[&Pair]) -> Vec<[usize; 2]> {
        let undecided: Vec<&&Pair> = pairs.iter().filter(|p| decided_sentence(p, false).is_none()).collect();
        let open: Vec<&&Pair> = if undecided.is_empty() {
            pairs.iter().filter(|p| p.verdict != PairVerdict::Met).collect()
        } else {
            undecided
        };
        let index = |name: &str| eligible.iter().position(|&i| self.plan.contestants[i].name == name);
        open.iter().filter_map(|p| Some([index(&p.better)?, index(&p.worse)?])).collect()
    }

    /// Says each verdict the data have reached since the last look, once
    /// (`said` holds the pairs already said), so a long run gives its first
    /// answers as soon as it has them. The report's closing table follows.
    fn say_decided(
        &mut self,
        analysis: &Analysis,
        round: u32,
        said: &mut BTreeSet<(String, String, String)>,
    ) {
        for sc in &analysis.scenarios {
            let by_cost = sc.ranked_by == RankedBy::CostPerRequest;
            for p in &sc.precision {
                let key = (sc.name.clone(), p.better.clone(), p.worse.clone());
                let rev = (sc.name.clone(), p.worse.clone(), p.better.clone());
                if said.contains(&key) || said.contains(&rev) {
                    continue;
                }
                if let Some(text) = decided_sentence(p, by_cost) {
                    self.say(&format!("decided after round {round}, {}: {text}", sc.name));
                    said.insert(key);
                }
            }
        }
    }

    /// The record of rounds not yet measured, after saying how they will be decided.
    fn announce(&mut self, precision: crate::plan::Precision, seed: u64) -> Stopping {
        let (first, looks, confidence) = precision.looks(self.plan.repetitions);
        let stopping = Stopping {
            precision: precision.target,
            max_repetitions: precision.max_repetitions,
            max_time_s: precision.max_time.map(|t| t.as_secs_f64()),
            method: sequential::METHOD.to_owned(),
            planned_looks: looks,
            first_look: first,
            look_confidence: confidence,
            rounds: 0,
            reason: "running".to_owned(),
            seed,
            orders: Vec::new(),
        };
        let when = if precision
            .looks
            .is_some_and(|n| n < sequential::planned_looks(first, precision.max_repetitions))
        {
            format!(" (after round {first}, and when the budget is spent)")
        } else {
            String::new()
        };
        self.say(&format!(
            "rounds until every ratio is known to {} (at most {} rounds{}); each look's intervals at {:.2}%, \
                 5% spent over {looks} looks{when} (Bonferroni), so the 95% promise holds however early it stops",
            precision_percent(precision.target),
            precision.max_repetitions,
            match (precision.max_time, precision.max_repetitions_given) {
                (Some(t), false) => format!(
                    ", what {} from the start holds by the plan's estimate",
                    humantime::format_duration(t)
                ),
                (Some(t), true) => format!(" or {} from the start", humantime::format_duration(t)),
                (None, _) => String::new(),
            },
            confidence * 100.0
        ));
        stopping
    }

    /// Says how the rounds ended, as the report will (unless the report follows).
    fn say_stopping(&mut self) -> Result<(), RunError> {
        if self.opts.report_follows {
            return Ok(());
        }
        if let Some(report) = self.analyse()?.stopping {
            self.say(&format!("precision: {}", report.summary));
            for line in &report.undecided {
                self.say(&format!("  {line}"));
            }
        }
        Ok(())
    }

    /// One slot of a round, measured once more when the run is not a result.
    fn slot(&mut self, eligible: &[usize], slot: Slot, n: usize, total: usize) -> Result<(), RunError> {
        if n > 0 && !self.plan.cooldown.is_zero() {
            std::thread::sleep(self.plan.cooldown);
        }
        let (i, rep) = (eligible[slot.contestant], slot.repetition);
        if self.measure(i, rep, n + 1, total)? && !self.interrupted() {
            self.say(&format!("  {}: repetition {rep} is measured once more", self.plan.contestants[i].name));
            self.measure(i, rep, n + 1, total)?;
        }
        Ok(())
    }

    /// The result directory as the report reads it.
    fn analyse(&self) -> Result<Analysis, RunError> {
        let results = ResultSet::load(&self.store.dir)?;
        Ok(Analysis::from_results(&results, &AnalysisOptions::default()))
    }
}

/// The contestants of the `groups` (pairs) that fit in `left` together, the
/// groups taken cheapest first and each kept if the round with it still fits
/// (a contestant of two groups is paid for once); all of them without a `left`.
pub(super) fn cheapest_that_fit(
    mut groups: Vec<Vec<usize>>,
    cost: impl Fn(usize) -> Duration,
    left: Option<Duration>,
) -> BTreeSet<usize> {
    groups.sort_by_key(|g| g.iter().map(|&k| cost(k)).sum::<Duration>());
    let mut chosen = BTreeSet::new();
    for g in groups {
        let mut with = chosen.clone();
        with.extend(g);
        if left.is_none_or(|left| with.iter().map(|&k| cost(k)).sum::<Duration>() <= left) {
            chosen = with;
        }
    }
    chosen
}
