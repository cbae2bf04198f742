//! Which stackbench owns a process or a cgroup: this one's identity
//! (`<pid>.<start ticks>`, unique across restarts), the token every started
//! process carries in its environment, and finding a token's holders in
//! `/proc`. A leaf: starting processes ([`crate::process`]) and reaping what
//! a killed stackbench left ([`crate::cgroup::track`]) both build on it.

use std::fs;
use std::sync::OnceLock;

/// This stackbench: `<pid>.<start ticks>`.
pub fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id() as i32;
        let start = crate::sampler::read_stat(pid).map_or(0, |s| s.start);
        format!("{pid}.{start}")
    })
}

/// The owner `(pid, start)` a cgroup name or process token carries.
pub fn owner_of(name: &str) -> Option<(i32, u64)> {
    let rest = name.strip_prefix("stackbench-").unwrap_or(name);
    let (pid, start) = rest.split('-').next()?.split_once('.')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Is that stackbench still running (same pid, same start time)?
pub fn alive(owner: (i32, u64)) -> bool {
    crate::sampler::read_stat(owner.0).is_some_and(|s| s.start == owner.1 && s.state != 'Z')
}

/// The environment variable holding a started process's token: unique per
/// start, inherited by its descendants, how [`Process::stop`] finds those that
/// left its process group.
pub const TOKEN_VAR: &str = "STACKBENCH_PROCESS_TOKEN";

/// A token no other start in this or another stackbench shares:
/// `<owner>-<nanos>-<n>`, the owner as [`owner`] names it.
pub(crate) fn new_token() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{n}", owner())
}

/// Every live process carrying a token, with the stackbench that owns the token.
pub fn token_owners() -> Vec<(i32, (i32, u64))> {
    let prefix = format!("{TOKEN_VAR}=");
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| crate::sampler::read_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X'))
        .filter_map(|pid| {
            let env = fs::read(format!("/proc/{pid}/environ")).ok()?;
            let token = env.split(|&b| b == 0).find_map(|kv| kv.strip_prefix(prefix.as_bytes()))?;
            Some((pid, owner_of(std::str::from_utf8(token).ok()?)?))
        })
        .collect()
}

/// Live processes (not zombies) whose environment holds `TOKEN_VAR=token`.
pub fn token_holders(token: &str) -> Vec<i32> {
    let entry = format!("{TOKEN_VAR}={token}");
    let Ok(dir) = fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == entry.as_bytes()))
                && crate::sampler::read_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
        })
        .collect()
}

/// Sends a signal to a pid (negative: a process group). Errors are ignored: the target may be gone.
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, signal);
    }
}
