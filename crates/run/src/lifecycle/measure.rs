//! One measured run of the lifecycle: reset, start, ready (timed: one more cold
//! start), the load while the sampler watches, stop; then the record is judged
//! ([`crate::validity`]) and written, and incidents are recorded.

use stackbench_record::Invalid;

use super::companion::drive_beside;
use super::{Launch, LoadJob, Orchestrator, RunError, Started, base_of, path_of, warm_core};
use crate::process::Exit;
use crate::watch::{Target, Watched, attach_samples, describe};

impl Orchestrator<'_, '_> {
    /// One measured run. Returns `true` when the run is not a result
    /// ([`crate::validity`]) and should be measured once more.
    pub(super) fn measure(&mut self, i: usize, rep: u32, nth: usize, total: usize) -> Result<bool, RunError> {
        let c = &self.plan.contestants[i];
        let name = c.name.clone();
        let (started, base) = match &c.launch {
            Launch::External { url } => (None, base_of(url)),
            Launch::Command { .. } => match self.start(i, "run", Some(rep))? {
                Some(s) => {
                    // Started alone, as a cold-start trial is: its start is one more of them.
                    self.timed(i, &s);
                    let record = self.live[i].record.clone();
                    self.store.save_contestant(&record)?;
                    let b = s.base.clone();
                    (Some(s), b)
                }
                None => return Ok(false),
            },
        };
        let job = self.load_job(i, &base);
        let beside = if started.is_some() { self.start_companion(i, rep, job.cpus.clone())? } else { None };
        let with = beside
            .as_ref()
            .map_or_else(String::new, |b| format!(", beside {}", self.plan.contestants[b.j].name));
        self.say(&format!("[{nth}/{total}] {name} repetition {rep}: load on {}{with}", job.url));
        let interval = self.plan.sample_interval;
        let mut started = started;
        // A warm-up at `warmup_cpu_quota`; the companion's load starts when the budget is back.
        let lift = started.as_ref().and_then(|st| warm_core::lift_for(self.plan, c, st.group.is_some()));
        let target = started.as_mut().map(|st| Target {
            process: st.process.as_mut(),
            group: st.group.as_deref(),
            procs: (self.deps.procs)(),
            lift,
            budget_back: None,
        });
        let companion_job = beside.as_ref().map(|b| &b.job);
        let (watched, companion_ran) =
            drive_beside(self.deps.load, &job, companion_job, &self.opts.interrupt, target, interval);
        let stuck = self.deps.load.stuck();
        let limits = started.as_ref().and_then(|s| s.group.as_ref().map(|g| g.applied()));
        let (crashed, tail) = match started {
            Some(st) => self.stop_measured(i, st, &watched, rep)?,
            None => (watched.crashed, String::new()),
        };
        let companion = match beside {
            Some(b) => Some(self.stop_companion(b, companion_ran, rep)?),
            None => None,
        };
        if let Some(exit) = crashed {
            let msg = format!("the contestant ended with {exit} during the run; its last output:\n{tail}");
            self.incident(i, "run", "crashed", msg, Some(rep))?;
        }
        if let Some(why) = &watched.panicked {
            self.tool_failures += 1;
            self.incident(i, "run", Invalid::TOOL_FAILURE, why.clone(), Some(rep))?;
            return self.unless_stuck(i, rep, stuck, true);
        }
        let mut record = match &watched.result {
            Ok(r) => r.clone(),
            Err(e) => {
                self.incident(i, "run", "load_failed", e.clone(), Some(rep))?;
                return self.unless_stuck(i, rep, stuck, false);
            }
        };
        if let Some(ran) = companion {
            self.attach_companion(ran, &mut record, rep)?;
        }
        record.label.contestant = Some(name.clone());
        record.label.scenario = Some(c.scenario.name().to_owned());
        record.label.repetition = Some(rep);
        if self.opts.interrupt.is_cancelled() {
            record.interrupted = true;
        }
        if matches!(c.launch, Launch::Command { .. }) {
            attach_samples(&mut record, &watched, interval, limits);
        }
        warm_core::settle_record(&mut record, watched.lifted.as_ref());
        if let Some(b) = record.find_max.as_ref().and_then(|s| s.bracket) {
            self.earlier.brackets.insert(i, b);
        }
        record.invalid = crate::validity::assess(&record);
        if let Some(w) = record.warmup.as_ref().filter(|_| record.invalid.is_none()) {
            self.earlier.warmups.entry(i).or_default().observe(w);
        }
        self.store.save_run(&record)?;
        self.runs += 1;
        self.say(&describe(&record));
        if stuck.is_some() {
            // Its own fault says it is not a result; it is kept, and nothing runs after it.
            return self.unless_stuck(i, rep, stuck, true);
        }
        if let Some(invalid) = record.invalid.clone() {
            if invalid.kind == Invalid::TOOL_FAILURE {
                self.tool_failures += 1;
            }
            let msg =
                format!("{}; this run is not a result and is left out of the statistics", invalid.reason);
            self.incident(i, "run", &invalid.kind, msg, Some(rep))?;
            return Ok(true);
        }
        if record.generator.saturated || together(&record).is_some() {
            self.saturated(i, rep, &record)?;
        }
        Ok(false)
    }
}

impl Orchestrator<'_, '_> {
    /// Stops a measured run's contestant: how it ended if it ended during the run, and
    /// then its last output. Only then: a live one's output is still being copied, and
    /// waiting for that to end held every run half a second.
    fn stop_measured(
        &mut self,
        i: usize,
        mut st: Started,
        watched: &Watched,
        rep: u32,
    ) -> Result<(Option<Exit>, String), RunError> {
        let seen: Vec<_> = watched.sampler.seen.iter().copied().collect();
        let crashed = watched.crashed.or_else(|| st.process.try_exit());
        let tail = if crashed.is_some() { st.process.output_tail() } else { String::new() };
        self.stop(i, st, &seen, Some(rep))?;
        Ok((crashed, tail))
    }

    /// The load of a run of `i` at `base`: on the cores it does not use, with what its
    /// earlier runs learned (a search's bracket, a warm-up's length).
    fn load_job(&self, i: usize, base: &str) -> LoadJob {
        let c = &self.plan.contestants[i];
        let cpus = c.load_cpus.clone().or_else(|| {
            let used = c.cpus.as_ref()?;
            let rest: Vec<usize> = self.opts.cpus.iter().copied().filter(|x| !used.contains(x)).collect();
            (!rest.is_empty()).then_some(rest)
        });
        let learned = self.earlier.warmups.get(&i).and_then(|l| l.apply(&c.profile));
        LoadJob {
            url: format!("{base}{}", path_of(c)),
            scenario: c.scenario.clone(),
            profile: learned.unwrap_or_else(|| c.profile.clone()),
            cpus,
            bracket: self.earlier.brackets.get(&i).copied(),
            cacert: self.made_tls(c).map(|m| m.cert),
        }
    }

    /// The incident of a run whose load generator saturated its cores.
    fn saturated(
        &mut self,
        i: usize,
        rep: u32,
        record: &stackbench_record::RunRecord,
    ) -> Result<(), RunError> {
        let g = &record.generator;
        let msg = match together(record).filter(|_| !g.saturated) {
            Some(companion) => format!(
                "the load generators of this run and of its companion together saturated their {} core(s) \
                 ({:.0}% and {:.0}% busy): this run may measure the generators, not the contestant",
                g.cores,
                g.utilization * 100.0,
                companion * 100.0
            ),
            None => format!(
                "the load generator saturated its {} core(s) ({:.0}% busy): this run may measure the generator, not the contestant",
                g.cores,
                g.utilization * 100.0
            ),
        };
        self.incident(i, "run", "generator_saturated", msg, Some(rep))
    }

    /// `again` (whether to measure once more), unless load threads of the run are `stuck`:
    /// then an incident, and an error that ends the plan, since no run may start beside them.
    fn unless_stuck(
        &mut self,
        i: usize,
        rep: u32,
        stuck: Option<String>,
        again: bool,
    ) -> Result<bool, RunError> {
        let Some(why) = stuck else { return Ok(again) };
        self.tool_failures += 1;
        self.incident(i, "run", Invalid::TOOL_FAILURE, why.clone(), Some(rep))?;
        Err(RunError::ToolFailure(why))
    }
}

/// The share of the load's cores the companion's generator used, when with this run's
/// generator it saturated them ([`stackbench_record::Companion::generators_saturated`]).
fn together(record: &stackbench_record::RunRecord) -> Option<f64> {
    let c = record.companion.as_ref().filter(|c| c.generators_saturated(&record.generator))?;
    c.generator_utilization
}
