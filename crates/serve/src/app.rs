//! What `event-log` and `dummy` do with a request, independent of the HTTP
//! stack: every stack adapter reads the body within the limit, then calls
//! [`post_event`] or [`get_count`] and turns the result into its own response
//! type. So the three stacks share one validation path ([`crate::events`] over
//! `stackbench-contract`) and one store path, and differ only in HTTP.
//!
//! A [`Backend`] is what happens after validation: [`Dummy`] answers 1,
//! [`EventLog`] writes to a [`Store`] and answers its count (the three-kings experiment's
//! steps 2–5). Stacks are generic over the backend, so `dummy` pays for no
//! store and no dynamic dispatch.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use crate::events::{Rejection, accept_event};
use crate::store::{Store, StoreError, StoredEvent, now_ms};

/// The body of `{"count":1}`, preallocated.
const COUNT_ONE: &[u8] = b"{\"count\":1}";
/// How long a store operation may take before the request gets a 503.
pub const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// What happens to a valid event, and what `GET /events/count` answers.
pub trait Backend: Send + Sync + 'static {
    /// Stores a validated event (or not) and answers the count after it.
    fn append(&self, event: StoredEvent<'_>) -> impl Future<Output = Result<u64, Rejection>> + Send;
    /// The count, without writing.
    fn count(&self) -> impl Future<Output = Result<u64, Rejection>> + Send;
}

/// `dummy`: validation only; every valid event and every count answers 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dummy;

impl Backend for Dummy {
    async fn append(&self, _: StoredEvent<'_>) -> Result<u64, Rejection> {
        Ok(1)
    }
    async fn count(&self) -> Result<u64, Rejection> {
        Ok(1)
    }
}

/// `event-log`: write to the store, then count (the three-kings experiment's algorithm).
#[derive(Clone)]
pub struct EventLog {
    store: Arc<dyn Store>,
}

impl EventLog {
    pub fn new(store: Arc<dyn Store>) -> Self {
        EventLog { store }
    }
}

impl Backend for EventLog {
    async fn append(&self, event: StoredEvent<'_>) -> Result<u64, Rejection> {
        with_timeout(self.store.append(event)).await
    }
    async fn count(&self) -> Result<u64, Rejection> {
        with_timeout(self.store.count()).await
    }
}

async fn with_timeout(op: impl Future<Output = Result<u64, StoreError>>) -> Result<u64, Rejection> {
    match tokio::time::timeout(STORE_TIMEOUT, op).await {
        Ok(Ok(n)) => Ok(n),
        Ok(Err(e)) => Err(store_rejection(&e)),
        Err(_) => Err(Rejection::new(
            503,
            format!(
                "the event store did not answer within {} s; nothing was acknowledged, retry later",
                STORE_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// The answer to a failed store operation: 400 when the store cannot hold a
/// valid event, 503 otherwise (retrying later may succeed).
pub fn store_rejection(e: &StoreError) -> Rejection {
    match e {
        StoreError::Unstorable(m) => Rejection::new(400, m.clone()),
        StoreError::Unavailable(m) | StoreError::Url(m) => {
            Rejection::new(503, format!("{m}; the event was not stored, retry later"))
        }
    }
}

/// `POST /events` after the body was read within the limit: validate, store,
/// answer `{"count":N}`.
pub async fn post_event<B: Backend>(
    backend: &B,
    content_type: Option<&[u8]>,
    body: &[u8],
) -> Result<Bytes, Rejection> {
    let event = accept_event(content_type, body)?;
    let stored = StoredEvent {
        kind: &event.kind,
        source: &event.source,
        value: event.value,
        timestamp_ms: match event.timestamp_ms {
            Some(t) => t,
            None => now_ms(),
        },
    };
    backend.append(stored).await.map(count_body)
}

/// `GET /events/count`.
pub async fn get_count<B: Backend>(backend: &B) -> Result<Bytes, Rejection> {
    backend.count().await.map(count_body)
}

/// `{"count":N}`.
pub fn count_body(n: u64) -> Bytes {
    if n == 1 {
        Bytes::from_static(COUNT_ONE)
    } else {
        Bytes::from(stackbench_contract::contract::count_body(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    const JSON: Option<&[u8]> = Some(b"application/json");

    #[tokio::test]
    async fn event_log_writes_then_counts() {
        let store = Arc::new(MemoryStore::new());
        let app = EventLog::new(store.clone());
        let body = br#"{"type":"page_view","source":"web","value":2.5,"timestamp":1764460800000}"#;
        assert_eq!(post_event(&app, JSON, body).await.unwrap(), &b"{\"count\":1}"[..]);
        assert_eq!(post_event(&app, JSON, br#"{"type":"click"}"#).await.unwrap(), &b"{\"count\":2}"[..]);
        let events = store.events();
        assert_eq!((events[0].kind.as_str(), events[0].timestamp_ms), ("page_view", 1_764_460_800_000));
        assert_eq!((events[1].source.as_str(), events[1].value), ("unknown", 1.0));
        assert!(events[1].timestamp_ms >= 1_764_460_800_000, "server time stamps events without one");
        assert_eq!(get_count(&app).await.unwrap(), &b"{\"count\":2}"[..]);
    }

    #[tokio::test]
    async fn invalid_events_are_not_written() {
        let store = Arc::new(MemoryStore::new());
        let app = EventLog::new(store.clone());
        assert_eq!(post_event(&app, JSON, br#"{"type":""}"#).await.unwrap_err().status, 400);
        assert_eq!(post_event(&app, None, br#"{"type":"a"}"#).await.unwrap_err().status, 400);
        assert!(store.events().is_empty());
    }

    #[tokio::test]
    async fn an_unavailable_store_is_a_503_and_recovery_is_automatic() {
        let store = Arc::new(MemoryStore::new());
        let app = EventLog::new(store.clone());
        store.set_down(true);
        let r = post_event(&app, JSON, br#"{"type":"a"}"#).await.unwrap_err();
        assert!(r.status == 503 && r.message.contains("retry later"), "{r:?}");
        assert_eq!(get_count(&app).await.unwrap_err().status, 503);
        store.set_down(false);
        assert_eq!(post_event(&app, JSON, br#"{"type":"a"}"#).await.unwrap(), &b"{\"count\":1}"[..]);
    }

    #[test]
    fn unstorable_is_400() {
        assert_eq!(store_rejection(&StoreError::Unstorable("too late".into())).status, 400);
        assert_eq!(store_rejection(&StoreError::Unavailable("down".into())).status, 503);
    }

    #[tokio::test]
    async fn dummy_counts_one() {
        assert_eq!(post_event(&Dummy, JSON, br#"{"type":"a"}"#).await.unwrap(), &b"{\"count\":1}"[..]);
        assert_eq!(get_count(&Dummy).await.unwrap(), &b"{\"count\":1}"[..]);
    }
}
