//! `sb-db-read` as a user runs it: a real process on a real port. Without
//! flags it seeds and serves its own SQLite file; with every database it
//! serves all eight drivers; bad flags and unreachable or unseeded databases
//! are clear errors; SIGTERM is a clean stop.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::db_read_common::{REDIS_DB, mysql_database, postgres_database, with_path};
use stackbench_contract::check::{Expect, ResponseView, check};
use stackbench_testkit::process::Server;
use stackbench_testkit::{MYSQL, POSTGRES, REDIS, database_url, http};

const BIN: &str = env!("CARGO_BIN_EXE_sb-db-read");

/// Starts `sb-db-read ARGS --port 0` with `XDG_DATA_HOME=data_home`, and
/// reads every line it prints up to the driver list's end.
fn start(args: &[&str], data_home: &Path) -> Server {
    let mut server =
        Server::start(Command::new(BIN).args(args).args(["--port", "0"]).env("XDG_DATA_HOME", data_home));
    server.read_until(|l| l.contains("pool sizes:"));
    server
}

/// SIGTERM must be a clean stop.
fn stop(mut server: Server) {
    let status = server.terminate();
    assert!(status.success(), "SIGTERM is a clean stop, got {status}");
}

fn rows(addr: SocketAddr, driver: &str, a: u32, b: u32) {
    let r = http::get(addr, &format!("/db/{driver}?a={a}&b={b}")).unwrap();
    let view = ResponseView {
        status: r.status,
        content_type: r.header("content-type").map(str::as_bytes),
        body: &r.body,
    };
    assert_eq!(check(&Expect::Rows { a, b }, &view), Ok(()), "{driver}: {}", r.text());
}

/// A fresh temporary directory for one test, removed when dropped.
fn scratch(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("stackbench-dbread-{what}-")).tempdir().unwrap()
}

#[test]
fn without_flags_it_seeds_and_serves_sqlite() {
    let tmp = scratch("home");
    let home = tmp.path();
    let server = start(&[], home);
    let (addr, lines) = (server.addr, server.lines.clone());
    assert!(lines[0].contains("listening on http://127.0.0.1:"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("no SQLite file yet") && l.contains("wrote 10000 rows")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("/db/sqlite") && l.contains("read-only connection")),
        "{lines:?}"
    );
    assert!(home.join("stackbench/db-read.sqlite3").is_file());
    rows(addr, "sqlite", 1, 2);
    rows(addr, "sqlite", 10000, 3);
    let list = http::get(addr, "/db").unwrap();
    let v: serde_json::Value = serde_json::from_slice(&list.body).unwrap();
    assert_eq!(v["drivers"].as_array().unwrap().len(), 1, "{}", list.text());
    let unknown = http::get(addr, "/db/tokio-postgres").unwrap();
    assert_eq!(unknown.status, 404);
    assert!(unknown.text().contains("--store postgres://"), "{}", unknown.text());
    stop(server);

    // The second start finds the file seeded.
    let server = start(&[], home);
    let (addr, lines) = (server.addr, server.lines.clone());
    assert!(!lines.iter().any(|l| l.contains("no SQLite file yet")), "{lines:?}");
    rows(addr, "sqlite", 5, 5);
    stop(server);
}

/// Regression: a starter that reads only the first line and closes the pipe
/// made the next write to stdout fail, and the server exited with it.
#[test]
fn a_closed_stdout_after_the_first_line_does_not_stop_the_server() {
    let tmp = scratch("closed-stdout");
    let home = tmp.path();
    let mut server = Server::start(Command::new(BIN).args(["--port", "0"]).env("XDG_DATA_HOME", home));
    server.close_stdout();
    std::thread::sleep(Duration::from_millis(200));
    rows(server.addr, "sqlite", 1, 2);
    stop(server);
}

#[test]
fn every_driver_in_one_process() {
    let (Some(pg), Some(my), Some(rd)) = (database_url(POSTGRES), database_url(MYSQL), database_url(REDIS))
    else {
        return;
    };
    let tmp = scratch("all");
    let dir = tmp.path();
    let sqlite = dir.join("items.sqlite3");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (pg, my) = runtime.block_on(async { (postgres_database(&pg).await, mysql_database(&my).await) });
    drop(runtime);
    let rd = with_path(&rd, &REDIS_DB.to_string());
    // --seed loads every database first (here SQLite from nothing, the others already seeded or not).
    let sqlite_arg = sqlite.display().to_string();
    let sqlite_arg = format!("sqlite:{sqlite_arg}");
    let args =
        ["--store", &pg, "--store", &my, "--store", &rd, "--store", &sqlite_arg, "--pool", "2", "--seed"];
    let server = start(&args, dir);
    let (addr, lines) = (server.addr, server.lines.clone());
    assert!(lines.iter().any(|l| l.contains("2 connections per pool (--pool)")), "{lines:?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("seeded: ")).count(), 4, "{lines:?}");
    let list = http::get(addr, "/db").unwrap();
    let v: serde_json::Value = serde_json::from_slice(&list.body).unwrap();
    let names: Vec<&str> =
        v["drivers"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "tokio-postgres",
            "sqlx-postgres",
            "sea-orm-postgres",
            "mysql-async",
            "sqlx-mysql",
            "sea-orm-mysql",
            "redis",
            "sqlite"
        ]
    );
    for name in names {
        rows(addr, name, 9, 4);
        rows(addr, name, 10000, 10000);
    }
    stop(server);
}

fn fails(args: &[&str], code: i32, says: &[&str]) {
    let out = Command::new(BIN).args(["--port", "0"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: expected {s:?} in {err}");
    }
}

#[test]
fn mistakes_are_clear_errors() {
    fails(&["--pool", "0"], 2, &["--pool", "not in 1.."]);
    fails(&["--stack", "axum"], 2, &["unexpected argument '--stack'"]);
    fails(&["--store", "ftp://x"], 2, &["postgres://"]);
    fails(&["--nope"], 2, &["unexpected argument", "Usage"]);
    fails(&["--store"], 2, &["--store <URL>", "value is required"]);
    // The old per-database flags are gone; clap points at the one spelling.
    fails(&["--postgres", "postgres://h/x"], 2, &["unexpected argument '--postgres'", "--store"]);
    fails(
        &["--store", "postgres://postgres@127.0.0.1:1/x"],
        1,
        &["tokio-postgres cannot connect", "127.0.0.1:1"],
    );
    fails(&["--store", "mysql://root@127.0.0.1:notaport/x"], 1, &["not a valid MySQL/MariaDB URL"]);
    // An existing SQLite file without the data set.
    let tmp = scratch("empty");
    let dir = tmp.path();
    let empty = dir.join("empty.sqlite3");
    rusqlite::Connection::open(&empty).unwrap().execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    fails(&["--store", &format!("sqlite:{}", empty.display())], 1, &["sb-db-read seed --store sqlite:"]);
}

#[test]
fn help() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    for word in ["--store <URL>", "--pool", "--seed", "sea-orm-postgres", "mysql-async", "seed", "Example"] {
        assert!(help.contains(word), "{word} missing from {help}");
    }
}

/// `sb-db-read seed` loads the data set once; a second run changes nothing,
/// and the server then reads the file without seeding it.
#[test]
fn seed_then_serve() {
    let tmp = scratch("seed-cmd");
    let dir = tmp.path();
    let store = format!("sqlite:{}", dir.join("items.sqlite3").display());
    let seed = || Command::new(BIN).args(["seed", "--store", &store]).output().unwrap();
    let first = seed();
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success() && said.contains("wrote 10000 rows"), "{said}");
    let again = seed();
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success() && said.contains("nothing changed"), "{said}");
    let server = start(&["--store", &store], dir);
    assert!(!server.lines.iter().any(|l| l.contains("seeded")), "{:?}", server.lines);
    rows(server.addr, "sqlite", 7, 8);
    stop(server);
    let bad = Command::new(BIN).args(["seed", "--store", "mongodb://h/x"]).output().unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(bad.status.code() == Some(2) && err.contains("sqlite:PATH"), "{err}");
    let down =
        Command::new(BIN).args(["seed", "--store", "postgres://postgres@127.0.0.1:1/x"]).output().unwrap();
    let err = String::from_utf8_lossy(&down.stderr);
    assert!(down.status.code() == Some(1) && err.contains("cannot connect to PostgreSQL"), "{err}");
}

/// `--store` takes the forms of `sb-db-read seed`.
#[test]
fn a_store_flag_serves_its_drivers() {
    let tmp = scratch("store-flag");
    let dir = tmp.path();
    let file = dir.join("items.sqlite3");
    let server = start(&["--store", &format!("sqlite:{}", file.display()), "--seed"], dir);
    rows(server.addr, "sqlite", 4, 2);
    stop(server);
    assert!(file.exists(), "the file --store named was seeded");
}
