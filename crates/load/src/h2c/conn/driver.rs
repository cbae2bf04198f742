//! The driver of an h2c connection: the one task that reads the socket. Each
//! wake-up reads until the socket is drained (into a 64 KiB buffer, every
//! complete frame handled in place), then writes everything the lanes and
//! the frame handlers queued with one `write`. In cleartext on epoll its reads
//! peek and take the octets at the next read ([`Peeking`]: the kernel then sends
//! no ACK of its own per answer). It ends when the connection
//! fails, when it is drained after a GOAWAY, or when nobody holds it any more
//! (a [`Link`] is a hold, and letting go of the last one wakes the driver).
//!
//! A lane whose stream is the connection's only one writes its frames itself
//! ([`State::send_now`]): nothing could join them in one `write`, and the
//! driver is not woken only to write them.
//!
//! On io_uring ([`drive_uring`]) the same, with one multishot receive armed
//! for the life of the connection and one send of everything queued while the
//! last was on its way.
//!
//! Over TLS ([`drive_tls`]) the driver owns the stream and is the only writer (a lane
//! wakes it), reading and writing through rustls: the same loop, built for the TLS
//! stream ([`Pipe`]), so a cleartext connection's is unchanged.

use std::future::poll_fn;
use std::ops::Deref;
use std::os::fd::AsRawFd as _;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use stackbench_record::ErrorKind;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::{Conn, ConnError, State, frame};
use crate::http1::io_kind;
use crate::sys;
use crate::tls::TlsStream;
use crate::uring::{Held, OpFuture, Receiver, Ring};

/// Larger than any frame we accept (16 KiB), so a partial frame always fits.
const READ_BUF: usize = 64 * 1024;

/// A hold on a connection: a slot's, or a lane's for one exchange.
#[derive(Debug, Clone)]
pub struct Link(Rc<Conn>);

impl Link {
    pub(super) fn new(conn: Rc<Conn>) -> Link {
        Link(conn)
    }
}

impl Deref for Link {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.0
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // This hold and the driver's are the last: the driver ends the connection.
        if Rc::strong_count(&self.0) == 2 {
            self.0.st.borrow_mut().wake_driver();
        }
    }
}

impl State {
    /// After a lane queued its stream's frames: when the stream is the connection's only one,
    /// the lane writes them itself, as far as the socket takes them; the driver is woken for
    /// the rest, and when other streams are open, so that one `write` carries what several
    /// lanes queued. An error is left for the driver to meet and report.
    pub(super) fn send_now(&mut self) {
        if self.active == 1
            && let Some(w) = &self.writer
            && let Ok(n) = w.try_write(&self.wbuf[self.wpos..])
        {
            self.wpos += n;
            if self.wpos == self.wbuf.len() {
                self.wbuf.clear();
                self.wpos = 0;
                return;
            }
        }
        self.wake_driver();
    }
}

/// What the driver reads from and writes to: a TCP socket's read half (the write half is
/// the state's, which a lane may write to itself), or a TLS stream, both ways.
pub(super) trait Pipe {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>>;
    fn poll_write(
        &mut self,
        writer: &mut Option<OwnedWriteHalf>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>>;
    /// Pushes out what the pipe still holds of what was written (TLS records).
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>>;
}

/// The cleartext driver's read half, read by peeking: a read leaves the octets it returns in
/// the socket's queue, and they are taken (without a copy) by the first read after more
/// octets arrived.
///
/// Why: nginx sends an h2c answer's HEADERS and DATA as two small pushed segments, and a read
/// that empties a receive queue holding two of them has the kernel send a pure ACK at once
/// (`tcp_cleanup_rbuf`): one more loopback segment per answer, transmitted and received on
/// the generator's CPU, a fifth of its CPU per request. Peeked octets stay queued, so the read
/// sends no ACK; the lane's next request carries it, and the octets taken later, with the
/// next answer queued behind them, leave the queue non-empty, so no ACK is due then either.
/// One system call more per read, one segment fewer per answer. Unsent ACKs are the kernel's
/// delayed ACK's to send when no request follows (a think time, the run's end).
pub(super) struct Peeking {
    half: OwnedReadHalf,
    /// Octets the last read returned that are still in the socket's queue.
    peeked: usize,
}

impl Peeking {
    pub(super) fn new(half: OwnedReadHalf) -> Peeking {
        Peeking { half, peeked: 0 }
    }
}

impl Drop for Peeking {
    fn drop(&mut self) {
        // A socket closed with octets unread resets the connection instead of closing it.
        if self.peeked > 0 {
            let _ = sys::discard(self.half.as_ref().as_raw_fd(), self.peeked);
        }
    }
}

impl Pipe for Peeking {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let tcp: &TcpStream = self.half.as_ref();
        let fd = tcp.as_raw_fd();
        loop {
            // Ready only once octets arrived after the last peek (or the peek filled `buf`).
            if let Err(e) = ready!(tcp.poll_read_ready(cx)) {
                return Poll::Ready(Err(e));
            }
            if self.peeked > 0 {
                sys::discard(fd, std::mem::take(&mut self.peeked))?;
            }
            let room = buf.remaining();
            let mut got = 0;
            let peeked = tcp.try_io(Interest::READABLE, || {
                got = sys::peek(fd, buf.initialize_unfilled())?;
                // Less than asked for: the queue held no more. Its readiness is cleared (as
                // tokio's reads do), although the octets stay queued, until more arrive.
                if got > 0 && got < room { Err(std::io::ErrorKind::WouldBlock.into()) } else { Ok(()) }
            });
            match peeked {
                Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => return Poll::Ready(Err(e)),
                // Nothing there after all: wait for readiness again.
                Err(_) if got == 0 => continue,
                _ => {}
            }
            buf.advance(got);
            self.peeked = got;
            return Poll::Ready(Ok(()));
        }
    }

    fn poll_write(
        &mut self,
        writer: &mut Option<OwnedWriteHalf>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let writer = writer.as_mut().expect("a driver on epoll has the write half");
        Pin::new(writer).poll_write(cx, data)
    }

    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Pipe for TlsStream {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self).poll_read(cx, buf)
    }

    fn poll_write(
        &mut self,
        _: &mut Option<OwnedWriteHalf>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(self).poll_write(cx, data)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self).poll_flush(cx)
    }
}

/// The driver: reads the socket until the connection ends.
pub(super) async fn drive(conn: Rc<Conn>, tcp: OwnedReadHalf) {
    let mut tcp = Peeking::new(tcp);
    let mut rbuf = vec![0u8; READ_BUF];
    let mut filled = 0;
    poll_fn(|cx| poll_drive(&conn, &mut tcp, &mut rbuf, &mut filled, cx)).await;
}

/// The driver of a connection over TLS: the one reader and writer of its stream.
pub(super) async fn drive_tls(conn: Rc<Conn>, tls: Box<TlsStream>) {
    let mut tls = tls;
    let mut rbuf = vec![0u8; READ_BUF];
    let mut filled = 0;
    poll_fn(|cx| poll_drive(&conn, &mut *tls, &mut rbuf, &mut filled, cx)).await;
}

fn poll_drive(
    conn: &Rc<Conn>,
    pipe: &mut impl Pipe,
    rbuf: &mut [u8],
    filled: &mut usize,
    cx: &mut Context<'_>,
) -> Poll<()> {
    let mut st = conn.st.borrow_mut();
    loop {
        let mut buf = ReadBuf::new(&mut rbuf[*filled..]);
        match pipe.poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => {
                let n = buf.filled().len();
                if n == 0 {
                    // A TLS server's alert to the cleartext preface, then its close.
                    st.close(crate::wire::unread_answer(&rbuf[..*filled], ErrorKind::Reset));
                    return Poll::Ready(());
                }
                *filled += n;
                match st.on_frames(&rbuf[..*filled]) {
                    Ok(used) => {
                        rbuf.copy_within(used..*filled, 0);
                        *filled -= used;
                    }
                    Err(ConnError(code)) => {
                        // Tell the server why, best effort, and fail the streams.
                        let last = st.next_id.saturating_sub(2);
                        let mut out = Vec::new();
                        frame::put_goaway(&mut out, last, code);
                        let _ = pipe.poll_write(&mut st.writer, cx, &out);
                        let _ = pipe.poll_flush(cx);
                        st.close(crate::wire::unread_answer(&rbuf[..*filled], ErrorKind::Protocol));
                        return Poll::Ready(());
                    }
                }
            }
            Poll::Ready(Err(e)) => {
                st.close(io_kind(&e));
                return Poll::Ready(());
            }
            Poll::Pending => break,
        }
    }
    while st.wpos < st.wbuf.len() {
        let State { wbuf, wpos, writer, .. } = &mut *st;
        match pipe.poll_write(writer, cx, &wbuf[*wpos..]) {
            Poll::Ready(Ok(n)) => {
                *wpos += n;
                if *wpos == wbuf.len() {
                    wbuf.clear();
                    *wpos = 0;
                }
            }
            Poll::Ready(Err(e)) => {
                st.close(io_kind(&e));
                return Poll::Ready(());
            }
            Poll::Pending => break,
        }
    }
    if let Poll::Ready(Err(e)) = pipe.poll_flush(cx) {
        st.close(io_kind(&e));
        return Poll::Ready(());
    }
    // Done: drained after a GOAWAY, or no lane and no slot holds the connection
    // (a connection per request, or one a slot replaced).
    if st.wbuf.is_empty() && (st.goaway && st.active == 0 || Rc::strong_count(conn) == 1) {
        st.close(ErrorKind::Reset);
        return Poll::Ready(());
    }
    if !st.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        st.driver = Some(cx.waker().clone());
    }
    Poll::Pending
}

/// The driver on the worker's io_uring: the connection's receive is always armed, and a send of
/// what the lanes queued goes whenever none is on its way.
pub(super) async fn drive_uring(conn: Rc<Conn>, sock: std::net::TcpStream, ring: Rc<Ring>) {
    use std::os::fd::AsRawFd as _;
    let fd = sock.as_raw_fd();
    let mut io = UringIo {
        rbuf: Vec::with_capacity(READ_BUF),
        recv: Receiver::new(&ring, fd),
        send: None,
        spare: Vec::new(),
    };
    let goaway = poll_fn(|cx| poll_drive_uring(&conn, &ring, fd, &mut io, cx)).await;
    if let Some(out) = goaway {
        // Tell the server why, best effort, before the socket closes.
        let sent = ring.send(fd, Held::Vec(out));
        let _ = tokio::time::timeout(std::time::Duration::from_millis(100), sent).await;
    }
    // Dropping `io` cancels what is still in the kernel; the socket closes after it.
    drop(io);
    drop(sock);
}

struct UringIo {
    /// What was received and not yet handled (a partial frame).
    rbuf: Vec<u8>,
    recv: Receiver,
    send: Option<OpFuture>,
    /// The write buffer a finished send gave back, swapped in for the next.
    spare: Vec<u8>,
}

/// `Ready(Some(goaway))` when the connection failed on a frame of the server's.
fn poll_drive_uring(
    conn: &Rc<Conn>,
    ring: &Rc<Ring>,
    fd: std::os::fd::RawFd,
    io: &mut UringIo,
    cx: &mut Context<'_>,
) -> Poll<Option<Vec<u8>>> {
    let mut st = conn.st.borrow_mut();
    loop {
        let mut progressed = false;
        if let Poll::Ready(res) = io.recv.poll_recv(cx, &mut io.rbuf) {
            progressed = true;
            match res {
                Ok(0) => {
                    st.close(crate::wire::unread_answer(&io.rbuf, ErrorKind::Reset));
                    return Poll::Ready(None);
                }
                Err(e) => {
                    st.close(io_kind(&e));
                    return Poll::Ready(None);
                }
                Ok(_) => match st.on_frames(&io.rbuf) {
                    Ok(used) => {
                        io.rbuf.drain(..used);
                    }
                    Err(ConnError(code)) => {
                        let last = st.next_id.saturating_sub(2);
                        let mut out = Vec::new();
                        frame::put_goaway(&mut out, last, code);
                        st.close(crate::wire::unread_answer(&io.rbuf, ErrorKind::Protocol));
                        return Poll::Ready(Some(out));
                    }
                },
            }
        }
        if io.send.is_none() && !st.wbuf.is_empty() {
            let out = std::mem::replace(&mut st.wbuf, std::mem::take(&mut io.spare));
            st.wpos = 0;
            io.send = Some(ring.send(fd, Held::Vec(out)));
        }
        if let Some(sending) = io.send.as_mut()
            && let Poll::Ready((res, held)) = Pin::new(sending).poll(cx)
        {
            io.send = None;
            progressed = true;
            if let Err(e) = res {
                st.close(io_kind(&e));
                return Poll::Ready(None);
            }
            if let Some(Held::Vec(mut v)) = held {
                v.clear();
                io.spare = v;
            }
        }
        if st.wbuf.is_empty()
            && io.send.is_none()
            && (st.goaway && st.active == 0 || Rc::strong_count(conn) == 1)
        {
            st.close(ErrorKind::Reset);
            return Poll::Ready(None);
        }
        if !progressed {
            break;
        }
    }
    if !st.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        st.driver = Some(cx.waker().clone());
    }
    Poll::Pending
}
