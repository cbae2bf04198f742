//! CPU and memory limits on real processes, through the machine's cgroups
//! (v2, or the v1 `cpu`/`memory` hierarchies): a busy loop under a 0.2-core
//! quota is throttled to about 20% of a core, and a process that outgrows a
//! 32 MiB limit is killed by the kernel. Skips visibly where cgroups are not
//! writable (not root, no controller), except under CI=true.

use std::time::{Duration, Instant};

use stackbench_run::{CgroupLimiter, LimitRequest, Limiter as _};
use stackbench_run::{Exit, LaunchSpec, Launcher as _, OsLauncher};
use stackbench_run::{Procfs, Sampler, read_tree};

fn limiter_or_skip(req: LimitRequest) -> Option<Box<dyn stackbench_run::LimitGroup>> {
    match CgroupLimiter.create("limits-test", req) {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(!stackbench_testkit::in_ci(), "CI=true needs writable cgroups: {e}");
            stackbench_testkit::skip(&format!("cgroups are not writable here: {e}"));
            None
        }
    }
}

/// A shell's busy loop on core 0 in `group`.
fn busy_loop(group: &dyn stackbench_run::LimitGroup) -> LaunchSpec {
    LaunchSpec {
        argv: vec!["sh".into(), "-c".into(), "while :; do :; done".into()],
        cpus: Some(vec![0]),
        cgroup_procs: group.procs_files(),
        ..LaunchSpec::default()
    }
}

#[test]
fn a_cpu_quota_throttles_a_busy_loop() {
    let req = LimitRequest { cpu_quota: Some(0.2), memory: None };
    let Some(group) = limiter_or_skip(req) else { return };
    let start = group.counters();
    let mut p = OsLauncher.spawn(&busy_loop(group.as_ref())).unwrap();
    let mut procs = Procfs::default();
    let hz = stackbench_run::ProcSource::ticks_per_second(&procs);
    let mut sampler = Sampler::default();
    let t0 = Instant::now();
    for _ in 0..9 {
        let t = t0.elapsed().as_millis() as u64;
        sampler.add(t, t, read_tree(&mut procs, p.pid() as i32), hz);
        std::thread::sleep(Duration::from_millis(250));
    }
    let usage = group.counters().since(&start, group.applied(), 0);
    p.stop(Duration::from_secs(1), &[]);
    let summary = sampler.summary(250, 0);
    assert!(summary.cpu_percent.p50 < 35.0 && summary.cpu_percent.p50 > 5.0, "{:?}", summary.cpu_percent);
    assert!(usage.throttled_periods > 0, "{usage:?}");
    // Counted over 10 ms periods: 2.25 s at 0.2 core is about 225 throttled periods (22 at the kernel's 100 ms).
    assert!(usage.throttled_periods > 60, "throttled in {} periods: not 10 ms ones", usage.throttled_periods);
    assert_eq!(usage.version, Some(group.applied().version));
}

/// A live group's quota is rewritten while its process runs (a budgeted run's warm-up at
/// its whole core, then its budget again): a busy loop uses what each quota allows.
#[test]
fn a_live_quota_is_lifted_and_set_back() {
    let req = LimitRequest { cpu_quota: Some(0.2), memory: None };
    let Some(group) = limiter_or_skip(req) else { return };
    let mut p = OsLauncher.spawn(&busy_loop(group.as_ref())).unwrap();
    let used_over = |d: Duration| {
        let start = group.counters().cpu_s;
        std::thread::sleep(d);
        group.counters().cpu_s - start
    };
    let budget = used_over(Duration::from_millis(600));
    group.set_cpu_quota(1.0).unwrap();
    let lifted = used_over(Duration::from_millis(600));
    group.set_cpu_quota(0.2).unwrap();
    let again = used_over(Duration::from_millis(600));
    p.stop(Duration::from_secs(1), &[]);
    // 0.12 s of 0.6 at 0.2 core; well over that at the whole core, even on a shared core.
    assert!(budget < 0.2 && again < 0.2, "under the budget: {budget:.3} s, then {again:.3} s");
    assert!(lifted > 0.3, "lifted to the whole core: {lifted:.3} s of 0.6");
}

/// The load's thread joins a group with the reserving weight where cgroup v1
/// is writable (threads it starts inherit it), and leaves it, the group
/// removed, when the reservation ends.
#[test]
fn the_load_thread_gets_a_reserved_share_and_gives_it_back() {
    if let Err(e) = stackbench_run::thread_reservation() {
        // cgroup v2 moves whole processes only: no reservation for one thread there.
        stackbench_testkit::skip(&format!("no thread reservation here: {e}"));
        return;
    }
    std::thread::spawn(|| {
        let reserved = stackbench_run::reserve_this_thread("reserve-test").unwrap();
        let me: u32 = std::fs::read_link("/proc/thread-self")
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let worker = std::thread::spawn(|| std::fs::read_to_string("/proc/thread-self/cgroup").unwrap())
            .join()
            .unwrap();
        assert!(reserved.threads().contains(&me), "{:?}", reserved.threads());
        let cpu_line = |text: &str| {
            text.lines()
                .find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|x| x == "cpu")))
                .unwrap_or_default()
                .to_owned()
        };
        assert!(cpu_line(&worker).contains("reserve-test"), "inherited: {worker}");
        let dir = reserved.dir().to_owned();
        drop(reserved);
        assert!(!dir.exists(), "the group is removed");
        let now = std::fs::read_to_string("/proc/thread-self/cgroup").unwrap();
        assert!(!cpu_line(&now).contains("reserve-test"), "moved back: {now}");
    })
    .join()
    .unwrap();
}

#[test]
fn a_memory_limit_stops_a_process_that_outgrows_it() {
    let req = LimitRequest { cpu_quota: None, memory: Some(32 << 20) };
    let Some(group) = limiter_or_skip(req) else { return };
    let spec = LaunchSpec {
        argv: vec![
            "sh".into(),
            "-c".into(),
            "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}".into(),
        ],
        cgroup_procs: group.procs_files(),
        ..LaunchSpec::default()
    };
    let out = OsLauncher.run(&spec, Duration::from_mins(1), &stackbench_run::Cancel::new()).unwrap();
    // It must have ended (not timed out: `exit` would be `None`), and not well.
    let exit = out.exit.unwrap_or_else(|| panic!("it did not end within a minute: {out:?}"));
    assert_ne!(exit, Exit::Code(0), "200 MB fit in a 32 MiB limit: {out:?}");
    // The OOM killer's SIGKILL, of the shell or of the pipeline it waits for.
    assert!(
        exit == Exit::Signal(libc::SIGKILL) || matches!(exit, Exit::Code(c) if c != 0),
        "ended by the limit: {out:?}"
    );
    assert!(group.counters().oom_kills > 0, "the cgroup counted the OOM kill: {:?}", group.counters());
}
