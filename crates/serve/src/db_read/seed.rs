//! `sb-db-read seed --store URL`: loads the db-read data set
//! (`dbread::item(1..=ROWS)`) into PostgreSQL, MySQL/MariaDB, Redis or SQLite.
//!
//! Idempotent and cheap to repeat: it first reads back what the store holds
//! and compares it with the data set row by row; when everything matches it
//! changes nothing. Otherwise it replaces the table's contents in one
//! transaction (PostgreSQL: `COPY … FROM STDIN`; MySQL: multi-row `INSERT`s of
//! 1000 rows; SQLite: one prepared `INSERT` per row in one transaction) or, in
//! Redis, rewrites the hashes that differ in pipelines of 1000 commands.

use std::fmt;
#[cfg(feature = "db-servers")]
use std::fmt::Write as _;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

#[cfg(feature = "db-servers")]
use stackbench_contract::dbread::redis_key;
use stackbench_contract::dbread::{CREATE_TABLE, ROWS, item};

use super::{default_sqlite_path, redact};
use crate::error_chain::ErrorChain;

/// Rows per multi-row `INSERT` (MySQL) and commands per pipeline (Redis).
#[cfg(feature = "db-servers")]
const BATCH: u32 = 1000;
const READ_BACK: &str = "SELECT id, name, price FROM items ORDER BY id";

/// A store to seed, from `--store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    Postgres(String),
    Mysql(String),
    Redis(String),
    Sqlite(PathBuf),
}

/// What `--store` accepts, for error messages.
pub const STORE_FORMS: &str = "postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB, \
     redis://HOST:PORT/N, sqlite:PATH, or sqlite (the file `sb-db-read` serves by default)";

impl FromStr for Store {
    type Err = SeedError;
    fn from_str(s: &str) -> Result<Self, SeedError> {
        let store = Store::parse(s.trim())?;
        if cfg!(not(feature = "db-servers")) && !matches!(store, Store::Sqlite(_)) {
            return Err(SeedError::NotBuilt(crate::not_built(store.database())));
        }
        Ok(store)
    }
}

impl Store {
    fn parse(s: &str) -> Result<Self, SeedError> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Ok(Store::Postgres(s.to_owned()))
        } else if s.starts_with("mysql://") {
            Ok(Store::Mysql(s.to_owned()))
        } else if let Some(rest) = s.strip_prefix("mariadb://") {
            Ok(Store::Mysql(format!("mysql://{rest}")))
        } else if s.starts_with("redis://") {
            Ok(Store::Redis(s.to_owned()))
        } else if s == "sqlite" {
            Ok(Store::Sqlite(default_sqlite_path()))
        } else if let Some(path) = s.strip_prefix("sqlite://").or_else(|| s.strip_prefix("sqlite:")) {
            if path.is_empty() {
                return Err(SeedError::Store(s.to_owned()));
            }
            Ok(Store::Sqlite(PathBuf::from(path)))
        } else {
            Err(SeedError::Store(s.to_owned()))
        }
    }
}

impl Store {
    /// The kind of database, for messages: `PostgreSQL`, `SQLite`, ...
    pub const fn database(&self) -> &'static str {
        match self {
            Store::Postgres(_) => "PostgreSQL",
            Store::Mysql(_) => "MySQL/MariaDB",
            Store::Redis(_) => "Redis",
            Store::Sqlite(_) => "SQLite",
        }
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Store::Postgres(u) => write!(f, "PostgreSQL {}", redact(u)),
            Store::Mysql(u) => write!(f, "MySQL/MariaDB {}", redact(u)),
            Store::Redis(u) => write!(f, "Redis {}", redact(u)),
            Store::Sqlite(p) => write!(f, "SQLite {}", p.display()),
        }
    }
}

/// What seeding did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The store already held exactly the data set.
    Unchanged,
    /// `written` rows (or hashes) were written by `how`, after removing `removed`.
    Loaded { written: u32, removed: u64, how: &'static str },
}

/// The result of [`seed`], printed by the command.
#[derive(Debug, Clone)]
pub struct SeedReport {
    pub store: String,
    pub outcome: Outcome,
    pub took: Duration,
}

impl fmt::Display for SeedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.took.as_secs_f64() * 1e3;
        let what = if self.store.starts_with("Redis") { "hashes item:<id>" } else { "rows of table items" };
        match &self.outcome {
            Outcome::Unchanged => {
                write!(
                    f,
                    "{}: already holds the {ROWS} {what} of the data set; nothing changed ({ms:.0} ms)",
                    self.store
                )
            }
            Outcome::Loaded { written, removed, how } => {
                write!(f, "{}: wrote {written} {what} with {how} in {ms:.0} ms", self.store)?;
                if *removed > 0 {
                    write!(f, " (after removing {removed} rows that were there)")?;
                }
                if *written < ROWS {
                    write!(f, "; the other {} were already right", ROWS - written)?;
                }
                Ok(())
            }
        }
    }
}

/// Why seeding failed; the message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("cannot tell which store {0:?} is; --store takes {STORE_FORMS}")]
    Store(String),
    #[error("cannot connect to {store}: {reason}")]
    Connect { store: String, reason: String },
    #[error("{store}: {step} failed: {reason}{hint}")]
    Db { store: String, step: &'static str, reason: String, hint: &'static str },
    /// A database server this build left out.
    #[error("{0}")]
    NotBuilt(String),
}

const SHAPE_HINT: &str =
    " (if a table `items` with other columns exists there, drop it or seed another database)";
const READING: &str = "reading the table back";
/// MySQL's named lock that serializes seeders (60 s at most).
#[cfg(feature = "db-servers")]
const SEED_LOCK: &str = "SELECT GET_LOCK('stackbench_dbread_seed', 60)";

fn db_error(store: &Store, step: &'static str, e: &dyn ErrorChain) -> SeedError {
    let hint = if step == READING { SHAPE_HINT } else { "" };
    SeedError::Db { store: store.to_string(), step, reason: e.chain(), hint }
}

fn connect_error(store: &Store, e: &dyn ErrorChain) -> SeedError {
    SeedError::Connect { store: store.to_string(), reason: e.chain() }
}

/// Does this read-back (rows ordered by id) equal the data set?
fn is_data_set(rows: impl ExactSizeIterator<Item = (i64, String, i64)>) -> bool {
    rows.len() == ROWS as usize
        && rows.zip(1..=ROWS).all(|((id, name, price), want)| {
            let want = item(want);
            id == i64::from(want.id) && price == i64::from(want.price) && name == want.name
        })
}

/// The data set in PostgreSQL's COPY text format.
#[cfg(feature = "db-servers")]
fn copy_text() -> String {
    let mut out = String::with_capacity(ROWS as usize * 24);
    for id in 1..=ROWS {
        let row = item(id);
        let _ = writeln!(out, "{}\t{}\t{}", row.id, row.name, row.price);
    }
    out
}

/// Seeds `store` with the data set (see the module docs).
pub async fn seed(store: &Store) -> Result<SeedReport, SeedError> {
    let start = Instant::now();
    let outcome = match store {
        #[cfg(feature = "db-servers")]
        Store::Postgres(url) => postgres(store, url).await?,
        #[cfg(feature = "db-servers")]
        Store::Mysql(url) => mysql(store, url).await?,
        #[cfg(feature = "db-servers")]
        Store::Redis(url) => redis(store, url).await?,
        #[cfg(not(feature = "db-servers"))]
        Store::Postgres(_) | Store::Mysql(_) | Store::Redis(_) => {
            return Err(SeedError::NotBuilt(crate::not_built(store.database())));
        }
        Store::Sqlite(path) => {
            let (store2, path) = (store.clone(), path.clone());
            tokio::task::spawn_blocking(move || sqlite(&store2, &path))
                .await
                .map_err(|e| db_error(store, "the seeding thread", &e))??
        }
    };
    Ok(SeedReport { store: store.to_string(), outcome, took: start.elapsed() })
}

#[cfg(feature = "db-servers")]
async fn postgres(store: &Store, url: &str) -> Result<Outcome, SeedError> {
    use futures_util::SinkExt as _;
    let (mut client, conn) =
        tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| connect_error(store, &e))?;
    tokio::spawn(conn);
    // Concurrent seeders take turns creating the table (`IF NOT EXISTS` alone races).
    client
        .batch_execute(&crate::store::postgres::serialized_ddl(CREATE_TABLE))
        .await
        .map_err(|e| db_error(store, "CREATE TABLE", &e))?;
    let tx = client.transaction().await.map_err(|e| db_error(store, "BEGIN", &e))?;
    // Self-conflicting, so concurrent seeders take turns; readers are not blocked.
    tx.batch_execute("LOCK TABLE items IN SHARE ROW EXCLUSIVE MODE")
        .await
        .map_err(|e| db_error(store, "LOCK TABLE", &e))?;
    let rows = tx.query(READ_BACK, &[]).await.map_err(|e| db_error(store, READING, &e))?;
    let read_back: Vec<_> = rows
        .iter()
        .map(|r| (i64::from(r.get::<_, i32>(0)), r.get::<_, String>(1), i64::from(r.get::<_, i32>(2))))
        .collect();
    if is_data_set(read_back.into_iter()) {
        tx.commit().await.map_err(|e| db_error(store, "COMMIT", &e))?;
        return Ok(Outcome::Unchanged);
    }
    let removed = tx.execute("DELETE FROM items", &[]).await.map_err(|e| db_error(store, "DELETE", &e))?;
    let sink = tx
        .copy_in::<_, bytes::Bytes>("COPY items (id, name, price) FROM STDIN")
        .await
        .map_err(|e| db_error(store, "COPY", &e))?;
    let mut sink = std::pin::pin!(sink);
    sink.send(bytes::Bytes::from(copy_text())).await.map_err(|e| db_error(store, "COPY", &e))?;
    sink.as_mut().finish().await.map_err(|e| db_error(store, "COPY", &e))?;
    tx.commit().await.map_err(|e| db_error(store, "COMMIT", &e))?;
    Ok(Outcome::Loaded { written: ROWS, removed, how: "COPY" })
}

#[cfg(feature = "db-servers")]
async fn mysql(store: &Store, url: &str) -> Result<Outcome, SeedError> {
    use mysql_async::prelude::Queryable as _;
    let opts = mysql_async::Opts::from_url(url).map_err(|e| connect_error(store, &e))?;
    let mut conn = mysql_async::Conn::new(opts).await.map_err(|e| connect_error(store, &e))?;
    conn.query_drop(CREATE_TABLE).await.map_err(|e| db_error(store, "CREATE TABLE", &e))?;
    // Concurrent seeders take turns (the lock goes at disconnect at the latest).
    let locked: Option<Option<i64>> =
        conn.query_first(SEED_LOCK).await.map_err(|e| db_error(store, "GET_LOCK", &e))?;
    if locked.flatten() != Some(1) {
        let reason = "another seeder held the lock for 60 s".to_owned();
        return Err(SeedError::Db { store: store.to_string(), step: "GET_LOCK", reason, hint: "" });
    }
    let outcome = mysql_load(store, &mut conn).await;
    let _ = conn.disconnect().await;
    outcome
}

#[cfg(feature = "db-servers")]
async fn mysql_load(store: &Store, conn: &mut mysql_async::Conn) -> Result<Outcome, SeedError> {
    use mysql_async::prelude::Queryable as _;
    let rows: Vec<(i64, String, i64)> =
        conn.query(READ_BACK).await.map_err(|e| db_error(store, READING, &e))?;
    if is_data_set(rows.into_iter()) {
        return Ok(Outcome::Unchanged);
    }
    let mut tx = conn
        .start_transaction(mysql_async::TxOpts::default())
        .await
        .map_err(|e| db_error(store, "BEGIN", &e))?;
    tx.query_drop("DELETE FROM items").await.map_err(|e| db_error(store, "DELETE", &e))?;
    let removed = tx.affected_rows();
    let mut first = 1;
    while first <= ROWS {
        let last = (first + BATCH - 1).min(ROWS);
        let placeholders = vec!["(?, ?, ?)"; (last - first + 1) as usize].join(", ");
        let mut params = Vec::with_capacity(3 * BATCH as usize);
        for id in first..=last {
            let row = item(id);
            params.extend([row.id.into(), row.name.into(), row.price.into()]);
        }
        let sql = format!("INSERT INTO items (id, name, price) VALUES {placeholders}");
        tx.exec_drop(sql, mysql_async::Params::Positional(params))
            .await
            .map_err(|e| db_error(store, "INSERT", &e))?;
        first = last + 1;
    }
    tx.commit().await.map_err(|e| db_error(store, "COMMIT", &e))?;
    Ok(Outcome::Loaded { written: ROWS, removed, how: "multi-row INSERTs of 1000" })
}

#[cfg(feature = "db-servers")]
async fn redis(store: &Store, url: &str) -> Result<Outcome, SeedError> {
    let client = redis::Client::open(url).map_err(|e| connect_error(store, &e))?;
    let mut conn = client.get_multiplexed_async_connection().await.map_err(|e| connect_error(store, &e))?;
    let mut wrong = Vec::new();
    let mut first = 1;
    while first <= ROWS {
        let last = (first + BATCH - 1).min(ROWS);
        let mut pipe = redis::pipe();
        for id in first..=last {
            pipe.cmd("HGETALL").arg(redis_key(id));
        }
        let hashes: Vec<Vec<(String, String)>> =
            pipe.query_async(&mut conn).await.map_err(|e| db_error(store, "reading the hashes back", &e))?;
        for (id, mut hash) in (first..=last).zip(hashes) {
            hash.sort();
            let row = item(id);
            if hash != [("name".to_owned(), row.name), ("price".to_owned(), row.price.to_string())] {
                wrong.push(id);
            }
        }
        first = last + 1;
    }
    if wrong.is_empty() {
        return Ok(Outcome::Unchanged);
    }
    for chunk in wrong.chunks(BATCH as usize) {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for &id in chunk {
            let row = item(id);
            pipe.cmd("DEL").arg(redis_key(id)).ignore();
            pipe.cmd("HSET")
                .arg(redis_key(id))
                .arg("name")
                .arg(&row.name)
                .arg("price")
                .arg(row.price)
                .ignore();
        }
        let () = pipe.query_async(&mut conn).await.map_err(|e| db_error(store, "HSET", &e))?;
    }
    Ok(Outcome::Loaded { written: wrong.len() as u32, removed: 0, how: "pipelined HSETs" })
}

fn sqlite(store: &Store, path: &std::path::Path) -> Result<Outcome, SeedError> {
    use rusqlite::TransactionBehavior;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| connect_error(store, &e))?;
    }
    let mut conn = rusqlite::Connection::open(path).map_err(|e| connect_error(store, &e))?;
    // Concurrent seeders wait for each other's write transaction.
    conn.busy_timeout(Duration::from_mins(1)).map_err(|e| db_error(store, "busy_timeout", &e))?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| db_error(store, "PRAGMA journal_mode", &e))?;
    conn.execute_batch(CREATE_TABLE).map_err(|e| db_error(store, "CREATE TABLE", &e))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| db_error(store, "BEGIN IMMEDIATE", &e))?;
    let read_back = (|| {
        let mut stmt = tx.prepare(READ_BACK)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<Vec<(i64, String, i64)>>>()
    })()
    .map_err(|e| db_error(store, READING, &e))?;
    if is_data_set(read_back.into_iter()) {
        tx.commit().map_err(|e| db_error(store, "COMMIT", &e))?;
        return Ok(Outcome::Unchanged);
    }
    let removed = tx.execute("DELETE FROM items", []).map_err(|e| db_error(store, "DELETE", &e))? as u64;
    {
        let mut insert = tx
            .prepare("INSERT INTO items (id, name, price) VALUES (?1, ?2, ?3)")
            .map_err(|e| db_error(store, "INSERT", &e))?;
        for id in 1..=ROWS {
            let row = item(id);
            insert.execute((row.id, &row.name, row.price)).map_err(|e| db_error(store, "INSERT", &e))?;
        }
    }
    tx.commit().map_err(|e| db_error(store, "COMMIT", &e))?;
    Ok(Outcome::Loaded { written: ROWS, removed, how: "one transaction of prepared INSERTs" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_parse() {
        assert_eq!(
            "postgres://u@h/db".parse::<Store>().unwrap(),
            Store::Postgres("postgres://u@h/db".into())
        );
        assert_eq!("mariadb://r@h/db".parse::<Store>().unwrap(), Store::Mysql("mysql://r@h/db".into()));
        assert_eq!("redis://h:6379/0".parse::<Store>().unwrap(), Store::Redis("redis://h:6379/0".into()));
        assert_eq!("sqlite:/tmp/x.db".parse::<Store>().unwrap(), Store::Sqlite("/tmp/x.db".into()));
        assert_eq!("sqlite:///tmp/x.db".parse::<Store>().unwrap(), Store::Sqlite("/tmp/x.db".into()));
        assert_eq!("sqlite".parse::<Store>().unwrap(), Store::Sqlite(default_sqlite_path()));
        for bad in ["http://x", "sqlite:", "/tmp/x.db", ""] {
            let e = bad.parse::<Store>().unwrap_err().to_string();
            assert!(e.contains("postgres://") && e.contains("sqlite:PATH"), "{bad}: {e}");
        }
    }

    #[test]
    fn read_back_comparison() {
        let good = || (1..=ROWS).map(|id| (i64::from(id), item(id).name, i64::from(item(id).price)));
        assert!(is_data_set(good().collect::<Vec<_>>().into_iter()));
        assert!(!is_data_set(good().take(9999).collect::<Vec<_>>().into_iter()));
        let mut off: Vec<_> = good().collect();
        off[500].2 += 1;
        assert!(!is_data_set(off.into_iter()));
        let mut renamed: Vec<_> = good().collect();
        renamed[0].1 = "item-01".into();
        assert!(!is_data_set(renamed.into_iter()));
    }

    #[test]
    fn copy_text_is_the_data_set() {
        let text = copy_text();
        assert_eq!(text.lines().count(), ROWS as usize);
        assert!(text.starts_with("1\titem-1\t7919\n2\titem-2\t5838\n"));
    }

    #[test]
    fn reports_say_what_happened() {
        let r = SeedReport {
            store: "SQLite /x".into(),
            outcome: Outcome::Unchanged,
            took: Duration::from_millis(3),
        };
        assert!(r.to_string().contains("nothing changed"));
        let r = SeedReport {
            store: "Redis redis://h/0".into(),
            outcome: Outcome::Loaded { written: 2, removed: 0, how: "pipelined HSETs" },
            took: Duration::from_millis(3),
        };
        assert!(r.to_string().contains("wrote 2 hashes") && r.to_string().contains("other 9998"), "{r}");
    }

    #[tokio::test]
    async fn sqlite_seeds_once_then_changes_nothing() {
        let dir = tempfile::Builder::new().prefix("stackbench-dbread-seed-").tempdir().unwrap();
        let path = dir.path().join("nested").join("items.sqlite3");
        let store = Store::Sqlite(path.clone());
        let first = seed(&store).await.unwrap();
        assert_eq!(
            first.outcome,
            Outcome::Loaded { written: ROWS, removed: 0, how: "one transaction of prepared INSERTs" }
        );
        assert_eq!(seed(&store).await.unwrap().outcome, Outcome::Unchanged);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute("UPDATE items SET price = 1 WHERE id = 77", [])
            .unwrap();
        let fixed = seed(&store).await.unwrap();
        assert!(matches!(fixed.outcome, Outcome::Loaded { removed: 10000, .. }), "{fixed}");
    }
}
