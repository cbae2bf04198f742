//! InfluxDB 1.x, the original experiment's own store, over its HTTP API with hyper's pooled
//! client: the event is one point written in line protocol
//! (`events,type=T,source=S value=V <ns>` to `/write`), and the count is
//! InfluxQL `SELECT COUNT(value) FROM events` — the original experiment's algorithm.
//!
//! Two details keep the count exact:
//! - InfluxDB keeps one point per (measurement, tag set, timestamp): a second
//!   event with the same type, source and millisecond would silently replace
//!   the first (the original experiment's implementations lost events this way). Each write
//!   gets a distinct sub-millisecond offset (nanoseconds `0..1_000_000` within
//!   its millisecond), so the stored millisecond is still the event's.
//! - InfluxDB stores nanoseconds in an `i64`: times after 2262-04-11 cannot be
//!   stored, and such an event gets a 400 saying so (nothing is written).
//!
//! `--count counter`: InfluxDB has no transactions or counters, so the count
//! is kept by this process, read from the store at start and after any
//! failed write (whose outcome is unknown), and incremented after each
//! acknowledged write. It is exact while this server is the only writer.
//!
//! Durability: InfluxDB answers a write once it is in its WAL, which it
//! fsyncs before answering with the default `wal-fsync-delay = "0s"`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::url::InfluxOptions;
use super::{CountMode, Store, StoreError, StoreFuture, StoredEvent};
use crate::error_chain::ErrorChain as _;

/// The last millisecond InfluxDB can store (its `i64` nanoseconds end in 2262).
pub const MAX_TIMESTAMP_MS: u64 = (i64::MAX as u64 - 1) / 1_000_000 - 1;
/// How long one HTTP exchange with InfluxDB may take.
const TIMEOUT: Duration = Duration::from_secs(5);

pub struct InfluxStore {
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://host:port`.
    base: String,
    /// `db=...&precision=ns[&u=..&p=..]`, URL-encoded.
    write_query: String,
    /// `db=...[&u=..&p=..]&q=<COUNT>`, URL-encoded.
    count_query: String,
    /// `db=...[&u=..&p=..]`, URL-encoded.
    db_query: String,
    measurement: String,
    mode: CountMode,
    /// Counter mode: the count, and whether it must be re-read from the store.
    counter: AtomicU64,
    stale: AtomicBool,
    /// Source of the distinct sub-millisecond offsets.
    sequence: AtomicU64,
    label: String,
    describe: String,
}

impl InfluxStore {
    pub async fn open(opts: &InfluxOptions, mode: CountMode) -> Result<Self, StoreError> {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(2)));
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let mut auth = String::new();
        if let Some((u, p)) = &opts.credentials {
            let _ = write!(auth, "&u={}&p={}", encode(u), encode(p));
        }
        let db_query = format!("db={}{auth}", encode(&opts.db));
        let m = &opts.measurement;
        let store = InfluxStore {
            client,
            base: format!("http://{}", opts.authority),
            write_query: format!("{db_query}&precision=ns"),
            count_query: format!("{db_query}&q={}", encode(&format!("SELECT COUNT(value) FROM \"{m}\""))),
            db_query,
            measurement: m.clone(),
            mode,
            counter: AtomicU64::new(0),
            stale: AtomicBool::new(true),
            sequence: AtomicU64::new(u64::from(std::process::id()).wrapping_mul(7919) ^ super::now_ms()),
            label: format!("InfluxDB at {}/{}", opts.authority, opts.db),
            describe: String::new(),
        };
        let create = format!("q={}{auth}", encode(&format!("CREATE DATABASE \"{}\"", opts.db)));
        store.query(&create).await.map_err(|e| match e {
            StoreError::Unavailable(m) => {
                StoreError::Unavailable(format!("{m} (is it running? check --store)"))
            }
            other => other,
        })?;
        let n = store.count_from_store().await?;
        store.counter.store(n, Ordering::SeqCst);
        store.stale.store(false, Ordering::SeqCst);
        let describe = format!(
            "{}, measurement {m} (an event is acknowledged once InfluxDB has it in its WAL; \
             fsynced before the answer with the default wal-fsync-delay 0s){}",
            store.label,
            if mode == CountMode::Counter { "; the counter is kept by this process" } else { "" }
        );
        Ok(InfluxStore { describe, ..store })
    }

    fn fail(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::unavailable(&self.label, e)
    }

    /// One HTTP exchange: the status and the body.
    async fn exchange(
        &self,
        method: Method,
        path_query: &str,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes), StoreError> {
        let req = Request::builder()
            .method(method)
            .uri(format!("{}{path_query}", self.base))
            .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(Full::new(body))
            .map_err(|e| self.fail(e))?;
        let exchange = async {
            let resp = self.client.request(req).await.map_err(|e| self.fail(e.chain()))?;
            let status = resp.status();
            let body = resp.into_body().collect().await.map_err(|e| self.fail(e))?.to_bytes();
            Ok((status, body))
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .map_err(|_| self.fail(format_args!("no answer within {} s", TIMEOUT.as_secs())))?
    }

    /// An InfluxQL statement; its JSON answer, checked for errors.
    async fn query(&self, query: &str) -> Result<serde_json::Value, StoreError> {
        let (status, body) = self.exchange(Method::POST, &format!("/query?{query}"), Bytes::new()).await?;
        let json: serde_json::Value = serde_json::from_slice(&body).map_err(|_| {
            self.fail(format_args!(
                "HTTP {status} with a body that is not JSON: {}",
                String::from_utf8_lossy(&body)
            ))
        })?;
        let error = json.get("error").or_else(|| json.pointer("/results/0/error"));
        if let Some(error) = error {
            return Err(self.fail(error.as_str().unwrap_or("an error")));
        }
        if !status.is_success() {
            return Err(self.fail(format_args!("HTTP {status}")));
        }
        Ok(json)
    }

    async fn count_from_store(&self) -> Result<u64, StoreError> {
        let json = self.query(&self.count_query).await?;
        // {"results":[{"statement_id":0,"series":[{"columns":["time","count"],"values":[["…",N]]}]}]};
        // no "series" when the measurement is empty.
        Ok(json.pointer("/results/0/series/0/values/0/1").and_then(serde_json::Value::as_u64).unwrap_or(0))
    }

    async fn write(&self, e: StoredEvent<'_>) -> Result<(), StoreError> {
        if e.timestamp_ms > MAX_TIMESTAMP_MS {
            return Err(StoreError::Unstorable(format!(
                "InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most \
                 {MAX_TIMESTAMP_MS} with this store, got {}",
                e.timestamp_ms
            )));
        }
        let offset = self.sequence.fetch_add(1, Ordering::Relaxed) % 1_000_000;
        let ns = e.timestamp_ms * 1_000_000 + offset;
        // type and source are [A-Za-z0-9_.:-]: nothing to escape in line protocol.
        let line =
            format!("{},type={},source={} value={:?} {ns}", self.measurement, e.kind, e.source, e.value);
        let (status, body) =
            self.exchange(Method::POST, &format!("/write?{}", self.write_query), Bytes::from(line)).await?;
        if status == StatusCode::NO_CONTENT {
            Ok(())
        } else {
            Err(self
                .fail(format_args!("the write got HTTP {status}: {}", String::from_utf8_lossy(&body).trim())))
        }
    }
}

impl Store for InfluxStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            if let Err(err) = self.write(e).await {
                if matches!(err, StoreError::Unavailable(_)) {
                    self.stale.store(true, Ordering::SeqCst);
                }
                return Err(err);
            }
            match self.mode {
                CountMode::Query => self.count_from_store().await,
                CountMode::Counter => {
                    if self.stale.swap(false, Ordering::SeqCst) {
                        match self.count_from_store().await {
                            Ok(n) => {
                                self.counter.store(n, Ordering::SeqCst);
                                return Ok(n);
                            }
                            Err(err) => {
                                self.stale.store(true, Ordering::SeqCst);
                                return Err(err);
                            }
                        }
                    }
                    Ok(self.counter.fetch_add(1, Ordering::SeqCst) + 1)
                }
            }
        })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            match self.mode {
                CountMode::Query => self.count_from_store().await,
                CountMode::Counter if self.stale.load(Ordering::SeqCst) => {
                    let n = self.count_from_store().await?;
                    self.counter.store(n, Ordering::SeqCst);
                    self.stale.store(false, Ordering::SeqCst);
                    Ok(n)
                }
                CountMode::Counter => Ok(self.counter.load(Ordering::SeqCst)),
            }
        })
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let drop_query = format!(
                "{}&q={}",
                self.db_query,
                encode(&format!("DROP MEASUREMENT \"{}\"", self.measurement))
            );
            self.query(&drop_query).await?;
            self.counter.store(0, Ordering::SeqCst);
            Ok(())
        })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}

/// What a query-string value may hold as it is: the unreserved characters of RFC 3986.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// A query-string value (a database, a user, an InfluxQL statement), percent-encoded: every
/// character but [`UNRESERVED`] as `%XX`.
fn encode(s: &str) -> String {
    utf8_percent_encode(s, UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_and_limits() {
        assert_eq!(
            encode("SELECT COUNT(value) FROM \"events\""),
            "SELECT%20COUNT%28value%29%20FROM%20%22events%22"
        );
        assert_eq!(encode("a-b_c.d~e/f&g=h é"), "a-b_c.d~e%2Ff%26g%3Dh%20%C3%A9");
        assert!(i64::try_from(MAX_TIMESTAMP_MS * 1_000_000 + 999_999).is_ok());
        assert!(i64::try_from((MAX_TIMESTAMP_MS + 2) * 1_000_000).is_err());
    }
}
