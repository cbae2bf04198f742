//! The common HTTP rules of every HTTP scenario (`docs/scenarios.md`, "Common
//! rules"), as constants and tiny helpers shared by every reference stack and
//! by the checkers, so a rule is written once.

/// Request bodies larger than this get a 413 and are not processed.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// `POST` an event here.
pub const EVENTS_PATH: &str = "/events";
/// `GET` the count here.
pub const COUNT_PATH: &str = "/events/count";
/// The content type of every JSON response.
pub const JSON: &str = "application/json";

/// `{"error": "<message>"}`, the body of every error response.
pub fn error_body(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// `{"count":N}`, the body of a successful `event-log`/`dummy` answer.
pub fn count_body(count: u64) -> String {
    format!("{{\"count\":{count}}}")
}

/// Is this `Content-Type` header value JSON? `application/json`, any case,
/// optionally followed by parameters (`; charset=utf-8`).
pub fn is_json_content_type(value: &[u8]) -> bool {
    // What clients send, exactly: two 8-byte comparisons instead of the scan
    // for `;`, the trim and the case-folding compare below (9,508 -> 9,344
    // instructions per request of `sb-dummy --stack hyper`,
    // bench/event-log/instructions.py).
    if value == JSON.as_bytes() {
        return true;
    }
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(JSON.as_bytes())
}

/// The 400 message for a request whose `Content-Type` is not JSON.
pub fn wrong_content_type_message(got: Option<&[u8]>) -> String {
    match got {
        None => "the request has no Content-Type; send Content-Type: application/json".to_owned(),
        Some(v) => format!("Content-Type must be application/json, got {:?}", String::from_utf8_lossy(v)),
    }
}

/// The 413 message.
pub fn too_large_message() -> String {
    format!("the request body is larger than {MAX_BODY_BYTES} bytes (64 KiB); send a smaller body")
}

/// The 404 message for an unknown path, listing what this server answers.
pub fn not_found_message(method: &str, path: &str, routes: &[&str]) -> String {
    format!("no route for {method} {path}; this server answers {}", routes.join(", "))
}

/// The 405 message for a known path with a wrong method.
pub fn method_not_allowed_message(method: &str, path: &str, allow: &str) -> String {
    format!("{path} does not accept {method}; allowed: {allow}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        for ok in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(is_json_content_type(ok.as_bytes()), "{ok}");
        }
        for bad in ["text/plain", "application/jsonx", "application/x-www-form-urlencoded", ""] {
            assert!(!is_json_content_type(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn bodies_are_json() {
        let v: serde_json::Value = serde_json::from_str(&error_body("say \"hi\"")).unwrap();
        assert_eq!(v["error"], "say \"hi\"");
        assert_eq!(count_body(7), r#"{"count":7}"#);
    }
}
