//! `sb-event-log` as a user and an orchestrator run it: real processes, real
//! sockets, every stack on the embedded store and every store on a stack:
//! K sequential events give K, the count survives a restart, `--reset`
//! empties, both count modes, and nothing acknowledged is lost to SIGKILL
//! (embedded, PostgreSQL, MariaDB).

use crate::event_log_support::{
    Server, count_of, error_of, scratch, sigkill_loses_nothing, start, try_start,
};
use stackbench_testkit::{INFLUXDB, MYSQL, POSTGRES, REDIS, database_url, http};

const BIN: &str = env!("CARGO_BIN_EXE_sb-event-log");
const STACKS: [&str; 3] = ["axum", "actix", "hyper"];

/// K sequential events on a clean store answer 1..=K; the count agrees.
fn sequential_counts(server: &Server, k: u64) {
    for i in 1..=k {
        let r = server
            .post(&format!(r#"{{"type":"page_view","source":"web","value":{i},"timestamp":1764460800000}}"#));
        assert_eq!((r.status, count_of(&r)), (200, i), "event {i}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    assert_eq!(server.count(), k);
}

/// `HEAD /events/count` on a raw connection (the test client expects a body).
fn raw_head(addr: std::net::SocketAddr) -> String {
    use std::io::{Read as _, Write as _};
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    write!(tcp, "HEAD /events/count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn embedded_store_on_every_stack() {
    let dir = scratch("stacks");
    for stack in STACKS {
        let store = format!("sqlite:{}", dir.path().join(format!("{stack}.db")).display());
        let server = start(BIN, &["--store", &store, "--stack", stack, "--reset"]);
        assert!(
            server.banner[0].contains(&format!("event-log ({stack}, {store}, count=query)")),
            "{:?}",
            server.banner
        );
        assert!(server.banner[1].contains("synchronous=FULL"), "{:?}", server.banner);
        sequential_counts(&server, 10);

        let bad = server.post(r#"{"type":"bad type"}"#);
        assert!(bad.status == 400 && error_of(&bad).contains("`type`"), "{stack}: {}", bad.text());
        let big = format!(r#"{{"type":"a","pad":"{}"}}"#, "x".repeat(70_000));
        assert_eq!(server.post(&big).status, 413, "{stack}");
        let head = raw_head(server.addr);
        assert!(
            head.starts_with("HTTP/1.1 200") && head.ends_with("\r\n\r\n"),
            "{stack}: HEAD has no body: {head:?}"
        );
        let r = http::get(server.addr, "/events").unwrap();
        assert_eq!((r.status, r.header("allow")), (405, Some("POST")), "{stack}");
        assert_eq!(server.count(), 10, "{stack}: refused requests wrote nothing");
        assert!(server.terminate(), "{stack}: SIGTERM is a clean stop");

        // The events are still there after a restart, and --reset empties the store.
        let server = start(BIN, &["--store", &store, "--stack", stack, "--count", "counter"]);
        assert_eq!(server.count(), 10, "{stack}: counter mode starts from the stored events");
        assert_eq!(count_of(&server.post(r#"{"type":"a"}"#)), 11, "{stack}");
        drop(server);
        let server = start(BIN, &["--store", &store, "--stack", stack, "--reset"]);
        assert_eq!(server.count(), 0, "{stack}: --reset empties the store");
    }
}

#[test]
fn the_default_store_is_a_file_in_the_working_directory() {
    let dir = scratch("default");
    let server = stackbench_testkit::process::Server::start(
        std::process::Command::new(BIN).args(["--port", "0"]).current_dir(dir.path()),
    );
    assert!(server.first_line().contains("sqlite:stackbench-events.db"), "{}", server.first_line());
    assert!(dir.path().join("stackbench-events.db").exists());
    drop(server);
}

#[test]
fn bad_stores_are_clear_errors() {
    let e = try_start(BIN, &["--store", "mongodb://127.0.0.1/db"]).err().unwrap();
    assert!(e.contains("postgres://") && e.contains("sqlite:"), "{e}");
    let e = try_start(BIN, &["--store", "sqlite:/nonexistent-dir-eventlog/e.db"]).err().unwrap();
    assert!(e.contains("directory does not exist"), "{e}");
    // Nothing listens on port 1: a clear "cannot connect", not a hang.
    let e = try_start(BIN, &["--store", "postgres://postgres@127.0.0.1:1/db"]).err().unwrap();
    assert!(e.contains("cannot connect to PostgreSQL") && e.contains("is it running"), "{e}");
    let e = try_start(BIN, &["--store", "redis://127.0.0.1:1/0"]).err().unwrap();
    assert!(e.contains("cannot connect to Redis"), "{e}");
}

#[test]
fn sigkill_loses_nothing_embedded() {
    let dir = scratch("sigkill");
    for stack in STACKS {
        let store = format!("sqlite:{}", dir.path().join(format!("{stack}.db")).display());
        sigkill_loses_nothing(BIN, &store, stack);
    }
}

/// Both count modes on a database store; the table (or key) is this test's own.
fn store_contract(store: &str, stack: &str) {
    for mode in ["query", "counter"] {
        let server = start(BIN, &["--store", store, "--stack", stack, "--count", mode, "--reset"]);
        assert!(server.banner.len() == 2 && server.banner[1].starts_with("store: "), "{:?}", server.banner);
        sequential_counts(&server, 5);
        assert!(server.terminate());
        let server = start(BIN, &["--store", store, "--stack", stack, "--count", mode]);
        assert_eq!(server.count(), 5, "{store} {mode}: the events outlive the server");
        assert_eq!(count_of(&server.post(r#"{"type":"a"}"#)), 6, "{store} {mode}");
    }
}

#[test]
fn postgres_store() {
    let Some(url) = database_url(POSTGRES) else { return };
    store_contract(&format!("{url}?table=eventlog_it"), "axum");
    sigkill_loses_nothing(BIN, &format!("{url}?table=eventlog_it_kill"), "hyper");
}

/// Servers started at once on a database where the table does not exist yet
/// (an orchestrator starting replicas, a script starting every stack): each
/// creates the tables if missing, and none may fail because another one won
/// that race.
#[test]
fn postgres_servers_started_at_once_all_serve() {
    let Some(url) = database_url(POSTGRES) else { return };
    let table = "eventlog_it_race";
    let drop_tables = || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(conn);
            client.batch_execute(&format!("DROP TABLE IF EXISTS {table}, {table}_count")).await.unwrap();
        });
    };
    for round in 0..5 {
        drop_tables();
        let store = format!("{url}?table={table}");
        let starts: Vec<_> = (0..4)
            .map(|_| {
                let store = store.clone();
                std::thread::spawn(move || try_start(BIN, &["--store", &store, "--stack", "hyper"]))
            })
            .collect();
        for started in starts {
            let server =
                started.join().unwrap().unwrap_or_else(|e| panic!("round {round}: a server failed: {e}"));
            assert_eq!(server.post(r#"{"type":"a"}"#).status, 200, "round {round}");
            assert!(server.terminate(), "round {round}");
        }
    }
    drop_tables();
}

#[test]
fn mysql_store() {
    let Some(url) = database_url(MYSQL) else { return };
    store_contract(&format!("{url}?table=eventlog_it"), "actix");
    sigkill_loses_nothing(BIN, &format!("{url}?table=eventlog_it_kill"), "axum");
}

#[test]
fn redis_store() {
    let Some(url) = database_url(REDIS) else { return };
    let store = format!("{url}?key=eventlog:it");
    store_contract(&store, "hyper");
    let server = start(BIN, &["--store", &store]);
    assert!(server.banner[1].contains("appendonly"), "the durability is stated: {:?}", server.banner);
}

#[test]
fn influxdb_store() {
    let Some(url) = database_url(INFLUXDB) else { return };
    let store = format!("{url}?measurement=eventlog_it");
    // sequential_counts sends the same type, source and millisecond each time:
    // InfluxDB would merge such points; the store keeps them apart.
    store_contract(&store, "axum");
    let server = start(BIN, &["--store", &store, "--reset"]);
    let late = server.post(r#"{"type":"a","timestamp":9007199254740991}"#);
    assert!(late.status == 400 && error_of(&late).contains("2262"), "{}", late.text());
    assert_eq!(server.count(), 0, "nothing written");
}
