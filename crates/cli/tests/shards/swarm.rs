//! Shards on a real engine: Debian's docker.io in swarm mode (`.ci/services`
//! starts `dockerd --bridge=none --iptables=false` and makes a single-node
//! swarm on 127.0.0.1), the image built once by `image/build.sh` from this
//! build's binary, every container on the host's network, the target a
//! server on this machine. `stackbench swarm load --run` with 2 and 3 shards,
//! open and closed model, one of them with a shard killed mid-run; the
//! printed script run by `sh`; the same load rendered for Kubernetes and
//! validated. Every case checks that its services and containers are gone.

use std::thread;
use std::time::Instant;

use super::*;

const BUILD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../image/build.sh");

/// The test image; on drop, every service whose name starts with `prefix` and the image go.
struct Lab {
    image: String,
    prefix: String,
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let prefix = format!("sbt{}", std::process::id());
        let image = format!("stackbench-test:{}", std::process::id());
        let lab = Lab { image, prefix, dir: scratch("swarm") };
        let out = run_ok(Command::new(BUILD).args(["--binary", STACKBENCH, &lab.image]));
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(line.starts_with(&lab.image), "image/build.sh prints the tag and the size: {line}");
        lab
    }

    fn services(&self) -> Vec<String> {
        let out = run_ok(Command::new("docker").args(["service", "ls", "--format", "{{.Name}}"]));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|n| n.starts_with(&self.prefix))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let left = self.services();
        if !left.is_empty() {
            let _ = Command::new("docker").args(["service", "rm"]).args(&left).output();
        }
        for _ in 0..60 {
            if containers(&self.prefix).is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(500));
        }
        let _ = Command::new("docker").args(["rmi", "-f", &self.image]).output();
    }
}

/// This node's containers of services whose names start with `prefix`.
fn containers(prefix: &str) -> Vec<String> {
    let out = run_ok(Command::new("docker").args(["ps", "-a", "--format", "{{.Names}}"]));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|n| n.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

fn swarm_manager() -> bool {
    Command::new("docker")
        .args(["info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}"])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "active true")
}

/// One `stackbench swarm load --run`, and what it left: its output, the shards' records and the merge.
struct Case {
    out: Output,
    shards: Vec<serde_json::Value>,
    merged: serde_json::Value,
}

fn swarm_load(lab: &Lab, case: &str, url: &str, load: &[&str], shards: u32, kill: Option<u32>) -> Case {
    let name = format!("{}-{case}", lab.prefix);
    let records = lab.dir.path().join(case);
    let began = Instant::now();
    let child = Command::new(STACKBENCH)
        .args(["swarm", "load", url, "--scenario", "dummy", "--threads", "1"])
        .args(load)
        .args(["--shards", &shards.to_string(), "--image", &lab.image, "--name", &name, "--start-in", "3s"])
        .args(["--run", "--json", "-", "--shard-records"])
        .arg(&records)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(k) = kill {
        // The shard's container, once it runs; killed 1.5 s into the load (which starts 3 s after the spawn).
        let service = format!("com.docker.swarm.service.name={name}-{k}");
        let id = loop {
            let out =
                run_ok(Command::new("docker").args(["ps", "-q", "--filter", &format!("label={service}")]));
            let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if !id.is_empty() {
                break id;
            }
            assert!(began.elapsed() < Duration::from_secs(20), "shard {k}'s container never ran");
            thread::sleep(Duration::from_millis(100));
        };
        thread::sleep(Duration::from_millis(4500).saturating_sub(began.elapsed()));
        run_ok(Command::new("docker").args(["kill", &id]));
    }
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    eprintln!("{case}: {} s", began.elapsed().as_secs_f64());
    assert!(!said.contains("missing") || kill.is_some(), "{case}: {said}");
    assert!(lab.services().iter().all(|s| !s.starts_with(&name)), "{case}: its services are removed");
    assert!(containers(&name).is_empty(), "{case}: its containers are removed: {:?}", containers(&name));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&records).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let merged = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{case}: no merged record ({e}): {}", String::from_utf8_lossy(&out.stderr))
    });
    stackbench_testkit::record::assert_valid_record(&merged);
    Case { out, shards: files.iter().map(|f| record(f)).collect(), merged }
}

/// The merge is the sum of the shards it was given.
fn assert_sums(case: &str, c: &Case) {
    for at in ["/summary/requests", "/summary/ok", "/summary/errors", "/summary/latency/count"] {
        let value = |r: &serde_json::Value| r.pointer(at).and_then(serde_json::Value::as_u64).unwrap();
        let shards: u64 = c.shards.iter().map(value).sum();
        assert_eq!(value(&c.merged), shards, "{case}: {at}: {}", c.merged["summary"]);
    }
}

fn stderr(c: &Case) -> String {
    String::from_utf8_lossy(&c.out.stderr).into_owned()
}

#[test]
fn shards_run_on_a_docker_swarm_and_merge() {
    if !swarm_manager() {
        assert!(!in_ci(), "CI=true and no swarm manager answers: .ci/services starts dockerd and a swarm");
        skip(
            "no swarm (dockerd --bridge=none --iptables=false; docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377)",
        );
        return;
    }
    let validate =
        tool("STACKBENCH_TEST_K8S_VALIDATE", "the kubernetes-validate of `pip install kubernetes-validate`");
    // Held until the lab is cleared away too.
    let _alone = one_at_a_time();
    let lab = Lab::new();
    let server = Server::start(Command::new(sb_dummy()).args(["--port", "0"]));
    let url = format!("http://{}/events", server.addr);
    image_runs_as_nobody_on_the_hosts_network(&lab, &url);

    let open: &[&str] = &["--rate", "300", "-d", "3s", "--threshold", "p99<2s"];
    // Alone, since it checks the rate; then the others together.
    let open2 = swarm_load(&lab, "open2", &url, open, 2, None);
    let (closed3, killed, script) = thread::scope(|s| {
        let closed = &["-c", "6", "-d", "2s", "--threshold", "rps<1"];
        let closed3 = s.spawn(|| swarm_load(&lab, "closed3", &url, closed, 3, None));
        let killed = s.spawn(|| swarm_load(&lab, "kill3", &url, &["--rate", "300", "-d", "4s"], 3, Some(2)));
        let script = s.spawn(|| printed_script(&lab, &url));
        (closed3.join().unwrap(), killed.join().unwrap(), script.join().unwrap())
    });

    // Open model, 2 shards: the rate asked, the sum of the shards, the threshold on the whole.
    assert_eq!(open2.out.status.code(), Some(0), "{}", stderr(&open2));
    assert_eq!(open2.shards.len(), 2);
    assert_sums("open2", &open2);
    let m = &open2.merged;
    assert_eq!(m["params"]["model"]["rate"], 300.0, "{}", m["params"]);
    let requests = m["summary"]["requests"].as_u64().unwrap();
    // Those still under way at the end are in no count, only in each shard's last in_flight.
    let unfinished: u64 =
        open2.shards.iter().filter_map(|r| r["timeline"].as_array()?.last()?["in_flight"].as_u64()).sum();
    assert!(
        (900 - 2..=900).contains(&(requests + unfinished)),
        "300/s for 3 s, as one generator would send: {requests} and {unfinished} unfinished"
    );
    // The rate is over the 3 s window, of what was answered in it (a busy machine leaves more
    // under way at the end: the rate sent is held by the counts above and below).
    let rps = m["summary"]["rps"].as_f64().unwrap();
    assert!(
        (rps * 3.0 - requests as f64).abs() <= 0.02 * requests as f64,
        "the merged rate: {rps}, {requests}"
    );
    let sent = |r: &serde_json::Value| {
        r["summary"]["requests"].as_u64().unwrap()
            + r["timeline"].as_array().unwrap().last().unwrap()["in_flight"].as_u64().unwrap()
    };
    let each: Vec<u64> = open2.shards.iter().map(sent).collect();
    assert!(each.iter().all(|n| n.abs_diff(450) <= 15), "each shard sends half: {each:?}");
    assert_eq!(m["thresholds"][0]["passed"], true, "{}", m["thresholds"]);
    assert!(stderr(&open2).contains("merged        2 records"), "{}", stderr(&open2));

    // Closed model, 3 shards: the users add up; a threshold that fails on the whole exits 99.
    assert_eq!(closed3.out.status.code(), Some(99), "rps<1 fails on the whole: {}", stderr(&closed3));
    assert_eq!(closed3.shards.len(), 3);
    assert_sums("closed3", &closed3);
    assert_eq!(closed3.merged["params"]["model"]["connections"], 6, "{}", closed3.merged["params"]);
    assert_eq!(closed3.merged["summary"]["errors"], 0);

    // A shard killed mid-run: named, not rerun, the merge is the rest and is not a result.
    let said = stderr(&killed);
    assert_eq!(killed.out.status.code(), Some(70), "{said}");
    assert!(said.contains(&format!("shard 2/3 ({}-kill3-2) failed on", lab.prefix)), "{said}");
    assert!(said.contains("non-zero exit (137)"), "{said}");
    assert!(said.contains("warning: shard 2/3 missing"), "{said}");
    assert_eq!(killed.merged["invalid"]["kind"], "missing_shard", "{}", killed.merged["invalid"]);
    assert_eq!(killed.shards.len(), 2, "the shards that finished");
    assert_sums("kill3", &killed);

    assert!(script.contains("merged        2 records"), "{script}");

    // The same load for Kubernetes still validates against the API schemas.
    if let Some(validate) = validate {
        let out = run_ok(
            Command::new(STACKBENCH)
                .args(["k8s", "load", &url, "--scenario", "dummy", "--threads", "1"])
                .args(open)
                .args(["--shards", "2", "--image", &lab.image]),
        );
        let file = lab.dir.path().join("job.yaml");
        std::fs::write(&file, &out.stdout).unwrap();
        run_ok(Command::new(&validate).arg("--strict").arg(&file));
    }
    drop(server);
}

/// The image as both engines run it: its entrypoint, `sh -c` with stackbench on PATH (the
/// Kubernetes Job's command), user nobody, and a load of a server on the host's loopback.
fn image_runs_as_nobody_on_the_hosts_network(lab: &Lab, url: &str) {
    let user =
        run_ok(Command::new("docker").args(["image", "inspect", "--format", "{{.Config.User}}", &lab.image]));
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "65534:65534");
    let out = run_ok(
        Command::new("docker")
            .args(["run", "--rm", "--network", "host", "--entrypoint", "sh", &lab.image, "-c"])
            .arg(format!("exec stackbench load {url} --scenario dummy -c 4 -d 1s --json - --quiet")),
    );
    let r = stackbench_testkit::record::record_json(&out.stdout);
    assert!(r["summary"]["ok"].as_u64().unwrap() > 100, "{}", r["summary"]);
    assert_eq!(r["summary"]["errors"], 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("stackbench load"), "the summary goes to stderr");
}

/// `stackbench swarm load` without --run: its script, run by `sh`, creates, waits, merges, removes.
fn printed_script(lab: &Lab, url: &str) -> String {
    let name = format!("{}-script", lab.prefix);
    let out = run_ok(
        Command::new(STACKBENCH)
            .args(["swarm", "load", url, "--scenario", "dummy", "-c", "4", "-d", "2s", "--threads", "1"])
            .args(["--shards", "2", "--image", &lab.image, "--name", &name, "--start-in", "3s"]),
    );
    let script = String::from_utf8(out.stdout).unwrap();
    let bin_dir = Path::new(STACKBENCH).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let ran = Command::new("sh").arg("-c").arg(&script).env("PATH", path).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&ran.stdout), String::from_utf8_lossy(&ran.stderr));
    assert!(ran.status.success(), "{script}\n{said}");
    assert!(lab.services().iter().all(|s| !s.starts_with(&name)), "the script removes its services");
    let began = Instant::now();
    while !containers(&name).is_empty() {
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "the script's containers stay: {:?}",
            containers(&name)
        );
        thread::sleep(Duration::from_millis(200));
    }
    said
}
