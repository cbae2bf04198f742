//! The h2c client against in-process servers: scripted servers that speak
//! raw frames for the protocol's edge cases (CONTINUATION, padding, interim
//! answers, malformed frames, GOAWAY, RST_STREAM, dropped connections,
//! concurrency limits, gRPC trailers), and the `h2` crate's server with tiny
//! windows for flow control in both directions.
//!
//! `l`, `p`, `q`: a listener and the server's side of connections, as in the RFC's examples.
#![allow(clippy::many_single_char_names)]

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::spawn_local;

use super::conn::Windows;
use super::frame::{self, Head};
use super::{H2Lane, Slot, hpack, request_head};
use crate::wire::Prepared;
use stackbench_record::ErrorKind;

/// Runs `f` on a current-thread runtime and local task set, like a worker (20 s at most).
fn local<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let bounded =
        async move { tokio::time::timeout(Duration::from_secs(20), f).await.expect("done within 20 s") };
    tokio::task::LocalSet::new().block_on(&rt, bounded)
}

async fn listener() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.unwrap()
}

fn request(path: &str, body: &[u8]) -> Prepared {
    let method = if body.is_empty() { http::Method::GET } else { http::Method::POST };
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::USER_AGENT, http::HeaderValue::from_static("test"));
    Prepared {
        wire: Bytes::new(),
        h2_head: request_head(&method, "test", path, &headers),
        method,
        body: Bytes::copy_from_slice(body),
        sent_size: 0,
    }
}

/// What a lane got, owned.
#[derive(Debug, PartialEq, Eq)]
struct Got {
    status: u16,
    body: Vec<u8>,
    content_type: Option<Vec<u8>>,
    grpc_status: Option<u16>,
}

async fn send(lane: &mut H2Lane, req: &Prepared, grpc: bool) -> Result<Got, ErrorKind> {
    let a = lane.send(req, grpc, true).await?;
    assert!(a.received > 0);
    Ok(Got {
        status: a.status,
        body: a.body.to_vec(),
        content_type: a.content_type.map(<[u8]>::to_vec),
        grpc_status: a.grpc_status,
    })
}

/// One accepted connection of a scripted server, speaking raw frames.
struct Peer {
    tcp: TcpStream,
    buf: Vec<u8>,
    hpack: hpack::Decoder,
}

impl Peer {
    /// Accepts a connection, checks the preface, sends the server's SETTINGS.
    async fn accept(l: &TcpListener, settings: &[(u16, u32)]) -> Peer {
        let (tcp, _) = l.accept().await.unwrap();
        let mut p = Peer { tcp, buf: Vec::new(), hpack: hpack::Decoder::default() };
        let mut preface = [0u8; 24];
        p.tcp.read_exact(&mut preface).await.unwrap();
        assert_eq!(&preface[..], frame::PREFACE);
        let mut out = Vec::new();
        frame::put_settings(&mut out, settings);
        p.send(&out).await;
        p
    }

    async fn send(&mut self, b: &[u8]) {
        self.tcp.write_all(b).await.unwrap();
    }

    /// The next frame (`None` once the client closed).
    async fn frame(&mut self) -> Option<(Head, Vec<u8>)> {
        loop {
            if let Some(h) = Head::parse(&self.buf)
                && self.buf.len() >= 9 + h.len
            {
                let p = self.buf[9..9 + h.len].to_vec();
                self.buf.drain(..9 + h.len);
                return Some((h, p));
            }
            let mut chunk = [0u8; 4096];
            match self.tcp.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// The next frame of `kind`, skipping the others.
    async fn next(&mut self, kind: u8) -> Option<(Head, Vec<u8>)> {
        loop {
            let f = self.frame().await?;
            if f.0.kind == kind {
                return Some(f);
            }
        }
    }

    /// The next request's stream and `:path`.
    async fn request(&mut self) -> (u32, String) {
        let (h, p) = self.next(frame::HEADERS).await.expect("a request");
        assert!(h.has(frame::END_HEADERS));
        let mut path = String::new();
        self.hpack
            .decode(&p, |n| n == b":path", |_, v| path = String::from_utf8_lossy(v).into_owned())
            .unwrap();
        (h.stream, path)
    }

    async fn headers(&mut self, stream: u32, fields: &[(&str, &[u8])], end: bool) {
        let mut out = Vec::new();
        frame::put_headers(&mut out, stream, &hpack::encode_fields(fields), end, 16_384);
        self.send(&out).await;
    }

    async fn data(&mut self, stream: u32, data: &[u8], end: bool) {
        let mut out = Vec::new();
        frame::put_head(&mut out, data.len(), frame::DATA, if end { frame::END_STREAM } else { 0 }, stream);
        out.extend_from_slice(data);
        self.send(&out).await;
    }

    async fn answer(&mut self, stream: u32, body: &[u8]) {
        self.headers(stream, &[(":status", b"200"), ("content-type", b"text/plain")], false).await;
        self.data(stream, body, true).await;
    }
}

fn ok(body: &[u8]) -> Got {
    Got { status: 200, body: body.to_vec(), content_type: Some(b"text/plain".to_vec()), grpc_status: None }
}

#[test]
fn continuation_padding_interim_answers_and_pings() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            let (id, path) = p.request().await;
            assert_eq!((id, path.as_str()), (1, "/a"));
            let mut out = Vec::new();
            frame::put_head(&mut out, 8, frame::PING, 0, 0);
            out.extend_from_slice(b"pingpong");
            frame::put_headers(&mut out, id, &hpack::encode_fields(&[(":status", b"103")]), false, 16_384);
            // The final head: padded, with priority, and split over a CONTINUATION.
            let long = [b'x'; 300];
            let block =
                hpack::encode_fields(&[(":status", b"200"), ("content-type", b"a/b"), ("x-long", &long)]);
            let (a, b) = block.split_at(10);
            let mut payload = vec![3u8, 0, 0, 0, 0, 16];
            payload.extend_from_slice(a);
            payload.extend_from_slice(&[0; 3]);
            frame::put_head(
                &mut out,
                payload.len(),
                frame::HEADERS,
                frame::PADDED | frame::PRIORITY_FLAG,
                id,
            );
            out.extend_from_slice(&payload);
            frame::put_head(&mut out, b.len(), frame::CONTINUATION, frame::END_HEADERS, id);
            out.extend_from_slice(b);
            frame::put_head(&mut out, 6, frame::DATA, frame::PADDED, id);
            out.extend_from_slice(&[2, b'h', b'e', b'l', 0, 0]);
            frame::put_head(&mut out, 0, frame::DATA, 0, id); // empty DATA frames are allowed
            frame::put_head(&mut out, 2, frame::DATA, frame::END_STREAM, id);
            out.extend_from_slice(b"lo");
            p.send(&out).await;
            let mut acked_settings = false;
            loop {
                let (h, payload) = p.frame().await.expect("the client's frames");
                acked_settings |= h.kind == frame::SETTINGS && h.has(frame::ACK);
                if h.kind == frame::PING {
                    assert!(h.has(frame::ACK));
                    assert_eq!(payload, b"pingpong");
                    break;
                }
            }
            acked_settings
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        let got = send(&mut lane, &request("/a", b""), false).await.unwrap();
        let want = Got {
            status: 200,
            body: b"hello".to_vec(),
            content_type: Some(b"a/b".to_vec()),
            grpc_status: None,
        };
        assert_eq!(got, want);
        assert!(server.await.unwrap(), "the server's SETTINGS were acknowledged");
    });
}

#[test]
fn malformed_frames_are_protocol_errors_and_the_next_request_reconnects() {
    // (frames after the request's answer began, the GOAWAY code the client must send)
    let mut bad: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut out = Vec::new();
    frame::put_head(&mut out, 20_000, frame::DATA, 0, 1);
    out.resize(out.len() + 20_000, 0);
    bad.push((out, frame::FRAME_SIZE_ERROR));
    let mut out = Vec::new();
    frame::put_head(&mut out, 1, frame::HEADERS, 0, 1);
    out.push(0x88);
    frame::put_head(&mut out, 8, frame::PING, 0, 0);
    out.extend_from_slice(&[0; 8]);
    bad.push((out, frame::PROTOCOL_ERROR)); // a header block interrupted
    let mut out = Vec::new();
    frame::put_head(&mut out, 1, frame::HEADERS, frame::END_HEADERS, 1);
    out.push(0x80);
    bad.push((out, frame::COMPRESSION_ERROR)); // HPACK index 0
    let mut out = Vec::new();
    frame::put_head(&mut out, 2, frame::DATA, frame::PADDED, 1);
    out.extend_from_slice(&[5, 0]);
    bad.push((out, frame::PROTOCOL_ERROR)); // more padding than payload
    let mut out = Vec::new();
    frame::put_head(&mut out, 4, frame::PUSH_PROMISE, frame::END_HEADERS, 1);
    out.extend_from_slice(&[0, 0, 0, 2]);
    bad.push((out, frame::PROTOCOL_ERROR)); // push was disabled
    let mut out = Vec::new();
    frame::put_window_update(&mut out, 0, 0);
    bad.push((out, frame::PROTOCOL_ERROR));
    let n = bad.len();
    local(async move {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            for (frames, code) in bad {
                let mut p = Peer::accept(&l, &[]).await;
                let (id, _) = p.request().await;
                assert_eq!(id, 1);
                p.send(&frames).await;
                let (_, payload) = p.next(frame::GOAWAY).await.expect("a GOAWAY");
                assert_eq!(u32::from_be_bytes(payload[4..8].try_into().unwrap()), code);
            }
            let mut p = Peer::accept(&l, &[]).await;
            let (id, _) = p.request().await;
            p.answer(id, b"fine").await;
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        for _ in 0..n {
            assert_eq!(send(&mut lane, &request("/", b""), false).await, Err(ErrorKind::Protocol));
        }
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Ok(ok(b"fine")));
        server.await.unwrap();
    });
}

#[test]
fn grpc_trailers_and_trailers_only_answers() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let grpc = [(":status", &b"200"[..]), ("content-type", b"application/grpc")];
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            // Trailers-only: the status in the only HEADERS frame.
            let (id, _) = p.request().await;
            p.headers(id, &[grpc[0], grpc[1], ("grpc-status", b"5")], true).await;
            // Head, one message, trailers.
            let (id, _) = p.request().await;
            p.headers(id, &grpc, false).await;
            p.data(id, &[0, 0, 0, 0, 2, 8, 1], false).await;
            p.headers(id, &[("grpc-status", b"0"), ("grpc-message", b"")], true).await;
            // No status at all.
            let (id, _) = p.request().await;
            p.headers(id, &grpc, false).await;
            p.data(id, &[0, 0, 0, 0, 0], true).await;
            // Trailers without END_STREAM: a stream error.
            let (id, _) = p.request().await;
            p.headers(id, &grpc, false).await;
            p.headers(id, &[("grpc-status", b"0")], false).await;
            let (h, _) = p.next(frame::RST_STREAM).await.unwrap();
            assert_eq!(h.stream, id);
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        let req = request("/pkg.Svc/Call", &[0, 0, 0, 0, 0]);
        let got = send(&mut lane, &req, true).await.unwrap();
        assert_eq!((got.status, got.grpc_status, got.body.len()), (200, Some(5), 0));
        let got = send(&mut lane, &req, true).await.unwrap();
        assert_eq!((got.grpc_status, got.body), (Some(0), vec![8, 1]));
        assert_eq!(got.content_type.as_deref(), Some(&b"application/grpc"[..]));
        assert_eq!(send(&mut lane, &req, true).await, Err(ErrorKind::Protocol));
        assert_eq!(send(&mut lane, &req, true).await, Err(ErrorKind::Protocol));
        server.await.unwrap();
    });
}

#[test]
fn goaway_sends_unprocessed_streams_again_on_a_new_connection() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            let (a, _) = p.request().await;
            let (b, _) = p.request().await;
            assert_eq!((a, b), (1, 3));
            let mut out = Vec::new();
            frame::put_goaway(&mut out, 1, frame::NO_ERROR);
            p.send(&out).await;
            p.answer(1, b"one").await;
            // Stream 3 comes again, on a new connection; the old one is closed by the client.
            let mut q = Peer::accept(&l, &[]).await;
            let (id, path) = q.request().await;
            assert_eq!((id, path.as_str()), (1, "/b"));
            q.answer(id, b"two").await;
            assert!(p.frame().await.is_none(), "the drained connection was closed");
            // A GOAWAY with an error, then the connection drops: an answer under way is lost.
            let (id, _) = q.request().await;
            let mut out = Vec::new();
            frame::put_goaway(&mut out, id, frame::PROTOCOL_ERROR);
            q.send(&out).await;
            drop(q);
            let mut r = Peer::accept(&l, &[]).await;
            let (id, _) = r.request().await;
            r.answer(id, b"three").await;
        });
        let mut one = H2Lane::new(Rc::clone(&slot));
        let mut two = H2Lane::new(Rc::clone(&slot));
        one.connect().await.unwrap();
        let (a, b) = (request("/a", b""), request("/b", b""));
        let (ra, rb) = tokio::join!(send(&mut one, &a, false), async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            send(&mut two, &b, false).await
        });
        assert_eq!((ra, rb), (Ok(ok(b"one")), Ok(ok(b"two"))));
        assert_eq!(send(&mut one, &request("/c", b""), false).await, Err(ErrorKind::Reset));
        assert_eq!(send(&mut two, &request("/d", b""), false).await, Ok(ok(b"three")));
        server.await.unwrap();
    });
}

#[test]
fn refused_streams_are_sent_again_once_and_dropped_connections_are_resets() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            let refuse = async |p: &mut Peer| {
                let (id, _) = p.request().await;
                let mut out = Vec::new();
                frame::put_rst_stream(&mut out, id, frame::REFUSED_STREAM);
                p.send(&out).await;
                id
            };
            assert_eq!((refuse(&mut p).await, refuse(&mut p).await), (1, 3));
            // Refused, then taken.
            refuse(&mut p).await;
            let (id, _) = p.request().await;
            p.answer(id, b"ok").await;
            // Read a request, hang up.
            p.request().await;
            drop(p);
            let mut q = Peer::accept(&l, &[]).await;
            let (id, _) = q.request().await;
            q.answer(id, b"again").await;
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Err(ErrorKind::Reset));
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Ok(ok(b"ok")));
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Err(ErrorKind::Reset));
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Ok(ok(b"again")));
        server.await.unwrap();
    });
}

#[test]
fn the_servers_stream_limit_is_respected() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 1)]).await;
            for _ in 0..3 {
                let (id, _) = p.request().await;
                let more = tokio::time::timeout(Duration::from_millis(100), p.next(frame::HEADERS)).await;
                assert!(more.is_err(), "a second stream while stream {id} is open");
                p.answer(id, b"x").await;
            }
        });
        let mut lanes: Vec<H2Lane> = (0..3).map(|_| H2Lane::new(Rc::clone(&slot))).collect();
        lanes[0].connect().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await; // the server's SETTINGS arrive
        let req = request("/", b"");
        let results = futures_join(lanes.iter_mut().map(|lane| send(lane, &req, false)).collect()).await;
        assert!(results.iter().all(|r| r == &Ok(ok(b"x"))), "{results:?}");
        server.await.unwrap();
    });
}

/// Awaits every future of `v` concurrently.
async fn futures_join<F: Future>(v: Vec<F>) -> Vec<F::Output> {
    let mut v: Vec<_> = v.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = v.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (f, o) in v.iter_mut().zip(out.iter_mut()) {
            if o.is_none()
                && let std::task::Poll::Ready(x) = f.as_mut().poll(cx)
            {
                *o = Some(x);
            }
        }
        if out.iter().all(Option::is_some) { std::task::Poll::Ready(()) } else { std::task::Poll::Pending }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

#[test]
fn a_stream_that_timed_out_is_cancelled_and_its_late_answer_keeps_hpack_in_step() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            let (id, _) = p.request().await;
            let (h, payload) = p.next(frame::RST_STREAM).await.unwrap();
            assert_eq!((h.stream, u32::from_be_bytes(payload[..].try_into().unwrap())), (id, frame::CANCEL));
            // The late answer adds "x-seen: 1" to the dynamic table (literal with incremental indexing) ...
            let mut block = hpack::encode_fields(&[(":status", b"200")]);
            block.extend_from_slice(&[0x40, 6, b'x', b'-', b's', b'e', b'e', b'n', 1, b'1']);
            let mut out = Vec::new();
            frame::put_headers(&mut out, id, &block, false, 16_384);
            frame::put_head(&mut out, 4, frame::DATA, frame::END_STREAM, id);
            out.extend_from_slice(b"late");
            p.send(&out).await;
            // ... which the next answer refers to (index 62).
            let (id, _) = p.request().await;
            let mut block = hpack::encode_fields(&[(":status", b"200"), ("content-type", b"text/plain")]);
            block.push(0x80 | 0x3e);
            let mut out = Vec::new();
            frame::put_headers(&mut out, id, &block, false, 16_384);
            p.send(&out).await;
            p.data(id, b"on time", true).await;
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        let req = request("/", b"");
        let late = tokio::time::timeout(Duration::from_millis(100), send(&mut lane, &req, false));
        assert!(late.await.is_err());
        assert_eq!(send(&mut lane, &request("/", b""), false).await, Ok(ok(b"on time")));
        server.await.unwrap();
    });
}

/// An `h2` server with a 7-octet stream window and 2 streams per connection;
/// it answers each request with `size` octets whose first 8 are the request
/// body's length.
fn h2_server(l: TcpListener, size: usize, peak: Rc<Cell<usize>>) {
    spawn_local(async move {
        while let Ok((tcp, _)) = l.accept().await {
            // Without it the server's last segment of each window waited for our delayed ACK
            // (40 ms, 16 times per 1 MiB answer): seconds of a test that the 20 s bound cut
            // on a busy machine.
            tcp.set_nodelay(true).unwrap();
            let peak = Rc::clone(&peak);
            spawn_local(async move {
                let mut conn = h2::server::Builder::new()
                    .initial_window_size(7)
                    .max_concurrent_streams(2)
                    .handshake::<_, Bytes>(tcp)
                    .await
                    .unwrap();
                let open = Rc::new(Cell::new(0usize));
                while let Some(Ok((req, mut respond))) = conn.accept().await {
                    let (open, peak) = (Rc::clone(&open), Rc::clone(&peak));
                    open.set(open.get() + 1);
                    peak.set(peak.get().max(open.get()));
                    spawn_local(async move {
                        let mut body = req.into_body();
                        let mut n = 0usize;
                        while let Some(chunk) = body.data().await {
                            let chunk = chunk.unwrap();
                            n += chunk.len();
                            body.flow_control().release_capacity(chunk.len()).unwrap();
                        }
                        let mut answer = vec![7u8; size];
                        answer[..8].copy_from_slice(&(n as u64).to_be_bytes());
                        let mut send = respond.send_response(http::Response::new(()), false).unwrap();
                        // Counted open while its request is read (20,000 octets through a 7-octet
                        // window: where the lanes overlap) and until its answer is queued. A count
                        // held a few ms longer saw a third stream that h2 had already let in after
                        // the first closed, once the answers stopped waiting for delayed ACKs.
                        open.set(open.get() - 1);
                        send.send_data(Bytes::from(answer), true).unwrap();
                    });
                }
            });
        }
    });
}

#[test]
fn tiny_windows_both_ways_are_honoured_without_stalling() {
    local(async {
        let l = listener().await;
        let addr = l.local_addr().unwrap();
        let peak = Rc::new(Cell::new(0));
        h2_server(l, 1 << 20, Rc::clone(&peak));
        // Our windows small too, so the 1 MiB answers need our WINDOW_UPDATEs.
        let slot = Slot::with_windows(
            crate::dial::Dial::new(addr, None),
            Windows { stream: 65_535, connection: 65_535 },
        );
        let mut lanes: Vec<H2Lane> = (0..4).map(|_| H2Lane::new(Rc::clone(&slot))).collect();
        lanes[0].connect().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await; // the server's SETTINGS arrive
        let body = vec![1u8; 20_000];
        let req = request("/upload", &body);
        for _ in 0..2 {
            let results = futures_join(lanes.iter_mut().map(|lane| send(lane, &req, false)).collect()).await;
            for r in results {
                let got = r.unwrap();
                assert_eq!((got.status, got.body.len()), (200, 1 << 20));
                assert_eq!(u64::from_be_bytes(got.body[..8].try_into().unwrap()), 20_000);
            }
        }
        assert!(peak.get() <= 2, "at most the server's 2 streams at once, saw {}", peak.get());
    });
}

#[test]
fn a_connection_of_its_own_is_closed_after_its_answer() {
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            for body in [&b"first"[..], b"second"] {
                let mut p = Peer::accept(&l, &[]).await;
                let (id, _) = p.request().await;
                assert_eq!(id, 1);
                p.answer(id, body).await;
                while p.frame().await.is_some() {} // until the client closes
            }
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        for body in [&b"first"[..], b"second"] {
            let a = lane.send(&request("/", b""), false, false).await.unwrap();
            assert_eq!(a.body, body);
        }
        server.await.unwrap();
    });
}

#[test]
fn a_lone_streams_request_larger_than_the_socket_takes_is_sent_whole() {
    // The lane of a connection's only stream writes its frames itself; what the socket does not
    // take at once (the server reads nothing for a while) must follow, in order, by the driver.
    const BODY: usize = 12 << 20;
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[(frame::SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)]).await;
            let mut out = Vec::new();
            frame::put_window_update(&mut out, 0, 1 << 30);
            p.send(&out).await;
            tokio::time::sleep(Duration::from_millis(300)).await; // the client's socket fills
            let (id, _) = p.request().await;
            let mut got = Vec::with_capacity(BODY);
            while let Some((h, data)) = p.next(frame::DATA).await {
                assert_eq!(h.stream, id);
                got.extend_from_slice(&data);
                if h.has(frame::END_STREAM) {
                    break;
                }
            }
            let whole = got.len() == BODY && got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8);
            p.answer(id, if whole { b"whole" } else { b"torn" }).await;
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        lane.connect().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await; // the server's SETTINGS and window
        let body: Vec<u8> = (0..BODY).map(|i| (i % 251) as u8).collect();
        let got = send(&mut lane, &request("/upload", &body), false).await.unwrap();
        assert_eq!(got, ok(b"whole"));
        server.await.unwrap();
    });
}

#[test]
fn an_answer_in_two_segments_is_acknowledged_by_the_next_request() {
    // A server that sends each answer's HEADERS and DATA as two segments, as nginx does: a
    // read that emptied the socket would have the kernel send a pure ACK for each answer
    // (the driver peeks instead). Counted at the server: the segments it received.
    const N: u32 = 200;
    local(async {
        let l = listener().await;
        let slot = Slot::new(l.local_addr().unwrap());
        let server = spawn_local(async move {
            let mut p = Peer::accept(&l, &[]).await;
            p.tcp.set_nodelay(true).unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&p.tcp);
            let mut before = 0;
            for i in 0..N {
                let (id, _) = p.request().await;
                if i == 0 {
                    // The handshake, the client's SETTINGS and its acknowledgement are behind.
                    before = crate::sys::segments_in(fd).unwrap();
                }
                p.answer(id, b"hi").await;
            }
            // The last answer's ACK may come later, on its own.
            crate::sys::segments_in(fd).unwrap() - before
        });
        let mut lane = H2Lane::new(Rc::clone(&slot));
        for _ in 0..N {
            assert_eq!(send(&mut lane, &request("/", b""), false).await.unwrap(), ok(b"hi"));
        }
        let segments = server.await.unwrap();
        // One per request, each carrying the ACK of the answer before; a pure ACK per answer
        // would make it 2 N. Some slack for a busy machine's delayed ACKs (a request later than
        // the kernel's ACK timer).
        assert!(segments < N + N / 4, "the server received {segments} segments for {N} requests");
    });
}
