//! The fake store for tests: events in memory, and a switch that makes it
//! unavailable, so the stacks' 503 and recovery paths can be tested without a
//! database. Not reachable from `--store` (it keeps nothing across a restart).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Store, StoreError, StoreFuture, StoredEvent};

/// One stored event, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub kind: String,
    pub source: String,
    pub value: f64,
    pub timestamp_ms: u64,
}

#[derive(Debug, Default)]
pub struct MemoryStore {
    events: Mutex<Vec<Recorded>>,
    down: AtomicBool,
}

impl MemoryStore {
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// While `down`, every operation fails as an unreachable store does.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// The events written so far.
    pub fn events(&self) -> Vec<Recorded> {
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.down.load(Ordering::SeqCst) {
            Err(StoreError::unavailable("the memory store", "it is switched off (test)"))
        } else {
            Ok(())
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<Recorded>) -> T) -> Result<T, StoreError> {
        self.check()?;
        Ok(f(&mut self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner)))
    }
}

impl Store for MemoryStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        let r = self.with(|events| {
            events.push(Recorded {
                kind: e.kind.to_owned(),
                source: e.source.to_owned(),
                value: e.value,
                timestamp_ms: e.timestamp_ms,
            });
            events.len() as u64
        });
        Box::pin(async move { r })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        let r = self.with(|events| events.len() as u64);
        Box::pin(async move { r })
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        let r = self.with(Vec::clear);
        Box::pin(async move { r })
    }

    fn describe(&self) -> String {
        "memory (a test fake; nothing survives a restart)".into()
    }
}
