//! HTTP/2 over cleartext TCP with prior knowledge (h2c), and gRPC unary calls
//! on top of it, with the `h2` crate.
//!
//! A [`Slot`] is one connection shared by the lanes (streams) of one worker
//! thread; it reconnects when the connection dies (the first lane to notice
//! reconnects, the others wait on the slot's lock). Windows are raised to
//! 16 MiB per stream and 64 MiB per connection so flow control never
//! throttles a benchmark, and received data is released as it is read.
//!
//! gRPC (the wire format of grpc.io's "gRPC over HTTP2" spec): the request
//! body is the 5-byte frame header (compressed flag 0, big-endian length) and
//! the message; the answer's `grpc-status` comes from the trailers, or from
//! the headers of a trailers-only answer. A non-zero status is an error of
//! kind `grpc_<code>`; a missing one is a protocol error.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

use bytes::Bytes;
use h2::client::SendRequest;
use stackbench_record::ErrorKind;

use crate::http1::connect;
use crate::transport::{Answer, Prepared};

const STREAM_WINDOW: u32 = 16 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 64 * 1024 * 1024;

/// One shared h2c connection of a worker thread.
#[derive(Debug)]
pub struct Slot {
    addr: SocketAddr,
    /// The live connection and its generation (bumped at every reconnect).
    live: RefCell<Option<(u64, SendRequest<Bytes>)>>,
    generation: std::cell::Cell<u64>,
    connecting: tokio::sync::Mutex<()>,
}

impl Slot {
    pub fn new(addr: SocketAddr) -> Rc<Slot> {
        Rc::new(Slot {
            addr,
            live: RefCell::new(None),
            generation: std::cell::Cell::new(0),
            connecting: tokio::sync::Mutex::new(()),
        })
    }

    /// The live connection, connecting first if there is none.
    pub async fn get(&self) -> Result<(u64, SendRequest<Bytes>), ErrorKind> {
        if let Some(live) = self.live.borrow().clone() {
            return Ok(live);
        }
        let _guard = self.connecting.lock().await;
        if let Some(live) = self.live.borrow().clone() {
            return Ok(live);
        }
        let send = handshake(self.addr).await?;
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        *self.live.borrow_mut() = Some((generation, send.clone()));
        Ok((generation, send))
    }

    /// Forgets connection `generation` after it failed (a later one is kept).
    fn failed(&self, generation: u64) {
        let mut live = self.live.borrow_mut();
        if live.as_ref().is_some_and(|(g, _)| *g == generation) {
            *live = None;
        }
    }
}

/// Opens an h2c connection and drives it on the worker's local task set.
async fn handshake(addr: SocketAddr) -> Result<SendRequest<Bytes>, ErrorKind> {
    let tcp = connect(addr).await?;
    let (send, conn) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_concurrent_reset_streams(1024)
        .handshake::<_, Bytes>(tcp)
        .await
        .map_err(|e| h2_kind(&e))?;
    tokio::task::spawn_local(async move {
        // Errors surface on the streams; the task just ends with the connection.
        let _ = conn.await;
    });
    Ok(send)
}

/// One stream's worth of state: the connection it uses and its answer buffer.
#[derive(Debug)]
pub struct H2Lane {
    slot: Rc<Slot>,
    body: Vec<u8>,
    content_type: Vec<u8>,
}

impl H2Lane {
    pub fn new(slot: Rc<Slot>) -> H2Lane {
        H2Lane { slot, body: Vec::new(), content_type: Vec::new() }
    }

    /// Connects the slot now (used before the clock starts).
    pub async fn connect(&self) -> Result<(), ErrorKind> {
        self.slot.get().await.map(drop)
    }

    /// Sends one request; `keepalive == false` uses a connection of its own.
    pub async fn send(
        &mut self,
        req: &Prepared,
        grpc: bool,
        keepalive: bool,
    ) -> Result<Answer<'_>, ErrorKind> {
        let mut retried = false;
        let outcome = loop {
            let (generation, send) =
                if keepalive { self.slot.get().await? } else { (0, handshake(self.slot.addr).await?) };
            match exchange(send, req, grpc, &mut self.body, &mut self.content_type).await {
                Ok(ok) => break ok,
                Err(fail) => {
                    if fail.broken && keepalive {
                        self.slot.failed(generation);
                    }
                    // A stream the server refused or dropped unprocessed (REFUSED_STREAM,
                    // graceful GOAWAY) is safe to send again, once, on a new connection.
                    if fail.unprocessed && !retried {
                        retried = true;
                        continue;
                    }
                    return Err(fail.kind);
                }
            }
        };
        let (status, received, grpc_status) = outcome;
        let body = if grpc { grpc_message(&self.body)? } else { &self.body[..] };
        Ok(Answer {
            status,
            content_type: (!self.content_type.is_empty()).then_some(&self.content_type[..]),
            body,
            received,
            grpc_status,
        })
    }
}

/// How an exchange failed.
struct Fail {
    kind: ErrorKind,
    /// The connection is unusable.
    broken: bool,
    /// The server did not process the request.
    unprocessed: bool,
}

impl Fail {
    fn of(e: &h2::Error, sent: bool) -> Fail {
        let graceful = e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR);
        Fail {
            kind: h2_kind(e),
            broken: e.is_io() || e.is_go_away() || e.reason().is_none(),
            unprocessed: !sent || graceful || e.reason() == Some(h2::Reason::REFUSED_STREAM),
        }
    }
}

/// One request/answer exchange. On failure, also says whether the connection is broken.
async fn exchange(
    send: SendRequest<Bytes>,
    req: &Prepared,
    grpc: bool,
    body: &mut Vec<u8>,
    content_type: &mut Vec<u8>,
) -> Result<(u16, u64, Option<u16>), Fail> {
    // Every exchange has its own fresh clone of the connection's handle, so no
    // earlier stream of this handle can be pending: `ready()` (a lock and a
    // wake-up per request) is not needed; h2 queues a stream beyond the
    // server's concurrency limit by itself.
    let mut send = send;
    let fail = |e: h2::Error| Fail::of(&e, true);
    let mut request = http::Request::new(());
    *request.method_mut() = req.method.clone();
    *request.uri_mut() = req.uri.clone();
    *request.headers_mut() = req.headers.clone();
    let (response, mut stream) =
        send.send_request(request, req.body.is_empty()).map_err(|e| Fail::of(&e, false))?;
    if !req.body.is_empty() {
        stream.send_data(req.body.clone(), true).map_err(fail)?;
    }
    let response = response.await.map_err(fail)?;
    let (parts, mut recv) = response.into_parts();
    let mut received = head_bytes(&parts.headers);
    content_type.clear();
    if let Some(ct) = parts.headers.get(http::header::CONTENT_TYPE) {
        content_type.extend_from_slice(ct.as_bytes());
    }
    body.clear();
    while let Some(chunk) = recv.data().await {
        let chunk = chunk.map_err(fail)?;
        body.extend_from_slice(&chunk);
        received += chunk.len() as u64;
        let _ = recv.flow_control().release_capacity(chunk.len());
    }
    let mut grpc_status = None;
    if grpc {
        grpc_status = grpc_status_of(&parts.headers);
        if let Some(trailers) = recv.trailers().await.map_err(fail)? {
            received += head_bytes(&trailers);
            grpc_status = grpc_status.or_else(|| grpc_status_of(&trailers));
        }
        if grpc_status.is_none() && parts.status == http::StatusCode::OK {
            return Err(Fail { kind: ErrorKind::Protocol, broken: false, unprocessed: false });
        }
    }
    Ok((parts.status.as_u16(), received, grpc_status))
}

/// Header bytes as decoded (HPACK compression and frame overhead not counted).
fn head_bytes(h: &http::HeaderMap) -> u64 {
    h.iter().map(|(k, v)| (k.as_str().len() + v.len() + 4) as u64).sum()
}

fn grpc_status_of(h: &http::HeaderMap) -> Option<u16> {
    h.get("grpc-status").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
}

/// The message inside a unary gRPC answer's single frame (empty for none).
fn grpc_message(body: &[u8]) -> Result<&[u8], ErrorKind> {
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
    framed.push(0);
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    Bytes::from(framed)
}

/// The error kind of an h2 failure.
fn h2_kind(e: &h2::Error) -> ErrorKind {
    if e.is_io() {
        return match e.get_io().map(std::io::Error::kind) {
            Some(std::io::ErrorKind::ConnectionRefused) => ErrorKind::Connect,
            _ => ErrorKind::Reset,
        };
    }
    match e.reason() {
        Some(h2::Reason::REFUSED_STREAM | h2::Reason::CANCEL | h2::Reason::NO_ERROR) => ErrorKind::Reset,
        _ if e.is_go_away() => ErrorKind::Reset,
        _ => ErrorKind::Protocol,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_frames_round_trip() {
        let framed = grpc_frame(b"\x0a\x02\x01\x02");
        assert_eq!(&framed[..5], &[0, 0, 0, 0, 4]);
        assert_eq!(grpc_message(&framed), Ok(&b"\x0a\x02\x01\x02"[..]));
        assert_eq!(grpc_message(&framed[..6]), Err(ErrorKind::Protocol));
        assert_eq!(grpc_message(b""), Ok(&b""[..]));
        assert_eq!(grpc_message(&[1, 0, 0, 0, 0]), Err(ErrorKind::Protocol));
    }
}
