//! A failure inside the load engine: a panic in a worker thread or in one of
//! its tasks, or a worker that does not finish. It is never a result: the run
//! stops at once, and its record is marked [`stackbench_record::Invalid`]
//! (`tool_failure`) with the first fault's description, so the command line
//! exits non-zero and reports leave the run out.
//!
//! tokio catches a panic in a spawned task and drops the task silently (the
//! worker would go on with one user fewer, or with none, and report a clean
//! run of 0 requests): every task a worker spawns is wrapped by [`guard`],
//! which records the panic and stops the run. A panic hook, installed once
//! and chained to the one before it, keeps the place of the last panic of
//! each worker thread for the description.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::FutureExt as _;

/// The first fault of a run, shared by its workers (touched only when one happens).
#[derive(Debug, Default)]
pub struct Fault {
    set: AtomicBool,
    first: Mutex<Option<String>>,
}

impl Fault {
    /// Records `what` unless a fault was recorded already (the first one explains the rest).
    pub fn record(&self, what: String) {
        let mut first = self.first.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if first.is_none() {
            *first = Some(what);
        }
        self.set.store(true, Ordering::SeqCst);
    }

    /// Records a panic caught on the current thread, with where it happened.
    pub fn record_panic(&self, payload: &(dyn Any + Send)) {
        let thread = std::thread::current().name().unwrap_or("a load thread").to_owned();
        self.record(describe(&thread, payload, LAST_PANIC.with(|l| l.borrow_mut().take())));
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Relaxed)
    }

    /// The first fault's description.
    pub fn take(&self) -> Option<String> {
        self.first.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

thread_local! {
    /// `file:line:col` of the last panic on this thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) the hook that remembers where each panic
/// happened; the previous hook still runs, so the panic is printed as usual.
pub fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                let at = format!("{}:{}:{}", l.file(), l.line(), l.column());
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(at));
            }
            previous(info);
        }));
    });
}

/// `the load worker sb-load-0 panicked at src/x.rs:1:2: attempt to add with overflow`.
pub fn describe(thread: &str, payload: &(dyn Any + Send), at: Option<String>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    let at = at.map(|a| format!(" at {a}")).unwrap_or_default();
    format!(
        "the load engine failed: {thread} panicked{at}: {message} (a bug in stackbench; please report it)"
    )
}

/// The environment variable of the engine's one failpoint, for the tests that prove a
/// failure inside a worker is reported as one: `STACKBENCH_FAILPOINT=worker-panic:N` makes
/// each worker panic in its N-th request, `worker-spin:N` makes it spin there, answering
/// nothing (a stuck worker), for a minute. Read once per run.
pub const FAILPOINT: &str = "STACKBENCH_FAILPOINT";

/// What the failpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    Panic,
    Spin,
}

/// The failpoint asked for, and in which request of each worker.
pub fn failpoint() -> Option<(Failpoint, u64)> {
    let v = std::env::var(FAILPOINT).ok()?;
    let (what, n) = v.split_once(':')?;
    let what = match what {
        "worker-panic" => Failpoint::Panic,
        "worker-spin" => Failpoint::Spin,
        _ => return None,
    };
    Some((what, n.parse().ok()?))
}

/// Does what the failpoint asks, now (a panic is placed at the caller, in the worker).
#[cold]
#[track_caller]
pub fn trip(what: Failpoint) {
    match what {
        Failpoint::Panic => panic!("{FAILPOINT}: the panic asked for"),
        Failpoint::Spin => {
            let until = std::time::Instant::now() + std::time::Duration::from_mins(1);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    }
}

/// `fut`, with a panic turned into a recorded fault through `on_panic`. Built of
/// combinators, not an `async fn`: an `async fn` would move `fut` into its own
/// state on the first poll, a copy of the whole future for every request.
pub fn guard<F: Future<Output = ()>>(
    fut: F,
    on_panic: impl FnOnce(&(dyn Any + Send)),
) -> impl Future<Output = ()> {
    AssertUnwindSafe(fut).catch_unwind().map(|outcome| {
        if let Err(payload) = outcome {
            on_panic(&*payload);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_fault_is_kept() {
        let f = Fault::default();
        assert!(!f.is_set());
        f.record("one".into());
        f.record("two".into());
        assert!(f.is_set());
        assert_eq!(f.take().as_deref(), Some("one"));
    }

    #[test]
    fn a_panic_is_described_with_its_place() {
        install_hook();
        let f = Fault::default();
        let payload = std::thread::Builder::new()
            .name("sb-load-7".into())
            .spawn(move || {
                let r = std::panic::catch_unwind(|| panic!("size {} overflows", 3));
                f.record_panic(&*r.unwrap_err());
                f.take().unwrap()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(payload.starts_with("the load engine failed: sb-load-7 panicked at "), "{payload}");
        assert!(payload.contains("fault.rs:") && payload.contains(": size 3 overflows"), "{payload}");
    }

    #[test]
    fn guard_catches_a_task_panic() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let caught = std::cell::Cell::new(None);
        rt.block_on(guard(async { panic!("boom") }, |p| caught.set(p.downcast_ref::<&str>().copied())));
        assert_eq!(caught.get(), Some("boom"));
        let ran = std::cell::Cell::new(false);
        rt.block_on(guard(async { ran.set(true) }, |_| unreachable!()));
        assert!(ran.get());
    }
}
