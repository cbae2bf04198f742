//! The lifecycle's steps for a contestant that serves a scenario file
//! (`scenario = "x.toml"`): verification by the file's own cases
//! ([`crate::verify::file`]), its `[reset]` (a command run before every start,
//! as the plan's `reset` is, from the scenario file's directory; or requests
//! sent once the contestant is ready, before each measured run), and
//! readiness: a built-in scenario's verified probe, a file's `probe = true`
//! case, or for a file without one any HTTP answer at the contestant's path.

use std::time::Instant;

use crate::verify::VerifyOptions;
use stackbench_hurl::StoreReset;
use stackbench_record::Verification;

use super::{Contestant, Orchestrator, RESET_TIMEOUT, RunError, Started, path_of};
use crate::plan::{FileScenario, ScenarioRef};
use crate::process::{LaunchSpec, Process};
use crate::verify::{Ready, file, wait_ready_builtin, wait_until};

impl Orchestrator<'_, '_> {
    /// Runs `argv` (a scenario file's `[reset] command`) to its end from the
    /// file's directory, its output in the contestant's log.
    fn scenario_command(&self, c: &Contestant, f: &FileScenario, argv: &[String]) -> Result<(), String> {
        let spec = LaunchSpec {
            argv: argv.to_vec(),
            env: std::collections::BTreeMap::new(),
            cwd: Some(f.dir().to_owned()),
            cpus: None,
            cgroup_procs: Vec::new(),
            log: Some(self.store.log_path(&c.name)),
        };
        match self.deps.launcher.run(&spec, RESET_TIMEOUT, &self.opts.interrupt) {
            Ok(out) if out.success() => Ok(()),
            Ok(out) if out.interrupted => Err("interrupted".into()),
            Ok(out) => {
                let how = out.exit.map_or_else(
                    || format!("did not finish within {RESET_TIMEOUT:?}"),
                    |e| format!("failed with {e}"),
                );
                Err(format!("`{}` {how}: {}", spec.display(), out.tail))
            }
            Err(e) => Err(format!("`{}`: {e}", spec.display())),
        }
    }

    /// The scenario file's `[reset] command`, before a start. `false`: it
    /// failed (an incident was recorded) or was interrupted.
    pub(super) fn reset_before_start(&mut self, i: usize, rep: Option<u32>) -> Result<bool, RunError> {
        let c = &self.plan.contestants[i];
        let Some(f) = c.scenario.file() else { return Ok(true) };
        let Some(StoreReset::Command(argv)) = &f.scenario.reset else { return Ok(true) };
        match self.scenario_command(c, f, argv) {
            Ok(()) => Ok(true),
            Err(_) if self.interrupted() => Ok(false),
            Err(why) => {
                self.incident(i, "reset", "failed", format!("the scenario file's reset: {why}"), rep)?;
                Ok(false)
            }
        }
    }

    /// Once a contestant is ready: its budget, if its start ran at a larger quota; before a
    /// measured run, the scenario file's `[reset]` requests. `None`: either failed (an incident
    /// was recorded) and the contestant is stopped.
    pub(super) fn after_ready(
        &mut self,
        i: usize,
        phase: &str,
        rep: Option<u32>,
        started: Started,
    ) -> Result<Option<Started>, RunError> {
        let c = &self.plan.contestants[i];
        if let Err(why) = super::warm_core::end_boost(self.plan, c, started.group.as_deref()) {
            self.stop(i, started, &[], rep)?;
            self.incident(i, phase, "limits_failed", why, rep)?;
            return Ok(None);
        }
        let Some(f) = c.scenario.file().filter(|_| phase == "run") else { return Ok(Some(started)) };
        let defined: Vec<(&str, &str)> = f.variables.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let url = format!("{}{}", started.base, path_of(c));
        match file::reset_requests(self.deps.prober, &f.scenario, &url, &defined) {
            Ok(()) => Ok(Some(started)),
            Err(why) => {
                self.stop(i, started, &[], rep)?;
                self.incident(i, "reset", "failed", format!("the scenario file's reset: {why}"), rep)?;
                Ok(None)
            }
        }
    }

    /// Runs the scenario file's verification cases against the contestant at `base`.
    pub(super) fn verify_file(
        &self,
        c: &Contestant,
        f: &FileScenario,
        base: &str,
        store_emptied: bool,
        process: Option<&mut dyn Process>,
    ) -> Verification {
        let defined: Vec<(&str, &str)> = f.variables.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut process = process;
        let mut exited = || process.as_mut().and_then(|p| p.try_exit()).map(|e| e.to_string());
        let mut command = |argv: &[String]| self.scenario_command(c, f, argv);
        let url = format!("{base}{}", path_of(c));
        let v = match file::routes(&f.scenario, &defined, &url) {
            Ok(routes) => {
                let aim = stackbench_hurl::Aimed { target: Some(url.trim_end_matches('/')), routes: &routes };
                file::verify(
                    self.deps.prober,
                    &f.scenario,
                    aim,
                    &defined,
                    store_emptied,
                    &mut command,
                    &mut exited,
                )
            }
            Err(why) => file::unroutable(&f.scenario, why),
        };
        file::record(&f.scenario, &v)
    }

    /// Waits for the contestant's first verified answer: a built-in
    /// scenario's probe, or for a scenario file any HTTP answer at its path.
    pub(super) fn wait(
        &self,
        c: &Contestant,
        base: &str,
        t0: Instant,
        alive: &mut dyn FnMut() -> bool,
    ) -> Result<Ready, RunError> {
        Ok(match &c.scenario {
            ScenarioRef::Builtin(s) => {
                let opts = VerifyOptions { base_path: c.path.clone(), ..VerifyOptions::default() };
                wait_ready_builtin(self.deps.prober, base, *s, &opts, t0, c.ready_timeout, alive)
                    .map_err(|e| RunError::Refused(e.to_string()))?
            }
            ScenarioRef::File(f) => {
                let url = format!("{base}{}", path_of(c));
                let protocol = f.scenario.protocol;
                let defined: Vec<(&str, &str)> =
                    f.variables.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let mut probe = file::readiness(self.deps.prober, &f.scenario, &defined);
                wait_until(t0, c.ready_timeout, alive, &mut |wait| match &mut probe {
                    Some(p) => p.probe(&url, wait),
                    None => file::any_answer(self.deps.prober, protocol, &url, wait).map(Ok),
                })
            }
        })
    }
}
