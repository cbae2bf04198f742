//! Scenario files over HTTP/2 cleartext (`protocol = "h2c"`) and gRPC
//! (`protocol = "grpc"`): a rendered request written as an h2c header block
//! and body for the engine's own h2c client (`crate::h2c`), and the answer
//! shown to the file's checks.
//!
//! - h2c: the request as the file writes it, its header names in lower case,
//!   less the fields HTTP/2 forbids (`Host` becomes `:authority`;
//!   `Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`,
//!   `Upgrade` are left out). The answer's head and trailers are kept as text,
//!   so `header` queries see them as on HTTP/1.1.
//! - gRPC: the JSON body encoded as the method's input ([`super::Calls`]),
//!   in the 5-byte frame, with `content-type: application/grpc` and
//!   `te: trailers`. A reply whose `grpc-status` is not 0 is an error of kind
//!   `grpc_<code>`, as the built-in gRPC path counts it, unless the request's
//!   checks read `grpc-status` themselves; otherwise the checks see the reply
//!   decoded to proto3 JSON as the body (decoded only when one of them reads
//!   the body).

use bytes::{BufMut as _, BytesMut};
use stackbench_hurl::{Entry, Protocol};
use stackbench_record::ErrorKind;

use super::{Answered, Calls, FileSource, IterState, Unsent, Verdict};
use crate::h2c::{hpack, put_grpc_frame};
use crate::wire::{Answer, Outgoing};

/// Buffers an h2c or gRPC user keeps between iterations.
#[derive(Debug, Default)]
pub(super) struct Buffers {
    /// The reply decoded to JSON.
    json: Vec<u8>,
    /// A header's name in lower case.
    name: String,
    /// The request's header block, lent to the exchange.
    head: Vec<u8>,
    /// The request's body (gRPC: framed) is split off here as shared bytes, which the
    /// connection holds until its flow control lets the body go; once it has, the next
    /// request takes the buffer back (no allocation per request).
    body: BytesMut,
}

/// Fields a client must not send on HTTP/2 (RFC 9113 §8.2.2), and `Host`, which is `:authority`.
const DROPPED: [&str; 6] =
    ["host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];

/// The value of the `Host` line of a rendered request's header lines, if it has one.
fn host_field(headers: &[u8]) -> Option<&str> {
    let mut host = None;
    for_each_line(headers, |name, value| {
        if host.is_none() && name.eq_ignore_ascii_case("host") {
            host = std::str::from_utf8(value).ok();
        }
    });
    host
}

/// Calls `f` with the name (trimmed) and value (trimmed) of each of a rendered request's
/// header lines (`Name: value\r\n`).
fn for_each_line<'h>(headers: &'h [u8], mut f: impl FnMut(&'h str, &'h [u8])) {
    for line in headers.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let Ok(name) = std::str::from_utf8(&line[..colon]) else { continue };
        f(name.trim(), line[colon + 1..].trim_ascii());
    }
}

/// Calls `f` with each field of a rendered request's header lines (`Name: value\r\n`) that
/// goes on HTTP/2: the forbidden ones left out and, for gRPC, `content-type` and `te`, which a
/// call sets itself (a JSON body's default content type is not the message's). Names as written.
pub fn for_each_field<'h>(headers: &'h [u8], grpc: bool, mut f: impl FnMut(&'h str, &'h [u8])) {
    for_each_line(headers, |name, value| {
        let own = grpc && (name.eq_ignore_ascii_case("content-type") || name.eq_ignore_ascii_case("te"));
        if own || DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            return;
        }
        f(name, value);
    });
}

impl IterState {
    /// Writes `entry` (request `i` of flow `flow`) as an h2c request or gRPC call.
    pub(super) fn h2_request(
        &mut self,
        src: &FileSource,
        (flow, i): (usize, usize),
        entry: &Entry,
    ) -> Result<Outgoing<'_>, Unsent> {
        entry.render(&mut self.vars, &mut self.req).map_err(|e| Unsent::from(e.why))?;
        super::urls::path_into(&src.routes, &self.req.url, &mut self.path).map_err(Unsent::Url)?;
        let grpc = src.scenario.protocol == Protocol::Grpc;
        let body = &mut self.h2.body;
        body.clear();
        match src.calls.as_ref().filter(|_| grpc) {
            Some(c) => {
                let m = c.flows[flow][i];
                let message = c.encode(m, &self.req.body).map_err(|why| {
                    Unsent::Message(format!(
                        "{}:{}: the message is {why}",
                        src.scenario.flows[flow].hurl.file, entry.pos
                    ))
                })?;
                put_grpc_frame(body, &message);
            }
            None => body.put_slice(&self.req.body),
        }
        let body = body.split().freeze();
        if !self.jar.is_empty() {
            let path = std::str::from_utf8(&self.path).unwrap_or("/");
            stackbench_hurl::add_cookies(&self.jar, &mut self.req, &self.host, path, self.tls);
        }
        let path = std::str::from_utf8(&self.path).unwrap_or("/");
        let agent = concat!("stackbench/", env!("CARGO_PKG_VERSION"));
        let own: [(&str, &[u8]); 3] =
            [("user-agent", agent.as_bytes()), ("content-type", b"application/grpc"), ("te", b"trailers")];
        let own = &own[..if grpc { 3 } else { 1 }];
        let head = &mut self.h2.head;
        head.clear();
        // The file's `Host` is the request's `:authority` (the target's otherwise).
        let authority = Some(&self.req.headers)
            .filter(|_| entry.own_host())
            .and_then(|h| host_field(h))
            .unwrap_or(&self.authority);
        hpack::encode_request_into(head, &entry.method, authority, path, own);
        // Each field of the file's, its name lower-cased (into one buffer kept between requests).
        let name = &mut self.h2.name;
        for_each_field(&self.req.headers, grpc, |n, value| {
            name.clear();
            name.extend(n.chars().map(|c| c.to_ascii_lowercase()));
            hpack::put_literal(head, name.as_bytes(), value);
        });
        let size = crate::h2c::wire_size(head, &body);
        Ok(Outgoing::H2 { head, body, grpc, size })
    }

    /// Checks an answer to request `i` of flow `flow` (as [`IterState::verdict`] does over HTTP/1.1; for
    /// gRPC, its `grpc-status` first and its reply as JSON).
    pub(super) fn h2_check(
        &mut self,
        src: &FileSource,
        (flow, i): (usize, usize),
        entry: &Entry,
        answer: &Answer<'_>,
        asserts: bool,
    ) -> Verdict {
        let compiled = &src.compiled[flow][i];
        let Some(c) = src.calls.as_ref().filter(|_| src.scenario.protocol == Protocol::Grpc) else {
            return self.judge(compiled, entry, &Answered::new(answer), asserts);
        };
        let captures = entry.response.as_ref().is_some_and(|r| !r.captures.is_empty());
        if let Some(code) = answer.grpc_status.filter(|&c| c != 0)
            && !Calls::checks_grpc_status(entry)
        {
            return Verdict { result: Err(ErrorKind::Grpc(code)), capture_failed: captures };
        }
        let mut json = std::mem::take(&mut self.h2.json);
        json.clear();
        if Calls::reads_body(entry)
            && answer.grpc_status == Some(0)
            && c.decode_json(c.flows[flow][i], answer.body, &mut json).is_err()
        {
            self.h2.json = json;
            return Verdict { result: Err(ErrorKind::Protocol), capture_failed: captures };
        }
        let decoded = Answer { body: &json, ..*answer };
        let verdict = self.judge(compiled, entry, &Answered::new(&decoded), asserts);
        self.h2.json = json;
        verdict
    }
}

#[cfg(test)]
mod tests;
