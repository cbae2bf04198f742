//! The Go/Gin event-log contestant (`contestants/go-gin`) under the faults its
//! README promises to survive, on its Go module build:
//!
//! - SQLite: SIGKILLed under load from concurrent clients, then restarted on
//!   the same file, it counts every event it answered 200 for (and at most
//!   the requests still in flight besides);
//! - PostgreSQL (a private instance, [`stackbench_testkit::instances`]): while
//!   the database is stopped (refusing) or paused with SIGSTOP (hanging), each
//!   request gets a 503 with a JSON error naming the store within the store
//!   timeout (5 s); once it is back the next request succeeds, without a
//!   restart of go-gin.
//!
//! Without Go or PostgreSQL the tests skip visibly; under `CI=true` they fail.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use stackbench_hurl::{Builtin, Kind, Request, Vars};
use stackbench_testkit::contestants::{Stack, install};
use stackbench_testkit::instances::{Instance, Postgres};

/// The clients that send events at once.
const CLIENTS: usize = 4;
/// The store timeout (`storeTimeout` in `store.go`, the README's 5 s) and a
/// margin for a loaded machine.
const STORE_WITHIN: Duration = Duration::from_millis(6500);

/// `n` valid event bodies, as `stackbench load --scenario event-log` sends them: its file's
/// load request, with the file's variables drawn for `n` iterations.
fn events(n: usize) -> Vec<Vec<u8>> {
    let file = Builtin::EVENT_LOG.file(false);
    let entry = &file.flows[0].hurl.entries[0];
    let mut vars = Vars::new(1);
    vars.set("base_url", "http://127.0.0.1:9", Kind::String);
    let mut req = Request::default();
    (0..n as u64)
        .map(|i| {
            file.draw(i, &mut vars);
            entry.render(&mut vars, &mut req).unwrap();
            req.body.clone()
        })
        .collect()
}

/// The `count` of a `200 {"count": N}` answer.
fn count_of(c: &Stack, (status, body): (u16, String)) -> u64 {
    assert_eq!(status, 200, "{}: {body}", c.dir);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}"));
    v["count"].as_u64().unwrap_or_else(|| panic!("no count in {body}"))
}

#[test]
fn sqlite_keeps_every_acknowledged_event_through_sigkill() {
    if !install("go-gin") {
        return;
    }
    let scratch = tempfile::Builder::new().prefix("sb-go-gin-sqlite-").tempdir().unwrap();
    let dir = scratch.path();
    let env = [("EVENTS_DB", dir.join("events.db").display().to_string())];
    let gin = Stack::start("go-gin", &["event-log", "sqlite"], &env, "/events/count");
    let pool = events(256);
    let (acked, failed) = (AtomicU64::new(0), AtomicU64::new(0));
    let killed = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|s| {
        for i in 0..CLIENTS {
            let (gin, acked, failed, killed) = (&gin, &acked, &failed, &killed);
            let pool = &pool;
            s.spawn(move || {
                // Until the server is gone, at most 10 s.
                let mut events = pool.iter().cycle().skip(i * 37);
                while !killed.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(10) {
                    let body = events.next().expect("a cycle");
                    match gin.post_json("/events", body) {
                        (200, _) => acked.fetch_add(1, Ordering::SeqCst),
                        (0, _) => failed.fetch_add(1, Ordering::SeqCst),
                        (status, body) => panic!("an event got {status}: {body}"),
                    };
                }
            });
        }
        std::thread::sleep(Duration::from_secs(2));
        // Mid-load: every client has a request in flight or about to be.
        gin.kill();
        killed.store(true, Ordering::SeqCst);
    });
    drop(gin);
    let (acked, failed) = (acked.into_inner(), failed.into_inner());
    assert!(acked >= 50, "only {acked} events acknowledged in 2 s");
    let gin = Stack::start("go-gin", &["event-log", "sqlite"], &env, "/events/count");
    let count = count_of(&gin, gin.get("/events/count"));
    eprintln!(
        "go-gin sqlite: {acked} answers 200, {failed} requests cut by SIGKILL, restarted count {count}"
    );
    assert!(count >= acked, "{acked} events acknowledged, {count} counted after the restart");
    // A request in flight at the kill may have been written but not answered: one per client.
    assert!(count <= acked + CLIENTS as u64, "{acked} events acknowledged, {count} counted");
    drop(gin);
}

/// A request while PostgreSQL is down: 503, a JSON error naming the store,
/// within [`STORE_WITHIN`].
fn unavailable(gin: &Stack, what: &str, path: &str, body: Option<&[u8]>) {
    let t = Instant::now();
    let (status, text) = match body {
        Some(b) => gin.post_json(path, b),
        None => gin.get(path),
    };
    let took = t.elapsed();
    eprintln!("go-gin postgres {what}: {path}: {status} in {took:?}: {text}");
    assert_eq!(status, 503, "{path} with PostgreSQL {what}: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let error = v["error"].as_str().unwrap_or_else(|| panic!("no error in {text}"));
    assert!(error.contains("PostgreSQL at 127.0.0.1"), "the error names the store: {error}");
    assert!(took < STORE_WITHIN, "{path} with PostgreSQL {what}: the 503 took {took:?}");
}

#[test]
fn postgres_answers_503_while_the_database_is_down_or_hangs_and_recovers() {
    let Some(mut pg) = Postgres::new() else {
        return;
    };
    if !install("go-gin") {
        return;
    }
    let env = [("POSTGRES_URL", pg.url()), ("PG_TABLE", "go_gin_faults".to_owned())];
    let gin = Stack::start("go-gin", &["event-log", "postgres"], &env, "/events/count");
    let pool = events(16);
    let body = |i: usize| pool[i % pool.len()].clone();
    for i in 0..3 {
        assert_eq!(count_of(&gin, gin.post_json("/events", &body(i))), i as u64 + 1);
    }

    pg.stop();
    for i in 0..2 {
        unavailable(&gin, "stopped", "/events", Some(&body(i)[..]));
    }
    unavailable(&gin, "stopped", "/events/count", None);
    pg.start();
    // The next request, no retry: nothing was written while the database was stopped.
    assert_eq!(count_of(&gin, gin.post_json("/events", &body(3))), 4);

    pg.pause();
    let hung = 2;
    for i in 0..hung {
        unavailable(&gin, "paused", "/events", Some(&body(i)[..]));
    }
    unavailable(&gin, "paused", "/events/count", None);
    pg.resume();
    // The next request, no retry. The paused backends may still run the
    // INSERTs they had read: a 503 acknowledges nothing, either way is right.
    let n = count_of(&gin, gin.post_json("/events", &body(4)));
    eprintln!("go-gin postgres: the first event after the hang answered count {n}");
    let most = 5 + hung as u64;
    assert!((5..=most).contains(&n), "after the hang: {n} events, 5 to {most} expected");
    assert_eq!(count_of(&gin, gin.get("/events/count")), n);
}
