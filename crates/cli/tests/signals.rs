//! Signals at every stage of `stackbench run`: Ctrl-C (SIGINT) stops the
//! plan promptly in the setup too (a long build, a cold start), saving what
//! was measured; nothing the plan started is left behind. Processes are
//! found in `/proc` by a marker in their environment.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_record::Status;
use stackbench_testkit::contestants::contestant;

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

/// `stackbench`, with the `sb-*` contestants the plans here name (`{bin_dir}/sb-…`) built beside it.
fn stackbench() -> Command {
    for name in ["sb-dummy", "sb-event-log", "sb-bubble-sort"] {
        contestant(BIN, name);
    }
    Command::new(BIN)
}

fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("sb-signals-{tag}-")).tempdir().unwrap()
}

/// Live (not zombie) processes whose environment holds `marker`.
fn with_marker(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else { continue };
        if env.windows(marker.len()).any(|w| w == marker.as_bytes()) {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            if !stat.contains(") Z ") {
                let cmd = std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default();
                found.push(format!("{name}: {}", cmd.replace('\0', " ")));
            }
        }
    }
    found
}

fn assert_none_left(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !with_marker(marker).is_empty() {
        assert!(Instant::now() < deadline, "left behind: {:#?}", with_marker(marker));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `stackbench run PLAN` and waits for a line of its progress containing `until`.
fn start_until(plan: &str, dir: &std::path::Path, until: &str) -> (Child, String) {
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let mut child = stackbench()
        .args(["run", path.to_str().unwrap(), "--out", dir.join("results").to_str().unwrap(), "--no-report"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(until) {
            break;
        }
    }
    assert!(seen.contains(until), "{seen}");
    (child, seen)
}

fn interrupt(child: &mut Child) -> (Option<i32>, Duration) {
    let t = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    (status.code(), t.elapsed())
}

/// Regression: Ctrl-C was ignored while a `build` ran (up to its 1 hour
/// timeout). Now the build is stopped at once and the plan ends interrupted.
#[test]
fn ctrl_c_during_a_build_stops_at_once() {
    let tmp = scratch("build");
    let dir = tmp.path();
    let mark = format!("SB_SIGNALS_MARK=build-{}", std::process::id());
    let (k, v) = mark.split_once('=').unwrap();
    let plan = format!(
        "[[contestant]]\nname = \"slow\"\nscenario = \"dummy\"\n\
         build = [\"sh\", \"-c\", \"{k}={v} sleep 300\"]\n\
         command = [\"{{bin_dir}}/sb-dummy\", \"--port\", \"{{port}}\"]\n"
    );
    let (mut child, _) = start_until(&plan, dir, "build:");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!with_marker(&mark).is_empty(), "the build runs");
    let (code, took) = interrupt(&mut child);
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "stopped promptly: {took:?}");
    assert_none_left(&mark);
    let set = stackbench_testkit::record::load_results(&dir.join("results"));
    assert_eq!(set.manifest.status, Status::Interrupted);
}

/// Live processes whose command line is exactly `cmdline` (NUL-separated in /proc).
fn with_cmdline(cmdline: &[&str]) -> Vec<i32> {
    let want = cmdline.join("\0") + "\0";
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes())
            && !stat.contains(") Z ")
        {
            found.push(pid);
        }
    }
    found
}

fn assert_gone(cmdline: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !with_cmdline(cmdline).is_empty() {
        assert!(Instant::now() < deadline, "{cmdline:?} left behind: {:?}", with_cmdline(cmdline));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A contestant whose start script leaves two daemons: one that `setsid`s
/// away from the group, one that also empties its environment (no token).
fn daemon_plan(env_daemon: &str, token_daemon: &str) -> String {
    format!(
        "[defaults]\nrepetitions = 1\ncold_starts = 0\nready_timeout = \"10s\"\nstop_grace = \"2s\"\n\
         [load.dummy]\nconnections = 2\nwarmup = \"200ms\"\nduration = \"20s\"\n\
         [[contestant]]\nname = \"daemons\"\nscenario = \"dummy\"\n\
         command = [\"sh\", \"-c\", \"( setsid sleep {token_daemon} & ); ( setsid env -i sleep {env_daemon} & ); \
         exec {{bin_dir}}/sb-dummy --port {{port}}\"]\n"
    )
}

/// Regression: daemons a contestant started survived `kill -9` of
/// `stackbench run`, and one that cleared its environment survived even a
/// normal finish. Each start has a tracking cgroup now: the next stackbench
/// reaps what a killed one left, and says what it killed.
#[test]
fn what_a_killed_stackbench_left_is_reaped_by_the_next() {
    let tmp = scratch("sigkill");
    let dir = tmp.path();
    let (env_daemon, token_daemon) = (
        format!("{}.25", 3000 + std::process::id() % 1000),
        format!("{}.75", 3000 + std::process::id() % 1000),
    );
    let (mut child, _) = start_until(&daemon_plan(&env_daemon, &token_daemon), dir, "repetition 1: load on");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(with_cmdline(&["sleep", &env_daemon]).len(), 1, "the env -i daemon runs");
    assert_eq!(with_cmdline(&["sleep", &token_daemon]).len(), 1, "the setsid daemon runs");
    child.kill().unwrap(); // SIGKILL: no cleanup of stackbench runs
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(with_cmdline(&["sleep", &env_daemon]).len(), 1, "a SIGKILLed stackbench cannot stop it");

    // The next stackbench, whatever it runs, reaps them first.
    let again = dir.join("again");
    std::fs::create_dir_all(&again).unwrap();
    let quick = "[defaults]\nrepetitions = 1\ncold_starts = 0\n[load.dummy]\nconnections = 1\nduration = \"300ms\"\n\
                 [[contestant]]\nname = \"q\"\nscenario = \"dummy\"\ncommand = [\"{bin_dir}/sb-dummy\", \"--port\", \"{port}\"]\n";
    std::fs::write(again.join("plan.toml"), quick).unwrap();
    let out = stackbench()
        .args([
            "run",
            again.join("plan.toml").to_str().unwrap(),
            "--out",
            again.join("r").to_str().unwrap(),
            "--no-report",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("reaped: killed") && stderr.contains(&env_daemon), "{stderr}");
    assert!(stderr.contains(&token_daemon), "{stderr}");
    assert_gone(&["sleep", &env_daemon]);
    assert_gone(&["sleep", &token_daemon]);
}

/// Regression: a daemon that cleared its environment (`setsid env -i …`)
/// survived a normal finish; its tracking cgroup catches it.
#[test]
fn a_daemon_without_its_environment_is_stopped_at_the_end() {
    let tmp = scratch("env-i");
    let dir = tmp.path();
    let (env_daemon, token_daemon) = (
        format!("{}.125", 4000 + std::process::id() % 1000),
        format!("{}.375", 4000 + std::process::id() % 1000),
    );
    let plan = daemon_plan(&env_daemon, &token_daemon).replace("duration = \"20s\"", "duration = \"500ms\"");
    let (mut child, _) = start_until(&plan, dir, "repetition 1: load on");
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_gone(&["sleep", &env_daemon]);
    assert_gone(&["sleep", &token_daemon]);
}

/// Regression: `stackbench run --resume DIR` while another stackbench still
/// wrote DIR measured both at once, and their records mixed. The directory
/// has one writer: a second is refused with the holder's pid; once the
/// holder is dead (SIGKILL), `--resume` continues and says so.
#[test]
fn a_result_directory_has_one_writer() {
    let tmp = scratch("lock");
    let dir = tmp.path();
    let plan = "[defaults]\nrepetitions = 1\ncold_starts = 0\n[load.dummy]\nconnections = 1\nwarmup = \"100ms\"\nduration = \"2s\"\n\
                [[contestant]]\nname = \"a\"\nscenario = \"dummy\"\ncommand = [\"{bin_dir}/sb-dummy\", \"--port\", \"{port}\"]\n";
    let (mut first, _) = start_until(plan, dir, "repetition 1: load on");
    let results = dir.join("results");
    let second =
        stackbench().args(["run", "--resume", results.to_str().unwrap(), "--no-report"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is being written by another stackbench")
            && stderr.contains(&format!("pid {}", first.id())),
        "{stderr}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let again =
        stackbench().args(["run", "--resume", results.to_str().unwrap(), "--no-report"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("was left running by a stackbench that is no longer running"), "{stderr}");
    let set = stackbench_testkit::record::load_results(&results);
    assert_eq!(set.manifest.status, Status::Complete);
    assert_eq!(set.runs.iter().filter(|r| !r.interrupted).count(), 1, "one run, by one writer");
}
