//! The few operating-system calls the engine needs and the standard library
//! lacks: the process's and a thread's CPU time (`getrusage`, `/proc`), pinning a thread to a CPU
//! (`sched_setaffinity`) and the CPUs it may use (`sched_getaffinity`), raising
//! the open-file limit (`setrlimit`), a `timerfd` for waits finer
//! than tokio's 1 ms timer wheel, and large allocations mapped on their own
//! (`mallopt`), so that freed answer buffers leave the process; reading a TCP socket's octets
//! without taking them (`MSG_PEEK`) and taking them without a copy (`MSG_TRUNC`).
#![allow(unsafe_code)] // libc calls without a safe wrapper in std; each is a single checked syscall

use std::io;
use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd, RawFd};
use std::time::Duration;

/// User and system CPU time of the whole process so far.
pub fn cpu_time() -> (Duration, Duration) {
    rusage(libc::RUSAGE_SELF)
}

/// User and system CPU time of the calling thread so far.
pub fn thread_cpu_time() -> (Duration, Duration) {
    rusage(libc::RUSAGE_THREAD)
}

/// The calling thread's id, by which another thread reads its CPU time ([`task_cpu_time`]).
pub fn thread_id() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// User and system CPU time so far of thread `tid` of this process, from
/// `/proc/self/task/<tid>/stat` (in clock ticks); `None` once the thread has ended.
pub fn task_cpu_time(tid: i32) -> Option<(Duration, Duration)> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // SAFETY: sysconf takes a constant and cannot fail for _SC_CLK_TCK.
    let ticks = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok().filter(|&t| t > 0)?;
    task_times(&stat, ticks)
}

/// utime and stat (fields 14 and 15) of a `/proc/<pid>/stat` line; the name before them,
/// in parentheses, may hold spaces and parentheses itself.
fn task_times(stat: &str, ticks_per_s: u64) -> Option<(Duration, Duration)> {
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace().skip(11);
    let mut time = || -> Option<Duration> {
        let t: u64 = fields.next()?.parse().ok()?;
        Some(Duration::from_nanos(t.checked_mul(1_000_000_000)? / ticks_per_s))
    };
    Some((time()?, time()?))
}

fn rusage(who: libc::c_int) -> (Duration, Duration) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given, which
    // points to a properly sized, zeroed `MaybeUninit<rusage>`.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    // SAFETY: the call succeeded, so the struct is initialized (and it was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    (tv(usage.ru_utime), tv(usage.ru_stime))
}

/// Has the C allocator give a freed answer buffer back to the system at once: every
/// allocation from `threshold` bytes on is a mapping of its own, unmapped when freed (and
/// grown by `mremap`, without a copy). glibc otherwise raises that threshold to the size of
/// each such buffer freed (up to 32 MiB), and serves the next from its heaps, which keep
/// freed memory: against endless answers the process then held more than the answer budget
/// (`crate::budget`) allows. Once per process; a no-op off glibc.
pub fn map_large_allocations(threshold: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let threshold = libc::c_int::try_from(threshold).unwrap_or(libc::c_int::MAX);
            // SAFETY: mallopt only sets a tuning parameter of the allocator; any value is valid
            // (it returns 0 for one it does not take, which leaves the default).
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, threshold);
            }
        });
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = threshold;
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {cpu} is out of range")));
    }
    // SAFETY: `cpu_set_t` is plain data; CPU_ZERO/CPU_SET only write inside it
    // (`cpu` is checked against CPU_SETSIZE above), and sched_setaffinity(0, ..)
    // reads `size_of::<cpu_set_t>()` bytes from a valid reference.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw const set)
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The open-file limit after raising the soft limit to the hard one (many
/// connections need many descriptors): `(soft, hard)`, `None` when unknown.
pub fn raise_open_file_limit() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit read and write one `rlimit` through valid references.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) != 0 {
            return None;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raw const raised) == 0 {
                lim = raised;
            }
        }
    }
    Some((lim.rlim_cur, lim.rlim_max))
}

/// The CPUs this process may run on (`sched_getaffinity`), `None` when unknown.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    // SAFETY: `cpu_set_t` is plain data; sched_getaffinity(0, ..) writes at most
    // `size_of::<cpu_set_t>()` bytes into it, and CPU_ISSET reads inside it (i < CPU_SETSIZE).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw mut set) != 0 {
            return None;
        }
        Some((0..libc::CPU_SETSIZE as usize).filter(|&i| libc::CPU_ISSET(i, &set)).collect())
    }
}

/// A non-blocking `CLOCK_MONOTONIC` timerfd (one-shot, relative). Its expirations
/// are never read: arming it again resets their count, and an edge-triggered
/// registration wakes once for each.
#[derive(Debug)]
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: timerfd_create takes no pointers; a non-negative result is a new descriptor we own.
        let fd =
            unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by timerfd_create and is owned by nobody else.
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Arms the timer to fire once after `delay` (at least 1 ns: zero would disarm it).
    pub fn arm(&self, delay: Duration) -> io::Result<()> {
        let delay = delay.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: delay.as_secs() as libc::time_t,
                tv_nsec: libc::c_long::from(delay.subsec_nanos() as i32),
            },
        };
        // SAFETY: the descriptor is a live timerfd; `spec` is a valid itimerspec and the old value is not asked for.
        let rc =
            unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &raw const spec, std::ptr::null_mut()) };
        if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
    }
}

/// A [`TimerFd`] registered with the current tokio runtime.
pub fn async_timer() -> Option<tokio::io::unix::AsyncFd<TimerFd>> {
    let timer = TimerFd::new().ok()?;
    // SAFETY: `register` needs the descriptor to stay open while registered;
    // the AsyncFd owns the TimerFd, which owns the descriptor and closes it
    // only when dropped, after deregistration.
    unsafe { tokio::io::unix::AsyncFd::register(timer) }.ok()
}

impl AsRawFd for TimerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Copies what `fd`'s receive queue holds (as far as `buf` takes) into `buf` without taking it
/// from the queue (`recv` with `MSG_PEEK`, non-blocking); `Ok(0)` at the end of the stream.
pub fn peek(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: recv writes at most `buf.len()` bytes into `buf`, a valid exclusive slice.
    let n =
        unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// Takes `n` octets (an earlier [`peek`]'s) from TCP socket `fd`'s receive queue without
/// copying them (`recv` with `MSG_TRUNC`, tcp(7)); returns how many it took.
pub fn discard(fd: RawFd, n: usize) -> io::Result<usize> {
    // SAFETY: on a TCP socket MSG_TRUNC makes recv drop the octets without copying them
    // (tcp(7)), so the buffer is never written and none is passed.
    let n = unsafe { libc::recv(fd, std::ptr::null_mut(), n, libc::MSG_TRUNC | libc::MSG_DONTWAIT) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// Segments TCP socket `fd` received so far (`tcpi_segs_in` of `TCP_INFO`): the tests count
/// the client's acknowledgements with it.
#[cfg(test)]
pub fn segments_in(fd: RawFd) -> io::Result<u32> {
    // SAFETY: `tcp_info` is plain data; getsockopt writes at most `len` bytes into it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` are valid exclusive references of the sizes given.
    let rc = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&raw mut info).cast(), &raw mut len)
    };
    if rc == 0 { Ok(info.tcpi_segs_in) } else { Err(io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_time() {
        // Spin until the process's CPU time has grown by 10 ms (bounded: a
        // reading that never moves fails after 10 s of wall time, whatever
        // the scheduler did meanwhile on a loaded machine).
        let (user0, system0) = cpu_time();
        let spin = std::time::Instant::now();
        let mut x = 0u64;
        let grown = loop {
            for _ in 0..100_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            let (user, system) = cpu_time();
            let grown = (user + system).saturating_sub(user0 + system0);
            if grown >= Duration::from_millis(10) || spin.elapsed() > Duration::from_secs(10) {
                break grown;
            }
        };
        assert!(grown >= Duration::from_millis(10), "CPU time grew {grown:?} in {:?} ({x})", spin.elapsed());
    }

    #[test]
    fn a_thread_reads_its_own_time_and_another_reads_it_too() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            tx.send(thread_id()).unwrap();
            let spin = std::time::Instant::now();
            let mut x = 0u64;
            while {
                let (u, s) = thread_cpu_time();
                u + s < Duration::from_millis(30) && spin.elapsed() < Duration::from_secs(10)
            } {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            let own = thread_cpu_time();
            done_rx.recv().unwrap();
            (own, x)
        });
        let tid = rx.recv().unwrap();
        assert_ne!(tid, thread_id());
        // Read from here while the worker spins (or waits): it only grows.
        let seen = task_cpu_time(tid).expect("a live thread's stat");
        done_tx.send(()).unwrap();
        let ((user, system), _) = worker.join().unwrap();
        assert!(user + system >= Duration::from_millis(30), "{user:?} + {system:?}");
        // Ticks are coarser than rusage: what was read before cannot exceed the end by more than one.
        assert!(seen.0 + seen.1 <= user + system + Duration::from_millis(10), "{seen:?} vs {user:?}");
        assert_eq!(task_cpu_time(tid), None, "an ended thread has no stat");
    }

    /// Peeks once octets (or the end of the stream) are there: peek does not block (5 s at most).
    fn peek_when_there(fd: RawFd, buf: &mut [u8]) -> usize {
        for _ in 0..1000 {
            match peek(fd, buf) {
                Ok(n) => return n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
        }
        panic!("nothing to peek at within 5 s");
    }

    #[test]
    fn a_peek_leaves_the_octets_queued_and_a_discard_takes_them() {
        use std::io::Write as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let fd = client.as_raw_fd();
        server.write_all(b"hello").unwrap();
        let mut buf = [0u8; 16];
        let n = peek_when_there(fd, &mut buf);
        assert_eq!(&buf[..n], b"hello");
        buf.fill(0);
        assert_eq!(peek(fd, &mut buf[..3]).unwrap(), 3, "still queued");
        assert_eq!(&buf[..3], b"hel");
        assert_eq!(discard(fd, 2).unwrap(), 2);
        assert_eq!(peek(fd, &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"llo");
        assert_eq!(discard(fd, 3).unwrap(), 3);
        assert_eq!(peek(fd, &mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock, "all taken");
        drop(server);
        assert_eq!(peek_when_there(fd, &mut buf), 0, "the end of the stream");
    }

    #[test]
    fn reads_a_stat_line_whose_name_has_spaces_and_parentheses() {
        let line = "4242 (sb load (1)) S 1 2 3 4 5 6 7 8 9 10 250 75 0 0 20 0 1 0 5 6 7";
        assert_eq!(task_times(line, 100), Some((Duration::from_millis(2500), Duration::from_millis(750))));
        assert_eq!(task_times("4242 (x) S 1", 100), None);
        assert_eq!(task_times("no parenthesis", 100), None);
    }
}
