//! The result store: one directory per plan execution,
//!
//! ```text
//! results/<id>/
//!   manifest.json                 Manifest: plan, environment, status
//!   contestants/<name>.json       ContestantRecord: artifact, build, cold starts, verification, incidents
//!   runs/<seq>-<name>-r<k>.json   RunRecord of one measured run
//!   stopping.json                 Stopping: why the rounds ended (plans with `precision`)
//! ```
//!
//! Every file is written atomically (temporary file, fsync, rename, fsync of
//! the directory), so a crash or Ctrl-C at any moment leaves every earlier file
//! whole. The orchestrator writes; reports and `--resume` read with
//! [`ResultSet::load`].

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{Environment, Invalid, Quantiles, RunRecord};

pub const MANIFEST: &str = "manifest.json";
pub const RUNS_DIR: &str = "runs";
pub const CONTESTANTS_DIR: &str = "contestants";
pub const STOPPING: &str = "stopping.json";

/// How a plan with `precision` decided how many rounds to measure: its
/// target, its budget, the rule that keeps the 95% promise over repeated
/// looks, and why it stopped. Rewritten after every round, so an interrupted
/// run says how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopping {
    /// The half-width asked of every ratio's interval, as a fraction (0.03 for ±3%).
    pub precision: f64,
    pub max_repetitions: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<f64>,
    /// The rule spending the 5% error over the looks (`bonferroni`).
    pub method: String,
    /// Looks the budget allows (the first at round `first_look`).
    pub planned_looks: u32,
    pub first_look: u32,
    /// Confidence of each look's intervals (`1 − 0.05 / planned_looks`): the
    /// level the report's ratio intervals are computed at.
    pub look_confidence: f64,
    /// Rounds measured so far.
    pub rounds: u32,
    /// `met`, `max_repetitions`, `max_time`, `interrupted`, or `running`.
    pub reason: String,
    /// Seed of the rounds' order, and each round's order of contestants.
    pub seed: u64,
    pub orders: Vec<Vec<String>>,
}

/// What a result directory is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    pub tool_version: String,
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_ms: Option<u64>,
    /// Path of the plan file as given, if it came from a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_path: Option<String>,
    /// The plan's full TOML text, so the directory is self-describing.
    pub plan_text: String,
    pub environment: Environment,
    /// `git rev-parse HEAD` of the repository holding the plan, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    pub status: Status,
}

/// Where a plan execution stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Running,
    Complete,
    Interrupted,
}

/// Everything about one contestant that is not a measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContestantRecord {
    pub name: String,
    pub scenario: String,
    /// What the contestant is written in, as the plan says (`"Go 1.19"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its framework, server or driver, as the plan says (`"Gin 1.8"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// A server stackbench did not start (`url = ...`): no cold start, no sampling.
    #[serde(default)]
    pub external: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_bytes: Option<u64>,
    /// The code its authors wrote for the scenario (lines without blanks and comments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeSize>,
    /// The version each program it `requires` reports (`go` → `go version go1.26.8 linux/amd64`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub toolchains: BTreeMap<String, String>,
    /// The lockfiles in its sources with their SHA-256: the dependency set it was built from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lockfiles: Vec<Lockfile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_s: Option<f64>,
    /// Its build ran while other contestants' builds ran (`builds = "concurrent"`):
    /// `build_s` is the time it took beside them, not alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub build_concurrent: bool,
    /// Exec to first verified answer, ms, one per successful trial.
    #[serde(default)]
    pub cold_start_ms: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<Quantiles>,
    /// The largest readiness-probe resolution over the trials, ms: each
    /// trial's figure is late by at most this much (the time between the last
    /// probe that was not answered and the one that was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start_resolution_ms: Option<f64>,
    /// The CPU quota (cores) its starts ran at, exec to the first verified answer, when larger
    /// than its budget (a plan's `warmup_cpu_quota`): the budget was set right after each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_cpu_quota: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// What went wrong, in order (crash, never ready, failed verification, ...).
    #[serde(default)]
    pub incidents: Vec<Incident>,
}

/// A lockfile of a contestant's sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lockfile {
    /// Relative to the source directory it was found in (`go.sum`, `api/package-lock.json`).
    pub path: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
}

/// Lines of code (without blanks and comments) in a contestant's sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeSize {
    /// Over every language.
    pub lines: u64,
    /// Source files counted.
    pub files: u64,
    /// Lines per language, by tokei's name for it (`"Go"`, `"Python"`).
    pub languages: BTreeMap<String, u64>,
}

/// The outcome of contract verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Every core rule held (hardening rules may have failed; see `failures`).
    pub passed: bool,
    /// Number of cases run.
    pub cases: u32,
    pub failures: Vec<VerifyFailure>,
}

impl Verification {
    /// The hardening rules broken: what the contestant does not enforce.
    pub fn not_enforced(&self) -> Vec<&str> {
        let mut what: Vec<&str> = self
            .failures
            .iter()
            .filter(|f| f.level == "hardening")
            .map(|f| if f.enforces.is_empty() { f.rule.as_str() } else { f.enforces.as_str() })
            .collect();
        what.dedup();
        what
    }
}

/// One contract rule a contestant broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyFailure {
    /// The rule, in the contract's words (e.g. "malformed JSON gets 400").
    pub rule: String,
    /// What happened instead.
    pub detail: String,
    /// `core` (the answer is wrong) or `hardening` (bad input not refused).
    #[serde(default = "core")]
    pub level: String,
    /// Hardening: what is not enforced, in a few words ("the 64 KiB body cap").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub enforces: String,
}

fn core() -> String {
    "core".to_owned()
}

/// Something that went wrong with a contestant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incident {
    /// `build`, `start`, `cold_start`, `verify`, `reset`, `warmup`, `run`, `stop`.
    pub phase: String,
    /// `crashed`, `never_ready`, `wrong_answer`, `failed`, `timeout`, ...
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
}

/// A whole result directory, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultSet {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Sorted by name.
    pub contestants: Vec<ContestantRecord>,
    /// In file order (the order they were measured).
    pub runs: Vec<RunRecord>,
    /// How the rounds were decided, for plans with `precision`.
    pub stopping: Option<Stopping>,
}

/// Why a result directory cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The I/O error is in the message, not a `source`: a chain printed with `{:#}` would
    /// say it twice ("…: already holds results…: already holds results…").
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: not a valid stackbench file ({error}); was it written by another version?")]
    Json { path: PathBuf, error: serde_json::Error },
    #[error("{0} is not a stackbench result directory (no manifest.json)")]
    NotAResultDir(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io { path: path.to_owned(), error }
}

/// Writes `value` as pretty JSON to `path` atomically.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io(dir))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|error| StoreError::Json { path: path.to_owned(), error })?;
    text.push(b'\n');
    let write = || -> std::io::Result<()> {
        // A new file, never one found there: `create_new` does not follow a symbolic link.
        let _ = fs::remove_file(&tmp);
        let mut f = File::options().write(true).create_new(true).open(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        File::open(dir)?.sync_all()
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(path)(e)
    })
}

/// Reads one JSON file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = fs::read(path).map_err(io(path))?;
    serde_json::from_slice(&text).map_err(|error| StoreError::Json { path: path.to_owned(), error })
}

/// A name made safe for a file name: `[A-Za-z0-9_.-]`, everything else `_`.
pub fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with('.') { format!("_{s}") } else { s }
}

/// The file name of the `seq`-th measured run (1-based) of `contestant`, repetition `rep`.
pub fn run_file_name(seq: u32, contestant: &str, rep: u32) -> String {
    format!("{seq:04}-{}-r{rep}.json", file_safe(contestant))
}

/// The file of a contestant's record.
pub fn contestant_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(CONTESTANTS_DIR).join(format!("{}.json", file_safe(name)))
}

impl Manifest {
    /// Reads the manifest of a result directory alone (not its runs).
    pub fn load(dir: &Path) -> Result<Manifest, StoreError> {
        let path = dir.join(MANIFEST);
        if !path.exists() {
            return Err(StoreError::NotAResultDir(dir.to_owned()));
        }
        read_json(&path)
    }
}

impl ResultSet {
    /// Reads a result directory. Temporary files of interrupted writes are ignored.
    pub fn load(dir: &Path) -> Result<ResultSet, StoreError> {
        let manifest = Manifest::load(dir)?;
        let mut contestants: Vec<ContestantRecord> =
            json_files(&dir.join(CONTESTANTS_DIR))?.iter().map(|p| read_json(p)).collect::<Result<_, _>>()?;
        contestants.sort_by(|a, b| a.name.cmp(&b.name));
        let files = json_files(&dir.join(RUNS_DIR))?;
        let mut runs: Vec<RunRecord> = files.iter().map(|p| read_json(p)).collect::<Result<_, _>>()?;
        check_runs(&files, &mut runs);
        let stopping_path = dir.join(STOPPING);
        let stopping = if stopping_path.exists() { Some(read_json(&stopping_path)?) } else { None };
        Ok(ResultSet { dir: dir.to_owned(), manifest, contestants, runs, stopping })
    }
}

/// Marks `invalid` each run read back that is not a measurement as it stands, so that no
/// report presents it as one: a record that contradicts itself (edited or damaged), a file
/// whose name disagrees with its label (renamed or copied), and a second record of the same
/// contestant and repetition (a copied file: it would count as one more repetition). The
/// reason names the file, what is wrong, and what to do. A run already marked keeps its reason.
fn check_runs(files: &[PathBuf], runs: &mut [RunRecord]) {
    let shown = |p: &Path| Path::new(RUNS_DIR).join(p.file_name().unwrap_or_default()).display().to_string();
    for (path, run) in files.iter().zip(runs.iter_mut()) {
        if run.invalid.is_some() {
            continue;
        }
        let file = shown(path);
        if let Some(what) = run.inconsistency() {
            run.invalid = Some(Invalid::new(
                Invalid::INCONSISTENT,
                format!(
                    "{file} contradicts itself: {what}; it was changed or damaged after it was written, \
                     so its numbers are not a measurement: restore the file, or delete it and measure \
                     the run again (stackbench run --resume)"
                ),
            ));
            continue;
        }
        if let (Some(name), Some(rep)) = (&run.label.contestant, run.label.repetition) {
            let tail = format!("-{}-r{rep}.json", file_safe(name));
            let base = path.file_name().unwrap_or_default().to_string_lossy();
            let seq = base
                .strip_suffix(&tail)
                .filter(|seq| seq.len() >= 4 && seq.bytes().all(|b| b.is_ascii_digit()));
            if seq.is_none() {
                run.invalid = Some(Invalid::new(
                    Invalid::INCONSISTENT,
                    format!(
                        "{file} holds {name}, repetition {rep}, which its name does not say (a run of \
                         it is named NNNN{tail}): a renamed or copied file is not counted; give it \
                         back its name, or delete it"
                    ),
                ));
            }
        }
    }
    let mut first: BTreeMap<(&str, Option<&str>, u32), usize> = BTreeMap::new();
    let mut copies = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        if let (None, Some(name), Some(rep)) = (&run.invalid, &run.label.contestant, run.label.repetition) {
            let key = (name.as_str(), run.label.scenario.as_deref(), rep);
            match first.get(&key) {
                Some(&j) => copies.push((i, j)),
                None => {
                    first.insert(key, i);
                }
            }
        }
    }
    for (i, j) in copies {
        let (name, rep) =
            (runs[i].label.contestant.clone().unwrap_or_default(), runs[i].label.repetition.unwrap_or(0));
        runs[i].invalid = Some(Invalid::new(
            Invalid::DUPLICATE,
            format!(
                "{} is a second record of {name}, repetition {rep} (the first is {}): a copied run file \
                 is not one more repetition; delete one of the two",
                shown(&files[i]),
                shown(&files[j])
            ),
        ));
    }
}

/// The `*.json` files of a directory (not temporaries), sorted; none if it does not exist.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        let hidden = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if path.extension().is_some_and(|e| e == "json") && !hidden {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory, removed when dropped, and a path in it not made yet.
    fn tempdir(name: &str) -> (tempfile::TempDir, PathBuf) {
        let scratch =
            tempfile::Builder::new().prefix(&format!("stackbench-store-{name}-")).tempdir().unwrap();
        let dir = scratch.path().join("results");
        (scratch, dir)
    }

    fn manifest() -> Manifest {
        Manifest {
            schema: crate::SCHEMA_VERSION,
            tool_version: "0.1.0".into(),
            created_at_ms: 1,
            finished_at_ms: None,
            plan_path: Some("plans/quick.toml".into()),
            plan_text: "[defaults]\n".into(),
            environment: Environment::default(),
            git_commit: None,
            status: Status::Running,
        }
    }

    #[test]
    fn writes_and_reads_back() {
        let (_scratch, dir) = tempdir("rw");
        write_json_atomic(&dir.join(MANIFEST), &manifest()).unwrap();
        let c = ContestantRecord {
            name: "axum/dummy".into(),
            scenario: "dummy".into(),
            language: Some("Rust".into()),
            framework: Some("axum 0.8".into()),
            external: false,
            artifact_bytes: Some(10),
            code: None,
            toolchains: BTreeMap::new(),
            lockfiles: Vec::new(),
            build_s: None,
            build_concurrent: false,
            cold_start_ms: vec![3.0, 4.0],
            cold_start: Some(Quantiles::of(&[3.0, 4.0])),
            cold_start_resolution_ms: Some(0.4),
            start_cpu_quota: None,
            verification: Some(Verification { passed: true, cases: 9, failures: vec![] }),
            incidents: vec![],
        };
        write_json_atomic(&contestant_path(&dir, &c.name), &c).unwrap();
        fs::write(dir.join(CONTESTANTS_DIR).join(".x.json.tmp-1"), "garbage").unwrap();
        let set = ResultSet::load(&dir).unwrap();
        assert_eq!(set.manifest, manifest());
        assert_eq!(set.contestants, vec![c]);
        assert!(set.runs.is_empty());
    }

    #[test]
    fn missing_and_broken_dirs_say_so() {
        let (_scratch, dir) = tempdir("broken");
        assert!(matches!(ResultSet::load(&dir), Err(StoreError::NotAResultDir(_))));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(MANIFEST), "{").unwrap();
        let e = ResultSet::load(&dir).unwrap_err().to_string();
        assert!(e.contains("manifest.json"), "{e}");
    }

    #[test]
    fn names_are_file_safe() {
        assert_eq!(file_safe("axum/dummy x"), "axum_dummy_x");
        assert_eq!(file_safe(".."), "_..");
        assert_eq!(run_file_name(7, "a b", 2), "0007-a_b-r2.json");
    }
}
