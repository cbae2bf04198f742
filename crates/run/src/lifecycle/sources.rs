//! What a contestant is made of, recorded before it is measured: the lines
//! of code in its sources ([`crate::code`]), the versions of the programs it
//! requires and the hashes of its lockfiles ([`crate::provenance`]).

use std::path::PathBuf;

use super::{Launch, Orchestrator, RunError, expand};

impl Orchestrator<'_, '_> {
    /// Counts the code of the contestant's `source` (or its start script's
    /// directory), and records the versions of the programs it `requires` and
    /// the lockfiles of those sources (`crate::provenance`).
    pub(super) fn count_code(&mut self, i: usize) -> Result<(), RunError> {
        let c = &self.plan.contestants[i];
        if !c.requires.is_empty() {
            self.live[i].record.toolchains = crate::provenance::toolchains(&c.requires);
        }
        let vars = self.vars(c, None);
        let resolve = |s: &str| {
            let p = PathBuf::from(expand(s, &vars));
            if p.is_relative() { self.plan_dir.join(p) } else { p }
        };
        let paths: Vec<PathBuf> = if let Some(list) = &c.source {
            list.iter().map(|s| resolve(s)).collect()
        } else {
            let start = match &c.launch {
                Launch::Command { argv, .. } => argv.first().cloned(),
                Launch::External { .. } => None,
            };
            let build = c.build.as_ref().and_then(|b| b.first().cloned());
            let found = [start, build]
                .into_iter()
                .flatten()
                .find_map(|s| crate::code::default_source(&s, &resolve(&s)));
            let Some(dir) = found else { return Ok(()) };
            vec![dir]
        };
        self.live[i].record.lockfiles = crate::provenance::lockfiles(&paths);
        match crate::code::count(&paths) {
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
