//! How a request is sent: the pre-built request pool ([`Prepared`]), one
//! [`Lane`] (a place one request at a time goes through: an HTTP/1.1
//! connection, or a stream slot on a shared h2c connection) and the
//! per-worker [`Pool`] of lanes. The worker loop talks only to these, so every
//! schedule drives every transport through the same code.

use std::cell::{Cell, RefCell};
use std::future::{Future as _, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use stackbench_record::ErrorKind;
use tokio::time::Sleep;

use crate::dial::Dial;
use crate::h2c::{self, H2Lane, Slot};
use crate::http1::Http1Conn;
use crate::spec::{LoadSpec, RequestSource, Transport};
use crate::wire::{Answer, Outgoing, Prepared, Wire, http1_request};

/// What one exchange on a lane sends.
#[derive(Clone, Copy)]
enum Payload<'r> {
    /// A request of the pool, with the spec's transport.
    Prepared(&'r Prepared, Transport),
    /// A scenario file's request, written for this exchange.
    File(&'r Outgoing<'r>),
}

/// Builds the request pool of a spec: the fixed request, or none (a scenario's requests
/// are written per request).
pub fn prepare(spec: &LoadSpec) -> Arc<[Prepared]> {
    let t = &spec.target;
    let grpc = spec.transport == Transport::Grpc;
    let build =
        |method: &http::Method, path: &str, extra: &[(http::HeaderName, http::HeaderValue)], body: &Bytes| {
            let body = if grpc { h2c::grpc_frame(body) } else { body.clone() };
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::header::USER_AGENT,
                http::HeaderValue::from_static(concat!("stackbench/", env!("CARGO_PKG_VERSION"))),
            );
            if grpc {
                headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
            }
            for (k, v) in extra {
                headers.append(k.clone(), v.clone());
            }
            let wire = http1_request(method, &t.authority, path, None, extra, &body, spec.keepalive());
            let h2_head = h2c::request_head(method, &t.authority, path, &headers);
            let sent_size = match spec.transport {
                Transport::Http1 => wire.len() as u64,
                Transport::H2c | Transport::Grpc => h2c::wire_size(&h2_head, &body),
            };
            Prepared { wire: Bytes::from(wire), method: method.clone(), h2_head, body, sent_size }
        };
    match &spec.requests {
        RequestSource::Fixed { method, headers, body } => vec![build(method, &t.path, headers, body)].into(),
        // Written per request, by each user (`crate::flow`).
        RequestSource::File(_) => Vec::new().into(),
    }
}

/// Where one request at a time goes, with the timer that bounds each of its requests.
///
/// The timer is made once per lane and is not moved per request: it stays at the deadline of
/// an earlier request, which is not later than the current one's (deadlines move later; one
/// that comes earlier moves the timer back), and is moved on to the current deadline only
/// when it fires before it, once per `--timeout` at most ([`poll_deadline`]). A `tokio::time::timeout` per request took the timer
/// driver's lock twice, to insert its entry and to remove it; moving the timer at every request
/// cost 150 user-space instructions.
#[derive(Debug)]
pub struct Lane {
    via: Via,
    timer: Pin<Box<Sleep>>,
}

/// Whether `deadline` has passed, by the lane's `timer`, which may stand at an earlier
/// deadline: when that one fires first, the timer is moved on to `deadline` and polled again.
fn poll_deadline(timer: &mut Pin<Box<Sleep>>, deadline: Instant, cx: &mut Context<'_>) -> Poll<()> {
    if timer.as_mut().poll(cx).is_pending() {
        return Poll::Pending;
    }
    if Instant::now() >= deadline {
        return Poll::Ready(());
    }
    timer.as_mut().reset(deadline.into());
    timer.as_mut().poll(cx)
}

#[derive(Debug)]
enum Via {
    Http1(Http1Conn),
    H2(H2Lane),
}

impl Lane {
    /// Must be called inside a runtime with timers (the timer is made here).
    fn new(via: Via) -> Lane {
        Lane { via, timer: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())) }
    }

    /// Opens the lane's connection now (before the clock starts); failures
    /// are left for the first request to meet and count.
    pub async fn connect(&mut self) {
        let _ = match &mut self.via {
            Via::Http1(c) => c.connect().await,
            Via::H2(l) => l.connect().await,
        };
        // Opened before any request: no request's time includes it.
        self.take_opened();
    }

    /// Gives up the lane's connection (at the end of an iteration that opened its own): the
    /// next exchange opens a new one.
    pub fn close(&mut self) {
        match &mut self.via {
            Via::Http1(c) => c.close(),
            Via::H2(l) => l.close(),
        }
    }

    /// How long opening its connection took, when the last exchange opened it (taken once):
    /// the connect and, over TLS, the handshake, which that exchange's time includes.
    pub fn take_opened(&mut self) -> Option<Duration> {
        match &mut self.via {
            Via::Http1(c) => c.take_opened(),
            Via::H2(l) => l.take_opened(),
        }
    }

    /// Sends one request and waits for its answer until `deadline`, after which it is given up
    /// (the exchange dropped, as `tokio::time::timeout` would). A lane without a connection
    /// connects first, within the same deadline: a connect that has not finished by then fails
    /// with kind `connect` (the server never took the connection: a full backlog, a dropped
    /// SYN), an exchange that has not with kind `timeout`.
    ///
    /// A plain function that returns [`Lane::exchange`]'s future: an `async fn` here would wrap
    /// it in a state machine of its own, polled at every wake-up of every request.
    #[inline]
    pub fn send<'l: 'f, 'f>(
        &'l mut self,
        req: &'f Prepared,
        transport: Transport,
        keepalive: bool,
        deadline: Instant,
    ) -> impl Future<Output = Result<Answer<'l>, ErrorKind>> + 'f {
        self.exchange(Payload::Prepared(req, transport), keepalive, deadline)
    }

    /// As [`Lane::send`], for a scenario file's request written for this exchange. A request
    /// of the other protocol than the lane's fails with kind `protocol` (the spec's transport
    /// is the file's protocol, so it does not happen).
    #[inline]
    pub fn send_file<'l: 'f, 'f>(
        &'l mut self,
        out: &'f Outgoing<'_>,
        keepalive: bool,
        deadline: Instant,
    ) -> impl Future<Output = Result<Answer<'l>, ErrorKind>> + 'f {
        self.exchange(Payload::File(out), keepalive, deadline)
    }

    /// Connects a lane that has no connection (or a broken one) within its request's
    /// deadline, which `timer` holds: kind `connect` when the deadline passes first, or
    /// `tls_handshake` when it passed during the TLS handshake.
    async fn open(
        via: &mut Via,
        timer: &mut Pin<Box<Sleep>>,
        deadline: Instant,
        keepalive: bool,
    ) -> Result<(), ErrorKind> {
        let opened = {
            let mut opening = std::pin::pin!(async {
                match &mut *via {
                    Via::Http1(c) => c.ready().await,
                    Via::H2(l) if keepalive => l.connect().await,
                    Via::H2(l) => l.open_own().await,
                }
            });
            poll_fn(|cx| match opening.as_mut().poll(cx) {
                Poll::Ready(r) => Poll::Ready(r),
                Poll::Pending => poll_deadline(timer, deadline, cx).map(|()| Err(ErrorKind::Connect)),
            })
            .await
        };
        opened.map_err(|kind| {
            // Given up while the TLS handshake was under way: the server stalled in it.
            let stalled = kind == ErrorKind::Connect
                && match &*via {
                    Via::Http1(c) => c.gave_up_handshake(),
                    Via::H2(l) => l.gave_up_handshake(),
                };
            if stalled { ErrorKind::TlsHandshake } else { kind }
        })
    }

    /// [`Lane::send`] and [`Lane::send_file`]: the lane's exchange of `payload` bounded by its
    /// timer. A lane whose connection is up (nearly every request) goes straight to its
    /// exchange; one that must connect first does so in a boxed future of its own (a connect
    /// costs far more than the allocation), within the same deadline.
    ///
    /// Inlined, as [`start`] is: the future (the largest exchange of either protocol, some 300
    /// octets) is then written where its caller awaits it, where one returned from a call was
    /// copied twice per request (`always`: the copies must not depend on the inliner's weighing).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn exchange<'l: 'f, 'f>(
        &'l mut self,
        payload: Payload<'f>,
        keepalive: bool,
        deadline: Instant,
    ) -> impl Future<Output = Result<Answer<'l>, ErrorKind>> + 'f {
        let Lane { via, timer } = self;
        // The timer may stand at an earlier request's deadline (see `Lane`), never a later one.
        let at = deadline.into();
        if timer.deadline() > at {
            timer.as_mut().reset(at);
        }
        let open = match &*via {
            Via::Http1(c) => c.is_open(),
            Via::H2(l) => l.is_open(keepalive),
        };
        if open {
            return start(via, timer, payload, keepalive, deadline);
        }
        let opening = Lane::opening(via, timer, payload, keepalive, deadline);
        Exchange { sending: Sending::Opening { opening }, timer: None, deadline }
    }

    /// The exchange of a lane that connects first ([`Lane::open`]), boxed.
    #[inline(never)]
    fn opening<'l: 'f, 'f>(
        via: &'l mut Via,
        timer: &'f mut Pin<Box<Sleep>>,
        payload: Payload<'f>,
        keepalive: bool,
        deadline: Instant,
    ) -> Pin<Box<dyn Future<Output = Result<Answer<'l>, ErrorKind>> + 'f>> {
        Box::pin(async move {
            Lane::open(via, timer, deadline, keepalive).await?;
            start(via, timer, payload, keepalive, deadline).await
        })
    }
}

pin_project_lite::pin_project! {
    /// One exchange on a lane, bounded by its request's deadline: the exchange of the lane's
    /// kind of connection, polled first (so an answer that is ready when the deadline is too
    /// still counts), then the lane's timer ([`poll_deadline`]); when that fires, the exchange
    /// is given up (dropped with this future, as `tokio::time::timeout` would drop it) and
    /// fails with kind `timeout`.
    ///
    /// Written by hand: an async block matching on the connection's kind inside a `poll_fn`
    /// that polled the timer were two layers more, each resumed at every wake-up of every
    /// request.
    struct Exchange<'f, A, H1, H2> {
        #[pin]
        sending: Sending<'f, A, H1, H2>,
        // `None` while `Sending::Opening`, which bounds itself.
        timer: Option<&'f mut Pin<Box<Sleep>>>,
        deadline: Instant,
    }
}

pin_project_lite::pin_project! {
    /// What an [`Exchange`] waits for.
    #[project = SendingProj]
    enum Sending<'f, A, H1, H2> {
        Http1 { #[pin] exchange: H1 },
        H2 { #[pin] exchange: H2 },
        /// A lane without a connection: its connect, then its exchange, each bounded.
        Opening { opening: Pin<Box<dyn Future<Output = Result<A, ErrorKind>> + 'f>> },
        /// Failed before it began: a scenario file's request of the other protocol than the
        /// lane's (the spec's transport is the file's protocol, so it does not happen).
        Refused { kind: ErrorKind },
    }
}

/// The exchange of `payload` on a lane whose connection is up.
#[allow(clippy::inline_always)]
#[inline(always)]
fn start<'l: 'f, 'f>(
    via: &'l mut Via,
    timer: &'f mut Pin<Box<Sleep>>,
    payload: Payload<'f>,
    keepalive: bool,
    deadline: Instant,
) -> Exchange<
    'f,
    Answer<'l>,
    impl Future<Output = Result<Answer<'l>, ErrorKind>> + 'f,
    impl Future<Output = Result<Answer<'l>, ErrorKind>> + 'f,
> {
    let sending = match (via, payload) {
        (Via::Http1(c), Payload::Prepared(req, _)) => Sending::Http1 {
            exchange: c.send(Wire::Shared(&req.wire), req.method == http::Method::HEAD, keepalive),
        },
        (Via::Http1(c), Payload::File(Outgoing::Http1 { wire, head_only })) => {
            // A scenario file's checks look its headers up.
            c.keep_headers(true);
            Sending::Http1 { exchange: c.send(Wire::Lent(wire), *head_only, keepalive) }
        }
        (Via::Http1(c), Payload::File(Outgoing::Http1Shared { wire, head_only })) => {
            c.keep_headers(true);
            Sending::Http1 { exchange: c.send(Wire::Shared(wire), *head_only, keepalive) }
        }
        (Via::H2(l), Payload::Prepared(req, transport)) => Sending::H2 {
            exchange: l.send_parts(&req.h2_head, &req.body, transport == Transport::Grpc, keepalive, false),
        },
        (Via::H2(l), Payload::File(Outgoing::H2 { head, body, grpc, .. })) => {
            Sending::H2 { exchange: l.send_parts(head, body, *grpc, keepalive, true) }
        }
        (Via::Http1(_), Payload::File(Outgoing::H2 { .. }))
        | (Via::H2(_), Payload::File(Outgoing::Http1 { .. } | Outgoing::Http1Shared { .. })) => {
            Sending::Refused { kind: ErrorKind::Protocol }
        }
    };
    Exchange { sending, timer: Some(timer), deadline }
}

impl<A, H1, H2> Future for Exchange<'_, A, H1, H2>
where
    H1: Future<Output = Result<A, ErrorKind>>,
    H2: Future<Output = Result<A, ErrorKind>>,
{
    type Output = Result<A, ErrorKind>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let answer = match this.sending.project() {
            SendingProj::Http1 { exchange } => exchange.poll(cx),
            SendingProj::H2 { exchange } => exchange.poll(cx),
            SendingProj::Opening { opening } => return opening.as_mut().poll(cx),
            SendingProj::Refused { kind } => return Poll::Ready(Err(*kind)),
        };
        match (answer, this.timer) {
            (Poll::Pending, Some(timer)) => {
                poll_deadline(timer, *this.deadline, cx).map(|()| Err(ErrorKind::Timeout))
            }
            (answer, _) => answer,
        }
    }
}

/// A worker's connections, and its lanes not in use.
#[derive(Debug)]
pub enum Pool {
    /// HTTP/1.1: idle lanes are idle connections (the open model takes and returns them; it
    /// opens a new one when none is idle).
    Http1 { dial: Rc<Dial>, idle: RefCell<Vec<Lane>> },
    /// Shared h2c connections; each lane taken is put on the next one, round-robin. Without
    /// `slots`, each lane has a connection of its own (`--new-connection iteration`).
    H2 { dial: Rc<Dial>, slots: Vec<Rc<Slot>>, next: Cell<usize>, idle: RefCell<Vec<Lane>> },
}

impl Pool {
    /// The pool of a worker that opens its connections with `dial`: h2c's lanes share
    /// `connections`, or with `own` each has one of its own.
    pub fn new(dial: &Rc<Dial>, transport: Transport, connections: usize, own: bool) -> Pool {
        match transport {
            Transport::Http1 => Pool::Http1 { dial: Rc::clone(dial), idle: RefCell::new(Vec::new()) },
            Transport::H2c | Transport::Grpc => Pool::H2 {
                dial: Rc::clone(dial),
                slots: if own {
                    Vec::new()
                } else {
                    (0..connections.max(1)).map(|_| Slot::with_dial(Rc::clone(dial))).collect()
                },
                next: Cell::new(0),
                idle: RefCell::new(Vec::new()),
            },
        }
    }

    /// A lane: an idle or new HTTP/1.1 connection, or a stream on the next h2c connection.
    /// Must be called inside the worker's runtime.
    pub fn take(&self) -> Lane {
        match self {
            Pool::Http1 { dial, idle } => idle
                .borrow_mut()
                .pop()
                .unwrap_or_else(|| Lane::new(Via::Http1(Http1Conn::new(Rc::clone(dial))))),
            Pool::H2 { dial, slots, idle, .. } if slots.is_empty() => idle
                .borrow_mut()
                .pop()
                .unwrap_or_else(|| Lane::new(Via::H2(H2Lane::new(Slot::with_dial(Rc::clone(dial)))))),
            Pool::H2 { slots, next, idle, .. } => {
                let i = next.get();
                next.set((i + 1) % slots.len());
                let slot = Rc::clone(&slots[i]);
                match idle.borrow_mut().pop() {
                    Some(mut lane) => {
                        if let Via::H2(l) = &mut lane.via {
                            l.move_to(slot);
                        }
                        lane
                    }
                    None => Lane::new(Via::H2(H2Lane::new(slot))),
                }
            }
        }
    }

    /// Returns a lane for reuse (with its timer and its answer buffers).
    pub fn give_back(&self, lane: Lane) {
        match self {
            Pool::Http1 { idle, .. } | Pool::H2 { idle, .. } => idle.borrow_mut().push(lane),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::LoadOptions;

    #[test]
    fn sent_size_is_what_each_transport_puts_on_the_wire() {
        let body = Some("{\"type\":\"a\"}".to_owned());
        let http1 = LoadOptions { method: Some("POST".into()), body: body.clone(), ..LoadOptions::default() };
        let spec = http1.to_spec("http://127.0.0.1:1/events").unwrap();
        let r = &super::prepare(&spec)[0];
        assert_eq!(r.sent_size, r.wire.len() as u64);
        assert!(r.wire.ends_with(b"\r\n\r\n{\"type\":\"a\"}"));

        let h2 = LoadOptions { http2: true, ..http1 };
        let spec = h2.to_spec("http://127.0.0.1:1/events").unwrap();
        let r = &super::prepare(&spec)[0];
        // One HEADERS and one DATA frame, 9 octets of frame header each.
        assert_eq!(r.sent_size, (r.h2_head.len() + 9 + r.body.len() + 9) as u64);
        assert!(r.sent_size < r.wire.len() as u64, "HPACK is smaller than the HTTP/1.1 text");
    }
}
