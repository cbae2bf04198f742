//! Signals at every stage of `stackbench run`: Ctrl-C (SIGINT) stops the
//! plan promptly in the setup too (a long build, a cold start), saving what
//! was measured; nothing the plan started is left behind. Processes are
//! found in `/proc` by a marker in their environment.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use stackbench_record::store::{ResultSet, Status};

const BIN: &str = env!("CARGO_BIN_EXE_stackbench");

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sb-signals-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    let mut child = Command::new(BIN)
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
    let dir = scratch("build");
    let mark = format!("SB_SIGNALS_MARK=build-{}", std::process::id());
    let (k, v) = mark.split_once('=').unwrap();
    let plan = format!(
        "[[contestant]]\nname = \"slow\"\nscenario = \"dummy\"\n\
         build = [\"sh\", \"-c\", \"{k}={v} sleep 300\"]\n\
         command = [\"{{stackbench}}\", \"serve\", \"dummy\", \"--port\", \"{{port}}\"]\n"
    );
    let (mut child, _) = start_until(&plan, &dir, "build:");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!with_marker(&mark).is_empty(), "the build runs");
    let (code, took) = interrupt(&mut child);
    assert_eq!(code, Some(130));
    assert!(took < Duration::from_secs(5), "stopped promptly: {took:?}");
    assert_none_left(&mark);
    let set = ResultSet::load(&dir.join("results")).unwrap();
    assert_eq!(set.manifest.status, Status::Interrupted);
    let _ = std::fs::remove_dir_all(&dir);
}
