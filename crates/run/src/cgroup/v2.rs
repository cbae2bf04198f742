//! Where cgroup v2 limits can live. The kernel's "no internal processes"
//! rule (`Documentation/admin-guide/cgroup-v2.rst`) refuses to enable a
//! controller in the `cgroup.subtree_control` of a non-root cgroup that has
//! processes of its own, and stackbench's own cgroup has one: stackbench.
//! So, as container runtimes do, stackbench makes a parent of its own,
//! `stackbench-<owner>` under the cgroup it was started in, moves itself into
//! a leaf under it (`…/self`), and enables `cpu`/`memory` down the path: in
//! its original cgroup (now without processes, unless others share it) and
//! in the parent, under which every limited contestant gets its cgroup.
//!
//! The steps work on any directory laid out as cgroupfs v2 is (tested on one
//! made in a temporary directory; the kernel's refusals come back as errors).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{mkdir, write};

/// The prepared parent, once per process (stackbench moves itself only once).
static PARENT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The directory under which limited contestants' v2 cgroups are made, with
/// `needed` controllers enabled for its children.
pub fn limits_parent(mount: &Path, own: &str, needed: &[&str]) -> Result<PathBuf, String> {
    let mut cached = PARENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(p) = cached.as_ref()
        && enabled(p, needed)
    {
        return Ok(p.clone());
    }
    let parent = prepare(mount, own, needed, std::process::id(), crate::ownership::owner())?;
    *cached = Some(parent.clone());
    Ok(parent)
}

/// Are `needed` controllers enabled for the children of `dir`?
fn enabled(dir: &Path, needed: &[&str]) -> bool {
    let on = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    needed.iter().all(|c| on.split_whitespace().any(|x| x == *c || x == format!("+{c}")))
}

/// The steps of [`limits_parent`], for process `me` owned as `owner`.
pub fn prepare(mount: &Path, own: &str, needed: &[&str], me: u32, owner: &str) -> Result<PathBuf, String> {
    let original = mount.join(own.trim_start_matches('/'));
    let available = fs::read_to_string(original.join("cgroup.controllers")).unwrap_or_default();
    for c in needed {
        if !available.split_whitespace().any(|a| a == *c) {
            return Err(format!(
                "the `{c}` controller is not available in {} (its parent does not delegate it)",
                original.display()
            ));
        }
    }
    let parent = original.join(format!("stackbench-{owner}"));
    let leaf = parent.join("self");
    for dir in [&parent, &leaf] {
        if !dir.exists() {
            mkdir(dir)?;
        }
    }
    write(&leaf.join("cgroup.procs"), &me.to_string())
        .map_err(|e| format!("cannot move stackbench into its own leaf cgroup: {e}"))?;
    let enable: Vec<String> = needed.iter().map(|c| format!("+{c}")).collect();
    let enable = enable.join(" ");
    if !enabled(&original, needed) {
        write(&original.join("cgroup.subtree_control"), &enable).map_err(|e| {
            let others: Vec<String> = fs::read_to_string(original.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect();
            if others.is_empty() {
                e
            } else {
                format!(
                    "{e}: {} still holds processes ({}), and the kernel enables controllers only in a \
                     cgroup without processes; start stackbench in a cgroup of its own, e.g. \
                     `systemd-run --scope -p Delegate=yes stackbench …`",
                    original.display(),
                    others.join(", ")
                )
            }
        })?;
    }
    write(&parent.join("cgroup.subtree_control"), &enable)?;
    Ok(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory laid out as cgroupfs v2 is: the root with its files, and
    /// stackbench's cgroup `/user.slice/session-1.scope` holding its pid.
    fn cgroupfs(tag: &str) -> tempfile::TempDir {
        let scratch = tempfile::Builder::new().prefix(&format!("sb-cgroupfs-{tag}-")).tempdir().unwrap();
        let root = scratch.path().to_owned();
        let own = root.join("user.slice/session-1.scope");
        fs::create_dir_all(&own).unwrap();
        for dir in [root.clone(), root.join("user.slice"), own.clone()] {
            fs::write(dir.join("cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
            fs::write(dir.join("cgroup.subtree_control"), "").unwrap();
        }
        fs::write(own.join("cgroup.procs"), "4242\n").unwrap();
        scratch
    }

    #[test]
    fn stackbench_moves_into_a_leaf_and_enables_the_controllers_above_it() {
        let scratch = cgroupfs("layout");
        let root = scratch.path();
        let parent =
            prepare(root, "/user.slice/session-1.scope", &["cpu", "memory"], 4242, "4242.99").unwrap();
        let own = root.join("user.slice/session-1.scope");
        assert_eq!(parent, own.join("stackbench-4242.99"));
        assert_eq!(fs::read_to_string(parent.join("self/cgroup.procs")).unwrap(), "4242");
        assert_eq!(fs::read_to_string(own.join("cgroup.subtree_control")).unwrap(), "+cpu +memory");
        assert_eq!(fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap(), "+cpu +memory");
        // Prepared again (a second limited contestant): nothing breaks, the same parent.
        let again =
            prepare(root, "/user.slice/session-1.scope", &["cpu", "memory"], 4242, "4242.99").unwrap();
        assert_eq!(again, parent);
    }

    #[test]
    fn a_controller_the_parent_does_not_delegate_is_named() {
        let scratch = cgroupfs("missing");
        let root = scratch.path();
        fs::write(root.join("user.slice/session-1.scope/cgroup.controllers"), "pids\n").unwrap();
        let e = prepare(root, "/user.slice/session-1.scope", &["cpu"], 1, "1.1").unwrap_err();
        assert!(e.contains("`cpu` controller is not available"), "{e}");
    }
}
