//! `stackbench seed db-read` and `stackbench serve db-read` as a user types
//! them: seeding says what it did (and nothing the second time), a wrong
//! `--store` says which forms exist, and the seeded file is served.

use std::path::PathBuf;
use std::process::Command;

use stackbench_testkit::http;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stackbench-cli-dbread-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn seed(store: &str) -> (Option<i32>, String, String) {
    let out = Command::new(BIN).args(["seed", "db-read", "--store", store]).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn seed_then_serve_a_sqlite_file() {
    let dir = temp_dir();
    let path = dir.join("items.sqlite3");
    let store = format!("sqlite:{}", path.display());

    let (code, out, err) = seed(&store);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("wrote 10000 rows of table items"), "{out}");
    let (code, out, _) = seed(&store);
    assert_eq!(code, Some(0));
    assert!(out.contains("nothing changed"), "{out}");

    let mut server = Server::start(Command::new(BIN).args([
        "serve",
        "db-read",
        "--sqlite",
        &path.display().to_string(),
        "--port",
        "0",
    ]));
    let (line, addr) = (server.first_line(), server.addr);
    assert!(line.starts_with("stackbench serve db-read (axum): listening on http://"), "{line}");
    let r = http::get(addr, "/db/sqlite?a=2&b=1").unwrap();
    assert_eq!(r.status, 200);
    let rows: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        rows,
        serde_json::json!([
            {"id": 1, "name": "item-1", "price": 7919},
            {"id": 2, "name": "item-2", "price": 5838}
        ])
    );
    assert!(server.terminate().success());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_wrong_store_lists_the_forms() {
    let (code, _, err) = seed("/tmp/items.db");
    assert_eq!(code, Some(1));
    assert!(err.contains("postgres://") && err.contains("sqlite:PATH"), "{err}");
    let (code, _, err) = seed("postgres://postgres@127.0.0.1:1/x");
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot connect to PostgreSQL"), "{err}");
}

#[test]
fn help_names_the_drivers() {
    let out = Command::new(BIN).args(["serve", "db-read", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["--postgres", "--mysql", "--redis", "--sqlite", "--pool", "sea-orm-postgres", "Example"] {
        assert!(help.contains(word), "{word} missing from {help}");
    }
}
