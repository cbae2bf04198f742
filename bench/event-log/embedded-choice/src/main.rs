//! SQLite (WAL) vs redb for the `event-log` embedded store: the three costs the
//! contestant pays, measured on the same disk in one run.
//!
//! 1. one durable event: a transaction with the insert and the count, committed
//!    with the store's durable setting (SQLite `synchronous=FULL`, redb
//!    `Durability::Immediate`), one writer, sequential: median latency;
//! 2. the same, 64 events per commit (what the contestant's group commit does
//!    under load): events per second;
//! 3. the count over 1,000,000 events, as the original experiment's `--count query` needs it
//!    (SQLite `COUNT(*)`; redb `len()` is a stored length, so the scan is a
//!    range iteration), and opening a 1M-event file (cold start).

use std::path::Path;
use std::time::{Duration, Instant};

use redb::{
    Database, Durability, ReadableDatabase as _, ReadableTable as _, ReadableTableMetadata as _,
    TableDefinition,
};
use rusqlite::{Connection, params};

const EVENTS: TableDefinition<u64, (&str, &str, f64, u64)> = TableDefinition::new("events");

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn sqlite_open(path: &Path, sync: &str) -> Connection {
    let c = Connection::open(path).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.pragma_update(None, "synchronous", sync).unwrap();
    c.execute_batch(
        "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL,
         value REAL NOT NULL, ts_ms INTEGER NOT NULL)",
    )
    .unwrap();
    c
}

fn sqlite_batch(c: &Connection, n: usize) -> i64 {
    c.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut count = 0;
    for i in 0..n {
        c.prepare_cached("INSERT INTO events (kind, source, value, ts_ms) VALUES (?1, ?2, ?3, ?4)")
            .unwrap()
            .execute(params!["page_view", "web", 1.5, 1_764_460_800_000_i64 + i as i64])
            .unwrap();
        count = c.prepare_cached("SELECT COUNT(*) FROM events").unwrap().query_row([], |r| r.get(0)).unwrap();
    }
    c.execute_batch("COMMIT").unwrap();
    count
}

fn redb_batch(db: &Database, next: &mut u64, n: usize, scan: bool) -> u64 {
    let mut tx = db.begin_write().unwrap();
    tx.set_durability(Durability::Immediate).unwrap();
    let mut count = 0;
    {
        let mut t = tx.open_table(EVENTS).unwrap();
        for i in 0..n {
            t.insert(*next, ("page_view", "web", 1.5, 1_764_460_800_000 + i as u64)).unwrap();
            *next += 1;
            count = if scan { t.iter().unwrap().count() as u64 } else { t.len().unwrap() };
        }
    }
    tx.commit().unwrap();
    count
}

fn main() {
    let dir = std::env::temp_dir().join(format!("embedded-choice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ops = 300;
    println!("| measure | SQLite WAL synchronous=FULL | redb Durability::Immediate |");
    println!("|---|---:|---:|");

    let sq = sqlite_open(&dir.join("a.db"), "FULL");
    let rb = Database::create(dir.join("a.redb")).unwrap();
    let mut next = 0;
    let (mut ts, mut tr) = (Vec::new(), Vec::new());
    for _ in 0..ops {
        let t = Instant::now();
        sqlite_batch(&sq, 1);
        ts.push(t.elapsed());
        let t = Instant::now();
        redb_batch(&rb, &mut next, 1, false);
        tr.push(t.elapsed());
    }
    println!("| one durable event (insert + count + commit), median | {:?} | {:?} |", median(ts), median(tr));

    let t = Instant::now();
    for _ in 0..50 {
        sqlite_batch(&sq, 64);
    }
    let s = t.elapsed();
    let t = Instant::now();
    for _ in 0..50 {
        redb_batch(&rb, &mut next, 64, false);
    }
    let r = t.elapsed();
    let per_s = |d: Duration| (50.0 * 64.0 / d.as_secs_f64()) as u64;
    println!("| 64 events per durable commit, events/s | {} | {} |", per_s(s), per_s(r));

    // 1M events, then the count over all of them.
    sq.execute_batch(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
         INSERT INTO events (kind, source, value, ts_ms) SELECT 'page_view', 'web', 1.5, x FROM c",
    )
    .unwrap();
    {
        let mut tx = rb.begin_write().unwrap();
        tx.set_durability(Durability::Immediate).unwrap();
        {
            let mut tb = tx.open_table(EVENTS).unwrap();
            for i in 0..1_000_000u64 {
                tb.insert(next, ("page_view", "web", 1.5, i)).unwrap();
                next += 1;
            }
        }
        tx.commit().unwrap();
    }
    let timed = |f: &mut dyn FnMut()| {
        median(
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed()
                })
                .collect(),
        )
    };
    let sc = timed(&mut || {
        let _: i64 = sq.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap();
    });
    let rc = timed(&mut || {
        let tx = rb.begin_read().unwrap();
        let _ = tx.open_table(EVENTS).unwrap().iter().unwrap().count();
    });
    let rl = timed(&mut || {
        let tx = rb.begin_read().unwrap();
        let _ = tx.open_table(EVENTS).unwrap().len().unwrap();
    });
    println!("| count over 1M events (scan) | {sc:?} | {rc:?} |");
    println!("| stored length (redb `len()`) | - | {rl:?} |");
    drop((sq, rb));
    let so = timed(&mut || {
        let c = sqlite_open(&dir.join("a.db"), "FULL");
        let _: i64 = c.query_row("SELECT 1", [], |r| r.get(0)).unwrap();
    });
    let ro = timed(&mut || {
        let db = Database::create(dir.join("a.redb")).unwrap();
        drop(db);
    });
    println!("| open a 1M-event file | {so:?} | {ro:?} |");
    let size = |p: &str| std::fs::metadata(dir.join(p)).map_or(0, |m| m.len()) / 1_048_576;
    println!("| file size at 1M events | {} MiB (+WAL) | {} MiB |", size("a.db"), size("a.redb"));
    std::fs::remove_dir_all(&dir).unwrap();
}
