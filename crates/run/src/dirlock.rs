//! One writer per result directory: `stackbench run` (and `--resume`) holds
//! an exclusive `flock` on `<dir>/lock` for as long as it writes there. The
//! kernel releases it when the holder exits, however it exits (SIGKILL
//! included), so a lock is never stale; the file says who holds it, for
//! the message that refuses a second writer.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::os::fd::AsRawFd as _;
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
}

impl DirLock {
    /// Takes the lock of `dir` (created if missing) or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, LockError> {
        let io = |source| LockError::Io { dir: dir.display().to_string(), source };
        fs::create_dir_all(dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let dir = std::env::temp_dir().join(format!("sb-dirlock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = DirLock::acquire(&dir).unwrap();
        // flock locks belong to the open file: a second open in this process is refused too.
        let e = DirLock::acquire(&dir).unwrap_err().to_string();
        assert!(
            e.contains(&format!("pid {}", std::process::id())) && e.contains("another stackbench"),
            "{e}"
        );
        drop(first);
        assert!(DirLock::acquire(&dir).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }
}
