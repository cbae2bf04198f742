//! A contestant's daemon that leaves its process group and session
//! (`setsid`) and is orphaned (its parent exits) is still stopped: the
//! launcher finds it by the token in its environment. No cgroup and no sampler
//! here, so nothing else could catch it.

use std::time::{Duration, Instant};

use stackbench_run::TOKEN_VAR;
use stackbench_run::{LaunchSpec, Launcher as _, OsLauncher};

/// Live processes whose environment holds `needle`.
fn with_env(needle: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')));
            alive
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_setsid_daemon_whose_parent_exited_is_stopped_too() {
    let marker = format!("ESCAPE_TEST_MARKER=daemon-{}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    // The middle shell starts the daemon in a new session and exits at once,
    // so the daemon is reparented away from the contestant's tree; the
    // contestant itself (the group leader) stays up like a server.
    let script = "sh -c 'setsid sleep 300 </dev/null >/dev/null 2>&1 &'; exec sleep 300";
    let spec = LaunchSpec {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        env: [(key.to_owned(), value.to_owned())].into(),
        ..LaunchSpec::default()
    };
    let mut p = OsLauncher.spawn(&spec).unwrap();
    let leader = p.pid() as i32;
    // (ppid, pgrp) of a process.
    let ids = |pid: i32| -> Option<(i32, i32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
        Some((fields[1].parse().ok()?, fields[2].parse().ok()?))
    };
    // The daemon: out of the group, and orphaned (the middle shell has exited).
    let daemon = || {
        with_env(&marker).into_iter().find(|&pid| {
            pid != leader && ids(pid).is_some_and(|(ppid, pgrp)| pgrp != leader && ppid != leader)
        })
    };
    wait_for("an orphaned daemon in its own session", Duration::from_secs(10), || {
        daemon().is_some() && with_env(&marker).len() == 2
    });
    let daemon = daemon().unwrap();
    let env = std::fs::read(format!("/proc/{daemon}/environ")).unwrap();
    assert!(env.split(|&b| b == 0).any(|kv| kv.starts_with(format!("{TOKEN_VAR}=").as_bytes())));

    let report = p.stop(Duration::from_millis(500), &[]);
    assert!(report.exit.is_some());
    assert!(with_env(&marker).is_empty(), "left behind: {:?}", with_env(&marker));
}
