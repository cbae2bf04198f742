//! The load a measured run applies, behind [`LoadDriver`] (the load engine
//! for real, a fake in the lifecycle's tests), and [`Cancel`], the stop
//! signal that Ctrl-C, SIGTERM and a crashed contestant pull.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use stackbench_record::RunRecord;

/// One measured run to drive (warm-up included).
#[derive(Debug, Clone)]
pub struct LoadJob {
    /// The full target URL, e.g. `http://127.0.0.1:41234/db/sqlite`.
    pub url: String,
    pub scenario: crate::plan::ScenarioRef,
    /// The contestant's load profile: `stackbench load` options by long flag name.
    pub profile: toml::Table,
    /// Cores the generator may use (those the contestant does not).
    pub cpus: Option<Vec<usize>>,
    /// A capacity search's bracket from an earlier repetition of the same
    /// contestant: the search bisects it at once instead of starting afresh.
    pub bracket: Option<[f64; 2]>,
    /// The certificate stackbench made for a contestant with `tls = true`, trusted unless
    /// the profile says how to check certificates (`cacert`, `insecure`).
    pub cacert: Option<std::path::PathBuf>,
}

/// Drives load. `run` blocks until the run ends or `cancel` fires, and
/// returns the record of what ran (with `interrupted` set when cancelled).
pub trait LoadDriver: Send + Sync {
    /// Refuses a job it cannot run (checked before anything starts, on a
    /// placeholder URL with the contestant's path).
    fn check(&self, job: &LoadJob) -> Result<(), String>;
    fn run(&self, job: &LoadJob, cancel: &Cancel) -> Result<RunRecord, String>;
    /// After a run: load threads of it that have not ended (stuck), described; `None` when
    /// none is left. Nothing can end such a thread but the process's exit, so no other run
    /// may start beside it (it would take the next run's cores).
    fn stuck(&self) -> Option<String> {
        None
    }
}

type Hook = Box<dyn Fn() + Send + Sync>;

/// A cloneable, one-way stop signal with hooks (to forward it to the engine's own stop).
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    flag: AtomicBool,
    hooks: Mutex<Vec<Hook>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel").field("cancelled", &self.is_cancelled()).finish()
    }
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Fires the signal (idempotent) and runs the hooks.
    pub fn cancel(&self) {
        if !self.inner.flag.swap(true, Ordering::SeqCst) {
            for hook in self.inner.hooks.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter() {
                hook();
            }
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// Runs `hook` when the signal fires (at once if it already has).
    pub fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) {
        let mut hooks = self.inner.hooks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.is_cancelled() {
            hook();
        } else {
            hooks.push(Box::new(hook));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn hooks_run_once() {
        let c = Cancel::new();
        let n = Arc::new(AtomicU32::new(0));
        let n2 = Arc::clone(&n);
        c.on_cancel(move || {
            n2.fetch_add(1, Ordering::SeqCst);
        });
        c.clone().cancel();
        c.cancel();
        assert!(c.is_cancelled());
        let n3 = Arc::clone(&n);
        c.on_cancel(move || {
            n3.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(n.load(Ordering::SeqCst), 11);
    }
}
