//! The `--run` lifecycle against a fake swarm: every service is removed
//! whatever happens, and a shard that fails, is rejected or never ends is
//! named, never rerun.

use std::collections::BTreeMap;

use super::*;
use crate::swarm::{Service, Shard};

/// Two real shard records (`stackbench load --shard I/2 --json -`), one per line.
const RECORDS: &str = include_str!("shards-of-2.jsonl");

fn record(shard: u32) -> String {
    RECORDS.lines().nth(shard as usize - 1).unwrap().to_owned()
}

/// A swarm whose tasks go through the states given, one per look, the last one kept.
#[derive(Default)]
struct Fake {
    states: BTreeMap<String, Vec<&'static str>>,
    logs: BTreeMap<String, (String, String)>,
    refuse: Option<String>,
    created: Vec<String>,
    removed: Vec<String>,
    looks: usize,
}

impl Swarm for Fake {
    fn check(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn create(&mut self, args: &[String]) -> anyhow::Result<String> {
        let name = args[args.iter().position(|a| a == "--name").unwrap() + 1].clone();
        if self.refuse.as_ref() == Some(&name) {
            bail!("name conflicts with an existing object");
        }
        self.created.push(name);
        Ok(String::new())
    }

    fn tasks(&mut self, names: &[String]) -> anyhow::Result<Vec<Task>> {
        self.looks += 1;
        let look = self.looks;
        Ok(names
            .iter()
            .filter(|n| self.created.contains(n))
            .filter_map(|n| {
                let states = self.states.get(n)?;
                let state = states[(look - 1).min(states.len() - 1)];
                let error = if state == "failed" { "task: non-zero exit (137)" } else { "" };
                Some(Task { service: n.clone(), state: state.into(), error: error.into(), node: "vm".into() })
            })
            .collect())
    }

    fn logs(&mut self, name: &str) -> anyhow::Result<(String, String)> {
        Ok(self.logs.get(name).cloned().unwrap_or_default())
    }

    fn remove(&mut self, names: &[String]) -> anyhow::Result<()> {
        self.removed.extend(names.iter().cloned());
        Ok(())
    }

    fn left(&mut self, names: &[String]) -> anyhow::Result<usize> {
        Ok(names.iter().filter(|n| !self.removed.contains(n)).count())
    }
}

fn plan() -> Plan {
    let services = (1..=2)
        .map(|index| {
            let name = format!("sb-{index}");
            Service {
                name: name.clone(),
                shard: Shard { index, count: 2 },
                create: vec!["--name".into(), name],
            }
        })
        .collect();
    Plan { services, start_text: "now".into(), longest: None, thresholds: Vec::new() }
}

fn timing() -> Timing {
    Timing {
        poll: Duration::from_millis(1),
        deadline: Duration::from_millis(200),
        cleanup: Duration::from_secs(1),
    }
}

fn fake(states: [Vec<&'static str>; 2]) -> Fake {
    let mut f = Fake::default();
    for (i, s) in states.into_iter().enumerate() {
        let name = format!("sb-{}", i + 1);
        f.logs.insert(
            name.clone(),
            (format!("{}\n", record(i as u32 + 1)), "stackbench load summary\n".into()),
        );
        f.states.insert(name, s);
    }
    f
}

fn done(c: Collected) -> (Vec<Input>, Vec<String>) {
    match c {
        Collected::Done { inputs, missing, .. } => (inputs, missing),
        Collected::Interrupted => panic!("not interrupted"),
    }
}

#[test]
fn every_shards_record_is_collected_and_the_services_removed() {
    let mut f = fake([vec!["pending", "running", "complete"], vec!["running", "complete"]]);
    let (inputs, missing) = done(collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap());
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(inputs.len(), 2);
    assert_eq!(f.looks, 3, "it waits until every task has ended");
    assert_eq!(f.removed, ["sb-1", "sb-2"]);
    let merged = merge::merge(inputs, &[]).unwrap();
    assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
}

#[test]
fn a_killed_shard_is_named_and_not_rerun() {
    let mut f = fake([vec!["running", "complete"], vec!["running", "failed"]]);
    f.logs.insert("sb-2".into(), (String::new(), "partial\n".into()));
    let (inputs, missing) = done(collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap());
    assert_eq!(inputs.len(), 1);
    assert_eq!(missing.len(), 1);
    assert!(
        missing[0]
            == ("shard 2/2 (sb-2) failed on vm (task: non-zero exit (137)); its log holds no record; it said: partial"),
        "{}",
        missing[0]
    );
    assert_eq!(f.created, ["sb-1", "sb-2"], "created once each");
    assert_eq!(f.removed, ["sb-1", "sb-2"]);
}

#[test]
fn a_shard_that_never_ends_is_reported_at_the_deadline() {
    let mut f = fake([vec!["complete"], vec!["pending"]]);
    f.states.remove("sb-2");
    f.logs.remove("sb-2");
    let (inputs, missing) = done(collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap());
    assert_eq!(inputs.len(), 1);
    assert!(missing[0].contains("got no task within 0 s"), "{}", missing[0]);
    let mut f = fake([vec!["complete"], vec!["running"]]);
    f.logs.remove("sb-2");
    let (_, missing) = done(collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap());
    assert!(
        missing[0].contains("had not ended 0 s after its creation: its task was running on vm"),
        "{}",
        missing[0]
    );
    assert_eq!(f.removed, ["sb-1", "sb-2"]);
}

#[test]
fn a_record_of_another_shard_is_not_taken() {
    let mut f = fake([vec!["complete"], vec!["complete"]]);
    f.logs.insert("sb-2".into(), (record(1), String::new()));
    let (inputs, missing) = done(collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap());
    assert_eq!(inputs.len(), 1);
    assert!(missing[0].contains("ended on vm; its log holds 1 record of shard 1/2"), "{}", missing[0]);
}

#[test]
fn what_was_created_is_removed_when_creating_fails() {
    let mut f = fake([vec!["complete"], vec!["complete"]]);
    f.refuse = Some("sb-2".into());
    let e = collect(&plan(), &mut f, timing(), &AtomicBool::new(false)).unwrap_err();
    assert!(format!("{e:#}").contains("cannot create the service sb-2 (shard 2/2): name conflicts"), "{e:#}");
    assert_eq!(f.removed, ["sb-1"]);
}

#[test]
fn ctrl_c_removes_the_services() {
    let mut f = fake([vec!["running"], vec!["running"]]);
    let c = collect(&plan(), &mut f, timing(), &AtomicBool::new(true)).unwrap();
    assert!(matches!(c, Collected::Interrupted));
    assert_eq!(f.removed, ["sb-1", "sb-2"]);
}
