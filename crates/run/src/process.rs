//! Starting and stopping contestant processes: the [`Launcher`] trait (the
//! side effect the lifecycle goes through, faked in its tests, the way
//! hyperfine's `Executor` has a `MockExecutor`) and [`OsLauncher`], the real one.
//!
//! A contestant runs in its own process group, pinned to its CPUs
//! (`sched_setaffinity` before `exec`, inherited by every child), inside its
//! cgroup when limits apply, with `PR_SET_PDEATHSIG` so that even a SIGKILLed
//! stackbench takes it down. Every process gets a token of its own in its
//! environment ([`crate::ownership::TOKEN_VAR`]), inherited by all its descendants, whatever
//! group or session they move to. Stopping sends SIGTERM to the whole group
//! and every holder of the token, waits for a grace period, then SIGKILLs the
//! group, the token holders, the cgroup's members and any descendant the
//! sampler saw: a daemon that `setsid`s and double-forks is still found. Each
//! start also has a tracking cgroup ([`crate::cgroup::track`]) that catches
//! even a daemon that empties its environment, and that a later stackbench
//! reaps when this one was killed with SIGKILL.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::load::Cancel;
use crate::ownership::{TOKEN_VAR, kill, new_token, token_holders};
use crate::sampler::ProcId;

/// How to start a process.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Pin it (and every child) to these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// `cgroup.procs` files to join before `exec`.
    pub cgroup_procs: Vec<PathBuf>,
    /// Where stdout and stderr go (appended); `None` discards them.
    pub log: Option<PathBuf>,
}

impl LaunchSpec {
    /// The command as a person would type it.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| if a.contains(' ') { format!("{a:?}") } else { a.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "signal {s}{}", signal_name(*s)),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGINT => " (SIGINT)",
        _ => "",
    }
}

/// How a stop went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopReport {
    pub exit: Option<Exit>,
    /// The grace period ran out and SIGKILL was needed.
    pub killed: bool,
    /// The process had already ended before the stop.
    pub already_exited: bool,
}

/// Why a process could not start.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot start `{program}`: {source}{hint}")]
    Spawn { program: String, source: std::io::Error, hint: String },
    #[error("cannot open the log file {path}: {source}")]
    Log { path: PathBuf, source: std::io::Error },
}

/// A started process.
pub trait Process: Send {
    fn pid(&self) -> u32;
    /// `Some` once it has ended (reaps it).
    fn try_exit(&mut self) -> Option<Exit>;
    /// SIGTERM to the group, SIGKILL after `grace`; also kills `extra` pids
    /// (descendants seen outside the group). Waits until it is gone.
    fn stop(&mut self, grace: Duration, extra: &[ProcId]) -> StopReport;
    /// The last lines it wrote (stdout and stderr), for incident messages.
    fn output_tail(&self) -> String;
}

/// Starts processes; [`OsLauncher`] for real, a fake in tests.
pub trait Launcher: Send + Sync {
    fn spawn(&self, spec: &LaunchSpec) -> Result<Box<dyn Process>, LaunchError>;

    /// Runs a command to its end (reset, build), killing it after `timeout`,
    /// or at once when `cancel` is set (Ctrl-C during the setup).
    fn run(&self, spec: &LaunchSpec, timeout: Duration, cancel: &Cancel) -> Result<RunOutcome, LaunchError> {
        let start = Instant::now();
        let mut p = self.spawn(spec)?;
        loop {
            if let Some(exit) = p.try_exit() {
                let _ = p.stop(Duration::ZERO, &[]); // children it left behind
                return Ok(RunOutcome {
                    exit: Some(exit),
                    elapsed: start.elapsed(),
                    tail: p.output_tail(),
                    interrupted: false,
                });
            }
            let interrupted = cancel.is_cancelled();
            if interrupted || start.elapsed() >= timeout {
                let _ = p.stop(Duration::from_secs(1), &[]);
                return Ok(RunOutcome {
                    exit: None,
                    elapsed: start.elapsed(),
                    tail: p.output_tail(),
                    interrupted,
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The end of a command run to completion.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// `None` when it timed out or was interrupted, and was killed.
    pub exit: Option<Exit>,
    pub elapsed: Duration,
    pub tail: String,
    /// Stopped by an interrupt, not by its timeout.
    pub interrupted: bool,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.exit == Some(Exit::Code(0))
    }
}

/// Processes whose process group is `pgid` and that are not zombies.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            crate::sampler::read_stat(pid).is_some_and(|s| s.pgrp == pgid && s.state != 'Z' && s.state != 'X')
        })
        .collect()
}

/// The real launcher.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsLauncher;

struct OsProcess {
    child: Child,
    log: Option<PathBuf>,
    /// The thread copying its output into `log`.
    copying: Option<crate::logcap::CappedLog>,
    exit: Option<Exit>,
    /// The value of [`crate::ownership::TOKEN_VAR`] it and its descendants carry.
    token: String,
    /// Its tracking cgroup (none where no cgroup hierarchy is writable).
    tracker: Option<crate::cgroup::track::Tracker>,
}

/// Is `program` one of the `sb-*` binaries of `crates/serve` (which plans
/// start as `{bin_dir}/sb-…`)?
fn is_rust_contestant(program: &str) -> bool {
    Path::new(program).file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("sb-"))
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(s)) => Exit::Signal(s),
        (None, None) => Exit::Code(-1),
    }
}

impl Launcher for OsLauncher {
    fn spawn(&self, spec: &LaunchSpec) -> Result<Box<dyn Process>, LaunchError> {
        use std::os::unix::process::CommandExt as _;
        let program = spec.argv.first().cloned().unwrap_or_default();
        let mut cmd = Command::new(&program);
        let token = new_token();
        cmd.args(&spec.argv[1..])
            .envs(&spec.env)
            .env(TOKEN_VAR, &token)
            .stdin(Stdio::null())
            .process_group(0);
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        // The log goes through a copying thread that caps it (`crate::logcap`).
        let copying = if let Some(path) = &spec.log {
            let (out, err, copying) = crate::logcap::start(path, crate::logcap::LOG_CAP)
                .map_err(|source| LaunchError::Log { path: path.clone(), source })?;
            cmd.stdout(out).stderr(err);
            Some(copying)
        } else {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
            None
        };
        let taken: Vec<PathBuf> =
            spec.cgroup_procs.iter().filter_map(|p| p.parent().map(Path::to_owned)).collect();
        let tracker = crate::cgroup::track::Tracker::create(&program, &taken);
        let procs: Vec<File> = spec
            .cgroup_procs
            .iter()
            .cloned()
            .chain(tracker.as_ref().map(crate::cgroup::track::Tracker::procs_file))
            .map(|p| OpenOptions::new().write(true).open(p))
            .collect::<Result<_, _>>()
            .map_err(|source| LaunchError::Spawn {
                program: program.clone(),
                source,
                hint: " (cannot open the cgroup to join)".into(),
            })?;
        let cpus = spec.cpus.clone();
        pre_exec::install(&mut cmd, cpus, procs);
        let child = cmd.spawn().map_err(|source| {
            let hint = match (source.kind(), &spec.cwd) {
                (std::io::ErrorKind::NotFound, _) if is_rust_contestant(&program) => format!(
                    " (not found: {program} is a Rust reference contestant; build it beside stackbench \
                     with `cargo build --release -p stackbench-serve`)"
                ),
                (std::io::ErrorKind::NotFound, Some(cwd)) => {
                    format!(
                        " (not found; relative programs are looked up from {}; is it built?)",
                        cwd.display()
                    )
                }
                (std::io::ErrorKind::NotFound, None) => {
                    " (not found: is it installed and on PATH, or built?)".into()
                }
                (std::io::ErrorKind::PermissionDenied, _) => " (permission denied: is it executable?)".into(),
                _ => String::new(),
            };
            LaunchError::Spawn { program: program.clone(), source, hint }
        })?;
        // `cmd` holds the pipe's writing end: the copying thread sees the end of the output
        // only once it is dropped.
        drop(cmd);
        Ok(Box::new(OsProcess { child, log: spec.log.clone(), copying, exit: None, token, tracker }))
    }
}

impl Process for OsProcess {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn try_exit(&mut self) -> Option<Exit> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten().map(exit_of);
        }
        self.exit
    }

    fn stop(&mut self, grace: Duration, extra: &[ProcId]) -> StopReport {
        let pgid = self.child.id() as i32;
        let already_exited = self.try_exit().is_some();
        kill(-pgid, libc::SIGTERM);
        for p in extra {
            if crate::sampler::read_stat(p.pid).is_some_and(|s| s.start == p.start) {
                kill(p.pid, libc::SIGTERM);
            }
        }
        for pid in token_holders(&self.token).into_iter().chain(self.tracked()) {
            kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        let gone = |me: &mut OsProcess| {
            me.try_exit().is_some()
                && group_members(pgid).is_empty()
                && token_holders(&me.token).is_empty()
                && me.tracked().is_empty()
        };
        while !gone(self) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut killed = false;
        if !gone(self) {
            killed = true;
            kill(-pgid, libc::SIGKILL);
            for pid in token_holders(&self.token) {
                kill(pid, libc::SIGKILL);
            }
            if let Some(t) = &self.tracker {
                t.kill_all(Duration::from_secs(1));
            }
        }
        for p in extra {
            if crate::sampler::read_stat(p.pid).is_some_and(|s| s.start == p.start && s.state != 'Z') {
                killed = true;
                kill(p.pid, libc::SIGKILL);
            }
        }
        if self.exit.is_none() {
            self.exit = self.child.wait().ok().map(exit_of);
        }
        // Group members are reparented when the leader dies; wait until the kernel has removed them.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let holders = token_holders(&self.token);
            let tracked = self.tracked();
            if (group_members(pgid).is_empty() && holders.is_empty() && tracked.is_empty())
                || Instant::now() >= deadline
            {
                break;
            }
            kill(-pgid, libc::SIGKILL);
            for pid in holders.into_iter().chain(tracked) {
                kill(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        StopReport { exit: self.exit, killed, already_exited }
    }

    fn output_tail(&self) -> String {
        if let Some(copying) = &self.copying {
            copying.settle(Duration::from_millis(500));
        }
        self.log.as_deref().map(|p| tail(p, 2000)).unwrap_or_default()
    }
}

impl OsProcess {
    /// The live members of its tracking cgroup.
    fn tracked(&self) -> Vec<i32> {
        self.tracker.as_ref().map_or_else(Vec::new, |t| {
            t.pids()
                .into_iter()
                .filter(|&pid| {
                    crate::sampler::read_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
                })
                .collect()
        })
    }
}

impl Drop for OsProcess {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            self.stop(Duration::ZERO, &[]);
        }
    }
}

/// The last `max` bytes of a file, from a line start, trimmed.
pub fn tail(path: &Path, max: u64) -> String {
    let Ok(mut f) = File::open(path) else { return String::new() };
    let len = f.metadata().map_or(0, |m| m.len());
    tail_of(&mut f, len, max)
}

/// The last `max` bytes of `f`, `len` long when it was measured, from a line start, trimmed.
/// Only the bytes there when `len` was measured are read: a log its process still writes
/// grows while it is read (a contestant printing nonstop added megabytes to a failure message
/// quoting its last output).
fn tail_of(f: &mut (impl std::io::Read + Seek), len: u64, max: u64) -> String {
    let start = len.saturating_sub(max);
    let _ = f.seek(SeekFrom::Start(start));
    let mut buf = Vec::new();
    let _ = f.take(len - start).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let text = if len > max { text.split_once('\n').map_or(&*text, |(_, rest)| rest) } else { &text };
    text.trim().to_owned()
}

/// The CPU affinity of the calling thread.
#[allow(unsafe_code)]
pub mod affinity {
    /// The CPUs the calling thread may run on (empty if unreadable).
    pub fn get() -> Vec<usize> {
        // SAFETY: an all-zero cpu_set_t is the empty set; sched_getaffinity
        // writes at most size_of::<cpu_set_t>() bytes into it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
        }
    }

    /// Restricts the calling thread to `cpus`; false if the kernel refused.
    pub fn set(cpus: &[usize]) -> bool {
        if cpus.is_empty() {
            return false;
        }
        // SAFETY: as in `get`; CPU_SET bounds-checks against the set's size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set) == 0
        }
    }
}

/// The pre-exec hook, the one place that needs `unsafe`.
#[allow(unsafe_code)]
mod pre_exec {
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;

    /// Between fork and exec, in the child: pin to `cpus`, join the cgroups,
    /// and ask for SIGKILL if stackbench dies.
    pub fn install(cmd: &mut Command, cpus: Option<Vec<usize>>, cgroup_procs: Vec<File>) {
        // Everything is prepared before fork: the closure only makes syscalls.
        let mut set: Option<libc::cpu_set_t> = cpus.map(|cpus| {
            // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for c in cpus {
                // SAFETY: CPU_SET bounds-checks against the set's size.
                unsafe { libc::CPU_SET(c, &mut set) };
            }
            set
        });
        let fds: Vec<i32> = cgroup_procs.iter().map(AsRawFd::as_raw_fd).collect();
        // SAFETY: the closure runs in the forked child before exec and only calls
        // async-signal-safe functions (prctl, getppid, sched_setaffinity, write)
        // on memory prepared before the fork; it allocates nothing. The Files
        // stay open in the parent until the closure (and so the Command) drops.
        unsafe {
            cmd.pre_exec(move || {
                let _keep = &cgroup_procs;
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                if libc::getppid() == 1 {
                    // stackbench died between fork and prctl.
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                for &fd in &fds {
                    if libc::write(fd, b"0".as_ptr().cast(), 1) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if let Some(set) = set.as_mut()
                    && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(script: &str) -> LaunchSpec {
        LaunchSpec { argv: vec!["sh".into(), "-c".into(), script.into()], ..LaunchSpec::default() }
    }

    /// Waits (up to 10 s, for a loaded CI machine) until the group has `n` members.
    fn wait_for_members(pgid: i32, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while group_members(pgid).len() < n {
            assert!(Instant::now() < deadline, "{:?}", group_members(pgid));
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn stops_the_whole_group_and_reports_how() {
        let mut p = OsLauncher.spawn(&spec("sleep 30 & sleep 30 & wait")).unwrap();
        let pgid = p.pid() as i32;
        wait_for_members(pgid, 3);
        let r = p.stop(Duration::from_secs(5), &[]);
        assert!(group_members(pgid).is_empty());
        assert!(!r.already_exited);
        assert_eq!(r.exit, Some(Exit::Signal(libc::SIGTERM)));
    }

    #[test]
    fn sigkill_after_the_grace_period() {
        let mut p = OsLauncher.spawn(&spec("trap '' TERM; sleep 30 & wait; sleep 30")).unwrap();
        // The background sleep exists only once the trap is set.
        wait_for_members(p.pid() as i32, 2);
        let t = Instant::now();
        let r = p.stop(Duration::from_millis(300), &[]);
        assert!(r.killed && t.elapsed() >= Duration::from_millis(300), "{r:?}");
        assert!(group_members(p.pid() as i32).is_empty());
    }

    #[test]
    fn runs_to_the_end_with_output_and_pinning() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        let log = dir.join("out.log");
        let s = LaunchSpec {
            cpus: Some(vec![0]),
            log: Some(log.clone()),
            env: BTreeMap::from([("X".into(), "42".into())]),
            ..spec("echo x=$X; grep Cpus_allowed_list /proc/self/status; exit 3")
        };
        let out = OsLauncher.run(&s, Duration::from_secs(10), &Cancel::new()).unwrap();
        assert_eq!(out.exit, Some(Exit::Code(3)));
        // Each half on its own (an `A && B || C` once let the environment go unchecked).
        assert!(out.tail.contains("x=42"), "the environment reached it: {}", out.tail);
        let pinned = out.tail.lines().find(|l| l.starts_with("Cpus_allowed_list:")).unwrap_or_default();
        assert_eq!(pinned.split_whitespace().nth(1), Some("0"), "pinned to CPU 0: {}", out.tail);
        let slow = OsLauncher.run(&spec("sleep 30"), Duration::from_millis(200), &Cancel::new()).unwrap();
        assert_eq!((slow.exit, slow.interrupted), (None, false));
        // Ctrl-C during a long build stops it at once.
        let cancel = Cancel::new();
        let c = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            c.cancel();
        });
        let t = Instant::now();
        let build = OsLauncher.run(&spec("sleep 30"), Duration::from_mins(1), &cancel).unwrap();
        assert!(build.interrupted && build.exit.is_none() && t.elapsed() < Duration::from_secs(5));
        let missing =
            OsLauncher.spawn(&LaunchSpec { argv: vec!["/no/such/program".into()], ..LaunchSpec::default() });
        let e = missing.err().unwrap().to_string();
        assert!(e.contains("/no/such/program") && e.contains("not found"), "{e}");
        let sb =
            OsLauncher.spawn(&LaunchSpec { argv: vec!["/no/bin/sb-dummy".into()], ..LaunchSpec::default() });
        let e = sb.err().unwrap().to_string();
        assert!(
            e.contains("/no/bin/sb-dummy") && e.contains("cargo build --release -p stackbench-serve"),
            "{e}"
        );
    }

    #[test]
    fn thread_affinity_round_trips() {
        std::thread::spawn(|| {
            let all = affinity::get();
            assert!(!all.is_empty());
            assert!(affinity::set(&all[..1]));
            assert_eq!(affinity::get(), all[..1]);
            assert!(affinity::set(&all));
            assert!(!affinity::set(&[]));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn tail_starts_at_a_line() {
        let scratch = tempfile::Builder::new().prefix("sb-run-").tempdir().unwrap();
        let dir = scratch.path();
        let f = dir.join("t");
        fs::write(&f, "aaaa\nbbbb\ncccc\n").unwrap();
        assert_eq!(tail(&f, 8), "cccc");
        assert_eq!(tail(&f, 100), "aaaa\nbbbb\ncccc");
    }

    #[test]
    fn tail_reads_no_more_than_asked_of_a_growing_log() {
        // Measured at 15 bytes, then grown by a process still writing: the tail is of the
        // 15 bytes, not everything written since.
        let mut grown = std::io::Cursor::new(b"aaaa\nbbbb\ncccc\n".repeat(1000));
        assert_eq!(tail_of(&mut grown, 15, 8), "cccc");
        grown.set_position(0);
        assert_eq!(tail_of(&mut grown, 15, 100), "aaaa\nbbbb\ncccc");
    }
}
