//! The stores of the `event-log` contestant: where an accepted event is
//! written and how all events are counted (the three-kings experiment's steps 3 and 4).
//!
//! One object-safe trait, [`Store`], with one implementation per kind of store,
//! each on its real client library, pooled and reconnecting:
//!
//! | URL | module | write, then count |
//! |---|---|---|
//! | `sqlite:PATH` (the default) | [`sqlite`] | one writer thread, group commit; `COUNT(*)` or a counter row |
//! | `postgres://…` | [`postgres`] | one statement (`WITH … INSERT`) per event |
//! | `mysql://…` (MariaDB) | [`mysql`] | `INSERT` then `COUNT(*)`, or a counter row in a transaction |
//! | `redis://…` | [`redis`] | a stream: `MULTI XADD XLEN EXEC` or `MULTI XADD INCR EXEC` |
//! | `influxdb://host:8086/DB` | [`influx`] | line protocol over HTTP, InfluxQL `COUNT` |
//!
//! [`CountMode::Query`] counts all events after each write, like the original experiment (its
//! cost grows with the store); [`CountMode::Counter`] keeps an exact count
//! updated atomically with the write (O(1)). A failure is a [`StoreError`]:
//! `Unavailable` becomes a 503 and the next request tries again on a fresh
//! connection, so the server recovers by itself when the store returns.

pub mod influx;
#[cfg(test)]
pub mod memory;
#[cfg(feature = "db-servers")]
pub mod mysql;
#[cfg(feature = "db-servers")]
pub mod postgres;
#[cfg(feature = "db-servers")]
pub mod redis;
pub mod sqlite;
pub mod url;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

pub use url::{DEFAULT_STORE, StoreSpec};

/// An event as it is stored: validated, with its timestamp resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredEvent<'a> {
    pub kind: &'a str,
    pub source: &'a str,
    pub value: f64,
    pub timestamp_ms: u64,
}

/// How the count after a write is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CountMode {
    /// Count all events after each write, as the original experiment did (cost grows with the store).
    #[default]
    Query,
    /// Keep an exact count, updated atomically with each write (O(1)).
    Counter,
}

impl CountMode {
    pub const fn name(self) -> &'static str {
        match self {
            CountMode::Query => "query",
            CountMode::Counter => "counter",
        }
    }
}

impl fmt::Display for CountMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CountMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "query" => Ok(CountMode::Query),
            "counter" => Ok(CountMode::Counter),
            _ => Err(format!("unknown count mode {s:?}; use query or counter")),
        }
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The `--store` URL is wrong; the message says how to write it.
    #[error("{0}")]
    Url(String),
    /// The store is unreachable or failing; a later request may succeed (503).
    #[error("{0}")]
    Unavailable(String),
    /// The store cannot hold this (valid) event; nothing was written (400).
    #[error("{0}")]
    Unstorable(String),
}

impl StoreError {
    /// `<label> is unavailable: <cause>`.
    pub fn unavailable(label: &str, cause: impl fmt::Display) -> Self {
        StoreError::Unavailable(format!("{label} is unavailable: {cause}"))
    }
}

/// A boxed future of a store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Where events are written and counted. Implementations are cheap to share
/// (`&self` everywhere) and safe to call from many tasks at once.
pub trait Store: Send + Sync {
    /// Writes one event with the store's acknowledged-write durability, then
    /// answers the number of events in the store after this write. `Ok` means
    /// the write is durable as [`Store::describe`] says.
    fn append<'a>(&'a self, event: StoredEvent<'a>) -> StoreFuture<'a, u64>;

    /// The number of events in the store, without writing.
    fn count(&self) -> StoreFuture<'_, u64>;

    /// Empties the store (the original experiment's "clean empty state"; only `--reset` calls it).
    fn reset(&self) -> StoreFuture<'_, ()>;

    /// One line for people: which store, and how durable an acknowledged write is.
    fn describe(&self) -> String;
}

/// Opens the store `spec` names: connects (failing fast with a message that
/// says what to check), creates what is missing (table, database) and, in
/// counter mode, brings the counter in line with the events already stored.
pub async fn open(spec: &StoreSpec, mode: CountMode) -> Result<Box<dyn Store>, StoreError> {
    Ok(match spec {
        StoreSpec::Sqlite(opts) => Box::new(sqlite::SqliteStore::open(opts, mode)?),
        #[cfg(feature = "db-servers")]
        StoreSpec::Postgres(opts) => Box::new(postgres::PostgresStore::open(opts, mode).await?),
        #[cfg(feature = "db-servers")]
        StoreSpec::Mysql(opts) => Box::new(mysql::MysqlStore::open(opts, mode).await?),
        #[cfg(feature = "db-servers")]
        StoreSpec::Redis(opts) => Box::new(redis::RedisStore::open(opts, mode).await?),
        #[cfg(not(feature = "db-servers"))]
        StoreSpec::Postgres(_) | StoreSpec::Mysql(_) | StoreSpec::Redis(_) => {
            return Err(StoreError::Url(crate::not_built(spec.kind())));
        }
        StoreSpec::Influx(opts) => Box::new(influx::InfluxStore::open(opts, mode).await?),
    })
}

/// Milliseconds since the Unix epoch, now (the timestamp of an event sent without one).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Is `name` usable as a table, key or measurement name without quoting?
/// `[A-Za-z_][A-Za-z0-9_]*`, at most 48 characters (so `<name>_count` fits
/// every database's identifier limit).
pub(crate) fn valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 48
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in ["stackbench_events", "_x", "E1"] {
            assert!(valid_identifier(ok), "{ok}");
        }
        for bad in ["", "1x", "a-b", "a b", "x;drop", &"a".repeat(49)] {
            assert!(!valid_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn count_modes_parse() {
        assert_eq!("counter".parse::<CountMode>(), Ok(CountMode::Counter));
        assert!("fast".parse::<CountMode>().unwrap_err().contains("query or counter"));
        assert_eq!(CountMode::default().to_string(), "query");
    }
}
