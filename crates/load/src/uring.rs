//! io_uring for the load engine's sockets (`--io io_uring`): one ring per
//! worker thread, driven from the worker's tokio runtime, so every schedule and
//! transport runs on it unchanged (`--io epoll`, the default, is tokio's
//! readiness path).
//!
//! With epoll a keep-alive request costs a `send` and a `recv`, each a syscall.
//! Here a request is one submission entry (its send); each connection's receive
//! is armed once and stays in the kernel (a multishot receive into the ring's
//! provided buffers, [`Receiver`]). Everything the worker's connections queued
//! since the last round goes to the kernel in one `io_uring_enter`; answers
//! come back as completions, read from shared memory. The kernel signals an
//! eventfd registered with the ring when completions wait; the eventfd is on
//! tokio's reactor, so the worker sleeps in the same `epoll_wait` as its timers.
//!
//! Measured on Linux 6.18 (docs/benchmarks.md): no cheaper per request than
//! epoll. Syscalls drop from two per request to one per round, but the TCP
//! work in the kernel, most of a request's cost on loopback, is the same.
//!
//! Buffers are owned by the operation while the kernel may touch them: a send
//! holds its bytes until its completion; an operation whose future is dropped
//! (a timeout) keeps its buffer until the kernel says it is done with it, after
//! an asynchronous cancel. Dropping the ring cancels what is left and waits for
//! the kernel (bounded), leaking rather than freeing a buffer the kernel could
//! still write.

#![allow(unsafe_code)] // the kernel reads and writes the buffers of queued entries: each `unsafe` says why that is sound

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use tokio::io::unix::AsyncFd;

mod multishot;
pub use multishot::Receiver;

/// Submission queue entries (the completion queue has twice as many).
const ENTRIES: u32 = 1024;
/// `user_data` of the cancels, whose completions carry nothing to deliver.
const CANCEL: u64 = u64::MAX;

/// What an operation holds while the kernel may use it.
pub enum Held {
    Vec(Vec<u8>),
    Bytes(Bytes),
}

enum State {
    /// In the kernel; the waker of the task that waits for it.
    Pending(Option<Waker>),
    Done(i32),
    /// Its future was dropped: freed (with its buffer) when the kernel completes it.
    Orphan,
    /// A connection's multishot receive ([`Receiver`]).
    Multi(Box<multishot::Multi>),
}

impl State {
    /// The kernel may still complete it (and touch what it holds).
    fn in_kernel(&self) -> bool {
        match self {
            State::Done(_) => false,
            State::Multi(m) => m.armed(),
            State::Pending(_) | State::Orphan => true,
        }
    }
}

struct Op {
    state: State,
    held: Option<Held>,
}

/// The eventfd the kernel signals when a completion waits (registered with the
/// ring), for tokio's reactor. It is never read: each signal is a new edge for
/// epoll, and the counter cannot come near its limit.
struct EventFd(std::os::fd::OwnedFd);

impl EventFd {
    fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        Ok(EventFd(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) }))
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// `IORING_ENTER_GETEVENTS`: run the completions' deferred work and post them.
const ENTER_GETEVENTS: u32 = 1;

/// One worker's ring.
pub struct Ring {
    /// The ring's eventfd, on tokio's reactor.
    fd: AsyncFd<EventFd>,
    queues: RefCell<IoUring>,
    /// The provided buffers of the connections' multishot receives.
    bufs: multishot::BufRing,
    ops: RefCell<Vec<Option<Op>>>,
    free: RefCell<Vec<usize>>,
    /// Entries queued since the last submit.
    queued: Cell<bool>,
    /// The eventfd fired: completions wait for an enter to post them.
    kicked: Cell<bool>,
    /// The reactor task, woken to submit.
    reactor: RefCell<Option<Waker>>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring").field("eventfd", &self.fd.get_ref().as_raw_fd()).finish_non_exhaustive()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Ring>>> = const { RefCell::new(None) };
}

/// The ring of this worker thread, if it runs on io_uring: new connections use it.
pub fn current() -> Option<Rc<Ring>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Makes `ring` this thread's [`current`] one until the guard is dropped.
#[must_use]
pub fn enter(ring: Rc<Ring>) -> Entered {
    CURRENT.with(|c| *c.borrow_mut() = Some(ring));
    Entered(())
}

/// See [`enter`].
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// Can this process use io_uring for sockets? (A ring can be made, and the
/// kernel has the send and cancel operations and multishot receives into
/// provided buffers: Linux 6.0 and later, and not disabled by
/// `kernel.io_uring_disabled` or a seccomp filter.)
pub fn available() -> Result<(), String> {
    let mut ring = IoUring::<squeue::Entry>::builder()
        .setup_clamp()
        .build(ENTRIES)
        .map_err(|e| format!("no io_uring ({e})"))?;
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe).map_err(|e| format!("cannot probe io_uring ({e})"))?;
    for (code, name) in
        [(opcode::Send::CODE, "send"), (opcode::Recv::CODE, "recv"), (opcode::AsyncCancel::CODE, "cancel")]
    {
        if !probe.is_supported(code) {
            return Err(format!("this kernel's io_uring has no {name} operation"));
        }
    }
    multishot::check(&mut ring).map_err(|e| {
        format!(
            "this kernel's io_uring has no multishot receive into provided buffers (Linux 6.0 and later): {e}"
        )
    })
}

impl Ring {
    /// A ring registered with the current tokio runtime (call inside it), and its reactor task
    /// (spawned on the current `LocalSet`).
    ///
    /// Cooperative task running (Linux 5.19): the kernel does a completion's work when this
    /// thread next enters it instead of interrupting it for each one; without it the
    /// interruptions cost more system time than the syscalls saved. Older kernels get a plain
    /// ring.
    pub fn start() -> io::Result<Rc<Ring>> {
        let ring = IoUring::<squeue::Entry>::builder()
            .setup_clamp()
            .setup_coop_taskrun()
            .setup_taskrun_flag()
            .build(ENTRIES)
            .or_else(|_| IoUring::<squeue::Entry>::builder().setup_clamp().build(ENTRIES))?;
        let efd = EventFd::new()?;
        ring.submitter().register_eventfd(efd.as_raw_fd())?;
        // SAFETY: the AsyncFd owns the EventFd, which owns the descriptor and closes it only
        // when dropped, after deregistration.
        let fd = unsafe { AsyncFd::register_with_interest(efd, tokio::io::Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        let bufs = multishot::BufRing::new(&ring)?;
        let ring = Rc::new(Ring {
            fd,
            queues: RefCell::new(ring),
            bufs,
            ops: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            queued: Cell::new(false),
            kicked: Cell::new(false),
            reactor: RefCell::new(None),
        });
        let weak = Rc::downgrade(&ring);
        tokio::task::spawn_local(std::future::poll_fn(move |cx| match weak.upgrade() {
            Some(ring) => ring.poll_reactor(cx),
            None => Poll::Ready(()),
        }));
        Ok(ring)
    }

    /// Queues `entry` for the operation `held` and returns its future. The entry
    /// goes to the kernel when the reactor next runs: after the tasks that are
    /// ready now, so their entries go together.
    fn submit(self: &Rc<Self>, entry: squeue::Entry, held: Option<Held>) -> OpFuture {
        let id = self.slot(held);
        self.push(&entry.user_data(id as u64));
        OpFuture { ring: Rc::clone(self), id, done: false }
    }

    fn slot(&self, held: Option<Held>) -> usize {
        self.slot_with(State::Pending(None), held)
    }

    fn slot_with(&self, state: State, held: Option<Held>) -> usize {
        let op = Op { state, held };
        let mut ops = self.ops.borrow_mut();
        if let Some(id) = self.free.borrow_mut().pop() {
            ops[id] = Some(op);
            id
        } else {
            ops.push(Some(op));
            ops.len() - 1
        }
    }

    fn push(&self, entry: &squeue::Entry) {
        let mut ring = self.queues.borrow_mut();
        // SAFETY: every buffer an entry points at is owned by its operation (or by the
        // caller's future, which stays pinned until the completion) until the kernel is done.
        while unsafe { ring.submission().push(entry) }.is_err() {
            // Full: hand what is queued to the kernel now.
            if ring.submit().is_err() {
                std::thread::yield_now();
            }
        }
        drop(ring);
        if !self.queued.replace(true)
            && let Some(w) = self.reactor.borrow().as_ref()
        {
            w.wake_by_ref();
        }
    }

    /// The reactor: submits what was queued, delivers completions, sleeps on the ring's fd.
    fn poll_reactor(&self, cx: &mut Context<'_>) -> Poll<()> {
        {
            let mut r = self.reactor.borrow_mut();
            if !r.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *r = Some(cx.waker().clone());
            }
        }
        loop {
            let queued = self.queued.replace(false);
            if (queued | self.kicked.replace(false)) && self.enter().is_err() {
                // EBUSY/EAGAIN: the completion queue is full; reaping below makes room.
                self.queued.set(queued);
                self.kicked.set(true);
            }
            self.reap();
            match self.fd.poll_read_ready(cx) {
                // Completions wait: enter, reap, and look again (more may come meanwhile).
                Poll::Ready(Ok(mut guard)) => {
                    guard.clear_ready();
                    self.kicked.set(true);
                }
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => {
                    if !self.queued.get() && self.queues.borrow_mut().completion().is_empty() {
                        return Poll::Pending;
                    }
                }
            }
        }
    }

    /// Submits what is queued and has the kernel post what has completed, without waiting.
    fn enter(&self) -> io::Result<usize> {
        let ring = self.queues.borrow();
        // SAFETY: no argument pointer is passed; the kernel submits at most the entries queued.
        unsafe { ring.submitter().enter::<libc::sigset_t>(ENTRIES * 2, 0, ENTER_GETEVENTS, None) }
    }

    /// Delivers every completion waiting; returns how many there were.
    fn reap(&self) -> usize {
        let mut ring = self.queues.borrow_mut();
        let mut ops = self.ops.borrow_mut();
        let mut n = 0;
        for cqe in ring.completion() {
            n += 1;
            let id = cqe.user_data();
            if id == CANCEL {
                continue;
            }
            let id = id as usize;
            let Some(op) = ops.get_mut(id).and_then(Option::as_mut) else { continue };
            if let State::Multi(m) = &mut op.state {
                if m.complete(cqe.result(), cqe.flags(), &self.bufs) {
                    ops[id] = None;
                    self.free.borrow_mut().push(id);
                }
                continue;
            }
            match std::mem::replace(&mut op.state, State::Done(cqe.result())) {
                State::Pending(waker) => {
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
                State::Orphan => {
                    ops[id] = None;
                    self.free.borrow_mut().push(id);
                }
                State::Done(_) | State::Multi(_) => {}
            }
        }
        n
    }

    fn poll_op(&self, id: usize, cx: &mut Context<'_>) -> Poll<(io::Result<u32>, Option<Held>)> {
        let mut ops = self.ops.borrow_mut();
        let op = ops[id].as_mut().expect("a live operation");
        match &mut op.state {
            State::Done(res) => {
                let res = *res;
                let held = op.held.take();
                ops[id] = None;
                self.free.borrow_mut().push(id);
                let result = if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as u32) };
                Poll::Ready((result, held))
            }
            State::Pending(w) => {
                if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *w = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            State::Orphan => unreachable!("an orphan has no future"),
            State::Multi(_) => unreachable!("a multishot receive is polled by its Receiver"),
        }
    }

    /// The future of `id` was dropped before its completion.
    fn orphan(&self, id: usize) {
        let mut ops = self.ops.borrow_mut();
        let Some(op) = ops[id].as_mut() else { return };
        if matches!(op.state, State::Done(_)) {
            ops[id] = None;
            self.free.borrow_mut().push(id);
        } else {
            op.state = State::Orphan;
            drop(ops);
            self.push(&opcode::AsyncCancel::new(id as u64).build().user_data(CANCEL));
        }
    }

    /// Sends all of `data` on `fd` (`MSG_WAITALL`: the kernel sends the rest of a
    /// short write itself).
    pub fn send(self: &Rc<Self>, fd: RawFd, data: Held) -> OpFuture {
        let (ptr, len) = match &data {
            Held::Vec(v) => (v.as_ptr(), v.len()),
            Held::Bytes(b) => (b.as_ptr(), b.len()),
        };
        let entry = opcode::Send::new(types::Fd(fd), ptr, len as u32)
            .flags(libc::MSG_WAITALL | libc::MSG_NOSIGNAL)
            .build();
        self.submit(entry, Some(data))
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Cancel what is in the kernel, and wait (bounded) until it has let go of every buffer.
        let ring = self.queues.get_mut();
        let ops = self.ops.get_mut();
        let live: Vec<u64> = (0..ops.len())
            .filter(|&i| ops[i].as_ref().is_some_and(|o| o.state.in_kernel()))
            .map(|i| i as u64)
            .collect();
        for id in &live {
            let e = opcode::AsyncCancel::new(*id).build().user_data(CANCEL);
            // SAFETY: a cancel points at no memory.
            while unsafe { ring.submission().push(&e) }.is_err() {
                if ring.submit().is_err() {
                    break;
                }
            }
        }
        let mut left = live.len();
        let deadline = Instant::now() + Duration::from_secs(1);
        while left > 0 && Instant::now() < deadline {
            let _ = ring.submit_and_wait(1);
            for cqe in ring.completion() {
                let id = cqe.user_data();
                // A multishot receive's last completion is the one without "more".
                if id != CANCEL
                    && !cqueue::more(cqe.flags())
                    && ops.get(id as usize).is_some_and(Option::is_some)
                {
                    ops[id as usize] = None;
                    left -= 1;
                }
            }
        }
        // Whatever the kernel still holds is leaked, never freed under it.
        for op in ops.drain(..).flatten() {
            if op.state.in_kernel() {
                std::mem::forget(op);
            }
        }
        if left == 0 {
            self.bufs.release(ring);
        }
    }
}

/// A queued operation; resolves to its result and what it held.
pub struct OpFuture {
    ring: Rc<Ring>,
    id: usize,
    done: bool,
}

impl Future for OpFuture {
    type Output = (io::Result<u32>, Option<Held>);
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let out = self.ring.poll_op(self.id, cx);
        if out.is_ready() {
            self.done = true;
        }
        out
    }
}

impl OpFuture {
    /// Its result if the kernel has completed it, without waiting (or being woken) for it.
    pub fn try_result(&mut self) -> Option<io::Result<u32>> {
        if self.done {
            return None;
        }
        let finished = matches!(self.ring.ops.borrow()[self.id], Some(Op { state: State::Done(_), .. }));
        if !finished {
            return None;
        }
        let waker = std::task::Waker::noop();
        match Pin::new(self).poll(&mut Context::from_waker(waker)) {
            Poll::Ready((res, _)) => Some(res),
            Poll::Pending => None,
        }
    }
}

impl Drop for OpFuture {
    fn drop(&mut self) {
        if !self.done {
            self.ring.orphan(self.id);
        }
    }
}

#[cfg(test)]
mod tests;
