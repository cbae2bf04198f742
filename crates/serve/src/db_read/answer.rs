//! The `db-read` request rules, independent of any HTTP stack: which driver,
//! which ids (`dbread::parse_ids`, 400), one fetch bounded by a timeout (503),
//! rows in answer order (404 for an id the database has no row for), and the
//! JSON of the rows the database returned.
//!
//! The answer always holds two entries, rows `min(a, b)` then `max(a, b)`
//! (`dbread::answer_ids`); for `a == b` that row twice.

use std::time::Duration;

use bytes::Bytes;
use stackbench_contract::contract;
use stackbench_contract::dbread::{self, Item};

use super::{Driver, Fetch, FetchError, unavailable};
use crate::events::Rejection;

/// The routes of a db-read server, for 404 messages.
pub const ROUTES: [&str; 2] = ["GET /db", "GET /db/{driver}?a=<id>&b=<id>"];
/// `Allow` of both routes.
pub const ALLOW: &str = "GET, HEAD";

/// One served driver.
pub struct Backend {
    pub driver: Driver,
    /// Where it reads (a redacted URL or a file path).
    pub location: String,
    /// Its pool, in words (`5 connections`).
    pub pool: String,
    pub fetch: Box<dyn Fetch>,
}

/// The drivers a contestant serves, in the contract's order.
pub struct Drivers {
    backends: Vec<Backend>,
    timeout: Duration,
}

impl Drivers {
    /// No drivers yet; a fetch that takes longer than `timeout` is a 503.
    pub fn new(timeout: Duration) -> Self {
        Drivers { backends: Vec::new(), timeout }
    }

    /// Adds (or replaces) a driver.
    pub fn insert(&mut self, backend: Backend) {
        self.backends.retain(|b| b.driver != backend.driver);
        self.backends.push(backend);
        self.backends.sort_by_key(|b| Driver::ALL.iter().position(|d| *d == b.driver));
    }

    pub fn iter(&self) -> impl Iterator<Item = &Backend> {
        self.backends.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.backends.is_empty()
    }

    /// The served driver names, comma-separated.
    pub fn names(&self) -> String {
        self.backends.iter().map(|b| b.driver.name()).collect::<Vec<_>>().join(", ")
    }

    /// `GET /db`: `{"drivers":[{"name":…,"database":…,"layer":…,"pool":…},…]}`.
    pub fn list_json(&self) -> Bytes {
        let drivers: Vec<_> = self
            .backends
            .iter()
            .map(|b| {
                serde_json::json!({
                    "name": b.driver.name(),
                    "database": b.driver.database(),
                    "layer": b.driver.layer(),
                    "pool": b.pool,
                })
            })
            .collect();
        Bytes::from(serde_json::json!({ "drivers": drivers }).to_string())
    }

    /// `GET /db/{driver}?{query}`: the JSON body of a 200, or the refusal.
    pub async fn answer(&self, driver: &str, query: Option<&str>) -> Result<Bytes, Rejection> {
        let backend = self.find(driver)?;
        let (a, b) = dbread::parse_ids(query).map_err(|e| Rejection::new(400, e.to_string()))?;
        let ids = dbread::answer_ids(a, b);
        let rows = match tokio::time::timeout(self.timeout, backend.fetch.fetch(ids)).await {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => return Err(unavailable(&e)),
            Err(_) => {
                let e = FetchError::new(
                    backend.driver,
                    format_args!("no answer within {} ms", self.timeout.as_millis()),
                );
                return Err(unavailable(&e));
            }
        };
        let found = in_answer_order(&rows, ids)?;
        let body = serde_json::to_vec(&found).expect("rows serialize");
        Ok(Bytes::from(body))
    }

    fn find(&self, name: &str) -> Result<&Backend, Rejection> {
        if let Some(b) = self.backends.iter().find(|b| b.driver.name() == name) {
            return Ok(b);
        }
        let served = self.names();
        let message = match Driver::from_name(name) {
            Some(d) => format!(
                "driver {name:?} is not served here: start the server with {} to serve it; \
                 this server serves: {served}",
                d.flag()
            ),
            None => format!(
                "unknown driver {name:?}; this server serves: {served} (the contract's drivers: {})",
                Driver::ALL.map(Driver::name).join(", ")
            ),
        };
        Err(Rejection::new(404, message))
    }
}

/// Rows `ids[0]` then `ids[1]` out of what the database returned; the first
/// id without a row is a 404.
pub fn in_answer_order(rows: &[Item], ids: [u32; 2]) -> Result<[Item; 2], Rejection> {
    let pick = |id: u32| {
        rows.iter().find(|r| r.id == id).cloned().ok_or_else(|| {
            Rejection::new(
                404,
                format!(
                    "no row with id {id} in items (the data set has ids 1..={}); ask for an id that exists",
                    dbread::ROWS
                ),
            )
        })
    };
    Ok([pick(ids[0])?, pick(ids[1])?])
}

/// The 404 for an unknown path.
pub fn not_found(method: &str, path: &str) -> Rejection {
    Rejection::new(404, contract::not_found_message(method, path, &ROUTES))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use stackbench_contract::check::{Expect, ResponseView, check};

    use super::*;
    use crate::db_read::FetchFuture;

    /// A data set in memory; can be switched off (the database down) and
    /// records the ids it was asked for.
    struct Fake {
        down: Mutex<Option<String>>,
        asked: Mutex<Vec<[u32; 2]>>,
        delay: Option<Duration>,
    }

    impl Fetch for Fake {
        fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
            Box::pin(async move {
                self.asked.lock().unwrap().push(ids);
                if let Some(d) = self.delay {
                    tokio::time::sleep(d).await;
                }
                if let Some(why) = self.down.lock().unwrap().clone() {
                    return Err(FetchError::new(Driver::Sqlite, why));
                }
                let mut rows: Vec<Item> =
                    ids.into_iter().filter(|&id| id <= dbread::ROWS).map(dbread::item).collect();
                rows.dedup();
                rows.reverse(); // a database returns rows in any order
                Ok(rows)
            })
        }
    }

    fn fake(delay: Option<Duration>) -> Fake {
        Fake { down: Mutex::new(None), asked: Mutex::new(Vec::new()), delay }
    }

    fn drivers_of(fetch: Arc<Fake>) -> Drivers {
        let mut d = Drivers::new(Duration::from_millis(200));
        d.insert(Backend {
            driver: Driver::Sqlite,
            location: "memory".into(),
            pool: "1 connection".into(),
            fetch: Box::new(fetch),
        });
        d
    }

    fn drivers(fetch: Fake) -> Drivers {
        drivers_of(Arc::new(fetch))
    }

    fn ok(body: &Bytes, a: u32, b: u32) {
        let view = ResponseView { status: 200, content_type: Some(b"application/json"), body };
        assert_eq!(check(&Expect::Rows { a, b }, &view), Ok(()), "{body:?}");
    }

    #[tokio::test]
    async fn rows_come_in_id_order_and_equal_ids_twice() {
        let d = drivers(fake(None));
        for (q, a, b) in
            [(None, 1, 2), (Some("a=9&b=3"), 9, 3), (Some("a=7&b=7"), 7, 7), (Some("b=10000"), 1, 10000)]
        {
            ok(&d.answer("sqlite", q).await.unwrap(), a, b);
        }
    }

    #[tokio::test]
    async fn refusals() {
        let d = drivers(fake(None));
        let e = d.answer("nope", None).await.unwrap_err();
        assert!(
            e.status == 404 && e.message.contains("serves: sqlite") && e.message.contains("tokio-postgres")
        );
        let e = d.answer("redis", None).await.unwrap_err();
        assert!(e.status == 404 && e.message.contains("--store redis://"), "{e:?}");
        let e = d.answer("sqlite", Some("a=0")).await.unwrap_err();
        assert!(e.status == 400 && e.message.contains("`a`"), "{e:?}");
        let e = d.answer("sqlite", Some("a=1&b=10001")).await.unwrap_err();
        assert!(e.status == 404 && e.message.contains("10001"), "{e:?}");
    }

    #[tokio::test]
    async fn a_bad_id_never_reaches_the_database() {
        let f = Arc::new(fake(None));
        let d = drivers_of(f.clone());
        let _ = d.answer("sqlite", Some("a=x")).await.unwrap_err();
        let _ = d.answer("sqlite", Some("a=5&b=4")).await.unwrap();
        assert_eq!(*f.asked.lock().unwrap(), vec![[4, 5]], "one fetch, ids in answer order");
    }

    #[tokio::test]
    async fn database_down_is_503_then_recovers() {
        let f = Arc::new(fake(None));
        let d = drivers_of(f.clone());
        *f.down.lock().unwrap() = Some("connection refused".into());
        let e = d.answer("sqlite", None).await.unwrap_err();
        assert!(e.status == 503 && e.message.contains("connection refused"), "{e:?}");
        *f.down.lock().unwrap() = None;
        ok(&d.answer("sqlite", None).await.unwrap(), 1, 2);
    }

    #[tokio::test]
    async fn a_slow_database_is_503_after_the_timeout() {
        let d = drivers(fake(Some(Duration::from_secs(5))));
        let e = d.answer("sqlite", None).await.unwrap_err();
        assert!(e.status == 503 && e.message.contains("no answer within 200 ms"), "{e:?}");
    }

    #[test]
    fn list_names_every_driver_with_its_pool() {
        let d = drivers(fake(None));
        let v: serde_json::Value = serde_json::from_slice(&d.list_json()).unwrap();
        assert_eq!(v["drivers"][0]["name"], "sqlite");
        assert_eq!(v["drivers"][0]["pool"], "1 connection");
        assert_eq!(d.names(), "sqlite");
    }
}
