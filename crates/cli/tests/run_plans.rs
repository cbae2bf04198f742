//! `stackbench run` with real processes: a plan that works end to end, every
//! way a contestant can fail (never ready, crash at start, crash mid-run, wrong
//! answers, port already taken), Ctrl-C, a companion beside every run.
//! Contestants in other languages are run by `contestants.rs`.
//! After each, no process the plan started is left: every contestant carries
//! a marker in its environment, and `/proc/*/environ` is searched for it.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_record::Status;
use stackbench_testkit::contestants;
use stackbench_testkit::process::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

/// `stackbench`, with the `sb-*` contestants the plans here name (`{bin_dir}/sb-…`) built beside it.
fn stackbench() -> Command {
    for name in ["sb-dummy", "sb-event-log", "sb-bubble-sort"] {
        contestants::contestant(BIN, name);
    }
    Command::new(BIN)
}

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        Scratch(tempfile::Builder::new().prefix(&format!("sb-run-plans-{tag}-")).tempdir().unwrap())
    }
    fn plan(&self, text: &str) -> PathBuf {
        let p = self.0.path().join("plan.toml");
        std::fs::write(&p, text).unwrap();
        p
    }
    fn out(&self) -> PathBuf {
        self.0.path().join("results")
    }
}

/// Processes whose environment holds `marker`.
fn with_marker(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ"))
            && env.windows(marker.len()).any(|w| w == marker.as_bytes())
        {
            let cmd =
                std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default().replace('\0', " ");
            let state = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            if !state.contains(") Z ") {
                found.push(format!("{name}: {cmd}"));
            }
        }
    }
    found
}

fn assert_no_orphan(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = with_marker(marker);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "processes left behind: {left:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn marker(tag: &str) -> String {
    format!("SB_RUN_TEST_MARK={tag}-{}", std::process::id())
}

/// `[[contestant]]` with the marker in its environment.
fn contestant(name: &str, scenario: &str, command: &str, mark: &str, extra: &str) -> String {
    let (k, v) = mark.split_once('=').unwrap();
    format!(
        "[[contestant]]\nname = \"{name}\"\nscenario = \"{scenario}\"\ncommand = {command}\nenv = {{ {k} = \"{v}\" }}\n{extra}\n"
    )
}

const HEAD: &str = "[defaults]\nrepetitions = 2\ncold_starts = 2\nready_timeout = \"5s\"\nstop_grace = \"2s\"\n\
    sample_interval = \"100ms\"\n\
    [load.dummy]\nconnections = 4\nwarmup = \"300ms\"\nduration = \"1s\"\n\
    [load.event-log]\nconnections = 4\nwarmup = \"300ms\"\nduration = \"1s\"\n";

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = stackbench().args(args).stdin(Stdio::null()).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_plan_runs_end_to_end_and_leaves_nothing_behind() {
    let s = Scratch::new("e2e");
    let mark = marker("e2e");
    let plan = s.plan(
        &(HEAD.to_owned()
            + &contestant(
                "axum",
                "dummy",
                // Says where it may run (its log is kept), then becomes the server.
                r#"["sh", "-c", "grep Cpus_allowed_list /proc/self/status; exec {bin_dir}/sb-dummy --stack axum --port {port}"]"#,
                &mark,
                "cpus = \"0\"\ncpu_quota = 1.0\nmemory = \"256MiB\"\nlimits = \"best-effort\"",
            )
            + &contestant(
                "log",
                "event-log",
                // A shell parent with a child of its own: the whole tree is sampled and stopped.
                r#"["sh", "-c", "sleep 300 & exec {bin_dir}/sb-event-log --port {port} --store sqlite:{scratch}/e.db --reset"]"#,
                &mark,
                "",
            )),
    );
    let out_dir = s.out();
    let (code, stdout, stderr) = run(&["run", plan.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let set = stackbench_testkit::record::load_results(&out_dir);
    assert_eq!(set.manifest.status, Status::Complete);
    assert!(set.manifest.plan_text.contains("[[contestant]]"));
    // Under a loaded machine (tests run in parallel) a 1 s run may answer nothing within its
    // window: it is not a result (`no_progress`), and that repetition is measured again.
    let again: Vec<_> = set.runs.iter().filter_map(|r| r.invalid.as_ref()).collect();
    assert!(again.iter().all(|i| i.kind == "no_progress"), "{again:?}");
    assert_eq!(set.runs.len() - again.len(), 4, "{again:?}");
    for r in &set.runs {
        let samples = r.samples.as_ref().unwrap();
        assert!(!samples.points.is_empty() && samples.rss_bytes.max > 0.0, "{samples:?}");
        // Under a loaded machine (tests run in parallel) a 1 s run may complete nothing; none may fail.
        assert_eq!(r.summary.errors, 0, "{:?}", r.summary);
        assert!(r.params.url.starts_with("http://127.0.0.1:"));
        // What the orchestrator writes passes the check of what is read back.
        let kind = r.invalid.as_ref().map(|i| (i.kind.as_str(), i.reason.as_str()));
        assert!(
            !matches!(kind, Some(("inconsistent" | "duplicate", _))),
            "a run as written is marked {kind:?}"
        );
    }
    // Limits: through cgroups where the machine allows, else said plainly (best-effort).
    let axum = set.contestants.iter().find(|c| c.name == "axum").unwrap();
    let limited = !axum.incidents.iter().any(|i| i.kind == "limits_not_applied");
    for r in set.runs.iter().filter(|r| r.label.contestant.as_deref() == Some("axum")) {
        let cg = r.samples.as_ref().unwrap().cgroup;
        assert_eq!(cg.is_some(), limited, "{cg:?} {:?}", axum.incidents);
        if let Some(cg) = cg {
            assert_eq!((cg.cpu_quota, cg.memory_limit_bytes), (Some(1.0), Some(256 << 20)));
            assert!(cg.memory_peak_bytes > 0, "{cg:?}");
        }
    }
    for name in ["axum", "log"] {
        let ok: u64 = set
            .runs
            .iter()
            .filter(|r| r.label.contestant.as_deref() == Some(name))
            .map(|r| r.summary.ok)
            .sum();
        assert!(ok > 0, "{name} answered");
    }
    let log = set.runs.iter().find(|r| r.label.contestant.as_deref() == Some("log")).unwrap();
    assert!(log.samples.as_ref().unwrap().points.iter().any(|p| p.threads >= 2), "sh, sleep and the server");
    for c in &set.contestants {
        // 2 asked: the verification's start and each run's (2, or one more measured again), timed alike.
        let runs = set.runs.iter().filter(|r| r.label.contestant.as_ref() == Some(&c.name)).count();
        assert!(runs >= 2 && c.cold_start_ms.len() == 1 + runs, "{runs} runs: {c:?}");
        assert!(c.verification.as_ref().unwrap().passed, "{c:?}");
    }
    assert!(out_dir.join("report.html").exists());
    let invocation: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("invocation.json")).unwrap()).unwrap();
    assert_eq!(invocation["contestants"], serde_json::json!(["axum", "log"]), "what --resume continues");
    let log = std::fs::read_to_string(out_dir.join("logs/axum.log")).unwrap();
    assert!(
        log.lines().filter(|l| l.starts_with("Cpus_allowed_list")).all(|l| l.ends_with("\t0")),
        "pinned: {log}"
    );
    assert!(log.contains("Cpus_allowed_list"), "{log}");
    assert!(stdout.contains("axum") && stdout.contains("report:"), "{stdout}");
    assert_no_orphan(&mark);
}

#[test]
fn every_failure_is_recorded_and_the_plan_goes_on() {
    let s = Scratch::new("fail");
    let mark = marker("fail");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let dummy = r#"["{bin_dir}/sb-dummy", "--port", "{port}"]"#;
    let plan = s.plan(
        &[
            HEAD.to_owned(),
            contestant("never", "dummy", r#"["sleep", "60"]"#, &mark, "ready_timeout = \"1s\""),
            contestant("dies", "dummy", r#"["sh", "-c", "echo boom >&2; exit 3"]"#, &mark, ""),
            // A dummy server is a wrong event-log: its count never grows.
            contestant("wrong", "event-log", dummy, &mark, ""),
            contestant("taken", "dummy", dummy, &mark, &format!("port = {taken_port}")),
            contestant(
                "midrun",
                "dummy",
                r#"["sh", "-c", "{bin_dir}/sb-dummy --port {port} & sleep 1; kill -9 $!; exit 1"]"#,
                &mark,
                "cold_starts = 0",
            ),
            contestant("good", "dummy", dummy, &mark, ""),
        ]
        .concat(),
    );
    let out_dir = s.out();
    let (code, stdout, stderr) = run(&["run", plan.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(code, Some(3), "some contestants were left out\n{stdout}\n{stderr}");
    let set = stackbench_testkit::record::load_results(&out_dir);
    let incidents = |name: &str| set.contestants.iter().find(|c| c.name == name).unwrap().incidents.clone();
    assert_eq!(incidents("never")[0].kind, "never_ready", "{:?}", incidents("never"));
    let dies = &incidents("dies")[0];
    assert!(
        dies.kind == "crashed" && dies.message.contains("exit code 3") && dies.message.contains("boom"),
        "{dies:?}"
    );
    let wrong = set.contestants.iter().find(|c| c.name == "wrong").unwrap();
    let v = wrong.verification.as_ref().unwrap();
    assert!(!v.passed && v.failures.iter().any(|f| f.rule.contains("K sequential writes")), "{v:?}");
    assert!(stdout.contains("left out: wrong"), "{stdout}");
    assert_eq!(incidents("taken")[0].kind, "port_taken");
    assert!(
        incidents("midrun").iter().any(|i| i.kind == "crashed" && i.phase == "run"),
        "{:?}",
        incidents("midrun")
    );
    let measured =
        |name: &str| set.runs.iter().filter(|r| r.label.contestant.as_deref() == Some(name)).count();
    assert_eq!(measured("good"), 2);
    assert_eq!(measured("midrun"), 2, "a crash mid-run is measured: its errors are data");
    assert!(
        set.runs
            .iter()
            .filter(|r| r.label.contestant.as_deref() == Some("midrun"))
            .all(|r| r.summary.errors > 0 || r.summary.duration_s < 1.0)
    );
    for name in ["never", "dies", "wrong", "taken"] {
        assert_eq!(measured(name), 0, "{name}");
    }
    drop(taken);
    assert_no_orphan(&mark);
}

#[test]
fn ctrl_c_saves_the_current_run_and_stops_everything() {
    let s = Scratch::new("sigint");
    let mark = marker("sigint");
    let plan = s.plan(
        &("[defaults]\nrepetitions = 2\ncold_starts = 1\nready_timeout = \"5s\"\n[load.dummy]\nconnections = 4\nduration = \"4s\"\n"
            .to_owned()
            + &contestant(
                "a",
                "dummy",
                r#"["sh", "-c", "sleep 300 & exec {bin_dir}/sb-dummy --port {port}"]"#,
                &mark,
                "",
            )),
    );
    let out_dir = s.out();
    let mut child = stackbench()
        .args(["run", plan.to_str().unwrap(), "--out", out_dir.to_str().unwrap(), "--no-report"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("repetition 1: load on") {
            break;
        }
    }
    assert!(seen.contains("repetition 1"), "{seen}");
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(t.elapsed() < Duration::from_secs(15), "stopped promptly: {:?}", t.elapsed());
    let set = stackbench_testkit::record::load_results(&out_dir);
    assert_eq!(set.manifest.status, Status::Interrupted);
    assert_eq!(set.runs.len(), 1);
    assert!(set.runs[0].interrupted && set.runs[0].summary.ok > 0, "{:?}", set.runs[0].summary);
    assert_no_orphan(&mark);

    // --resume measures what is missing: the interrupted repetition again, then the next.
    let (code, stdout, stderr) = run(&["run", "--resume", out_dir.to_str().unwrap(), "--no-report"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("verified"), "no second verification: {stderr}");
    let set = stackbench_testkit::record::load_results(&out_dir);
    assert_eq!(set.manifest.status, Status::Complete);
    let reps: Vec<(u32, bool)> =
        set.runs.iter().map(|r| (r.label.repetition.unwrap(), r.interrupted)).collect();
    assert_eq!(reps, [(1, false), (2, false)]);
    let aside = std::fs::read_dir(out_dir.join("runs")).unwrap().flatten();
    assert_eq!(aside.filter(|e| e.file_name().to_string_lossy().ends_with(".interrupted")).count(), 1);
    assert_no_orphan(&mark);
}

#[test]
fn a_bad_plan_is_refused_with_its_place() {
    let s = Scratch::new("bad");
    let plan = s.plan("[defaults]\nrepetitions = 2\ncold_start = 1\n");
    let (code, _, stderr) = run(&["run", plan.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("plan.toml:3:1") && stderr.contains("cold_starts"), "{stderr}");
    assert!(!s.out().exists(), "nothing started");
    let plan = s.plan(&contestant("a", "dummy", r#"["x"]"#, "A=b", "load = { conections = 3 }"));
    let (code, _, stderr) = run(&["run", plan.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("conections") && stderr.contains("connections"), "{stderr}");
    assert!(stderr.contains("plan.toml:6:10"), "the line of the misspelt key: {stderr}");
}

#[test]
fn precision_rounds_say_how_they_ended_and_a_budget_needs_a_precision() {
    let s = Scratch::new("precision");
    let mark = marker("precision");
    let copy = |name| {
        contestant(
            name,
            "dummy",
            r#"["{bin_dir}/sb-dummy", "--stack", "hyper", "--port", "{port}"]"#,
            &mark,
            "",
        )
    };
    let plan = s.plan(&(HEAD.replace("cold_starts = 2", "cold_starts = 0") + &copy("a") + &copy("b")));
    let (code, _, stderr) =
        run(&["run", plan.to_str().unwrap(), "--out", s.out().to_str().unwrap(), "--max-repetitions", "3"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("add --precision"), "{stderr}");
    assert!(!s.out().exists(), "nothing started");
    let out = s.out();
    let args = ["run", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--precision", "50%"];
    let (code, stdout, stderr) = run(&[&args[..], &["--max-repetitions", "3"]].concat());
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let set = stackbench_testkit::record::load_results(&out);
    let stopping = set.stopping.unwrap();
    // `repetitions = 2` is raised to the first round with an interval: one look, at 95%.
    assert_eq!((stopping.rounds, stopping.planned_looks, stopping.look_confidence), (3, 1, 0.95));
    assert!(["met", "max_repetitions"].contains(&stopping.reason.as_str()), "{stopping:?}");
    assert_eq!(set.runs.len(), 6);
    assert!(stdout.contains("precision: "), "{stdout}");
    // --resume keeps the rounds it was started with: another precision is refused...
    let resume = ["run", "--resume", out.to_str().unwrap(), "--no-report"];
    let (code, _, stderr) = run(&[&resume[..], &["--precision", "10%"]].concat());
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("was started with --precision 50% --max-repetitions 3"), "{stderr}");
    // ...and with none given again it continues with them: nothing is owed.
    let (code, stdout, stderr) = run(&resume);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(stackbench_testkit::record::load_results(&out).runs.len(), 6);
    assert_no_orphan(&mark);
}

#[test]
fn verify_names_the_broken_rule() {
    let mut server =
        Server::start(Command::new(contestants::contestant(BIN, "sb-dummy")).args(["--port", "0"]));
    let url = format!("http://{}", server.addr);
    let (code, stdout, _) = run(&["verify", &url, "--scenario", "dummy"]);
    assert_eq!(code, Some(0), "{stdout}");
    // Every rule is listed with its level and result.
    assert!(stdout.contains("ok      core       a full event gets 200"), "{stdout}");
    assert!(stdout.contains("ok      hardening  a key given twice gets 400"), "{stdout}");
    assert!(stdout.contains("passes the dummy contract"), "{stdout}");
    let (code, stdout, _) = run(&["verify", &url, "--scenario", "event-log", "--clean"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("FAILED  core       K sequential writes on a clean store give K"), "{stdout}");
    assert!(server.terminate().success());
}

/// A server that validates nothing passes the core rules: `verify` exits 0
/// and prints what it does not enforce (hardening rules), each as FAILED.
#[test]
fn verify_exits_0_when_only_hardening_rules_fail() {
    let server = stackbench_testkit::hostile::Hostile::start(stackbench_testkit::hostile::Answer::Fixed(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"count\":1}"
            .to_vec(),
    ));
    let (code, stdout, _) = run(&["verify", &server.url(""), "--scenario", "dummy"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("FAILED  hardening  a key given twice gets 400"), "{stdout}");
    assert!(
        stdout.contains("with warnings: does not enforce") && stdout.contains("duplicate keys"),
        "{stdout}"
    );
}

/// Regression: the load's CPUs came from the online count, so under
/// `taskset` (or a container's cpuset) a plan was pinned to CPUs it may not
/// use. The CPUs are the affinity mask's now.
#[test]
fn cpus_come_from_the_affinity_mask() {
    let s = Scratch::new("affinity");
    let plan = s.plan(
        "[defaults]\ncpus = \"1\"\n[[contestant]]\nname = \"a\"\nscenario = \"dummy\"\ncommand = [\"x\"]\n",
    );
    let out = Command::new("taskset")
        .args(["-c", "0", BIN, "run", plan.to_str().unwrap(), "--out", s.out().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CPU 1 is not one this process may use: it may use CPUs 0"), "{stderr}");
    assert!(stderr.contains("plan.toml:2:8"), "{stderr}");
}

/// Regression: the readiness probes' HTTP/2 connections outlived the probe
/// (hyper runs them as tasks of the prober's runtime), so a gRPC contestant's
/// graceful stop waited for them and was killed after its grace period.
#[test]
fn a_grpc_contestant_stops_gracefully_after_its_probes() {
    // The server's graceful stop waits for every HTTP/2 connection to answer its GOAWAY ping: a
    // probe's connection left open (unread) kept it from stopping until it was killed. On both
    // of its runtimes: multi-threaded, and current-thread (pinned to one core).
    for (name, pin) in [("grpc-stop", ""), ("grpc-stop-pinned", "cpus = \"0\"\n")] {
        let s = Scratch::new(name);
        let plan = s.plan(&format!(
            // 4 timed starts: 2 of them apart (start, probe, stop at once), the regression's path.
            "[defaults]\nrepetitions = 1\ncold_starts = 4\nstop_grace = \"3s\"\n{pin}\
             [load.bubble-sort]\nconnections = 2\nwarmup = \"200ms\"\nduration = \"500ms\"\n\
             [[contestant]]\nname = \"tonic\"\nscenario = \"bubble-sort\"\n\
             command = [\"{{bin_dir}}/sb-bubble-sort\", \"--port\", \"{{port}}\"]\n"
        ));
        let (code, stdout, stderr) =
            run(&["run", plan.to_str().unwrap(), "--out", s.out().to_str().unwrap(), "--no-report"]);
        assert_eq!(code, Some(0), "{name}: {stdout}\n{stderr}");
        let set = stackbench_testkit::record::load_results(&s.out());
        let incidents = &set.contestants[0].incidents;
        assert!(incidents.iter().all(|i| i.kind != "killed"), "{name}: {incidents:?}");
    }
}

/// Issue 48: a plan's CPU budget is said before anything runs and in the report's header (or
/// `unbudgeted` and why, where no cgroup can apply it); `--unbudgeted` drops it, and `--resume`
/// does not mix the two in one result directory.
#[test]
fn a_cpu_budget_is_said_in_the_header_and_unbudgeted_is_one_flag_away() {
    let s = Scratch::new("budget");
    let mark = marker("budget");
    let plan = s.plan(
        &("[defaults]\nrepetitions = 1\ncold_starts = 1\nready_timeout = \"5s\"\ncpus = \"0\"\n\
           cpu_quota = 0.5\nlimits = \"best-effort\"\n[load.dummy]\nconnections = 4\nwarmup = \"200ms\"\n\
           duration = \"500ms\"\n"
            .to_owned()
            + &contestant(
                "axum",
                "dummy",
                r#"["{bin_dir}/sb-dummy", "--stack", "axum", "--port", "{port}"]"#,
                &mark,
                "",
            )
            + &contestant(
                "hyper",
                "dummy",
                r#"["{bin_dir}/sb-dummy", "--stack", "hyper", "--port", "{port}"]"#,
                &mark,
                "",
            )),
    );
    let budgeted = s.0.path().join("budgeted");
    let (code, stdout, stderr) = run(&["run", plan.to_str().unwrap(), "--out", budgeted.to_str().unwrap()]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let set = stackbench_testkit::record::load_results(&budgeted);
    let applied = !set.contestants.iter().flat_map(|c| &c.incidents).any(|i| i.kind == "limits_not_applied");
    if applied {
        assert!(stderr.contains("CPU budget: 0.5 core(s) per contestant, reserved"), "{stderr}");
        assert!(
            stdout.contains("CPU budget: 0.5 core per contestant, the same for each (a cgroup v"),
            "{stdout}"
        );
        for r in &set.runs {
            let cg = r.samples.as_ref().and_then(|s| s.cgroup).expect("each run sampled its cgroup");
            assert_eq!(cg.cpu_quota, Some(0.5));
            assert!(matches!(cg.version, Some(1 | 2)), "{cg:?}");
        }
    } else {
        assert!(!stackbench_testkit::in_ci(), "CI=true needs writable cgroups: {stderr}");
        assert!(stderr.contains("unbudgeted: the plan's cpu_quota cannot be applied here"), "{stderr}");
        assert!(stdout.contains("unbudgeted: the plan's CPU quota was not applied ("), "{stdout}");
    }

    let unbudgeted = s.0.path().join("unbudgeted");
    let (code, stdout, stderr) =
        run(&["run", plan.to_str().unwrap(), "--out", unbudgeted.to_str().unwrap(), "--unbudgeted"]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("unbudgeted (--unbudgeted): no CPU quota on any contestant"), "{stderr}");
    assert!(stdout.contains("unbudgeted: no CPU quota on any contestant"), "{stdout}");
    let set = stackbench_testkit::record::load_results(&unbudgeted);
    assert!(set.runs.iter().all(|r| r.samples.as_ref().is_some_and(|s| s.cgroup.is_none())));
    let invocation: serde_json::Value =
        serde_json::from_slice(&std::fs::read(unbudgeted.join("invocation.json")).unwrap()).unwrap();
    assert_eq!(invocation["unbudgeted"], serde_json::json!(true), "what --resume continues");

    // A budgeted directory is not continued without its budget.
    let (code, _, stderr) = run(&["run", "--resume", budgeted.to_str().unwrap(), "--unbudgeted"]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("was started with the plan's CPU budget"), "{stderr}");
    assert_no_orphan(&mark);
}

/// A plan's `companion` with real processes: every compared run has a fresh start of it
/// beside it (two markers' processes alive at once, never more), each record keeps the
/// companion's rate over the run's seconds, the report says how it read the rates, and
/// nothing is left behind.
#[test]
fn a_companion_runs_beside_every_compared_run_and_leaves_nothing_behind() {
    let s = Scratch::new("companion");
    let mark = marker("companion");
    let dummy = |stack: &str| {
        let command = format!(r#"["{{bin_dir}}/sb-dummy", "--stack", "{stack}", "--port", "{{port}}"]"#);
        contestant(stack, "dummy", &command, &mark, "")
    };
    let head = HEAD.replace("cold_starts = 2\n", "cold_starts = 1\ncompanion = \"hyper\"\n");
    let plan = s.plan(&(head + &dummy("axum") + &dummy("actix") + &dummy("hyper")));
    // How many of the plan's processes are alive at once, sampled while it runs.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let (done, mark) = (done.clone(), mark.clone());
        std::thread::spawn(move || {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(with_marker(&mark).len());
                std::thread::sleep(Duration::from_millis(20));
            }
            most
        })
    };
    let out_dir = s.out();
    let (code, stdout, stderr) = run(&["run", plan.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let most = watch.join().unwrap();
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(most, 2, "a run and its companion at once, never more");
    let set = stackbench_testkit::record::load_results(&out_dir);
    let measured: Vec<_> = set.runs.iter().filter(|r| r.invalid.is_none()).collect();
    assert!(measured.len() >= 6, "{} runs", measured.len());
    for r in &measured {
        let c = r
            .companion
            .as_ref()
            .unwrap_or_else(|| panic!("no companion: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", r.label));
        assert_eq!(c.name, "hyper");
        assert!(c.ok_rps > 0.0, "{:?}: {c:?}", r.label);
    }
    assert!(stdout.contains("Measured beside a companion: every run of dummy"), "{stdout}");
    assert_no_orphan(&mark);
}
