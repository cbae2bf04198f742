//! Writing a result directory (layout and atomic writes are those of
//! `stackbench_record`): the manifest at the start and at the end, a
//! contestant's record whenever it changes, and each measured run as soon as
//! it ends, so an interruption loses nothing written before. `--resume` reads
//! the directory back and tells which runs are still owed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use stackbench_record::{
    ContestantRecord, Environment, MANIFEST, Manifest, RUNS_DIR, ResultSet, RunRecord, SCHEMA_VERSION,
    STOPPING, Status, StoreError, Utc, contestant_path, file_safe, read_json, run_file_name,
    write_json_atomic,
};

/// How a result directory was asked for, so `--resume` continues the same
/// thing: the plan's variant and the contestants selected (`--only`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Invocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The contestants of the plan as run (after `--only`).
    #[serde(default)]
    pub contestants: Vec<String>,
    /// How the rounds were decided (the plan's precision with any
    /// `--precision`/`--max-repetitions`/`--max-time` over it); absent in
    /// directories written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsAsked>,
    /// The plan's `cpu_quota` was dropped (`--unbudgeted`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unbudgeted: bool,
}

/// The rounds a result directory was started with: a fixed count (`precision`
/// absent) or precision-driven with its budget.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundsAsked {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repetitions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<f64>,
}

impl RoundsAsked {
    pub fn of(p: Option<&crate::plan::Precision>) -> RoundsAsked {
        RoundsAsked {
            precision: p.map(|p| p.target),
            max_repetitions: p.map(|p| p.max_repetitions),
            max_time_s: p.and_then(|p| p.max_time).map(|t| t.as_secs_f64()),
        }
    }

    /// As `stackbench run` would be told it: `--precision 3% --max-repetitions 20`, or `a fixed count of rounds`.
    pub fn describe(&self) -> String {
        let Some(p) = self.precision else { return "a fixed count of rounds (no --precision)".to_owned() };
        let budget = self.max_repetitions.map(|n| format!(" --max-repetitions {n}")).unwrap_or_default();
        let time = self.max_time_s.map(|t| format!(" --max-time {t}s")).unwrap_or_default();
        format!("--precision {}{budget}{time}", stackbench_record::fmt::percent(p * 100.0))
    }
}

/// The file holding the [`Invocation`] in a result directory.
pub const INVOCATION: &str = "invocation.json";

impl Invocation {
    /// Reads it from a result directory (`None` if absent or unreadable).
    pub fn read(dir: &Path) -> Option<Invocation> {
        read_json(&dir.join(INVOCATION)).ok()
    }
}

pub use stackbench_record::now_ms;

/// A result directory being written.
#[derive(Debug)]
pub struct ResultStore {
    pub dir: PathBuf,
    manifest: Manifest,
    next_seq: u32,
    /// `(contestant, repetition)` of every complete run already stored (not
    /// interrupted, and a result: not marked invalid).
    pub done: BTreeSet<(String, u32)>,
    /// Contestant records already stored (resume).
    pub contestants: Vec<ContestantRecord>,
}

/// A directory name for now, like `2025-12-01T10-32-05Z` (UTC; sorts by time).
pub fn timestamp_name(ms: u64) -> String {
    let t = Utc::from_ms(ms);
    format!("{:04}-{:02}-{:02}T{:02}-{:02}-{:02}Z", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

impl ResultStore {
    /// Creates `dir` (which must not hold results yet) and writes the manifest.
    pub fn create(
        dir: &Path,
        plan_path: Option<&Path>,
        plan_text: &str,
        environment: Environment,
    ) -> Result<ResultStore, StoreError> {
        if dir.join(MANIFEST).exists() {
            return Err(StoreError::Io {
                path: dir.to_owned(),
                error: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "already holds results; continue it with --resume, or choose another --out",
                ),
            });
        }
        let manifest = Manifest {
            schema: SCHEMA_VERSION,
            tool_version: environment.stackbench_version.clone(),
            created_at_ms: now_ms(),
            finished_at_ms: None,
            plan_path: plan_path.map(|p| p.display().to_string()),
            plan_text: plan_text.to_owned(),
            git_commit: plan_path.and_then(git_commit),
            environment,
            status: Status::Running,
        };
        write_json_atomic(&dir.join(MANIFEST), &manifest)?;
        Ok(ResultStore {
            dir: dir.to_owned(),
            manifest,
            next_seq: 1,
            done: BTreeSet::new(),
            contestants: Vec::new(),
        })
    }

    /// Opens an existing directory to continue it. Interrupted runs are set
    /// aside (renamed `*.json.interrupted`) since they will be measured again.
    pub fn resume(dir: &Path) -> Result<ResultStore, StoreError> {
        let set = ResultSet::load(dir)?;
        let runs_dir = dir.join(RUNS_DIR);
        let mut next_seq = 1;
        let mut done = BTreeSet::new();
        if let Ok(entries) = fs::read_dir(&runs_dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(seq) = name.get(..4).and_then(|s| s.parse::<u32>().ok()) {
                    next_seq = next_seq.max(seq + 1);
                }
            }
        }
        for run in &set.runs {
            if let (Some(c), Some(r)) = (&run.label.contestant, run.label.repetition)
                && !run.interrupted
                && run.invalid.is_none()
            {
                done.insert((c.clone(), r));
            }
        }
        if let Ok(entries) = fs::read_dir(&runs_dir) {
            for e in entries.flatten() {
                let path = e.path();
                if path.extension().is_some_and(|x| x == "json")
                    && read_json::<RunRecord>(&path).is_ok_and(|r| r.interrupted)
                {
                    let mut aside = path.clone().into_os_string();
                    aside.push(".interrupted");
                    fs::rename(&path, &aside)
                        .map_err(|error| StoreError::Io { path: path.clone(), error })?;
                }
            }
        }
        let mut manifest = set.manifest;
        manifest.status = Status::Running;
        manifest.finished_at_ms = None;
        write_json_atomic(&dir.join(MANIFEST), &manifest)?;
        Ok(ResultStore { dir: dir.to_owned(), manifest, next_seq, done, contestants: set.contestants })
    }

    /// Writes a contestant's record (replacing the previous one).
    pub fn save_contestant(&mut self, record: &ContestantRecord) -> Result<(), StoreError> {
        write_json_atomic(&contestant_path(&self.dir, &record.name), record)?;
        match self.contestants.iter_mut().find(|c| c.name == record.name) {
            Some(c) => *c = record.clone(),
            None => self.contestants.push(record.clone()),
        }
        Ok(())
    }

    /// Writes one measured run; returns its path.
    pub fn save_run(&mut self, record: &RunRecord) -> Result<PathBuf, StoreError> {
        let name = record.label.contestant.as_deref().unwrap_or("run");
        let rep = record.label.repetition.unwrap_or(0);
        let path = self.dir.join(RUNS_DIR).join(run_file_name(self.next_seq, name, rep));
        // The orchestrator's tests (fake contestants, whole plans) hold every record they
        // write to the schema other tools read it by.
        #[cfg(test)]
        let record = &stackbench_testkit::record::valid(record.clone());
        write_json_atomic(&path, record)?;
        self.next_seq += 1;
        if !record.interrupted {
            self.done.insert((name.to_owned(), rep));
        }
        Ok(path)
    }

    /// Writes how the rounds of a plan with `precision` are being decided.
    pub fn save_stopping(&self, stopping: &stackbench_record::Stopping) -> Result<(), StoreError> {
        write_json_atomic(&self.dir.join(STOPPING), stopping)
    }

    /// Where a contestant's stdout and stderr go.
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{}.log", file_safe(name)))
    }

    /// Marks the directory finished (complete or interrupted).
    pub fn finish(&mut self, status: Status) -> Result<(), StoreError> {
        self.manifest.status = status;
        self.manifest.finished_at_ms = Some(now_ms());
        write_json_atomic(&self.dir.join(MANIFEST), &self.manifest)
    }
}

/// `git rev-parse HEAD` of the repository holding `plan`, if any.
pub fn git_commit(plan: &Path) -> Option<String> {
    let dir = plan.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && commit.len() >= 7).then_some(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(timestamp_name(0), "1970-01-01T00-00-00Z");
        assert_eq!(timestamp_name(1_764_460_800_000), "2025-11-30T00-00-00Z");
        assert_eq!(timestamp_name(951_782_400_000 + 3_723_000), "2000-02-29T01-02-03Z");
    }

    #[test]
    fn refuses_to_overwrite_and_finds_the_repo() {
        let scratch = tempfile::Builder::new().prefix("sb-run-store-").tempdir().unwrap();
        let dir = scratch.path().join("results");
        let env = Environment::detect("0.0.0");
        let mut s = ResultStore::create(
            &dir,
            Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml").as_path()),
            "x",
            env.clone(),
        )
        .unwrap();
        assert!(s.manifest.git_commit.is_some(), "the workspace is a git repository");
        let e = ResultStore::create(&dir, None, "x", env).unwrap_err().to_string();
        assert!(e.contains("--resume"), "{e}");
        s.finish(Status::Complete).unwrap();
        let r = ResultStore::resume(&dir).unwrap();
        assert_eq!(r.manifest.status, Status::Running);
    }
}
