//! What goes on the wire and comes back, shared by every transport: a
//! request built once ([`Prepared`]), the one HTTP/1.1 request writer
//! ([`http1_request`], [`write_http1_request`]) and an answer as read
//! ([`Answer`]). A leaf: `transport`, `http1`, `h2c` and `flow` build on it.

use bytes::{BufMut, Bytes, BytesMut};
use stackbench_record::ErrorKind;

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
    /// Octets this request puts on the wire with the spec's transport (the
    /// HTTP/1.1 text, or the h2 HEADERS, CONTINUATION and DATA frames).
    pub sent_size: u64,
}

/// A scenario file's request, written for one exchange (`crate::flow`).
#[derive(Debug, Clone)]
pub enum Outgoing<'a> {
    /// The whole HTTP/1.1 request, lent by the iteration's buffer until the exchange ends
    /// (epoll writes it from there); `head_only` for a HEAD.
    Http1 { wire: &'a [u8], head_only: bool },
    /// The same, split off the buffer as shared bytes: io_uring holds a request until the
    /// kernel has sent it, even past an exchange dropped at its deadline.
    Http1Shared { wire: Bytes, head_only: bool },
    /// An h2c request: its HPACK header block (lent, as `Http1`'s bytes) and its body
    /// (gRPC: framed), and the octets their frames take (`h2c::wire_size`). The answer's
    /// head is kept for the file's `header` queries.
    H2 { head: &'a [u8], body: Bytes, grpc: bool, size: u64 },
}

/// A whole HTTP/1.1 request, as [`crate::Http1Conn::send`] takes it.
#[derive(Debug, Clone, Copy)]
pub enum Wire<'a> {
    /// Lent for the exchange; on io_uring, which must own what it sends, it goes as a copy.
    Lent(&'a [u8]),
    /// Shared; io_uring holds another reference to it.
    Shared(&'a Bytes),
}

impl Wire<'_> {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Wire::Lent(b) => b,
            Wire::Shared(b) => b,
        }
    }

    /// What io_uring holds until the kernel has sent it.
    pub fn held(&self) -> crate::uring::Held {
        match self {
            Wire::Lent(b) => crate::uring::Held::Vec(b.to_vec()),
            Wire::Shared(b) => crate::uring::Held::Bytes(Bytes::clone(b)),
        }
    }
}

impl Outgoing<'_> {
    /// Octets it puts on the wire.
    pub fn size(&self) -> u64 {
        match self {
            Outgoing::Http1 { wire, .. } => wire.len() as u64,
            Outgoing::Http1Shared { wire, .. } => wire.len() as u64,
            Outgoing::H2 { size, .. } => *size,
        }
    }
}

/// The most headers an HTTP/1.1 answer may have (the reader's and [`each_header`]'s bound).
pub(crate) const MAX_HEADERS: usize = 64;

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
    /// Where each header of `head` lies, in order: the h2c client's index of its head, or the
    /// HTTP/1.1 reader's when it places every header ([`Marks::placed`]); empty otherwise.
    pub headers: &'a [HeaderAt],
    /// Where the headers the checks ask for on every answer lie, when the reader noted it
    /// ([`Marks::NONE`] otherwise): held by the connection, so an answer carries a pointer, not
    /// the places.
    pub marks: &'a Marks,
    /// Set when a look-up had to parse `head` again (the reader noted the marks but did not
    /// place every header): the connection places them in its next answers.
    pub reparsed: Option<&'a std::cell::Cell<bool>>,
}

/// Where one header of an HTTP/1.1 answer lies in [`Answer::head`]: byte ranges
/// (start, end) of its name and its value, kept from the reader's parse so a
/// scenario file's header checks do not walk the head again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeaderAt {
    pub name: (u32, u32),
    pub value: (u32, u32),
}

/// Where `s`, a slice of the buffer that starts at address `base`, lies in it.
#[inline]
fn span(s: &[u8], base: usize) -> (u32, u32) {
    let at = s.as_ptr().addr().wrapping_sub(base) as u32;
    (at, at.wrapping_add(s.len() as u32))
}

impl HeaderAt {
    /// The header `h` of a head parsed from `buf`, by its place in `buf`.
    pub fn of(h: &httparse::Header<'_>, buf: &[u8]) -> HeaderAt {
        let base = buf.as_ptr().addr();
        // httparse's slices are `buf`'s (an empty value may point anywhere: its range is
        // empty, and one outside the head reads as empty, as `header_value` slices with
        // `get`).
        HeaderAt { name: span(h.name.as_bytes(), base), value: span(h.value, base) }
    }
}

/// Where the first two headers of the names a scenario file's checks ask for on every answer
/// lie in [`Answer::head`], noted in the HTTP/1.1 reader's one pass over them: `Set-Cookie`,
/// which the cookie jar looks up on every answer, `Content-Type` and `Content-Encoding`
/// (whether the body is its own text, which the compiled checks read in place). Looking up
/// either then costs a comparison of the name asked for, not a walk of the headers. Unless
/// `known` (a transport that does not note them: h2c; tests), the headers are walked.
///
/// The reader places every header ([`Answer::headers`]) only for a connection whose answers
/// were asked for another name ([`Answer::reparsed`]): until then a look-up of another name
/// parses the head again, and the usual answer, whose checks read only these names, costs
/// the notes alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marks {
    known: bool,
    /// Every header is placed in [`Answer::headers`].
    placed: bool,
    set_cookie: Mark,
    content_type: Mark,
    content_encoding: Mark,
}

/// The values of the first two headers of a name: their byte ranges in [`Answer::head`]
/// (`(0, 0)`: none; an empty value is `(1, 1)`, within any head).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mark([(u32, u32); 2]);

impl Mark {
    /// The values of the headers it marks in `answer`. Marks are known only for a head the
    /// HTTP/1.1 reader parsed, whose values httparse took without the blanks around them and
    /// refused any other byte `trim_ascii` takes off (a form feed): they are not trimmed again.
    #[inline]
    fn values<'a>(self, answer: &Answer<'a>) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        (Mark::value(self.0[0], answer), Mark::value(self.0[1], answer))
    }

    #[inline]
    fn value<'a>((start, end): (u32, u32), answer: &Answer<'a>) -> Option<&'a [u8]> {
        (end != 0).then(|| answer.head.get(start as usize..end as usize).unwrap_or_default())
    }

    /// Notes `value` (of a head in the buffer at address `base`), when its header is the
    /// name's first or second.
    #[inline]
    fn note(&mut self, value: &[u8], base: usize) {
        let at = if value.is_empty() { (1, 1) } else { span(value, base) };
        if self.0[0].1 == 0 {
            self.0[0] = at;
        } else if self.0[1].1 == 0 {
            self.0[1] = at;
        }
    }
}

impl Marks {
    /// Nothing noted: every look-up walks [`Answer::headers`] (h2c, and answers of tests).
    pub const NONE: Marks = Marks {
        known: false,
        placed: false,
        set_cookie: Mark([(0, 0); 2]),
        content_type: Mark([(0, 0); 2]),
        content_encoding: Mark([(0, 0); 2]),
    };

    /// Marks about to be noted by the reader's own pass over the names, which compares them
    /// anyway ([`Marks::set_cookie_at`], [`Marks::content_type_at`]); the headers not placed.
    pub fn noted() -> Marks {
        Marks { known: true, ..Marks::default() }
    }

    /// [`Marks::noted`], with every header of `headers`, parsed from `buf`, placed in `out`
    /// (cleared first).
    pub fn placed(headers: &[httparse::Header<'_>], buf: &[u8], out: &mut Vec<HeaderAt>) -> Marks {
        out.clear();
        out.extend(headers.iter().map(|h| HeaderAt::of(h, buf)));
        Marks { placed: true, ..Marks::noted() }
    }

    /// Notes `value` (in the buffer at address `base`), a `Set-Cookie`'s.
    #[inline]
    pub(crate) fn set_cookie_at(&mut self, value: &[u8], base: usize) {
        self.set_cookie.note(value, base);
    }

    /// Notes `value` (in the buffer at address `base`), a `Content-Type`'s.
    #[inline]
    pub(crate) fn content_type_at(&mut self, value: &[u8], base: usize) {
        self.content_type.note(value, base);
    }

    /// Notes `value` (in the buffer at address `base`), a `Content-Encoding`'s.
    #[inline]
    pub(crate) fn content_encoding_at(&mut self, value: &[u8], base: usize) {
        self.content_encoding.note(value, base);
    }

    /// The first two `Set-Cookie` values of `answer` (as [`header_first_two`]), read from its
    /// marks without comparing a name when they are known.
    #[inline]
    pub fn set_cookie<'a>(answer: &Answer<'a>) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        if answer.marks.known {
            return answer.marks.set_cookie.values(answer);
        }
        header_first_two(answer, "set-cookie")
    }

    /// The first `Content-Encoding` and `Content-Type` values of `answer` (as
    /// [`header_first_two`]), which say whether its body is its own text: read from its marks
    /// without comparing a name when they are known.
    #[inline]
    pub fn body_labels<'a>(answer: &Answer<'a>) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        if answer.marks.known {
            let m = *answer.marks;
            return (Mark::value(m.content_encoding.0[0], answer), Mark::value(m.content_type.0[0], answer));
        }
        (header_first_two(answer, "content-encoding").0, header_first_two(answer, "content-type").0)
    }

    /// The mark of header `name`, when it is a marked one and the marks are known.
    #[inline]
    fn of(self, name: &[u8]) -> Option<Mark> {
        if !self.known {
            return None;
        }
        match name.len() {
            10 if same_name(name, SET_COOKIE) => Some(self.set_cookie),
            12 if same_name(name, CONTENT_TYPE) => Some(self.content_type),
            16 if same_name(name, CONTENT_ENCODING) => Some(self.content_encoding),
            _ => None,
        }
    }
}

// As servers write them: [`same_name`] compares the words as they are before it folds case.
pub(crate) const SET_COOKIE: &[u8] = b"Set-Cookie";
pub(crate) const CONTENT_TYPE: &[u8] = b"Content-Type";
pub(crate) const CONTENT_ENCODING: &[u8] = b"Content-Encoding";

/// Where each `name:value` line of a head kept as text lies: the h2c client keeps an HTTP/2
/// answer's head and trailers so (`HTTP/2 200`, then one line per field) for a scenario
/// file's `header` queries, which look headers up in [`Answer::headers`]. The status line,
/// which has no colon, is passed over. `out` is cleared first and reused.
pub fn index_head(head: &[u8], out: &mut Vec<HeaderAt>) {
    out.clear();
    let mut start = 0usize;
    for line in head.split_inclusive(|&b| b == b'\n') {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if let Some(colon) = memchr::memchr(b':', text) {
            let span = |a: usize, b: usize| ((start + a) as u32, (start + b) as u32);
            out.push(HeaderAt { name: span(0, colon), value: span(colon + 1, text.len()) });
        }
        start += line.len();
    }
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
    write_http1_request(&mut out, method.as_str(), Some(authority), path.as_bytes(), &lines, body, keepalive);
    out.to_vec()
}

/// Appends one HTTP/1.1 request to `out` without allocating beyond `out`'s growth:
/// `headers` are whole `Name: value\r\n` lines, written after `Host` (`authority`; `None`
/// when `headers` hold the request's own) and `User-Agent`.
/// `Content-Length` goes with a body, and with POST, PUT and PATCH always. Written in the
/// pieces a scenario file's request is compiled from once per user (`crate::flow`), so the
/// two write the same bytes: [`write_http1_method`], the request target, [`write_http1_host`],
/// the header lines, [`write_http1_framing`], the body.
pub fn write_http1_request(
    out: &mut impl BufMut,
    method: &str,
    authority: Option<&str>,
    path: &[u8],
    headers: &[u8],
    body: &[u8],
    keepalive: bool,
) {
    write_http1_method(out, method);
    out.put_slice(request_target(path));
    write_http1_host(out, authority);
    out.put_slice(headers);
    write_http1_framing(out, method, body.len(), keepalive);
    out.put_slice(body);
}

/// The start of the request line: the method and a space.
pub fn write_http1_method(out: &mut impl BufMut, method: &str) {
    out.put_slice(method.as_bytes());
    out.put_slice(b" ");
}

/// A path as the request target in origin form: `/` for an empty one.
pub fn request_target(path: &[u8]) -> &[u8] {
    if path.is_empty() { b"/" } else { path }
}

/// What follows the request target: the protocol, `Host` (`None`: the request's own header
/// lines hold it, a scenario file's `Host:`) and the stackbench `User-Agent`.
pub fn write_http1_host(out: &mut impl BufMut, authority: Option<&str>) {
    out.put_slice(b" HTTP/1.1\r\n");
    if let Some(authority) = authority {
        out.put_slice(b"Host: ");
        out.put_slice(authority.as_bytes());
        out.put_slice(b"\r\n");
    }
    out.put_slice(concat!("User-Agent: stackbench/", env!("CARGO_PKG_VERSION"), "\r\n").as_bytes());
}

/// What follows the header lines: `Content-Length` (with a body, and with POST, PUT and
/// PATCH always), `Connection: close` without `keepalive`, and the blank line.
pub fn write_http1_framing(out: &mut impl BufMut, method: &str, body_len: usize, keepalive: bool) {
    if body_len != 0 || matches!(method, "POST" | "PUT" | "PATCH") {
        // itoa, not `write!`: this runs per request for a scenario file.
        out.put_slice(b"Content-Length: ");
        out.put_slice(itoa::Buffer::new().format(body_len).as_bytes());
        out.put_slice(b"\r\n");
    }
    if !keepalive {
        out.put_slice(b"Connection: close\r\n");
    }
    out.put_slice(b"\r\n");
}

/// The `nth` value (0 first) of header `name` (any case) of an HTTP/1.1
/// answer, trimmed of the whitespace around it, from the reader's parse
/// ([`Answer::marks`], [`Answer::headers`]): a scenario file's `header` capture or assert
/// costs a look at a few name lengths, not a second walk of the head.
pub fn header_value<'a>(answer: &Answer<'a>, name: &str, nth: usize) -> Option<&'a [u8]> {
    if nth < 2
        && let Some(mark) = answer.marks.of(name.as_bytes())
    {
        return Mark::value(mark.0[nth], answer);
    }
    let mut k = 0;
    let mut found = None;
    each_value(answer, name.as_bytes(), |v| {
        if k == nth {
            found = Some(v);
            return true;
        }
        k += 1;
        false
    });
    found
}

/// Whether `answer`, the first bytes a server sent on a cleartext connection, is a TLS
/// record (its content type an alert or a handshake, then version 3.x): a TLS server's answer
/// to a request it cannot read (rustls sends an alert), so the URL should be `https://`.
pub fn is_tls_record(answer: &[u8]) -> bool {
    matches!(answer, [0x15 | 0x16, 3, 0..=4, ..])
}

/// The error kind of an answer that could not be read, `kind`, unless its bytes are a TLS
/// record ([`is_tls_record`]).
pub fn unread_answer(answer: &[u8], kind: ErrorKind) -> ErrorKind {
    if is_tls_record(answer) { ErrorKind::TlsAnswer } else { kind }
}

/// The first two values of header `name` (as [`header_value`]), in one look.
/// A name the reader marked ([`Marks`]) is not looked for.
pub fn header_first_two<'a>(answer: &Answer<'a>, name: &str) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
    if let Some(mark) = answer.marks.of(name.as_bytes()) {
        return mark.values(answer);
    }
    let mut two = (None, None);
    each_value(answer, name.as_bytes(), |v| {
        if two.0.is_none() {
            two.0 = Some(v);
            return false;
        }
        two.1 = Some(v);
        true
    });
    two
}

/// Calls `f` with the name and value of each header of `head`, a head the HTTP/1.1 reader
/// took, in order, until it returns `true`: the head parsed again as the reader parsed it
/// (httparse's defaults, at most [`MAX_HEADERS`]), for a look-up of a name it did not mark on
/// a connection that does not place every header.
pub(crate) fn each_header<'a>(head: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8]) -> bool) {
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    if let Ok(httparse::Status::Complete(_)) =
        httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, head, &mut headers)
    {
        for h in &*resp.headers {
            if f(h.name.as_bytes(), h.value) {
                return;
            }
        }
    }
}

/// Calls `f` with each value of header `name` (any case), in order, trimmed of the
/// whitespace around it, until it returns `true`: from [`Answer::headers`] (a header whose
/// name is not as long is passed over without reading it), or from the head parsed again
/// when the reader noted its marks without placing every header (then said through
/// [`Answer::reparsed`]).
fn each_value<'a>(answer: &Answer<'a>, name: &[u8], mut f: impl FnMut(&'a [u8]) -> bool) {
    let head = answer.head;
    if answer.marks.known && !answer.marks.placed {
        if let Some(asked) = answer.reparsed {
            asked.set(true);
        }
        each_header(head, |n, v| same_name(n, name) && f(v.trim_ascii()));
        return;
    }
    for h in answer.headers {
        let (start, end) = (h.name.0 as usize, h.name.1 as usize);
        if end.wrapping_sub(start) == name.len()
            && head.get(start..end).is_some_and(|n| same_name(n, name))
            && f(value_of(head, h))
        {
            return;
        }
    }
}

/// The value of header `h` of `head`, trimmed of the whitespace around it.
#[inline]
fn value_of<'a>(head: &'a [u8], h: &HeaderAt) -> &'a [u8] {
    head.get(h.value.0 as usize..h.value.1 as usize).unwrap_or_default().trim_ascii()
}

/// `a.eq_ignore_ascii_case(b)`, eight bytes at a time: a header name looked up per answer
/// costs a few word operations instead of a case fold per byte, and none when the two words
/// are already equal (a name is usually asked for as the server writes it). Inlined: each
/// answer's head calls it per header, with a constant name of a known length.
#[inline]
pub(crate) fn same_name(a: &[u8], b: &[u8]) -> bool {
    /// `w` with its ASCII upper-case letters made lower case.
    fn lower(w: u64) -> u64 {
        const ONES: u64 = 0x0101_0101_0101_0101;
        let low7 = w & (0x7f * ONES);
        // High bit of each byte: at least `A`, and above `Z` (no carry across bytes: < 0x80).
        let from_a = low7 + (0x80 - u64::from(b'A')) * ONES;
        let past_z = low7 + (0x80 - u64::from(b'Z') - 1) * ONES;
        let upper = from_a & !past_z & !w & (0x80 * ONES);
        w | (upper >> 2)
    }
    /// Whether the eight bytes at `at` are the same but for case.
    fn same_at(a: &[u8], b: &[u8], at: usize) -> bool {
        let word = |s: &[u8]| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
        let (x, y) = (word(a), word(b));
        x == y || lower(x) == lower(y)
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.eq_ignore_ascii_case(b);
    }
    // Whole words, then the last eight bytes (overlapping the word before them).
    (0..n / 8).all(|i| same_at(a, b, 8 * i)) && same_at(a, b, n - 8)
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn a_tls_alert_or_handshake_record_is_told_apart_from_http() {
        use stackbench_record::ErrorKind;
        // rustls's answer to a cleartext request: a decode_error alert.
        assert!(super::is_tls_record(&[0x15, 3, 3, 0, 2, 2, 50]));
        assert!(super::is_tls_record(&[0x16, 3, 1, 0, 0x7a]));
        for not in [&b"HTTP/1.1 400 Bad Request\r\n"[..], b"", &[0x15, 3], &[0x17, 3, 3], &[0x15, 2, 0]] {
            assert!(!super::is_tls_record(not), "{not:?}");
        }
        assert_eq!(super::unread_answer(&[0x15, 3, 3, 0, 2, 2, 50], ErrorKind::Reset), ErrorKind::TlsAnswer);
        assert_eq!(super::unread_answer(b"HTTX", ErrorKind::Protocol), ErrorKind::Protocol);
    }

    use std::cell::Cell;

    use super::{Answer, HeaderAt, Marks, header_first_two, header_value};

    /// Which headers of `head` are marked, and where they lie when `place`, as the HTTP/1.1
    /// reader marks and places them; `None` when it refuses the head.
    pub(crate) fn headers_of(head: &[u8], place: bool) -> Option<(Vec<HeaderAt>, Marks)> {
        crate::http1::placed(head, place)
    }

    /// `head` parsed as the HTTP/1.1 reader parses it, its headers placed in `table` when
    /// `place`; a look-up that parses the head again sets `reparsed`.
    fn parsed<'a>(
        head: &'a [u8],
        table: &'a mut Vec<HeaderAt>,
        place: bool,
        reparsed: &'a Cell<bool>,
    ) -> Option<Answer<'a>> {
        let marks;
        (*table, marks) = headers_of(head, place)?;
        // A test's few answers: their marks live as long as the test binary.
        Some(answer(head, table, Box::leak(Box::new(marks)), Some(reparsed)))
    }

    /// A 200 answer of `head` without a body, its headers placed at `headers`.
    fn answer<'a>(
        head: &'a [u8],
        headers: &'a [HeaderAt],
        marks: &'a Marks,
        reparsed: Option<&'a Cell<bool>>,
    ) -> Answer<'a> {
        let (status, content_type, body, received, grpc_status) = (200, None, &[][..], 0, None);
        Answer { status, content_type, body, received, grpc_status, head, headers, marks, reparsed }
    }

    #[test]
    fn header_values_are_found_by_name_in_order() {
        for place in [true, false] {
            values_found_by_name(place);
        }
    }

    /// Only a look-up of a name the reader does not mark, on an answer whose headers it did
    /// not place, parses the head again, and says so.
    #[test]
    fn a_name_not_marked_is_found_in_the_head_parsed_again() {
        let head = b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Type: text/plain\r\nLocation: /x\r\n\r\n";
        for place in [true, false] {
            let (mut table, reparsed) = (Vec::new(), Cell::new(false));
            let a = parsed(head, &mut table, place, &reparsed).unwrap();
            assert_eq!(a.headers.len(), if place { 3 } else { 0 });
            assert_eq!(header_first_two(&a, "set-cookie"), (Some(&b"a=1"[..]), None));
            assert_eq!(header_value(&a, "Content-Type", 0), Some(&b"text/plain"[..]));
            assert!(!reparsed.get(), "a marked name is read from its marks");
            assert_eq!(header_value(&a, "location", 0), Some(&b"/x"[..]));
            assert_eq!(reparsed.get(), !place, "placed: {place}");
        }
    }

    fn values_found_by_name(place: bool) {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nSet-Cookie: a=1\r\nset-cookie:b=2\r\nSet-Cookie: c=3\r\nX-Empty:\r\nContent-Encoding:\r\n\r\n";
        let (mut table, reparsed) = (Vec::new(), Cell::new(false));
        let a = parsed(head, &mut table, place, &reparsed).unwrap();
        assert_eq!(header_value(&a, "content-type", 0), Some(&b"application/json"[..]));
        assert_eq!(header_value(&a, "Set-Cookie", 0), Some(&b"a=1"[..]));
        assert_eq!(header_value(&a, "SET-COOKIE", 1), Some(&b"b=2"[..]));
        assert_eq!(header_value(&a, "set-cookie", 2), Some(&b"c=3"[..]));
        assert_eq!(header_value(&a, "set-cookie", 3), None);
        assert_eq!(header_value(&a, "content-type", 1), None);
        assert_eq!(header_value(&a, "content-encoding", 0), Some(&b""[..]), "an empty value is a value");
        assert_eq!(Marks::body_labels(&a), (Some(&b""[..]), Some(&b"application/json"[..])));
        assert_eq!(header_first_two(&a, "set-cookie"), (Some(&b"a=1"[..]), Some(&b"b=2"[..])));
        assert_eq!(header_value(&a, "x-empty", 0), Some(&b""[..]));
        assert_eq!(header_value(&a, "HTTP/1.1 200 OK", 0), None, "the status line is not a header");
        assert_eq!(header_value(&a, "content", 0), None, "a prefix is not the name");
        let (mut table, reparsed) = (Vec::new(), Cell::new(false));
        let a = parsed(b"HTTP/1.1 204 No Content\nA: b\n\n", &mut table, place, &reparsed).unwrap();
        assert_eq!(header_value(&a, "a", 0), Some(&b"b"[..]), "bare LF lines");
    }

    /// An HTTP/2 answer's head and trailers as the h2c client keeps them, indexed.
    #[test]
    fn a_head_kept_as_text_is_indexed_line_by_line() {
        let head = b"HTTP/2 200\r\ncontent-type:application/grpc\r\ngrpc-status:0\r\ngrpc-message:\r\n";
        let mut table = vec![HeaderAt::default(); 9];
        super::index_head(head, &mut table);
        assert_eq!(table.len(), 3, "the status line is no header, and the old entries are gone");
        let a = answer(head, &table, &Marks::NONE, None);
        assert_eq!(header_value(&a, "Content-Type", 0), Some(&b"application/grpc"[..]));
        assert_eq!(header_value(&a, "grpc-status", 0), Some(&b"0"[..]));
        assert_eq!(header_value(&a, "grpc-message", 0), Some(&b""[..]));
        assert_eq!(header_value(&a, "http/2 200", 0), None);
    }

    proptest::proptest! {
        /// The word-wise comparison of names is `eq_ignore_ascii_case`, on any bytes.
        #[test]
        fn names_compare_as_eq_ignore_ascii_case(a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
                                                 flips in proptest::collection::vec(proptest::prelude::any::<u8>(), 20)) {
            // Mostly the same name in another case, sometimes other bytes.
            let b: Vec<u8> = a.iter().zip(&flips).map(|(&c, &f)| match f % 4 {
                0 => c.to_ascii_uppercase(),
                1 => c.to_ascii_lowercase(),
                2 => c ^ 0x20,
                _ => c,
            }).collect();
            proptest::prop_assert_eq!(super::same_name(&a, &b), a.eq_ignore_ascii_case(&b));
            proptest::prop_assert_eq!(super::same_name(&a, &flips[..a.len()]), a.eq_ignore_ascii_case(&flips[..a.len()]));
            proptest::prop_assert!(super::same_name(&a, &a));
        }

        /// The values found agree with httparse's on any head httparse accepts, and those of
        /// a marked name ([`Marks`]) with the walk's, which finds them where no marks are known.
        #[test]
        fn agrees_with_httparse(names in proptest::collection::vec(name(), 0..8),
                                values in proptest::collection::vec("[ -~\t\x0c]{0,12}", 8), probe in name()) {
            let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
            for (n, v) in names.iter().zip(&values) {
                head.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
            }
            head.extend_from_slice(b"\r\n");
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut resp = httparse::Response::new(&mut headers);
            let (mut table, mut unplaced, reparsed) = (Vec::new(), Vec::new(), Cell::new(false));
            if let (Ok(httparse::Status::Complete(_)), Some(a), Some(b)) =
                (resp.parse(&head), parsed(&head, &mut table, true, &reparsed), parsed(&head, &mut unplaced, false, &reparsed))
            {
                let mut all = resp.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(&probe)).map(|h| h.value.trim_ascii());
                for nth in 0..3 {
                    let want = all.next();
                    proptest::prop_assert_eq!(header_value(&a, &probe, nth), want);
                    proptest::prop_assert_eq!(header_value(&b, &probe, nth), want);
                }
                let mut all = resp.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(&probe)).map(|h| h.value.trim_ascii());
                let two = header_first_two(&a, &probe);
                proptest::prop_assert_eq!(two, (all.next(), all.next()));
                proptest::prop_assert_eq!(two, header_first_two(&b, &probe));
                proptest::prop_assert_eq!(Marks::set_cookie(&a), Marks::set_cookie(&b));
                proptest::prop_assert_eq!(Marks::body_labels(&a), Marks::body_labels(&b));
                let walked = Answer { marks: &Marks::NONE, ..a };
                proptest::prop_assert_eq!(two, header_first_two(&walked, &probe));
                proptest::prop_assert_eq!(Marks::set_cookie(&a), header_first_two(&walked, "set-cookie"));
                let labels =
                    (header_first_two(&walked, "content-encoding").0, header_first_two(&walked, "content-type").0);
                proptest::prop_assert_eq!(Marks::body_labels(&a), labels);
                proptest::prop_assert_eq!(Marks::body_labels(&walked), labels);
            }
        }
    }

    /// A header name: mostly the marked ones in any case, or names of their lengths.
    fn name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            "[A-Za-z][A-Za-z0-9-]{0,6}",
            "[sS][eE][tT]-[cC][oO][oO][kK][iI][eE]",
            "[cC][oO][nN][tT][eE][nN][tT]-[tT][yY][pP][eE]",
            "[cC][oO][nN][tT][eE][nN][tT]-[eE][nN][cC][oO][dD][iI][nN][gG]",
            Just("Connection".to_owned()),
            Just("Content-Typf".to_owned()),
        ]
    }
}
