//! [`Stop`], the handle that ends a run early: given to [`crate::run`], read by every worker.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cancellation handle: clone it, give one to [`crate::run`], call [`Stop::stop`]
/// from anywhere (a signal handler thread, another task) to end the run early.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Asks the run to stop; it returns its partial record, marked interrupted.
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
