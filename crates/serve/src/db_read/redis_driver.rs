//! `redis`: redis-rs with `ConnectionManager`s (multiplexed connections that
//! reconnect by themselves, the crate's recommendation for long-lived async
//! services), one pipeline per request: `HMGET item:<a> name price` and, for a
//! different id, `HMGET item:<b> name price`, sent together, one round trip.
//!
//! A multiplexed connection pipelines every concurrent request on it; the
//! managers are used round-robin.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use stackbench_contract::dbread::{Item, redis_key};

use super::postgres::connect_error;
use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError, add_checked, redact};

struct Redis {
    managers: Vec<ConnectionManager>,
    next: AtomicUsize,
}

impl Fetch for Redis {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let fail = |e: &dyn std::fmt::Display| FetchError::new(Driver::Redis, e);
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.managers.len();
            let mut conn = self.managers[i].clone();
            let distinct = if ids[0] == ids[1] { &ids[..1] } else { &ids[..] };
            let mut pipe = redis::pipe();
            for &id in distinct {
                pipe.cmd("HMGET").arg(redis_key(id)).arg("name").arg("price");
            }
            let fields: Vec<(Option<String>, Option<u32>)> =
                pipe.query_async(&mut conn).await.map_err(|e| fail(&e))?;
            let mut rows = Rows::with_capacity(2);
            for (&id, hash) in distinct.iter().zip(fields) {
                match hash {
                    (Some(name), Some(price)) => rows.push(Item { id, name, price }),
                    (None, None) => {}
                    _ => return Err(fail(&format_args!("hash {} lacks name or price", redis_key(id)))),
                }
            }
            Ok(rows)
        })
    }
}

/// `size` connection managers on `url`.
pub(crate) async fn managers(url: &str, size: u32) -> Result<Vec<ConnectionManager>, SetupError> {
    let client = redis::Client::open(url).map_err(|e| SetupError::Url {
        what: redact(url),
        database: "Redis",
        reason: e.to_string(),
    })?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(5)))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_millis(500));
    let mut managers = Vec::with_capacity(size as usize);
    for _ in 0..size.max(1) {
        let m = ConnectionManager::new_with_config(client.clone(), config.clone())
            .await
            .map_err(|e| connect_error(Driver::Redis, url, &e))?;
        managers.push(m);
    }
    Ok(managers)
}

/// Adds `redis` on `url`.
pub(crate) async fn add(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let fetch = Redis { managers: managers(url, size).await?, next: AtomicUsize::new(0) };
    let plural = if size == 1 { "" } else { "s" };
    add_checked(
        drivers,
        Driver::Redis,
        redact(url),
        &redact(url),
        format!("{size} multiplexed connection{plural}"),
        Box::new(fetch),
    )
    .await
}
