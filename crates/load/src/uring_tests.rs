//! Tests of [`super`] on real sockets (skipped where the kernel has no io_uring).

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};

use super::*;

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    (a, b)
}

fn on_a_ring(test: impl AsyncFnOnce(Rc<Ring>) + 'static) {
    if let Err(why) = available() {
        assert!(!stackbench_testkit::in_ci(), "CI=true and no io_uring: {why}");
        stackbench_testkit::skip(&why);
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let ring = Ring::start().unwrap();
        test(ring).await;
    });
}

#[test]
fn a_linked_send_and_receive_make_an_exchange() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let echo = std::thread::spawn(move || {
            let mut got = [0u8; 5];
            b.read_exact(&mut got).unwrap();
            b.write_all(b"world!").unwrap();
            got
        });
        let sent = ring.send(a.as_raw_fd(), Held::Bytes(Bytes::from_static(b"hello")), true);
        let recv = ring.recv(a.as_raw_fd(), Vec::with_capacity(64));
        let (mut buf, n) = recv.await;
        let mut n = n.unwrap();
        while n < 6 {
            let (more, m) = ring.recv(a.as_raw_fd(), buf).await;
            buf = more;
            n += m.unwrap();
        }
        assert_eq!(&buf, b"world!");
        assert_eq!(sent.await.0.unwrap(), 5);
        assert_eq!(&echo.join().unwrap(), b"hello");
    });
}

#[test]
fn a_dropped_receive_is_cancelled_and_its_slot_reused() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let recv = ring.recv(a.as_raw_fd(), Vec::with_capacity(64));
        // Give the reactor a turn to submit it, then drop it (a timeout).
        tokio::task::yield_now().await;
        drop(recv);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(ring.ops.borrow().iter().all(Option::is_none), "the cancelled receive is freed");
        b.write_all(b"x").unwrap();
        let (buf, n) = ring.recv(a.as_raw_fd(), Vec::with_capacity(8)).await;
        assert_eq!(
            (n.unwrap(), &buf[..]),
            (1, &b"x"[..]),
            "the byte went to the new receive, not the dropped one"
        );
    });
}

#[test]
fn end_of_stream_and_errors_come_back_as_results() {
    on_a_ring(async |ring| {
        let (a, b) = pair();
        drop(b);
        let (_, n) = ring.recv(a.as_raw_fd(), Vec::with_capacity(8)).await;
        assert_eq!(n.unwrap(), 0, "the peer closed");
        let (res, _) = ring.send(-1, Held::Vec(b"x".to_vec()), false).await;
        assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::EBADF));
    });
}

#[test]
fn a_ring_dropped_with_operations_in_flight_lets_go_of_them() {
    on_a_ring(async |ring| {
        let (a, _b) = pair();
        let pending: Vec<Recv> = (0..4).map(|_| ring.recv(a.as_raw_fd(), Vec::with_capacity(8))).collect();
        tokio::task::yield_now().await;
        // The futures outlive neither the ring's users nor the ring: drop them all, then it.
        drop(pending);
        drop(ring);
    });
}
