//! Plans whose contestants serve scenario files: paths against the plan's
//! directory, the file's own errors at its `file:line:col` under the plan's,
//! `[load.<name>]` by the file's name, `variables`.

use std::path::{Path, PathBuf};

use super::super::{Plan, PlanContext, PlanError};
use super::ScenarioRef;

/// A directory of its own for each test, removed at the end.
struct Dir {
    path: PathBuf,
    _scratch: tempfile::TempDir,
}

impl Dir {
    fn new(tag: &str) -> Dir {
        let scratch = tempfile::Builder::new().prefix(&format!("sb-plan-scenario-{tag}-")).tempdir().unwrap();
        std::fs::create_dir_all(scratch.path().join("sub")).unwrap();
        Dir { path: scratch.path().to_owned(), _scratch: scratch }
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path.join(rel);
        std::fs::write(&p, text).unwrap();
        p
    }
    fn plan(&self, text: &str) -> Result<Plan, PlanError> {
        let p = self.write("plan.toml", text);
        Plan::load(&p, &PlanContext { cpus: vec![0, 1], variant: None })
    }
}

const HURL: &str = "GET {{base_url}}/items/{{id}}\nHTTP 200\n";
const TOML: &str = "name = \"shop\"\n[variables]\nid = { int = [1, 9] }\n[[flow]]\nfile = \"items.hurl\"\n";

fn contestant(scenario: &str, extra: &str) -> String {
    format!("[[contestant]]\nname = \"a\"\nscenario = \"{scenario}\"\ncommand = [\"x\"]\n{extra}")
}

#[test]
fn a_path_relative_to_the_plan_is_a_scenario_file() {
    let d = Dir::new("path");
    d.write("sub/items.hurl", HURL);
    d.write("sub/shop.toml", TOML);
    let p = d.plan(&contestant("sub/shop.toml", "")).unwrap();
    let ScenarioRef::File(f) = &p.contestants[0].scenario else { panic!("{:?}", p.contestants[0].scenario) };
    assert_eq!(f.path, d.path.join("sub/shop.toml"));
    assert_eq!(p.contestants[0].scenario.name(), "shop", "the TOML's `name`");
    assert_eq!(f.scenario.flows[0].request_names, ["GET /items/{{id}}"]);
    // A .hurl file alone is named after its stem; it needs its variable.
    let p = d.plan(&contestant("sub/items.hurl", "variables = { id = \"7\" }\n")).unwrap();
    let f = p.contestants[0].scenario.file().unwrap();
    assert_eq!((f.scenario.name.as_str(), f.variable_args()), ("items", vec!["id=7".to_owned()]));
    // Built-in names keep their meaning.
    let p = d.plan(&contestant("dummy", "")).unwrap();
    assert_eq!(p.contestants[0].scenario, ScenarioRef::Builtin(stackbench_hurl::Builtin::DUMMY));
}

#[test]
fn a_missing_file_is_refused_at_the_plans_value() {
    let d = Dir::new("missing");
    let e = d.plan(&contestant("sub/nope.toml", "")).unwrap_err();
    assert!(e.location.ends_with("plan.toml:3:12"), "{e}");
    assert!(e.message.contains("sub/nope.toml not found"), "{e}");
    assert!(e.message.contains("the plan's directory"), "{e}");
    // A name that is not a path nor a built-in says both.
    let e = d.plan(&contestant("shop", "")).unwrap_err();
    assert!(e.message.contains("event-log, dummy") && e.message.contains(".toml or .hurl"), "{e}");
}

#[test]
fn an_error_in_the_file_gives_both_places() {
    let d = Dir::new("syntax");
    d.write("sub/bad.hurl", "GET {{base_url}}/a\nHTTP 2x0\n");
    let e = d.plan(&contestant("sub/bad.hurl", "")).unwrap_err();
    assert!(e.location.ends_with("plan.toml:3:12"), "{e}");
    let at = format!("{}:2:6:", d.path.join("sub/bad.hurl").display());
    assert!(e.message.contains(&at), "the file's own line and column: {e}");
    // A variable the file uses and nothing defines.
    d.write("sub/items.hurl", HURL);
    let e = d.plan(&contestant("sub/items.hurl", "")).unwrap_err();
    assert!(e.message.contains("items.hurl:1:24: unknown variable `id`"), "{e}");
    // `variables` on a built-in scenario, and a bad variable name, at `variables`.
    let e = d.plan(&contestant("dummy", "variables = { id = \"1\" }\n")).unwrap_err();
    assert!(e.location.ends_with("plan.toml:5:13") && e.message.contains("has none"), "{e}");
    let e = d.plan(&contestant("sub/items.hurl", "variables = { \"1d\" = \"1\" }\n")).unwrap_err();
    assert!(e.message.contains("\"1d\" is not a variable's name"), "{e}");
}

#[test]
fn load_profiles_go_by_the_scenarios_name() {
    let d = Dir::new("load");
    d.write("sub/items.hurl", HURL);
    let extra = "variables = { id = \"7\" }\n";
    let p =
        d.plan(&format!("[load.items]\nconnections = 3\n{}", contestant("sub/items.hurl", extra))).unwrap();
    assert_eq!(p.contestants[0].profile.get("connections").and_then(toml::Value::as_integer), Some(3));
    assert!(p.estimated_duration() > std::time::Duration::from_secs(10), "runs are estimated");
    let e = d
        .plan(&format!("[load.shop]\nconnections = 3\n{}", contestant("sub/items.hurl", extra)))
        .unwrap_err();
    assert!(e.location.ends_with("plan.toml:1:1"), "{e}");
    assert!(e.message.contains("[load.shop]: unknown scenario") && e.message.contains("files: items"), "{e}");
    // A profile the engine refuses for a scenario file is refused at its value.
    let e =
        d.plan(&format!("[load.items]\nhttp2 = true\n{}", contestant("sub/items.hurl", extra))).unwrap_err();
    assert!(e.location.ends_with("plan.toml:2:9") && e.message.contains("--http2"), "{e}");
}

#[test]
fn names_that_would_mix_results_are_refused() {
    let d = Dir::new("names");
    d.write("sub/items.hurl", HURL);
    d.write("items.hurl", "GET {{base_url}}/\nHTTP 200\n");
    d.write("dummy.hurl", "GET {{base_url}}/\nHTTP 200\n");
    let e = d.plan(&contestant("dummy.hurl", "")).unwrap_err();
    assert!(e.message.contains("a built-in scenario's"), "{e}");
    let two = format!(
        "{}[[contestant]]\nname = \"b\"\nscenario = \"items.hurl\"\ncommand = [\"y\"]\n",
        contestant("sub/items.hurl", "variables = { id = \"7\" }\n")
    );
    let e = d.plan(&two).unwrap_err();
    assert!(e.message.contains("both named \"items\""), "{e}");
    // The same file twice is one scenario.
    let same = format!(
        "{}[[contestant]]\nname = \"b\"\nscenario = \"./items.hurl\"\ncommand = [\"y\"]\n",
        contestant("items.hurl", "")
    );
    assert_eq!(d.plan(&same).unwrap().contestants.len(), 2);
    assert!(Path::new(&d.path).is_dir());
}
