//! Every process a contestant starts is tracked by a cgroup of its own, so a
//! daemon that leaves its process group and session (`setsid`), or empties
//! its environment (`env -i`), is still found and stopped: a process cannot
//! leave its cgroup by itself. The cgroup is made in the unified (v2)
//! hierarchy when one is mounted, else in a v1 hierarchy (`pids`, `freezer`,
//! `cpu`, `memory`); no controller is needed, only membership.
//!
//! Names carry their owner, `stackbench-<pid>.<start>-<seq>-<label>`, with the
//! owner's start time in clock ticks, so a reused pid is never taken for a
//! live owner. [`reap_orphans`], run when `stackbench run` or `bench` starts,
//! kills what a stackbench that died (SIGKILL, where no cleanup can run) left
//! in its cgroups or with its process tokens, and removes those cgroups and
//! its scratch directory ([`scratch_dir`], named after its owner alike).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::{mkdir, mounts, own_path};
use crate::ownership::{alive, kill, owner, owner_of, token_owners};

/// A cgroup name no other start shares: `stackbench-<owner>-<seq>-<label>`.
pub fn group_name(label: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let label = stackbench_record::file_safe(label);
    format!("stackbench-{}-{}-{label}", owner(), SEQ.fetch_add(1, Ordering::Relaxed))
}

/// The directories trackers are made in: `(hierarchy mount + own path)`, the
/// unified hierarchy first. Read once, before stackbench moves itself (v2 limits).
fn bases() -> &'static [PathBuf] {
    static BASES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    BASES.get_or_init(|| {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mut bases = Vec::new();
        let all = mounts(&mountinfo);
        if let Some((m, _, _)) = all.iter().find(|(_, t, _)| t == "cgroup2")
            && let Some(p) = own_path(&own, "")
        {
            bases.push(m.join(p.trim_start_matches('/')));
        }
        for controller in ["pids", "freezer", "cpu", "memory"] {
            if let Some((m, _, _)) =
                all.iter().find(|(_, t, o)| t == "cgroup" && o.split(',').any(|x| x == controller))
            {
                let p = own_path(&own, controller).unwrap_or_else(|| "/".into());
                bases.push(m.join(p.trim_start_matches('/')));
            }
        }
        bases
    })
}

/// A tracking cgroup: whatever joins it, and everything it forks, is found by [`Tracker::pids`].
#[derive(Debug)]
pub struct Tracker {
    dir: PathBuf,
}

impl Tracker {
    /// A tracker in the first hierarchy where one can be made, skipping those
    /// under `taken` (a limits cgroup there already tracks the process: a
    /// process is in one cgroup per hierarchy). `None` when no hierarchy is
    /// writable (not root): then tokens and the process group are all there is.
    pub fn create(label: &str, taken: &[PathBuf]) -> Option<Tracker> {
        let name = group_name(label);
        bases().iter().filter(|b| !taken.iter().any(|t| same_hierarchy(b, t))).find_map(|base| {
            let dir = base.join(&name);
            mkdir(&dir).ok().map(|()| Tracker { dir })
        })
    }

    /// The file a new process writes `0` into to join.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    pub fn pids(&self) -> Vec<i32> {
        pids_in(&self.dir)
    }

    /// SIGKILLs every member until none is left (at most `wait`).
    pub fn kill_all(&self, wait: Duration) {
        kill_members(&self.dir, wait);
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        kill_members(&self.dir, Duration::from_millis(500));
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Two cgroup paths in the same hierarchy (the same mount).
fn same_hierarchy(a: &Path, b: &Path) -> bool {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mount_of = |p: &Path| {
        mounts(&mountinfo)
            .into_iter()
            .filter(|(m, t, _)| (t == "cgroup" || t == "cgroup2") && p.starts_with(m))
            .max_by_key(|(m, _, _)| m.as_os_str().len())
            .map(|(m, _, _)| m)
    };
    mount_of(a).is_some_and(|m| Some(m) == mount_of(b))
}

/// The pids in a cgroup (its own members).
pub fn pids_in(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// SIGKILLs the members of `dir` (v2: `cgroup.kill` too) until it is empty or `wait` passed.
fn kill_members(dir: &Path, wait: Duration) -> Vec<i32> {
    let mut killed = Vec::new();
    let deadline = Instant::now() + wait;
    loop {
        let pids = pids_in(dir);
        if pids.is_empty() || Instant::now() >= deadline {
            return killed;
        }
        let _ = fs::write(dir.join("cgroup.kill"), "1");
        for pid in pids {
            kill(pid, libc::SIGKILL);
            if !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `123 (sleep 300)`.
fn describe_pid(pid: i32) -> String {
    let cmd = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmd: Vec<String> = cmd
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if cmd.is_empty() { pid.to_string() } else { format!("{pid} ({})", cmd.join(" ")) }
}

/// Kills what stackbench processes that are no longer running left behind
/// (in their cgroups, or carrying their process tokens) and removes their
/// cgroups. Returns one line per process killed.
pub fn reap_orphans() -> Vec<String> {
    let mut said = Vec::new();
    for base in bases() {
        let Ok(entries) = fs::read_dir(base) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(owner) = name.starts_with("stackbench-").then(|| owner_of(&name)).flatten() else {
                continue;
            };
            if alive(owner) {
                continue;
            }
            reap_dir(&e.path(), owner, &mut said);
        }
    }
    said.extend(reap_scratch(&std::env::temp_dir()));
    for (pid, owner) in token_owners() {
        if !alive(owner) {
            let what = describe_pid(pid);
            kill(pid, libc::SIGKILL);
            said.push(format!("killed {what}, left by stackbench {} (no longer running)", owner.0));
        }
    }
    said
}

/// The scratch directory of this stackbench run, in `tmp`: `stackbench-<owner>-<ms>`, so that
/// one left by a stackbench that died is known by its owner ([`reap_scratch`]).
pub fn scratch_dir(tmp: &Path, ms: u64) -> PathBuf {
    tmp.join(format!("stackbench-{}-{ms}", owner()))
}

/// Removes the scratch directories in `tmp` whose stackbench is no longer running (SIGKILL
/// leaves them; the owner's own cleanup never ran). Only directories named
/// `stackbench-<pid>.<start>-<ms>` (or the older `stackbench-<pid>-<ms>`, by pid alone) and
/// owned by this user are touched, never through a symbolic link. One line per removal.
pub fn reap_scratch(tmp: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    let mut said = Vec::new();
    let Ok(entries) = fs::read_dir(tmp) else { return said };
    // SAFETY: getuid takes no arguments and cannot fail.
    #[allow(unsafe_code)]
    let me = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("stackbench-") else { continue };
        let Some((who, ms)) = rest.split_once('-') else { continue };
        if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let gone = match who.split_once('.') {
            Some(_) => owner_of(&name).is_some_and(|o| !alive(o)),
            None => who.parse::<i32>().is_ok_and(|pid| pid > 0 && crate::sampler::read_stat(pid).is_none()),
        };
        let ours = fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if gone && ours && fs::remove_dir_all(e.path()).is_ok() {
            said.push(format!("removed {}, left by a stackbench no longer running", e.path().display()));
        }
    }
    said
}

/// Empties and removes a dead owner's cgroup and its children, deepest first.
fn reap_dir(dir: &Path, owner: (i32, u64), said: &mut Vec<String>) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                reap_dir(&e.path(), owner, said);
            }
        }
    }
    let described: Vec<String> = pids_in(dir).into_iter().map(describe_pid).collect();
    kill_members(dir, Duration::from_secs(2));
    for what in described {
        said.push(format!("killed {what}, left by stackbench {} (no longer running)", owner.0));
    }
    let _ = fs::remove_dir(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_of_the_dead_is_reaped_and_of_the_living_kept() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let tmp = scratch.path();
        let mine = scratch_dir(tmp, 5);
        let (pid, start) = owner_of(owner()).unwrap();
        let dead = tmp.join(format!("stackbench-{pid}.{}-5", start + 1));
        let other = tmp.join("stackbench-store-x-1");
        for d in [&mine, &dead, &other] {
            fs::create_dir_all(d.join("x")).unwrap();
        }
        let said = reap_scratch(tmp);
        assert!(mine.exists() && other.exists() && !dead.exists(), "{said:?}");
        assert_eq!(said.len(), 1, "{said:?}");
    }

    #[test]
    fn names_carry_their_owner() {
        let name = group_name("a b/c");
        assert!(name.starts_with(&format!("stackbench-{}-", owner())), "{name}");
        let (pid, start) = owner_of(&name).unwrap();
        assert_eq!(pid, std::process::id() as i32);
        assert!(alive((pid, start)), "this test process is alive");
        assert!(!alive((pid, start + 1)), "a reused pid is not the owner");
        assert_eq!(owner_of("stackbench-12.345-6-x"), Some((12, 345)));
        assert_eq!(owner_of("12.345-99-7"), Some((12, 345)), "a process token");
        assert_eq!(owner_of("stackbench-x"), None);
    }
}
