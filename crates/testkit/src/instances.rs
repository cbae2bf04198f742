//! Database instances a test owns: a throwaway PostgreSQL cluster from
//! `initdb`, a `mariadbd` with its own data directory (grant tables skipped:
//! any user gets in), a `redis-server` with an append-only file so its data
//! survives a restart, each on a free port in a temp directory, to stop and
//! start at will, or to pause (SIGSTOP: a database that hangs, connections
//! open but nothing answered) and resume (SIGCONT). The shared databases of
//! the other tests are never stopped.
//! Without the server binaries a constructor skips visibly (`None`); under
//! `CI=true` it fails instead (`.ci/run` installs them).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{in_ci, skip};

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn temp_dir(what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("stackbench-instance-{what}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A server binary, or `None` after a visible skip (a failure under CI).
fn tool(candidates: &[PathBuf]) -> Option<PathBuf> {
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Some(found.clone());
    }
    let names: Vec<_> = candidates.iter().map(|p| p.display().to_string()).collect();
    let why = format!(
        "none of {} is installed (apt-get install postgresql mariadb-server redis-server)",
        names.join(", ")
    );
    assert!(!in_ci(), "{why}, and CI=true");
    skip(&why);
    None
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// Stops a child process with SIGTERM and waits for it (at most 30 s).
fn terminate(child: &mut Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `child` listens on `port`; says why if it exits first.
fn wait_for_port(child: &mut Child, port: u16, log: Option<&std::path::Path>) {
    let deadline = Instant::now() + Duration::from_mins(1);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            let log = log.and_then(|l| std::fs::read_to_string(l).ok()).unwrap_or_default();
            panic!("the database exited ({status}) before listening on port {port}: {log}");
        }
        assert!(Instant::now() < deadline, "nothing listens on port {port} after 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Sends `sig` (`-STOP`, `-CONT`) to the processes `pids`. A stop returns once every thread
/// of each is stopped: `kill` returns when the signal is sent, and on a busy machine a thread
/// that was running may still answer a query for a few milliseconds after it.
fn signal(pids: &[u32], sig: &str) {
    let mut cmd = Command::new("kill");
    cmd.arg(sig).arg("--").args(pids.iter().map(u32::to_string));
    let ok = cmd.status().is_ok_and(|s| s.success());
    assert!(ok, "{cmd:?} failed");
    if sig == "-STOP" {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !pids.iter().all(|&p| stopped(p)) {
            assert!(Instant::now() < deadline, "{pids:?} not stopped 5 s after SIGSTOP");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Whether every thread of process `pid` is stopped (state `T`), or the process is gone.
fn stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return true };
    tasks.filter_map(Result::ok).all(|t| {
        std::fs::read_to_string(t.path().join("stat")).map_or(true, |stat| {
            // Field 3, after the parenthesized name, is the state.
            stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) == Some("T")
        })
    })
}

/// The children of process `pid` (from `/proc/*/stat`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            // Field 4, after the parenthesized name, is the parent's pid.
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1))
                    == Some(pid.to_string().as_str())
            })
        })
        .collect()
}

/// A database instance the test owns.
pub trait Instance {
    fn url(&self) -> String;
    fn stop(&mut self);
    fn start(&mut self);
    /// SIGSTOP to every process of the server: it keeps its port and its
    /// connections but answers nothing (a hung database) until [`Instance::resume`].
    fn pause(&mut self);
    /// SIGCONT after [`Instance::pause`].
    fn resume(&mut self);
}

pub struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    drop_root: bool,
    paused: bool,
}

impl Postgres {
    pub fn new() -> Option<Self> {
        let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|d| d.filter_map(Result::ok).map(|e| e.path().join("bin")).collect())
            .unwrap_or_default();
        bins.sort_by_key(|p| {
            p.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0)
        });
        bins.reverse();
        let initdb = tool(
            &bins
                .iter()
                .map(|b| b.join("initdb"))
                .chain([PathBuf::from("/usr/bin/initdb")])
                .collect::<Vec<_>>(),
        )?;
        let bin = initdb.parent().unwrap().to_owned();
        let dir = temp_dir("pg");
        // PostgreSQL refuses to run as root: run it as `postgres`, who must own the directory.
        let drop_root = is_root();
        if drop_root {
            run(Command::new("chown").args(["-R", "postgres:"]).arg(&dir));
        }
        let mut pg = Postgres { bin, dir, port: free_port(), drop_root, paused: false };
        let data = pg.dir.join("data");
        run(pg.command("initdb").arg("-D").arg(&data).args(["-A", "trust", "-U", "postgres", "--no-sync"]));
        pg.start();
        Some(pg)
    }

    fn command(&self, tool: &str) -> Command {
        let path = self.bin.join(tool);
        if self.drop_root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        run(self.command("pg_ctl").arg("-D").arg(data).args(args).stdout(Stdio::null()));
    }

    /// The postmaster's pid (the first line of `postmaster.pid`).
    fn postmaster(&self) -> u32 {
        let file = self.dir.join("data").join("postmaster.pid");
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        text.lines().next().and_then(|l| l.trim().parse().ok()).expect("a pid on line 1")
    }
}

impl Instance for Postgres {
    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
    fn stop(&mut self) {
        self.resume();
        self.pg_ctl(&["-m", "fast", "-w", "stop"]);
    }
    fn start(&mut self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=16MB",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log").display().to_string();
        self.pg_ctl(&["-o", &opts, "-l", &log, "-w", "-t", "60", "start"]);
    }
    /// The postmaster first (it forks no backend after that), then each of
    /// its children: the backends serving the connections and the auxiliary
    /// processes. Each runs in a session of its own, so no process group
    /// holds them all.
    fn pause(&mut self) {
        let postmaster = self.postmaster();
        signal(&[postmaster], "-STOP");
        self.paused = true;
        let children = children(postmaster);
        if !children.is_empty() {
            signal(&children, "-STOP");
        }
    }
    fn resume(&mut self) {
        if std::mem::take(&mut self.paused) {
            let postmaster = self.postmaster();
            let mut all = children(postmaster);
            all.push(postmaster);
            signal(&all, "-CONT");
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.resume();
        let data = self.dir.join("data");
        let _ = self.command("pg_ctl").arg("-D").arg(data).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub struct Mariadb {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    paused: bool,
}

impl Mariadb {
    pub fn new() -> Option<Self> {
        let bin = tool(&[PathBuf::from("/usr/sbin/mariadbd"), PathBuf::from("/usr/bin/mariadbd")])?;
        let install = tool(&[
            PathBuf::from("/usr/bin/mariadb-install-db"),
            PathBuf::from("/usr/bin/mysql_install_db"),
        ])?;
        let dir = temp_dir("mariadb");
        let user = if is_root() { "--user=root".to_owned() } else { String::new() };
        let mut cmd = Command::new(install);
        // A private tmpdir: concurrent bootstraps sharing /tmp collide on their
        // `#sql-temptable-*` files ("Unknown table 'mysql.tmp_user_sys'").
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        cmd.arg("--no-defaults").arg(format!("--datadir={}", dir.join("data").display()));
        cmd.arg(format!("--tmpdir={}", tmp.display()));
        cmd.args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
        if !user.is_empty() {
            cmd.arg(&user);
        }
        run(&mut cmd);
        let mut db = Mariadb { bin, dir, port: free_port(), child: None, paused: false };
        db.start();
        Some(db)
    }
}

impl Instance for Mariadb {
    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/mysql", self.port)
    }
    fn stop(&mut self) {
        self.resume();
        if let Some(mut child) = self.child.take() {
            terminate(&mut child);
        }
    }
    fn pause(&mut self) {
        signal(&[self.child.as_ref().expect("the server runs").id()], "-STOP");
        self.paused = true;
    }
    fn resume(&mut self) {
        if std::mem::take(&mut self.paused) {
            signal(&[self.child.as_ref().expect("the server runs").id()], "-CONT");
        }
    }
    fn start(&mut self) {
        let d = |name: &str| self.dir.join(name).display().to_string();
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", d("data")))
            .arg(format!("--tmpdir={}", d("tmp")))
            .arg(format!("--port={}", self.port))
            .arg(format!("--socket={}", d("mysqld.sock")))
            .arg(format!("--pid-file={}", d("mysqld.pid")))
            .arg(format!("--log-error={}", d("error.log")))
            .args(["--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin"])
            .args(["--innodb-buffer-pool-size=16M", "--innodb-flush-log-at-trx-commit=0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if is_root() {
            cmd.arg("--user=root");
        }
        let mut child = cmd.spawn().expect("mariadbd starts");
        wait_for_port(&mut child, self.port, Some(&self.dir.join("error.log")));
        self.child = Some(child);
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub struct Redis {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    paused: bool,
}

impl Redis {
    pub fn new() -> Option<Self> {
        let bin =
            tool(&[PathBuf::from("/usr/bin/redis-server"), PathBuf::from("/usr/local/bin/redis-server")])?;
        let mut r = Redis { bin, dir: temp_dir("redis"), port: free_port(), child: None, paused: false };
        r.start();
        Some(r)
    }
}

impl Instance for Redis {
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
    fn stop(&mut self) {
        self.resume();
        if let Some(mut child) = self.child.take() {
            terminate(&mut child);
        }
    }
    fn pause(&mut self) {
        signal(&[self.child.as_ref().expect("the server runs").id()], "-STOP");
        self.paused = true;
    }
    fn resume(&mut self) {
        if std::mem::take(&mut self.paused) {
            signal(&[self.child.as_ref().expect("the server runs").id()], "-CONT");
        }
    }
    fn start(&mut self) {
        let mut child = Command::new(&self.bin)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        wait_for_port(&mut child, self.port, None);
        self.child = Some(child);
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
