//! `--store URL`: which store, where, and the few options stackbench adds to
//! the database's own URL syntax (`table`, `key`, `measurement`, `pool`,
//! `sync`). Those are removed before the URL reaches the client library; every
//! other query parameter is passed on untouched (e.g. PostgreSQL's
//! `connect_timeout`). Passwords never reach a message: [`StoreSpec`]'s
//! `Display` masks them.

use std::fmt;
use std::path::PathBuf;

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
        let (base, params) = split_query(s);
        let mut params = Params::new(params);
        let spec = match scheme.to_ascii_lowercase().as_str() {
            "sqlite" => {
                let path = base.strip_prefix("sqlite").unwrap_or("").trim_start_matches(':');
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
                StoreSpec::Sqlite(SqliteOptions { path: PathBuf::from(path), table, sync })
            }
            "postgres" | "postgresql" => {
                let table = params.table()?;
                let pool = params.pool()?;
                StoreSpec::Postgres(SqlOptions { url: params.rebuild(base), table, pool })
            }
            "mysql" | "mariadb" => {
                let table = params.table()?;
                let pool = params.pool()?;
                let base = format!("mysql{}", &base[scheme.len()..]);
                StoreSpec::Mysql(SqlOptions { url: params.rebuild(&base), table, pool })
            }
            "redis" => {
                let key = match params.take("key") {
                    None => DEFAULT_REDIS_KEY.to_owned(),
                    Some(k) if !k.is_empty() && k.len() <= 64 && k.bytes().all(|b| b.is_ascii_graphic()) => k,
                    Some(k) => {
                        return Err(StoreError::Url(format!(
                            "key={k:?} is not a usable Redis key; use 1-64 printable characters without spaces"
                        )));
                    }
                };
                StoreSpec::Redis(RedisOptions { url: params.rebuild(base), key })
            }
            "influxdb" | "influx" => {
                let rest = base.split_once("://").map(|(_, r)| r).ok_or_else(|| influx_form(s))?;
                let (userinfo, rest) = match rest.rsplit_once('@') {
                    Some((u, r)) => (Some(u), r),
                    None => (None, rest),
                };
                let (authority, db) = rest.split_once('/').ok_or_else(|| influx_form(s))?;
                let db = db.trim_end_matches('/');
                if authority.is_empty() || db.is_empty() || db.contains(['/', '"', '\\']) {
                    return Err(influx_form(s));
                }
                let authority = if authority.contains(':') && !authority.ends_with(']') {
                    authority.to_owned()
                } else {
                    format!("{authority}:8086")
                };
                let credentials = userinfo.map(|u| {
                    let (user, pass) = u.split_once(':').unwrap_or((u, ""));
                    (user.to_owned(), pass.to_owned())
                });
                let measurement = match params.take("measurement") {
                    None => DEFAULT_MEASUREMENT.to_owned(),
                    Some(m) if valid_identifier(&m) => m,
                    Some(m) => return Err(bad_name("measurement", &m)),
                };
                params.finish(&["measurement"], "influxdb")?;
                StoreSpec::Influx(InfluxOptions { authority, db: db.to_owned(), measurement, credentials })
            }
            _ => {
                return Err(StoreError::Url(format!(
                    "unknown store {s:?}; use one of {FORMS} (or omit --store for the embedded {DEFAULT_STORE})"
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

fn influx_form(s: &str) -> StoreError {
    StoreError::Url(format!("{s:?} does not name a database; write influxdb://HOST:8086/DB"))
}

fn bad_name(what: &str, got: &str) -> StoreError {
    StoreError::Url(format!(
        "{what}={got:?} is not a usable name; use 1-48 characters of A-Z a-z 0-9 _, not starting with a digit"
    ))
}

/// `scheme://user:secret@host` → `scheme://user:***@host`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rsplit_once('@') {
        Some((userinfo, _)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or("");
            let at = rest[..host_end].rfind('@').unwrap_or(0);
            format!("{scheme}://{user}:***{}", &rest[at..])
        }
        _ => url.to_owned(),
    }
}

fn split_query(s: &str) -> (&str, &str) {
    s.split_once('?').unwrap_or((s, ""))
}

/// The query parameters of a store URL, ours taken out one by one.
struct Params<'a> {
    rest: Vec<(&'a str, &'a str)>,
}

impl<'a> Params<'a> {
    fn new(query: &'a str) -> Self {
        let rest = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        Params { rest }
    }

    fn take(&mut self, key: &str) -> Option<String> {
        let i = self.rest.iter().position(|(k, _)| *k == key)?;
        Some(self.rest.remove(i).1.to_owned())
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

    /// The URL for the client library: `base` with the parameters not ours.
    fn rebuild(&self, base: &str) -> String {
        if self.rest.is_empty() {
            return base.to_owned();
        }
        let query: Vec<String> = self
            .rest
            .iter()
            .map(|(k, v)| if v.is_empty() { (*k).to_owned() } else { format!("{k}={v}") })
            .collect();
        format!("{base}?{}", query.join("&"))
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
    fn unknown_schemes_list_the_forms() {
        let e = err("mongodb://h/db");
        assert!(e.contains("postgres://") && e.contains("omit --store"), "{e}");
    }
}
