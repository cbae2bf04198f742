//! A small HTTP/1.1 server for the tests, its answers given by a function of the request
//! ([`start`]): keep-alive, a thread per connection, on a loopback port until the test
//! process ends. The todo service ([`crate::todo`]) and the tests of scenario files'
//! sessions (cookies, redirects, setup) are served by it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Asked {
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// Each header line, its name as written.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Asked {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An answer: its status, headers (`Content-Length` is added) and body.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: &serde_json::Value) -> Answer {
        let body = if status == 204 { Vec::new() } else { body.to_string().into_bytes() };
        Answer { status, headers: vec![("Content-Type".into(), "application/json".into())], body }
    }

    /// The answer with one more header.
    #[must_use]
    pub fn with(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Starts a server answering each request with `answer`; returns its address.
pub fn start(answer: impl Fn(&Asked) -> Answer + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("bound");
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || serve(stream, &*answer));
        }
    });
    addr
}

/// Answers the requests of one connection until it closes.
fn serve(stream: TcpStream, answer: &dyn Fn(&Asked) -> Answer) {
    let _ = stream.set_nodelay(true);
    let Ok(mut out) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.to_owned(), v.trim().to_owned()));
            }
        }
        let mut asked = Asked { method, path, headers, body: Vec::new() };
        let length = asked.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        let close = asked.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        asked.body = vec![0; length];
        if reader.read_exact(&mut asked.body).is_err() {
            return;
        }
        let a = answer(&asked);
        let mut head = format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\n", a.status, a.body.len());
        for (k, v) in &a.headers {
            let _ = std::fmt::Write::write_fmt(&mut head, format_args!("{k}: {v}\r\n"));
        }
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        if out.write_all(head.as_bytes()).and_then(|()| out.write_all(&a.body)).is_err() || close {
            return;
        }
    }
}
