//! Multishot receives into provided buffers (Linux 6.0 and later): a
//! connection arms one receive that stays in the kernel for the life of the
//! connection, instead of a new one after every answer. Each time data arrives
//! the kernel takes a buffer from the ring's pool, fills it and posts a
//! completion naming it; the connection copies from it into its own buffer
//! and gives it back to the pool.
//!
//! What a connection may hold is bounded by the pool, as a plain receive is
//! by the socket: when the pool is empty the kernel ends the receive
//! (`ENOBUFS`), the data waits in the socket, and the connection arms a new
//! receive once it has taken what it holds.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::task::{Context, Poll, Waker};

use io_uring::{IoUring, cqueue, opcode, types};

use super::{Op, Ring, State};

/// Buffers in a ring's pool (a power of two) and the size of each: 1 MiB in all.
const BUFS: u16 = 256;
const BUF_SIZE: u32 = 4096;
/// The pool's buffer group.
const GROUP: u16 = 0;
/// Where the buffers start in the mapping, after the ring of their descriptions
/// (16 bytes each), on a page boundary.
const BUFFERS_AT: usize = (BUFS as usize * 16).next_multiple_of(4096);
const MAP_LEN: usize = BUFFERS_AT + BUFS as usize * BUF_SIZE as usize;

/// The provided buffers, registered with one ring: the descriptions the kernel
/// takes from (a ring of their own whose tail we advance), then the buffers,
/// in one anonymous mapping.
pub(super) struct BufRing {
    base: *mut u8,
    /// Descriptions written so far (wrapping); the kernel takes up to here.
    tail: Cell<u16>,
    /// Buffers the kernel filled and handed over, not yet given back.
    pub(super) held: Cell<u16>,
    /// Receivers waiting for the pool to have a buffer again.
    starved: RefCell<Vec<Waker>>,
}

impl BufRing {
    /// Maps and registers the pool with `ring`, every buffer in it.
    pub(super) fn new(ring: &IoUring) -> io::Result<BufRing> {
        // SAFETY: an anonymous private mapping takes no pointer of ours; MAP_FAILED is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MAP_LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let pool = BufRing {
            base: base.cast(),
            tail: Cell::new(0),
            held: Cell::new(0),
            starved: RefCell::default(),
        };
        // SAFETY: the descriptions are at the start of a page-aligned mapping that lives until
        // `release` unregisters it (or is leaked with the ring, never unmapped under the kernel).
        let registered =
            unsafe { ring.submitter().register_buf_ring_with_flags(base as u64, BUFS, GROUP, 0) };
        if let Err(e) = registered {
            // SAFETY: the kernel never saw the mapping.
            unsafe { libc::munmap(base, MAP_LEN) };
            return Err(e);
        }
        for bid in 0..BUFS {
            pool.provide(bid);
        }
        Ok(pool)
    }

    /// The buffer `bid`.
    fn buffer(&self, bid: u16) -> *mut u8 {
        debug_assert!(bid < BUFS);
        // SAFETY: `bid < BUFS`, so the offset is inside the mapping.
        unsafe { self.base.add(BUFFERS_AT + bid as usize * BUF_SIZE as usize) }
    }

    /// A completion handed buffer `bid` over.
    fn took(&self) {
        self.held.set(self.held.get() + 1);
    }

    /// Returns buffer `bid` to the pool: the kernel may fill it again.
    fn give_back(&self, bid: u16) {
        self.held.set(self.held.get() - 1);
        self.provide(bid);
        if self.held.get() == BUFS - 1 {
            for w in self.starved.borrow_mut().drain(..) {
                w.wake();
            }
        }
    }

    /// Puts buffer `bid` in the ring of descriptions.
    fn provide(&self, bid: u16) {
        let tail = self.tail.get();
        #[allow(clippy::cast_ptr_alignment)] // the mapping starts on a page boundary
        let entries = self.base.cast::<types::BufRingEntry>();
        // SAFETY: the slot is inside the mapping's first page(s); the kernel reads slots only
        // below the published tail, and this one is past it until the store below.
        unsafe {
            let e = &mut *entries.add((tail & (BUFS - 1)) as usize);
            e.set_addr(self.buffer(bid) as u64);
            e.set_len(BUF_SIZE);
            e.set_bid(bid);
        }
        self.tail.set(tail.wrapping_add(1));
        // SAFETY: the tail field overlays the first description's reserved field, a u16 the
        // kernel reads with acquire ordering; the description is written before it moves.
        unsafe {
            let at = types::BufRingEntry::tail(entries).cast_mut();
            AtomicU16::from_ptr(at).store(tail.wrapping_add(1), Ordering::Release);
        }
    }

    /// Unregisters and unmaps the pool: call only when no receive of the ring's is left.
    pub(super) fn release(&self, ring: &IoUring) {
        if ring.submitter().unregister_buf_ring(GROUP).is_ok() {
            // SAFETY: unregistered, with no receive left that took a buffer: nothing refers to it.
            unsafe { libc::munmap(self.base.cast(), MAP_LEN) };
        }
    }
}

/// A buffer the kernel filled for a connection.
struct Chunk {
    bid: u16,
    len: u32,
}

/// The state of a connection's multishot receive, in the ring's table.
#[derive(Default)]
pub(super) struct Multi {
    /// Filled buffers, in order.
    chunks: VecDeque<Chunk>,
    /// Bytes of the first chunk already taken.
    taken: u32,
    /// The stream ended: 0 (the peer closed) or an error; after the chunks before it.
    end: Option<i32>,
    /// A receive is in the kernel.
    armed: bool,
    /// One was armed before.
    was_armed: bool,
    /// Its connection is gone: free the slot when the kernel lets go.
    orphan: bool,
    waker: Option<Waker>,
    /// Receives armed again after the pool ran dry.
    rearms: u32,
}

impl Multi {
    /// A completion of this receive; `true` when its connection is gone and the kernel is
    /// done with it, so the slot can be freed.
    pub(super) fn complete(&mut self, res: i32, flags: u32, pool: &BufRing) -> bool {
        let buffer = cqueue::buffer_select(flags);
        if buffer.is_some() {
            pool.took();
        }
        if res > 0
            && let Some(bid) = buffer
            && !self.orphan
        {
            self.chunks.push_back(Chunk { bid, len: res as u32 });
        } else {
            if let Some(bid) = buffer {
                pool.give_back(bid);
            }
            if res <= 0 && res != -libc::ENOBUFS && !self.orphan && self.end.is_none() {
                self.end = Some(res);
            }
        }
        if !cqueue::more(flags) {
            self.armed = false;
        }
        if self.orphan {
            return !self.armed;
        }
        if let Some(w) = self.waker.take() {
            w.wake();
        }
        false
    }

    /// The connection is gone: its buffers go back; `true` when the kernel holds nothing of it.
    fn orphan(&mut self, pool: &BufRing) -> bool {
        self.orphan = true;
        for c in self.chunks.drain(..) {
            pool.give_back(c.bid);
        }
        !self.armed
    }

    /// Whether a receive is still in the kernel (for the ring's cancel on drop).
    pub(super) fn armed(&self) -> bool {
        self.armed
    }
}

/// A connection's receive on io_uring: armed once, and again only when the
/// pool ran dry. Dropping it cancels the receive.
pub struct Receiver {
    ring: Rc<Ring>,
    fd: RawFd,
    id: usize,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").field("fd", &self.fd).finish_non_exhaustive()
    }
}

impl Receiver {
    /// The receive of socket `fd` (armed at the first [`Receiver::poll_recv`]).
    pub fn new(ring: &Rc<Ring>, fd: RawFd) -> Receiver {
        let id = ring.slot_with(State::Multi(Box::default()), None);
        Receiver { ring: Rc::clone(ring), fd, id }
    }

    /// Appends what has arrived to `buf`, as much as its spare capacity takes (4 KiB are
    /// reserved when it has none): `Ok(0)` when the peer closed.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>, buf: &mut Vec<u8>) -> Poll<io::Result<usize>> {
        let mut ops = self.ring.ops.borrow_mut();
        let Some(Op { state: State::Multi(m), .. }) = ops[self.id].as_mut() else {
            unreachable!("a receiver's slot holds its receive")
        };
        if !m.chunks.is_empty() {
            if buf.capacity() == buf.len() {
                buf.reserve(BUF_SIZE as usize);
            }
            let pool = &self.ring.bufs;
            let mut n = 0;
            while let Some(c) = m.chunks.front() {
                let room = buf.capacity() - buf.len();
                if room == 0 {
                    break;
                }
                let take = room.min((c.len - m.taken) as usize);
                // SAFETY: the kernel filled `c.len` bytes of buffer `c.bid` and posted its
                // completion; the buffer is ours until given back below.
                let filled =
                    unsafe { std::slice::from_raw_parts(pool.buffer(c.bid).add(m.taken as usize), take) };
                buf.extend_from_slice(filled);
                n += take;
                m.taken += take as u32;
                if m.taken == c.len {
                    pool.give_back(c.bid);
                    m.chunks.pop_front();
                    m.taken = 0;
                }
            }
            return Poll::Ready(Ok(n));
        }
        if let Some(res) = m.end {
            return Poll::Ready(if res == 0 { Ok(0) } else { Err(io::Error::from_raw_os_error(-res)) });
        }
        if !m.armed {
            if self.ring.bufs.held.get() == BUFS {
                // Every buffer is another connection's: wait for one to come back.
                self.ring.bufs.starved.borrow_mut().push(cx.waker().clone());
                return Poll::Pending;
            }
            if m.was_armed {
                // It ended (the pool ran dry) and what it held is taken now.
                m.rearms += 1;
            }
            m.armed = true;
            m.was_armed = true;
            drop(ops);
            let entry = opcode::RecvMulti::new(types::Fd(self.fd), GROUP).build().user_data(self.id as u64);
            self.ring.push(&entry);
            ops = self.ring.ops.borrow_mut();
        }
        let Some(Op { state: State::Multi(m), .. }) = ops[self.id].as_mut() else { unreachable!() };
        if !m.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            m.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// [`Receiver::poll_recv`] as a future.
    pub async fn recv(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_recv(cx, buf)).await
    }

    /// How many times the receive was armed again after the pool ran dry.
    #[cfg(test)]
    pub(crate) fn rearms(&self) -> u32 {
        match self.ring.ops.borrow()[self.id].as_ref() {
            Some(Op { state: State::Multi(m), .. }) => m.rearms,
            _ => 0,
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let mut ops = self.ring.ops.borrow_mut();
        let Some(Op { state: State::Multi(m), .. }) = ops[self.id].as_mut() else { return };
        if m.orphan(&self.ring.bufs) {
            ops[self.id] = None;
            self.ring.free.borrow_mut().push(self.id);
        } else {
            drop(ops);
            let cancel = opcode::AsyncCancel::new(self.id as u64).build().user_data(super::CANCEL);
            self.ring.push(&cancel);
        }
    }
}

/// Whether `ring`'s kernel takes a multishot receive into provided buffers: one is
/// armed on a socket pair, given a byte, then cancelled.
pub(super) fn check(ring: &mut IoUring) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    let pool = BufRing::new(ring)?;
    let (a, mut b) = std::os::unix::net::UnixStream::pair()?;
    b.write_all(b"x")?;
    let armed = opcode::RecvMulti::new(types::Fd(a.as_raw_fd()), GROUP).build().user_data(1);
    let cancel = opcode::AsyncCancel::new(1).build().user_data(2);
    // SAFETY: the receive writes only into the pool, which outlives it (released below only
    // once the kernel said the receive ended; otherwise leaked); the cancel points at nothing.
    unsafe {
        let mut sq = ring.submission();
        sq.push(&armed).and_then(|()| sq.push(&cancel)).map_err(|_| io::Error::other("queue full"))?;
    }
    let mut got = None;
    for _ in 0..8 {
        ring.submit_and_wait(1)?;
        let done: Vec<(u64, i32, u32)> =
            ring.completion().map(|c| (c.user_data(), c.result(), c.flags())).collect();
        for (id, res, flags) in done {
            if id != 1 {
                continue;
            }
            if got.is_none() {
                got = Some((res, cqueue::buffer_select(flags).is_some()));
            }
            if !cqueue::more(flags) {
                pool.release(ring);
                return match got {
                    Some((1, true)) => Ok(()),
                    Some((res, _)) if res < 0 => Err(io::Error::from_raw_os_error(-res)),
                    other => Err(io::Error::other(format!("unexpected completion {other:?}"))),
                };
            }
        }
    }
    Err(io::Error::other("the receive did not end when cancelled"))
}
