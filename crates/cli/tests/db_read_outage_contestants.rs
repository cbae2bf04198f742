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

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_testkit::contestants::contestant;
use stackbench_testkit::http;
use stackbench_testkit::instances::{Instance, Mariadb, Postgres, Redis, free_port};
use stackbench_testkit::{in_ci, skip};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");
/// How long a request may take while its database is down.
const DOWN_WITHIN: Duration = Duration::from_millis(2500);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

struct Contestant {
    dir: &'static str,
    port: u16,
    child: Child,
}

impl Drop for Contestant {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` on the contestant: status and body.
fn get(c: &Contestant, path: &str) -> (u16, String) {
    match http::get(([127, 0, 0, 1], c.port).into(), path) {
        Ok(r) => (r.status, String::from_utf8_lossy(&r.body).into_owned()),
        Err(e) => (0, e.to_string()),
    }
}

/// The drivers a contestant serves (`GET /db`).
fn drivers(c: &Contestant) -> Vec<String> {
    let (status, body) = get(c, "/db");
    assert_eq!(status, 200, "{}: GET /db: {body}", c.dir);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["drivers"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_owned()).collect()
}

fn start(dir: &'static str, env: &[(&str, String)]) -> Contestant {
    let port = free_port();
    let child = Command::new(root().join("contestants").join(dir).join("run.sh"))
        .env("PORT", port.to_string())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let c = Contestant { dir, port, child };
    let deadline = Instant::now() + Duration::from_mins(1);
    while get(&c, "/db").0 != 200 {
        assert!(Instant::now() < deadline, "{dir} did not answer GET /db within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    c
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
    for dir in dirs {
        let out = Command::new(root().join("contestants").join(dir).join("install.sh")).output().unwrap();
        if !out.status.success() {
            let why = format!("{dir}/install.sh failed: {}", String::from_utf8_lossy(&out.stderr).trim());
            assert!(!in_ci(), "CI=true: {why}");
            skip(&why);
            return;
        }
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
        start("go-db", &no_tls),
        start("node-db", &plain),
        start("python-db", &no_tls),
        start("elixir-db", &elixir),
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
            let (status, body) = get(&contestants[*i], &format!("/db/{d}?a=3&b=9"));
            assert_eq!(status, 200, "{} {d} before the outage: {body}", contestants[*i].dir);
        }
        instance.stop();
        for (i, d) in &on {
            let c = &contestants[*i];
            for _ in 0..2 {
                let t = Instant::now();
                let (status, body) = get(c, &format!("/db/{d}?a=3&b=9"));
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
                let (status, body) = get(c, &format!("/db/{d}?a=10000&b=9999"));
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
