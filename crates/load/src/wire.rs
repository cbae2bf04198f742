//! What goes on the wire and comes back, shared by every transport: a
//! request built once ([`Prepared`]), the one HTTP/1.1 request writer
//! ([`http1_request`], [`write_http1_request`]) and an answer as read
//! ([`Answer`]). A leaf: `transport`, `http1`, `h2c` and `flow` build on it.

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
        // itoa, not `write!`: this runs per request for a scenario file.
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !keepalive {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// The `nth` value (0 first) of header `name` (any case) in an HTTP/1.1
/// answer's `head` as [`Answer::head`] holds it, trimmed of the whitespace
/// around it. The head was validated when it was read (no obsolete line
/// folding), so this only walks its lines: a scenario file's `header`
/// capture or assert costs a scan of a few hundred bytes, not a second parse.
pub fn header_value<'h>(head: &'h [u8], name: &str, nth: usize) -> Option<&'h [u8]> {
    header_values(head, name).nth(nth)
}

/// The first two values of header `name` (as [`header_value`]), in one walk of the head.
pub fn header_first_two<'h>(head: &'h [u8], name: &str) -> (Option<&'h [u8]>, Option<&'h [u8]>) {
    let mut values = header_values(head, name);
    (values.next(), values.next())
}

/// The values of header `name` in `head`, in order (see [`header_value`]).
fn header_values<'h, 'n>(head: &'h [u8], name: &'n str) -> impl Iterator<Item = &'h [u8]> + use<'h, 'n> {
    let name = name.as_bytes();
    // Every line after the status line; a header line is `name:value` with no
    // space before the colon (RFC 9112 §5.1, which httparse enforces).
    let mut start = memchr::memchr(b'\n', head).map_or(head.len(), |i| i + 1);
    std::iter::from_fn(move || {
        while start < head.len() {
            let end = memchr::memchr(b'\n', &head[start..]).map_or(head.len(), |i| start + i);
            let line = &head[start..end];
            start = end + 1;
            if line.len() > name.len()
                && line[name.len()] == b':'
                && line[..name.len()].eq_ignore_ascii_case(name)
            {
                let value = &line[name.len() + 1..];
                return Some(value.strip_suffix(b"\r").unwrap_or(value).trim_ascii());
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::{header_first_two, header_value};

    #[test]
    fn header_values_are_found_by_name_in_order() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nSet-Cookie: a=1\r\nset-cookie:b=2\r\nX-Empty:\r\n\r\n";
        assert_eq!(header_value(head, "content-type", 0), Some(&b"application/json"[..]));
        assert_eq!(header_value(head, "Set-Cookie", 0), Some(&b"a=1"[..]));
        assert_eq!(header_value(head, "SET-COOKIE", 1), Some(&b"b=2"[..]));
        assert_eq!(header_value(head, "set-cookie", 2), None);
        assert_eq!(header_value(head, "x-empty", 0), Some(&b""[..]));
        assert_eq!(header_value(head, "HTTP/1.1 200 OK", 0), None, "the status line is not a header");
        assert_eq!(header_value(head, "content", 0), None, "a prefix is not the name");
        assert_eq!(
            header_value(b"HTTP/1.1 204 No Content\nA: b\n\n", "a", 0),
            Some(&b"b"[..]),
            "bare LF lines"
        );
    }

    proptest::proptest! {
        /// The scan agrees with httparse on any head httparse accepts.
        #[test]
        fn agrees_with_httparse(names in proptest::collection::vec("[A-Za-z][A-Za-z0-9-]{0,6}", 0..6),
                                values in proptest::collection::vec("[ -~]{0,12}", 6), probe in "[A-Za-z][A-Za-z0-9-]{0,6}") {
            let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
            for (n, v) in names.iter().zip(&values) {
                head.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
            }
            head.extend_from_slice(b"\r\n");
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut resp = httparse::Response::new(&mut headers);
            if matches!(resp.parse(&head), Ok(httparse::Status::Complete(_))) {
                for nth in 0..3 {
                    let want = resp.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(&probe)).nth(nth).map(|h| h.value);
                    proptest::prop_assert_eq!(header_value(&head, &probe, nth), want);
                }
                let mut all = resp.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(&probe)).map(|h| h.value);
                proptest::prop_assert_eq!(header_first_two(&head, &probe), (all.next(), all.next()));
            }
        }
    }
}
