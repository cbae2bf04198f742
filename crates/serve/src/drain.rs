//! Graceful drain for the accept loop of [`crate::server::serve_http`]: when
//! the stop signal comes, every live connection is told to finish its request
//! in flight and close, and the server waits until they have.
//!
//! hyper-util's `GracefulShutdown` does the same by polling a tokio `watch`
//! receiver beside the connection at every poll, about 175 instructions per
//! request in `sb-dummy --stack hyper` (callgrind, `bench/event-log/
//! instructions.py`), 1.7% of its user-space work. Here a connection reads one
//! atomic flag per poll instead; its task's waker is kept (once, on its first
//! poll) so the drain can wake a connection that is idle.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;

use tokio::sync::Notify;

/// A connection that can be asked to finish what it is doing and close.
pub trait Drainable: Future {
    /// Starts the connection's own graceful close (hyper: answer the request
    /// in flight, then close; an idle keep-alive connection closes at once).
    fn begin_drain(self: Pin<&mut Self>);
}

impl<C: hyper_util::server::graceful::GracefulConnection> Drainable for C {
    fn begin_drain(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// The live connections of one server and whether it is draining.
#[derive(Clone, Default)]
pub struct Drain {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Set once, under the `live` lock, when the drain begins; read without
    /// the lock at every poll of every connection.
    draining: AtomicBool,
    live: Mutex<Live>,
    /// Told when the last connection ends during the drain.
    emptied: Notify,
}

#[derive(Default)]
struct Live {
    next_id: u64,
    /// Each live connection's task waker, once it has been polled.
    wakers: HashMap<u64, Option<Waker>>,
}

impl Shared {
    fn live(&self) -> MutexGuard<'_, Live> {
        // A panic while holding this lock leaves the map consistent.
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drain {
    pub fn new() -> Drain {
        Drain::default()
    }

    /// `conn`, served until it ends, closing gracefully once the drain begins.
    /// The connection counts as live from this call, before its first poll.
    pub fn watch<C: Drainable>(&self, conn: C) -> impl Future<Output = C::Output> + use<C> {
        let id = {
            let mut live = self.shared.live();
            let id = live.next_id;
            live.next_id += 1;
            live.wakers.insert(id, None);
            id
        };
        let guard = Registered { shared: self.shared.clone(), id };
        async move {
            let mut conn = pin!(conn);
            let (mut registered, mut told) = (false, false);
            poll_fn(|cx| {
                if !registered {
                    // The task's own waker (this future is the task), the same
                    // at every poll: kept once. Under the lock, so a drain that
                    // begins now either sees the waker or is seen here.
                    registered = true;
                    let mut live = guard.shared.live();
                    live.wakers.insert(guard.id, Some(cx.waker().clone()));
                    told = guard.shared.draining.load(Ordering::Relaxed);
                    drop(live);
                    if told {
                        conn.as_mut().begin_drain();
                    }
                } else if !told && guard.shared.draining.load(Ordering::Acquire) {
                    told = true;
                    conn.as_mut().begin_drain();
                }
                conn.as_mut().poll(cx)
            })
            .await
        }
    }

    /// Begins the drain (every live connection is told and woken) and waits
    /// until the last one has ended. Connections watched after this are told
    /// at their first poll.
    pub async fn drain(&self) {
        let wakers: Vec<Waker> = {
            let mut live = self.shared.live();
            self.shared.draining.store(true, Ordering::Release);
            live.wakers.values_mut().filter_map(Option::take).collect()
        };
        wakers.into_iter().for_each(Waker::wake);
        loop {
            // `notify_one` keeps a permit when nobody waits yet: no end is missed.
            let emptied = self.shared.emptied.notified();
            if self.shared.live().wakers.is_empty() {
                return;
            }
            emptied.await;
        }
    }

    /// Connections not yet ended.
    #[cfg(test)]
    fn live(&self) -> usize {
        self.shared.live().wakers.len()
    }
}

/// A connection's place among the live ones, given up when it ends (or its
/// task is dropped).
struct Registered {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut live = self.shared.live();
        live.wakers.remove(&self.id);
        if live.wakers.is_empty() && self.shared.draining.load(Ordering::Relaxed) {
            self.shared.emptied.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Context, Poll};
    use std::time::Duration;

    /// A connection that idles until told to drain, then needs `polls_left`
    /// more polls (waking itself) to finish. Counts its polls.
    struct Fake {
        told: bool,
        polls_left: u32,
        polls: Arc<AtomicUsize>,
    }

    impl Future for Fake {
        type Output = u32;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if !self.told {
                return Poll::Pending;
            }
            if self.polls_left == 0 {
                return Poll::Ready(7);
            }
            self.polls_left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    impl Drainable for Fake {
        fn begin_drain(mut self: Pin<&mut Self>) {
            assert!(!self.told, "told twice");
            self.told = true;
        }
    }

    fn fake(polls_left: u32) -> (Fake, Arc<AtomicUsize>) {
        let polls = Arc::new(AtomicUsize::new(0));
        (Fake { told: false, polls_left, polls: polls.clone() }, polls)
    }

    #[tokio::test]
    async fn idle_connections_are_woken_told_and_waited_for() {
        let drain = Drain::new();
        let mut tasks = Vec::new();
        let mut counters = Vec::new();
        for left in [0, 3, 10] {
            let (conn, polls) = fake(left);
            tasks.push(tokio::spawn(drain.watch(conn)));
            counters.push(polls);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(drain.live(), 3);
        // Idle: polled once each, not again.
        assert!(counters.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        tokio::time::timeout(Duration::from_secs(5), drain.drain()).await.expect("the drain ends");
        assert_eq!(drain.live(), 0);
        for t in tasks {
            assert_eq!(t.await.unwrap(), 7);
        }
    }

    #[tokio::test]
    async fn a_connection_watched_during_the_drain_is_told_at_its_first_poll() {
        let drain = Drain::new();
        tokio::time::timeout(Duration::from_secs(5), drain.drain()).await.expect("nothing to wait for");
        let (conn, polls) = fake(2);
        let task = tokio::spawn(drain.watch(conn));
        assert_eq!(task.await.unwrap(), 7);
        assert_eq!(polls.load(Ordering::Relaxed), 3);
        assert_eq!(drain.live(), 0);
    }

    #[tokio::test]
    async fn the_drain_waits_for_a_connection_that_has_not_been_polled_yet() {
        let drain = Drain::new();
        let (conn, _) = fake(1);
        let watched = drain.watch(conn);
        let waiting = tokio::spawn({
            let drain = drain.clone();
            async move { drain.drain().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "a live connection was not waited for");
        assert_eq!(watched.await, 7);
        tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the drain ends").unwrap();
    }
}
