//! The whole `event-log`/`dummy` contract as one in-process test, run by each
//! stack's tests through its own in-process client (axum `oneshot`, actix
//! `test::call_service`, hyper's handler with a `Full` body). One list of
//! cases, one set of assertions: the stacks are held to exactly the same rules.
//! Responses are judged with `stackbench_contract::check`, the checker the
//! load engine uses.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use stackbench_contract::check::{Expect, ResponseView, check};
use stackbench_contract::contract::MAX_BODY_BYTES;

use crate::app::{Backend, Dummy, EventLog};
use crate::events::Rejection;
use crate::store::StoredEvent;
use crate::store::memory::MemoryStore;

/// A backend of either scenario, so one harness closure serves both.
pub enum TestBackend {
    Dummy(Dummy),
    Log(EventLog),
}

impl Backend for TestBackend {
    async fn append(&self, event: StoredEvent<'_>) -> Result<u64, Rejection> {
        match self {
            TestBackend::Dummy(d) => d.append(event).await,
            TestBackend::Log(l) => l.append(event).await,
        }
    }
    async fn count(&self) -> Result<u64, Rejection> {
        match self {
            TestBackend::Dummy(d) => d.count().await,
            TestBackend::Log(l) => l.count().await,
        }
    }
}

/// One request.
#[derive(Debug, Clone)]
pub struct Case {
    pub method: &'static str,
    pub path: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Case {
    pub fn post(body: &str) -> Case {
        Case {
            method: "POST",
            path: "/events",
            headers: vec![("content-type", "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    fn bare(method: &'static str, path: &'static str) -> Case {
        Case { method, path, headers: vec![], body: vec![] }
    }

    fn with_header(mut self, k: &'static str, v: &str) -> Case {
        self.headers.retain(|(name, _)| *name != k);
        self.headers.push((k, v.to_owned()));
        self
    }
}

/// What came back.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: u16,
    pub content_type: Option<String>,
    pub allow: Option<String>,
    pub body: Vec<u8>,
}

impl Outcome {
    pub fn new(status: u16, headers: &http::HeaderMap, body: Vec<u8>) -> Outcome {
        let get = |k: http::header::HeaderName| headers.get(k).map(|v| v.to_str().unwrap_or("").to_owned());
        Outcome {
            status,
            content_type: get(http::header::CONTENT_TYPE),
            allow: get(http::header::ALLOW),
            body,
        }
    }

    pub fn from_pairs(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Outcome {
        let get = |k: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(k)).map(|(_, v)| v.clone());
        Outcome { status, content_type: get("content-type"), allow: get("allow"), body }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Judged by the load engine's checker.
    fn expect(&self, expect: &Expect, what: &str) {
        let view = ResponseView {
            status: self.status,
            content_type: self.content_type.as_deref().map(str::as_bytes),
            body: &self.body,
        };
        if let Err(e) = check(expect, &view) {
            panic!("{what}: {e} (got {} {})", self.status, self.text());
        }
    }

    fn error_mentions(&self, status: u16, needle: &str, what: &str) {
        self.expect(&Expect::Error { status }, what);
        assert!(self.text().contains(needle), "{what}: the error should mention {needle:?}: {}", self.text());
    }
}

/// Runs every rule of the contract through `call`, on `event-log` (over a
/// memory store that can be switched off) and on `dummy`.
pub async fn check_contract<F>(stack: &str, call: F)
where
    F: Fn(Arc<TestBackend>, Case) -> Pin<Box<dyn Future<Output = Outcome>>>,
{
    let store = Arc::new(MemoryStore::new());
    let log = Arc::new(TestBackend::Log(EventLog::new(store.clone())));
    let send = |case: Case| call(log.clone(), case);

    // Writes, then counts; the answer is the count after the write.
    let body = r#"{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}"#;
    send(Case::post(body)).await.expect(&Expect::CountExactly(1), &format!("{stack}: first event"));
    send(Case::post(r#"{"type":"click","x":[1,{"y":null}]}"#))
        .await
        .expect(&Expect::CountExactly(2), &format!("{stack}: second event, unknown key ignored"));
    send(Case::bare("GET", "/events/count"))
        .await
        .expect(&Expect::CountExactly(2), &format!("{stack}: count"));
    let head = send(Case::bare("HEAD", "/events/count")).await;
    assert_eq!(head.status, 200, "{stack}: HEAD /events/count");
    let ct =
        send(Case::post(r#"{"type":"a"}"#).with_header("content-type", "application/json; charset=utf-8"))
            .await;
    ct.expect(&Expect::CountExactly(3), &format!("{stack}: JSON content type with parameters"));

    // Bad events: 400 naming what to fix, and nothing written.
    for (body, needle) in [
        (r#"{"source":"web"}"#, "`type`"),
        (r#"{"type":"bad type"}"#, "`type`"),
        (r#"{"type":"a","source":""}"#, "`source`"),
        (r#"{"type":"a","value":"1"}"#, "`value`"),
        (r#"{"type":"a","timestamp":-1}"#, "`timestamp`"),
        (r#"{"type":"a","timestamp":1.5}"#, "`timestamp`"),
        (r#"{"type":"a","type":"b"}"#, "`type`"),
        ("{nope", "not valid JSON"),
        ("[1,2]", "an array"),
        ("", "not valid JSON"),
    ] {
        send(Case::post(body)).await.error_mentions(400, needle, &format!("{stack}: {body:?}"));
    }
    send(Case::post(r#"{"type":"a"}"#).with_header("content-type", "text/plain")).await.error_mentions(
        400,
        "Content-Type",
        &format!("{stack}: text/plain"),
    );
    let mut no_ct = Case::post(r#"{"type":"a"}"#);
    no_ct.headers.clear();
    send(no_ct).await.error_mentions(400, "Content-Type", &format!("{stack}: no Content-Type"));

    // 413, whether the length is declared or not.
    let big = format!(r#"{{"type":"a","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
    let declared = Case::post(&big).with_header("content-length", &big.len().to_string());
    send(declared).await.error_mentions(413, "64 KiB", &format!("{stack}: 70 KB body"));
    let fits = format!(r#"{{"type":"a","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES - 30));
    send(Case::post(&fits))
        .await
        .expect(&Expect::CountExactly(4), &format!("{stack}: a body just under 64 KiB"));

    // 404 and 405.
    send(Case::bare("GET", "/nope")).await.error_mentions(404, "POST /events", &format!("{stack}: 404"));
    send(Case::bare("GET", "/")).await.error_mentions(
        404,
        "GET /events/count",
        &format!("{stack}: 404 at /"),
    );
    for (method, path, allow) in
        [("GET", "/events", "POST"), ("PUT", "/events", "POST"), ("DELETE", "/events/count", "GET, HEAD")]
    {
        let r = send(Case::bare(method, path)).await;
        r.error_mentions(405, method, &format!("{stack}: {method} {path}"));
        assert_eq!(r.allow.as_deref(), Some(allow), "{stack}: Allow of {method} {path}");
    }
    assert_eq!(store.events().len(), 4, "{stack}: only the valid events were written");

    // The store goes away: 503 with a message; it comes back: the server recovers.
    store.set_down(true);
    send(Case::post(r#"{"type":"a"}"#)).await.error_mentions(
        503,
        "retry later",
        &format!("{stack}: store down"),
    );
    send(Case::bare("GET", "/events/count")).await.expect(&Expect::Error { status: 503 }, stack);
    store.set_down(false);
    send(Case::post(r#"{"type":"a"}"#))
        .await
        .expect(&Expect::CountExactly(5), &format!("{stack}: store back"));

    // dummy: the same validation, always 1, nothing stored.
    let dummy = Arc::new(TestBackend::Dummy(Dummy));
    for _ in 0..2 {
        call(dummy.clone(), Case::post(body))
            .await
            .expect(&Expect::CountExactly(1), &format!("{stack}: dummy"));
    }
    call(dummy.clone(), Case::bare("GET", "/events/count"))
        .await
        .expect(&Expect::CountExactly(1), &format!("{stack}: dummy count"));
    call(dummy.clone(), Case::post(r#"{"type":""}"#)).await.error_mentions(400, "`type`", stack);
    let r = call(dummy, Case::bare("POST", "/events/count")).await;
    assert_eq!((r.status, r.allow.as_deref()), (405, Some("GET, HEAD")), "{stack}: dummy 405");
}

/// A request body that declares `.0` bytes (as hyper's body does from the
/// `Content-Length` it decoded) and must not be read: the 413 on a declared
/// length comes before any of the body.
pub struct Declared(pub u64);

impl hyper::body::Body for Declared {
    type Data = bytes::Bytes;
    type Error = &'static str;
    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, &'static str>>> {
        panic!("a body declared over the limit was read")
    }
    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.0)
    }
}
