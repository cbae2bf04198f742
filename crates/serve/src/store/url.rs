//! `--store URL`: which store, where, and the few options stackbench adds to
//! the database's own URL syntax (`table`, `key`, `measurement`, `pool`,
//! `sync`). Those are removed before the URL reaches the client library; every
//! other query parameter is passed on untouched (e.g. PostgreSQL's
//! `connect_timeout`). A server's URL is read by the `url` crate; SQLite's
//! `sqlite:PATH` is a file path. Passwords never reach a message:
//! [`StoreSpec`]'s `Display` and every error mask them ([`redact`]).

use std::fmt;
use std::path::PathBuf;

use url::Url;

use super::{StoreError, valid_identifier};

/// The embedded store's file when `--store` is omitted, relative to the
/// working directory.
pub const DEFAULT_SQLITE_PATH: &str = "stackbench-events.db";
/// `--store` when omitted.
pub const DEFAULT_STORE: &str = "sqlite:stackbench-events.db";
/// Table (SQL), key (Redis) and measurement names when the URL gives none.
pub const DEFAULT_TABLE: &str = "stackbench_events";
pub const DEFAULT_REDIS_KEY: &str = "stackbench:events";
pub const DEFAULT_MEASUREMENT: &str = "events";

const FORMS: &str = "sqlite:PATH, postgres://USER@HOST:5432/DB, mysql://USER@HOST:3306/DB, \
                     redis://HOST:6379/0 or influxdb://HOST:8086/DB";

/// A parsed `--store` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    Sqlite(SqliteOptions),
    Postgres(SqlOptions),
    Mysql(SqlOptions),
    Redis(RedisOptions),
    Influx(InfluxOptions),
}

/// How hard SQLite pushes a commit to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqliteSync {
    /// `synchronous=FULL`: every commit is fsynced (survives power loss).
    Full,
    /// `synchronous=NORMAL`: commits reach the OS, fsync at checkpoints
    /// (survives the process being killed, not a power loss).
    Normal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    pub path: PathBuf,
    pub table: String,
    pub sync: SqliteSync,
}

/// PostgreSQL or MySQL/MariaDB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlOptions {
    /// The URL for the client library (our parameters removed).
    pub url: String,
    pub table: String,
    /// Connections in the pool.
    pub pool: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    pub url: String,
    /// The stream's key; the counter is `<key>:count`.
    pub key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfluxOptions {
    /// `host:port`.
    pub authority: String,
    pub db: String,
    pub measurement: String,
    /// `user:password` from the URL, sent as InfluxDB 1.x `u`/`p` parameters.
    pub credentials: Option<(String, String)>,
}

/// The default pool size: four connections per core the process may use
/// (deadpool's own default), at least eight so that group commit has company.
pub fn default_pool_size() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from).saturating_mul(4).max(8)
}

impl StoreSpec {
    /// Parses a `--store` value. `sqlite` alone means the default file.
    pub fn parse(s: &str) -> Result<StoreSpec, StoreError> {
        let s = s.trim();
        let (scheme, _) = s.split_once(':').unwrap_or((s, ""));
        let spec = match scheme.to_ascii_lowercase().as_str() {
            "sqlite" => StoreSpec::Sqlite(sqlite(s)?),
            "postgres" | "postgresql" => {
                let (mut url, mut params) = server_url(s)?;
                let table = params.table()?;
                let pool = params.pool()?;
                params.pass_on(&mut url);
                StoreSpec::Postgres(SqlOptions { url: url.into(), table, pool })
            }
            "mysql" | "mariadb" => {
                let (mut url, mut params) = server_url(s)?;
                let table = params.table()?;
                let pool = params.pool()?;
                params.pass_on(&mut url);
                // Both are special-free schemes, so the swap cannot be refused.
                let _ = url.set_scheme("mysql");
                StoreSpec::Mysql(SqlOptions { url: url.into(), table, pool })
            }
            "redis" => {
                let (mut url, mut params) = server_url(s)?;
                let key = match params.take("key") {
                    None => DEFAULT_REDIS_KEY.to_owned(),
                    Some(k) if !k.is_empty() && k.len() <= 64 && k.bytes().all(|b| b.is_ascii_graphic()) => k,
                    Some(k) => {
                        return Err(StoreError::Url(format!(
                            "key={k:?} is not a usable Redis key; use 1-64 printable characters without spaces"
                        )));
                    }
                };
                params.pass_on(&mut url);
                StoreSpec::Redis(RedisOptions { url: url.into(), key })
            }
            "influxdb" | "influx" => StoreSpec::Influx(influx(s)?),
            _ => {
                return Err(StoreError::Url(format!(
                    "unknown store {:?}; use one of {FORMS} (or omit --store for the embedded {DEFAULT_STORE})",
                    redact(s)
                )));
            }
        };
        if cfg!(not(feature = "db-servers"))
            && matches!(spec, StoreSpec::Postgres(_) | StoreSpec::Mysql(_) | StoreSpec::Redis(_))
        {
            return Err(StoreError::Url(crate::not_built(spec.kind())));
        }
        Ok(spec)
    }

    /// The kind of store, for messages: `SQLite`, `PostgreSQL`, ...
    pub const fn kind(&self) -> &'static str {
        match self {
            StoreSpec::Sqlite(_) => "SQLite",
            StoreSpec::Postgres(_) => "PostgreSQL",
            StoreSpec::Mysql(_) => "MySQL/MariaDB",
            StoreSpec::Redis(_) => "Redis",
            StoreSpec::Influx(_) => "InfluxDB",
        }
    }
}

impl fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreSpec::Sqlite(o) => write!(f, "sqlite:{}", o.path.display()),
            StoreSpec::Postgres(o) | StoreSpec::Mysql(o) => f.write_str(&redact(&o.url)),
            StoreSpec::Redis(o) => f.write_str(&redact(&o.url)),
            StoreSpec::Influx(o) => {
                let user = o.credentials.as_ref().map(|(u, _)| format!("{u}:***@")).unwrap_or_default();
                write!(f, "influxdb://{user}{}/{}", o.authority, o.db)
            }
        }
    }
}

/// `sqlite:PATH` (also `sqlite://PATH`, `sqlite:///ABS`): a file path, not a URL (spaces and
/// `%` are the file's own characters), with our parameters after `?`.
fn sqlite(s: &str) -> Result<SqliteOptions, StoreError> {
    let (base, query) = s.split_once('?').unwrap_or((s, ""));
    let mut params = Params::new(query);
    let path = base.get("sqlite".len()..).unwrap_or("").trim_start_matches(':');
    // sqlite://rel.db, sqlite:///abs.db, sqlite:rel.db, sqlite:/abs.db
    let path = path.strip_prefix("//").unwrap_or(path);
    let path = if path.is_empty() { DEFAULT_SQLITE_PATH } else { path };
    let sync = match params.take("sync").as_deref() {
        None | Some("full") => SqliteSync::Full,
        Some("normal") => SqliteSync::Normal,
        Some(other) => {
            return Err(StoreError::Url(format!(
                "sync={other} is not a SQLite sync mode; use sync=full (fsync every commit, the \
                 default) or sync=normal (survives a killed process, not a power loss)"
            )));
        }
    };
    let table = params.table()?;
    params.finish(&["table", "sync"], "sqlite")?;
    Ok(SqliteOptions { path: PathBuf::from(path), table, sync })
}

/// A database server's URL, read by the `url` crate, and its query parameters (ours still in).
fn server_url(s: &str) -> Result<(Url, Params), StoreError> {
    let url = Url::parse(s)
        .map_err(|e| StoreError::Url(format!("{:?} is not a URL ({e}); use one of {FORMS}", redact(s))))?;
    let params = Params::new(url.query().unwrap_or(""));
    Ok((url, params))
}

/// `influxdb://[USER:PASSWORD@]HOST[:8086]/DB`.
fn influx(s: &str) -> Result<InfluxOptions, StoreError> {
    let (url, mut params) = server_url(s)?;
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| influx_form(s))?;
    let db = decoded(url.path().trim_start_matches('/').trim_end_matches('/'));
    if db.is_empty() || db.contains(['/', '"', '\\']) {
        return Err(influx_form(s));
    }
    let credentials = (!url.username().is_empty() || url.password().is_some())
        .then(|| (decoded(url.username()), decoded(url.password().unwrap_or(""))));
    let measurement = match params.take("measurement") {
        None => DEFAULT_MEASUREMENT.to_owned(),
        Some(m) if valid_identifier(&m) => m,
        Some(m) => return Err(bad_name("measurement", &m)),
    };
    params.finish(&["measurement"], "influxdb")?;
    let authority = format!("{host}:{}", url.port().unwrap_or(8086));
    Ok(InfluxOptions { authority, db, measurement, credentials })
}

/// A URL component with its `%XX` escapes undone (a user name or database written escaped).
fn decoded(component: &str) -> String {
    percent_encoding::percent_decode_str(component).decode_utf8_lossy().into_owned()
}

fn influx_form(s: &str) -> StoreError {
    StoreError::Url(format!("{:?} does not name a database; write influxdb://HOST:8086/DB", redact(s)))
}

fn bad_name(what: &str, got: &str) -> StoreError {
    StoreError::Url(format!(
        "{what}={got:?} is not a usable name; use 1-48 characters of A-Z a-z 0-9 _, not starting with a digit"
    ))
}

/// `scheme://user:secret@host` → `scheme://user:***@host`; a string that is not a URL shows
/// its scheme alone (`scheme://***`), so a password never reaches a message either way.
pub fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            // A URL with a password has a host, so setting it cannot be refused.
            let _ = parsed.set_password(Some("***"));
            parsed.into()
        }
        Ok(_) => url.to_owned(),
        Err(_) => match url.split_once(':') {
            Some((scheme, _)) if url.contains('@') => format!("{scheme}://***"),
            _ => url.to_owned(),
        },
    }
}

/// The query parameters of a store URL, ours taken out one by one; the rest go on to the
/// client library as written (no re-encoding).
struct Params {
    rest: Vec<(String, String)>,
}

impl Params {
    fn new(query: &str) -> Self {
        let rest = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Params { rest }
    }

    /// Takes one of ours out, its `%XX` escapes undone (the URL crate escapes a space, say).
    fn take(&mut self, key: &str) -> Option<String> {
        let i = self.rest.iter().position(|(k, _)| k == key)?;
        Some(decoded(&self.rest.remove(i).1))
    }

    fn table(&mut self) -> Result<String, StoreError> {
        match self.take("table") {
            None => Ok(DEFAULT_TABLE.to_owned()),
            Some(t) if valid_identifier(&t) => Ok(t),
            Some(t) => Err(bad_name("table", &t)),
        }
    }

    fn pool(&mut self) -> Result<usize, StoreError> {
        match self.take("pool") {
            None => Ok(default_pool_size()),
            Some(p) => match p.parse::<usize>() {
                Ok(n) if (1..=1024).contains(&n) => Ok(n),
                _ => Err(StoreError::Url(format!(
                    "pool={p:?} is not a pool size; give a number of connections from 1 to 1024"
                ))),
            },
        }
    }

    /// Refuses parameters that this store does not know.
    fn finish(&self, known: &[&str], scheme: &str) -> Result<(), StoreError> {
        match self.rest.first() {
            None => Ok(()),
            Some((k, _)) => Err(StoreError::Url(format!(
                "unknown parameter {k:?} in the {scheme} store URL; the known ones are {}",
                known.join(", ")
            ))),
        }
    }

    /// Leaves on `url` the parameters that are not ours, for the client library.
    fn pass_on(&self, url: &mut Url) {
        let query: Vec<String> = self
            .rest
            .iter()
            .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") })
            .collect();
        url.set_query((!query.is_empty()).then(|| query.join("&")).as_deref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> StoreSpec {
        StoreSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        StoreSpec::parse(s).unwrap_err().to_string()
    }

    #[test]
    fn sqlite_forms() {
        for (s, path) in [
            ("sqlite", DEFAULT_SQLITE_PATH),
            ("sqlite:", DEFAULT_SQLITE_PATH),
            (DEFAULT_STORE, DEFAULT_SQLITE_PATH),
            ("sqlite:data/e.db", "data/e.db"),
            ("sqlite://e.db", "e.db"),
            ("sqlite:///tmp/e.db", "/tmp/e.db"),
            ("sqlite:/tmp/e.db?sync=normal&table=t1", "/tmp/e.db"),
        ] {
            let StoreSpec::Sqlite(o) = parse(s) else { panic!("{s}") };
            assert_eq!(o.path, PathBuf::from(path), "{s}");
        }
        let StoreSpec::Sqlite(o) = parse("sqlite:/tmp/e.db?sync=normal&table=t1") else { panic!() };
        assert_eq!((o.sync, o.table.as_str()), (SqliteSync::Normal, "t1"));
        assert_eq!(parse("sqlite:x.db").to_string(), "sqlite:x.db");
        assert!(err("sqlite:x.db?sync=off").contains("sync=full"));
        assert!(err("sqlite:x.db?pool=3").contains("\"pool\""));
    }

    #[test]
    fn sql_urls_lose_our_parameters_only() {
        let StoreSpec::Postgres(o) =
            parse("postgres://u:pw@127.0.0.1:5432/db?table=my_events&connect_timeout=2&pool=3")
        else {
            panic!()
        };
        assert_eq!(o.url, "postgres://u:pw@127.0.0.1:5432/db?connect_timeout=2");
        assert_eq!((o.table.as_str(), o.pool), ("my_events", 3));
        let StoreSpec::Mysql(o) = parse("mariadb://root@127.0.0.1:3306/db") else { panic!() };
        assert_eq!((o.url.as_str(), o.table.as_str()), ("mysql://root@127.0.0.1:3306/db", DEFAULT_TABLE));
        assert!(o.pool >= 8);
        assert!(err("postgres://h/db?table=a;b").contains("table="));
        assert!(err("postgres://h/db?pool=0").contains("pool="));
    }

    #[test]
    fn passwords_are_masked() {
        assert_eq!(parse("postgres://u:secret@h:5432/db").to_string(), "postgres://u:***@h:5432/db");
        assert_eq!(parse("redis://:secret@h:6379/0").to_string(), "redis://:***@h:6379/0");
        assert_eq!(parse("influxdb://u:secret@h/db").to_string(), "influxdb://u:***@h:8086/db");
        assert_eq!(redact("mysql://root@h/db"), "mysql://root@h/db");
    }

    #[test]
    fn redis_and_influx() {
        let StoreSpec::Redis(o) = parse("redis://127.0.0.1:6379/0?key=bench:ev") else { panic!() };
        assert_eq!((o.url.as_str(), o.key.as_str()), ("redis://127.0.0.1:6379/0", "bench:ev"));
        let StoreSpec::Influx(o) = parse("influxdb://127.0.0.1:8086/seed?measurement=ev2") else { panic!() };
        assert_eq!(
            (o.authority.as_str(), o.db.as_str(), o.measurement.as_str()),
            ("127.0.0.1:8086", "seed", "ev2")
        );
        assert!(err("influxdb://127.0.0.1:8086").contains("influxdb://HOST:8086/DB"));
        assert!(err("influxdb://h/db?x=1").contains("measurement"));
    }

    #[test]
    fn the_client_gets_its_parameters_as_written() {
        let StoreSpec::Postgres(o) =
            parse("postgresql://u@h/db?options=-c%20search_path%3Dx&pool=2&sslmode=disable")
        else {
            panic!()
        };
        assert_eq!(o.url, "postgresql://u@h/db?options=-c%20search_path%3Dx&sslmode=disable");
        let StoreSpec::Postgres(o) = parse("postgres://u@h/db?pool=2") else { panic!() };
        assert_eq!(o.url, "postgres://u@h/db", "no empty `?` left behind");
    }

    #[test]
    fn influx_hosts_ports_and_escapes() {
        let StoreSpec::Influx(o) = parse("influxdb://[::1]/seed/") else { panic!() };
        assert_eq!((o.authority.as_str(), o.db.as_str(), o.credentials), ("[::1]:8086", "seed", None));
        let StoreSpec::Influx(o) = parse("influx://bench:p%40ss@127.0.0.1:9999/seed") else { panic!() };
        assert_eq!(o.authority, "127.0.0.1:9999");
        assert_eq!(o.credentials, Some(("bench".to_owned(), "p@ss".to_owned())));
        for bad in ["influxdb:///seed", "influxdb://h/a/b", "influxdb://h/a%22b", "influxdb://h/"] {
            assert!(err(bad).contains("influxdb://HOST:8086/DB"), "{bad}: {}", err(bad));
        }
    }

    #[test]
    fn no_message_shows_a_password() {
        for bad in [
            "postgres://u:hunter2@h:99999/db",
            "influxdb://u:hunter2@h",
            "mongodb://u:hunter2@h/db",
            "redis://u:hunter2@h/0?key=a%20b",
        ] {
            let e = err(bad);
            assert!(!e.contains("hunter2"), "{bad}: {e}");
        }
        assert!(err("postgres://u:hunter2@h:99999/db").contains("is not a URL"));
        assert_eq!(redact("postgres://u:hunter2@h:99999/db"), "postgres://***");
    }

    #[test]
    fn unknown_schemes_list_the_forms() {
        let e = err("mongodb://h/db");
        assert!(e.contains("postgres://") && e.contains("omit --store"), "{e}");
    }
}
