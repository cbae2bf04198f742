//! A lane's claims on a connection's stream slots: the [`Permit`] it holds
//! while it waits for a free slot, and the [`StreamGuard`] that cancels its
//! stream (RST_STREAM) when the lane stops waiting for the answer.

use std::task::{Context, Poll};

use super::{Conn, Fail, LAST_ID, Phase, frame};
use stackbench_record::ErrorKind;

/// A claim on a stream slot while waiting for one; dropping it while waiting
/// passes a wake-up on, so no free slot is lost to a lane that gave up.
pub(super) struct Permit<'a> {
    pub(super) conn: &'a Conn,
    pub(super) waiting: bool,
}

impl Permit<'_> {
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Fail>> {
        let mut st = self.conn.st.borrow_mut();
        if let Some(kind) = st.closed {
            // Nothing was sent: the request may go on a new connection.
            return Poll::Ready(Err(Fail { kind, unprocessed: true }));
        }
        if st.goaway || st.next_id >= LAST_ID {
            return Poll::Ready(Err(Fail { kind: ErrorKind::Reset, unprocessed: true }));
        }
        if st.active < st.max_streams {
            st.active += 1;
            if self.waiting && st.active < st.max_streams {
                st.wake_waiter();
            }
            self.waiting = false;
            return Poll::Ready(Ok(()));
        }
        st.waiting.push_back(cx.waker().clone());
        self.waiting = true;
        Poll::Pending
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.waiting {
            let mut st = self.conn.st.borrow_mut();
            if st.active < st.max_streams {
                st.wake_waiter();
            }
        }
    }
}

/// Cancels a stream whose lane stopped waiting (a timeout).
pub(super) struct StreamGuard<'a> {
    pub(super) conn: &'a Conn,
    pub(super) index: usize,
    pub(super) armed: bool,
}

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let mut st = self.conn.st.borrow_mut();
            let s = &st.streams[self.index];
            if s.phase == Phase::Open && st.closed.is_none() {
                let id = s.id;
                frame::put_rst_stream(&mut st.wbuf, id, frame::CANCEL);
                st.wake_driver();
            }
            st.release(self.index);
        }
    }
}
