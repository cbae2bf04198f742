//! MySQL/MariaDB through mysql_async and its pool, prepared statements.
//!
//! MariaDB has no data-modifying `WITH`, so:
//! - `--count query`: `INSERT` (autocommit: committed and, with InnoDB's
//!   default `innodb_flush_log_at_trx_commit=1`, in the fsynced redo log), then
//!   `SELECT COUNT(*)`: two round trips, the original experiment's two steps.
//! - `--count counter`: a transaction with the `INSERT` and
//!   `UPDATE t_count SET n = LAST_INSERT_ID(n + 1)`, whose OK packet carries
//!   the new count back (no extra `SELECT`), then `COMMIT`.
//!
//! A connection that failed is not returned to the pool; the next request
//! opens a new one, so the server recovers when the database comes back.

use std::time::Duration;

use mysql_async::prelude::Queryable as _;
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts, TxOpts};

use super::url::{SqlOptions, redact};
use super::{CountMode, Store, StoreError, StoreFuture, StoredEvent};

pub struct MysqlStore {
    pool: Pool,
    mode: CountMode,
    insert_sql: String,
    count_sql: String,
    bump_sql: String,
    table: String,
    label: String,
    describe: String,
}

impl MysqlStore {
    pub async fn open(opts: &SqlOptions, mode: CountMode) -> Result<Self, StoreError> {
        let parsed = Opts::from_url(&opts.url).map_err(|e| {
            StoreError::Url(format!(
                "{} is not a MySQL URL ({e}); write mysql://USER@HOST:3306/DB",
                redact(&opts.url)
            ))
        })?;
        if parsed.db_name().is_none() {
            return Err(StoreError::Url(format!(
                "{} names no database; write mysql://USER@HOST:3306/DB",
                redact(&opts.url)
            )));
        }
        let constraints = PoolConstraints::new(0, opts.pool).unwrap_or_default();
        let builder = OptsBuilder::from_opts(parsed)
            .pool_opts(PoolOpts::default().with_constraints(constraints).with_reset_connection(false))
            .tcp_keepalive(Some(Duration::from_secs(10)));
        let pool = Pool::new(builder);
        let label = format!("MySQL/MariaDB at {}", redact(&opts.url));
        let fail = |e: mysql_async::Error| StoreError::unavailable(&label, e);
        let mut conn = tokio::time::timeout(Duration::from_secs(5), pool.get_conn())
            .await
            .map_err(|_| StoreError::Unavailable(format!("{label} did not answer within 5 s")))?
            .map_err(|e| {
                StoreError::Unavailable(format!(
                    "cannot connect to {label}: {e} (is it running? check --store)"
                ))
            })?;
        let t = &opts.table;
        conn.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {t} (
                 id BIGINT AUTO_INCREMENT PRIMARY KEY,
                 kind VARCHAR(64) NOT NULL, source VARCHAR(64) NOT NULL,
                 value DOUBLE NOT NULL, ts_ms BIGINT NOT NULL) ENGINE=InnoDB"
        ))
        .await
        .map_err(fail)?;
        conn.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {t}_count (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB"
        ))
        .await
        .map_err(fail)?;
        conn.query_drop(format!("INSERT IGNORE INTO {t}_count (id, n) VALUES (1, 0)")).await.map_err(fail)?;
        if mode == CountMode::Counter {
            conn.query_drop(format!("UPDATE {t}_count SET n = (SELECT COUNT(*) FROM {t}) WHERE id = 1"))
                .await
                .map_err(fail)?;
        }
        let flush: Option<String> =
            conn.query_first("SELECT @@innodb_flush_log_at_trx_commit").await.unwrap_or_default();
        let flush = flush.unwrap_or_else(|| "unknown".into());
        let durability = match flush.as_str() {
            "1" => "every acknowledged event is in InnoDB's fsynced redo log",
            "0" | "2" => {
                "the redo log is fsynced about once a second: a database or OS crash may lose the last second"
            }
            _ => "durability unknown",
        };
        let describe = format!("{label}, table {t} (innodb_flush_log_at_trx_commit={flush}: {durability})");
        drop(conn);
        Ok(MysqlStore {
            pool,
            mode,
            insert_sql: format!("INSERT INTO {t} (kind, source, value, ts_ms) VALUES (?, ?, ?, ?)"),
            count_sql: match mode {
                CountMode::Query => format!("SELECT COUNT(*) FROM {t}"),
                CountMode::Counter => format!("SELECT n FROM {t}_count WHERE id = 1"),
            },
            bump_sql: format!("UPDATE {t}_count SET n = LAST_INSERT_ID(n + 1) WHERE id = 1"),
            table: t.clone(),
            label,
            describe,
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::unavailable(&self.label, e)
    }

    async fn append_inner(&self, e: StoredEvent<'_>) -> Result<u64, mysql_async::Error> {
        let mut conn = self.pool.get_conn().await?;
        let row = (e.kind, e.source, e.value, e.timestamp_ms);
        match self.mode {
            CountMode::Query => {
                conn.exec_drop(&self.insert_sql, row).await?;
                Ok(conn.exec_first::<u64, _, _>(&self.count_sql, ()).await?.unwrap_or(0))
            }
            CountMode::Counter => {
                let mut tx = conn.start_transaction(TxOpts::default()).await?;
                tx.exec_drop(&self.insert_sql, row).await?;
                tx.exec_drop(&self.bump_sql, ()).await?;
                let n = tx.last_insert_id().unwrap_or(0);
                tx.commit().await?;
                Ok(n)
            }
        }
    }
}

impl Store for MysqlStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        Box::pin(async move { self.append_inner(e).await.map_err(|e| self.fail(e)) })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let mut conn = self.pool.get_conn().await.map_err(|e| self.fail(e))?;
            let n = conn.exec_first::<u64, _, _>(&self.count_sql, ()).await.map_err(|e| self.fail(e))?;
            Ok(n.unwrap_or(0))
        })
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut conn = self.pool.get_conn().await.map_err(|e| self.fail(e))?;
            let t = &self.table;
            conn.query_drop(format!("TRUNCATE TABLE {t}")).await.map_err(|e| self.fail(e))?;
            conn.query_drop(format!("UPDATE {t}_count SET n = 0 WHERE id = 1"))
                .await
                .map_err(|e| self.fail(e))
        })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}
