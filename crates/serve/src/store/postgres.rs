//! PostgreSQL through tokio-postgres and a deadpool pool: one round trip and
//! one statement per event, prepared once per connection.
//!
//! - `--count query`: `WITH ins AS (INSERT …) SELECT COUNT(*) + 1 FROM t`. The
//!   sub-statements of a `WITH` see the snapshot taken before the statement, so
//!   `COUNT(*)` does not see the row being inserted: `+ 1` adds it. The count
//!   scans the table, the original experiment's growing cost.
//! - `--count counter`: `WITH ins AS (INSERT …) UPDATE t_count SET n = n + 1
//!   RETURNING n`: the event and the counter commit together or not at all.
//!
//! Durability is the server's: with `synchronous_commit=on` (PostgreSQL's
//! default) a statement returns once its WAL is fsynced. A broken connection is
//! dropped by the pool's recycle check, so the next request reconnects.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::url::{SqlOptions, redact};
use super::{CountMode, Store, StoreError, StoreFuture, StoredEvent};
use crate::error_chain::ErrorChain as _;

/// How long to wait for a connection (new or from the pool).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

pub struct PostgresStore {
    pool: Pool,
    append_sql: String,
    count_sql: String,
    table: String,
    label: String,
    describe: String,
}

impl PostgresStore {
    pub async fn open(opts: &SqlOptions, mode: CountMode) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config = opts.url.parse().map_err(|e| {
            StoreError::Url(format!(
                "{} is not a PostgreSQL URL ({e}); write postgres://USER@HOST:5432/DB",
                redact(&opts.url)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let label = format!("PostgreSQL at {}", redact(&opts.url));
        let manager =
            Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(opts.pool)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Url(format!("cannot build the PostgreSQL pool: {e}")))?;
        let t = &opts.table;
        let client = pool.get().await.map_err(|e| {
            StoreError::Unavailable(format!("cannot connect to {label}: {e} (is it running? check --store)"))
        })?;
        let fail = |e: tokio_postgres::Error| StoreError::unavailable(&label, e.chain());
        client
            .batch_execute(&serialized_ddl(&format!(
                "CREATE TABLE IF NOT EXISTS {t} (
                     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                     kind TEXT NOT NULL, source TEXT NOT NULL,
                     value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL);
                 CREATE TABLE IF NOT EXISTS {t}_count (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
                 INSERT INTO {t}_count (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;"
            )))
            .await
            .map_err(fail)?;
        if mode == CountMode::Counter {
            client
                .batch_execute(&format!("UPDATE {t}_count SET n = (SELECT COUNT(*) FROM {t}) WHERE id = 1"))
                .await
                .map_err(fail)?;
        }
        let sync: String = client
            .query_one("SHOW synchronous_commit", &[])
            .await
            .map_or_else(|_| "unknown".into(), |row| row.get(0));
        let durability = if sync == "off" {
            "synchronous_commit=off: a PostgreSQL crash may lose the last acknowledged events"
        } else {
            "every acknowledged event is in PostgreSQL's fsynced WAL"
        };
        let insert = format!("INSERT INTO {t} (kind, source, value, ts_ms) VALUES ($1, $2, $3, $4)");
        let (append_sql, count_sql) = match mode {
            CountMode::Query => (
                format!("WITH ins AS ({insert}) SELECT COUNT(*) + 1 FROM {t}"),
                format!("SELECT COUNT(*) FROM {t}"),
            ),
            CountMode::Counter => (
                format!("WITH ins AS ({insert}) UPDATE {t}_count SET n = n + 1 WHERE id = 1 RETURNING n"),
                format!("SELECT n FROM {t}_count WHERE id = 1"),
            ),
        };
        let describe = format!("{label}, table {t} (synchronous_commit={sync}: {durability})");
        drop(client);
        Ok(PostgresStore { pool, append_sql, count_sql, table: t.clone(), label, describe })
    }

    /// The store's error with its whole cause: a server-side error's own
    /// `Display` is only "db error", its message is in the source.
    fn fail(&self, e: impl std::error::Error) -> StoreError {
        StoreError::unavailable(&self.label, e.chain())
    }
}

impl Store for PostgresStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(|e| self.fail(e))?;
            let stmt = client.prepare_cached(&self.append_sql).await.map_err(|e| self.fail(e))?;
            let ts = i64::try_from(e.timestamp_ms).unwrap_or(i64::MAX);
            let row = client
                .query_one(&stmt, &[&e.kind, &e.source, &e.value, &ts])
                .await
                .map_err(|e| self.fail(e))?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(|e| self.fail(e))?;
            let stmt = client.prepare_cached(&self.count_sql).await.map_err(|e| self.fail(e))?;
            let row = client.query_one(&stmt, &[]).await.map_err(|e| self.fail(e))?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(|e| self.fail(e))?;
            let t = &self.table;
            client
                .batch_execute(&format!("TRUNCATE {t}; UPDATE {t}_count SET n = 0 WHERE id = 1;"))
                .await
                .map_err(|e| self.fail(e))
        })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}

/// `ddl` (statements creating tables `IF NOT EXISTS`) in one transaction that
/// first takes an advisory lock, so that processes creating the same tables at
/// once take turns. `IF NOT EXISTS` alone does not serialize them: the loser
/// fails in the catalog ("relation" or "type already exists", or a unique
/// violation, depending on timing), or goes on before the winner's tables are
/// committed.
pub(crate) fn serialized_ddl(ddl: &str) -> String {
    /// The advisory lock key ("sbcreate").
    const KEY: i64 = 0x7362_6372_6561_7465;
    format!("BEGIN; SELECT pg_advisory_xact_lock({KEY}); {ddl}; COMMIT")
}
