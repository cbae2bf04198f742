//! `builds = "concurrent"` against the fakes: builds that succeed only when
//! another build runs beside them (`peer:N`: exit 0 once N peer builds have
//! started, exit 1 after 300 ms otherwise), so a plan that ran them one after
//! another fails them.

use std::collections::BTreeMap;

use super::*;

/// The peer builds of one harness.
#[derive(Default)]
pub(super) struct Peers {
    started: u32,
    /// Running builds per command line, and the most of one command at once.
    alive: BTreeMap<String, u32>,
    most_of_one_command: u32,
    /// Builds launched pinned to CPUs.
    pinned: u32,
}

struct PeerBuild {
    world: Shared,
    needs: u32,
    argv: String,
    since: Instant,
    exit: Option<Exit>,
}

pub(super) fn peer(world: &Shared, needs: u32, spec: &LaunchSpec) -> Box<dyn Process> {
    let argv = spec.argv.join(" ");
    let mut w = world.lock().unwrap();
    let p = &mut w.peers;
    p.started += 1;
    p.pinned += u32::from(spec.cpus.is_some());
    let alive = p.alive.entry(argv.clone()).or_default();
    *alive += 1;
    p.most_of_one_command = p.most_of_one_command.max(*alive);
    Box::new(PeerBuild { world: Arc::clone(world), needs, argv, since: Instant::now(), exit: None })
}

impl Process for PeerBuild {
    fn pid(&self) -> u32 {
        4343
    }
    fn try_exit(&mut self) -> Option<Exit> {
        if self.exit.is_none() {
            let mut w = self.world.lock().unwrap();
            self.exit = if w.peers.started >= self.needs {
                Some(Exit::Code(0))
            } else if self.since.elapsed() > Duration::from_millis(300) {
                Some(Exit::Code(1))
            } else {
                None
            };
            if self.exit.is_some() {
                *w.peers.alive.get_mut(&self.argv).unwrap() -= 1;
            }
        }
        self.exit
    }
    fn stop(&mut self, _: Duration, _: &[ProcId]) -> StopReport {
        let already_exited = self.try_exit().is_some();
        StopReport { exit: self.exit, killed: false, already_exited }
    }
    fn output_tail(&self) -> String {
        format!("{} saw no peer", self.argv)
    }
}

fn plan_with(builds: &str, contestants: &str) -> Plan {
    let text = format!(
        "[defaults]\nrepetitions = 2\ncold_starts = 1\nready_timeout = \"300ms\"\nsample_interval = \"10ms\"\nseed = 3\ncpus = \"0\"\n{builds}\n{contestants}"
    );
    Plan::parse(&text, None, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap()
}

fn three_builds() -> String {
    [
        contestant("a", "good", "build = [\"peer:2\", \"a\"]"),
        contestant("b", "good", "build = [\"peer:2\", \"b\"]"),
        // The same command as b's: it runs after b's, never beside it.
        contestant("c", "good", "build = [\"peer:2\", \"b\"]"),
        contestant("d", "good", ""),
    ]
    .concat()
}

/// Concurrent builds overlap (each peer build sees the other), identical
/// commands still run in turn, builds are not pinned to the contestant's
/// `cpus`, each time is recorded as measured beside the others, and the
/// contestants are then set up and measured as usual.
#[test]
fn concurrent_builds_run_at_once_except_identical_commands() {
    let mut h = Harness::new("builds-concurrent");
    let out = h.run(&plan_with("builds = \"concurrent\"", &three_builds()));
    assert_eq!((out.runs, out.failed.len(), out.skipped.len()), (8, 0, 0), "{:#?}", h.lines);
    let w = h.world.lock().unwrap();
    assert_eq!(w.peers.started, 3);
    assert_eq!(w.peers.most_of_one_command, 1, "two runs of one command at once");
    assert_eq!(w.peers.pinned, 0, "a build pinned to the contestant's cpus");
    drop(w);
    let set = h.results();
    for name in ["a", "b", "c"] {
        let c = set.contestants.iter().find(|c| c.name == name).unwrap();
        assert!(c.build_concurrent && c.build_s.is_some(), "{c:?}");
    }
    let d = set.contestants.iter().find(|c| c.name == "d").unwrap();
    assert!(!d.build_concurrent && d.build_s.is_none(), "{d:?}");
    assert!(
        h.lines.iter().any(|l| l.starts_with("building 3 contestants at once (2 commands")),
        "{:#?}",
        h.lines
    );
}

/// The default runs builds one after another: the first peer build never sees
/// another start, fails, and leaves its contestant out with the build's own
/// words (the later ones see the earlier ones' starts).
#[test]
fn builds_run_in_turn_by_default() {
    let mut h = Harness::new("builds-in-turn");
    let out = h.run(&plan_with("", &three_builds()));
    let failed: Vec<&str> = out.failed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(failed, ["a"], "{:#?}", h.lines);
    assert_eq!(out.runs, 6, "b, c and d are measured");
    let set = h.results();
    let a = set.contestants.iter().find(|c| c.name == "a").unwrap();
    assert!(!a.build_concurrent);
    assert!(a.incidents[0].message.contains("peer:2 a saw no peer"), "{:?}", a.incidents);
}
