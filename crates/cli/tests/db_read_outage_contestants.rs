//! The db-read contestants in other languages (`contestants/*-db`) with their
//! databases down, then back: every network driver answers 503 while its
//! database is stopped (a JSON error, within the contract's time) and the
//! right rows again once it is started, without restarting the contestant.
//!
//! All four contestants run at once against private databases
//! ([`stackbench_testkit::instances`]), seeded by `sb-db-read seed`;
//! each database in turn is stopped and started again. Without the database
//! servers or a contestant's toolchain the test skips visibly; under
//! `CI=true` it fails instead.

use std::process::Command;
use std::time::{Duration, Instant};

use stackbench_testkit::contestants::{Stack, contestant, install};
use stackbench_testkit::instances::{Instance, Mariadb, Postgres, Redis};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");
/// How long a request may take while its database is down.
const DOWN_WITHIN: Duration = Duration::from_millis(2500);

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

#[test]
fn every_driver_answers_503_while_its_database_is_down_and_recovers() {
    let (Some(mut pg), Some(mut my), Some(mut redis)) = (Postgres::new(), Mariadb::new(), Redis::new())
    else {
        return;
    };
    let dirs = ["go-db", "node-db", "python-db", "elixir-db"];
    if !dirs.iter().all(|dir| install(dir)) {
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
        let on: Vec<&(usize, String)> = served.iter().filter(|(_, d)| database_of(d) == db).collect();
        assert!(!on.is_empty(), "no driver reads {db}: {served:?}");
        for (i, d) in &on {
            let (status, body) = contestants[*i].get(&format!("/db/{d}?a=3&b=9"));
            assert_eq!(status, 200, "{} {d} before the outage: {body}", contestants[*i].dir);
        }
        instance.stop();
        for (i, d) in &on {
            let c = &contestants[*i];
            for _ in 0..2 {
                let t = Instant::now();
                let (status, body) = c.get(&format!("/db/{d}?a=3&b=9"));
                let took = t.elapsed();
                assert_eq!(status, 503, "{} {d} with {db} down: {body}", c.dir);
                assert!(
                    serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|v| v["error"].is_string()),
                    "{} {d}: a JSON error: {body}",
                    c.dir
                );
                assert!(took < DOWN_WITHIN, "{} {d}: the 503 took {took:?}", c.dir);
            }
        }
        instance.start();
        for (i, d) in &on {
            let c = &contestants[*i];
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let (status, body) = c.get(&format!("/db/{d}?a=10000&b=9999"));
                if status == 200 {
                    assert!(
                        body.contains("item-10000") && body.contains("item-9999"),
                        "{} {d}: {body}",
                        c.dir
                    );
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{} {d} did not recover within 30 s: {status} {body}",
                    c.dir
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}
