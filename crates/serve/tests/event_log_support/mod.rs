//! Shared by the `event-log`/`dummy` process tests: start a slim contestant
//! binary on a free port and read its address from the first stdout line, kill
//! it (SIGTERM or SIGKILL), and drive load from a few client threads while
//! counting the answers by status.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use stackbench_testkit::{http, process};

/// A running contestant; killed (SIGKILL) when dropped.
pub struct Server {
    pub process: process::Server,
    pub addr: SocketAddr,
    /// Every stdout line printed before the address was read (the first is the address line).
    pub banner: Vec<String>,
}

/// Starts `binary` with `args` and `--port 0`.
pub fn start(binary: &str, args: &[&str]) -> Server {
    try_start(binary, args).unwrap_or_else(|e| panic!("{binary} {args:?} did not start: {e}"))
}

/// Starts `binary`; `Err` carries its stderr when it exits instead of listening.
pub fn try_start(binary: &str, args: &[&str]) -> Result<Server, String> {
    let mut process = process::Server::try_start(Command::new(binary).args(args).args(["--port", "0"]))?;
    // The store's note follows at once when there is one; do not wait for more.
    if args.iter().any(|a| a.starts_with("--store")) || binary.ends_with("sb-event-log") {
        process.read_line();
    }
    Ok(Server { addr: process.addr, banner: process.lines.clone(), process })
}

impl Server {
    pub fn post(&self, body: &str) -> http::Response {
        http::post_json(self.addr, "/events", body).expect("the server answers")
    }

    /// `GET /events/count` as a number (panics on anything else).
    pub fn count(&self) -> u64 {
        let r = http::get(self.addr, "/events/count").expect("the server answers");
        assert_eq!(r.status, 200, "{}", r.text());
        count_of(&r)
    }

    pub fn signal(&self, sig: &str) {
        self.process.signal(sig);
    }

    /// SIGTERM, then waits (10 s at most) and returns whether it exited 0.
    pub fn terminate(mut self) -> bool {
        self.process.terminate().success()
    }

    /// SIGKILL, and reap.
    pub fn kill(self) {
        drop(self);
    }
}

/// The N of a `{"count":N}` body.
pub fn count_of(r: &http::Response) -> u64 {
    let v: serde_json::Value =
        serde_json::from_slice(&r.body).unwrap_or_else(|_| panic!("not JSON: {}", r.text()));
    v["count"].as_u64().unwrap_or_else(|| panic!("no count in {}", r.text()))
}

/// The `error` of a JSON error body.
pub fn error_of(r: &http::Response) -> String {
    let v: serde_json::Value =
        serde_json::from_slice(&r.body).unwrap_or_else(|_| panic!("not JSON: {}", r.text()));
    v["error"].as_str().unwrap_or_else(|| panic!("no error in {}", r.text())).to_owned()
}

/// Answers received by [`Load`], by kind.
#[derive(Debug, Default)]
pub struct Tally {
    pub ok: AtomicU64,
    pub unavailable: AtomicU64,
    /// Connection refused/reset, timeouts: the server was down or dying.
    pub io_errors: AtomicU64,
    /// Any other status: always a bug.
    pub other: AtomicU64,
}

impl Tally {
    pub fn ok(&self) -> u64 {
        self.ok.load(Ordering::SeqCst)
    }
}

/// `threads` clients posting events in a loop until stopped (or `limit`).
pub struct Load {
    pub tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    pub fn start(addr: SocketAddr, threads: usize, limit: Duration) -> Load {
        let tally = Arc::new(Tally::default());
        let stop = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + limit;
        let threads = (0..threads)
            .map(|t| {
                let (tally, stop) = (tally.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut i = 0u64;
                    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                        i += 1;
                        let body = format!(r#"{{"type":"load","source":"t{t}","value":{i}}}"#);
                        match http::post_json(addr, "/events", &body) {
                            Ok(r) if r.status == 200 => tally.ok.fetch_add(1, Ordering::SeqCst),
                            Ok(r) if r.status == 503 => {
                                assert!(!error_of(&r).is_empty());
                                std::thread::sleep(Duration::from_millis(20));
                                tally.unavailable.fetch_add(1, Ordering::SeqCst)
                            }
                            Ok(r) => {
                                eprintln!("unexpected answer {}: {}", r.status, r.text());
                                tally.other.fetch_add(1, Ordering::SeqCst)
                            }
                            Err(_) => {
                                std::thread::sleep(Duration::from_millis(20));
                                tally.io_errors.fetch_add(1, Ordering::SeqCst)
                            }
                        };
                    }
                })
            })
            .collect();
        Load { tally, stop, threads }
    }

    /// Stops the clients and returns the tally.
    pub fn stop(self) -> Arc<Tally> {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().expect("a load thread panicked");
        }
        self.tally
    }
}

/// Waits until `ok` reaches `n` (or panics after `limit`).
pub fn wait_for_acks(tally: &Tally, n: u64, limit: Duration) {
    let deadline = Instant::now() + limit;
    while tally.ok() < n {
        assert!(Instant::now() < deadline, "fewer than {n} events acknowledged within {limit:?}: {tally:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A fresh temporary directory for one test, removed when dropped.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("stackbench-eventlog-{name}-")).tempdir().unwrap()
}

/// Kills the server mid-load, restarts it on the same store, and checks that
/// every acknowledged event is still there (the contract's durability rule).
pub fn sigkill_loses_nothing(binary: &str, store: &str, stack: &str) {
    let args = ["--store", store, "--stack", stack];
    let server = start(binary, &[&args[..], &["--reset"]].concat());
    let load = Load::start(server.addr, 8, Duration::from_secs(30));
    wait_for_acks(&load.tally, 200, Duration::from_secs(20));
    server.kill();
    let tally = load.stop();
    let acked = tally.ok();
    assert_eq!(tally.other.load(Ordering::SeqCst), 0, "{tally:?}");
    let server = start(binary, &args);
    let stored = server.count();
    assert!(stored >= acked, "{store}: {acked} events were acknowledged before SIGKILL, {stored} are stored");
    eprintln!("{store} on {stack}: {acked} acknowledged before SIGKILL, {stored} stored after restart");
    assert!(server.terminate(), "SIGTERM is a clean stop");
}
