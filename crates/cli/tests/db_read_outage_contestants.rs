//! The db-read contestants in other languages (`contestants/*-db`) with their
//! databases down, then back: every network driver answers 503 (a JSON error,
//! within the contract's time) while its database is stopped (connections
//! refused) or paused with SIGSTOP (a database that hangs: connections open,
//! nothing answered), and the right rows again once it is started or resumed,
//! without restarting the contestant.
//!
//! The contestants run at once against private databases
//! ([`stackbench_testkit::instances`]), seeded by `sb-db-read seed`; each
//! database in turn is stopped and started again (one test) or paused and
//! resumed (the other; the two take turns, to keep the machine's load light).
//! Without the database servers or a contestant's toolchain the test skips
//! visibly; under `CI=true` it fails instead.

use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use stackbench_testkit::contestants::{Stack, contestant, install};
use stackbench_testkit::instances::{Instance, Mariadb, Postgres, Redis};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");
/// How long a request may take while its database is down: the contract's
/// 1.5 s deadline and a margin for a loaded machine.
const DOWN_WITHIN: Duration = Duration::from_millis(2500);
/// The contestants, in the order they are started.
const DIRS: [&str; 4] = ["go-db", "node-db", "python-db", "elixir-db"];
/// One outage at a time: each test starts four contestants and three databases.
static TURN: Mutex<()> = Mutex::new(());
/// The drivers a contestant serves (`GET /db`).
fn drivers(c: &Stack) -> Vec<String> {
    let (status, body) = c.get("/db");
    assert_eq!(status, 200, "{}: GET /db: {body}", c.dir);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["drivers"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect()
}

/// Which database each driver name reads, by the contestants' naming.
fn database_of(driver: &str) -> &'static str {
    if driver.contains("redis") {
        "redis"
    } else if driver.contains("mysql") {
        "mysql"
    } else if driver.contains("sqlite") {
        "sqlite"
    } else {
        "postgres"
    }
}

fn seed(url: &str) {
    let out = Command::new(contestant(BIN, "sb-db-read")).args(["seed", "--store", url]).output().unwrap();
    assert!(out.status.success(), "seed {url}: {}", String::from_utf8_lossy(&out.stderr));
}

/// How a database fails.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outage {
    /// Stopped: connections are refused.
    Stopped,
    /// SIGSTOP: connections open, nothing answered.
    Hung,
}

/// Starts every contestant on private, seeded databases, then takes each
/// database down (`outage`) and back, checking every driver that reads it.
fn outage(outage: Outage) {
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let (Some(mut pg), Some(mut my), Some(mut redis)) = (Postgres::new(), Mariadb::new(), Redis::new())
    else {
        return;
    };
    if !DIRS.iter().all(|dir| install(dir)) {
        return;
    }
    for url in [pg.url(), my.url(), redis.url()] {
        seed(&url);
    }
    let (pg_url, my_url) = (pg.url(), my.url());
    let plain = [("POSTGRES_URL", pg_url.clone()), ("MYSQL_URL", my_url.clone()), ("REDIS_URL", redis.url())];
    let no_tls = [
        ("POSTGRES_URL", format!("{pg_url}?sslmode=disable")),
        ("MYSQL_URL", my_url.clone()),
        ("REDIS_URL", redis.url()),
    ];
    // Elixir's p1_mysql always sends a password; the private MariaDB skips grant tables.
    let elixir = [
        ("POSTGRES_URL", pg_url.clone()),
        ("MYSQL_URL", my_url.replacen("mysql://root@", "mysql://ex_db_reader:ex_db_reader@", 1)),
        ("REDIS_URL", redis.url()),
    ];
    let contestants = [
        Stack::start("go-db", &[], &no_tls, "/db"),
        Stack::start("node-db", &[], &plain, "/db"),
        Stack::start("python-db", &[], &no_tls, "/db"),
        Stack::start("elixir-db", &[], &elixir, "/db"),
    ];
    let served: Vec<(usize, String)> = contestants
        .iter()
        .enumerate()
        .flat_map(|(i, c)| drivers(c).into_iter().map(move |d| (i, d)))
        .collect();
    let dbs: [(&str, &mut dyn Instance); 3] =
        [("postgres", &mut pg), ("mysql", &mut my), ("redis", &mut redis)];
    for (db, instance) in dbs {
        let on: Vec<(&Stack, &str)> = served
            .iter()
            .filter(|(_, d)| database_of(d) == db)
            .map(|(i, d)| (&contestants[*i], d.as_str()))
            .collect();
        assert!(!on.is_empty(), "no driver reads {db}: {served:?}");
        // A driver starts (imports its library, makes its pool) on its first request, which
        // on a busy machine can take past the read's deadline: a 503, then the rows.
        answering(&on, "before the outage");
        match outage {
            Outage::Stopped => instance.stop(),
            Outage::Hung => instance.pause(),
        }
        unavailable(&on, db, outage);
        match outage {
            Outage::Stopped => instance.start(),
            Outage::Hung => instance.resume(),
        }
        answering(&on, "after the outage");
    }
}

/// Two requests to each driver of `on` while `db` is down: each a 503 with a
/// JSON error within [`DOWN_WITHIN`]. Every driver at once, since a hung
/// database makes each answer take the deadline.
fn unavailable(on: &[(&Stack, &str)], db: &str, outage: Outage) {
    std::thread::scope(|s| {
        for (c, d) in on {
            s.spawn(move || {
                for _ in 0..2 {
                    let t = Instant::now();
                    let (status, body) = c.get(&format!("/db/{d}?a=3&b=9"));
                    let took = t.elapsed();
                    eprintln!("{} {d}, {db} {outage:?}: {status} in {took:?}", c.dir);
                    assert_eq!(status, 503, "{} {d} with {db} {outage:?}: {body}", c.dir);
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&body)
                            .is_ok_and(|v| v["error"].is_string()),
                        "{} {d}: a JSON error: {body}",
                        c.dir
                    );
                    assert!(took < DOWN_WITHIN, "{} {d} with {db} {outage:?}: the 503 took {took:?}", c.dir);
                }
            });
        }
    });
}

/// Each driver of `on` answers the right rows (within 30 s; the test prints after how many
/// requests).
fn answering(on: &[(&Stack, &str)], when: &str) {
    for (c, d) in on {
        let began = Instant::now();
        let deadline = began + Duration::from_secs(30);
        let mut tries = 0;
        loop {
            tries += 1;
            let (status, body) = c.get(&format!("/db/{d}?a=10000&b=9999"));
            if status == 200 {
                assert!(body.contains("item-10000") && body.contains("item-9999"), "{} {d}: {body}", c.dir);
                eprintln!("{} {d} {when}: rows after {tries} request(s), {:?}", c.dir, began.elapsed());
                break;
            }
            assert!(Instant::now() < deadline, "{} {d} {when}: no rows within 30 s: {status} {body}", c.dir);
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

#[test]
fn every_driver_answers_503_while_its_database_is_down_and_recovers() {
    outage(Outage::Stopped);
}

#[test]
fn every_driver_answers_503_while_its_database_hangs_and_recovers() {
    outage(Outage::Hung);
}
