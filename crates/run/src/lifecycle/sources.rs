//! What a contestant is made of, recorded before it is measured: the lines
//! of code in its sources ([`crate::code`]), the versions of the programs it
//! requires and the hashes of its lockfiles ([`crate::provenance`]).
//!
//! Each program's version and each set of sources' count is taken once per run:
//! a plan's contestants share toolchains and directories (a JVM plan names one
//! directory eight times), and asking `mvn --version` or running `cloc` again
//! costs a second or two each and cannot give another answer within the run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use stackbench_record::CodeSize;

use super::{Launch, Orchestrator, RunError, expand};

/// What this run has already asked: versions by program, counts by sources.
#[derive(Default)]
pub(super) struct Known {
    versions: BTreeMap<String, String>,
    counts: BTreeMap<Vec<PathBuf>, CodeSize>,
}

impl Known {
    /// The versions of `programs`, each asked at most once per run.
    fn toolchains(&mut self, programs: &[String]) -> BTreeMap<String, String> {
        let missing: Vec<String> =
            programs.iter().filter(|p| !self.versions.contains_key(*p)).cloned().collect();
        self.versions.extend(crate::provenance::toolchains(&missing));
        programs.iter().filter_map(|p| self.versions.get(p).map(|v| (p.clone(), v.clone()))).collect()
    }

    /// Asks every one of `programs` its version and counts every set of `sources` at once,
    /// each in a thread of its own, so that [`Known::toolchains`] and [`Known::count`] answer
    /// from what they found: one after another, `mvn --version` (over a second), `mix`,
    /// `elixir`, `npm`, `python3` and a `cloc` per contestant took about 9 s of a
    /// `stackbench bench` on a busy machine before anything was started.
    fn prefetch(&mut self, programs: &[String], sources: &[Vec<PathBuf>]) {
        let programs: BTreeSet<&String> =
            programs.iter().filter(|p| !self.versions.contains_key(*p)).collect();
        let sources: BTreeSet<&Vec<PathBuf>> =
            sources.iter().filter(|s| !self.counts.contains_key(*s)).collect();
        std::thread::scope(|scope| {
            let versions: Vec<_> = programs
                .into_iter()
                .map(|p| scope.spawn(move || crate::provenance::toolchains(std::slice::from_ref(p))))
                .collect();
            let counts: Vec<_> = sources
                .into_iter()
                .map(|paths| scope.spawn(move || (paths.clone(), crate::code::count(paths))))
                .collect();
            for v in versions.into_iter().filter_map(|h| h.join().ok()) {
                self.versions.extend(v);
            }
            // A failed count is left for `count` to try again and say why.
            for (paths, size) in counts.into_iter().filter_map(|h| h.join().ok()) {
                if let Ok(size) = size {
                    self.counts.insert(paths, size);
                }
            }
        });
    }

    /// The code in `paths`, counted at most once per run (a failed count is tried again).
    fn count(&mut self, paths: &[PathBuf]) -> Result<CodeSize, crate::code::CodeError> {
        if let Some(size) = self.counts.get(paths) {
            return Ok(size.clone());
        }
        let size = crate::code::count(paths)?;
        self.counts.insert(paths.to_vec(), size.clone());
        Ok(size)
    }
}

impl Orchestrator<'_, '_> {
    /// Takes the versions and code counts of the `pending` contestants at once
    /// ([`Known::prefetch`]), before their setups read them one by one.
    pub(super) fn prefetch_sources(&mut self, pending: &[usize]) {
        let programs: Vec<String> =
            pending.iter().flat_map(|&i| self.plan.contestants[i].requires.iter().cloned()).collect();
        let sources: Vec<Vec<PathBuf>> = pending.iter().filter_map(|&i| self.sources_of(i)).collect();
        self.sources.prefetch(&programs, &sources);
    }

    /// The sources whose code `i`'s record counts: its `source`, or its start script's
    /// (or build script's) directory; `None` when there is none to count.
    fn sources_of(&self, i: usize) -> Option<Vec<PathBuf>> {
        let c = &self.plan.contestants[i];
        let vars = self.vars(c, None);
        let resolve = |s: &str| {
            let p = PathBuf::from(expand(s, &vars));
            if p.is_relative() { self.plan_dir.join(p) } else { p }
        };
        if let Some(list) = &c.source {
            return Some(list.iter().map(|s| resolve(s)).collect());
        }
        let start = match &c.launch {
            Launch::Command { argv, .. } => argv.first().cloned(),
            Launch::External { .. } => None,
        };
        let build = c.build.as_ref().and_then(|b| b.first().cloned());
        let dir = [start, build]
            .into_iter()
            .flatten()
            .find_map(|s| crate::code::default_source(&s, &resolve(&s)))?;
        Some(vec![dir])
    }

    /// Counts the code of the contestant's `source` (or its start script's
    /// directory), and records the versions of the programs it `requires` and
    /// the lockfiles of those sources (`crate::provenance`).
    pub(super) fn count_code(&mut self, i: usize) -> Result<(), RunError> {
        let c = &self.plan.contestants[i];
        if !c.requires.is_empty() {
            self.live[i].record.toolchains = self.sources.toolchains(&c.requires);
        }
        let Some(paths) = self.sources_of(i) else { return Ok(()) };
        self.live[i].record.lockfiles = crate::provenance::lockfiles(&paths);
        match self.sources.count(&paths) {
            Ok(size) => {
                let by: Vec<String> = size.languages.iter().map(|(l, n)| format!("{n} {l}")).collect();
                self.say(&format!(
                    "  code: {} lines ({}) in {} files",
                    size.lines,
                    by.join(", "),
                    size.files
                ));
                self.live[i].record.code = Some(size);
                let record = self.live[i].record.clone();
                self.store.save_contestant(&record)?;
                Ok(())
            }
            // Not the contestant's doing: said in the output, not recorded against it.
            Err(e @ crate::code::CodeError::NoCounter) => {
                self.say(&format!("  code: not counted: {e}"));
                Ok(())
            }
            Err(e) => self.incident(i, "build", "code_not_counted", e.to_string(), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// A program that appends a line to `calls` each time it is asked its version.
    fn counting_program(dir: &std::path::Path) -> (String, PathBuf) {
        let calls = dir.join("calls");
        let program = dir.join("toolchain");
        let script = format!("#!/bin/sh\necho called >> '{}'\necho 'toolchain 1.2'\n", calls.display());
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        (program.display().to_string(), calls)
    }

    #[test]
    fn each_program_is_asked_its_version_once_per_run() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        let (program, calls) = counting_program(dir);
        let mut known = Known::default();
        let first = known.toolchains(std::slice::from_ref(&program));
        let second = known.toolchains(std::slice::from_ref(&program));
        assert_eq!(first, second);
        assert_eq!(first.get(&program).map(String::as_str), Some("toolchain 1.2"), "{first:?}");
        assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 1);
        // Another run asks again.
        let _ = Known::default().toolchains(std::slice::from_ref(&program));
        assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 2);
    }

    #[test]
    fn versions_taken_at_once_beforehand_are_not_asked_again() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dirs = [scratch.path().join("a"), scratch.path().join("b")];
        for d in &dirs {
            std::fs::create_dir(d).unwrap();
        }
        let (a, a_calls) = counting_program(&dirs[0]);
        let (b, b_calls) = counting_program(&dirs[1]);
        let mut known = Known::default();
        // Each program once, however many contestants name it; a missing one says why.
        known.prefetch(&[a.clone(), b.clone(), a.clone(), "no-such-program-sb".into()], &[]);
        let got = known.toolchains(&[a.clone(), b.clone(), "no-such-program-sb".into()]);
        assert_eq!((got[&a].as_str(), got[&b].as_str()), ("toolchain 1.2", "toolchain 1.2"), "{got:?}");
        assert!(got["no-such-program-sb"].starts_with("not run"), "{got:?}");
        for calls in [a_calls, b_calls] {
            assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 1);
        }
    }

    /// A second count of the same sources is the first one's, not `cloc` run again:
    /// the sources are gone by then, and the count still answers.
    #[test]
    fn each_set_of_sources_is_counted_once_per_run() {
        if std::process::Command::new("cloc").arg("--version").output().is_err() {
            assert!(!stackbench_testkit::in_ci(), "CI=true: cloc is missing (.ci/run installs it)");
            stackbench_testkit::skip("no cloc on PATH");
            return;
        }
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("main.go"), "package main\n\nfunc main() {\n}\n").unwrap();
        let mut known = Known::default();
        let paths = vec![dir.to_path_buf()];
        let first = known.count(&paths).unwrap();
        scratch.close().unwrap();
        assert_eq!(known.count(&paths).unwrap(), first);
        assert!(Known::default().count(&paths).is_err(), "a new run counts again");
    }
}
