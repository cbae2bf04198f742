//! The size of the code a contestant's authors wrote: lines of code without
//! blanks and comments, per language. The first experiment weighed code beside
//! speed ("around 100 lines of code in Go to do the same as with 20 lines with
//! Elixir and 35 with Python"); this puts that figure in every record and report.
//!
//! Counted by `cloc` (a maintained counter that knows each language's comment
//! syntax; Debian's package `cloc`), run as a program: a counting library in
//! the orchestrator would bring dozens of crates into every build for one
//! figure. Without `cloc` on `PATH` the code is not counted, and the output
//! says so.
//!
//! What counts: the files and directories a plan names in `source`, or else the
//! directory of the contestant's own start script. Left out: what is not code
//! its authors wrote for the scenario: dependency and build directories
//! (`.venv`, `node_modules`, `_build`, `target`, `bin`, `deps`), generated
//! protobuf code, tests, lockfiles and data or documentation formats (JSON,
//! TOML, YAML, XML, Markdown, text), and stackbench's glue scripts
//! (`install.sh`, `run.sh`, `reset.sh`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use stackbench_record::CodeSize;

/// Directories never counted (dependencies, build outputs, caches).
const EXCLUDED_DIRS: &str = ".venv,venv,node_modules,_build,target,bin,deps,gen,__pycache__,.mvn";
/// Languages that are data, configuration or documentation, not code.
const EXCLUDED_LANGUAGES: &str = "JSON,TOML,YAML,XML,Markdown,Text,INI,Properties,SVG,CSV";
/// File names never counted (a Perl regular expression on the base name): the
/// glue scripts, generated protobuf code, tests.
const EXCLUDED_FILES: &str = r"^(install|run|reset|.*-user)\.sh$|\.pb\.go$|_pb2(_grpc)?\.py$|_pb\.js$|_test\.go$|^test_.*\.py$|_test\.py$|\.(test|spec)\.[cm]?[jt]s$|Tests?\.(java|kt)$|_test\.exs$";

/// Why the code could not be counted.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("its source {0} does not exist")]
    Missing(PathBuf),
    #[error("no `cloc` on PATH to count it (Debian: apt-get install cloc)")]
    NoCounter,
    #[error("cloc failed: {0}")]
    Counter(String),
    #[error("no source file in a language cloc knows under {0}")]
    Empty(String),
}

/// Counts the code in `paths` (files or directories) with `cloc`.
pub fn count(paths: &[PathBuf]) -> Result<CodeSize, CodeError> {
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        return Err(CodeError::Missing(missing.clone()));
    }
    let out = Command::new("cloc")
        .args(["--json", "--quiet", "--skip-uniqueness"])
        .arg(format!("--exclude-dir={EXCLUDED_DIRS}"))
        .arg(format!("--exclude-lang={EXCLUDED_LANGUAGES}"))
        .arg(format!("--not-match-f={EXCLUDED_FILES}"))
        .args(paths)
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CodeError::NoCounter,
            _ => CodeError::Counter(e.to_string()),
        })?;
    if !out.status.success() {
        return Err(CodeError::Counter(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
    }
    let shown = || paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    // cloc prints nothing at all when it found no file it knows.
    if out.stdout.iter().all(u8::is_ascii_whitespace) {
        return Err(CodeError::Empty(shown()));
    }
    let size = parse(&out.stdout).map_err(CodeError::Counter)?;
    if size.files == 0 { Err(CodeError::Empty(shown())) } else { Ok(size) }
}

/// Reads `cloc --json`: one object per language (`nFiles`, `code`, …) beside
/// `header` and `SUM`.
fn parse(json: &[u8]) -> Result<CodeSize, String> {
    #[derive(serde::Deserialize)]
    struct Language {
        #[serde(rename = "nFiles")]
        files: u64,
        code: u64,
    }
    let all: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(json).map_err(|e| format!("unreadable --json output: {e}"))?;
    let mut size = CodeSize { lines: 0, files: 0, languages: BTreeMap::new() };
    for (name, value) in all.into_iter().filter(|(k, _)| k != "header" && k != "SUM") {
        let l: Language =
            serde_json::from_value(value).map_err(|e| format!("unreadable --json entry {name:?}: {e}"))?;
        size.lines += l.code;
        size.files += l.files;
        size.languages.insert(name, l.code);
    }
    Ok(size)
}

/// Where a contestant's code is when the plan does not say: the directory of
/// its start (or build) script when the plan gives that script's path from its
/// own directory (`{plan_dir}/run.sh`, `{plan_dir}/../contestants/x/run.sh`),
/// that is, the contestant is shipped beside the plan. A program found
/// elsewhere (an installed server, the `sb-*` binaries) has no default: the
/// plan names its `source`, or the code is not counted.
pub fn default_source(written: &str, expanded: &Path) -> Option<PathBuf> {
    if !written.starts_with("{plan_dir}") || !expanded.is_file() {
        return None;
    }
    expanded.canonicalize().ok()?.parent().map(Path::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_clocs_json_per_language() {
        let json = br#"{"header" : {"cloc_version": "1.96", "n_files": 3},
            "Go" :{"nFiles": 2, "blank": 8, "comment": 8, "code": 96},
            "Python" :{"nFiles": 1, "blank": 3, "comment": 1, "code": 35},
            "SUM": {"blank": 11, "comment": 9, "code": 131, "nFiles": 3} }"#;
        let size = parse(json).unwrap();
        assert_eq!((size.lines, size.files), (131, 3));
        assert_eq!(size.languages, BTreeMap::from([("Go".to_owned(), 96), ("Python".to_owned(), 35)]));
        assert!(parse(b"{\"Go\": {\"code\": 1}}").unwrap_err().contains("Go"));
    }

    /// Runs the real `cloc` (CI installs it; elsewhere the test says it skipped).
    #[test]
    fn counts_code_lines_without_blanks_comments_glue_tests_or_lockfiles() {
        if Command::new("cloc").arg("--version").output().is_err() {
            assert!(!stackbench_testkit::in_ci(), "CI=true: cloc is missing (.ci/run installs it)");
            stackbench_testkit::skip("no cloc on PATH");
            return;
        }
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        write(dir, "app.py", "# a comment\nimport os\n\n\ndef f():\n    return 1\n");
        write(dir, "lib/util.py", "x = 1\n");
        write(dir, "test_app.py", "def test_f():\n    assert True\n");
        write(dir, "main.go", "package main\n\n// comment\nfunc main() {\n}\n");
        write(dir, "main_test.go", "package main\n");
        write(dir, "run.sh", "#!/bin/sh\nexec python3 app.py\n");
        write(dir, "go.sum", "a v1 h1:x\n");
        write(dir, "package-lock.json", "{\"a\": 1}\n");
        write(dir, ".venv/lib/site.py", "import sys\nimport os\n");
        write(dir, "README.md", "# title\n\ntext\n");
        write(dir, "plan.toml", "name = \"x\"\n");
        let size = count(&[dir.to_path_buf()]).unwrap();
        assert_eq!(size.languages.get("Python"), Some(&4), "{size:?}");
        assert_eq!(size.languages.get("Go"), Some(&3), "{size:?}");
        assert_eq!((size.lines, size.files, size.languages.len()), (7, 3, 2), "{size:?}");

        let docs = dir.join("docs-only");
        write(&docs, "README.md", "# only docs\n");
        assert!(matches!(count(std::slice::from_ref(&docs)), Err(CodeError::Empty(_))));
    }

    #[test]
    fn a_missing_source_is_an_error_that_names_it() {
        let missing = PathBuf::from("/nonexistent/sb-code");
        assert!(
            count(std::slice::from_ref(&missing)).unwrap_err().to_string().contains("/nonexistent/sb-code")
        );
    }

    #[test]
    fn the_default_source_is_the_start_scripts_directory_beside_the_plan() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        write(dir, "contestants/x/run.sh", "#!/bin/sh\n");
        let script = dir.join("plans/../contestants/x/run.sh");
        std::fs::create_dir_all(dir.join("plans")).unwrap();
        let expected = dir.canonicalize().unwrap().join("contestants/x");
        assert_eq!(default_source("{plan_dir}/../contestants/x/run.sh", &script), Some(expected));
        assert_eq!(default_source("{bin_dir}/sb-dummy", &script), None, "not shipped beside the plan");
        assert_eq!(default_source("{plan_dir}/missing.sh", &dir.join("missing.sh")), None);
    }
}
