//! HTTP/2 over cleartext TCP with prior knowledge (h2c), and gRPC unary calls
//! on top of it, with a client written for the load engine's hot path.
//!
//! A [`Slot`] is one connection shared by the lanes (streams) of one worker
//! thread; it reconnects when the connection dies or the server sent GOAWAY
//! (the first lane to notice reconnects, the others wait on the slot's lock).
//! The connection ([`conn`]) is driven by one task that reads the socket: it
//! writes what all lanes queued with one `write` per wake-up and hands each
//! answer to its lane (the lane of a connection's only stream writes its
//! request itself). A request's HPACK header block is encoded once before
//! the run ([`request_head`]), so sending one is a copy into the write buffer.
//! Windows are raised to 16 MiB per stream and 64 MiB per connection so flow
//! control never throttles a benchmark; received data is given back as it is
//! read.
//!
//! gRPC (the wire format of grpc.io's "gRPC over HTTP2" spec): the request
//! body is the 5-byte frame header (compressed flag 0, big-endian length) and
//! the message; the answer's `grpc-status` comes from the trailers, or from
//! the headers of a trailers-only answer. A non-zero status is an error of
//! kind `grpc_<code>`; a missing one is a protocol error.

pub(crate) mod conn;
mod frame;
pub(crate) mod hpack;
mod huffman;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use stackbench_record::ErrorKind;

use self::conn::{Conn, Link, Windows};
use crate::dial::Dial;
use crate::wire::Answer;

const WINDOWS: Windows = Windows { stream: 16 * 1024 * 1024, connection: 64 * 1024 * 1024 };

/// Octets a request with this header block and body puts on the wire
/// (HEADERS, CONTINUATION and DATA frames at the default 16 KiB frame size).
pub fn wire_size(head: &[u8], body: &[u8]) -> u64 {
    frame::request_size(head.len(), body.len(), frame::DEFAULT_MAX_FRAME)
}

/// One shared h2c connection of a worker thread.
#[derive(Debug)]
pub struct Slot {
    dial: Rc<Dial>,
    windows: Windows,
    live: RefCell<Option<Link>>,
    connecting: tokio::sync::Mutex<()>,
    /// A TLS handshake of this slot's connection is under way (still set: given up).
    shaking: Cell<bool>,
    /// How long opening the live connection took, until a lane that waited for it takes it.
    opened: Cell<Option<Duration>>,
}

impl Slot {
    /// A slot connecting in cleartext to `addr` (the tests').
    #[cfg(test)]
    pub fn new(addr: std::net::SocketAddr) -> Rc<Slot> {
        Slot::with_dial(Dial::new(addr, None))
    }

    /// A slot opening its connections with the worker's `dial`.
    pub fn with_dial(dial: Rc<Dial>) -> Rc<Slot> {
        Slot::with_windows(dial, WINDOWS)
    }

    fn with_windows(dial: Rc<Dial>, windows: Windows) -> Rc<Slot> {
        Rc::new(Slot {
            dial,
            windows,
            live: RefCell::new(None),
            connecting: tokio::sync::Mutex::new(()),
            shaking: Cell::new(false),
            opened: Cell::new(None),
        })
    }

    /// Whether the slot's connection can take a new stream now.
    fn is_live(&self) -> bool {
        self.live.borrow().as_ref().is_some_and(|c| c.usable())
    }

    fn usable(&self) -> Option<Link> {
        self.live.borrow().as_ref().filter(|c| c.usable()).cloned()
    }

    /// Lets go of the live connection (it ends once no lane holds it).
    fn close(&self) {
        *self.live.borrow_mut() = None;
    }

    /// The live connection, connecting first if there is none (or it ended).
    async fn get(&self) -> Result<Link, ErrorKind> {
        if let Some(c) = self.usable() {
            return Ok(c);
        }
        let _guard = self.connecting.lock().await;
        if let Some(c) = self.usable() {
            return Ok(c);
        }
        *self.live.borrow_mut() = None;
        let (c, took) = Conn::open(&self.dial, self.windows, &self.shaking).await?;
        *self.live.borrow_mut() = Some(c.clone());
        self.opened.set(Some(took));
        Ok(c)
    }
}

/// One stream's worth of state: the connection it uses and its answer buffers.
#[derive(Debug)]
pub struct H2Lane {
    slot: Rc<Slot>,
    /// Without keep-alive: the connection of the next request, opened by [`H2Lane::open_own`].
    own: Option<Link>,
    /// How long opening its connection took, when the request under way opened one.
    opened: Option<Duration>,
    /// A TLS handshake of this lane's own connection is under way (still set: given up).
    shaking: Cell<bool>,
    body: Vec<u8>,
    content_type: Vec<u8>,
    /// The last answer's head, when its request asked for it ([`H2Lane::send_parts`]).
    head: Vec<u8>,
    /// Where each of `head`'s fields lies, for the answer's `headers`.
    fields: Vec<crate::wire::HeaderAt>,
}

impl H2Lane {
    pub fn new(slot: Rc<Slot>) -> H2Lane {
        H2Lane {
            slot,
            own: None,
            opened: None,
            shaking: Cell::new(false),
            body: Vec::new(),
            content_type: Vec::new(),
            head: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Puts the lane on another connection (a pooled lane keeps its buffers).
    pub fn move_to(&mut self, slot: Rc<Slot>) {
        self.slot = slot;
    }

    /// Connects the slot now (used before the clock starts, and by each request with
    /// keep-alive: the one that finds the connection gone opens it again).
    pub async fn connect(&mut self) -> Result<(), ErrorKind> {
        self.slot.get().await?;
        if let Some(took) = self.slot.opened.take() {
            self.opened = Some(took);
        }
        Ok(())
    }

    /// Whether a request can go at once: its connection is up (the slot's, or with
    /// `keepalive` off the one of its own opened for it).
    pub fn is_open(&self, keepalive: bool) -> bool {
        if keepalive { self.slot.is_live() } else { self.own.is_some() }
    }

    /// Without keep-alive: opens the next request's connection of its own now (so that its
    /// caller can bound the connect apart from the exchange).
    pub async fn open_own(&mut self) -> Result<(), ErrorKind> {
        if self.own.is_none() {
            let (link, took) = Conn::open(&self.slot.dial, self.slot.windows, &self.shaking).await?;
            self.own = Some(link);
            self.opened = Some(took);
        }
        Ok(())
    }

    /// Gives up the connection this lane uses (its slot's, which only this lane uses when it
    /// is given up per iteration, and one of its own); the next request opens a new one.
    pub fn close(&mut self) {
        self.slot.close();
        self.own = None;
    }

    /// How long opening its connection took, when the last request opened it (taken once).
    pub fn take_opened(&mut self) -> Option<Duration> {
        self.opened.take()
    }

    /// Whether a TLS handshake this lane waited on was given up in the middle; the flag is
    /// cleared (and the attempt counted once).
    pub fn gave_up_handshake(&self) -> bool {
        let own = self.shaking.replace(false);
        let shared = self.slot.shaking.replace(false);
        if own || shared {
            self.slot.dial.stalled();
        }
        own || shared
    }

    /// Sends one request; `keepalive == false` uses a connection of its own (the tests'; the
    /// engine's [`crate::transport::Lane`] calls [`H2Lane::send_parts`]).
    #[cfg(test)]
    pub fn send<'l>(
        &'l mut self,
        req: &crate::wire::Prepared,
        grpc: bool,
        keepalive: bool,
    ) -> impl Future<Output = Result<Answer<'l>, ErrorKind>> {
        // [`H2Lane::send_parts`]'s own future, not one wrapped around it (see `Lane::send`).
        self.send_parts(&req.h2_head, &req.body, grpc, keepalive, false)
    }

    /// Sends a request given as its header block and body (a scenario file's, written for
    /// this exchange); with `keep_head` the answer's `head` holds its head and trailers as
    /// HTTP/1.1 text (`HTTP/2 200`, then `name:value` lines), for `header` queries.
    pub async fn send_parts(
        &mut self,
        head: &[u8],
        body: &Bytes,
        grpc: bool,
        keepalive: bool,
        keep_head: bool,
    ) -> Result<Answer<'_>, ErrorKind> {
        let mut retried = false;
        let done = loop {
            // A connection of its own ends when the exchange drops the last handle.
            let conn = if keepalive {
                let link = self.slot.get().await?;
                if let Some(took) = self.slot.opened.take() {
                    self.opened = Some(took);
                }
                link
            } else if let Some(own) = self.own.take() {
                own
            } else {
                let (link, took) = Conn::open(&self.slot.dial, self.slot.windows, &self.shaking).await?;
                self.opened = Some(took);
                link
            };
            let answer_head = keep_head.then_some(&mut self.head);
            match conn.exchange(head, body, &mut self.body, &mut self.content_type, answer_head).await {
                Ok(done) => break done,
                // A stream the server refused or dropped unprocessed (REFUSED_STREAM,
                // GOAWAY) is safe to send again, once, on a new connection.
                Err(fail) if fail.unprocessed && !retried => retried = true,
                Err(fail) => return Err(fail.kind),
            }
        };
        // The verifier's rule too: 200 without a `grpc-status` is malformed.
        if grpc && done.status == 200 && done.grpc_status.is_none() {
            return Err(ErrorKind::Protocol);
        }
        if keep_head {
            crate::wire::index_head(&self.head, &mut self.fields);
        }
        let body = if grpc { grpc_message(&self.body)? } else { &self.body[..] };
        Ok(Answer {
            status: done.status,
            content_type: (!self.content_type.is_empty()).then_some(&self.content_type[..]),
            body,
            received: done.received,
            grpc_status: done.grpc_status,
            head: if keep_head { &self.head } else { &[] },
            headers: if keep_head { &self.fields } else { &[] },
            marks: &crate::wire::Marks::NONE,
            reparsed: None,
        })
    }
}

/// A request's HPACK header block, valid on any connection (see [`hpack::encode_request`]).
/// `headers` must not hold connection-specific fields (`Host`, `Connection`, ...).
pub fn request_head(method: &http::Method, authority: &str, path: &str, headers: &http::HeaderMap) -> Bytes {
    let path = if path.is_empty() { "/" } else { path };
    let fields: Vec<(&str, &[u8])> = headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes())).collect();
    Bytes::from(hpack::encode_request(method.as_str(), authority, path, &fields))
}

/// The message inside a unary gRPC answer's single frame (empty for none).
pub fn grpc_message(body: &[u8]) -> Result<&[u8], ErrorKind> {
    if body.is_empty() {
        return Ok(body);
    }
    if body.len() < 5 || body[0] != 0 {
        return Err(ErrorKind::Protocol); // truncated, or compressed although we accept none
    }
    let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    body.get(5..5 + len).ok_or(ErrorKind::Protocol)
}

/// The 5-byte gRPC frame around a message.
pub fn grpc_frame(message: &[u8]) -> Bytes {
    let mut framed = Vec::with_capacity(5 + message.len());
    put_grpc_frame(&mut framed, message);
    Bytes::from(framed)
}

/// [`grpc_frame`], appended to `out` (a buffer kept between requests).
pub fn put_grpc_frame(out: &mut impl bytes::BufMut, message: &[u8]) {
    out.put_u8(0);
    out.put_u32(message.len() as u32);
    out.put_slice(message);
}
