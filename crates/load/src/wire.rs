//! What goes on the wire and comes back, shared by every transport: a
//! request built once ([`Prepared`]), the one HTTP/1.1 request writer
//! ([`http1_request`], [`write_http1_request`]) and an answer as read
//! ([`Answer`]). A leaf: `transport`, `http1`, `h2c` and `flow` build on it.

use std::fmt::Write as _;

use bytes::{Bytes, BytesMut};
use stackbench_scenarios::check::Expect;

/// One request, built once before the run.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The whole HTTP/1.1 request (head and body).
    pub wire: Bytes,
    pub method: http::Method,
    /// The h2 header block (HPACK, pseudo-headers included), see `h2c::request_head`.
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
    /// HTTP/1.1: the answer's head as received (status line and headers); empty on h2c.
    pub head: &'a [u8],
}

/// One HTTP/1.1 request as it goes on the wire: the request line in origin form (RFC 9112
/// §3.2.1: a path, never the absolute URL, to an origin server), `Host`, the stackbench
/// `User-Agent`, the content type and `extra` headers, the framing, then the body. The one
/// request writer: the load engine's request pool, `verify` and the readiness probe all use it
/// (through [`write_http1_request`], as scenario files do per request).
pub fn http1_request(
    method: &http::Method,
    authority: &str,
    path: &str,
    content_type: Option<&str>,
    extra: &[(http::HeaderName, http::HeaderValue)],
    body: &[u8],
    keepalive: bool,
) -> Vec<u8> {
    let mut lines = Vec::new();
    if let Some(ct) = content_type {
        lines.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
    }
    for (k, v) in extra {
        lines.extend_from_slice(format!("{k}: {}\r\n", String::from_utf8_lossy(v.as_bytes())).as_bytes());
    }
    let mut out = BytesMut::new();
    write_http1_request(&mut out, method.as_str(), authority, path.as_bytes(), &lines, body, keepalive);
    out.to_vec()
}

/// Appends one HTTP/1.1 request to `out` without allocating beyond `out`'s growth:
/// `headers` are whole `Name: value\r\n` lines, written after `Host` and `User-Agent`.
/// `Content-Length` goes with a body, and with POST, PUT and PATCH always.
pub fn write_http1_request(
    out: &mut BytesMut,
    method: &str,
    authority: &str,
    path: &[u8],
    headers: &[u8],
    body: &[u8],
    keepalive: bool,
) {
    let path: &[u8] = if path.is_empty() { b"/" } else { path };
    out.extend_from_slice(method.as_bytes());
    out.extend_from_slice(b" ");
    out.extend_from_slice(path);
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(authority.as_bytes());
    out.extend_from_slice(
        concat!("\r\nUser-Agent: stackbench/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes(),
    );
    out.extend_from_slice(headers);
    if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    if !keepalive {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}
