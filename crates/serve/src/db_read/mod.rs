//! The `db-read` reference contestant ("Elixir and Erlang MySQL
//! database drivers"): `GET /db/{driver}?a=&b=` selects two rows of `items`
//! through one named driver, so the raw driver and the layers people write with
//! (sqlx, the SeaORM ORM) can be compared side by side, as the original experiment compared
//! epgsql, Postgrex and Ecto.
//!
//! - [`Driver`] names the eight drivers of the contract's table.
//! - [`Fetch`] is the one side effect: one round trip that returns the rows the
//!   database holds for two ids. Each driver module implements it the way its
//!   documentation recommends for production (pooled, prepared statements);
//!   tests use fakes.
//! - [`answer`] turns a request into the JSON answer or a [`Rejection`], with no
//!   HTTP stack involved; [`router`] is the axum adapter.
//! - [`connect`] opens the drivers of a [`Config`] and checks each one against
//!   the data set before the server listens; [`seed`] loads the data set.
//! - [`serve`] is the whole contestant, which `sb-db-read` runs.

pub mod answer;
#[cfg(feature = "db-servers")]
mod mysql;
mod pool;
#[cfg(feature = "db-servers")]
mod postgres;
#[cfg(feature = "db-servers")]
mod redis_driver;
pub mod router;
#[cfg(feature = "db-servers")]
mod sea_orm_driver;
pub mod seed;
mod sqlite;
#[cfg(feature = "db-servers")]
mod sqlx_driver;

use std::fmt;
use std::future::Future;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use stackbench_contract::dbread::Item;

pub use answer::Drivers;
pub use pool::{PoolSizes, pool_sizes};
pub use router::router;

use crate::events::Rejection;
use crate::server::{self, ServeError};

/// The drivers of the contract's table, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Driver {
    TokioPostgres,
    SqlxPostgres,
    SeaOrmPostgres,
    MysqlAsync,
    SqlxMysql,
    SeaOrmMysql,
    Redis,
    Sqlite,
}

impl Driver {
    pub const ALL: [Driver; 8] = [
        Driver::TokioPostgres,
        Driver::SqlxPostgres,
        Driver::SeaOrmPostgres,
        Driver::MysqlAsync,
        Driver::SqlxMysql,
        Driver::SeaOrmMysql,
        Driver::Redis,
        Driver::Sqlite,
    ];

    /// The name in `GET /db/{driver}`.
    pub const fn name(self) -> &'static str {
        match self {
            Driver::TokioPostgres => "tokio-postgres",
            Driver::SqlxPostgres => "sqlx-postgres",
            Driver::SeaOrmPostgres => "sea-orm-postgres",
            Driver::MysqlAsync => "mysql-async",
            Driver::SqlxMysql => "sqlx-mysql",
            Driver::SeaOrmMysql => "sea-orm-mysql",
            Driver::Redis => "redis",
            Driver::Sqlite => "sqlite",
        }
    }

    /// The database it reads.
    pub const fn database(self) -> &'static str {
        match self {
            Driver::TokioPostgres | Driver::SqlxPostgres | Driver::SeaOrmPostgres => "PostgreSQL",
            Driver::MysqlAsync | Driver::SqlxMysql | Driver::SeaOrmMysql => "MySQL/MariaDB",
            Driver::Redis => "Redis",
            Driver::Sqlite => "SQLite (embedded)",
        }
    }

    /// How it reads, in one phrase (what `serve` prints and `GET /db` lists).
    pub const fn layer(self) -> &'static str {
        match self {
            Driver::TokioPostgres => "raw async driver, deadpool-postgres pool, cached prepared statement",
            Driver::SqlxPostgres | Driver::SqlxMysql => "sqlx pool, sqlx's per-connection statement cache",
            Driver::SeaOrmPostgres | Driver::SeaOrmMysql => "SeaORM entity query over a sqlx pool",
            Driver::MysqlAsync => "raw async driver, its pool, its per-connection statement cache",
            Driver::Redis => "redis-rs connection managers, one pipeline of two HMGET",
            Driver::Sqlite => "rusqlite read-only connections on the blocking pool, cached statement",
        }
    }

    /// The command-line flag that enables it.
    pub const fn flag(self) -> &'static str {
        match self {
            Driver::TokioPostgres | Driver::SqlxPostgres | Driver::SeaOrmPostgres => "--store postgres://…",
            Driver::MysqlAsync | Driver::SqlxMysql | Driver::SeaOrmMysql => "--store mysql://…",
            Driver::Redis => "--store redis://…",
            Driver::Sqlite => "--store sqlite:PATH",
        }
    }

    pub fn from_name(name: &str) -> Option<Driver> {
        Driver::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rows a database returned for two ids, in any order; an id without a
/// row is simply absent. At most two rows (one when both ids are equal).
pub type Rows = Vec<Item>;

/// A driver's failure to read: the database is unreachable, timed out or
/// answered with an error. Always a 503 with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

impl FetchError {
    pub fn new(driver: Driver, e: impl fmt::Display) -> Self {
        FetchError(format!("{} cannot read from {}: {e}", driver.name(), driver.database()))
    }
}

/// What one `Fetch::fetch` returns.
pub type FetchFuture<'a> = Pin<Box<dyn Future<Output = Result<Rows, FetchError>> + Send + 'a>>;

/// The side effect of `db-read`: read the rows of two ids (`ids[0] <= ids[1]`,
/// possibly equal) in one round trip where the driver allows it.
pub trait Fetch: Send + Sync + 'static {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_>;
}

impl<T: Fetch + ?Sized> Fetch for Arc<T> {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        (**self).fetch(ids)
    }
}

/// The databases to serve. Every `None` leaves its drivers out; all `None`
/// serves `sqlite` on [`default_sqlite_path`], seeded when missing.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `postgres://…`: tokio-postgres, sqlx-postgres, sea-orm-postgres.
    pub postgres: Option<String>,
    /// `mysql://…`: mysql-async, sqlx-mysql, sea-orm-mysql.
    pub mysql: Option<String>,
    /// `redis://…`: redis.
    pub redis: Option<String>,
    /// A SQLite file: sqlite (seeded when it does not exist).
    pub sqlite: Option<PathBuf>,
    /// Connections per pool, instead of [`pool_sizes`]' choice from the cores.
    pub pool: Option<u32>,
    /// How long a request may wait for its database before a 503.
    pub timeout: Duration,
    /// Seed every given database first ([`seed::seed`], idempotent).
    pub seed: bool,
}

impl Config {
    /// The default request timeout.
    pub const TIMEOUT: Duration = Duration::from_secs(5);

    pub fn new() -> Self {
        Config { timeout: Config::TIMEOUT, ..Config::default() }
    }

    /// Serves the drivers of a store given with `--store` (a second store of
    /// the same database replaces the first).
    pub fn add(&mut self, store: seed::Store) {
        match store {
            seed::Store::Postgres(u) => self.postgres = Some(u),
            seed::Store::Mysql(u) => self.mysql = Some(u),
            seed::Store::Redis(u) => self.redis = Some(u),
            seed::Store::Sqlite(p) => self.sqlite = Some(p),
        }
    }

    /// Is no database given (the embedded default applies)?
    pub fn is_empty(&self) -> bool {
        self.postgres.is_none() && self.mysql.is_none() && self.redis.is_none() && self.sqlite.is_none()
    }
}

/// Where `sb-db-read` keeps its SQLite file when none is given:
/// `$XDG_DATA_HOME/stackbench/db-read.sqlite3`, else
/// `$HOME/.local/share/stackbench/db-read.sqlite3`, else the temp directory.
pub fn default_sqlite_path() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("stackbench").join("db-read.sqlite3")
}

/// Why the contestant could not start.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{what} is not a valid {database} URL: {reason}")]
    Url { what: String, database: &'static str, reason: String },
    #[error("{driver} cannot connect to {database}: {reason}")]
    Connect { driver: Driver, database: String, reason: String },
    #[error(
        "{driver} reached {database} but could not read rows 1 and 2 of the data set: {reason}; \
         load it with `sb-db-read seed --store {store}`"
    )]
    NotSeeded { driver: Driver, database: String, store: String, reason: String },
    #[error(transparent)]
    Seed(#[from] seed::SeedError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("cannot write to stdout: {0}")]
    Stdout(#[from] std::io::Error),
    /// A database server this build left out.
    #[error("{0}")]
    NotBuilt(String),
}

/// Opens every driver the config names and checks that each returns rows 1
/// and 2 of the data set. Returns the drivers and the lines to print about
/// them (pool sizes, a seeded default file).
pub async fn connect(config: &Config) -> Result<(Drivers, Vec<String>), SetupError> {
    let sizes = config.pool.map_or_else(pool_sizes, PoolSizes::all);
    let mut notes = Vec::new();
    let mut drivers = Drivers::new(config.timeout);
    let mut sqlite_path = config.sqlite.clone();
    if config.is_empty() {
        sqlite_path = Some(default_sqlite_path());
    }
    if config.seed {
        let stores = [
            config.postgres.clone().map(seed::Store::Postgres),
            config.mysql.clone().map(seed::Store::Mysql),
            config.redis.clone().map(seed::Store::Redis),
            sqlite_path.clone().map(seed::Store::Sqlite),
        ];
        for store in stores.into_iter().flatten() {
            notes.push(format!("seeded: {}", seed::seed(&store).await?));
        }
    }
    #[cfg(feature = "db-servers")]
    add_servers(&mut drivers, config, sizes).await?;
    #[cfg(not(feature = "db-servers"))]
    refuse_servers(config)?;
    if let Some(path) = sqlite_path {
        if !path.exists() {
            let report = seed::seed(&seed::Store::Sqlite(path.clone())).await?;
            notes.push(format!("no SQLite file yet: {report}"));
        }
        sqlite::add(&mut drivers, &path, sizes.sqlite).await?;
    }
    for backend in drivers.iter() {
        notes.push(format!(
            "  /db/{:<17} {} at {}; {}; pool {}",
            backend.driver.name(),
            backend.driver.database(),
            backend.location,
            backend.driver.layer(),
            backend.pool
        ));
    }
    notes.push(format!("  pool sizes: {}", sizes.explain(config.pool.is_some())));
    Ok((drivers, notes))
}

/// The drivers of the database servers the config names.
#[cfg(feature = "db-servers")]
async fn add_servers(drivers: &mut Drivers, config: &Config, sizes: PoolSizes) -> Result<(), SetupError> {
    if let Some(url) = &config.postgres {
        postgres::add(drivers, url, sizes.sql).await?;
        sqlx_driver::add_postgres(drivers, url, sizes.sql).await?;
        sea_orm_driver::add_postgres(drivers, url, sizes.sql).await?;
    }
    if let Some(url) = &config.mysql {
        mysql::add(drivers, url, sizes.sql).await?;
        sqlx_driver::add_mysql(drivers, url, sizes.sql).await?;
        sea_orm_driver::add_mysql(drivers, url, sizes.sql).await?;
    }
    if let Some(url) = &config.redis {
        redis_driver::add(drivers, url, sizes.redis).await?;
    }
    Ok(())
}

/// Without the `db-servers` feature a config that names a database server is refused.
#[cfg(not(feature = "db-servers"))]
fn refuse_servers(config: &Config) -> Result<(), SetupError> {
    let named =
        [(&config.postgres, "PostgreSQL"), (&config.mysql, "MySQL/MariaDB"), (&config.redis, "Redis")];
    match named.into_iter().find(|(url, _)| url.is_some()) {
        Some((_, database)) => Err(SetupError::NotBuilt(crate::not_built(database))),
        None => Ok(()),
    }
}

/// Checks a new SQL driver against the data set and adds it.
#[cfg(feature = "db-servers")]
pub(crate) async fn finish(
    drivers: &mut Drivers,
    driver: Driver,
    url: &str,
    size: u32,
    fetch: Box<dyn Fetch>,
) -> Result<(), SetupError> {
    add_checked(drivers, driver, redact(url), &redact(url), format!("{size} connections"), fetch).await
}

/// Checks a freshly opened driver against rows 1 and 2 of the data set, then
/// adds it. `store` is what `sb-db-read seed --store` takes for it.
pub(crate) async fn add_checked(
    drivers: &mut Drivers,
    driver: Driver,
    location: String,
    store: &str,
    pool: String,
    fetch: Box<dyn Fetch>,
) -> Result<(), SetupError> {
    check_seeded(driver, fetch.as_ref(), &location, store).await?;
    drivers.insert(answer::Backend { driver, location, pool, fetch });
    Ok(())
}

async fn check_seeded(
    driver: Driver,
    fetch: &dyn Fetch,
    location: &str,
    store: &str,
) -> Result<(), SetupError> {
    let not_seeded = |reason: String| SetupError::NotSeeded {
        driver,
        database: location.to_owned(),
        store: store.to_owned(),
        reason,
    };
    let rows = fetch.fetch([1, 2]).await.map_err(|e| not_seeded(e.0))?;
    match answer::in_answer_order(&rows, [1, 2]) {
        Ok(found)
            if found == [stackbench_contract::dbread::item(1), stackbench_contract::dbread::item(2)] =>
        {
            Ok(())
        }
        Ok(found) => Err(not_seeded(format!("rows 1 and 2 differ from the data set: {found:?}"))),
        Err(r) => Err(not_seeded(r.message)),
    }
}

/// The whole contestant: connect the drivers, bind, print
/// `<program> (axum): listening on http://ADDR; …` as the first line on `out`
/// followed by one line per driver, then serve until SIGTERM or Ctrl-C.
pub async fn serve(
    config: &Config,
    bind: IpAddr,
    port: u16,
    program: &str,
    out: &mut dyn Write,
) -> Result<(), SetupError> {
    let (drivers, notes) = connect(config).await?;
    let listener = server::bind(bind, port).await?;
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    writeln!(out, "{program} (axum): listening on http://{addr}; Ctrl-C or SIGTERM stops")?;
    out.flush()?;
    // Best effort: whoever started us may stop reading after the first line
    // (a closed pipe must not stop the server).
    for note in notes {
        let _ = writeln!(out, "{note}");
    }
    let _ = out.flush();
    server::serve_axum(listener, router(Arc::new(drivers))).await?;
    Ok(())
}

/// A URL with its password replaced by `***`, for messages (the one redactor, `store::url::redact`).
pub use crate::store::url::redact;

/// The 503 of a failed fetch.
pub(crate) fn unavailable(e: &FetchError) -> Rejection {
    Rejection::new(503, format!("{e}; retry when the database is back"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Driver::ALL {
            assert_eq!(Driver::from_name(d.name()), Some(d));
        }
        assert_eq!(Driver::from_name("postgres"), None);
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("mysql://root@127.0.0.1/db"), "mysql://root@127.0.0.1/db");
        assert_eq!(redact("redis://:pw@h/0"), "redis://:***@h/0");
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("/tmp/x.sqlite3"), "/tmp/x.sqlite3");
    }

    #[test]
    fn default_file_lives_under_the_data_dir() {
        let p = default_sqlite_path();
        assert!(p.ends_with("stackbench/db-read.sqlite3"), "{}", p.display());
    }
}
