//! The sampler: every `interval` (250 ms by default) it reads the contestant's
//! whole process tree from `/proc` (proc(5): `stat` for CPU ticks, state,
//! threads and process group, `statm` for resident pages, `fd/` for open
//! files) and turns two readings into one [`Sample`]: CPU % of one core since
//! the previous reading, RSS, threads and fds summed over the tree.
//!
//! The tree is the root and every process whose parent chain leads to it, plus
//! anything still in the root's process group. CPU time of children that
//! ended and were reaped inside the tree is kept through `cutime`/`cstime`.
//! Reading `/proc` is behind [`ProcSource`] so the arithmetic is tested on fixed
//! text.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use stackbench_record::{ProcessSamples, Quantiles, Sample};

/// A process identity that survives pid reuse: pid and start time (clock ticks since boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcId {
    pub pid: i32,
    pub start: u64,
}

/// The fields of `/proc/<pid>/stat` the sampler uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// utime + stime + cutime + cstime, clock ticks.
    pub ticks: u64,
    pub threads: u64,
    /// Start time, clock ticks after boot.
    pub start: u64,
}

/// Parses `/proc/<pid>/stat` (the command name may hold spaces and parentheses).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state); field N is f[N - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<i64>().ok());
    Some(Stat {
        pid,
        state: f.first()?.chars().next()?,
        ppid: num(4)? as i32,
        pgrp: num(5)? as i32,
        ticks: (num(14)? + num(15)? + num(16)?.max(0) + num(17)?.max(0)) as u64,
        threads: num(20)? as u64,
        start: num(22)? as u64,
    })
}

/// Reads one process's `stat`.
pub fn read_stat(pid: i32) -> Option<Stat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Where process facts come from.
pub trait ProcSource: Send {
    /// Every process's stat.
    fn all(&mut self) -> Vec<Stat>;
    /// Resident bytes of a process.
    fn rss_bytes(&mut self, pid: i32) -> u64;
    /// Open file descriptors of a process.
    fn fds(&mut self, pid: i32) -> u64;
    /// Clock ticks per second.
    fn ticks_per_second(&self) -> u64;
}

/// The real `/proc`.
#[derive(Debug)]
pub struct Procfs {
    page: u64,
    hz: u64,
}

impl Default for Procfs {
    fn default() -> Self {
        // SAFETY: sysconf has no preconditions.
        #[allow(unsafe_code)]
        let (page, hz) = unsafe { (libc::sysconf(libc::_SC_PAGESIZE), libc::sysconf(libc::_SC_CLK_TCK)) };
        Procfs { page: u64::try_from(page).unwrap_or(4096), hz: u64::try_from(hz).unwrap_or(100).max(1) }
    }
}

impl ProcSource for Procfs {
    fn all(&mut self) -> Vec<Stat> {
        let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).filter_map(read_stat).collect()
    }
    fn rss_bytes(&mut self, pid: i32) -> u64 {
        let statm = fs::read_to_string(format!("/proc/{pid}/statm")).unwrap_or_default();
        statm.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0) * self.page
    }
    fn fds(&mut self, pid: i32) -> u64 {
        fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64)
    }
    fn ticks_per_second(&self) -> u64 {
        self.hz
    }
}

/// One reading of a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeReading {
    pub ticks: u64,
    pub rss_bytes: u64,
    pub threads: u64,
    pub fds: u64,
    pub members: Vec<ProcId>,
}

/// The processes of the tree rooted at `root` (and of its process group).
pub fn tree(all: &[Stat], root: i32) -> Vec<Stat> {
    let mut children: BTreeMap<i32, Vec<&Stat>> = BTreeMap::new();
    for s in all {
        children.entry(s.ppid).or_default().push(s);
    }
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&Stat> = all.iter().filter(|s| s.pid == root || s.pgrp == root).collect();
    let mut out = Vec::new();
    while let Some(s) = stack.pop() {
        if !seen.insert(s.pid) {
            continue;
        }
        out.push(*s);
        stack.extend(children.get(&s.pid).into_iter().flatten());
    }
    out
}

/// Reads the tree once.
pub fn read_tree(src: &mut dyn ProcSource, root: i32) -> TreeReading {
    let all = src.all();
    let mut r = TreeReading::default();
    for s in tree(&all, root) {
        if s.state == 'Z' {
            continue;
        }
        r.ticks += s.ticks;
        r.threads += s.threads;
        r.rss_bytes += src.rss_bytes(s.pid);
        r.fds += src.fds(s.pid);
        r.members.push(ProcId { pid: s.pid, start: s.start });
    }
    r
}

/// Turns readings into samples and remembers every process it saw.
#[derive(Debug, Default)]
pub struct Sampler {
    prev: Option<(u64, TreeReading)>,
    pub points: Vec<Sample>,
    /// Wall clock (ms since the epoch) of each point, to cut the warm-up off.
    pub wall_ms: Vec<u64>,
    /// Every process seen in the tree (for the stop: no orphan).
    pub seen: BTreeSet<ProcId>,
}

impl Sampler {
    /// Adds a reading taken `t_ms` after the sampler started (wall clock `wall_ms`).
    pub fn add(&mut self, t_ms: u64, wall_ms: u64, reading: TreeReading, hz: u64) {
        self.seen.extend(reading.members.iter().copied());
        if let Some((prev_t, prev)) = &self.prev
            && t_ms > *prev_t
        {
            let cpu_s = reading.ticks.saturating_sub(prev.ticks) as f64 / hz.max(1) as f64;
            let cpu_percent = 100.0 * cpu_s / ((t_ms - prev_t) as f64 / 1000.0);
            self.points.push(Sample {
                t_ms,
                cpu_percent,
                rss_bytes: reading.rss_bytes,
                threads: reading.threads,
                fds: reading.fds,
            });
            self.wall_ms.push(wall_ms);
        }
        self.prev = Some((t_ms, reading));
    }

    /// The samples taken at or after `from_wall_ms`, re-based to start there, summarised.
    pub fn summary(&self, interval_ms: u64, from_wall_ms: u64) -> ProcessSamples {
        let points: Vec<Sample> = self
            .points
            .iter()
            .zip(&self.wall_ms)
            .filter(|(_, w)| **w >= from_wall_ms)
            .map(|(p, w)| Sample { t_ms: w - from_wall_ms, ..*p })
            .collect();
        let cpu: Vec<f64> = points.iter().map(|p| p.cpu_percent).collect();
        let rss: Vec<f64> = points.iter().map(|p| p.rss_bytes as f64).collect();
        ProcessSamples {
            interval_ms,
            cpu_percent: Quantiles::of(&cpu),
            rss_bytes: Quantiles::of(&rss),
            threads_max: points.iter().map(|p| p.threads).max().unwrap_or(0),
            fds_max: points.iter().map(|p| p.fds).max().unwrap_or(0),
            points,
            cgroup: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: i32, ppid: i32, pgrp: i32, ticks: u64) -> Stat {
        Stat { pid, state: 'S', ppid, pgrp, ticks, threads: 2, start: pid as u64 }
    }

    #[test]
    fn parses_a_real_stat_line() {
        let line = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 25 7 3 1 20 0 4 0 5555 1000000 300 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(
            (s.pid, s.state, s.ppid, s.pgrp, s.ticks, s.threads, s.start),
            (1234, 'S', 1, 1234, 36, 4, 5555)
        );
        let me = read_stat(std::process::id() as i32).unwrap();
        assert_eq!(me.pid, std::process::id() as i32);
        assert!(me.threads >= 1);
    }

    #[test]
    fn the_tree_follows_parents_and_the_group() {
        let all = [
            stat(10, 1, 10, 1),
            stat(11, 10, 10, 1),
            stat(12, 11, 12, 1),
            stat(13, 1, 10, 1),
            stat(20, 1, 20, 1),
        ];
        let mut pids: Vec<i32> = tree(&all, 10).iter().map(|s| s.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [10, 11, 12, 13]);
    }

    struct Fixed(Vec<Vec<Stat>>);
    impl ProcSource for Fixed {
        fn all(&mut self) -> Vec<Stat> {
            self.0.remove(0)
        }
        fn rss_bytes(&mut self, _: i32) -> u64 {
            1000
        }
        fn fds(&mut self, _: i32) -> u64 {
            3
        }
        fn ticks_per_second(&self) -> u64 {
            100
        }
    }

    #[test]
    fn cpu_percent_of_one_core_and_the_warmup_cut() {
        let mut src = Fixed(vec![
            vec![stat(10, 1, 10, 0), stat(11, 10, 10, 0)],
            vec![stat(10, 1, 10, 25), stat(11, 10, 10, 25)],
            vec![stat(10, 1, 10, 50), stat(11, 10, 10, 50)],
        ]);
        let mut s = Sampler::default();
        for (i, t) in [0u64, 250, 500].into_iter().enumerate() {
            let r = read_tree(&mut src, 10);
            s.add(t, 10_000 + t, r, 100);
            assert_eq!(s.points.len(), i);
        }
        // 50 ticks (0.5 s of CPU) in 0.25 s: two cores busy.
        assert!((s.points[0].cpu_percent - 200.0).abs() < 1e-9);
        assert_eq!((s.points[0].rss_bytes, s.points[0].threads, s.points[0].fds), (2000, 4, 6));
        let all = s.summary(250, 0);
        assert_eq!(all.points.len(), 2);
        let measured = s.summary(250, 10_400);
        assert_eq!(measured.points.len(), 1);
        assert_eq!(measured.points[0].t_ms, 100);
        assert_eq!(measured.threads_max, 4);
        assert_eq!(s.seen.len(), 2);
    }
}
