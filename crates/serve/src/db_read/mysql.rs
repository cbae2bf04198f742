//! `mysql-async`: the raw async MySQL/MariaDB driver with its own pool and its
//! per-connection statement cache (`exec` prepares a statement once per
//! connection).
//!
//! The pool's constraints are `min = max = size`: mysql_async keeps at most
//! `min` idle connections (with its default `inactive_connection_ttl` of 0) and
//! disconnects the rest on their return, so a smaller `min` reconnects on every
//! request (measured: 3.5 times the CPU per request and a new connection each
//! time; `db_read_outage.rs` guards it).
//!
//! Two settings differ from the driver's defaults, each following its own
//! documentation: `reset_connection(false)`, because resetting a connection
//! on its return to the pool costs a round trip and empties the statement
//! cache (the docs say to opt out when no session state is changed, as here);
//! and `prefer_socket(false)` unless the URL says otherwise, so the driver
//! talks TCP to the address in the URL like every other driver, instead of
//! switching to the server's Unix socket behind the benchmark's back.

use mysql_async::prelude::Queryable as _;
use mysql_async::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use super::finish;
use super::postgres::{connect_error, item};
use super::sqlx_driver::MYSQL_SELECT;
use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError, redact};

struct MysqlAsync(Pool);

impl Fetch for MysqlAsync {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let fail = |e: mysql_async::Error| FetchError::new(Driver::MysqlAsync, e);
            let mut conn = self.0.get_conn().await.map_err(fail)?;
            let [a, b] = ids.map(|id| id as i32);
            let rows: Vec<(i32, String, i32)> = conn.exec(MYSQL_SELECT, (a, b)).await.map_err(fail)?;
            rows.into_iter()
                .map(|(id, name, price)| item(Driver::MysqlAsync, id, name, price))
                .collect::<Result<Rows, _>>()
        })
    }
}

/// A mysql_async pool of `size` connections with the settings above.
pub(crate) fn pool(url: &str, size: u32) -> Result<Pool, SetupError> {
    let opts = Opts::from_url(url).map_err(|e| SetupError::Url {
        what: redact(url),
        database: "MySQL/MariaDB",
        reason: e.to_string(),
    })?;
    // min = max: with its default `inactive_connection_ttl` of 0 the pool keeps at most
    // `min` idle connections and closes the others when they come back, so a `min` of 0
    // would open a new connection for every request.
    let size = size.max(1) as usize;
    let constraints = PoolConstraints::new(size, size).expect("min <= max and max > 0");
    let mut builder = OptsBuilder::from_opts(opts)
        .pool_opts(PoolOpts::default().with_constraints(constraints).with_reset_connection(false));
    if !url.contains("prefer_socket=") {
        builder = builder.prefer_socket(false);
    }
    Ok(Pool::new(builder))
}

/// Adds `mysql-async` on `url`.
pub(crate) async fn add(drivers: &mut Drivers, url: &str, size: u32) -> Result<(), SetupError> {
    let driver = Driver::MysqlAsync;
    let pool = pool(url, size)?;
    drop(pool.get_conn().await.map_err(|e| connect_error(driver, url, &e))?);
    finish(drivers, driver, url, size, Box::new(MysqlAsync(pool))).await
}
