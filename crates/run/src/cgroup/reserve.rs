//! A reserved share of the CPU for the load generator. A contestant's CPU
//! budget is a ceiling (its quota) and a reservation (its group's weight, ten
//! times the default), so another process on its core cannot take its budget;
//! the generator, which must out-pace that budget, gets the same reservation
//! on its own cores, or a compiler sharing them would make the generator the
//! bottleneck again and the rate its, not the server's.
//!
//! cgroup v1 moves single threads (a hierarchy's `tasks` file), so the thread
//! that drives the load joins a group of stackbench's with the reserving
//! `cpu.shares`, and every worker it starts inherits it; when the load ends
//! it moves back and the group is removed. cgroup v2 moves whole processes
//! only (outside threaded subtrees), and there the generator runs without a
//! reservation, which [`available`] says.

use std::fs;
use std::path::PathBuf;

use super::{mkdir, mounts, own_path, write};

/// The load thread's membership in a reserving group; moves it back when dropped.
#[derive(Debug)]
pub struct Reserved {
    dir: PathBuf,
    back: PathBuf,
    tid: u32,
}

/// This thread's id, from `/proc/thread-self` (`<pid>/task/<tid>`).
fn this_thread() -> Result<u32, String> {
    let link =
        fs::read_link("/proc/thread-self").map_err(|e| format!("cannot read /proc/thread-self: {e}"))?;
    link.file_name()
        .and_then(|t| t.to_str())
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("/proc/thread-self points to {}, not <pid>/task/<tid>", link.display()))
}

/// The v1 `cpu` hierarchy's directory this process is in.
fn v1_cpu_dir() -> Result<PathBuf, String> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mount = mounts(&mountinfo)
        .into_iter()
        .find(|(_, t, o)| t == "cgroup" && o.split(',').any(|x| x == "cpu"))
        .map(|(m, _, _)| m)
        .ok_or("no v1 `cpu` hierarchy is mounted (cgroup v2 moves whole processes only)")?;
    let path = own_path(&own, "cpu").unwrap_or_else(|| "/".into());
    Ok(mount.join(path.trim_start_matches('/')))
}

/// Whether the load can be given a reserved share here; `Err` says why not.
pub fn available() -> Result<(), String> {
    let dir = v1_cpu_dir()?;
    let probe = dir.join(super::track::group_name("probe"));
    mkdir(&probe)?;
    let shares = write(&probe.join("cpu.shares"), &super::RESERVING_SHARES_V1.to_string());
    let _ = fs::remove_dir(&probe);
    shares
}

/// Moves the calling thread into a new group with the reserving weight;
/// threads it starts from now on are in it too.
pub fn reserve_this_thread(label: &str) -> Result<Reserved, String> {
    let tid = this_thread()?;
    let back = v1_cpu_dir()?;
    let dir = back.join(super::track::group_name(label));
    mkdir(&dir)?;
    let reserved = Reserved { dir, back, tid };
    write(&reserved.dir.join("cpu.shares"), &super::RESERVING_SHARES_V1.to_string())?;
    write(&reserved.dir.join("tasks"), &tid.to_string())?;
    Ok(reserved)
}

impl Reserved {
    /// The group's directory.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The threads in the group (the load's, while it runs).
    pub fn threads(&self) -> Vec<u32> {
        fs::read_to_string(self.dir.join("tasks"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        // Its workers have ended (the load joins them); the thread itself goes back.
        let _ = fs::write(self.back.join("tasks"), self.tid.to_string());
        let _ = fs::remove_dir(&self.dir);
    }
}
