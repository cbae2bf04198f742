//! `sqlx-postgres` and `sqlx-mysql`: sqlx's pool and `query_as`, which
//! prepares the statement once per connection and keeps it in sqlx's
//! statement cache (sqlx calls these "persistent" queries, the default).
//!
//! Pool settings, the same for both and for SeaORM's pools
//! ([`pool_options`]): `test_before_acquire(false)` because sqlx would
//! otherwise ping the connection before every query, a second round trip per
//! request (SeaORM's documentation suggests turning it off for the same
//! reason); a 5 s acquire timeout so a request waits at most that long for a
//! connection while the database is down. sqlx still pings a connection when
//! it returns to the pool (sqlx-core 0.9 `Floating::return_to_pool`), off the
//! request's path but on the connection's: that round trip cannot be turned
//! off, and it is part of what this driver costs.

use std::time::Duration;

use sqlx::pool::PoolOptions;
use sqlx::{Database, MySqlPool, PgPool};

use super::postgres::{SELECT as PG_SELECT, connect_error, item};
use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError, finish};

/// The query on MySQL/MariaDB.
pub(crate) const MYSQL_SELECT: &str = "SELECT id, name, price FROM items WHERE id IN (?, ?)";

/// The pool options of every sqlx pool here (sqlx and SeaORM drivers).
pub(crate) fn pool_options<DB: Database>(size: u32) -> PoolOptions<DB> {
    PoolOptions::new()
        .max_connections(size)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(false)
}

struct SqlxPostgres(PgPool);

impl Fetch for SqlxPostgres {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let [a, b] = ids.map(|id| id as i32);
            let rows: Vec<(i32, String, i32)> = sqlx::query_as(PG_SELECT)
                .bind(a)
                .bind(b)
                .fetch_all(&self.0)
                .await
                .map_err(|e| FetchError::new(Driver::SqlxPostgres, e))?;
            rows.into_iter().map(|(id, name, price)| item(Driver::SqlxPostgres, id, name, price)).collect()
        })
    }
}

struct SqlxMysql(MySqlPool);

impl Fetch for SqlxMysql {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let [a, b] = ids.map(|id| id as i32);
            let rows: Vec<(i32, String, i32)> = sqlx::query_as(MYSQL_SELECT)
                .bind(a)
                .bind(b)
                .fetch_all(&self.0)
                .await
                .map_err(|e| FetchError::new(Driver::SqlxMysql, e))?;
            rows.into_iter()
                .map(|(id, name, price)| item(Driver::SqlxMysql, id, name, price))
                .collect::<Result<Rows, _>>()
        })
    }
}

/// An sqlx PostgreSQL pool of `size` connections (also SeaORM's).
pub(crate) async fn pg_pool(driver: Driver, url: &str, size: u32) -> Result<PgPool, SetupError> {
    pool_options(size).connect(url).await.map_err(|e| connect_error(driver, url, &e))
}

/// An sqlx MySQL pool of `size` connections (also SeaORM's).
pub(crate) async fn mysql_pool(driver: Driver, url: &str, size: u32) -> Result<MySqlPool, SetupError> {
    pool_options(size).connect(url).await.map_err(|e| connect_error(driver, url, &e))
}

/// Adds `sqlx-postgres` on `url`.
pub(crate) async fn add_postgres(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let fetch = SqlxPostgres(pg_pool(Driver::SqlxPostgres, url, size).await?);
    finish(drivers, Driver::SqlxPostgres, url, size, Box::new(fetch)).await
}

/// Adds `sqlx-mysql` on `url`.
pub(crate) async fn add_mysql(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let fetch = SqlxMysql(mysql_pool(Driver::SqlxMysql, url, size).await?);
    finish(drivers, Driver::SqlxMysql, url, size, Box::new(fetch)).await
}
