//! How a request is sent: the pre-built request pool ([`Prepared`]), one
//! [`Lane`] (a place one request at a time goes through: an HTTP/1.1
//! connection, or a stream slot on a shared h2c connection) and the
//! per-worker [`Pool`] of lanes. The worker loop talks only to these, so every
//! schedule drives every transport through the same code.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use stackbench_record::ErrorKind;
use stackbench_scenarios::check::Expect;

use crate::h2c::{self, H2Lane, Slot};
use crate::http1::Http1Conn;
use crate::spec::{LoadSpec, RequestSource, Transport};

/// One request, built once before the run.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The whole HTTP/1.1 request (head and body).
    pub wire: Bytes,
    pub method: http::Method,
    /// The h2 header block (HPACK, pseudo-headers included), see [`h2c::request_head`].
    pub h2_head: Bytes,
    /// Body as sent (gRPC: framed).
    pub body: Bytes,
    /// What the answer must be, when the scenario checks it.
    pub expect: Option<Expect>,
    /// Octets this request puts on the wire with the spec's transport (the
    /// HTTP/1.1 text, or the h2 HEADERS, CONTINUATION and DATA frames).
    pub sent_size: u64,
}

/// What came back. Borrowed from the lane's buffers until the next request.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub status: u16,
    pub content_type: Option<&'a [u8]>,
    /// The body (gRPC: the message, unframed).
    pub body: &'a [u8],
    /// Bytes received for this answer.
    pub received: u64,
    /// gRPC only: the `grpc-status`.
    pub grpc_status: Option<u16>,
}

/// Builds the request pool of a spec.
pub fn prepare(spec: &LoadSpec) -> Arc<[Prepared]> {
    let t = &spec.target;
    let grpc = spec.transport == Transport::Grpc;
    let build = |method: &http::Method,
                 path: &str,
                 content_type: Option<&str>,
                 extra: &[(http::HeaderName, http::HeaderValue)],
                 body: &Bytes,
                 expect: Option<Expect>| {
        let body = if grpc { h2c::grpc_frame(body) } else { body.clone() };
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: stackbench/{}\r\n",
            t.authority,
            env!("CARGO_PKG_VERSION")
        );
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(concat!("stackbench/", env!("CARGO_PKG_VERSION"))),
        );
        if let Some(ct) = content_type {
            let _ = write!(head, "Content-Type: {ct}\r\n");
            headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_str(ct).expect("static content types"),
            );
        }
        if grpc {
            headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
        }
        for (k, v) in extra {
            let _ = write!(head, "{k}: {}\r\n", String::from_utf8_lossy(v.as_bytes()));
            headers.append(k.clone(), v.clone());
        }
        if !body.is_empty() || matches!(*method, http::Method::POST | http::Method::PUT | http::Method::PATCH)
        {
            let _ = write!(head, "Content-Length: {}\r\n", body.len());
        }
        if !spec.keepalive {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut wire = head.into_bytes();
        wire.extend_from_slice(&body);
        let h2_head = h2c::request_head(method, &t.authority, path, &headers);
        let sent_size = match spec.transport {
            Transport::Http1 => wire.len() as u64,
            Transport::H2c | Transport::Grpc => h2c::wire_size(&h2_head, &body),
        };
        Prepared { wire: Bytes::from(wire), method: method.clone(), h2_head, body, expect, sent_size }
    };
    match &spec.requests {
        RequestSource::Fixed { method, headers, body } => {
            vec![build(method, &t.path, None, headers, body, None)].into()
        }
        RequestSource::Scenario { generator, .. } => {
            let extra: Vec<_> = Vec::new();
            generator
                .requests()
                .iter()
                .map(|r| {
                    let method = match r.method {
                        stackbench_scenarios::generate::Method::Get => http::Method::GET,
                        stackbench_scenarios::generate::Method::Post => http::Method::POST,
                    };
                    build(&method, &r.path, r.content_type, &extra, &r.body, Some(r.expect.clone()))
                })
                .collect()
        }
    }
}

/// Where one request at a time goes.
#[derive(Debug)]
pub enum Lane {
    Http1(Http1Conn),
    H2(H2Lane),
}

impl Lane {
    /// Opens the lane's connection now (before the clock starts); failures
    /// are left for the first request to meet and count.
    pub async fn connect(&mut self) {
        let _ = match self {
            Lane::Http1(c) => c.connect().await,
            Lane::H2(l) => l.connect().await,
        };
    }

    pub async fn send(
        &mut self,
        req: &Prepared,
        transport: Transport,
        keepalive: bool,
    ) -> Result<Answer<'_>, ErrorKind> {
        match self {
            Lane::Http1(c) => c.send(&req.wire, req.method == http::Method::HEAD, keepalive).await,
            Lane::H2(l) => l.send(req, transport == Transport::Grpc, keepalive).await,
        }
    }
}

/// A worker's connections.
#[derive(Debug)]
pub enum Pool {
    /// Idle HTTP/1.1 connections (the open model takes and returns them; it
    /// opens a new one when none is idle).
    Http1 { addr: SocketAddr, idle: RefCell<Vec<Http1Conn>> },
    /// Shared h2c connections; lanes are handed out round-robin.
    H2 { slots: Vec<Rc<Slot>>, next: std::cell::Cell<usize> },
}

impl Pool {
    pub fn new(addr: SocketAddr, transport: Transport, connections: usize) -> Pool {
        match transport {
            Transport::Http1 => Pool::Http1 { addr, idle: RefCell::new(Vec::new()) },
            Transport::H2c | Transport::Grpc => Pool::H2 {
                slots: (0..connections.max(1)).map(|_| Slot::new(addr)).collect(),
                next: std::cell::Cell::new(0),
            },
        }
    }

    /// A lane: an idle or new HTTP/1.1 connection, or a stream on the next h2c connection.
    pub fn take(&self) -> Lane {
        match self {
            Pool::Http1 { addr, idle } => {
                Lane::Http1(idle.borrow_mut().pop().unwrap_or_else(|| Http1Conn::new(*addr)))
            }
            Pool::H2 { slots, next } => {
                let i = next.get();
                next.set((i + 1) % slots.len());
                Lane::H2(H2Lane::new(Rc::clone(&slots[i])))
            }
        }
    }

    /// Returns a lane for reuse.
    pub fn give_back(&self, lane: Lane) {
        if let (Pool::Http1 { idle, .. }, Lane::Http1(c)) = (self, lane) {
            idle.borrow_mut().push(c);
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
