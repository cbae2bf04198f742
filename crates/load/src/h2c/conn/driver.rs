//! The driver of an h2c connection: the one task that owns the socket. Each
//! wake-up reads until the socket is drained (into a 64 KiB buffer, every
//! complete frame handled in place), then writes everything the lanes and
//! the frame handlers queued with one `write`. It ends when the connection
//! fails, when it is drained after a GOAWAY, or when nobody holds it any more.

use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use stackbench_record::ErrorKind;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::{Conn, ConnError, State, frame};
use crate::http1::io_kind;

/// Larger than any frame we accept (16 KiB), so a partial frame always fits.
const READ_BUF: usize = 64 * 1024;

/// The driver: owns the socket until the connection ends.
pub(super) async fn drive(conn: Rc<Conn>, mut tcp: TcpStream) {
    let mut rbuf = vec![0u8; READ_BUF];
    let mut filled = 0;
    poll_fn(|cx| poll_drive(&conn, &mut tcp, &mut rbuf, &mut filled, cx)).await;
}

fn poll_drive(
    conn: &Rc<Conn>,
    tcp: &mut TcpStream,
    rbuf: &mut [u8],
    filled: &mut usize,
    cx: &mut Context<'_>,
) -> Poll<()> {
    let mut st = conn.st.borrow_mut();
    loop {
        let mut buf = ReadBuf::new(&mut rbuf[*filled..]);
        match Pin::new(&mut *tcp).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => {
                let n = buf.filled().len();
                if n == 0 {
                    st.close(ErrorKind::Reset);
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
                        let _ = Pin::new(&mut *tcp).poll_write(cx, &out);
                        st.close(ErrorKind::Protocol);
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
        let State { wbuf, wpos, .. } = &mut *st;
        match Pin::new(&mut *tcp).poll_write(cx, &wbuf[*wpos..]) {
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
