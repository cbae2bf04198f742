//! Every plan the repository ships parses, with each of its variants, and
//! every contestant's load profile is one the load engine accepts: a typo in a
//! shipped plan fails here, not in a user's terminal.

use std::path::Path;

use stackbench_run::EngineDriver;
use stackbench_run::Launch;
use stackbench_run::{LoadDriver as _, LoadJob, Plan, PlanContext};

/// Every contestant in a shipped plan says what it is written in and with.
#[test]
fn every_shipped_contestant_names_its_stack() {
    for path in stackbench_testkit::contestants::shipped_plans() {
        let plan = Plan::load(&path, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap();
        for c in &plan.contestants {
            assert!(
                c.language.is_some() && c.framework.is_some(),
                "{}: contestant {} needs `language` and `framework`",
                path.display(),
                c.name
            );
        }
    }
}

fn variants(text: &str) -> Vec<Option<String>> {
    let value: toml::Table = toml::from_str(text).unwrap();
    let mut out = vec![None];
    if let Some(v) = value.get("variants").and_then(toml::Value::as_table) {
        out.extend(v.keys().cloned().map(Some));
    }
    out
}

#[test]
fn shipped_plans_parse_and_their_profiles_are_valid() {
    let plans = stackbench_testkit::contestants::shipped_plans();
    assert!(plans.len() >= 17, "{plans:?}");
    for path in plans {
        let text = std::fs::read_to_string(&path).unwrap();
        for variant in variants(&text) {
            let ctx = PlanContext { cpus: vec![0, 1], variant: variant.clone() };
            let plan = Plan::load(&path, &ctx).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!plan.contestants.is_empty());
            for c in &plan.contestants {
                let path_part = match &c.launch {
                    Launch::External { url } => url.clone(),
                    Launch::Command { tls, .. } => {
                        let scheme = if *tls { "https" } else { "http" };
                        let path = if c.path == "/" { "" } else { c.path.as_str() };
                        format!("{scheme}://127.0.0.1:9{path}")
                    }
                };
                let job = LoadJob {
                    url: path_part,
                    scenario: c.scenario.clone(),
                    profile: c.profile.clone(),
                    cpus: None,
                    bracket: None,
                    cacert: None,
                };
                EngineDriver.check(&job).unwrap_or_else(|e| {
                    panic!("{} ({variant:?}) contestant {}: {e}", path.display(), c.name)
                });
                assert!(!c.profile.is_empty(), "{}: {} has a load profile", path.display(), c.name);
            }
        }
    }
}

#[test]
fn the_quick_plan_covers_every_scenario_without_a_database() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans/quick.toml");
    let plan = Plan::load(&path, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap();
    for s in stackbench_hurl::Builtin::ALL {
        assert!(plan.contestants.iter().any(|c| c.scenario.builtin() == Some(s)), "{s}");
    }
    for c in &plan.contestants {
        let Launch::Command { argv, .. } = &c.launch else { panic!("{} is external", c.name) };
        let line = argv.join(" ");
        for server in ["postgres://", "mysql://", "redis://", "influxdb://"] {
            assert!(!line.contains(server), "{}: {line}", c.name);
        }
    }
    let full = Plan::load(&path, &PlanContext { cpus: vec![0, 1], variant: Some("full".into()) }).unwrap();
    let dummy = full.contestants.iter().find(|c| c.name == "dummy-axum").unwrap();
    assert_eq!(dummy.profile.get("duration").and_then(toml::Value::as_str), Some("1m"));
    let events = full
        .contestants
        .iter()
        .find(|c| c.scenario.builtin() == Some(stackbench_hurl::Builtin::EVENT_LOG))
        .unwrap();
    assert_eq!(events.profile.get("duration").and_then(toml::Value::as_str), Some("5m"));
    // Its headline (dummy) is each server flat out under the same CPU budget, below the load's core
    // (issue 48): no capacity search, whose bisection could not tell close stacks apart.
    let quick = plan.contestants.iter().find(|c| c.name == "dummy-axum").unwrap();
    assert_eq!(quick.profile.get("find-max"), None);
    // A third of a core: the run's and its companion's generators share the load's core, half each.
    assert!(
        plan.contestants.iter().all(|c| c.cpu_quota == Some(0.33)),
        "every contestant gets a third of a core"
    );
    assert_eq!(
        quick.limits,
        stackbench_run::LimitsMode::BestEffort,
        "unbudgeted where no cgroup can be used"
    );
}

/// `bench --help` says how long `--full` takes; the estimate of the plan
/// agrees (within a quarter), and the short plan fits in about 3 minutes.
#[test]
fn the_bench_durations_said_are_the_plans() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans/quick.toml");
    let quick = Plan::load(&path, &PlanContext { cpus: vec![0, 1], variant: None }).unwrap();
    let full = Plan::load(&path, &PlanContext { cpus: vec![0, 1], variant: Some("full".into()) }).unwrap();
    let minutes = |p: &Plan| p.estimated_duration().as_secs_f64() / 60.0;
    let cli =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/src/run.rs")).unwrap();
    let said: f64 = cli
        .split("about ")
        .find_map(|s| s.split(" minutes").next()?.parse().ok())
        .expect("run.rs says `about N minutes` for --full");
    assert!(
        (minutes(&full) - said).abs() <= said / 4.0,
        "--full is about {:.0} min, the help says {said}",
        minutes(&full)
    );
    // The stats issue's budget: `stackbench bench` within 5 minutes on 2 cores, every language included.
    assert!(minutes(&quick) <= 5.0, "the quick plan is about {:.1} min", minutes(&quick));
}
