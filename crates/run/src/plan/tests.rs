//! Plan parsing: defaults, variants, and errors at the place of the value.

use super::*;

fn ctx() -> PlanContext {
    PlanContext { cpus: vec![0, 1], variant: None }
}

fn parse(text: &str) -> Result<Plan, PlanError> {
    Plan::parse(text, Some(Path::new("p.toml")), &ctx())
}

const GOOD: &str = r#"
name = "t"
[defaults]
repetitions = 2
cpus = "0"
ready_timeout = "2s"
[load.dummy]
connections = 10
duration = "1s"
[variants.full]
defaults = { repetitions = 5 }
load.dummy = { duration = "10s" }
[[contestant]]
name = "a"
scenario = "dummy"
language = "Rust 1.95"
framework = "axum 0.8"
command = ["{bin_dir}/sb-dummy", "--port", "{port}"]
load = { connections = 20 }
[[contestant]]
name = "ext"
scenario = "db-read"
url = "http://127.0.0.1:9/db/sqlite"
"#;

#[test]
fn a_good_plan_with_defaults_applied() {
    let p = parse(GOOD).unwrap();
    assert_eq!(p.repetitions, 2);
    let a = &p.contestants[0];
    assert_eq!(a.cpus, Some(vec![0]));
    assert_eq!(a.ready_timeout, Duration::from_secs(2));
    assert_eq!(a.profile.get("connections").and_then(toml::Value::as_integer), Some(20));
    assert_eq!(a.profile.get("duration").and_then(toml::Value::as_str), Some("1s"));
    assert_eq!(a.limits, LimitsMode::Strict);
    assert_eq!((a.language.as_deref(), a.framework.as_deref()), (Some("Rust 1.95"), Some("axum 0.8")));
    assert!(matches!(p.contestants[1].launch, Launch::External { .. }));
    assert_eq!(p.contestants[1].language, None);
    let full = Plan::parse(GOOD, None, &PlanContext { variant: Some("full".into()), ..ctx() }).unwrap();
    assert_eq!(full.repetitions, 5);
    assert_eq!(full.contestants[0].profile.get("duration").and_then(toml::Value::as_str), Some("10s"));
    let e = Plan::parse(GOOD, None, &PlanContext { variant: Some("huge".into()), ..ctx() }).unwrap_err();
    assert!(e.message.contains("full"), "{e}");
}

#[test]
fn requires_names_programs_not_paths() {
    let e = parse(
        "[[contestant]]\nname = 'a'\nscenario = 'dummy'\ncommand = ['x']\nrequires = ['go', '/usr/bin/go']\n",
    )
    .unwrap_err();
    assert_eq!(e.location, "p.toml:5:19", "{e}");
    assert!(e.message.contains("program names looked up on PATH"), "{e}");
    let p = parse("[[contestant]]\nname = 'a'\nscenario = 'dummy'\ncommand = ['x']\nrequires = ['go']\noptional = true\n")
        .unwrap();
    assert_eq!((p.contestants[0].requires.clone(), p.contestants[0].optional), (vec!["go".to_owned()], true));
}

#[test]
fn errors_point_at_the_key() {
    let e = parse("[defaults]\nrepetitons = 3\n[[contestant]]\nname='a'\nscenario='dummy'\ncommand=['x']\n")
        .unwrap_err();
    assert_eq!(e.location, "p.toml:2:1", "{e}");
    assert!(e.message.contains("repetitions"), "lists what is allowed: {e}");
    assert!(e.to_string().contains("repetitons = 3"), "{e}");

    let e = parse("[defaults]\nready_timeout = \"10 parsecs\"\n").unwrap_err();
    assert_eq!(e.location, "p.toml:2:17", "{e}");
    assert!(e.message.contains("10s"), "{e}");

    let e = parse("[[contestant]]\nname = 'a'\nscenario = 'dumy'\ncommand = ['x']\n").unwrap_err();
    assert_eq!(e.location, "p.toml:3:12", "{e}");
    assert!(e.message.contains("event-log, dummy"), "{e}");

    let e =
        parse("[defaults]\ncpus = \"7\"\n[[contestant]]\nname = 'a'\nscenario = 'dummy'\ncommand = ['x']\n")
            .unwrap_err();
    assert_eq!(e.location, "p.toml:2:8", "{e}");
    assert!(e.message.contains("0-1"), "{e}");
}

#[test]
fn contestant_rules() {
    let base = "[[contestant]]\nname = 'a'\nscenario = 'dummy'\n";
    for (extra, needle) in [
        ("", "needs `command"),
        ("command = ['x']\nurl = 'http://x'\n", "both"),
        ("command = []\n", "empty"),
        ("command = ['x', '{prot}']\n", "unknown placeholder {prot}"),
        ("url = 'ftp://x'\n", "http://"),
        ("url = 'http://x'\nreset = ['y']\n", "`reset`"),
        ("command = ['x']\ncpus = '0'\nload_cpus = '0-1'\n", "overlaps"),
        ("command = ['x']\ncpu_quota = 0.0\n", "cpu_quota"),
        ("command = ['x']\nmemory = '12 parsecs'\n", "MiB"),
        ("command = ['x']\npath = 'db'\n", "path"),
    ] {
        let e = parse(&format!("{base}{extra}")).unwrap_err();
        assert!(e.to_string().contains(needle), "{extra:?}: {e}");
    }
    let e = parse(&format!("{base}command=['x']\n{base}command=['y']\n")).unwrap_err();
    assert!(e.message.contains("line 2"), "{e}");
    let e = parse("[[contestant]]\nname='d'\nscenario='db-read'\ncommand=['x']\n").unwrap_err();
    assert!(e.message.contains("`path = \"/db/<driver>\"`"), "{e}");
    let e = parse(&format!("{base}command=['x']\npath = '/api'\n")).unwrap_err();
    assert!(e.message.contains("leave `path` out, or write \"/\" or \"/events\""), "{e}");
    assert!(parse(&format!("{base}command=['x']\npath = '/events'\n")).is_ok());
    assert!(parse("").unwrap_err().message.contains("no [[contestant]]"));
    let e = parse(&format!("[load.dumy]\nx=1\n{base}command=['x']\n")).unwrap_err();
    assert!(e.message.contains("unknown scenario"), "{e}");
    // `{` that is not a placeholder is left alone (shell scripts, JSON).
    assert!(parse(&format!("{base}command=['sh','-c','f() {{ echo; }}; f {{port}}']\n")).is_ok());
}

#[test]
fn sizes_and_cpu_lists() {
    assert_eq!("512MiB".parse::<ByteSize>(), Ok(ByteSize(512 << 20)));
    assert_eq!("1 GB".parse::<ByteSize>(), Ok(ByteSize(1_000_000_000)));
    assert!("0MiB".parse::<ByteSize>().is_err() && "MiB".parse::<ByteSize>().is_err());
    assert_eq!("0,2-3,2".parse::<CpuList>(), Ok(CpuList(vec![0, 2, 3])));
    assert!("3-1".parse::<CpuList>().is_err() && "".parse::<CpuList>().is_err());
    assert_eq!(CpuList(vec![0, 1]).to_string(), "0-1");
    assert_eq!(CpuList(vec![0, 2, 3, 4, 7]).to_string(), "0,2-4,7");
}

#[test]
fn only_selects_and_says_what_exists() {
    let mut p = parse(GOOD).unwrap();
    assert!(p.select(&["nope".into()]).unwrap_err().contains("a, ext"));
    p.select(&["ext".into()]).unwrap();
    assert_eq!(p.contestants.len(), 1);
}

/// Regression: `repetitions = 4294967295` ran until the OOM killer, and
/// `repetitions = 0`, `duration = "5 parsecs"`, `duration = 5`,
/// `timeout = "0s"` and `rate = 0` were refused without a line (or at the
/// contestant's name). Every refused value gets its own `file:line:col`.
#[test]
fn every_refused_value_is_refused_at_its_place() {
    let tail = "[[contestant]]\nname = 'a'\nscenario = 'dummy'\ncommand = ['x']\n";
    for (head, at, says) in [
        ("[defaults]\nrepetitions = 4294967295\n", "p.toml:2:15", "`repetitions` must be from 1 to 1000"),
        ("[defaults]\nrepetitions = 0\n", "p.toml:2:15", "`repetitions` must be from 1 to 1000"),
        ("[defaults]\ncold_starts = 5000\n", "p.toml:2:15", "`cold_starts` must be from 0 to 1000"),
        ("[defaults]\nready_timeout = \"0s\"\n", "p.toml:2:17", "`ready_timeout` must be from"),
        ("[defaults]\nsample_interval = \"1ms\"\n", "p.toml:2:19", "`sample_interval` must be from 10ms"),
        ("[load.dummy]\nduration = \"5 parsecs\"\n", "p.toml:2:12", "is not a duration"),
        ("[load.dummy]\nduration = 5\n", "p.toml:2:12", "`duration`"),
        ("[load.dummy]\ntimeout = \"0s\"\n", "p.toml:2:11", "--timeout: must be longer than 0s"),
        ("[load.dummy]\nrate = 0\n", "p.toml:2:8", "--rate"),
        ("[load.dummy]\nconnections = 4294967295\n", "p.toml:2:15", "at most 100000"),
        ("[defaults]\ncpus = '0'\n[load.dummy]\ncpus = '1'\n", "p.toml:4:8", "load_cpus"),
    ] {
        let e = parse(&format!("{head}{tail}")).unwrap_err();
        assert_eq!(e.location, at, "{head:?}: {e}");
        assert!(e.message.contains(says), "{head:?}: {e}");
        assert!(e.excerpt.contains('^'), "{head:?}: a caret under the value: {e}");
    }
    let e = parse(&format!("{tail}cold_starts = 9999\n")).unwrap_err();
    assert_eq!(e.location, "p.toml:5:15", "{e}");
}

#[test]
fn tls_is_for_started_contestants_and_its_placeholders_need_it() {
    let ctx = PlanContext { cpus: vec![0, 1], variant: None };
    let plan = |c: &str| {
        Plan::parse(&format!("[[contestant]]\nname = \"a\"\nscenario = \"dummy\"\n{c}"), None, &ctx)
    };
    let ok = plan("command = [\"./s\", \"--cert\", \"{tls_cert}\", \"--key\", \"{tls_key}\"]\ntls = true")
        .unwrap();
    assert!(matches!(ok.contestants[0].launch, Launch::Command { tls: true, .. }));
    let e = plan("command = [\"./s\", \"--cert\", \"{tls_cert}\"]").unwrap_err().to_string();
    assert!(e.contains("tls = true"), "{e}");
    let e = plan("url = \"https://127.0.0.1:8443\"\ntls = true").unwrap_err().to_string();
    assert!(e.contains("`tls` needs a server stackbench starts"), "{e}");
    assert!(plan("url = \"https://127.0.0.1:8443/\"").is_ok());
    let e = plan("url = \"https://127.0.0.1:0/\"").unwrap_err().to_string();
    assert!(e.contains("port 0"), "{e}");
    // A load profile's TLS flags are for a contestant spoken to over TLS, and only for it.
    let no_resume = "\nload = { no-resume = true }";
    assert!(plan(&format!("command = [\"./s\"]\ntls = true{no_resume}")).is_ok());
    assert!(plan(&format!("url = \"https://127.0.0.1:8443/\"{no_resume}")).is_ok());
    let e = plan(&format!("command = [\"./s\"]{no_resume}")).unwrap_err().to_string();
    assert!(e.contains("--no-resume: applies to https:// URLs"), "{e}");
}

#[test]
fn a_companion_is_a_started_contestant_of_the_plan_and_flags_can_drop_it() {
    let with =
        |name: &str| GOOD.replace("repetitions = 2\n", &format!("repetitions = 2\ncompanion = \"{name}\"\n"));
    let mut p = parse(&with("a")).unwrap();
    assert_eq!(p.companion.as_deref(), Some("a"));
    p.unbudget();
    assert_eq!(p.companion, None, "--unbudgeted measures each alone");
    let mut p = parse(&with("a")).unwrap();
    p.select(&["ext".to_owned()]).unwrap();
    assert_eq!(p.companion, None, "--only without it");
    let e = parse(&with("nope")).unwrap_err().to_string();
    assert!(e.contains("p.toml:5:") && e.contains("not a contestant") && e.contains("a, ext"), "{e}");
    let e = parse(&with("ext")).unwrap_err().to_string();
    assert!(e.contains("`url`"), "{e}");
}

#[test]
fn a_warmup_quota_lifts_a_budget_and_flags_can_drop_it() {
    let with = |defaults: &str| GOOD.replace("repetitions = 2\n", &format!("repetitions = 2\n{defaults}\n"));
    let mut p = parse(&with("cpu_quota = 0.5\nwarmup_cpu_quota = 1.0")).unwrap();
    assert_eq!(p.warmup_cpu_quota, Some(1.0));
    p.unbudget();
    assert_eq!(p.warmup_cpu_quota, None, "--unbudgeted: no budget to lift");
    let e = parse(&with("warmup_cpu_quota = 1.0")).unwrap_err().to_string();
    assert!(e.contains("p.toml:5:") && e.contains("no contestant has one"), "{e}");
    let e = parse(&with("cpu_quota = 0.5\nwarmup_cpu_quota = 0.25")).unwrap_err().to_string();
    assert!(e.contains("below contestant \"a\"'s `cpu_quota` (0.5)"), "{e}");
    let e = parse(&with("cpu_quota = 0.5\nwarmup_cpu_quota = 0.0")).unwrap_err().to_string();
    assert!(e.contains("at least 0.01, got 0"), "{e}");
}
