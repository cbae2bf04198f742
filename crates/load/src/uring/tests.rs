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

/// Polls `recv` once (arming it), then lets the reactor submit it.
async fn arm(recv: &mut Receiver) {
    let mut buf = Vec::new();
    let armed = std::future::poll_fn(|cx| std::task::Poll::Ready(recv.poll_recv(cx, &mut buf))).await;
    assert!(armed.is_pending(), "nothing has arrived yet");
    tokio::task::yield_now().await;
}

/// Reads until the peer closes, `room` bytes of spare capacity at a time.
async fn read_to_end(recv: &mut Receiver, room: usize) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let mut buf = Vec::with_capacity(room);
        let n = recv.recv(&mut buf).await.unwrap();
        assert!(n <= room && n == buf.len(), "{n} bytes into {room} of room");
        if n == 0 {
            return all;
        }
        all.extend_from_slice(&buf);
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[test]
fn a_send_and_the_connections_receive_make_an_exchange() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let echo = std::thread::spawn(move || {
            let mut got = [0u8; 5];
            b.read_exact(&mut got).unwrap();
            b.write_all(b"world!").unwrap();
            got
        });
        let mut recv = Receiver::new(&ring, a.as_raw_fd());
        let sent = ring.send(a.as_raw_fd(), Held::Bytes(Bytes::from_static(b"hello")));
        // Two bytes of room at a time: a buffer of the pool is taken in parts.
        let mut answer = Vec::new();
        while answer.len() < 6 {
            let mut buf = Vec::with_capacity(2);
            let n = recv.recv(&mut buf).await.unwrap();
            assert!((1..=2).contains(&n));
            answer.extend_from_slice(&buf);
        }
        assert_eq!(&answer, b"world!");
        assert_eq!(sent.await.0.unwrap(), 5);
        assert_eq!(&echo.join().unwrap(), b"hello");
        assert_eq!(recv.rearms(), 0, "one receive served the whole exchange");
    });
}

#[test]
fn more_than_the_pool_holds_arrives_whole_and_in_order() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let mut recv = Receiver::new(&ring, a.as_raw_fd());
        arm(&mut recv).await;
        let sent = pattern(3 << 20);
        let expect = sent.clone();
        let writer = std::thread::spawn(move || {
            b.write_all(&sent).unwrap();
        });
        // Nobody takes what arrives: the kernel fills the pool's 1 MiB and ends the receive.
        std::thread::sleep(Duration::from_millis(300));
        // The writer's socket closes when it has written everything: the end of the stream.
        let got = tokio::time::timeout(Duration::from_secs(20), read_to_end(&mut recv, 10_000))
            .await
            .expect("everything arrives");
        writer.join().unwrap();
        assert_eq!(got.len(), expect.len());
        assert!(got == expect, "the bytes came in order");
        assert!(recv.rearms() >= 1, "the receive ended when the pool ran dry and was armed again");
    });
}

#[test]
fn a_receiver_waits_without_spinning_while_others_hold_the_pool() {
    on_a_ring(async |ring| {
        let (hog_sock, mut hog_peer) = pair();
        let (sock, mut peer) = pair();
        let mut hog = Receiver::new(&ring, hog_sock.as_raw_fd());
        arm(&mut hog).await;
        // More than the pool: `hog` takes every buffer and gives none back.
        let writer = std::thread::spawn(move || {
            let _ = hog_peer.write_all(&pattern(2 << 20));
            hog_peer
        });
        std::thread::sleep(Duration::from_millis(300));
        tokio::task::yield_now().await;
        let mut other = Receiver::new(&ring, sock.as_raw_fd());
        peer.write_all(b"late").unwrap();
        let mut buf = Vec::with_capacity(16);
        let waited = tokio::time::timeout(Duration::from_millis(200), other.recv(&mut buf)).await;
        assert!(waited.is_err(), "no buffer was free, so nothing could be received");
        assert!(other.rearms() <= 1, "it waited for a buffer, armed {} times", other.rearms());
        // The hog goes: its buffers come back and the waiting receiver gets its bytes.
        drop(hog);
        let n = tokio::time::timeout(Duration::from_secs(5), other.recv(&mut buf)).await.unwrap().unwrap();
        assert_eq!(&buf[..n], b"late");
        drop(hog_sock);
        drop(writer.join().unwrap());
    });
}

#[test]
fn a_dropped_send_is_cancelled_and_its_slot_reused() {
    on_a_ring(async |ring| {
        let (a, _b) = pair();
        // The peer reads nothing: a send of 64 MiB cannot finish.
        let send = ring.send(a.as_raw_fd(), Held::Vec(vec![7; 64 << 20]));
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(send);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(ring.ops.borrow().iter().all(Option::is_none), "the cancelled send is freed");
        let again = ring.send(a.as_raw_fd(), Held::Vec(b"x".to_vec()));
        assert_eq!(ring.ops.borrow().len(), 1, "the freed slot was taken again");
        drop(again);
    });
}

#[test]
fn a_dropped_receiver_is_cancelled_and_gives_its_buffers_back() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let mut recv = Receiver::new(&ring, a.as_raw_fd());
        arm(&mut recv).await;
        b.write_all(&pattern(100_000)).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(ring.bufs.held.get() > 0, "the kernel filled buffers for it");
        drop(recv);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(ring.bufs.held.get(), 0, "every buffer is back in the pool");
        assert!(ring.ops.borrow().iter().all(Option::is_none), "its slot is free");
    });
}

#[test]
fn end_of_stream_and_errors_come_back_as_results() {
    on_a_ring(async |ring| {
        let (a, b) = pair();
        let mut recv = Receiver::new(&ring, a.as_raw_fd());
        drop(b);
        let mut buf = Vec::new();
        assert_eq!(recv.recv(&mut buf).await.unwrap(), 0, "the peer closed");
        assert_eq!(recv.recv(&mut buf).await.unwrap(), 0, "and stays closed");
        let (res, _) = ring.send(-1, Held::Vec(b"x".to_vec())).await;
        assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::EBADF));
    });
}

#[test]
fn a_ring_dropped_with_operations_in_flight_lets_go_of_them() {
    on_a_ring(async |ring| {
        let (a, _b) = pair();
        let mut receivers: Vec<Receiver> = (0..4).map(|_| Receiver::new(&ring, a.as_raw_fd())).collect();
        for r in &mut receivers {
            arm(r).await;
        }
        let send = ring.send(a.as_raw_fd(), Held::Vec(vec![7; 64 << 20]));
        tokio::task::yield_now().await;
        // The futures outlive neither the ring's users nor the ring: drop them all, then it.
        drop(receivers);
        drop(send);
        drop(ring);
    });
}

#[test]
fn an_answer_taken_in_small_parts_comes_whole() {
    on_a_ring(async |ring| {
        let (a, mut b) = pair();
        let mut recv = Receiver::new(&ring, a.as_raw_fd());
        b.write_all(&pattern(50_000)).unwrap();
        drop(b);
        assert_eq!(read_to_end(&mut recv, 777).await, pattern(50_000));
    });
}
