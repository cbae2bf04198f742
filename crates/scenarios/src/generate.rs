//! Request generators: the requests a load run sends for a scenario, each with
//! the [`Expect`] its answer is checked against.
//!
//! A generator is a pool of pre-built requests (default 1024), deterministic
//! from a seed, that workers cycle through. Building once keeps the load
//! engine's per-request path free of formatting and allocation (bodies are
//! [`Bytes`], cloned by reference count), the way wrk's scripts pre-build
//! requests. The pseudo-random source is SplitMix64, written here so that a
//! seed gives the same requests whatever version of `rand` is around.

use std::sync::Arc;

use bytes::Bytes;

use crate::check::Expect;
use crate::event::Event;
use crate::rng::SplitMix64;
use crate::{Scenario, bubble, contract, dbread};

/// HTTP method of a generated request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request of a scenario and what its answer must be.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// Path and query, e.g. `/db/sqlite?a=3&b=9`.
    pub path: String,
    /// `Content-Type` to send, if any. For gRPC the body is the bare protobuf
    /// message; the transport adds the 5-byte gRPC frame header.
    pub content_type: Option<&'static str>,
    pub body: Bytes,
    pub expect: Expect,
}

/// How to build a generator.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// The path of the target URL. `event-log`/`dummy` default to `/events`
    /// when it is `/` or empty; `db-read` needs `/db/<driver>`; `bubble-sort`
    /// always uses the gRPC method path.
    pub base_path: String,
    pub seed: u64,
    /// Number of distinct requests to pre-build (at least 1).
    pub pool: usize,
    /// `bubble-sort` only: send the Connect JSON form instead of gRPC.
    pub connect_json: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions { base_path: String::new(), seed: 1, pool: 1024, connect_json: false }
    }
}

/// Why a generator cannot be built for a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    #[error("db-read needs the driver in the URL path, like http://127.0.0.1:8080/db/sqlite; got path {0:?}")]
    DbReadPath(String),
    #[error("the URL path {0:?} carries a query string; the {1} generator builds its own")]
    Query(String, Scenario),
}

/// A cycling pool of requests. [`RequestGen::fork`] gives each worker its own
/// cursor over the same shared pool.
#[derive(Debug, Clone)]
pub struct RequestGen {
    pool: Arc<[Request]>,
    next: usize,
}

impl RequestGen {
    pub fn new(scenario: Scenario, opts: &GenOptions) -> Result<Self, GenError> {
        let mut rng = SplitMix64(opts.seed);
        let n = opts.pool.max(1);
        let pool: Vec<Request> = match scenario {
            Scenario::EventLog | Scenario::Dummy => {
                let path = match opts.base_path.as_str() {
                    "" | "/" => contract::EVENTS_PATH.to_owned(),
                    p if p.contains('?') => return Err(GenError::Query(p.to_owned(), scenario)),
                    p => p.to_owned(),
                };
                let expect = if scenario == Scenario::Dummy {
                    Expect::CountExactly(1)
                } else {
                    Expect::Count { min: 1 }
                };
                (0..n)
                    .map(|i| Request {
                        method: Method::Post,
                        path: path.clone(),
                        content_type: Some(contract::JSON),
                        body: Bytes::from(random_event(&mut rng, i).to_json()),
                        expect: expect.clone(),
                    })
                    .collect()
            }
            Scenario::DbRead => {
                let base = opts.base_path.trim_end_matches('/');
                if base.contains('?') {
                    return Err(GenError::Query(base.to_owned(), scenario));
                }
                if !base.strip_prefix("/db/").is_some_and(|d| !d.is_empty() && !d.contains('/')) {
                    return Err(GenError::DbReadPath(opts.base_path.clone()));
                }
                (0..n)
                    .map(|_| {
                        let a = 1 + (rng.next_u64() % u64::from(dbread::ROWS)) as u32;
                        let b = 1 + (rng.next_u64() % u64::from(dbread::ROWS)) as u32;
                        Request {
                            method: Method::Get,
                            path: format!("{base}?a={a}&b={b}"),
                            content_type: None,
                            body: Bytes::new(),
                            expect: Expect::Rows { a, b },
                        }
                    })
                    .collect()
            }
            Scenario::BubbleSort => {
                // Every request sends the original experiment's list (the contract's load).
                let sorted: Arc<[i32]> = bubble::SEED_SORTED.clone().into();
                let (content_type, body, expect) = if opts.connect_json {
                    let body = serde_json::json!({ "data": &*bubble::SEED }).to_string();
                    (contract::JSON, Bytes::from(body), Expect::SortedJson(sorted))
                } else {
                    let mut body = Vec::new();
                    bubble::encode_list(&bubble::SEED, &mut body);
                    ("application/grpc", Bytes::from(body), Expect::SortedProto(sorted))
                };
                vec![Request {
                    method: Method::Post,
                    path: bubble::GRPC_PATH.to_owned(),
                    content_type: Some(content_type),
                    body,
                    expect,
                }]
            }
        };
        Ok(RequestGen { pool: pool.into(), next: 0 })
    }

    /// The next request; wraps around the pool.
    pub fn next_request(&mut self) -> &Request {
        let r = &self.pool[self.next];
        self.next = (self.next + 1) % self.pool.len();
        r
    }

    /// A generator over the same pool starting at a different place, for worker `index`.
    #[must_use]
    pub fn fork(&self, index: usize) -> RequestGen {
        let step = (self.pool.len() / 7).max(1);
        RequestGen { pool: Arc::clone(&self.pool), next: (index * step) % self.pool.len() }
    }

    /// The whole pool.
    pub fn requests(&self) -> &[Request] {
        &self.pool
    }
}

const TYPES: [&str; 8] =
    ["page_view", "click", "signup", "purchase", "search", "logout", "add_to_cart", "share"];
const SOURCES: [&str; 5] = ["web", "ios", "android", "api", "batch"];
/// 2025-12-01T00:00:00Z, the contract example's timestamp.
const BASE_TIMESTAMP_MS: u64 = 1_764_460_800_000;

fn random_event(rng: &mut SplitMix64, i: usize) -> Event<'static> {
    Event {
        kind: TYPES[(rng.next_u64() % TYPES.len() as u64) as usize].into(),
        source: SOURCES[(rng.next_u64() % SOURCES.len() as u64) as usize].into(),
        value: (rng.next_u64() % 100_000) as f64 / 100.0,
        timestamp_ms: Some(BASE_TIMESTAMP_MS + i as u64 * 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{ResponseView, check};
    use crate::event::parse_event;

    fn generator(s: Scenario, base: &str) -> RequestGen {
        RequestGen::new(s, &GenOptions { base_path: base.into(), pool: 64, ..GenOptions::default() }).unwrap()
    }

    #[test]
    fn event_requests_are_valid_events() {
        let g = generator(Scenario::EventLog, "/");
        assert_eq!(g.requests().len(), 64);
        for r in g.requests() {
            assert_eq!(r.path, "/events");
            parse_event(&r.body).unwrap();
        }
    }

    #[test]
    fn same_seed_same_requests() {
        let a = generator(Scenario::DbRead, "/db/sqlite");
        let b = generator(Scenario::DbRead, "/db/sqlite/");
        let paths = |g: &RequestGen| g.requests().iter().map(|r| r.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&a), paths(&b));
        assert!(paths(&a)[0].starts_with("/db/sqlite?a="));
    }

    #[test]
    fn db_read_requests_expect_their_rows() {
        for r in generator(Scenario::DbRead, "/db/redis").requests() {
            let Expect::Rows { a, b } = r.expect else { panic!() };
            let mut body = String::new();
            dbread::write_answer(&mut body, a, b);
            let resp =
                ResponseView { status: 200, content_type: Some(b"application/json"), body: body.as_bytes() };
            assert_eq!(check(&r.expect, &resp), Ok(()));
        }
    }

    #[test]
    fn db_read_needs_a_driver() {
        for bad in ["", "/", "/db", "/db/", "/other/x", "/db/a/b"] {
            let opts = GenOptions { base_path: bad.into(), ..GenOptions::default() };
            assert!(RequestGen::new(Scenario::DbRead, &opts).is_err(), "{bad}");
        }
    }

    #[test]
    fn bubble_sends_the_seed() {
        let g = generator(Scenario::BubbleSort, "/");
        assert_eq!(bubble::decode_list(&g.requests()[0].body).unwrap(), *bubble::SEED);
    }

    #[test]
    fn forks_cycle_over_the_same_pool() {
        let mut g = generator(Scenario::Dummy, "/");
        let mut f = g.fork(1);
        let first = g.next_request().body.clone();
        assert_ne!(f.next_request().body, first);
        for _ in 0..63 {
            g.next_request();
        }
        assert_eq!(g.next_request().body, first);
    }
}
