//! `sqlite`: the embedded default, rusqlite (bundled SQLite) on a seeded file
//! in WAL mode. rusqlite is synchronous, so each read runs on tokio's blocking
//! pool (the tokio documentation's advice for blocking calls) holding one of
//! at most `size` read-only connections; a semaphore bounds the reads in
//! flight to the connections there are. Each connection caches the prepared
//! statement.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use stackbench_contract::dbread::Item;
use tokio::sync::Semaphore;

use super::{Driver, Drivers, Fetch, FetchError, FetchFuture, Rows, SetupError, add_checked};

const SELECT: &str = "SELECT id, name, price FROM items WHERE id IN (?1, ?2)";

struct Sqlite {
    path: PathBuf,
    idle: Arc<Mutex<Vec<Connection>>>,
    permits: Semaphore,
}

impl Fetch for Sqlite {
    fn fetch(&self, ids: [u32; 2]) -> FetchFuture<'_> {
        Box::pin(async move {
            let fail = |e: &dyn std::fmt::Display| FetchError::new(Driver::Sqlite, e);
            let _permit = self.permits.acquire().await.map_err(|e| fail(&e))?;
            let (idle, path) = (self.idle.clone(), self.path.clone());
            tokio::task::spawn_blocking(move || {
                let taken = idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
                let conn = match taken {
                    Some(c) => c,
                    None => open(&path).map_err(|e| fail(&e))?,
                };
                let rows = read(&conn, ids).map_err(|e| fail(&e));
                // A connection that failed may be broken: drop it, open anew next time.
                if rows.is_ok() {
                    idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(conn);
                }
                rows
            })
            .await
            .map_err(|e| fail(&e))?
        })
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.busy_timeout(Duration::from_secs(1))?;
    Ok(conn)
}

fn read(conn: &Connection, ids: [u32; 2]) -> rusqlite::Result<Rows> {
    let mut stmt = conn.prepare_cached(SELECT)?;
    let rows = stmt.query_map(ids, |r| Ok(Item { id: r.get(0)?, name: r.get(1)?, price: r.get(2)? }))?;
    rows.collect()
}

/// Adds `sqlite` on the file at `path` (which must exist and be seeded).
pub(crate) async fn add(drivers: &mut Drivers, path: &Path, size: u32) -> Result<(), SetupError> {
    let size = size.max(1);
    let first = open(path).map_err(|e| SetupError::Connect {
        driver: Driver::Sqlite,
        database: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let fetch = Sqlite {
        path: path.to_owned(),
        idle: Arc::new(Mutex::new(vec![first])),
        permits: Semaphore::new(size as usize),
    };
    let plural = if size == 1 { "" } else { "s" };
    add_checked(
        drivers,
        Driver::Sqlite,
        path.display().to_string(),
        &format!("sqlite:{}", path.display()),
        format!("{size} read-only connection{plural}"),
        Box::new(fetch),
    )
    .await
}
