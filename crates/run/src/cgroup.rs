//! CPU and memory limits through Linux control groups: cgroup v2 when the
//! unified hierarchy has the `cpu` and `memory` controllers, else v1 (the
//! `cpu` and `memory` hierarchies), as `Documentation/admin-guide/cgroup-v2.rst`
//! and `cgroup-v1/{cpu,memory}.rst` of the kernel describe them.
//!
//! One cgroup is made per contestant start: for v1 under the cgroup stackbench
//! runs in, for v2 under a parent of stackbench's own ([`v2`]: the kernel
//! enables controllers only in cgroups without processes). The contestant joins it before `exec` (its pre-exec hook writes `0`
//! to `cgroup.procs`, which moves the writing process), so every child it forks
//! is inside too. The counters (CPU time, throttling, memory peak, OOM kills)
//! are read for each run; on drop every process left in the cgroup is killed
//! and the cgroup removed.

use std::fs;
use std::path::{Path, PathBuf};

use stackbench_record::CgroupUsage;

pub mod reserve;
pub mod track;
pub mod v2;

/// What to limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitRequest {
    /// Cores' worth of CPU time (1.0 = one core).
    pub cpu_quota: Option<f64>,
    pub memory: Option<u64>,
}

/// The limits a group applies, and the cgroup version it applies them through (1 or 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    pub request: LimitRequest,
    pub version: u8,
}

/// Why limits cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot apply {what}: {why}")]
pub struct LimitError {
    pub what: String,
    pub why: String,
}

/// Counters read from a cgroup at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CgroupCounters {
    pub cpu_s: f64,
    pub throttled_periods: u64,
    pub throttled_s: f64,
    pub memory_bytes: u64,
    /// The cgroup's own high-water mark, if it keeps one.
    pub memory_peak_bytes: Option<u64>,
    pub oom_kills: u64,
}

impl CgroupCounters {
    /// The usage between two readings (`self` is the later one) in a group with these limits.
    pub fn since(&self, start: &CgroupCounters, applied: Applied, peak_seen: u64) -> CgroupUsage {
        let req = applied.request;
        CgroupUsage {
            version: Some(applied.version),
            cpu_quota: req.cpu_quota,
            memory_limit_bytes: req.memory,
            cpu_s: (self.cpu_s - start.cpu_s).max(0.0),
            throttled_periods: self.throttled_periods.saturating_sub(start.throttled_periods),
            throttled_s: (self.throttled_s - start.throttled_s).max(0.0),
            memory_peak_bytes: peak_seen.max(self.memory_bytes),
            oom_kills: self.oom_kills.saturating_sub(start.oom_kills),
            ..CgroupUsage::default()
        }
    }
}

/// Makes the group a contestant is limited in: [`CgroupLimiter`] for real, a fake in tests.
pub trait Limiter: Send + Sync {
    fn create(&self, label: &str, req: LimitRequest) -> Result<Box<dyn LimitGroup>, LimitError>;
}

/// A group a contestant is limited in.
pub trait LimitGroup: Send {
    /// Files a new process writes `0` into to join (before `exec`).
    fn procs_files(&self) -> Vec<PathBuf>;
    fn counters(&self) -> CgroupCounters;
    fn applied(&self) -> Applied;
    /// Rewrites the CPU quota of the live group to `cores` (a budgeted run's warm-up at a
    /// larger quota, then its budget again); the group's weight stays.
    fn set_cpu_quota(&self, cores: f64) -> Result<(), String>;
}

/// Limits through Linux cgroups.
#[derive(Debug, Clone, Copy, Default)]
pub struct CgroupLimiter;

impl Limiter for CgroupLimiter {
    fn create(&self, label: &str, req: LimitRequest) -> Result<Box<dyn LimitGroup>, LimitError> {
        Ok(Box::new(Cgroup::create(label, req)?))
    }
}

impl LimitGroup for Cgroup {
    fn procs_files(&self) -> Vec<PathBuf> {
        Cgroup::procs_files(self)
    }
    fn counters(&self) -> CgroupCounters {
        Cgroup::counters(self)
    }
    fn applied(&self) -> Applied {
        Applied { request: self.request, version: self.version }
    }
    fn set_cpu_quota(&self, cores: f64) -> Result<(), String> {
        Cgroup::set_cpu_quota(self, cores)
    }
}

/// A cgroup a contestant runs in.
#[derive(Debug)]
pub struct Cgroup {
    /// One directory for v2; one per controller for v1.
    dirs: Vec<PathBuf>,
    version: u8,
    pub request: LimitRequest,
}

impl Cgroup {
    /// Creates a cgroup with these limits, v2 first, then v1.
    pub fn create(label: &str, req: LimitRequest) -> Result<Cgroup, LimitError> {
        let what = describe(req);
        let name = track::group_name(label);
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let v2_err = match create_v2(&mountinfo, &own, &name, req) {
            Ok(cg) => return Ok(cg),
            Err(e) => e,
        };
        create_v1(&mountinfo, &own, &name, req)
            .map_err(|v1| LimitError { what, why: format!("cgroup v2: {v2_err}; cgroup v1: {v1}") })
    }

    /// The `cgroup.procs` files a new process writes `0` into to join.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Reads the counters; unreadable ones stay 0.
    pub fn counters(&self) -> CgroupCounters {
        let mut c = CgroupCounters::default();
        for dir in &self.dirs {
            let read = |f: &str| fs::read_to_string(dir.join(f)).unwrap_or_default();
            let num = |f: &str| read(f).trim().parse::<u64>().ok();
            if self.version == 2 {
                let text = read("cpu.stat");
                let stat = kv(&text);
                c.cpu_s = stat("usage_usec") as f64 / 1e6;
                c.throttled_periods = stat("nr_throttled");
                c.throttled_s = stat("throttled_usec") as f64 / 1e6;
                c.memory_bytes = num("memory.current").unwrap_or(0);
                c.memory_peak_bytes = num("memory.peak");
                c.oom_kills = kv(&read("memory.events"))("oom_kill");
            } else {
                if dir.join("cpu.cfs_quota_us").exists() {
                    let text = read("cpu.stat");
                    let stat = kv(&text);
                    c.throttled_periods = stat("nr_throttled");
                    c.throttled_s = stat("throttled_time") as f64 / 1e9;
                }
                if let Some(ns) = num("cpuacct.usage") {
                    c.cpu_s = ns as f64 / 1e9;
                }
            }
            if self.version == 1 && dir.join("memory.limit_in_bytes").exists() {
                c.memory_bytes = num("memory.usage_in_bytes").unwrap_or(0);
                c.memory_peak_bytes = num("memory.max_usage_in_bytes");
                c.oom_kills = kv(&read("memory.oom_control"))("oom_kill");
            }
        }
        c
    }

    /// Rewrites the CPU quota while the group's processes run: v2 `cpu.max`, v1
    /// `cpu.cfs_period_us` and `cpu.cfs_quota_us` (the kernel applies it from the next period).
    pub fn set_cpu_quota(&self, cores: f64) -> Result<(), String> {
        let (quota, period) = quota_and_period_us(cores);
        let dir = self
            .dirs
            .iter()
            .find(|d| d.join(if self.version == 2 { "cpu.max" } else { "cpu.cfs_quota_us" }).exists())
            .ok_or("the group has no CPU quota to rewrite")?;
        if self.version == 2 {
            write(&dir.join("cpu.max"), &format!("{quota} {period}"))
        } else {
            write(&dir.join("cpu.cfs_period_us"), &period.to_string())?;
            write(&dir.join("cpu.cfs_quota_us"), &quota.to_string())
        }
    }

    /// Pids currently in the cgroup.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .dirs
            .iter()
            .flat_map(|d| {
                fs::read_to_string(d.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<i32>>()
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                crate::ownership::kill(pid, libc::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for d in &self.dirs {
            let _ = fs::remove_dir(d);
        }
    }
}

/// The period a CPU quota is enforced over, 10 ms: the kernel counts the
/// quota per period, so a server that uses its share early in a period waits
/// out the rest of it. At half a core the kernel's default 100 ms period
/// makes that wait up to 50 ms, which shows in every tail percentile; 10 ms
/// bounds it to 5 ms. A quota under the kernel's 1 ms minimum gets a longer period.
const PERIOD_US: u64 = 10_000;

/// A limited group's weight, ten times the default (v1 `cpu.shares` 1024, v2
/// `cpu.weight` 100): the quota is a ceiling, the weight makes it a
/// reservation, so a contestant gets its budget even when another process
/// shares its core (a compiler on a shared machine), as a Kubernetes pod
/// whose request equals its limit does.
const RESERVING_SHARES_V1: u64 = 10_240;
const RESERVING_WEIGHT_V2: u64 = 1_000;

/// `(quota, period)` in µs for `cores` of CPU: [`PERIOD_US`], or longer where
/// the quota would be under the kernel's 1 ms minimum.
fn quota_and_period_us(cores: f64) -> (u64, u64) {
    let period = PERIOD_US.max((1_000.0 / cores).ceil() as u64).min(1_000_000);
    (((cores * period as f64).round() as u64).max(1_000), period)
}

fn describe(req: LimitRequest) -> String {
    let mut parts = Vec::new();
    if let Some(q) = req.cpu_quota {
        parts.push(format!("cpu_quota = {q}"));
    }
    if let Some(m) = req.memory {
        parts.push(format!("memory = {m} bytes"));
    }
    parts.join(" and ")
}

/// `key value` lines as a lookup (0 when absent).
fn kv(text: &str) -> impl Fn(&str) -> u64 + '_ {
    move |key| {
        text.lines()
            .find_map(|l| {
                l.split_once(' ').filter(|(k, _)| *k == key).and_then(|(_, v)| v.trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

/// Mount points by filesystem type and super options: `(mount point, fstype, super options)`.
fn mounts(mountinfo: &str) -> Vec<(PathBuf, String, String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let mount_point = pre.split(' ').nth(4)?;
            let mut post = post.split(' ');
            let fstype = post.next()?;
            let opts = post.nth(1).unwrap_or("");
            Some((PathBuf::from(mount_point), fstype.to_owned(), opts.to_owned()))
        })
        .collect()
}

/// Our cgroup path in the hierarchy that has `controller` (`""` = v2).
fn own_path(own: &str, controller: &str) -> Option<String> {
    own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit =
            if controller.is_empty() { ctrls.is_empty() } else { ctrls.split(',').any(|c| c == controller) };
        hit.then(|| path.to_owned())
    })
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {value:?} to {}: {e}", path.display()))
}

fn mkdir(path: &Path) -> Result<(), String> {
    fs::create_dir(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

fn create_v2(mountinfo: &str, own: &str, name: &str, req: LimitRequest) -> Result<Cgroup, String> {
    let mount = mounts(mountinfo)
        .into_iter()
        .find(|(_, t, _)| t == "cgroup2")
        .map(|(m, _, _)| m)
        .ok_or("no cgroup2 file system is mounted")?;
    let path = own_path(own, "").ok_or("this process is not in a v2 cgroup")?;
    let needed: Vec<&str> = [("cpu", req.cpu_quota.is_some()), ("memory", req.memory.is_some())]
        .iter()
        .filter(|x| x.1)
        .map(|x| x.0)
        .collect();
    let parent = v2::limits_parent(&mount, &path, &needed)?;
    let dir = parent.join(name);
    mkdir(&dir)?;
    let cg = Cgroup { dirs: vec![dir.clone()], version: 2, request: req };
    if let Some(q) = req.cpu_quota {
        let (quota, period) = quota_and_period_us(q);
        write(&dir.join("cpu.max"), &format!("{quota} {period}"))?;
        write(&dir.join("cpu.weight"), &RESERVING_WEIGHT_V2.to_string())?;
    }
    if let Some(m) = req.memory {
        write(&dir.join("memory.max"), &m.to_string())?;
        let _ = write(&dir.join("memory.swap.max"), "0");
    }
    Ok(cg)
}

fn create_v1(mountinfo: &str, own: &str, name: &str, req: LimitRequest) -> Result<Cgroup, String> {
    let all = mounts(mountinfo);
    let mut cg = Cgroup { dirs: Vec::new(), version: 1, request: req };
    for (controller, wanted) in [
        ("cpu", req.cpu_quota.is_some()),
        ("cpuacct", req.cpu_quota.is_some()),
        ("memory", req.memory.is_some()),
    ] {
        if !wanted {
            continue;
        }
        let co_mounted = all.iter().any(|(_, t, o)| {
            t == "cgroup" && o.split(',').any(|x| x == "cpu") && o.split(',').any(|x| x == "cpuacct")
        });
        if controller == "cpuacct" && co_mounted {
            continue; // the `cpu` directory already has the accounting files
        }
        let optional = controller == "cpuacct";
        let mount = all
            .iter()
            .find(|(_, t, o)| t == "cgroup" && o.split(',').any(|x| x == controller))
            .map(|(m, _, _)| m.clone())
            .ok_or_else(|| format!("no v1 `{controller}` hierarchy is mounted"));
        let mount = match mount {
            Ok(m) => m,
            Err(_) if optional => continue,
            Err(e) => return Err(e),
        };
        let path = own_path(own, controller).unwrap_or_else(|| "/".into());
        let dir = mount.join(path.trim_start_matches('/')).join(name);
        match mkdir(&dir) {
            Ok(()) => cg.dirs.push(dir.clone()),
            Err(_) if optional => continue,
            Err(e) => return Err(e),
        }
        if controller == "cpu" {
            let (quota, period) = quota_and_period_us(req.cpu_quota.unwrap_or(1.0));
            write(&dir.join("cpu.cfs_period_us"), &period.to_string())?;
            write(&dir.join("cpu.cfs_quota_us"), &quota.to_string())?;
            write(&dir.join("cpu.shares"), &RESERVING_SHARES_V1.to_string())?;
        } else if controller == "memory" {
            let m = req.memory.unwrap_or(u64::MAX);
            write(&dir.join("memory.limit_in_bytes"), &m.to_string())?;
            // Swap would let a contestant exceed its limit silently: cap memory+swap too where the kernel allows.
            let _ = write(&dir.join("memory.memsw.limit_in_bytes"), &m.to_string());
        }
    }
    Ok(cg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw
31 25 0:27 / /sys/fs/cgroup/cpu rw,relatime shared:11 - cgroup cgroup rw,cpu
32 25 0:28 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory
";
    const OWN: &str = "4:memory:/process_api/abc\n1:cpu:/\n0::/\n";

    #[test]
    fn reads_mounts_and_own_paths() {
        let m = mounts(MOUNTINFO);
        assert_eq!(m[0], (PathBuf::from("/sys/fs/cgroup/unified"), "cgroup2".into(), "rw".into()));
        assert_eq!(m[1].2, "rw,cpu");
        assert_eq!(own_path(OWN, "memory").as_deref(), Some("/process_api/abc"));
        assert_eq!(own_path(OWN, "cpu").as_deref(), Some("/"));
        assert_eq!(own_path(OWN, "").as_deref(), Some("/"));
        assert_eq!(own_path("1:cpu,cpuacct:/x\n", "cpuacct").as_deref(), Some("/x"));
    }

    #[test]
    fn a_quota_is_counted_over_ten_milliseconds_unless_it_would_be_under_one() {
        assert_eq!(quota_and_period_us(0.5), (5_000, 10_000));
        assert_eq!(quota_and_period_us(2.0), (20_000, 10_000));
        assert_eq!(quota_and_period_us(0.1), (1_000, 10_000));
        assert_eq!(
            quota_and_period_us(0.05),
            (1_000, 20_000),
            "0.5 ms of 10 ms is under the kernel's minimum"
        );
        assert_eq!(quota_and_period_us(0.01), (1_000, 100_000));
    }

    #[test]
    fn counters_differ_over_a_run() {
        let start =
            CgroupCounters { cpu_s: 1.0, throttled_periods: 5, throttled_s: 0.5, ..Default::default() };
        let end = CgroupCounters {
            cpu_s: 3.5,
            throttled_periods: 9,
            throttled_s: 0.75,
            memory_bytes: 10,
            memory_peak_bytes: Some(30),
            oom_kills: 1,
        };
        let request = LimitRequest { cpu_quota: Some(1.0), memory: None };
        let u = end.since(&start, Applied { request, version: 1 }, 20);
        assert_eq!(
            (u.cpu_s, u.throttled_periods, u.throttled_s, u.memory_peak_bytes, u.oom_kills, u.version),
            (2.5, 4, 0.25, 20, 1, Some(1))
        );
        assert_eq!(kv("nr_periods 3\nnr_throttled 2\n")("nr_throttled"), 2);
    }
}
