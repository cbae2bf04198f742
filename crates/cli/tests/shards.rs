//! Beyond one machine, proven without a cluster:
//!
//! - three shards of one load on three "hosts" (network namespaces joined by a
//!   bridge, addresses from 198.18.0.0/15, the range set aside for benchmarks),
//!   the target on a fourth: the merge's count is the sum, its percentiles are
//!   those of one histogram Python's `hdrhistogram` builds from the shards'
//!   interval logs, a threshold that every shard passes fails on the whole,
//!   and the shards start within 100 ms of each other;
//! - the Kubernetes manifest of `stackbench k8s load` is valid against the API
//!   schemas (`kubernetes-validate`, PyPI), and its pods' command line, run
//!   here for each completion index, makes shards whose logs merge; the files
//!   the load names reach the pods in the manifest's Secret (mutual TLS);
//! - shards on a real engine, Docker in swarm mode, from the image
//!   `image/build.sh` makes (`swarm`).
//!
//! Each needs something a plain user may lack (root and `ip`; the validator
//! named by `STACKBENCH_TEST_K8S_VALIDATE` and the Python of
//! `STACKBENCH_TEST_HDRH_PYTHON`; a running `dockerd` that manages a swarm):
//! without it the test skips visibly, and under `CI=true` (where `.ci/run`
//! provides all of them) it fails.

mod swarm;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use stackbench_testkit::contestants::contestant;
use stackbench_testkit::process::Server;
use stackbench_testkit::{in_ci, skip};

const STACKBENCH: &str = env!("CARGO_BIN_EXE_stackbench");

/// The `dummy` contestant, built beside `stackbench`.
fn sb_dummy() -> String {
    contestant(STACKBENCH, "sb-dummy").display().to_string()
}

/// `Some(value)` of an environment variable, or a skip (a failure under CI).
fn tool(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Some(v),
        _ => {
            assert!(!in_ci(), "{var} is not set, and CI=true: .ci/run provides {what}");
            skip(&format!("{var} is not set; point it at {what}"));
            None
        }
    }
}

/// One load of these tests at a time: each checks rates and starts that a second load on the
/// same cores would disturb.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOADS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOADS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("sb-shards-{name}-")).tempdir().unwrap()
}

fn record(path: &Path) -> serde_json::Value {
    stackbench_testkit::record::record_file(path)
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
}

/// Network namespaces on one bridge; every one is deleted on drop (with its veth).
struct Lab {
    hub: String,
    hosts: Vec<String>,
}

impl Lab {
    fn ip(args: &[&str]) {
        run_ok(Command::new("ip").args(args));
    }

    fn new() -> Option<Lab> {
        let has_ip = Command::new("ip").arg("-V").output().is_ok_and(|o| o.status.success());
        if !is_root() || !has_ip {
            assert!(!in_ci(), "CI=true: this test needs root and iproute2 to make network namespaces");
            skip("needs root and iproute2 (ip netns) to make hosts of network namespaces");
            return None;
        }
        let hub = format!("sbt{}-hub", std::process::id());
        Lab::ip(&["netns", "add", &hub]);
        let lab = Lab { hub, hosts: Vec::new() };
        Lab::ip(&["-n", &lab.hub, "link", "add", "br0", "type", "bridge"]);
        Lab::ip(&["-n", &lab.hub, "link", "set", "br0", "up"]);
        Some(lab)
    }

    /// A host with `addr` (in 198.18.0.0/24) on the bridge; returns its namespace.
    fn host(&mut self, addr: &str) -> String {
        assert!(addr.starts_with("198.18."), "benchmark addresses only");
        let ns = format!("sbt{}-h{}", std::process::id(), self.hosts.len());
        let veth = format!("v{}x{}", std::process::id() % 1_000_000, self.hosts.len());
        Lab::ip(&["netns", "add", &ns]);
        self.hosts.push(ns.clone());
        Lab::ip(&[
            "-n", &self.hub, "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
        ]);
        Lab::ip(&["-n", &self.hub, "link", "set", &veth, "master", "br0"]);
        Lab::ip(&["-n", &self.hub, "link", "set", &veth, "up"]);
        Lab::ip(&["-n", &ns, "addr", "add", &format!("{addr}/24"), "dev", "eth0"]);
        Lab::ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        Lab::ip(&["-n", &ns, "link", "set", "lo", "up"]);
        ns
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in self.hosts.iter().chain(std::iter::once(&self.hub)) {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Python's `hdrhistogram` adding up interval logs ([`stackbench_testkit::hdrh`]).
const UNION: &str = stackbench_testkit::hdrh::UNION;

#[test]
fn three_shards_on_three_hosts_merge_exactly() {
    let Some(python) = tool("STACKBENCH_TEST_HDRH_PYTHON", "a python with `pip install hdrhistogram`") else {
        return;
    };
    let (_alone, Some(mut lab)) = (one_at_a_time(), Lab::new()) else { return };
    let target = lab.host("198.18.0.1");
    let generators: Vec<String> = (1..=3).map(|i| lab.host(&format!("198.18.0.1{i}"))).collect();
    let server = Server::start(
        Command::new("ip").args(["netns", "exec", &target, &sb_dummy(), "--stack", "hyper"]).args([
            "--bind",
            "198.18.0.1",
            "--port",
            "0",
        ]),
    );
    let url = format!("http://{}/events", server.addr);
    let tmp = scratch("netns");
    let dir = tmp.path();
    let start_at = SystemTime::now() + Duration::from_millis(1500);
    let start_text = unix_ms(start_at).to_string();
    let shards: Vec<_> = generators
        .iter()
        .enumerate()
        .map(|(k, ns)| {
            let i = k + 1;
            Command::new("ip")
                .args(["netns", "exec", ns, STACKBENCH, "load", &url, "--scenario", "dummy"])
                .args(["--rate", "1500", "-d", "3s", "--threads", "1", "--quiet"])
                .args(["--shard", &format!("{i}/3"), "--start-at", &start_text])
                .args(["--threshold", "rps<800", "--threshold", "p99<1s"])
                .arg("--json")
                .arg(dir.join(format!("s{i}.json")))
                .arg("--hlog")
                .arg(dir.join(format!("s{i}.hlog")))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (k, child) in shards.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "shard {} (each passes its thresholds alone): {}{}",
            k + 1,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let records: Vec<serde_json::Value> = (1..=3).map(|i| record(&dir.join(format!("s{i}.json")))).collect();
    let starts: Vec<u64> = records.iter().map(|r| r["started_at_ms"].as_u64().unwrap()).collect();
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(spread <= 100, "shards started {spread} ms apart: {starts:?}");
    assert!(*starts.iter().min().unwrap() + 50 >= unix_ms(start_at), "a shard began before --start-at");
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r["params"]["extra"]["shard"], format!("{}/3", k + 1));
        assert_eq!(r["summary"]["errors"], 0, "{r}");
        assert!(r["timeline"][0]["at_ms"].is_u64() && r["timeline"][0]["histogram"].is_string());
    }

    let merged_path = dir.join("merged.json");
    let out = Command::new(STACKBENCH)
        .arg("merge")
        .args((1..=3).map(|i| dir.join(format!("s{i}.json"))))
        .arg("--json")
        .arg(&merged_path)
        .arg("--hlog")
        .arg(dir.join("merged.hlog"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(99), "rps<800 holds on each shard, not on the whole: {text}");
    assert!(text.contains("rps<800"), "{text}");
    let m = record(&merged_path);
    let sum: u64 = records.iter().map(|r| r["summary"]["requests"].as_u64().unwrap()).sum();
    assert_eq!(m["summary"]["requests"], sum);
    assert!(sum >= 4000, "1500/s for 3 s: {sum}");
    let p99 = m["thresholds"].as_array().unwrap().iter().find(|t| t["expression"] == "p99<1s").unwrap();
    assert_eq!(p99["passed"], true);

    let hlogs: Vec<PathBuf> = (1..=3).map(|i| dir.join(format!("s{i}.hlog"))).collect();
    let py = run_ok(Command::new(&python).arg("-c").arg(UNION).args(&hlogs));
    let theirs: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    let l = &m["summary"]["latency"];
    assert_eq!(theirs["count"], l["count"], "python {theirs}, merge {l}");
    assert_eq!(theirs["p50"], l["p50_us"], "python {theirs}, merge {l}");
    assert_eq!(theirs["p99"], l["p99_us"], "python {theirs}, merge {l}");
    assert_eq!(theirs["max"], l["max_us"], "python {theirs}, merge {l}");
    // Bucket for bucket: Python's union, encoded by Python, is the merged histogram.
    let buckets = |h: &hdrhistogram::Histogram<u64>| {
        h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
    };
    let python_union = stackbench_record::decode_histogram(theirs["encoded"].as_str().unwrap()).unwrap();
    let merged = stackbench_record::decode_histogram(m["histogram"].as_str().unwrap()).unwrap();
    assert_eq!(buckets(&python_union), buckets(&merged));
    // The merged interval log is the same union, read by Python too.
    let again = run_ok(Command::new(&python).arg("-c").arg(UNION).arg(dir.join("merged.hlog")));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        (&again["count"], &again["p99"], &again["max"]),
        (&theirs["count"], &theirs["p99"], &theirs["max"])
    );
    drop(server);
    drop(lab);
}

/// The shell command of a `k8s load` manifest's pods.
fn pods_command(manifest: &str) -> String {
    let line = manifest.lines().find(|l| l.trim_start().starts_with("command:")).unwrap();
    let list: Vec<String> =
        serde_json::from_str(line.trim_start().trim_start_matches("command:").trim()).unwrap();
    assert_eq!(list[..2], ["sh", "-c"]);
    list[2].clone()
}

/// Runs `command` as `n` pods' shells run it (JOB_COMPLETION_INDEX set by the Job), in `cwd`,
/// and asserts that each succeeded.
fn run_pods(command: &str, n: usize, cwd: Option<&Path>) -> Vec<Output> {
    let bin_dir = Path::new(STACKBENCH).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let pods: Vec<_> = (0..n)
        .map(|index| {
            let mut sh = Command::new("sh");
            if let Some(dir) = cwd {
                sh.current_dir(dir);
            }
            sh.args(["-c", command])
                .env("JOB_COMPLETION_INDEX", index.to_string())
                .env("PATH", &path)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = pods.into_iter().map(|pod| pod.wait_with_output().unwrap()).collect();
    for out in &outs {
        assert!(out.status.success(), "a pod's shard: {}", String::from_utf8_lossy(&out.stderr));
    }
    outs
}

#[test]
fn the_k8s_manifest_is_valid_and_its_pods_command_makes_shards_that_merge() {
    let Some(validate) =
        tool("STACKBENCH_TEST_K8S_VALIDATE", "the kubernetes-validate of `pip install kubernetes-validate`")
    else {
        return;
    };
    let _alone = one_at_a_time();
    let server = Server::start(Command::new(sb_dummy()).args(["--port", "0"]));
    let url = format!("http://{}/events", server.addr);
    let tmp = scratch("k8s");
    let dir = tmp.path();
    let out = run_ok(
        Command::new(STACKBENCH)
            .args(["k8s", "load", &url, "--scenario", "dummy", "-c", "6", "-d", "2s"])
            .args(["--shards", "3", "--image", "registry.example/stackbench:0.1", "--namespace", "bench"])
            .args(["--start-in", "2s", "--threshold", "p99<2s", "--pod-cpus", "1"]),
    );
    let manifest = String::from_utf8(out.stdout).unwrap();
    let file = dir.join("job.yaml");
    std::fs::write(&file, &manifest).unwrap();
    let v = Command::new(&validate).arg("--strict").arg(&file).output().unwrap();
    assert!(
        v.status.success(),
        "kubernetes-validate: {}{}\n{manifest}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );

    // What `kubectl logs` gives: each pod's stderr (its summary) and stdout (its record) together.
    let mut logs = Vec::new();
    for out in run_pods(&pods_command(&manifest), 3, None) {
        logs.extend_from_slice(&out.stderr);
        logs.extend_from_slice(&out.stdout);
    }
    let merge_line = manifest.lines().find(|l| l.contains("| stackbench merge")).unwrap();
    assert!(merge_line.contains("--threshold 'p99<2s'"), "{merge_line}");
    let mut merge = Command::new(STACKBENCH)
        .args(["merge", "--threshold", "p99<2s", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut merge.stdin.take().unwrap(), &logs).unwrap();
    let out = merge.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("merged        3 records"), "{stderr}");
    assert!(!stderr.contains("warning:"), "the pods' shards are one load, started together: {stderr}");
    let m = stackbench_testkit::record::record_json(&out.stdout);
    assert_eq!(m["params"]["model"]["connections"], 6, "{}", m["params"]);
    assert_eq!(m["thresholds"][0]["passed"], true);
    drop(server);
}

#[test]
fn the_k8s_manifest_carries_the_loads_files_to_its_pods() {
    use base64::Engine as _;
    use stackbench_testkit::tls::{Certs, Leaf, Options, TlsServer};
    let Some(validate) =
        tool("STACKBENCH_TEST_K8S_VALIDATE", "the kubernetes-validate of `pip install kubernetes-validate`")
    else {
        return;
    };
    let _alone = one_at_a_time();
    let tmp = scratch("k8s-files");
    let dir = tmp.path();
    // A server that asks for a client certificate: the pods need the CA, the certificate and
    // its key, and the scenario file.
    let certs = Certs::new(&dir.join("tls"), &["localhost"], Leaf::Valid);
    let server = TlsServer::start(&certs, &Options { client_auth: true, ..Options::default() });
    std::fs::write(dir.join("one.hurl"), "GET {{base_url}}/a\nHTTP 200\n").unwrap();
    let out = run_ok(
        Command::new(STACKBENCH)
            .current_dir(dir)
            .args(["k8s", "load", &server.url("localhost", "/"), "--scenario-file", "one.hurl"])
            .args(["--cacert", "tls/ca.pem", "--cert", "tls/client.pem", "--key", "tls/client-key.pem"])
            .args(["-c", "2", "-d", "1s", "--shards", "2", "--image", "registry.example/stackbench:0.1"])
            .args(["--start-in", "2s", "--pod-cpus", "1"]),
    );
    let manifest = String::from_utf8(out.stdout).unwrap();
    let file = dir.join("job.yaml");
    std::fs::write(&file, &manifest).unwrap();
    let v = Command::new(&validate).arg("--strict").arg(&file).output().unwrap();
    let said = String::from_utf8_lossy(&v.stdout).into_owned() + &String::from_utf8_lossy(&v.stderr);
    assert!(v.status.success() && said.contains("secret/stackbench-load-files"), "{said}\n{manifest}");

    // What the kubelet does: the Secret's files in a directory, which stands for the mount.
    let mount = dir.join("mount");
    std::fs::create_dir_all(&mount).unwrap();
    let secret = manifest.split("---").next().unwrap();
    let data = secret.split("\ndata:\n").nth(1).expect("the Secret's data");
    for line in data.lines() {
        let (key, value) = line.trim().split_once(": ").unwrap();
        let (key, value): (String, String) =
            (serde_json::from_str(key).unwrap(), serde_json::from_str(value).unwrap());
        let bytes = base64::engine::general_purpose::STANDARD.decode(value).unwrap();
        std::fs::write(mount.join(key), bytes).unwrap();
    }
    assert!(manifest.contains("mountPath: \"/stackbench/files\""), "{manifest}");
    let command = pods_command(&manifest).replace("/stackbench/files", &mount.display().to_string());
    // In `/`: the pods have none of the files where the manifest was printed.
    for out in run_pods(&command, 2, Some(Path::new("/"))) {
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(rec["summary"]["requests"].as_u64().unwrap() > 0, "{}", rec["summary"]);
        assert_eq!(rec["summary"]["errors"], 0, "{}", rec["errors"]);
        let verified = rec["connections"]["tls"]["verified_by"].as_str().unwrap_or_default();
        assert!(verified.starts_with("--cacert") && verified.ends_with("f1-ca.pem"), "{verified}");
    }
    // Each connection showed the client certificate (else its handshake fails).
    assert!(server.stats.handshakes.load(std::sync::atomic::Ordering::Relaxed) >= 4);
    drop(server);
}
