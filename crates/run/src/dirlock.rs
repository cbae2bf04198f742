//! One writer per result directory: `stackbench run` (and `--resume`) holds
//! an exclusive `flock` on `<dir>/lock` for as long as it writes there. The
//! kernel releases it when the holder exits, however it exits (SIGKILL
//! included), so a lock is never stale; the file says who holds it, for
//! the message that refuses a second writer. A directory whose entries are
//! symbolic links is refused before the lock is taken (nothing is ever
//! written through a link), and the lock file is opened without following one.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// The lock file inside a result directory.
pub const LOCK: &str = "lock";

/// A held lock; dropping it releases the directory.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{dir} is being written by another stackbench ({holder}); wait for it to finish, or choose another --out"
    )]
    Held { dir: String, holder: String },
    #[error("cannot lock {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
    #[error(
        "{path} is a symbolic link; stackbench writes a result directory's own files, never through \
         a link (which could overwrite its target): remove it, or choose another --out"
    )]
    Symlink { path: String },
}

impl DirLock {
    /// Takes the lock of `dir` (created if missing) or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, LockError> {
        let io = |source| LockError::Io { dir: dir.display().to_string(), source };
        fs::create_dir_all(dir).map_err(io)?;
        refuse_symlinks(dir)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join(LOCK))
            .map_err(io)?;
        // SAFETY: flock(2) on a descriptor this function owns; no memory is involved.
        #[allow(unsafe_code)]
        let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !taken {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(LockError::Held {
                dir: dir.display().to_string(),
                holder: if holder.is_empty() { "pid unknown".to_owned() } else { holder.to_owned() },
            });
        }
        let me = format!("pid {}, {}", std::process::id(), std::env::args().collect::<Vec<_>>().join(" "));
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(me.as_bytes()).map_err(io)?;
        Ok(DirLock { _file: file })
    }
}

/// The entries stackbench writes in a result directory (and, for its folders, what they hold)
/// must be its own files and folders: a symbolic link among them is refused before anything
/// is written, so nothing is written through one.
fn refuse_symlinks(dir: &Path) -> Result<(), LockError> {
    let io = |source| LockError::Io { dir: dir.display().to_string(), source };
    let link = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let refuse = |p: &Path| Err(LockError::Symlink { path: p.display().to_string() });
    for name in [LOCK, "manifest.json", "invocation.json", "logs", "runs", "contestants"] {
        let path = dir.join(name);
        if link(&path) {
            return refuse(&path);
        }
    }
    for folder in ["logs", "runs", "contestants"] {
        let entries = match fs::read_dir(dir.join(folder)) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io)?;
            if entry.file_type().map_err(io)?.is_symlink() {
                return refuse(&entry.path());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let scratch = tempfile::Builder::new().prefix("sb-dirlock-").tempdir().unwrap();
        let dir = scratch.path().join("results");
        let first = DirLock::acquire(&dir).unwrap();
        // flock locks belong to the open file: a second open in this process is refused too.
        let e = DirLock::acquire(&dir).unwrap_err().to_string();
        assert!(
            e.contains(&format!("pid {}", std::process::id())) && e.contains("another stackbench"),
            "{e}"
        );
        drop(first);
        assert!(DirLock::acquire(&dir).is_ok());
    }
}
