//! Contestant logs, bounded. A contestant's stdout and stderr go through one
//! pipe to a thread that appends them to its log file; once the file reaches
//! [`LOG_CAP`] it is moved to `<name>.log.1` (replacing an older one) and a
//! new `<name>.log` begins with a line saying so. A contestant printing
//! nonstop (1.69 GB in 3 s was seen) costs at most twice the cap on disk, and
//! the newest output, which a failure message quotes, is always kept.
//!
//! Files are opened without following a symbolic link, like every file of a
//! result directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The most one log file holds before it is rotated (the log and its one older file hold at
/// most twice this).
pub const LOG_CAP: u64 = 32 * 1024 * 1024;

/// The copying thread of one started process; tells when it has seen the end of the output.
#[derive(Debug)]
pub struct CappedLog {
    done: Arc<(Mutex<bool>, Condvar)>,
}

/// Opens (appends to) `path` and starts copying into it; returns the stdout and stderr to
/// give the process.
pub fn start(path: &Path, cap: u64) -> io::Result<(Stdio, Stdio, CappedLog)> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let file = open(path, false)?;
    let (reader, writer) = io::pipe()?;
    let out = Stdio::from(writer.try_clone()?);
    let err = Stdio::from(writer);
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let flag = Arc::clone(&done);
    let path = path.to_owned();
    std::thread::Builder::new().name("sb-log".into()).spawn(move || {
        copy(reader, Sink { path, file, cap });
        *flag.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        flag.1.notify_all();
    })?;
    Ok((out, err, CappedLog { done }))
}

impl CappedLog {
    /// Waits until everything the process wrote is in the file, at most `wait` (a daemon it
    /// started may hold the pipe open long after).
    pub fn settle(&self, wait: Duration) {
        let (lock, cv) = &*self.done;
        let done = lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = cv.wait_timeout_while(done, wait, |d| !*d);
    }
}

fn open(path: &Path, truncate: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).custom_flags(libc::O_NOFOLLOW);
    if truncate {
        o.write(true).truncate(true);
    } else {
        o.append(true);
    }
    o.open(path)
}

struct Sink {
    path: PathBuf,
    file: File,
    cap: u64,
}

fn copy(mut from: io::PipeReader, mut sink: Sink) {
    let mut written = sink.file.metadata().map_or(0, |m| m.len());
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if written + n as u64 > sink.cap {
            // Cannot rotate: what comes next is read and dropped, the log stays at its cap.
            let Ok((file, header)) = rotate(&sink) else {
                written = sink.cap;
                continue;
            };
            sink.file = file;
            written = header;
        }
        if sink.file.write_all(&buf[..n]).is_ok() {
            written += n as u64;
        }
    }
}

/// Moves the full log to `<log>.1` and starts a new one with a line saying so.
fn rotate(sink: &Sink) -> io::Result<(File, u64)> {
    let mut older = sink.path.clone().into_os_string();
    older.push(".1");
    let older = PathBuf::from(older);
    fs::rename(&sink.path, &older)?;
    let mut file = open(&sink.path, true)?;
    let line = format!(
        "[stackbench: this log reached {} MiB; the output before this line is in {} (older output was dropped)]\n",
        sink.cap >> 20,
        older.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    );
    file.write_all(line.as_bytes())?;
    Ok((file, line.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_rotates_at_its_cap_and_keeps_the_newest_output() {
        let scratch = tempfile::Builder::new().prefix("sb-logcap-").tempdir().unwrap();
        let dir = scratch.path().join("logs");
        let log = dir.join("c.log");
        let (out, _err, copying) = start(&log, 1 << 20).unwrap();
        // 5 MiB of output, then a last line.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "head -c 5242880 /dev/zero | tr '\\0' x; echo; echo the last line"])
            .stdout(out)
            .spawn()
            .unwrap();
        child.wait().unwrap();
        copying.settle(Duration::from_secs(10));
        let now = fs::metadata(&log).unwrap().len();
        let older = fs::metadata(dir.join("c.log.1")).unwrap().len();
        assert!(now <= 1 << 20 && older <= 1 << 20, "{now} and {older} bytes");
        let text = fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("[stackbench: this log reached 1 MiB"), "{}", &text[..80.min(text.len())]);
        assert!(text.trim_end().ends_with("the last line"));
    }
}
