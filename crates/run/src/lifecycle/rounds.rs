//! The measured rounds: every eligible contestant once per round, in the
//! round's shuffled order ([`crate::interleave`]). A plan without `precision`
//! measures its `repetitions` rounds. With one, after each round from the
//! first with an interval, the result directory is analysed exactly as the
//! report will analyse it (`stackbench_report`, the intervals at the
//! per-look level of [`stackbench_report::stats::sequential`]), and the
//! rounds stop when every compared pair meets the precision, or when the
//! budget (`max_repetitions`, `max_time`) is spent; `stopping.json` records
//! which, with the seed and each round's order.
//!
//! After a look, the next round measures what is still open: while some pair is
//! undecided (its interval holds 1 and is wider than the precision), only the
//! contestants of undecided pairs; once every pair is decided, those of pairs
//! still wider than the precision. A pair already answered gets no more runs
//! for its own sake, so the budget goes to the questions left (a stack decided
//! against every other, or alone in its scenario, has its plan's `repetitions`).
//! The looks and their levels stay as planned: which runs a look sees does not
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
        let first = precision.looks(self.plan.repetitions).0;
        let mut stopping = self.announce(precision, seed);
        let started = Instant::now();
        // How long each contestant's last slot took: the next round's estimate.
        let mut took: BTreeMap<usize, Duration> = BTreeMap::new();
        let mut focus: Option<BTreeSet<usize>> = None;
        let mut said = BTreeSet::new();
        for round in 1..=precision.max_repetitions {
            if self.interrupted() {
                break;
            }
            let measured = |k: &usize| focus.as_ref().is_none_or(|f| f.contains(k));
            // The plan's `repetitions` always run: a time budget that stopped
            // before the first look would leave no interval at all.
            let next: Duration = took.iter().filter(|(k, _)| measured(k)).map(|(_, d)| *d).sum();
            if let Some(budget) = precision.max_time
                && round > first
                && started.elapsed() + next > budget
            {
                stopping.reason = String::from("max_time");
                break;
            }
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
                took.insert(slot.contestant, t0.elapsed());
            }
            if self.interrupted() {
                break;
            }
            stopping.rounds = round;
            self.store.save_stopping(&stopping)?;
            if round < first {
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
            let open = pairs.iter().filter(|p| decided_sentence(p, false).is_none()).count();
            focus = Some(self.still_open(eligible, &pairs)).filter(|f| !f.is_empty());
            let next: Vec<&str> =
                focus.iter().flatten().map(|&k| self.plan.contestants[eligible[k]].name.as_str()).collect();
            let then = if round == precision.max_repetitions || next.len() == eligible.len() {
                String::new()
            } else {
                format!("; round {} measures {}", round + 1, next.join(", "))
            };
            self.say(&format!(
                "round {round}: {} of {} pairs decided, {open} still open at {}{then}",
                pairs.len() - open,
                pairs.len(),
                precision_percent(precision.target),
            ));
        }
        if self.interrupted() {
            stopping.reason = String::from("interrupted");
        } else if stopping.reason == "running" {
            stopping.reason = String::from("max_repetitions");
        }
        self.store.save_stopping(&stopping)?;
        self.say_stopping()
    }

    /// The contestants (indices into `eligible`) the next round measures: those
    /// of undecided pairs while there are any, else those of pairs wider than
    /// the precision.
    fn still_open(&self, eligible: &[usize], pairs: &[&Pair]) -> BTreeSet<usize> {
        let undecided: Vec<&&Pair> = pairs.iter().filter(|p| decided_sentence(p, false).is_none()).collect();
        let open: Vec<&&Pair> = if undecided.is_empty() {
            pairs.iter().filter(|p| p.verdict != PairVerdict::Met).collect()
        } else {
            undecided
        };
        let index = |name: &str| eligible.iter().position(|&i| self.plan.contestants[i].name == name);
        open.iter().flat_map(|p| [index(&p.better), index(&p.worse)]).flatten().collect()
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
        self.say(&format!(
            "rounds until every ratio is known to {} (at most {} rounds{}); each look's intervals at {:.2}%, \
                 5% spent over {looks} looks (Bonferroni), so the 95% promise holds however early it stops",
            precision_percent(precision.target),
            precision.max_repetitions,
            match (precision.max_time, precision.max_repetitions_given) {
                (Some(t), false) =>
                    format!(", what {} holds by the plan's estimate", humantime::format_duration(t)),
                (Some(t), true) => format!(" or {}", humantime::format_duration(t)),
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
