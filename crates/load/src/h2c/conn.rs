//! One h2c connection: the state its lanes and its driver share, and the
//! driver, the one task that reads the socket.
//!
//! A lane opens a stream by appending its frames (a pre-encoded header block,
//! the body as far as the windows allow) to the connection's write buffer and
//! waking the driver (or, the connection's only stream, writing them itself);
//! the driver writes everything the lanes queued since its last wake-up with
//! one `write`, reads into a 64 KiB buffer, parses every
//! frame in it and completes streams by waking their lanes. A stream's answer
//! buffers live in the stream table and are swapped with the lane's when it
//! collects, so after warm-up a request allocates nothing.
//!
//! The protocol (RFC 9113): preface and SETTINGS, then large receive windows
//! (given back with WINDOW_UPDATE as data is consumed), the server's send
//! windows honoured for request bodies, its MAX_CONCURRENT_STREAMS respected
//! (lanes wait for a free stream), PING answered, CONTINUATION joined,
//! interim 1xx answers skipped, trailers read. GOAWAY stops new streams; the
//! streams it did not process, and those refused with REFUSED_STREAM, fail as
//! `unprocessed` so the lane can send them again on a new connection. Any
//! protocol violation by the server is a connection error: GOAWAY, and every
//! open stream fails with kind `protocol`.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use stackbench_record::ErrorKind;

use self::claim::{Permit, StreamGuard};
pub use self::driver::Link;
use self::driver::drive;
use self::ids::Ids;
use super::frame::{self, Head};
use super::hpack::Decoder;
use crate::dial::{Dial, Socket};

mod claim;
mod driver;
mod ids;

/// Refuse answers (body, or header block) larger than this.
const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_BLOCK: usize = 1 << 20;
/// Octets of an answer's body held without a claim on the answer budget ([`crate::budget`]).
const FREE_BODY: usize = 16 * 1024;
/// Streams we open before the server's SETTINGS say how many it allows
/// (RFC 9113 §6.5.2 recommends a limit of no less than 100).
const ASSUMED_STREAMS: usize = 100;
const LAST_ID: u32 = (1 << 31) - 1;

/// Our receive windows.
#[derive(Debug, Clone, Copy)]
pub struct Windows {
    pub stream: u32,
    pub connection: u32,
}

/// How an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fail {
    pub kind: ErrorKind,
    /// The server did not process the request: it may be sent again.
    pub unprocessed: bool,
}

impl Fail {
    fn new(kind: ErrorKind) -> Fail {
        Fail { kind, unprocessed: false }
    }
}

/// What a completed stream carried (its buffers are swapped into the caller's).
#[derive(Debug, Clone, Copy)]
pub struct Done {
    pub status: u16,
    pub grpc_status: Option<u16>,
    /// Octets of the answer's frames (headers, data and trailers, with frame headers).
    pub received: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for (the rest of) the answer.
    Open,
    Done,
    Failed(Fail),
}

#[derive(Debug)]
struct Stream {
    id: u32,
    phase: Phase,
    waker: Option<Waker>,
    /// A final (non-1xx) head has arrived; another HEADERS is the trailers.
    headed: bool,
    status: u16,
    grpc_status: Option<u16>,
    content_type: Vec<u8>,
    /// A scenario file's answers: the head and trailers as HTTP/1.1 text (`HTTP/2 200`, then
    /// `name:value` lines), for its `header` queries; `None` when the request did not ask.
    head: Option<Vec<u8>>,
    body: Vec<u8>,
    received: u64,
    /// The server's window for our data on this stream.
    send_window: i64,
    /// Request body still to send (flow control held it back).
    pending: Bytes,
    /// Octets received on this stream not yet given back with WINDOW_UPDATE.
    unacked: u32,
    /// The answer's body past its first [`FREE_BODY`] octets while it arrives, claimed from the
    /// process's budget for answers in flight (small answers never touch it).
    held: crate::budget::Claim,
}

/// A connection error (RFC 9113 §5.4.1), with the code sent in the GOAWAY.
struct ConnError(u32);

#[derive(Debug)]
struct State {
    windows: Windows,
    /// Frames to write from `wpos` on.
    wbuf: Vec<u8>,
    wpos: usize,
    /// The socket's write half (epoll; `None` on io_uring, where only the driver writes).
    writer: Option<tokio::net::tcp::OwnedWriteHalf>,
    driver: Option<Waker>,
    /// The connection is gone; open streams failed with this kind.
    closed: Option<ErrorKind>,
    /// The server's GOAWAY: no new streams.
    goaway: bool,
    next_id: u32,
    max_streams: usize,
    peer_window: i64,
    max_frame: usize,
    send_window: i64,
    /// Octets received on the connection not yet given back.
    unacked: u32,
    streams: Vec<Stream>,
    free: Vec<usize>,
    by_id: Ids,
    /// Streams holding a slot (open, or done and not yet collected).
    active: usize,
    waiting: VecDeque<Waker>,
    /// Streams whose request body waits for window.
    blocked: Vec<usize>,
    hpack: Decoder,
    /// A header block being joined from HEADERS and CONTINUATION frames.
    block: Vec<u8>,
    block_stream: u32,
    block_end_stream: bool,
    block_octets: u64,
}

/// One h2c connection, shared by its lanes and its driver.
#[derive(Debug)]
pub struct Conn {
    st: RefCell<State>,
}

impl Conn {
    /// Connects (and makes the TLS handshake, over TLS; `shaking` is set while it lasts),
    /// sends the preface and SETTINGS, and starts the driver on the current local task set.
    /// The server's SETTINGS are not waited for. Returns the connection and how long
    /// opening it took.
    pub async fn open(
        dial: &Dial,
        windows: Windows,
        shaking: &Cell<bool>,
    ) -> Result<(Link, Duration), ErrorKind> {
        // Boxed, as `http1::Stream::open` does: the handshake's state stays out of the
        // request futures that may open a connection.
        let (socket, took) = Box::pin(dial.open(shaking)).await?;
        let mut wbuf = Vec::with_capacity(16 * 1024);
        wbuf.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut wbuf,
            &[(frame::SETTINGS_ENABLE_PUSH, 0), (frame::SETTINGS_INITIAL_WINDOW_SIZE, windows.stream)],
        );
        let extra = i64::from(windows.connection) - frame::DEFAULT_WINDOW;
        if extra > 0 {
            frame::put_window_update(&mut wbuf, 0, extra as u32);
        }
        let conn = Rc::new(Conn { st: RefCell::new(State::new(windows, wbuf)) });
        match (socket, crate::uring::current()) {
            (Socket::Tcp(tcp), Some(ring)) => {
                let sock = tcp.into_std().map_err(|_| ErrorKind::Connect)?;
                tokio::task::spawn_local(driver::drive_uring(Rc::clone(&conn), sock, ring));
            }
            (Socket::Tcp(tcp), None) => {
                let (reader, writer) = tcp.into_split();
                conn.st.borrow_mut().writer = Some(writer);
                tokio::task::spawn_local(drive(Rc::clone(&conn), reader));
            }
            // The driver owns the stream and writes for every lane.
            (Socket::Tls(tls), _) => {
                tokio::task::spawn_local(driver::drive_tls(Rc::clone(&conn), tls));
            }
        }
        Ok((Link::new(conn), took))
    }

    /// Whether a new stream may be opened (not closed, no GOAWAY, ids left).
    pub fn usable(&self) -> bool {
        let st = self.st.borrow();
        st.closed.is_none() && !st.goaway && st.next_id < LAST_ID
    }

    /// Sends one request (`head`: its HPACK header block) and waits for the
    /// whole answer; the answer's body and content type are swapped into
    /// `body` and `content_type`, and with `answer_head` its head and trailers
    /// as HTTP/1.1 text (`HTTP/2 200`, then `name:value` lines).
    pub async fn exchange(
        &self,
        head: &[u8],
        body: &Bytes,
        answer: &mut Vec<u8>,
        content_type: &mut Vec<u8>,
        answer_head: Option<&mut Vec<u8>>,
    ) -> Result<Done, Fail> {
        let mut permit = Permit { conn: self, waiting: false };
        poll_fn(|cx| permit.poll(cx)).await?;
        let index = self.st.borrow_mut().open(head, body, answer_head.is_some());
        drop(permit);
        let mut guard = StreamGuard { conn: self, index, armed: true };
        let phase = poll_fn(|cx| {
            let mut st = self.st.borrow_mut();
            let s = &mut st.streams[index];
            match s.phase {
                Phase::Open => {
                    if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        s.waker = Some(cx.waker().clone());
                    }
                    Poll::Pending
                }
                p => Poll::Ready(p),
            }
        })
        .await;
        guard.armed = false;
        let mut st = self.st.borrow_mut();
        let s = &mut st.streams[index];
        let result = match phase {
            Phase::Done => {
                std::mem::swap(&mut s.body, answer);
                std::mem::swap(&mut s.content_type, content_type);
                if let (Some(out), Some(kept)) = (answer_head, s.head.as_mut()) {
                    std::mem::swap(kept, out);
                }
                Ok(Done { status: s.status, grpc_status: s.grpc_status, received: s.received })
            }
            Phase::Failed(f) => Err(f),
            Phase::Open => unreachable!("the poll above ends only when the stream is no longer open"),
        };
        st.release(index);
        result
    }
}

impl State {
    fn new(windows: Windows, wbuf: Vec<u8>) -> State {
        State {
            windows,
            wbuf,
            wpos: 0,
            writer: None,
            driver: None,
            closed: None,
            goaway: false,
            next_id: 1,
            max_streams: ASSUMED_STREAMS,
            peer_window: frame::DEFAULT_WINDOW,
            max_frame: frame::DEFAULT_MAX_FRAME,
            send_window: frame::DEFAULT_WINDOW,
            unacked: 0,
            streams: Vec::new(),
            free: Vec::new(),
            by_id: Ids::default(),
            active: 0,
            waiting: VecDeque::new(),
            blocked: Vec::new(),
            hpack: Decoder::default(),
            block: Vec::new(),
            block_stream: 0,
            block_end_stream: false,
            block_octets: 0,
        }
    }

    fn wake_driver(&mut self) {
        if let Some(w) = self.driver.take() {
            w.wake();
        }
    }

    fn wake_waiter(&mut self) {
        if let Some(w) = self.waiting.pop_front() {
            w.wake();
        }
    }

    /// Opens a stream (a slot is held) and queues its frames.
    fn open(&mut self, head: &[u8], body: &Bytes, keep_head: bool) -> usize {
        let id = self.next_id;
        self.next_id += 2;
        let index = if let Some(i) = self.free.pop() {
            i
        } else {
            self.streams.push(Stream {
                id: 0,
                phase: Phase::Done,
                waker: None,
                headed: false,
                status: 0,
                grpc_status: None,
                content_type: Vec::new(),
                head: None,
                body: Vec::new(),
                received: 0,
                send_window: 0,
                pending: Bytes::new(),
                unacked: 0,
                held: crate::budget::Claim::default(),
            });
            self.streams.len() - 1
        };
        let s = &mut self.streams[index];
        s.id = id;
        s.phase = Phase::Open;
        s.headed = false;
        s.status = 0;
        s.grpc_status = None;
        s.content_type.clear();
        s.head = keep_head.then(|| s.head.take().unwrap_or_default());
        s.body.clear();
        s.received = 0;
        s.send_window = self.peer_window;
        s.pending = body.clone();
        s.unacked = 0;
        self.by_id.insert(id, index);
        frame::put_headers(&mut self.wbuf, id, head, body.is_empty(), self.max_frame);
        if !body.is_empty() {
            self.send_body(index);
        }
        self.send_now();
        index
    }

    /// Queues as much of a stream's pending body as the windows allow.
    fn send_body(&mut self, index: usize) {
        let s = &mut self.streams[index];
        while !s.pending.is_empty() {
            let n =
                (s.pending.len() as i64).min(s.send_window).min(self.send_window).min(self.max_frame as i64);
            if n <= 0 {
                if !self.blocked.contains(&index) {
                    self.blocked.push(index);
                }
                return;
            }
            let chunk = s.pending.split_to(n as usize);
            let end = s.pending.is_empty();
            frame::put_head(
                &mut self.wbuf,
                chunk.len(),
                frame::DATA,
                if end { frame::END_STREAM } else { 0 },
                s.id,
            );
            self.wbuf.extend_from_slice(&chunk);
            s.send_window -= n;
            self.send_window -= n;
        }
    }

    fn unblock(&mut self) {
        for index in std::mem::take(&mut self.blocked) {
            if self.streams[index].phase == Phase::Open {
                self.send_body(index);
            }
        }
    }

    /// Gives a stream's slot back (after its lane collected or abandoned it).
    fn release(&mut self, index: usize) {
        let s = &mut self.streams[index];
        self.by_id.remove(s.id);
        s.phase = Phase::Done;
        s.waker = None;
        s.pending = Bytes::new();
        s.held.release();
        self.blocked.retain(|&i| i != index);
        self.free.push(index);
        self.active -= 1;
        self.wake_waiter();
        // The driver ends a connection drained after a GOAWAY (see `poll_drive`; one nobody
        // holds any more is [`Link`]'s to tell).
        if self.goaway {
            self.wake_driver();
        }
    }

    /// Ends a stream (if still open) and wakes its lane.
    fn finish(&mut self, index: usize, phase: Phase) {
        let s = &mut self.streams[index];
        if s.phase != Phase::Open {
            return;
        }
        s.phase = phase;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
        if !s.pending.is_empty() {
            // Answered before the request body was all sent: stop sending it.
            s.pending = Bytes::new();
            let id = s.id;
            frame::put_rst_stream(&mut self.wbuf, id, frame::CANCEL);
        }
    }

    /// A stream error: RST_STREAM to the server, kind `protocol` to the lane.
    fn stream_error(&mut self, index: usize, code: u32) {
        let id = self.streams[index].id;
        if self.streams[index].phase == Phase::Open {
            frame::put_rst_stream(&mut self.wbuf, id, code);
            self.streams[index].pending = Bytes::new();
        }
        self.finish(index, Phase::Failed(Fail::new(ErrorKind::Protocol)));
    }

    /// The connection is gone: every open stream fails.
    fn close(&mut self, kind: ErrorKind) {
        if self.closed.is_some() {
            return;
        }
        self.closed = Some(kind);
        for i in 0..self.streams.len() {
            self.finish(i, Phase::Failed(Fail::new(kind)));
        }
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    fn stream(&self, id: u32) -> Option<usize> {
        self.by_id.get(id).filter(|&i| self.streams[i].phase == Phase::Open)
    }

    /// Handles every complete frame at the start of `buf`; returns the octets used.
    fn on_frames(&mut self, buf: &[u8]) -> Result<usize, ConnError> {
        let mut at = 0;
        while let Some(head) = Head::parse(&buf[at..]) {
            if head.len > frame::DEFAULT_MAX_FRAME {
                return Err(ConnError(frame::FRAME_SIZE_ERROR));
            }
            let end = at + frame::HEAD_LEN + head.len;
            if end > buf.len() {
                break;
            }
            self.on_frame(&head, &buf[at + frame::HEAD_LEN..end])?;
            at = end;
        }
        // Give back the connection window once half of it is used.
        if self.unacked >= self.windows.connection / 2 {
            frame::put_window_update(&mut self.wbuf, 0, self.unacked);
            self.unacked = 0;
        }
        Ok(at)
    }

    fn on_frame(&mut self, head: &Head, payload: &[u8]) -> Result<(), ConnError> {
        use frame::{
            CONTINUATION, DATA, FRAME_SIZE_ERROR, GOAWAY, HEADERS, PING, PROTOCOL_ERROR, PUSH_PROMISE,
            RST_STREAM, SETTINGS, WINDOW_UPDATE,
        };
        if self.block_stream != 0 && (head.kind != CONTINUATION || head.stream != self.block_stream) {
            return Err(ConnError(PROTOCOL_ERROR)); // a header block must not be interrupted (§6.10)
        }
        // Which frames belong to a stream and which to the connection, and fixed sizes (§6).
        let (on_stream, size_ok) = match head.kind {
            DATA | HEADERS | CONTINUATION => (Some(true), true),
            RST_STREAM => (Some(true), payload.len() == 4),
            SETTINGS => (Some(false), true),
            PING => (Some(false), payload.len() == 8),
            GOAWAY => (Some(false), payload.len() >= 8),
            WINDOW_UPDATE => (None, payload.len() == 4),
            // We disabled push.
            PUSH_PROMISE => return Err(ConnError(PROTOCOL_ERROR)),
            // PRIORITY (deprecated) and unknown frame types are ignored (§5.5).
            _ => return Ok(()),
        };
        if on_stream.is_some_and(|yes| yes == (head.stream == 0)) {
            return Err(ConnError(PROTOCOL_ERROR));
        }
        if !size_ok {
            return Err(ConnError(FRAME_SIZE_ERROR));
        }
        match head.kind {
            DATA => self.on_data(head, payload),
            HEADERS => {
                let fragment = frame::fragment(head, payload).map_err(|m| ConnError(m.0))?;
                self.block.clear();
                self.block.extend_from_slice(fragment);
                self.block_octets = (frame::HEAD_LEN + head.len) as u64;
                self.block_end_stream = head.has(frame::END_STREAM);
                if head.has(frame::END_HEADERS) {
                    return self.on_block(head.stream);
                }
                self.block_stream = head.stream;
                Ok(())
            }
            CONTINUATION => {
                if self.block_stream == 0 || self.block.len() + payload.len() > MAX_BLOCK {
                    return Err(ConnError(PROTOCOL_ERROR));
                }
                self.block.extend_from_slice(payload);
                self.block_octets += (frame::HEAD_LEN + head.len) as u64;
                if head.has(frame::END_HEADERS) {
                    self.block_stream = 0;
                    return self.on_block(head.stream);
                }
                Ok(())
            }
            RST_STREAM => {
                if let Some(index) = self.stream(head.stream) {
                    let fail = match frame::u31(payload) {
                        frame::REFUSED_STREAM => Fail { kind: ErrorKind::Reset, unprocessed: true },
                        frame::NO_ERROR | frame::CANCEL => Fail::new(ErrorKind::Reset),
                        _ => Fail::new(ErrorKind::Protocol),
                    };
                    self.streams[index].pending = Bytes::new();
                    self.finish(index, Phase::Failed(fail));
                }
                Ok(())
            }
            SETTINGS => self.on_settings(head, payload),
            PING => {
                if !head.has(frame::ACK) {
                    frame::put_ping_ack(&mut self.wbuf, payload);
                }
                Ok(())
            }
            GOAWAY => {
                self.on_goaway(frame::u31(payload));
                Ok(())
            }
            _ => self.on_window_update(head.stream, i64::from(frame::u31(payload))),
        }
    }

    fn on_data(&mut self, head: &Head, payload: &[u8]) -> Result<(), ConnError> {
        // Padding and all count against the windows (§6.9.1), on streams we dropped too.
        self.unacked += head.len as u32;
        let data = frame::data(head, payload).map_err(|m| ConnError(m.0))?;
        let Some(index) = self.stream(head.stream) else { return Ok(()) };
        let s = &mut self.streams[index];
        if !s.headed {
            self.stream_error(index, frame::PROTOCOL_ERROR);
            return Ok(());
        }
        s.received += (frame::HEAD_LEN + head.len) as u64;
        // Past the cap, or past what the process's budget for answers in flight still holds.
        let len = s.body.len() + data.len();
        if len > MAX_BODY || !s.held.grow_to(len.saturating_sub(FREE_BODY)) {
            self.stream_error(index, frame::CANCEL);
            return Ok(());
        }
        s.body.extend_from_slice(data);
        if head.has(frame::END_STREAM) {
            self.finish(index, Phase::Done);
        } else {
            s.unacked += head.len as u32;
            if s.unacked >= self.windows.stream / 2 {
                let n = std::mem::take(&mut s.unacked);
                frame::put_window_update(&mut self.wbuf, head.stream, n);
            }
        }
        Ok(())
    }

    fn on_goaway(&mut self, last: u32) {
        self.goaway = true;
        for index in 0..self.streams.len() {
            if self.streams[index].phase == Phase::Open && self.streams[index].id > last {
                self.finish(index, Phase::Failed(Fail { kind: ErrorKind::Reset, unprocessed: true }));
            }
        }
        for w in self.waiting.drain(..) {
            w.wake();
        }
    }

    fn on_window_update(&mut self, stream: u32, n: i64) -> Result<(), ConnError> {
        if stream == 0 {
            if n == 0 {
                return Err(ConnError(frame::PROTOCOL_ERROR));
            }
            self.send_window += n;
            if self.send_window > frame::MAX_WINDOW {
                return Err(ConnError(frame::FLOW_CONTROL_ERROR));
            }
        } else if let Some(index) = self.stream(stream) {
            let s = &mut self.streams[index];
            s.send_window += n;
            if n == 0 {
                self.stream_error(index, frame::PROTOCOL_ERROR);
            } else if s.send_window > frame::MAX_WINDOW {
                self.stream_error(index, frame::FLOW_CONTROL_ERROR);
            }
        }
        self.unblock();
        Ok(())
    }

    fn on_settings(&mut self, h: &Head, p: &[u8]) -> Result<(), ConnError> {
        if h.stream != 0 {
            return Err(ConnError(frame::PROTOCOL_ERROR));
        }
        if h.has(frame::ACK) {
            return if p.is_empty() { Ok(()) } else { Err(ConnError(frame::FRAME_SIZE_ERROR)) };
        }
        if !p.len().is_multiple_of(6) {
            return Err(ConnError(frame::FRAME_SIZE_ERROR));
        }
        for s in p.chunks_exact(6) {
            let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
            match u16::from_be_bytes([s[0], s[1]]) {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    let was = self.max_streams;
                    self.max_streams = value as usize;
                    for _ in was..self.max_streams.min(was + self.waiting.len()) {
                        self.wake_waiter();
                    }
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    let value = i64::from(value);
                    if value > frame::MAX_WINDOW {
                        return Err(ConnError(frame::FLOW_CONTROL_ERROR));
                    }
                    let delta = value - self.peer_window;
                    self.peer_window = value;
                    for s in self.streams.iter_mut().filter(|s| s.phase == Phase::Open) {
                        s.send_window += delta;
                        if s.send_window > frame::MAX_WINDOW {
                            return Err(ConnError(frame::FLOW_CONTROL_ERROR));
                        }
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&value) {
                        return Err(ConnError(frame::PROTOCOL_ERROR));
                    }
                    self.max_frame = value as usize;
                }
                // The header table size does not matter to our encoder, which uses no table.
                _ => {}
            }
        }
        frame::put_settings_ack(&mut self.wbuf);
        self.unblock();
        Ok(())
    }

    /// A complete header block for `id`: the answer's head, or its trailers.
    fn on_block(&mut self, id: u32) -> Result<(), ConnError> {
        let stream = self.stream(id);
        let State { hpack, block, streams, .. } = self;
        let s = stream.map(|i| &mut streams[i]);
        let Some(s) = s else {
            // Not ours (any more): decode it anyway, to keep the table in step.
            return hpack
                .decode(block, |_| false, |_, _| {})
                .map_err(|_| ConnError(frame::COMPRESSION_ERROR));
        };
        let trailers = s.headed;
        let mut status = None;
        let mut bad = false;
        if !trailers {
            s.content_type.clear();
        }
        let keep = s.head.is_some();
        if let Some(head) = s.head.as_mut().filter(|_| !trailers) {
            head.clear();
        }
        hpack
            .decode(
                block,
                |n| keep || n == b":status" || n == b"grpc-status" || n == b"content-type",
                |n, v| {
                    if let Some(head) = s.head.as_mut().filter(|_| !n.starts_with(b":")) {
                        // As HTTP/1.1 writes them, for a scenario file's `header` queries.
                        head.extend_from_slice(n);
                        head.push(b':');
                        head.extend_from_slice(v);
                        head.extend_from_slice(b"\r\n");
                    }
                    match n {
                        b":status" => {
                            status = std::str::from_utf8(v).ok().and_then(|v| v.parse::<u16>().ok());
                            bad |= trailers || status.is_none();
                            if let Some(head) = &mut s.head {
                                head.extend_from_slice(b"HTTP/2 ");
                                head.extend_from_slice(v);
                                head.extend_from_slice(b"\r\n");
                            }
                        }
                        b"grpc-status" => {
                            s.grpc_status = std::str::from_utf8(v).ok().and_then(|v| v.trim().parse().ok());
                        }
                        b"content-type" if !trailers => s.content_type.extend_from_slice(v),
                        _ => {}
                    }
                },
            )
            .map_err(|_| ConnError(frame::COMPRESSION_ERROR))?;
        s.received += self.block_octets;
        let index = stream.expect("checked above");
        let end = self.block_end_stream;
        if trailers {
            if !end || bad {
                self.stream_error(index, frame::PROTOCOL_ERROR);
            } else {
                self.finish(index, Phase::Done);
            }
            return Ok(());
        }
        match status {
            Some(code) if !bad && (100..200).contains(&code) => {
                // Interim answer: the final head follows.
                if end {
                    self.stream_error(index, frame::PROTOCOL_ERROR);
                }
            }
            Some(code) if !bad => {
                let s = &mut self.streams[index];
                s.status = code;
                s.headed = true;
                if end {
                    self.finish(index, Phase::Done);
                }
            }
            _ => self.stream_error(index, frame::PROTOCOL_ERROR),
        }
        Ok(())
    }
}

/// Feeds `data` to a client connection's frame reader as a server's bytes,
/// with streams 1, 3 and 5 open (their requests queued, no socket), in pieces
/// cut at `cuts`, as reads would deliver them. For the fuzz targets (`fuzz/`):
/// a hostile server's frames may end the connection with an error, never
/// with a panic. Returns the connection error code, if one ended it.
pub fn read_frames(data: &[u8], cuts: &[usize]) -> Option<u32> {
    let mut st = State::new(Windows { stream: 65_535, connection: 65_535 }, Vec::new());
    let body = Bytes::from_static(b"ping");
    // The second stream keeps its answer's head, as a scenario file's do.
    for i in 0..3 {
        st.open(&super::hpack::encode_request("POST", "h:1", "/", &[]), &body, i == 1);
    }
    let mut buf = Vec::new();
    let mut from = 0;
    let mut ends: Vec<usize> = cuts.iter().copied().filter(|&c| c > 0 && c < data.len()).collect();
    ends.sort_unstable();
    ends.push(data.len());
    for to in ends {
        buf.extend_from_slice(&data[from.min(to)..to]);
        from = to;
        match st.on_frames(&buf) {
            Ok(used) => {
                buf.drain(..used);
            }
            Err(ConnError(code)) => return Some(code),
        }
        // What the driver would have written goes nowhere; keep the buffer small.
        st.wbuf.clear();
        st.wpos = 0;
    }
    None
}
