//! Real server processes in tests: start one, read the address it announces
//! on its first stdout line (`… listening on http://ADDR; …`, or `https://`, the line the
//! orchestrator parses too), stop it with SIGTERM and wait for its exit, and
//! kill it when a test fails before that. And [`finish`]: a command run to its end within
//! bounds of time and memory, its output read while it runs.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to exit after SIGTERM.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The address in a `listening on http://ADDR; …` (or `https://ADDR`) line.
pub fn listening_addr(line: &str) -> Option<SocketAddr> {
    let rest = line.split("http://").nth(1).or_else(|| line.split("https://").nth(1))?;
    rest.split([';', ' ']).next()?.trim().parse().ok()
}

/// A running server; killed (SIGKILL) and reaped when dropped.
#[derive(Debug)]
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// The stdout lines read so far, without their line ends; the first holds the address.
    pub lines: Vec<String>,
    stdout: Option<BufReader<ChildStdout>>,
}

impl Server {
    /// Starts `cmd` and reads its address.
    ///
    /// # Panics
    /// When it cannot start, or exits or prints no address on its first line
    /// (the panic message holds what it printed on stderr).
    pub fn start(cmd: &mut Command) -> Server {
        Server::try_start(cmd).unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"))
    }

    /// Starts `cmd` with stdout and stderr piped and reads its first stdout
    /// line. `Err` holds its stderr when it exits instead of listening. Its
    /// later stderr is copied to the test's (shown when the test fails).
    pub fn try_start(cmd: &mut Command) -> Result<Server, String> {
        let mut child =
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        let Some(addr) = listening_addr(&line) else {
            // Give it a moment to say why on stderr and exit by itself.
            let deadline = Instant::now() + Duration::from_secs(2);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let output = child.wait_with_output().map_err(|e| e.to_string())?;
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(if line.is_empty() {
                stderr.into_owned()
            } else {
                format!("no `http://ADDR` in its first line {line:?}; stderr: {stderr}")
            });
        };
        if let Some(stderr) = child.stderr.take() {
            // Line by line as it comes, with `eprintln!` (not the raw handle):
            // the spawned thread inherits the test's output capture.
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    eprintln!("{line}");
                }
            });
        }
        let first = line.trim_end().to_owned();
        Ok(Server { child, addr, lines: vec![first], stdout: Some(stdout) })
    }

    /// The first stdout line (the one with the address).
    pub fn first_line(&self) -> &str {
        &self.lines[0]
    }

    /// Reads the next stdout line (without its end) into [`Self::lines`];
    /// `None` at the end of stdout.
    ///
    /// # Panics
    /// After [`Self::close_stdout`].
    pub fn read_line(&mut self) -> Option<String> {
        let out = self.stdout.as_mut().expect("stdout was closed");
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let line = line.trim_end().to_owned();
        self.lines.push(line.clone());
        Some(line)
    }

    /// Reads stdout lines until one satisfies `done` (and returns it).
    ///
    /// # Panics
    /// When stdout ends first.
    pub fn read_until(&mut self, done: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self.read_line().unwrap_or_else(|| panic!("stdout ended; printed {:?}", self.lines));
            if done(&line) {
                return line;
            }
        }
    }

    /// Closes our end of its stdout, as a starter that stops reading does.
    pub fn close_stdout(&mut self) {
        self.stdout = None;
    }

    /// Sends a signal (`-TERM`, `-KILL`, …) to the process.
    ///
    /// # Panics
    /// When `kill` fails.
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {} failed", self.child.id());
    }

    /// Waits for the process to exit.
    ///
    /// # Panics
    /// When it is still running after `timeout` (it is killed first).
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait on the child") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the server did not exit within {timeout:?}: {:?}", self.lines[0]);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then its exit status (within [`STOP_TIMEOUT`]).
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("-TERM");
        self.wait_exit(STOP_TIMEOUT)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The peak resident set (VmHWM) of process `pid`, in bytes.
pub fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// A child run to its end by [`finish`].
#[derive(Debug)]
pub struct Finished {
    pub output: Output,
    /// How long it ran.
    pub took: Duration,
    /// Its peak resident set as last looked at (every 10 ms), in bytes.
    pub peak_rss: u64,
}

/// Waits for `child` (its stdout and stderr piped, or not) at most `limit`, and kills it
/// (and panics, with `what` and its output) past that or once its peak resident set passes
/// `max_rss`, so a test of a bound never takes the machine's time or memory. Its output is
/// read while it runs: a child that writes more than a pipe holds is not stopped by the test.
pub fn finish(mut child: Child, limit: Duration, max_rss: Option<u64>, what: &str) -> Finished {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut all);
            }
            all
        })
    }
    let began = Instant::now();
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let output = |status| Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() };
    let mut peak = 0;
    loop {
        if let Some(p) = peak_rss(child.id()) {
            peak = peak.max(p);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return Finished { output: output(status), took: began.elapsed(), peak_rss: peak };
        }
        if began.elapsed() > limit || max_rss.is_some_and(|m| peak > m) {
            let _ = child.kill();
            let out = output(child.wait().unwrap());
            panic!(
                "{what}: killed after {:?} at a peak RSS of {} MiB (bounds {limit:?}, {} MiB)\n{}{}",
                began.elapsed(),
                peak >> 20,
                max_rss.map_or_else(|| "no".to_owned(), |m| (m >> 20).to_string()),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_of_announcement_lines() {
        let a = |l: &str| listening_addr(l).map(|a| a.to_string());
        assert_eq!(
            a("sb-dummy dummy (axum): listening on http://127.0.0.1:4242; ctrl-c").as_deref(),
            Some("127.0.0.1:4242")
        );
        assert_eq!(a("x: listening on http://[::1]:80 and more\n").as_deref(), Some("[::1]:80"));
        assert_eq!(a("x: listening on http://127.0.0.1:99\n").as_deref(), Some("127.0.0.1:99"));
        assert_eq!(a("x: listening on https://127.0.0.1:443; …").as_deref(), Some("127.0.0.1:443"));
        assert_eq!(a("listening on 127.0.0.1:80"), None);
        assert_eq!(a("listening on http://localhost:80"), None);
    }

    #[test]
    fn a_process_that_prints_no_address_is_an_error_with_its_output() {
        let err =
            Server::try_start(Command::new("sh").args(["-c", "echo hello; echo oops >&2"])).unwrap_err();
        assert!(err.contains("hello") && err.contains("oops"), "{err}");
        let err = Server::try_start(Command::new("sh").args(["-c", "echo broken >&2; exit 3"])).unwrap_err();
        assert_eq!(err.trim(), "broken");
    }

    #[test]
    fn reads_lines_signals_and_waits() {
        // The trap comes first: SIGTERM may arrive as soon as "second" is read.
        let script = "trap 'exit 0' TERM; echo 'listening on http://127.0.0.1:1;'; echo second; \
                      while :; do sleep 0.05; done";
        let mut s = Server::start(Command::new("sh").args(["-c", script]));
        assert_eq!(s.addr.port(), 1);
        assert_eq!(s.read_until(|l| l == "second"), "second");
        assert_eq!(s.lines.len(), 2);
        assert!(s.terminate().success());
    }

    #[test]
    fn finish_reads_a_loud_child_to_its_end_and_bounds_a_slow_one() {
        // 1 MiB of output, more than a pipe holds: read while it runs, it ends.
        let loud = Command::new("sh")
            .args(["-c", "head -c 1048576 /dev/zero; echo done >&2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let f = finish(loud, Duration::from_secs(20), None, "loud");
        assert_eq!((f.output.stdout.len(), &f.output.stderr[..]), (1 << 20, &b"done\n"[..]));
        let slow = Command::new("sleep").arg("30").stdout(Stdio::piped()).spawn().unwrap();
        let panicked = std::panic::catch_unwind(|| finish(slow, Duration::from_millis(200), None, "slow"));
        let text = *panicked.unwrap_err().downcast::<String>().unwrap();
        assert!(text.starts_with("slow: killed after"), "{text}");
    }
}
