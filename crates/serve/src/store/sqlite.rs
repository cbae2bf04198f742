//! The embedded store (the default): one SQLite file in WAL mode, written by
//! one thread that commits in groups.
//!
//! Why SQLite (see the README's "Embedded store" for the measurement): it is
//! the embedded database our users already run, its `COUNT(*)` has the original experiment's
//! cost (a scan that grows with the table), and the workspace already builds
//! it for `db-read`. SQLite allows one writer at a time, so every operation
//! goes to a single writer thread over a channel; the thread takes whatever
//! requests are waiting (up to [`MAX_BATCH`]), runs them in one transaction —
//! each event's `INSERT` followed by its own count, so every answer is the
//! count after that event — and commits once. With `synchronous=FULL` (the
//! default) that commit is fsynced before any of the batch is answered: group
//! commit, as PostgreSQL does it, so a thousand concurrent writers pay for one
//! fsync, not a thousand. A failed batch is rolled back and every request in it
//! gets the error (503): nothing is acknowledged that was not committed.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};
use tokio::sync::oneshot;

use super::url::{SqliteOptions, SqliteSync};
use super::{CountMode, Store, StoreError, StoreFuture, StoredEvent};

/// Most operations committed together.
pub const MAX_BATCH: usize = 256;

/// The embedded SQLite store.
pub struct SqliteStore {
    jobs: mpsc::Sender<Job>,
    label: String,
    describe: String,
}

struct Job {
    op: Op,
    reply: oneshot::Sender<Result<u64, StoreError>>,
}

enum Op {
    Append { kind: Box<str>, source: Box<str>, value: f64, timestamp_ms: u64 },
    Count,
    Reset,
}

/// The SQL of one table, built once.
struct Sql {
    insert: String,
    count_all: String,
    read_counter: String,
    bump_counter: String,
    mode: CountMode,
    table: String,
}

impl SqliteStore {
    /// Opens (creating if needed) the file and its tables, and starts the writer.
    pub fn open(opts: &SqliteOptions, mode: CountMode) -> Result<Self, StoreError> {
        let label = format!("the SQLite file {}", opts.path.display());
        let conn = open_connection(opts, mode)
            .map_err(|e| StoreError::Unavailable(format!("cannot open {label}: {e}{}", hint(&opts.path))))?;
        let t = &opts.table;
        let sql = Sql {
            insert: format!("INSERT INTO {t} (kind, source, value, ts_ms) VALUES (?1, ?2, ?3, ?4)"),
            count_all: format!("SELECT COUNT(*) FROM {t}"),
            read_counter: format!("SELECT n FROM {t}_count WHERE id = 1"),
            bump_counter: format!("UPDATE {t}_count SET n = n + 1 WHERE id = 1 RETURNING n"),
            mode,
            table: t.clone(),
        };
        let (jobs, rx) = mpsc::channel();
        let thread_label = label.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || writer(&conn, &sql, &rx, &thread_label))
            .map_err(|e| StoreError::Unavailable(format!("cannot start the SQLite writer thread: {e}")))?;
        let durability = match opts.sync {
            SqliteSync::Full => {
                "WAL, synchronous=FULL: every acknowledged event is fsynced before its answer \
                 (survives a killed process and a power loss)"
            }
            SqliteSync::Normal => {
                "WAL, synchronous=NORMAL: an acknowledged event survives a killed process; \
                 the last commits before a power loss or OS crash may be lost"
            }
        };
        let describe = format!("SQLite file {} ({durability})", opts.path.display());
        Ok(SqliteStore { jobs, label, describe })
    }

    fn submit(&self, op: Op) -> StoreFuture<'_, u64> {
        let (reply, answer) = oneshot::channel();
        let sent = self.jobs.send(Job { op, reply });
        Box::pin(async move {
            let gone = || StoreError::unavailable(&self.label, "its writer thread has stopped");
            sent.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        })
    }
}

impl Store for SqliteStore {
    fn append<'a>(&'a self, e: StoredEvent<'a>) -> StoreFuture<'a, u64> {
        self.submit(Op::Append {
            kind: e.kind.into(),
            source: e.source.into(),
            value: e.value,
            timestamp_ms: e.timestamp_ms,
        })
    }

    fn count(&self) -> StoreFuture<'_, u64> {
        self.submit(Op::Count)
    }

    fn reset(&self) -> StoreFuture<'_, ()> {
        let done = self.submit(Op::Reset);
        Box::pin(async move { done.await.map(drop) })
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}

fn hint(path: &Path) -> &'static str {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => {
            " (its directory does not exist; create it or choose another --store sqlite:PATH)"
        }
        _ => " (check that the file's directory is writable, or choose another --store sqlite:PATH)",
    }
}

fn open_connection(opts: &SqliteOptions, mode: CountMode) -> rusqlite::Result<Connection> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&opts.path, flags)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let sync = match opts.sync {
        SqliteSync::Full => "FULL",
        SqliteSync::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", sync)?;
    let t = &opts.table;
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         CREATE TABLE IF NOT EXISTS {t} (
             id INTEGER PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL,
             value REAL NOT NULL, ts_ms INTEGER NOT NULL);
         CREATE TABLE IF NOT EXISTS {t}_count (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
         INSERT OR IGNORE INTO {t}_count (id, n) VALUES (1, 0);
         COMMIT;"
    ))?;
    if mode == CountMode::Counter {
        // A query-mode server leaves the counter behind; start from the truth.
        conn.execute(&format!("UPDATE {t}_count SET n = (SELECT COUNT(*) FROM {t}) WHERE id = 1"), [])?;
    }
    Ok(conn)
}

/// The writer thread: batches of waiting jobs, one transaction each.
fn writer(conn: &Connection, sql: &Sql, rx: &mpsc::Receiver<Job>, label: &str) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while let Ok(job) = rx.recv() {
        batch.push(job);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match run_batch(conn, sql, &batch) {
            Ok(answers) => {
                for (job, n) in batch.drain(..).zip(answers) {
                    let _ = job.reply.send(Ok(n));
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                let err = StoreError::unavailable(label, e);
                for job in batch.drain(..) {
                    let _ = job.reply.send(Err(err.clone()));
                }
            }
        }
    }
}

fn run_batch(conn: &Connection, sql: &Sql, batch: &[Job]) -> rusqlite::Result<Vec<u64>> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let mut answers = Vec::with_capacity(batch.len());
    for job in batch {
        let n: i64 = match &job.op {
            Op::Append { kind, source, value, timestamp_ms } => {
                let ts = i64::try_from(*timestamp_ms).unwrap_or(i64::MAX);
                conn.prepare_cached(&sql.insert)?.execute(params![kind, source, value, ts])?;
                match sql.mode {
                    CountMode::Query => conn.prepare_cached(&sql.count_all)?.query_row([], |r| r.get(0))?,
                    CountMode::Counter => {
                        conn.prepare_cached(&sql.bump_counter)?.query_row([], |r| r.get(0))?
                    }
                }
            }
            Op::Count => match sql.mode {
                CountMode::Query => conn.prepare_cached(&sql.count_all)?.query_row([], |r| r.get(0))?,
                CountMode::Counter => conn.prepare_cached(&sql.read_counter)?.query_row([], |r| r.get(0))?,
            },
            Op::Reset => {
                let t = &sql.table;
                conn.execute_batch(&format!("DELETE FROM {t}; UPDATE {t}_count SET n = 0 WHERE id = 1;"))?;
                0
            }
        };
        answers.push(u64::try_from(n).unwrap_or(0));
    }
    conn.execute_batch("COMMIT")?;
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::url::DEFAULT_TABLE;

    fn opts(dir: &Path, sync: SqliteSync) -> SqliteOptions {
        SqliteOptions { path: dir.join("events.db"), table: DEFAULT_TABLE.into(), sync }
    }

    fn event(i: u64) -> StoredEvent<'static> {
        StoredEvent { kind: "page_view", source: "web", value: 1.5, timestamp_ms: i }
    }

    fn scratch(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("eventlog-sqlite-{name}-")).tempdir().unwrap()
    }

    #[tokio::test]
    async fn counts_after_each_write_in_both_modes_and_resets() {
        let tmp = scratch("modes");
        let dir = tmp.path();
        let store = SqliteStore::open(&opts(dir, SqliteSync::Normal), CountMode::Query).unwrap();
        for i in 1..=5 {
            assert_eq!(store.append(event(i)).await.unwrap(), i);
        }
        assert_eq!(store.count().await.unwrap(), 5);
        drop(store);
        // Counter mode picks up the 5 events a query-mode server left.
        let store = SqliteStore::open(&opts(dir, SqliteSync::Full), CountMode::Counter).unwrap();
        assert_eq!(store.count().await.unwrap(), 5);
        assert_eq!(store.append(event(6)).await.unwrap(), 6);
        store.reset().await.unwrap();
        assert_eq!(store.count().await.unwrap(), 0);
        assert_eq!(store.append(event(7)).await.unwrap(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_get_distinct_counts() {
        let tmp = scratch("concurrent");
        let store = std::sync::Arc::new(
            SqliteStore::open(&opts(tmp.path(), SqliteSync::Full), CountMode::Query).unwrap(),
        );
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.append(event(i)).await.unwrap() })
            })
            .collect();
        let mut counts = Vec::new();
        for t in tasks {
            counts.push(t.await.unwrap());
        }
        counts.sort_unstable();
        assert_eq!(counts, (1..=200).collect::<Vec<u64>>(), "each answer is the count after its own write");
    }

    #[test]
    fn a_missing_directory_says_so() {
        let o = SqliteOptions {
            path: "/nonexistent-dir-eventlog/e.db".into(),
            table: DEFAULT_TABLE.into(),
            sync: SqliteSync::Full,
        };
        let e = SqliteStore::open(&o, CountMode::Query).err().unwrap().to_string();
        assert!(e.contains("directory does not exist"), "{e}");
    }
}
