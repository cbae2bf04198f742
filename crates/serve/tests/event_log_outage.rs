//! The store goes away under load and comes back: `sb-event-log` answers 503
//! (never hangs, never another status), recovers by itself without a restart,
//! and every event acknowledged before, during and after the outage is still
//! stored. Each test starts its own private database on a free port (a
//! throwaway PostgreSQL cluster, a MariaDB with its own datadir, a Redis with
//! its own AOF) and crashes that one; the shared databases are never touched.
//! Without the server binaries a test skips visibly (fails under CI=true).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::event_log_support::{Load, error_of, scratch, start, wait_for_acks};
use stackbench_testkit::{in_ci, skip};

const BIN: &str = env!("CARGO_BIN_EXE_sb-event-log");

/// A database this test owns.
trait PrivateDb {
    fn url(&self) -> String;
    /// Crash it (no clean shutdown).
    fn crash(&mut self);
    fn start(&mut self);
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// `None` (after a visible skip) when `path` is missing outside CI.
fn need(path: &Path) -> Option<()> {
    if path.exists() {
        return Some(());
    }
    assert!(!in_ci(), "{} is missing, and CI=true (see .ci/services)", path.display());
    skip(&format!("{} is not installed", path.display()));
    None
}

/// The outage scenario, on any store.
fn outage(db: &mut dyn PrivateDb, stack: &str) {
    let url = db.url();
    let server = start(BIN, &["--store", &url, "--stack", stack, "--reset"]);
    let load = Load::start(server.addr, 4, Duration::from_mins(2));
    wait_for_acks(&load.tally, 50, Duration::from_secs(20));

    db.crash();
    let t0 = Instant::now();
    let down = server.post(r#"{"type":"during_outage"}"#);
    assert_eq!(down.status, 503, "{url}: {}", down.text());
    assert!(error_of(&down).contains("unavailable"), "{}", down.text());
    assert!(t0.elapsed() < Duration::from_secs(7), "a 503 comes within the store timeout, not a hang");
    let unavailable = load.tally.unavailable.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(500));
    assert!(load.tally.unavailable.load(Ordering::SeqCst) > unavailable, "the clients see 503s");

    db.start();
    let ok = load.tally.ok();
    wait_for_acks(&load.tally, ok + 50, Duration::from_secs(40));
    let tally = load.stop();
    assert_eq!(tally.other.load(Ordering::SeqCst), 0, "only 200 and 503: {tally:?}");
    assert_eq!(tally.io_errors.load(Ordering::SeqCst), 0, "the server kept answering: {tally:?}");
    let stored = server.count();
    assert!(stored >= tally.ok(), "{url}: {} acknowledged, {stored} stored", tally.ok());
    eprintln!("{url}: {tally:?}, {stored} stored");
    assert!(server.terminate());
}

struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

impl Postgres {
    fn pg(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }
}

impl PrivateDb for Postgres {
    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres?table=eventlog_outage&pool=4", self.port)
    }
    fn crash(&mut self) {
        let data = self.dir.path().join("data");
        run(self.pg("pg_ctl").arg("-D").arg(&data).args(["stop", "-m", "immediate", "-w"]));
    }
    fn start(&mut self) {
        let data = self.dir.path().join("data");
        let opts = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.path().display());
        run(self
            .pg("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["-o", &opts, "-l"])
            .arg(self.dir.path().join("log"))
            .args(["start", "-w"]));
        wait_port(self.port, "PostgreSQL");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .pg("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["stop", "-m", "immediate"])
            .output();
    }
}

#[test]
fn postgres_outage() {
    let bin = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|d| d.filter_map(Result::ok).map(|e| e.path().join("bin")).max())
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"));
    let Some(()) = need(&bin.join("initdb")) else { return };
    let dir = scratch("pg-outage");
    if is_root() {
        run(Command::new("chown").args(["postgres:postgres"]).arg(dir.path()));
    }
    let mut db = Postgres { bin, dir, port: free_port() };
    run(db
        .pg("initdb")
        .arg("-D")
        .arg(db.dir.path().join("data"))
        .args(["-A", "trust", "-U", "postgres", "--no-sync"])
        .stdout(Stdio::null()));
    db.start();
    outage(&mut db, "axum");
}

struct Mariadb {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl PrivateDb for Mariadb {
    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/eventlog?table=eventlog_outage&pool=4", self.port)
    }
    fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    fn start(&mut self) {
        let child = Command::new("/usr/sbin/mariadbd")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.path().join("data").display()))
            .arg(format!("--tmpdir={}", self.dir.path().join("tmp").display()))
            .arg(format!("--socket={}", self.dir.path().join("sock").display()))
            .arg(format!("--port={}", self.port))
            .args(["--bind-address=127.0.0.1", "--user=root", "--skip-log-bin"])
            .args(["--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M"])
            .arg(format!("--log-error={}", self.dir.path().join("err.log").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_port(self.port, "MariaDB");
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        self.crash();
    }
}

#[test]
fn mariadb_outage() {
    let Some(()) = need(Path::new("/usr/sbin/mariadbd")) else { return };
    let dir = scratch("mariadb-outage");
    // A private tmpdir: concurrent bootstraps sharing /tmp collide on their
    // `#sql-temptable-*` files ("Unknown table 'mysql.tmp_user_sys'").
    std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
    run(Command::new("mariadb-install-db")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", dir.path().join("data").display()))
        .arg(format!("--tmpdir={}", dir.path().join("tmp").display()))
        .args(["--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
        .stdout(Stdio::null()));
    let mut db = Mariadb { dir, port: free_port(), child: None };
    db.start();
    run(Command::new("mariadb")
        .args(["-h", "127.0.0.1", "-P", &db.port.to_string(), "-u", "root"])
        .args(["-e", "CREATE DATABASE eventlog"]));
    outage(&mut db, "actix");
}

struct Redis {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl PrivateDb for Redis {
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0?key=eventlog:outage", self.port)
    }
    fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    fn start(&mut self) {
        // appendfsync always: every acknowledged event is on disk, so it survives the crash.
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_port(self.port, "Redis");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.crash();
    }
}

#[test]
fn redis_outage() {
    let Some(()) = need(Path::new("/usr/bin/redis-server")) else { return };
    let mut db = Redis { dir: scratch("redis-outage"), port: free_port(), child: None };
    db.start();
    let server = start(BIN, &["--store", &db.url()]);
    assert!(server.banner[1].contains("appendfsync always"), "{:?}", server.banner);
    drop(server);
    outage(&mut db, "hyper");
}
