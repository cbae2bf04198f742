//! HTTP/1.1 client connection, written for the load engine's hot path: the
//! request is pre-serialized once ([`crate::transport::Prepared::wire`]) and
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

use std::io;
use std::net::SocketAddr;

use stackbench_record::ErrorKind;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::transport::Answer;

const READ_CHUNK: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;
/// Refuse to buffer answers larger than this (a misbehaving server).
const MAX_ANSWER: usize = 64 * 1024 * 1024;

/// One HTTP/1.1 connection (connected lazily, reconnected after a failure).
#[derive(Debug)]
pub struct Http1Conn {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    /// Bytes read from the socket: the current answer (head and body).
    buf: Vec<u8>,
    /// The decoded body of a chunked answer.
    chunked: Vec<u8>,
    /// The content type of the last answer.
    content_type: Vec<u8>,
    /// Set while a request is under way; still set at the next call means the
    /// previous one was abandoned (timeout) and the stream is in an unknown state.
    busy: bool,
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
}

impl Http1Conn {
    pub fn new(addr: SocketAddr) -> Http1Conn {
        Http1Conn {
            addr,
            stream: None,
            buf: Vec::with_capacity(READ_CHUNK),
            chunked: Vec::new(),
            content_type: Vec::new(),
            busy: false,
        }
    }

    /// Opens the connection now (used before the clock starts).
    pub async fn connect(&mut self) -> Result<(), ErrorKind> {
        if self.stream.is_none() {
            self.stream = Some(connect(self.addr).await?);
        }
        Ok(())
    }

    /// Sends `wire` (a whole request) and reads the answer. `head_only`: the
    /// request was HEAD, so the answer has no body whatever its headers say.
    pub async fn send(
        &mut self,
        wire: &[u8],
        head_only: bool,
        keepalive: bool,
    ) -> Result<Answer<'_>, ErrorKind> {
        if std::mem::replace(&mut self.busy, true) {
            self.stream = None;
        }
        let reused = self.stream.is_some();
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
        let received = self.buf.len() as u64;
        let body = match head.framing {
            Framing::Chunked => &self.chunked[..],
            Framing::Length(n) => &self.buf[head.len..head.len + n],
            Framing::Close => &self.buf[head.len..],
            Framing::None => &[][..],
        };
        Ok(Answer {
            status: head.status,
            content_type: (!self.content_type.is_empty()).then_some(&self.content_type[..]),
            body,
            received,
            grpc_status: None,
        })
    }

    async fn exchange(&mut self, wire: &[u8], head_only: bool) -> Result<Head, Failure> {
        let setup = |kind| Failure { kind, answer_started: false };
        if self.stream.is_none() {
            self.stream = Some(connect(self.addr).await.map_err(setup)?);
        }
        let stream = self.stream.as_mut().expect("connected above");
        stream.write_all(wire).await.map_err(|e| setup(io_kind(&e)))?;
        self.buf.clear();
        loop {
            // Read until a complete final (non-1xx) head is buffered.
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut resp = httparse::Response::new(&mut headers);
            match resp.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = resp.code.unwrap_or(0);
                    if (100..200).contains(&status) && status != 101 {
                        self.buf.drain(..len);
                        continue;
                    }
                    let head = parse_head(&resp, len, head_only, &mut self.content_type)?;
                    self.read_body(&head).await?;
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) => {}
                Err(_) => return Err(Failure { kind: ErrorKind::Protocol, answer_started: true }),
            }
            let started = !self.buf.is_empty();
            match self.fill().await {
                Ok(0) => return Err(Failure { kind: ErrorKind::Reset, answer_started: started }),
                Ok(_) => {}
                Err(e) => return Err(Failure { kind: io_kind(&e), answer_started: started }),
            }
        }
    }
}

/// The framing and status of a parsed head; the content type goes to `content_type`.
fn parse_head(
    resp: &httparse::Response<'_, '_>,
    len: usize,
    head_only: bool,
    content_type: &mut Vec<u8>,
) -> Result<Head, Failure> {
    {
        let status = resp.code.unwrap_or(0);
        let mut framing = Framing::Close;
        let mut close = resp.version == Some(0);
        content_type.clear();
        for h in resp.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                let n = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok());
                match n {
                    Some(n) if n <= MAX_ANSWER => {
                        if !matches!(framing, Framing::Chunked) {
                            framing = Framing::Length(n);
                        }
                    }
                    _ => return Err(Failure { kind: ErrorKind::Protocol, answer_started: true }),
                }
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                if h.value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"chunked")) {
                    framing = Framing::Chunked;
                }
            } else if name.eq_ignore_ascii_case("connection") {
                let v = h.value;
                if v.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close")) {
                    close = true;
                } else if v.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(b"keep-alive"))
                {
                    close = false;
                }
            } else if name.eq_ignore_ascii_case("content-type") {
                content_type.extend_from_slice(h.value);
            }
        }
        if head_only || status == 204 || status == 304 {
            framing = Framing::None;
        }
        if matches!(framing, Framing::Close) {
            close = true;
        }
        Ok(Head { status, len, framing, close })
    }
}

impl Http1Conn {
    async fn read_body(&mut self, head: &Head) -> Result<(), Failure> {
        let broken = |kind| Failure { kind, answer_started: true };
        match head.framing {
            Framing::None => Ok(()),
            Framing::Length(n) => {
                while self.buf.len() < head.len + n {
                    if self.fill().await.map_err(|e| broken(io_kind(&e)))? == 0 {
                        return Err(broken(ErrorKind::Reset));
                    }
                }
                Ok(())
            }
            Framing::Close => loop {
                if self.buf.len() > MAX_ANSWER {
                    return Err(broken(ErrorKind::Protocol));
                }
                if self.fill().await.map_err(|e| broken(io_kind(&e)))? == 0 {
                    return Ok(());
                }
            },
            Framing::Chunked => loop {
                match decode_chunked(&self.buf[head.len..], &mut self.chunked) {
                    Ok(true) => return Ok(()),
                    Ok(false) if self.buf.len() > MAX_ANSWER => return Err(broken(ErrorKind::Protocol)),
                    Ok(false) => {}
                    Err(()) => return Err(broken(ErrorKind::Protocol)),
                }
                if self.fill().await.map_err(|e| broken(io_kind(&e)))? == 0 {
                    return Err(broken(ErrorKind::Reset));
                }
            },
        }
    }

    async fn fill(&mut self) -> io::Result<usize> {
        self.buf.reserve(READ_CHUNK);
        let stream = self.stream.as_mut().expect("reading a connected stream");
        stream.read_buf(&mut self.buf).await
    }
}

struct Failure {
    kind: ErrorKind,
    /// Some bytes of the answer had arrived (so a retry could repeat a processed request).
    answer_started: bool,
}

/// Connects with `TCP_NODELAY`; any failure is an error of kind `connect`.
pub async fn connect(addr: SocketAddr) -> Result<TcpStream, ErrorKind> {
    let s = TcpStream::connect(addr).await.map_err(|_| ErrorKind::Connect)?;
    s.set_nodelay(true).map_err(|_| ErrorKind::Connect)?;
    Ok(s)
}

/// The error kind of an I/O failure on an established connection.
pub fn io_kind(e: &io::Error) -> ErrorKind {
    match e.kind() {
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::InvalidData => ErrorKind::Protocol,
        _ => ErrorKind::Reset,
    }
}

/// Decodes a whole chunked body from `data` into `out`. `Ok(false)`: more
/// bytes are needed; `Err`: the framing is malformed.
fn decode_chunked(mut data: &[u8], out: &mut Vec<u8>) -> Result<bool, ()> {
    out.clear();
    loop {
        let (skip, size) = match httparse::parse_chunk_size(data) {
            Ok(httparse::Status::Complete(x)) => x,
            Ok(httparse::Status::Partial) => return Ok(false),
            Err(_) => return Err(()),
        };
        data = &data[skip..];
        let size = usize::try_from(size).map_err(|_| ())?;
        if size == 0 {
            // Trailers (ignored) end with an empty line.
            let mut rest = data;
            loop {
                let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else { return Ok(false) };
                if eol == 0 {
                    return Ok(true);
                }
                rest = &rest[eol + 2..];
            }
        }
        if data.len() < size + 2 {
            return Ok(false);
        }
        if &data[size..size + 2] != b"\r\n" {
            return Err(());
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies() {
        let mut out = Vec::new();
        assert_eq!(decode_chunked(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", &mut out), Ok(true));
        assert_eq!(out, b"hello world");
        assert_eq!(decode_chunked(b"5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", &mut out), Ok(true));
        assert_eq!(decode_chunked(b"5\r\nhel", &mut out), Ok(false));
        assert_eq!(decode_chunked(b"5\r\nhello\r\n0\r\n", &mut out), Ok(false));
        assert_eq!(decode_chunked(b"zz\r\n", &mut out), Err(()));
        assert_eq!(decode_chunked(b"2\r\nabc\r\n", &mut out), Err(()));
    }
}
