//! HTTP/1.1 client connection, written for the load engine's hot path: the
//! request is pre-serialized once ([`crate::wire::Prepared::wire`]) and
//! written with one `write`; the answer is read into a buffer that lives as
//! long as the connection and parsed in place with `httparse`, so a
//! keep-alive request costs one write, one read and no allocation (wrk's
//! model). Bodies framed by `Content-Length`, `chunked` or connection close
//! are read; 1xx interim answers are skipped.
//!
//! A reused keep-alive connection that the server closed while idle fails on
//! the next request before any byte of an answer arrives; that request is
//! retried once on a new connection (what browsers and hyper do for a
//! connection found closed), so an idle-close is not counted as an error.

use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;
use std::rc::Rc;
use std::time::Duration;

use stackbench_record::ErrorKind;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::budget::Claim;
use crate::dial::{Dial, Socket};
use crate::tls::TlsStream;
use crate::uring::{self, Receiver, Ring};
use crate::wire::{
    Answer, CONTENT_ENCODING, CONTENT_TYPE, HeaderAt, MAX_HEADERS, Marks, SET_COOKIE, Wire, same_name,
};

const READ_CHUNK: usize = 16 * 1024;
/// Refuse to buffer answers larger than this (a misbehaving server).
const MAX_ANSWER: usize = 64 * 1024 * 1024;
/// Refuse heads (and chunk-size lines, and trailer sections) longer than this.
const MAX_HEAD: usize = 64 * 1024;
/// The most a connection's buffer ever holds: a head and an answer at their caps.
const MAX_BUFFER: usize = MAX_HEAD + MAX_ANSWER + READ_CHUNK;
/// A buffer grown past this for one large answer is given back before the next request.
const KEEP_BUFFER: usize = 1024 * 1024;

/// A connection's socket: on tokio's readiness reactor (epoll), or on the
/// worker's io_uring ([`crate::uring`]), where a request is one send entry,
/// its answer comes through the connection's standing receive, and neither
/// costs a syscall of its own; or TLS (on epoll), through rustls.
#[derive(Debug)]
enum Stream {
    Epoll(TcpStream),
    Uring { sock: std::net::TcpStream, ring: Rc<Ring>, recv: Receiver },
    Tls(Box<TlsStream>),
}

impl Stream {
    /// A connected socket (with its TLS handshake made, for `https://`), on the thread's ring
    /// when it has one; and how long opening it took.
    async fn open(dial: &Dial, shaking: &Cell<bool>) -> Result<(Stream, Duration), ErrorKind> {
        // Boxed: a TLS handshake's state is large, and kept inline it would grow every
        // request's future (moved and laid out per request) for what happens once per connection.
        let (socket, took) = Box::pin(dial.open(shaking)).await?;
        let stream = match (socket, uring::current()) {
            (Socket::Tcp(tcp), Some(ring)) => {
                let sock = tcp.into_std().map_err(|_| ErrorKind::Connect)?;
                let recv = Receiver::new(&ring, sock.as_raw_fd());
                Stream::Uring { sock, ring, recv }
            }
            (Socket::Tcp(tcp), None) => Stream::Epoll(tcp),
            (Socket::Tls(tls), _) => Stream::Tls(tls),
        };
        Ok((stream, took))
    }
}

/// One HTTP/1.1 connection (connected lazily, reconnected after a failure).
#[derive(Debug)]
pub struct Http1Conn {
    dial: Rc<Dial>,
    stream: Option<Stream>,
    /// Bytes read from the socket: the current answer (head and body; a
    /// chunked body decoded in place).
    buf: Vec<u8>,
    /// The content type of the last answer.
    content_type: Vec<u8>,
    /// Where the last answer's headers lie in its head, when `keep_headers` and `reparsed`.
    headers: Vec<HeaderAt>,
    /// Where the last answer's marked headers lie ([`Marks`]), when `keep_headers`.
    marks: Marks,
    /// Whether answers say where their headers lie (a scenario file's checks look
    /// them up); the built-in requests do not pay for it.
    keep_headers: bool,
    /// A look-up of an answer's header that is not marked parsed its head again
    /// ([`Answer::reparsed`]): from then on every header is placed in `headers`.
    reparsed: Cell<bool>,
    /// Bytes of the last answer as they came off the wire (before dechunking).
    received: u64,
    /// Set while a request is under way; still set at the next call means the
    /// previous one was abandoned (timeout) and the stream is in an unknown state.
    busy: bool,
    /// What `buf` holds past its first read chunk, claimed from the process's answer budget.
    claim: Claim,
    /// Whether a request that finds a reused connection closed is sent again on a new one.
    retry: bool,
    /// The length of the last answer's head in `buf` (for [`Http1Conn::headers`]).
    head_len: usize,
    /// How long opening the connection took, when the request under way opened it.
    opened: Option<Duration>,
    /// A TLS handshake is under way (still set: it was given up in the middle).
    shaking: Cell<bool>,
}

/// How the body of the answer being read is framed.
#[derive(Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
    Close,
    None,
}

struct Head {
    status: u16,
    len: usize,
    framing: Framing,
    close: bool,
    /// Bytes of body after the head, once read.
    body_len: usize,
}

impl Http1Conn {
    pub fn new(dial: Rc<Dial>) -> Http1Conn {
        Http1Conn {
            dial,
            stream: None,
            buf: Vec::with_capacity(READ_CHUNK),
            content_type: Vec::new(),
            headers: Vec::new(),
            marks: Marks::default(),
            keep_headers: false,
            reparsed: Cell::new(false),
            received: 0,
            busy: false,
            claim: Claim::default(),
            retry: true,
            head_len: 0,
            opened: None,
            shaking: Cell::new(false),
        }
    }

    /// A connection on a socket already connected (and its TLS handshake made), for one
    /// request outside a load (`verify`, the readiness probe): the same writer, reader and
    /// caps as the load, no retry.
    pub fn with_socket(addr: SocketAddr, socket: Socket) -> Http1Conn {
        let mut conn = Http1Conn::new(Dial::new(addr, None));
        conn.stream = Some(match socket {
            Socket::Tcp(tcp) => Stream::Epoll(tcp),
            Socket::Tls(tls) => Stream::Tls(tls),
        });
        conn.retry = false;
        conn
    }

    /// How long opening its connection took, when the last request opened it (taken once).
    pub fn take_opened(&mut self) -> Option<Duration> {
        self.opened.take()
    }

    /// Whether a TLS handshake was given up in the middle (a deadline passed while the
    /// connection was being opened); the flag is cleared and the attempt counted.
    pub fn gave_up_handshake(&self) -> bool {
        let stalled = self.shaking.replace(false);
        if stalled {
            self.dial.stalled();
        }
        stalled
    }

    /// The headers of the last answer read (names lower-cased, in order); empty before any.
    pub fn headers(&self) -> Vec<(String, Vec<u8>)> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        match resp.parse(&self.buf[..self.head_len.min(self.buf.len())]) {
            Ok(httparse::Status::Complete(_)) => {
                resp.headers.iter().map(|h| (h.name.to_ascii_lowercase(), h.value.to_vec())).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Opens the connection now (used before the clock starts).
    pub async fn connect(&mut self) -> Result<(), ErrorKind> {
        if self.stream.is_none() {
            let (stream, took) = Stream::open(&self.dial, &self.shaking).await?;
            self.stream = Some(stream);
            self.opened = Some(took);
        }
        Ok(())
    }

    /// Gives up the connection; the next request opens a new one.
    pub fn close(&mut self) {
        self.stream = None;
        self.busy = false;
    }

    /// Whether a request can go at once: connected, and not left in an unknown state by an
    /// abandoned one (else [`Http1Conn::ready`] makes it so).
    pub fn is_open(&self) -> bool {
        !self.busy && self.stream.is_some()
    }

    /// Makes the connection ready for a request: drops one left in an unknown state by an
    /// abandoned request (see `busy`), and connects if there is none. A request's own connect,
    /// so that its caller can bound it apart from the exchange.
    pub async fn ready(&mut self) -> Result<(), ErrorKind> {
        if std::mem::replace(&mut self.busy, false) {
            self.stream = None;
        }
        self.connect().await
    }

    /// Whether the answers to come say where their headers lie ([`Answer::headers`]).
    pub fn keep_headers(&mut self, on: bool) {
        self.keep_headers = on;
    }

    /// Sends `wire` (a whole request) and reads the answer. `head_only`: the
    /// request was HEAD, so the answer has no body whatever its headers say.
    pub async fn send(
        &mut self,
        wire: Wire<'_>,
        head_only: bool,
        keepalive: bool,
    ) -> Result<Answer<'_>, ErrorKind> {
        if std::mem::replace(&mut self.busy, true) {
            self.stream = None;
        }
        let reused = self.stream.is_some() && self.retry;
        let result = match self.exchange(wire, head_only).await {
            Err(Failure { kind: ErrorKind::Reset, answer_started: false }) if reused => {
                self.stream = None;
                self.exchange(wire, head_only).await
            }
            r => r,
        };
        let head = match result {
            Ok(h) => h,
            Err(f) => {
                self.stream = None;
                self.busy = false;
                return Err(f.kind);
            }
        };
        if head.close || !keepalive {
            self.stream = None;
        }
        self.busy = false;
        self.head_len = head.len;
        let received = self.received;
        let body = &self.buf[head.len..head.len + head.body_len];
        Ok(Answer {
            status: head.status,
            content_type: (!self.content_type.is_empty()).then_some(&self.content_type[..]),
            body,
            received,
            grpc_status: None,
            head: &self.buf[..head.len],
            headers: if self.keep_headers { &self.headers } else { &[] },
            marks: &self.marks,
            reparsed: self.keep_headers.then_some(&self.reparsed),
        })
    }

    async fn exchange(&mut self, wire: Wire<'_>, head_only: bool) -> Result<Head, Failure> {
        let setup = |kind| Failure { kind, answer_started: false };
        if self.stream.is_none() {
            let (stream, took) = Stream::open(&self.dial, &self.shaking).await.map_err(setup)?;
            self.stream = Some(stream);
            self.opened = Some(took);
        }
        let mut sending = match self.stream.as_mut().expect("connected above") {
            Stream::Epoll(tcp) => {
                tcp.write_all(wire.bytes()).await.map_err(|e| setup(io_kind(&e)))?;
                return self.read_answer_in(head_only).await;
            }
            Stream::Tls(tls) => {
                tls.write_all(wire.bytes()).await.map_err(|e| setup(io_kind(&e)))?;
                tls.flush().await.map_err(|e| setup(io_kind(&e)))?;
                return self.read_answer_in(head_only).await;
            }
            // io_uring: the send goes to the kernel with the other connections' entries, and
            // the answer comes through the connection's receive, which is always armed.
            Stream::Uring { sock, ring, .. } => ring.send(sock.as_raw_fd(), wire.held()),
        };
        let result = self.read_answer_in(head_only).await;
        // The send's completion came before its answer's (the server read it all), so it is
        // not waited for: a task woken by it would cost a round of polls per request.
        match sending.try_result() {
            Some(Err(e)) => return Err(setup(io_kind(&e))),
            // Answered before the whole request went: the connection cannot carry another.
            None if result.is_ok() => self.stream = None,
            // Sent; or failed before the send did, which is cancelled (dropped) with the exchange.
            Some(Ok(_)) | None => {}
        }
        result
    }

    async fn read_answer_in(&mut self, head_only: bool) -> Result<Head, Failure> {
        if self.buf.capacity() > KEEP_BUFFER {
            self.buf = Vec::with_capacity(READ_CHUNK);
            self.claim.release();
        }
        self.buf.clear();
        self.received = 0;
        let mut reader = Reader::default();
        let mut eof = false;
        loop {
            if let Progress::Done(head) = reader.advance(
                &mut self.buf,
                eof,
                head_only,
                &mut self.content_type,
                self.keep_headers.then_some((&mut self.headers, self.reparsed.get(), &mut self.marks)),
            )? {
                return Ok(head);
            }
            let started = !self.buf.is_empty() || reader.head.is_some();
            match self.fill().await {
                Ok(0) => eof = true,
                Ok(_) => {}
                Err(e) => return Err(Failure { kind: io_kind(&e), answer_started: started }),
            }
        }
    }
}

/// Where reading an answer stands.
enum Progress {
    /// More bytes are needed.
    More,
    /// The answer is complete: its head, with the body's length.
    Done(Head),
}

/// Reads one answer from the bytes as they arrive, without I/O (so the
/// parser can be driven, and fuzzed, on its own): call [`Reader::advance`]
/// after each read with what the buffer holds, `eof` once the peer closed.
#[derive(Default)]
struct Reader {
    head: Option<Head>,
    dechunk: Dechunk,
}

impl Reader {
    fn advance(
        &mut self,
        buf: &mut Vec<u8>,
        eof: bool,
        head_only: bool,
        content_type: &mut Vec<u8>,
        mut headers_at: Option<(&mut Vec<HeaderAt>, bool, &mut Marks)>,
    ) -> Result<Progress, Failure> {
        let broken = |kind| Failure { kind, answer_started: true };
        while self.head.is_none() {
            // Until a complete final (non-1xx) head is buffered.
            if buf.is_empty() && !eof {
                return Ok(Progress::More);
            }
            // Left uninitialized: a request's parse would otherwise first write 2 KiB of empty
            // headers, more than the parse itself costs for a short answer.
            let mut headers =
                [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
            let mut resp = httparse::Response::new(&mut []);
            match httparse::ParserConfig::default().parse_response_with_uninit_headers(
                &mut resp,
                buf,
                &mut headers,
            ) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = resp.code.unwrap_or(0);
                    if (100..200).contains(&status) && status != 101 {
                        buf.drain(..len);
                        continue;
                    }
                    let base = buf.as_ptr().addr();
                    self.head = Some(match headers_at.as_mut() {
                        Some((at, place, marks)) => {
                            **marks =
                                if *place { Marks::placed(resp.headers, buf, at) } else { Marks::noted() };
                            parse_head::<true>(&resp, len, head_only, content_type, (marks, base))?
                        }
                        None => parse_head::<false>(
                            &resp,
                            len,
                            head_only,
                            content_type,
                            (&mut Marks::default(), base),
                        )?,
                    });
                }
                Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
                    return Err(broken(ErrorKind::Protocol));
                }
                Ok(httparse::Status::Partial) if eof => {
                    let kind = crate::wire::unread_answer(buf, ErrorKind::Reset);
                    return Err(Failure { kind, answer_started: !buf.is_empty() });
                }
                Ok(httparse::Status::Partial) => return Ok(Progress::More),
                // A TLS server's alert to a cleartext request is not a malformed answer.
                Err(_) => return Err(broken(crate::wire::unread_answer(buf, ErrorKind::Protocol))),
            }
        }
        let head = self.head.as_mut().expect("parsed above");
        let body = buf.len() - head.len;
        let more = if eof { Err(broken(ErrorKind::Reset)) } else { Ok(Progress::More) };
        head.body_len = match head.framing {
            Framing::None => 0,
            Framing::Length(n) if body >= n => n,
            Framing::Length(_) => return more,
            Framing::Close if body > MAX_ANSWER => return Err(broken(ErrorKind::Protocol)),
            Framing::Close if eof => body,
            Framing::Close => return Ok(Progress::More),
            Framing::Chunked => {
                let (keep, done) =
                    self.dechunk.advance(&mut buf[head.len..]).map_err(|()| broken(ErrorKind::Protocol))?;
                buf.truncate(head.len + keep);
                if !done {
                    return if keep > MAX_ANSWER + MAX_HEAD {
                        Err(broken(ErrorKind::Protocol))
                    } else {
                        more
                    };
                }
                self.dechunk.decoded
            }
        };
        Ok(Progress::Done(self.head.take().expect("parsed above")))
    }
}

/// Drives the answer reader over `data` delivered in pieces cut at `cuts`
/// (offsets; out-of-range ones are ignored), then the end of the stream:
/// the status and body of a complete answer, or the error it would count.
/// For tests; nothing here may panic.
#[cfg(test)]
pub fn read_answer(data: &[u8], cuts: &[usize], head_only: bool) -> Result<(u16, Vec<u8>), ErrorKind> {
    read_answer_with(data, cuts, head_only, false, |a| (a.status, a.body.to_vec()))
}

/// The answer reader driven as `read_answer` drives it, every header placed when `place`:
/// what `see` makes of the complete answer, or the error it would count (for the fuzz
/// target `http1_answer`, which looks its headers up).
pub fn read_answer_with<R>(
    data: &[u8],
    cuts: &[usize],
    head_only: bool,
    place: bool,
    see: impl FnOnce(&Answer<'_>) -> R,
) -> Result<R, ErrorKind> {
    let mut reader = Reader::default();
    let (mut buf, mut content_type, mut headers, mut marks) =
        (Vec::new(), Vec::new(), Vec::new(), Marks::default());
    let mut from = 0;
    let mut ends: Vec<usize> = cuts.iter().copied().filter(|&c| c > 0 && c < data.len()).collect();
    ends.sort_unstable();
    ends.push(data.len());
    for (i, &to) in ends.iter().enumerate() {
        buf.extend_from_slice(&data[from.min(to)..to]);
        from = to;
        let eof = i + 1 == ends.len();
        match reader
            .advance(&mut buf, eof, head_only, &mut content_type, Some((&mut headers, place, &mut marks)))
            .map_err(|f| f.kind)?
        {
            Progress::Done(head) => {
                return Ok(see(&Answer {
                    status: head.status,
                    content_type: None,
                    body: &buf[head.len..head.len + head.body_len],
                    received: 0,
                    grpc_status: None,
                    head: &buf[..head.len],
                    headers: &headers,
                    marks: &marks,
                    reparsed: None,
                }));
            }
            Progress::More if eof => return Err(ErrorKind::Reset),
            Progress::More => {}
        }
    }
    Err(ErrorKind::Reset)
}

/// The headers of `head` marked, and placed when `place`, as the reader marks and places
/// them (the tests of [`crate::wire`]); `None` when it refuses the head.
#[cfg(test)]
pub(crate) fn placed(head: &[u8], place: bool) -> Option<(Vec<HeaderAt>, Marks)> {
    let (mut buf, mut content_type, mut at, mut marks) =
        (head.to_vec(), Vec::new(), Vec::new(), Marks::default());
    match Reader::default().advance(
        &mut buf,
        true,
        true,
        &mut content_type,
        Some((&mut at, place, &mut marks)),
    ) {
        Ok(Progress::Done(_)) => Some((at, marks)),
        _ => None,
    }
}

/// The framing and status of a parsed head; the content type goes to `content_type`, and
/// when `MARK` the headers a scenario file's checks look up on every answer to `marks`
/// (the names are compared here anyway), as places in the buffer at address `base`.
fn parse_head<const MARK: bool>(
    resp: &httparse::Response<'_, '_>,
    len: usize,
    head_only: bool,
    content_type: &mut Vec<u8>,
    (marks, base): (&mut Marks, usize),
) -> Result<Head, Failure> {
    {
        let status = resp.code.unwrap_or(0);
        let mut framing = Framing::Close;
        let mut length = None;
        let mut close = resp.version == Some(0);
        content_type.clear();
        for h in resp.headers.iter() {
            // A name is compared only with the one of its length, word by word: per answer this
            // costs a few instructions a header, where a case fold per byte cost hundreds.
            let name = h.name.as_bytes();
            match name.len() {
                14 if same_name(name, b"content-length") => match decimal(h.value) {
                    // Two lengths that differ leave the answer's end unknown (RFC 9112 §6.3).
                    Some(n) if length.is_some_and(|l| l != n) => {
                        return Err(Failure { kind: ErrorKind::Protocol, answer_started: true });
                    }
                    Some(n) if n <= MAX_ANSWER => {
                        length = Some(n);
                        if !matches!(framing, Framing::Chunked) {
                            framing = Framing::Length(n);
                        }
                    }
                    _ => return Err(Failure { kind: ErrorKind::Protocol, answer_started: true }),
                },
                17 if same_name(name, b"transfer-encoding") && has_token(h.value, b"chunked") => {
                    framing = Framing::Chunked;
                }
                // Of the length of `Connection`, which every answer carries: told apart by its
                // first byte before the names are compared.
                10 if MARK && name[0] | 0x20 == b's' && same_name(name, SET_COOKIE) => {
                    marks.set_cookie_at(h.value, base);
                }
                10 if same_name(name, b"connection") => {
                    if has_token(h.value, b"close") {
                        close = true;
                    } else if has_token(h.value, b"keep-alive") {
                        close = false;
                    }
                }
                16 if MARK && same_name(name, CONTENT_ENCODING) => marks.content_encoding_at(h.value, base),
                12 if same_name(name, CONTENT_TYPE) => {
                    content_type.extend_from_slice(h.value);
                    if MARK {
                        marks.content_type_at(h.value, base);
                    }
                }
                _ => {}
            }
        }
        if head_only || status == 204 || status == 304 {
            framing = Framing::None;
        }
        if matches!(framing, Framing::Close) {
            close = true;
        }
        Ok(Head { status, len, framing, close, body_len: 0 })
    }
}

/// Whether a comma-separated header value holds `token` (any case, blanks around it allowed).
/// Inlined: it runs for each `Connection` header an answer carries, nearly always on a value
/// of one token, which is the token or of another length.
#[inline]
fn has_token(value: &[u8], token: &[u8]) -> bool {
    let value = value.trim_ascii();
    // A list holding the token is longer than it; one of its length can only be the token.
    if value.len() <= token.len() {
        return same_name(value, token);
    }
    value.contains(&b',') && value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// A `Content-Length` value: decimal digits, blanks around them allowed; `None` for anything
/// else or past `usize` (by hand: `str::parse` after a UTF-8 check costs about ten times more,
/// and this runs once per answer).
fn decimal(value: &[u8]) -> Option<usize> {
    let digits = value.trim_ascii();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0usize, |n, &b| {
        b.is_ascii_digit().then_some(())?;
        n.checked_mul(10)?.checked_add(usize::from(b - b'0'))
    })
}

impl Http1Conn {
    /// Reads once more from the socket. The buffer grows by doubling, but
    /// never past [`MAX_BUFFER`], nor past what the process's answer budget
    /// ([`crate::budget`]) still holds: what is held is bounded, per
    /// connection and in all, not only what is kept.
    async fn fill(&mut self) -> io::Result<usize> {
        let (len, cap) = (self.buf.len(), self.buf.capacity());
        if cap - len < READ_CHUNK {
            let target = (cap * 2).max(len + READ_CHUNK).min(MAX_BUFFER);
            if target <= len {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "answer larger than the cap"));
            }
            if !self.claim.grow_to(target.saturating_sub(READ_CHUNK)) {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "answers in flight past the budget"));
            }
            self.buf.reserve_exact(target - len);
        }
        let n = match self.stream.as_mut().expect("reading a connected stream") {
            Stream::Epoll(tcp) => tcp.read_buf(&mut self.buf).await?,
            Stream::Uring { recv, .. } => recv.recv(&mut self.buf).await?,
            Stream::Tls(tls) => tls.read_buf(&mut self.buf).await?,
        };
        self.received += n as u64;
        Ok(n)
    }
}

struct Failure {
    kind: ErrorKind,
    /// Some bytes of the answer had arrived (so a retry could repeat a processed request).
    answer_started: bool,
}

/// The error kind of an I/O failure on an established connection.
pub fn io_kind(e: &io::Error) -> ErrorKind {
    match e.kind() {
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::InvalidData => ErrorKind::Protocol,
        _ => ErrorKind::Reset,
    }
}

/// Decodes a chunked body in place, as its bytes arrive. The body region of
/// the buffer holds the decoded data (its first `decoded` bytes) followed by
/// what is not decoded yet; each complete chunk is moved down over its
/// framing, so an answer is held once however it is chunked, and no byte is
/// moved more than twice. Every size is checked against the caps before any
/// arithmetic: a hostile chunk size is a protocol error, never an overflow.
#[derive(Debug, Default, Clone, Copy)]
struct Dechunk {
    decoded: usize,
    /// The last chunk is in; what follows are trailer lines and an empty line.
    trailers: bool,
    /// Bytes of trailer lines consumed (capped like a head).
    trailer_bytes: usize,
}

impl Dechunk {
    /// Decodes what `body` holds. Returns how many bytes of `body` are still
    /// needed (the caller truncates to it) and whether the body is complete.
    fn advance(&mut self, body: &mut [u8]) -> Result<(usize, bool), ()> {
        let mut at = self.decoded;
        let done = loop {
            let rest = &body[at..];
            if self.trailers {
                let line = rest.windows(2).position(|w| w == b"\r\n");
                if self.trailer_bytes + line.map_or(rest.len(), |eol| eol + 2) > MAX_HEAD {
                    return Err(());
                }
                match line {
                    Some(0) => break true,
                    Some(eol) => {
                        at += eol + 2;
                        self.trailer_bytes += eol + 2;
                    }
                    None => break false,
                }
                continue;
            }
            let (skip, size) = match httparse::parse_chunk_size(rest) {
                Ok(httparse::Status::Complete(x)) => x,
                Ok(httparse::Status::Partial) if rest.len() > MAX_HEAD => return Err(()),
                Ok(httparse::Status::Partial) => break false,
                Err(_) => return Err(()),
            };
            if size == 0 {
                at += skip;
                self.trailers = true;
                continue;
            }
            let size = usize::try_from(size).ok().filter(|&n| n <= MAX_ANSWER - self.decoded).ok_or(())?;
            let need = skip + size + 2;
            if rest.len() < need {
                break false;
            }
            if &rest[skip + size..need] != b"\r\n" {
                return Err(());
            }
            body.copy_within(at + skip..at + skip + size, self.decoded);
            self.decoded += size;
            at += need;
        };
        let rest = body.len() - at;
        if at != self.decoded {
            body.copy_within(at.., self.decoded);
        }
        Ok((self.decoded + rest, done))
    }
}

#[cfg(test)]
mod tests;
