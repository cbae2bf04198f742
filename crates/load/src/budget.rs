//! The memory budget for answers in flight, shared by every connection of the
//! process. Each HTTP/1.1 connection (and h2c stream) may hold one answer up
//! to the answer cap (64 MiB), but the open model opens up to
//! `--max-in-flight` of them, so a server sending endless answers could make
//! the generator hold caps × connections (3.78 GB at `--rate 100`). A
//! connection claims from this budget every byte its answer buffer grows past
//! its first read chunk, and gives the claim back when the buffer shrinks or
//! closes; an answer that would pass the budget fails as a `protocol` error,
//! as one past the per-answer cap does.
//!
//! A claim is taken only when a buffer grows past its first chunk (a large
//! answer), never per request, so the hot path touches no shared counter.
//! HTTP/1.1 claims its connection's answer buffer, h2c each stream's body.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of answer buffers all connections together may hold beyond their first read chunk.
pub const ANSWER_BUDGET: usize = 512 * 1024 * 1024;

/// Allocations from this size on are mappings of their own, given back to the system when
/// freed (`crate::sys::map_large_allocations`): an answer buffer past its first growths.
pub const MAPPED_FROM: usize = 256 * 1024;

/// A number of bytes shared out by [`Claim`]s.
#[derive(Debug)]
pub struct Budget {
    held: AtomicUsize,
    limit: usize,
}

impl Budget {
    pub const fn new(limit: usize) -> Budget {
        Budget { held: AtomicUsize::new(0), limit }
    }

    /// Bytes claimed now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

/// The process's budget for answers in flight.
pub static ANSWERS: Budget = Budget::new(ANSWER_BUDGET);

/// One connection's share of a [`Budget`]; given back when dropped.
#[derive(Debug)]
pub struct Claim {
    budget: &'static Budget,
    bytes: usize,
}

impl Default for Claim {
    /// A claim on [`ANSWERS`].
    fn default() -> Claim {
        Claim::on(&ANSWERS)
    }
}

impl Claim {
    pub fn on(budget: &'static Budget) -> Claim {
        Claim { budget, bytes: 0 }
    }

    /// Grows the claim to `bytes`: `false` (and the claim unchanged) when the budget cannot
    /// hold that much more.
    pub fn grow_to(&mut self, bytes: usize) -> bool {
        let Some(extra) = bytes.checked_sub(self.bytes).filter(|&e| e > 0) else { return true };
        let mut held = self.budget.held.load(Ordering::Relaxed);
        loop {
            if held.saturating_add(extra) > self.budget.limit {
                return false;
            }
            match self.budget.held.compare_exchange_weak(
                held,
                held + extra,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => held = now,
            }
        }
        self.bytes = bytes;
        true
    }

    /// Gives the whole claim back.
    pub fn release(&mut self) {
        if self.bytes > 0 {
            self.budget.held.fetch_sub(std::mem::take(&mut self.bytes), Ordering::Relaxed);
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_add_up_to_the_budget_and_no_further() {
        let budget: &'static Budget = Box::leak(Box::new(Budget::new(1000)));
        let mut a = Claim::on(budget);
        let mut b = Claim::on(budget);
        assert!(a.grow_to(500));
        assert!(a.grow_to(250), "a smaller size keeps the claim");
        assert!(!b.grow_to(501));
        assert!(b.grow_to(500));
        assert_eq!(budget.held(), 1000);
        assert!(!b.grow_to(501), "the budget is full");
        drop(a);
        assert!(b.grow_to(1000));
        b.release();
        assert_eq!(budget.held(), 0);
    }
}
