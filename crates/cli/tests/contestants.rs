//! Every contestant in another language (`contestants/*`), and the shipped
//! plans that gather them (`plans/three-kings.toml`, `plans/three-kings-tls.toml`,
//! `plans/bubble.toml`, `plans/db-drivers.toml`), run as CI runs them: `install.sh`, then
//! `stackbench run PLAN --variant test`, which builds, cold-starts, verifies
//! and measures every contestant in the plan. Each must be measured with no
//! failed request and a contract verification whose core rules hold. A shipped
//! plan's test runs `--only` the contestants that no directory's test starts with
//! the same set-up (the others are compared field by field and named in its output).
//!
//! They need PostgreSQL, MariaDB, Redis and InfluxDB (`.ci/services`) and
//! each language's toolchain (the contestant's `install.sh` installs what it
//! can). Without them the tests skip with a visible line; under `CI=true`
//! they fail instead. One plan runs at a time: each pins its contestants to
//! core 0 and its load to core 1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use stackbench_run::{Plan, PlanContext};
use stackbench_testkit::contestants;
use stackbench_testkit::{INFLUXDB, MYSQL, POSTGRES, REDIS, database_url, in_ci, skip};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Every directory under `contestants/`, each with a test below.
const DIRS: [&str; 15] = [
    "elixir-db",
    "elixir-yaws",
    "go-db",
    "go-gin",
    "go-grpc",
    "java-grpc",
    "java-spring",
    "java-vertx",
    "node-db",
    "node-fastify",
    "node-grpc",
    "python-db",
    "python-fastapi",
    "python-flask",
    "python-grpcio",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The databases every plan here uses, or `false` after a skip line.
fn services() -> bool {
    [POSTGRES, MYSQL, REDIS, INFLUXDB].iter().all(|v| database_url(v).is_some())
}

/// Runs a contestant's install.sh; `false` after a skip line when it cannot.
fn install(dir: &str) -> bool {
    let script = root().join("contestants").join(dir).join("install.sh");
    let out = Command::new(&script).output().unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    if out.status.success() {
        return true;
    }
    let why = format!("{dir}/install.sh failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    assert!(!in_ci(), "CI=true: {why}");
    skip(&why);
    false
}

/// `plan` with its test variant.
fn test_variant(plan: &Path) -> Plan {
    Plan::load(plan, &PlanContext { cpus: vec![0, 1], variant: Some("test".into()) })
        .unwrap_or_else(|e| panic!("{e}"))
}

/// What a contestant of `plan` is started, loaded and checked with: everything but its name
/// and the words that describe it, with `{plan_dir}` resolved and paths made plain, and the
/// plan's settings that apply to each of its runs.
fn setups(plan: &Path) -> Vec<(String, impl PartialEq + std::fmt::Debug + use<>)> {
    let loaded = test_variant(plan);
    let dir = plan.parent().unwrap().to_str().unwrap().to_owned();
    let plain = |s: &String| -> String {
        let s = s.replace("{plan_dir}", &dir);
        let mut parts: Vec<&str> = Vec::new();
        for part in s.split('/') {
            match part {
                ".." if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                    parts.pop();
                }
                "." => {}
                _ => parts.push(part),
            }
        }
        parts.join("/")
    };
    let plain_all = |v: &mut Vec<String>| {
        for s in v {
            *s = plain(s);
        }
    };
    let each = (loaded.repetitions, loaded.precision, loaded.seed, loaded.sample_interval, loaded.cooldown);
    loaded
        .contestants
        .into_iter()
        .map(|mut c| {
            let name = std::mem::take(&mut c.name);
            (c.language, c.framework) = (None, None);
            c.profile_spans.clear();
            if let stackbench_run::Launch::Command { argv, env, cwd, .. } = &mut c.launch {
                plain_all(argv);
                for v in env.values_mut() {
                    *v = plain(v);
                }
                *cwd = cwd.as_ref().map(|d| plain(&d.display().to_string()).into());
            }
            for list in [&mut c.reset, &mut c.build, &mut c.source].into_iter().flatten() {
                plain_all(list);
            }
            c.artifact = c.artifact.as_ref().map(plain);
            (name, (c, each))
        })
        .collect()
}

/// The contestants of a shipped `plan` that a contestant directory's test (`dirs`) already
/// starts with the same set-up: the plan's test needs to start only the others.
fn started_by_their_directory(plan: &Path, dirs: &[&str]) -> Vec<String> {
    let theirs: Vec<_> = dirs
        .iter()
        .flat_map(|d| setups(&root().join("contestants").join(d).join("plan.toml")))
        .map(|(_, setup)| setup)
        .collect();
    setups(plan).into_iter().filter(|(_, setup)| theirs.contains(setup)).map(|(name, _)| name).collect()
}

/// `stackbench run PLAN --variant test`: every contestant measured, no error; in a shipped plan
/// that gathers contestant directories, every contestant not already started with the same
/// set-up by its directory's test (those are named; `--only` the others).
fn run_test_variant(plan: &Path, dirs: &[&str]) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !services() || !dirs.iter().all(|d| install(d)) {
        return;
    }
    let is_directory_plan = plan.starts_with(root().join("contestants"));
    let elsewhere = if is_directory_plan { Vec::new() } else { started_by_their_directory(plan, dirs) };
    let mut expected = test_variant(plan);
    expected.contestants.retain(|c| !elsewhere.contains(&c.name));
    assert!(!expected.contestants.is_empty(), "{}: every contestant is started elsewhere", plan.display());
    if !elsewhere.is_empty() {
        eprintln!(
            "{}: started with the same set-up by their directory's test: {}",
            plan.display(),
            elsewhere.join(", ")
        );
    }
    let name = plan.parent().and_then(Path::file_name).unwrap().to_string_lossy().into_owned();
    let scratch = tempfile::Builder::new().prefix(&format!("sb-contestants-{name}-")).tempdir().unwrap();
    let out_dir = scratch.path().join("results");
    // The plans name the Rust contestants and the seeder as `{bin_dir}/sb-…`.
    for name in ["sb-dummy", "sb-event-log", "sb-bubble-sort", "sb-db-read"] {
        contestants::contestant(BIN, name);
    }
    let mut run = Command::new(BIN);
    run.args(["run", plan.to_str().unwrap(), "--variant", "test", "--no-report", "--out"]).arg(&out_dir);
    if !elsewhere.is_empty() {
        for c in &expected.contestants {
            run.args(["--only", &c.name]);
        }
    }
    let out = run.output().unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{}:\n{text}", plan.display());
    let set = stackbench_testkit::record::load_results(&out_dir);
    for c in &expected.contestants {
        let mine = |r: &&stackbench_record::RunRecord| r.label.contestant.as_deref() == Some(c.name.as_str());
        // On a busy machine a 1 s run may complete no request at all: it is not a result
        // (`no_progress`) and that repetition is measured again, which must then succeed.
        let again: Vec<_> = set.runs.iter().filter(mine).filter_map(|r| r.invalid.as_ref()).collect();
        assert!(
            again.iter().all(|i| i.kind == "no_progress"),
            "{}: {}: {again:?}\n{text}",
            plan.display(),
            c.name
        );
        let runs: Vec<_> = set.runs.iter().filter(mine).filter(|r| r.invalid.is_none()).collect();
        assert!(!runs.is_empty(), "{}: {} was not measured:\n{text}", plan.display(), c.name);
        for r in runs {
            assert!(
                r.summary.ok > 0 && r.summary.errors == 0 && r.invalid.is_none(),
                "{}: {}: {:?} {:?}\n{text}",
                plan.display(),
                c.name,
                r.summary,
                r.errors
            );
            // A TLS contestant was loaded over TLS 1.3, and its record says what was agreed.
            let tls = r.connections.as_ref().and_then(|k| k.tls.as_ref());
            if c.launch.scheme() == "https" {
                let tls =
                    tls.unwrap_or_else(|| panic!("{}: {}: no TLS in its record", plan.display(), c.name));
                assert!(
                    tls.version == "TLSv1.3"
                        && tls.key_exchange_group.is_some()
                        && tls.full > 0
                        && tls.failed == 0,
                    "{}: {tls:?}",
                    c.name
                );
            } else {
                assert!(tls.is_none(), "{}: TLS for a cleartext contestant: {tls:?}", c.name);
            }
        }
        let record = set.contestants.iter().find(|r| r.name == c.name).unwrap();
        assert!(record.verification.as_ref().is_some_and(|v| v.passed), "{}: {record:?}", c.name);
        assert!(record.language.is_some(), "{}: no language", c.name);
        if c.artifact.is_some() {
            assert!(
                record.artifact_bytes.unwrap_or(0) > 0,
                "{}: its artifact was measured: {record:?}",
                c.name
            );
        }
    }
}

fn contestant(dir: &str) {
    run_test_variant(&root().join("contestants").join(dir).join("plan.toml"), &[dir]);
}

#[test]
fn every_contestant_directory_is_tested_here() {
    let mut found: Vec<String> = std::fs::read_dir(root().join("contestants"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, DIRS, "add a test for each contestant directory");
}

#[test]
fn elixir_db() {
    contestant("elixir-db");
}
#[test]
fn elixir_yaws() {
    contestant("elixir-yaws");
}
#[test]
fn go_db() {
    contestant("go-db");
}
#[test]
fn go_gin() {
    contestant("go-gin");
}
#[test]
fn go_grpc() {
    contestant("go-grpc");
}
#[test]
fn java_grpc() {
    contestant("java-grpc");
}
#[test]
fn java_spring() {
    contestant("java-spring");
}
#[test]
fn java_vertx() {
    contestant("java-vertx");
}
#[test]
fn node_db() {
    contestant("node-db");
}
#[test]
fn node_fastify() {
    contestant("node-fastify");
}
#[test]
fn node_grpc() {
    contestant("node-grpc");
}
#[test]
fn python_db() {
    contestant("python-db");
}
#[test]
fn python_fastapi() {
    contestant("python-fastapi");
}
#[test]
fn python_flask() {
    contestant("python-flask");
}
#[test]
fn python_grpcio() {
    contestant("python-grpcio");
}

/// The original experiment's comparison: event-log on InfluxDB and dummy, every stack.
#[test]
fn plan_three_kings() {
    run_test_variant(
        &root().join("plans/three-kings.toml"),
        &[
            "python-flask",
            "python-fastapi",
            "go-gin",
            "elixir-yaws",
            "node-fastify",
            "java-vertx",
            "java-spring",
        ],
    );
}

/// What TLS costs each stack: dummy in the clear and over HTTPS for every stack of
/// three kings, a connection (a full handshake) per request; every TLS contestant's
/// record says what its handshakes agreed.
#[test]
fn plan_three_kings_tls() {
    run_test_variant(
        &root().join("plans/three-kings-tls.toml"),
        &[
            "python-flask",
            "python-fastapi",
            "go-gin",
            "elixir-yaws",
            "node-fastify",
            "java-vertx",
            "java-spring",
        ],
    );
}

#[test]
fn plan_bubble() {
    run_test_variant(
        &root().join("plans/bubble.toml"),
        &["go-grpc", "node-grpc", "python-grpcio", "java-grpc"],
    );
}

#[test]
fn plan_db_drivers() {
    run_test_variant(
        &root().join("plans/db-drivers.toml"),
        &["go-db", "node-db", "python-db", "elixir-db", "java-vertx", "java-spring"],
    );
}

/// A third-party server's plan (docs/plan.md): it loads, and its build says
/// which variable to set when the checkout is not given. Measuring it needs
/// that checkout, which CI does not have.
#[test]
fn plan_third_party_bubble_benchmark_go() {
    let plan = root().join("plans/third-party/bubble-benchmark-go.toml");
    let loaded = Plan::load(&plan, &PlanContext { cpus: vec![0, 1], variant: Some("test".into()) }).unwrap();
    let names: Vec<_> = loaded.contestants.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["bubble-benchmark-go", "go-grpc-bubble-sort"]);
    let out = Command::new(root().join("plans/third-party/bubble-benchmark-go.sh"))
        .arg("build")
        .env_remove("BUBBLE_BENCHMARK_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("set BUBBLE_BENCHMARK_DIR"), "{out:?}");
}
