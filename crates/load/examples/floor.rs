//! The kernel's floor for a load generator of HTTP/1.1 keep-alive requests:
//! C connections, each sending one fixed request and reading its answer, with
//! exactly one `send` and one `recv` per request and readiness from one epoll
//! (level-triggered), and nothing else: no parsing beyond counting answer
//! bytes, no clock, no recording, no checks. What this costs per request is
//! what the kernel costs any client; `stackbench load`'s cost beside it, on the
//! same server in the same run, says how close the engine is
//! (`bench/load/floor.sh` runs both).
//!
//! ```text
//! cargo run --release -p stackbench-load --example floor -- 127.0.0.1:18380 100 10
//! ```
//!
//! It prints one line: `requests N user_s U system_s S`. The answer's size is
//! learned from the first answer (head and `Content-Length`); every answer of
//! the server must be that size (a fixed `return 200` in nginx is).
//!
//! With a RATE (and optionally SLACK_US) it is the floor of the open model
//! instead: request k is due at k/RATE; one `epoll_pwait2` sleeps until the
//! next due time (nanosecond timeout, no timer descriptor) or an answer, and
//! each wake-up sends every request due on an idle connection (`late` when
//! none is idle) and reads every answer that came. With SLACK_US the wake-ups
//! fall on a grid of that step, as `stackbench load --timer-slack` does. It
//! prints `requests N user_s U system_s S late L`; `bench/load/vs-server.sh`
//! runs it beside the engine at the same rate, sending the raw request in
//! REQUEST_FILE (a `dummy` event) rather than `GET /`.
//!
//! ```text
//! cargo run --release -p stackbench-load --example floor -- 127.0.0.1:18380 100 10 20000 0
//! ```
//!
//! With `--h2c` first it is the floor of h2c instead (`bench/load/floor.sh` with
//! `PROTO=h2c`): C connections with one stream at a time each, a request one
//! pre-encoded HEADERS frame (one `send`), the answer's frames read with one
//! `recv` and only their heads looked at: the stream is done at END_STREAM.
//! The answer's header block is not decoded (a client that reads headers must
//! keep HPACK's table; this one reads none), the connection window is opened
//! wide once, and the server's SETTINGS are acknowledged.

#![allow(unsafe_code)] // epoll through libc: each call is one checked syscall on descriptors this program owns

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd as _;
use std::time::{Duration, Instant};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--h2c") {
        args.remove(0);
        let [addr, connections, seconds] = &args[..] else {
            eprintln!("usage: floor --h2c ADDR CONNECTIONS SECONDS");
            std::process::exit(2);
        };
        let addr: SocketAddr = addr.parse().expect("ADDR like 127.0.0.1:18381");
        let (done, user, system) = h2c(
            addr,
            connections.parse().expect("CONNECTIONS is a number"),
            seconds.parse().expect("SECONDS"),
        );
        println!("requests {done} user_s {user:.3} system_s {system:.3}");
        return;
    }
    let [addr, connections, seconds, open @ ..] = &args[..] else {
        eprintln!(
            "usage: floor ADDR CONNECTIONS SECONDS [RATE [SLACK_US [REQUEST_FILE]]]   (e.g. 127.0.0.1:18380 100 10)"
        );
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().expect("ADDR like 127.0.0.1:18380");
    let n: usize = connections.parse().expect("CONNECTIONS is a number");
    let secs: u64 = seconds.parse().expect("SECONDS is a number");
    let rate: Option<f64> = open.first().map(|r| r.parse().expect("RATE is requests per second"));
    let slack = Duration::from_micros(open.get(1).map_or(0, |s| s.parse().expect("SLACK_US is a number")));
    assert!(rate.is_none_or(|r| r > 0.0), "RATE must be above 0");
    // REQUEST_FILE: the raw bytes of the one request to send instead of `GET /`.
    let request = match open.get(2) {
        Some(file) => std::fs::read(file).expect("REQUEST_FILE is readable"),
        None => format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes(),
    };
    let size = answer_size(addr, &request);

    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(epfd >= 0, "epoll_create1");
    let mut conns: Vec<(TcpStream, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).unwrap();
        s.set_nonblocking(true).unwrap();
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        assert_eq!(unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &raw mut ev) }, 0);
        conns.push((s, 0));
    }
    let (u0, s0) = cpu();
    let end = Instant::now() + Duration::from_secs(secs);
    if let Some(rate) = rate {
        let (done, late) = open_model(epfd, &mut conns, &request, size, end, rate, slack);
        let (u1, s1) = cpu();
        println!("requests {done} user_s {:.3} system_s {:.3} late {late}", u1 - u0, s1 - s0);
        return;
    }
    for (s, _) in &mut conns {
        send(s, &request);
    }
    let mut done: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    'run: loop {
        let k = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), events.len() as i32, 100) };
        for ev in &events[..k.max(0) as usize] {
            let (s, got) = &mut conns[ev.u64 as usize];
            let r = unsafe { libc::recv(s.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            assert!(r > 0, "the server closed a connection or failed");
            *got += r as usize;
            while *got >= size {
                *got -= size;
                done += 1;
                if *got == 0 {
                    send(s, &request);
                }
            }
        }
        // The clock is read once per batch, not per request.
        if Instant::now() >= end {
            break 'run;
        }
    }
    let (u1, s1) = cpu();
    println!("requests {done} user_s {:.3} system_s {:.3}", u1 - u0, s1 - s0);
}

/// The open model's floor: sends request k at k/`rate` on an idle connection until `end`;
/// returns the answers read and the requests due when no connection was idle.
fn open_model(
    epfd: i32,
    conns: &mut [(TcpStream, usize)],
    request: &[u8],
    size: usize,
    end: Instant,
    rate: f64,
    slack: Duration,
) -> (u64, u64) {
    let start = Instant::now();
    let due = |k: u64| start + Duration::from_secs_f64(k as f64 / rate);
    let mut idle: Vec<usize> = (0..conns.len()).collect();
    let (mut k, mut done, mut late) = (0u64, 0u64, 0u64);
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    loop {
        let now = Instant::now();
        if now >= end {
            return (done, late);
        }
        while due(k) <= now {
            k += 1;
            match idle.pop() {
                Some(i) => send(&mut conns[i].0, request),
                None => late += 1,
            }
        }
        let mut wake = due(k).min(end);
        if !slack.is_zero() {
            let step = slack.as_nanos();
            let ceil = wake.duration_since(start).as_nanos().div_ceil(step) * step;
            wake = start + Duration::from_nanos(ceil as u64);
        }
        let left = wake.saturating_duration_since(now);
        let timeout = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let ready = unsafe {
            libc::epoll_pwait2(
                epfd,
                events.as_mut_ptr(),
                events.len() as i32,
                &raw const timeout,
                std::ptr::null(),
            )
        };
        for ev in &events[..ready.max(0) as usize] {
            let i = ev.u64 as usize;
            let (s, got) = &mut conns[i];
            let r = unsafe { libc::recv(s.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            assert!(r > 0, "the server closed a connection or failed");
            *got += r as usize;
            while *got >= size {
                *got -= size;
                done += 1;
            }
            if *got == 0 {
                idle.push(i);
            }
        }
    }
}

/// The h2c floor (see the module's header): answers completed and the CPU seconds they took.
fn h2c(addr: SocketAddr, connections: usize, secs: u64) -> (u64, f64, f64) {
    const HEADERS: u8 = 0x1;
    const SETTINGS: u8 = 0x4;
    const END_STREAM: u8 = 0x1;
    let frame = |kind: u8, flags: u8, stream: u32, payload: &[u8]| {
        let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        out.extend_from_slice(&[kind, flags]);
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    };
    // GET http://ADDR/: :method GET, :scheme http, :path / (static table), :authority a literal.
    let authority = addr.to_string();
    let mut block = vec![0x82, 0x86, 0x84, 0x01, authority.len() as u8];
    block.extend_from_slice(authority.as_bytes());
    let mut start = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    start.extend(frame(SETTINGS, 0, 0, &[]));
    start.extend(frame(0x8, 0, 0, &(((1u32 << 31) - 1) - 65_535).to_be_bytes()));
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(epfd >= 0, "epoll_create1");
    // Per connection: the socket, its next stream id, unparsed bytes of the answer.
    let mut conns: Vec<(TcpStream, u32, Vec<u8>)> = Vec::with_capacity(connections);
    for i in 0..connections {
        let mut sock = TcpStream::connect(addr).expect("connect");
        sock.set_nodelay(true).unwrap();
        sock.write_all(&start).unwrap();
        sock.set_nonblocking(true).unwrap();
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        assert_eq!(unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, sock.as_raw_fd(), &raw mut ev) }, 0);
        conns.push((sock, 1, Vec::with_capacity(64 * 1024)));
    }
    // The request frame, its stream id patched in place before each send.
    let mut request = frame(HEADERS, END_STREAM | 0x4, 1, &block);
    let mut send_on = |sock: &mut TcpStream, id: u32| {
        request[5..9].copy_from_slice(&id.to_be_bytes());
        send(sock, &request);
    };
    let (u0, s0) = cpu();
    let end = Instant::now() + Duration::from_secs(secs);
    for (sock, id, _) in &mut conns {
        send_on(sock, *id);
    }
    let mut done: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while Instant::now() < end {
        let ready = unsafe { libc::epoll_wait(epfd, events.as_mut_ptr(), events.len() as i32, 100) };
        for ev in &events[..ready.max(0) as usize] {
            let (sock, id, pending) = &mut conns[ev.u64 as usize];
            let read = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            assert!(read > 0, "the server closed a connection or failed");
            // Frames are read from the receive buffer itself unless a frame was cut by a read.
            let got: &[u8] = if pending.is_empty() {
                &buf[..read as usize]
            } else {
                pending.extend_from_slice(&buf[..read as usize]);
                pending
            };
            let mut at = 0;
            let mut next = false;
            while got.len() - at >= 9 {
                let head = &got[at..at + 9];
                let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
                if got.len() - at < 9 + len {
                    break;
                }
                let (kind, flags) = (head[3], head[4]);
                let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
                if kind == SETTINGS && flags & 0x1 == 0 {
                    send(sock, &frame(SETTINGS, 0x1, 0, &[]));
                } else if stream == *id && (kind == 0x0 || kind == HEADERS) && flags & END_STREAM != 0 {
                    done += 1;
                    next = true;
                }
                at += 9 + len;
            }
            let rest = got[at..].to_vec();
            *pending = rest;
            if next {
                *id += 2;
                send_on(sock, *id);
            }
        }
    }
    let (u1, s1) = cpu();
    (done, u1 - u0, s1 - s0)
}

fn send(s: &mut TcpStream, request: &[u8]) {
    let r = unsafe { libc::send(s.as_raw_fd(), request.as_ptr().cast(), request.len(), libc::MSG_NOSIGNAL) };
    assert_eq!(r, request.len() as isize, "a short or failed send");
}

/// The size of the server's answer (head and body), from one request.
fn answer_size(addr: SocketAddr, request: &[u8]) -> usize {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "the server closed before answering");
        got.extend_from_slice(&chunk[..n]);
        let Some(head) = got.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let text = String::from_utf8_lossy(&got[..head]).to_ascii_lowercase();
        let length: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .expect("a Content-Length answer");
        return head + 4 + length;
    }
}

/// User and system CPU seconds of this process.
fn cpu() -> (f64, f64) {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::uninit();
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) }, 0);
    let u = unsafe { u.assume_init() };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(u.ru_utime), t(u.ru_stime))
}
