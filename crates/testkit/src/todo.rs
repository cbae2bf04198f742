//! A small todo service for the tests of scenario files (not one of
//! stackbench's contestants): `POST /todos` with `{"title": ...}` answers 201
//! and the new todo, an empty (or over 200-character) title 400;
//! `GET /todos/{id}` the todo, `GET /todos?...` a list, `DELETE /todos`
//! empties the store. HTTP/1.1 with keep-alive, a thread per connection, on a
//! loopback port until the test process ends. A [`Fault`] makes it answer
//! one rule wrong.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// Which rule the service breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// A new todo is answered as done.
    Done,
    /// A 300-character title is stored, not refused.
    LongTitle,
    /// `GET /todos/{id}` answers another title than the one stored.
    WrongTitle,
}

/// Starts the service; returns its address.
pub fn start(fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("bound");
    let store = Arc::new(Mutex::new(BTreeMap::new()));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let store = Arc::clone(&store);
            std::thread::spawn(move || serve(stream, fault, &store));
        }
    });
    addr
}

/// Answers the requests of one connection until it closes.
fn serve(stream: TcpStream, fault: Fault, store: &Mutex<BTreeMap<u64, String>>) {
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
        let (mut length, mut close) = (0, false);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                } else if k.eq_ignore_ascii_case("connection") && v.trim().eq_ignore_ascii_case("close") {
                    close = true;
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (status, answer) = {
            let mut store = store.lock().expect("no panics while holding it");
            answer(fault, &mut store, &method, &path, &body)
        };
        let answer = if status == 204 { String::new() } else { answer.to_string() };
        let connection = if close { "Connection: close\r\n" } else { "" };
        let written = write!(
            out,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{connection}\r\n{answer}",
            answer.len()
        );
        if written.is_err() || close {
            return;
        }
    }
}

fn answer(
    fault: Fault,
    store: &mut BTreeMap<u64, String>,
    method: &str,
    path: &str,
    body: &[u8],
) -> (u16, Value) {
    match (method, path) {
        ("POST", "/todos") => {
            let title = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v["title"].as_str().map(str::to_owned));
            let title = title.unwrap_or_default();
            if title.is_empty() || (title.chars().count() > 200 && fault != Fault::LongTitle) {
                return (400, json!({"error": "a title is 1 to 200 characters"}));
            }
            let id = store.keys().next_back().map_or(1, |k| k + 1);
            store.insert(id, title.clone());
            (201, json!({"id": id, "title": title, "done": fault == Fault::Done}))
        }
        ("DELETE", "/todos") => {
            store.clear();
            (204, Value::Null)
        }
        ("GET", p) if p.starts_with("/todos?") => {
            (200, Value::Array(store.iter().take(50).map(|(id, t)| json!({"id": id, "title": t})).collect()))
        }
        ("GET", p) => {
            let id = p.strip_prefix("/todos/").and_then(|id| id.parse::<u64>().ok());
            match id.and_then(|id| store.get(&id).map(|t| (id, t))) {
                Some((id, t)) => {
                    let title = if fault == Fault::WrongTitle { "not what was stored" } else { t };
                    (200, json!({"id": id, "title": title, "done": false}))
                }
                None => (404, json!({"error": "no such todo"})),
            }
        }
        _ => (404, json!({"error": "unknown path"})),
    }
}
