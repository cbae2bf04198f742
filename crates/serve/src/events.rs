//! The HTTP rules of `event-log` and `dummy`, independent of any HTTP stack:
//! which request is accepted, and the exact status and JSON of every refusal.
//! Order of checks, as the contract implies: the body size (413, body not
//! processed), then the `Content-Type` (400), then the event rules (400).

use bytes::Bytes;
use stackbench_scenarios::contract::{self, MAX_BODY_BYTES};
use stackbench_scenarios::event::{Event, parse_event};

/// The routes an event server answers, for 404 messages.
pub const ROUTES: [&str; 2] = ["POST /events", "GET /events/count"];
/// `Allow` of `/events`.
pub const ALLOW_EVENTS: &str = "POST";
/// `Allow` of `/events/count`.
pub const ALLOW_COUNT: &str = "GET, HEAD";

/// A refused request: status and the one-sentence message of its JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub status: u16,
    pub message: String,
}

impl Rejection {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Rejection { status, message: message.into() }
    }

    /// `{"error": "<message>"}`.
    pub fn body(&self) -> Bytes {
        Bytes::from(contract::error_body(&self.message))
    }

    pub fn not_found(method: &str, path: &str) -> Self {
        Rejection::new(404, contract::not_found_message(method, path, &ROUTES))
    }

    pub fn method_not_allowed(method: &str, path: &str, allow: &str) -> Self {
        Rejection::new(405, contract::method_not_allowed_message(method, path, allow))
    }

    pub fn too_large() -> Self {
        Rejection::new(413, contract::too_large_message())
    }
}

/// The 413 rule on a declared `Content-Length`, before reading any of the body.
pub fn check_declared_length(content_length: Option<&[u8]>) -> Result<(), Rejection> {
    let declared =
        content_length.and_then(|v| std::str::from_utf8(v).ok()).and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > MAX_BODY_BYTES as u64 => Err(Rejection::too_large()),
        _ => Ok(()),
    }
}

/// Validates a whole `POST /events` request (body already read within the limit).
pub fn accept_event<'a>(content_type: Option<&[u8]>, body: &'a [u8]) -> Result<Event<'a>, Rejection> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Rejection::too_large());
    }
    if !content_type.is_some_and(contract::is_json_content_type) {
        return Err(Rejection::new(400, contract::wrong_content_type_message(content_type)));
    }
    parse_event(body).map_err(|e| Rejection::new(400, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: Option<&[u8]> = Some(b"application/json");

    #[test]
    fn order_of_rules() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(accept_event(None, &big).unwrap_err().status, 413);
        assert_eq!(accept_event(Some(b"text/plain"), br#"{"type":"a"}"#).unwrap_err().status, 400);
        assert_eq!(accept_event(None, br#"{"type":"a"}"#).unwrap_err().status, 400);
        let e = accept_event(JSON, br#"{"type":"a b"}"#).unwrap_err();
        assert!(e.status == 400 && e.message.contains("`type`"), "{e:?}");
        assert_eq!(accept_event(JSON, br#"{"type":"a"}"#).unwrap().kind, "a");
    }

    #[test]
    fn declared_length() {
        assert!(check_declared_length(Some(b"65536")).is_ok());
        assert_eq!(check_declared_length(Some(b"65537")).unwrap_err().status, 413);
        assert!(check_declared_length(None).is_ok());
    }
}
