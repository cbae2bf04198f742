//! Redis through redis-rs's `ConnectionManager` (one multiplexed connection,
//! reconnected automatically), in the original experiment's "nosql" spirit: every event is an
//! entry of one stream (`XADD key * type … source … value … ts …`).
//!
//! Both count modes are one round trip, one `MULTI … EXEC` (atomic):
//! - `query`: `XADD` + `XLEN`. Redis keeps a stream's length, so this "count of
//!   all events" is O(1) already; there is no growing count to show on Redis.
//! - `counter`: `XADD` + `INCR key:count`.
//!
//! Durability is whatever the server is configured for, and is printed at
//! start: with `appendonly no` (the default, and how CI's Redis runs) an
//! acknowledged event lives in Redis's memory until the next RDB snapshot, and
//! a Redis crash or restart loses it; `appendonly yes` with `appendfsync
//! everysec` loses at most about a second; only `appendfsync always` fsyncs
//! every event before the answer. Killing the stackbench server loses nothing
//! either way: the event is in Redis once `EXEC` answers.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::url::{RedisOptions, redact};
use super::{CountMode, Store, StoreError, StoreFuture, StoredEvent};

pub struct RedisStore {
    conn: ConnectionManager,
    mode: CountMode,
    key: String,
    count_key: String,
    label: String,
    describe: String,
}

impl RedisStore {
    pub async fn open(opts: &RedisOptions, mode: CountMode) -> Result<Self, StoreError> {
        let label = format!("Redis at {}", redact(&opts.url));
        let client = redis::Client::open(opts.url.as_str()).map_err(|e| {
            StoreError::Url(format!(
                "{} is not a Redis URL ({e}); write redis://HOST:6379/0",
                redact(&opts.url)
            ))
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let mut conn = ConnectionManager::new_with_config(client, config).await.map_err(|e| {
            StoreError::Unavailable(format!("cannot connect to {label}: {e} (is it running? check --store)"))
        })?;
        let key = opts.key.clone();
        let count_key = format!("{key}:count");
        if mode == CountMode::Counter {
            // A query-mode server leaves the counter behind; start from the truth.
            let _: u64 = redis::Script::new(
                "local n = redis.call('XLEN', KEYS[1]) redis.call('SET', KEYS[2], n) return n",
            )
            .key(&key)
            .key(&count_key)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| StoreError::unavailable(&label, e))?;
        }
        let describe = format!("{label}, stream {key} ({})", durability(&mut conn).await);
        Ok(RedisStore { conn, mode, key, count_key, label, describe })
    }

    fn fail(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::unavailable(&self.label, e)
    }
}

/// What the server's persistence settings mean for an acknowledged event.
async fn durability(conn: &mut ConnectionManager) -> String {
    async fn get(conn: &mut ConnectionManager, name: &str) -> Option<String> {
        let pair: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query_async(conn).await.ok()?;
        pair.into_iter().nth(1)
    }
    let (Some(aof), Some(fsync)) = (get(conn, "appendonly").await, get(conn, "appendfsync").await) else {
        return "durability unknown: CONFIG GET is not allowed on this server".into();
    };
    let save = get(conn, "save").await.unwrap_or_default();
    let snapshots = if save.trim().is_empty() { "no RDB snapshots" } else { "RDB snapshots" };
    match (aof.as_str(), fsync.as_str()) {
        ("yes", "always") => {
            "appendonly yes, appendfsync always: every acknowledged event is fsynced by Redis".into()
        }
        ("yes", "everysec") => {
            "appendonly yes, appendfsync everysec: a Redis or OS crash may lose the last second of events"
                .into()
        }
        ("yes", other) => format!(
            "appendonly yes, appendfsync {other}: the OS decides when events reach the disk; a crash may lose some"
        ),
        _ => format!(
            "appendonly no, {snapshots}: acknowledged events live in Redis's memory; a Redis restart or crash \
             loses those not yet snapshotted (run Redis with --appendonly yes --appendfsync always for durability)"
        ),
    }
}

impl Store for RedisStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.atomic()
                .cmd("XADD")
                .arg(&self.key)
                .arg("*")
                .arg("type")
                .arg(e.kind)
                .arg("source")
                .arg(e.source)
                .arg("value")
                .arg(e.value)
                .arg("ts")
                .arg(e.timestamp_ms)
                .ignore();
            match self.mode {
                CountMode::Query => pipe.cmd("XLEN").arg(&self.key),
                CountMode::Counter => pipe.cmd("INCR").arg(&self.count_key),
            };
            let (n,): (u64,) = pipe.query_async(&mut self.conn.clone()).await.map_err(|e| self.fail(e))?;
            Ok(n)
        })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let mut cmd = match self.mode {
                CountMode::Query => redis::cmd("XLEN"),
                CountMode::Counter => redis::cmd("GET"),
            };
            let key = if self.mode == CountMode::Query { &self.key } else { &self.count_key };
            let n: Option<u64> =
                cmd.arg(key).query_async(&mut self.conn.clone()).await.map_err(|e| self.fail(e))?;
            Ok(n.unwrap_or(0))
        })
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let _: u64 = redis::cmd("DEL")
                .arg(&self.key)
                .arg(&self.count_key)
                .query_async(&mut self.conn.clone())
                .await
                .map_err(|e| self.fail(e))?;
            Ok(())
        })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}
