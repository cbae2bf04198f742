//! `tokio-postgres`: the raw async PostgreSQL driver, pooled by
//! deadpool-postgres (the pool its documentation points to), one cached
//! prepared statement per connection, one `WHERE id IN ($1, $2)` query per
//! request.
//!
//! Recycling is deadpool's `Fast` method (`Client::is_closed`, no round trip):
//! a connection broken by a database restart is dropped when it comes back to
//! the pool, and the next request opens a fresh one, so the server recovers
//! without a restart.

use std::str::FromStr as _;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use stackbench_contract::dbread::Item;
use tokio_postgres::NoTls;

use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError, redact};
use crate::error_chain::ErrorChain;

/// The query of every SQL driver on PostgreSQL.
pub(crate) const SELECT: &str = "SELECT id, name, price FROM items WHERE id IN ($1, $2)";
/// How long opening one connection may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

struct TokioPostgres {
    pool: Pool,
}

impl Fetch for TokioPostgres {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let fail = |e: &dyn std::error::Error| FetchError::new(Driver::TokioPostgres, e.chain());
            let client = self.pool.get().await.map_err(|e| fail(&e))?;
            let stmt = client.prepare_cached(SELECT).await.map_err(|e| fail(&e))?;
            let [a, b] = ids.map(|id| id as i32);
            let rows = client.query(&stmt, &[&a, &b]).await.map_err(|e| fail(&e))?;
            rows.iter()
                .map(|row| {
                    let (id, name, price) = (
                        row.try_get::<_, i32>(0).map_err(|e| fail(&e))?,
                        row.try_get::<_, String>(1).map_err(|e| fail(&e))?,
                        row.try_get::<_, i32>(2).map_err(|e| fail(&e))?,
                    );
                    item(Driver::TokioPostgres, id, name, price)
                })
                .collect::<Result<Rows, _>>()
        })
    }
}

/// A row from SQL integers, refusing negative values.
pub(crate) fn item(driver: Driver, id: i32, name: String, price: i32) -> Result<Item, FetchError> {
    match (u32::try_from(id), u32::try_from(price)) {
        (Ok(id), Ok(price)) => Ok(Item { id, name, price }),
        _ => Err(FetchError::new(driver, format_args!("row {id} has a negative id or price {price}"))),
    }
}

/// Adds `tokio-postgres` on `url` with `size` connections.
pub(crate) async fn add(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let driver = Driver::TokioPostgres;
    let mut pg = tokio_postgres::Config::from_str(url).map_err(|e| SetupError::Url {
        what: redact(url),
        database: "PostgreSQL",
        reason: e.to_string(),
    })?;
    pg.connect_timeout(CONNECT_TIMEOUT);
    let manager = Manager::from_config(pg, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    let pool = Pool::builder(manager)
        .max_size(size as usize)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(5)))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| connect_error(driver, url, &e))?;
    drop(pool.get().await.map_err(|e| connect_error(driver, url, &e))?);
    super::finish(drivers, driver, url, size, Box::new(TokioPostgres { pool })).await
}

pub(crate) fn connect_error(driver: Driver, url: &str, e: &dyn ErrorChain) -> SetupError {
    SetupError::Connect { driver, database: redact(url), reason: e.chain() }
}
