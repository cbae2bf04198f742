//! A contestant's `scenario`: one of stackbench's built-in scenarios by name
//! (`event-log`, `dummy`, `db-read`, `bubble-sort`), or a scenario file of the
//! user's own (`crates/hurl`: a `.toml` scenario or a `.hurl` file), given as
//! a path relative to the plan's directory. A value ending in `.toml` or
//! `.hurl`, or holding a `/`, is a path; anything else is a built-in name.
//!
//! A file is loaded and checked when the plan is read, with the contestant's
//! `variables` defined, so a mistake in it refuses the plan before anything
//! starts: the error points at the plan's `scenario` value and carries the
//! file's own `file:line:col`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use stackbench_hurl::{Builtin, FileLimits, Scenario as Loaded};
use toml::Spanned;

/// What a contestant serves: a built-in scenario, or a scenario file.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioRef {
    Builtin(Builtin),
    File(Arc<FileScenario>),
}

/// A scenario file, loaded and checked, with the contestant's variables.
#[derive(Debug, Clone)]
pub struct FileScenario {
    /// The file, the plan's directory joined with what the plan says.
    pub path: PathBuf,
    /// The contestant's `variables` (what `--variable NAME=VALUE` gives `stackbench load`).
    pub variables: Vec<(String, String)>,
    pub scenario: Loaded,
}

impl PartialEq for FileScenario {
    /// The same file with the same variables (what was loaded from it follows).
    fn eq(&self, other: &FileScenario) -> bool {
        self.path == other.path && self.variables == other.variables
    }
}

impl FileScenario {
    /// The variables as `stackbench load --variable` takes them, `NAME=VALUE`.
    pub fn variable_args(&self) -> Vec<String> {
        self.variables.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// The directory its relative paths (and a reset command) start from.
    pub fn dir(&self) -> &Path {
        self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
    }
}

impl ScenarioRef {
    /// The name that groups contestants (`[load.<name>]`, reports, ratios): a
    /// built-in's name, or the file's `name` (default: its stem).
    pub fn name(&self) -> &str {
        match self {
            ScenarioRef::Builtin(s) => s.name(),
            ScenarioRef::File(f) => &f.scenario.name,
        }
    }

    /// The built-in scenario, if it is one.
    pub fn builtin(&self) -> Option<Builtin> {
        match self {
            ScenarioRef::Builtin(s) => Some(*s),
            ScenarioRef::File(_) => None,
        }
    }

    /// Its name, and for a file where it is (`todo, from plans/todo.toml`).
    pub fn described(&self) -> String {
        match self {
            ScenarioRef::Builtin(s) => s.name().to_owned(),
            ScenarioRef::File(f) => format!("{}, from {}", f.scenario.name, f.path.display()),
        }
    }

    pub fn file(&self) -> Option<&FileScenario> {
        match self {
            ScenarioRef::Builtin(_) => None,
            ScenarioRef::File(f) => Some(f),
        }
    }
}

impl From<Builtin> for ScenarioRef {
    fn from(s: Builtin) -> ScenarioRef {
        ScenarioRef::Builtin(s)
    }
}

impl fmt::Display for ScenarioRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioRef::Builtin(s) => write!(f, "{s}"),
            ScenarioRef::File(file) => write!(f, "{}", file.scenario.name),
        }
    }
}

/// Whether a plan's `scenario` value names a file rather than a built-in scenario.
pub fn is_path(value: &str) -> bool {
    let ext = Path::new(value).extension();
    ext.is_some_and(|e| e.eq_ignore_ascii_case("toml") || e.eq_ignore_ascii_case("hurl"))
        || value.contains('/')
}

/// Resolves a contestant's `scenario` value; `plan_dir` is where a relative path starts (a
/// relative `limits.file_root` too). The error says what to fix (a file's own mistakes at
/// its `file:line:col`).
pub fn resolve(
    value: &str,
    variables: &BTreeMap<String, String>,
    limits: &FileLimits,
    plan_dir: &Path,
) -> Result<ScenarioRef, String> {
    if !is_path(value) {
        let builtin = value.parse::<Builtin>().map_err(|e| {
            format!("{e}; or give a scenario file of your own, a path ending in .toml or .hurl")
        })?;
        if !variables.is_empty() {
            return Err(format!(
                "`variables` set a scenario file's variables; the built-in scenario {builtin} has none"
            ));
        }
        if *limits != FileLimits::default() {
            return Err(format!(
                "`file_root`, `max_file_size` and `max_capture` are a scenario file's; the built-in scenario \
                 {builtin} has its files compiled in"
            ));
        }
        return Ok(ScenarioRef::Builtin(builtin));
    }
    for name in variables.keys() {
        if !stackbench_hurl::is_var_name(name) {
            return Err(format!(
                "`variables`: {name:?} is not a variable's name (a letter, then letters, digits, `_` or `-`)"
            ));
        }
    }
    let path = plan_dir.join(value);
    if !path.is_file() {
        return Err(format!(
            "scenario file {} not found (a relative path starts at the plan's directory, {})",
            path.display(),
            if plan_dir.as_os_str().is_empty() { Path::new(".") } else { plan_dir }.display()
        ));
    }
    let names: Vec<&str> = variables.keys().map(String::as_str).collect();
    let limits =
        FileLimits { file_root: limits.file_root.as_ref().map(|r| plan_dir.join(r)), ..limits.clone() };
    let scenario = Loaded::load_with(&path, &names, &limits).map_err(|e| format!("scenario file: {e}"))?;
    let variables: Vec<(String, String)> = variables.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let defined: Vec<(&str, &str)> = variables.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    crate::verify::file::check(&scenario, &defined).map_err(|e| format!("scenario file: {e}"))?;
    let file = FileScenario { path, variables, scenario };
    if file.scenario.name.parse::<Builtin>().is_ok() {
        return Err(format!(
            "scenario file {}: its name {:?} is a built-in scenario's; its results would be mixed with \
             those, so give it another `name`",
            file.path.display(),
            file.scenario.name
        ));
    }
    Ok(ScenarioRef::File(Arc::new(file)))
}

/// A contestant's scenario, from its `scenario` and `variables`; the error at the value.
pub(super) fn of(
    c: &super::ContestantFile,
    name: &str,
    plan_dir: &Path,
) -> Result<ScenarioRef, super::Located> {
    let variables = c.variables.as_ref().map(Spanned::get_ref).cloned().unwrap_or_default();
    let limits = FileLimits::given(
        c.file_root.as_ref().map(|r| r.get_ref().into()),
        c.max_file_size.as_ref().map(|s| s.get_ref().0),
        c.max_capture.as_ref().map(|s| s.get_ref().0),
    );
    resolve(c.scenario.get_ref(), &variables, &limits, plan_dir).map_err(|m| {
        let at = match &c.variables {
            Some(v) if m.starts_with("`variables`") => v.span(),
            _ => c.scenario.span(),
        };
        (Some(at), format!("contestant {name:?}: {m}"))
    })
}

/// Two different scenario files may not share a name: their results would be
/// grouped, and compared, as one scenario's.
pub(super) fn check_name(
    scenario: &ScenarioRef,
    before: &[super::Contestant],
    at: std::ops::Range<usize>,
) -> Result<(), super::Located> {
    let ScenarioRef::File(f) = scenario else { return Ok(()) };
    let same = |p: &Path, q: &Path| {
        p == q || p.canonicalize().ok().zip(q.canonicalize().ok()).is_some_and(|(a, b)| a == b)
    };
    let clash = before
        .iter()
        .filter_map(|c| c.scenario.file())
        .find(|o| o.scenario.name == f.scenario.name && !same(&o.path, &f.path));
    match clash {
        Some(o) => Err((
            Some(at),
            format!(
                "scenario files {} and {} are both named {:?}; a name groups contestants in reports, so give \
                 one of them another `name`",
                o.path.display(),
                f.path.display(),
                f.scenario.name
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
