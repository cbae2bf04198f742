//! The contestants' `build` commands. In turn (the default), each runs in its
//! contestant's setup, with the machine to itself. With `builds =
//! "concurrent"` they all run at once before the first setup: one thread per
//! distinct command (identical commands, such as one `install.sh` that several
//! contestants share, run in turn in one thread, so the later ones find the
//! work done and two never write one directory at once), each line said as it
//! ends, each outcome handed to its contestant's setup, which records it as an
//! in-turn build's (`build_s`, or the failure), marked `build_concurrent`.
//!
//! Builds are not pinned to the contestant's `cpus`: a build is not the
//! process measured, and a compiler given one core of two makes the first
//! answer of a fresh checkout minutes later.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{BUILD_TIMEOUT, Orchestrator, RunError, on_path};
use crate::plan::Plan;
use crate::process::{LaunchError, LaunchSpec, RunOutcome};

/// How often a line names the builds still running, so a long first install is not silence.
const STILL_BUILDING: Duration = Duration::from_secs(30);

/// A build's end, run ahead of its contestant's setup.
pub(super) type Built = Result<RunOutcome, LaunchError>;

impl Orchestrator<'_, '_> {
    /// Runs contestant `i`'s build (or takes `built`, its outcome from
    /// [`Self::build_concurrently`]) and records it. `false`: the contestant
    /// goes no further (interrupted, or left out with the reason).
    pub(super) fn build(&mut self, i: usize, built: Option<Built>) -> Result<bool, RunError> {
        let Some(spec) = self.build_spec(i) else { return Ok(true) };
        let concurrent = built.is_some();
        let beside = if concurrent { " (ran beside the other builds)" } else { "" };
        self.say(&format!("  build: {}{beside}", spec.display()));
        self.live[i].record.build_concurrent = concurrent;
        let out = built.unwrap_or_else(|| {
            let t0 = Instant::now();
            let out = self.deps.launcher.run(&spec, BUILD_TIMEOUT, &self.opts.interrupt);
            self.clock.building += t0.elapsed();
            out
        });
        match out {
            Ok(out) if out.interrupted => Ok(false),
            Ok(out) if out.success() => {
                self.live[i].record.build_s = Some(out.elapsed.as_secs_f64());
                Ok(true)
            }
            Ok(out) => {
                let how = out.exit.map_or_else(|| "timed out".to_owned(), |e| format!("failed with {e}"));
                self.incident(
                    i,
                    "build",
                    "failed",
                    format!("`{}` {how}: {}", spec.display(), out.tail),
                    None,
                )?;
                self.skip_or_leave_out(i, "build failed".into()).map(|()| false)
            }
            Err(e) => {
                self.incident(i, "build", "failed", e.to_string(), None)?;
                self.skip_or_leave_out(i, "build failed".into()).map(|()| false)
            }
        }
    }

    /// The `build` of contestant `i`, as it is launched.
    pub(super) fn build_spec(&self, i: usize) -> Option<LaunchSpec> {
        let c = &self.plan.contestants[i];
        let build = c.build.as_ref()?;
        Some(LaunchSpec { cpus: None, ..self.spec(c, build, None) })
    }

    /// Runs the builds of `pending` (plan indices) at once. Contestants whose
    /// required programs are missing are left to their setup to skip; with
    /// fewer than two distinct commands there is nothing to overlap, and the
    /// setups build in turn (an empty map).
    pub(super) fn build_concurrently(&mut self, pending: &[usize]) -> BTreeMap<usize, Built> {
        let mut groups: Vec<Vec<(usize, LaunchSpec)>> = Vec::new();
        for &i in pending {
            let c = &self.plan.contestants[i];
            if c.requires.iter().any(|p| !on_path(p)) {
                continue;
            }
            let Some(spec) = self.build_spec(i) else { continue };
            match groups.iter_mut().find(|g| same_command(&g[0].1, &spec)) {
                Some(g) => g.push((i, spec)),
                None => groups.push(vec![(i, spec)]),
            }
        }
        if groups.len() < 2 {
            return BTreeMap::new();
        }
        let plan = self.plan;
        let mut waiting: Vec<usize> = groups.iter().flatten().map(|(i, _)| *i).collect();
        let line = format!(
            "building {} contestants at once ({} commands, builds = \"concurrent\"): {}",
            waiting.len(),
            groups.len(),
            names(plan, &waiting)
        );
        self.say(&line);
        let (launcher, opts) = (self.deps.launcher, self.opts);
        let (tx, rx) = mpsc::channel();
        let mut built = BTreeMap::new();
        std::thread::scope(|s| {
            for group in groups {
                let tx = tx.clone();
                s.spawn(move || {
                    for (i, spec) in group {
                        let out = launcher.run(&spec, BUILD_TIMEOUT, &opts.interrupt);
                        if tx.send((i, out)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let started = Instant::now();
            let mut next = started + STILL_BUILDING;
            loop {
                let (i, out) = match rx.recv_timeout(next.saturating_duration_since(Instant::now())) {
                    Ok(done) => done,
                    Err(RecvTimeoutError::Timeout) => {
                        next += STILL_BUILDING;
                        let line = format!(
                            "  still building after {} s: {}",
                            started.elapsed().as_secs(),
                            names(plan, &waiting)
                        );
                        self.say(&line);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                };
                waiting.retain(|&w| w != i);
                let name = &plan.contestants[i].name;
                let how = match &out {
                    Ok(o) if o.success() => format!("built in {:.1} s", o.elapsed.as_secs_f64()),
                    Ok(o) if o.interrupted => "build interrupted".to_owned(),
                    Ok(_) | Err(_) => "build failed (the reason follows in its setup)".to_owned(),
                };
                let line = format!("  {name}: {how}");
                self.say(&line);
                built.insert(i, out);
            }
        });
        built
    }
}

/// The names of contestants `ids`, for a line.
fn names(plan: &Plan, ids: &[usize]) -> String {
    ids.iter().map(|&i| plan.contestants[i].name.as_str()).collect::<Vec<_>>().join(", ")
}

/// Two builds that would do the same work in the same place.
fn same_command(a: &LaunchSpec, b: &LaunchSpec) -> bool {
    a.argv == b.argv && a.env == b.env && a.cwd == b.cwd
}
