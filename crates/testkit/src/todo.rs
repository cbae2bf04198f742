//! A small todo service for the tests of scenario files (not one of
//! stackbench's contestants): `POST /todos` with `{"title": ...}` answers 201
//! and the new todo, an empty (or over 200-character) title 400;
//! `GET /todos/{id}` the todo, `GET /todos?...` a list, `DELETE /todos`
//! empties the store. Served by [`crate::site`] (HTTP/1.1 with keep-alive). A
//! [`Fault`] makes it answer one rule wrong.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Mutex;

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
    let store = Mutex::new(BTreeMap::new());
    crate::site::start(move |asked| {
        let mut store = store.lock().expect("no panics while holding it");
        let (status, body) = answer(fault, &mut store, &asked.method, &asked.path, &asked.body);
        crate::site::Answer::json(status, &body)
    })
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
