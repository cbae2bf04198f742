//! `stackbench swarm load --run`: create every shard's service, wait for
//! their tasks to end (bounded by the load's own length), read each shard's
//! record from its log, remove the services (always: after an error and
//! after Ctrl-C too, and wait until their containers are gone), then merge
//! and judge the thresholds on the whole. A shard that failed, was rejected
//! or never reported is named with its task's state and its last words, and
//! makes the merged record `missing_shard` (exit 70); it is never run again,
//! since a shard run later is not part of the same load. Every side effect
//! goes through [`Swarm`], so the lifecycle is tested here with a fake.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use stackbench_load::Threshold;
use stackbench_load::merge::{self, Input};
use stackbench_record::Invalid;

use super::Plan;
use crate::exit;
use crate::merge::{MergedOutputs, Opened};

/// A swarm's manager, as far as `--run` needs one.
pub trait Swarm {
    /// Fails unless this is a manager of an active swarm.
    fn check(&mut self) -> anyhow::Result<()>;
    /// Creates a service (`docker` with these arguments); returns the warnings it printed.
    fn create(&mut self, args: &[String]) -> anyhow::Result<String>;
    /// The newest task of each of these services that has one.
    fn tasks(&mut self, names: &[String]) -> anyhow::Result<Vec<Task>>;
    /// A service's log: what its task wrote on stdout, and on stderr.
    fn logs(&mut self, name: &str) -> anyhow::Result<(String, String)>;
    fn remove(&mut self, names: &[String]) -> anyhow::Result<()>;
    /// How many of these services, and of their containers this node sees, are still there.
    fn left(&mut self, names: &[String]) -> anyhow::Result<usize>;
}

/// A service's task, as `docker service ps` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub service: String,
    /// Lowercase: `pending`, `running`, `complete`, `failed`, `rejected`, …
    pub state: String,
    pub error: String,
    pub node: String,
}

impl Task {
    fn ended(&self) -> bool {
        matches!(self.state.as_str(), "complete" | "failed" | "rejected" | "shutdown" | "orphaned" | "remove")
    }
}

/// How often to look, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub poll: Duration,
    /// From the services' creation to the latest their shards may end.
    pub deadline: Duration,
    /// How long removing the services and their containers may take.
    pub cleanup: Duration,
}

/// What the shards gave.
#[derive(Debug)]
pub enum Collected {
    /// Ctrl-C: the services were removed, nothing is merged.
    Interrupted,
    Done {
        inputs: Vec<Input>,
        /// Lines of the logs that were not records (the shards' summaries are on stderr).
        skipped: usize,
        /// One sentence for each shard that gave no record.
        missing: Vec<String>,
        /// Where the shards ran, in shard order.
        nodes: Vec<String>,
    },
}

/// Where the records go.
pub struct Outputs<'a> {
    pub merged: &'a MergedOutputs,
    pub opened: Opened,
    /// Each shard's record, as it came, is written here as `SERVICE.json`.
    pub shard_records: Option<&'a std::path::Path>,
}

/// Set by Ctrl-C or SIGTERM during `--run`.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The whole of `--run`: check, create, wait, collect, remove, merge, report.
pub fn run_and_merge(
    plan: &Plan,
    swarm: &mut dyn Swarm,
    thresholds: &[Threshold],
    out: Outputs<'_>,
) -> anyhow::Result<ExitCode> {
    swarm.check()?;
    // Without the handler, Ctrl-C ends the process and the services stay: say so then.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let timing = Timing {
        poll: Duration::from_millis(500),
        deadline: plan.longest.unwrap_or(Duration::from_hours(1)),
        cleanup: Duration::from_mins(1),
    };
    match collect(plan, swarm, timing, &INTERRUPTED)? {
        Collected::Interrupted => {
            eprintln!("swarm: interrupted; the services are removed and nothing was merged");
            Ok(exit::code(exit::INTERRUPTED))
        }
        Collected::Done { inputs, skipped, missing, nodes } => {
            let mut places = nodes.clone();
            places.sort();
            places.dedup();
            eprintln!("swarm: the shards ran on {}", places.join(", "));
            for m in &missing {
                eprintln!("swarm: {m}");
            }
            if inputs.is_empty() {
                bail!("no shard reported a record, so there is nothing to merge");
            }
            if let Some(dir) = out.shard_records {
                for i in &inputs {
                    let path = dir.join(format!("{}.json", i.name));
                    std::fs::write(&path, serde_json::to_string_pretty(&i.record)?)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
            }
            let count = inputs.len();
            let mut merged = merge::merge(inputs, thresholds)?;
            if !missing.is_empty() && merged.record.invalid.is_none() {
                merged.record.invalid = Some(Invalid::new(
                    Invalid::MISSING_SHARD,
                    format!(
                        "{} of the {} shards failed or never reported: the merge is only part of the load",
                        missing.len(),
                        plan.services.len()
                    ),
                ));
            }
            crate::merge::report(&merged, count, skipped, out.merged, out.opened)
        }
    }
}

/// Creates the services, waits for their tasks, reads their records and removes them.
pub fn collect(
    plan: &Plan,
    swarm: &mut dyn Swarm,
    timing: Timing,
    stop: &AtomicBool,
) -> anyhow::Result<Collected> {
    let mut created = Vec::new();
    let result = create_and_wait(plan, swarm, timing, stop, &mut created);
    let cleaned = remove(swarm, &created, timing);
    match (result, cleaned) {
        (Ok(c), Ok(())) => Ok(c),
        (Ok(c), Err(e)) => {
            eprintln!("warning: {e:#}");
            Ok(c)
        }
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(c)) => Err(e.context(format!("{c:#}"))),
    }
}

fn create_and_wait(
    plan: &Plan,
    swarm: &mut dyn Swarm,
    timing: Timing,
    stop: &AtomicBool,
    created: &mut Vec<String>,
) -> anyhow::Result<Collected> {
    let began = Instant::now();
    let mut notes: Vec<String> = Vec::new();
    for s in &plan.services {
        let note = swarm
            .create(&s.create)
            .with_context(|| format!("cannot create the service {} (shard {})", s.name, s.shard))?;
        created.push(s.name.clone());
        if !note.is_empty() && !notes.contains(&note) {
            eprintln!("swarm: {}", note.replace('\n', " "));
            notes.push(note);
        }
    }
    eprintln!(
        "swarm: {} service{} created; the shards start at {}",
        created.len(),
        if created.len() == 1 { "" } else { "s" },
        plan.start_text
    );
    let names = plan.names();
    let tasks = loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(Collected::Interrupted);
        }
        let tasks = swarm.tasks(&names)?;
        let all_ended = names.iter().all(|n| tasks.iter().any(|t| &t.service == n && t.ended()));
        if all_ended || began.elapsed() >= timing.deadline {
            break tasks;
        }
        std::thread::sleep(timing.poll);
    };
    let (mut inputs, mut skipped, mut missing, mut nodes) = (Vec::new(), 0, Vec::new(), Vec::new());
    for s in &plan.services {
        let task = tasks.iter().find(|t| t.service == s.name);
        nodes.push(task.map_or_else(|| "no node".to_owned(), |t| t.node.clone()));
        let (stdout, stderr) = swarm.logs(&s.name).unwrap_or_else(|e| (String::new(), format!("{e:#}")));
        let why = match merge::read_records(&s.name, &stdout) {
            Ok((records, n)) if records.len() == 1 && shard_of(&records[0]) == Some(s.shard.to_string()) => {
                skipped += n;
                inputs.extend(records);
                continue;
            }
            Ok((records, _)) => format!(
                "its log holds {} record{} of shard {}",
                records.len(),
                if records.len() == 1 { "" } else { "s" },
                records.iter().filter_map(shard_of).collect::<Vec<_>>().join(", ")
            ),
            Err(merge::MergeError::NoRecord { .. }) => "its log holds no record".to_owned(),
            Err(e) => format!("{e}"),
        };
        missing.push(format!(
            "shard {} ({}) {}; {why}{}",
            s.shard,
            s.name,
            fate(task, timing.deadline),
            last_words(&stderr)
        ));
    }
    Ok(Collected::Done { inputs, skipped, missing, nodes })
}

fn shard_of(input: &Input) -> Option<String> {
    input.record.params.extra.get("shard").and_then(|v| v.as_str()).map(str::to_owned)
}

/// What became of a shard's task.
fn fate(task: Option<&Task>, deadline: Duration) -> String {
    let Some(t) = task else {
        return format!("got no task within {} s (the swarm did not schedule it)", deadline.as_secs());
    };
    let error = if t.error.is_empty() { String::new() } else { format!(" ({})", t.error) };
    let on = if t.node.is_empty() { String::new() } else { format!(" on {}", t.node) };
    match t.state.as_str() {
        "complete" => format!("ended{on}"),
        "failed" => format!("failed{on}{error}"),
        "rejected" => format!("was rejected{on}{error}"),
        s if t.ended() => format!("ended{on} as {s}{error}"),
        s => {
            format!("had not ended {} s after its creation: its task was {s}{on}{error}", deadline.as_secs())
        }
    }
}

/// The last line a shard wrote on stderr, if any.
fn last_words(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or_else(String::new, |l| format!("; it said: {l}"))
}

/// Removes the services and waits until they and their containers are gone.
fn remove(swarm: &mut dyn Swarm, names: &[String], timing: Timing) -> anyhow::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let advice = || format!("remove them yourself: docker service rm {}", names.join(" "));
    swarm.remove(names).with_context(advice)?;
    let began = Instant::now();
    loop {
        let left = swarm.left(names).with_context(advice)?;
        if left == 0 {
            return Ok(());
        }
        if began.elapsed() >= timing.cleanup {
            bail!(
                "{left} of the services and their containers were still there {} s after their removal; {}",
                timing.cleanup.as_secs(),
                advice()
            );
        }
        std::thread::sleep(timing.poll);
    }
}

#[cfg(test)]
mod tests;
