//! The real [`LoadDriver`]: stackbench's own load engine (`stackbench-load`).
//! A plan's load profile is a table of `stackbench load` options by their long
//! flag names (kebab-case), so it deserializes straight into
//! [`stackbench_load::LoadOptions`]; the orchestrator adds the scenario, the
//! target URL and the generator's cores (those the contestant does not use).

use crate::load::{Cancel, LoadDriver, LoadJob};
use crate::plan::ScenarioRef;
use serde::Deserialize as _;
use stackbench_load::{LoadOptions, LoadSpec, Stop};
use stackbench_record::RunRecord;
use stackbench_record::size::ByteSize;

/// Drives runs with the built-in engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineDriver;

/// The engine's options for a profile: the table's keys, plus the scenario
/// (`scenario`, or a scenario file's path and variables as `load --scenario-file
/// F --variable N=V` gives them).
pub fn options(scenario: &ScenarioRef, profile: &toml::Table) -> Result<LoadOptions, String> {
    let mut table = profile.clone();
    if let Some(s) = table.get("scenario").and_then(toml::Value::as_str)
        && s != scenario.name()
    {
        return Err(format!(
            "its `scenario = {s:?}` differs from the contestant's scenario {scenario}; remove it"
        ));
    }
    match scenario {
        ScenarioRef::Builtin(s) => {
            table.insert("scenario".into(), toml::Value::String(s.name().into()));
        }
        ScenarioRef::File(_) => {
            table.remove("scenario");
        }
    }
    if let Some(why) = table.keys().find_map(|k| crate::plan::profile::refused(k)) {
        return Err(why.to_owned());
    }
    let mut options =
        LoadOptions::deserialize(toml::Value::Table(table)).map_err(|e| e.message().trim().to_owned())?;
    if let ScenarioRef::File(f) = scenario {
        options.scenario_file = Some(f.path.clone());
        options.variable = f.variable_args();
        // The file is loaded again by the engine, as it was when the plan was read.
        let limits = &f.scenario.limits;
        options.file_root.clone_from(&limits.file_root);
        options.max_file_size = Some(ByteSize(limits.max_file_size));
        options.max_capture = Some(ByteSize(limits.max_capture as u64));
    }
    Ok(options)
}

/// About how long one contestant's measured runs take with this profile: a
/// plain run is its warm-up and measured time; a capacity search about nine
/// steps the first time and four after (docs/capacity.md), each a settle and
/// a step; plus a second to start and stop the contestant each time.
pub fn estimated_runs(
    scenario: &ScenarioRef,
    profile: &toml::Table,
    repetitions: u32,
) -> std::time::Duration {
    use std::time::Duration;
    // The timing does not depend on what is sent: the spec of the same profile's fixed request.
    let timing = |o: LoadOptions| LoadOptions {
        scenario: None,
        scenario_file: None,
        variable: Vec::new(),
        check_every: None,
        grpc: false,
        threshold: Vec::new(),
        slo: o.slo.iter().filter(|t| t.request.is_none()).cloned().collect(),
        ..o
    };
    let Ok(spec) = options(scenario, profile)
        .and_then(|o| timing(o).to_spec("http://127.0.0.1:9/").map_err(|e| e.to_string()))
    else {
        return Duration::ZERO;
    };
    let overhead = Duration::from_secs(1);
    let one = |steps: u32| match &spec.search {
        Some(s) => (spec.warmup + s.step) * steps + overhead,
        None => spec.warmup + spec.duration().unwrap_or_default() + overhead,
    };
    if repetitions == 0 {
        return Duration::ZERO;
    }
    one(9) + one(4) * (repetitions - 1)
}

fn spec(job: &LoadJob) -> Result<LoadSpec, String> {
    let mut options = options(&job.scenario, &job.profile)?;
    if options.cacert.is_none() && !options.insecure {
        options.cacert.clone_from(&job.cacert);
    }
    let mut spec = options.to_spec(&job.url).map_err(|e| e.to_string())?;
    spec.progress = false;
    if let Some(search) = spec.search.as_mut() {
        search.bracket = job.bracket;
    }
    if let Some(cpus) = &job.cpus {
        spec.cpus = Some(cpus.clone());
        if !job.profile.contains_key("threads") {
            spec.threads = cpus.len().max(1);
        }
    }
    Ok(spec)
}

impl LoadDriver for EngineDriver {
    fn check(&self, job: &LoadJob) -> Result<(), String> {
        spec(job).map(|_| ())
    }

    fn run(&self, job: &LoadJob, cancel: &Cancel) -> Result<RunRecord, String> {
        let spec = spec(job)?;
        let stop = Stop::new();
        let forward = stop.clone();
        cancel.on_cancel(move || forward.stop());
        stackbench_load::run(&spec, &stop).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackbench_hurl::builtin::Builtin;

    fn job(profile: &str, scenario: Builtin, path: &str) -> LoadJob {
        LoadJob {
            url: format!("http://127.0.0.1:9{path}"),
            scenario: scenario.into(),
            profile: toml::from_str(profile).unwrap(),
            cpus: Some(vec![1]),
            bracket: None,
            cacert: None,
        }
    }

    #[test]
    fn profiles_are_load_options() {
        let j = job(
            "connections = 50\nduration = \"2s\"\nwarmup = \"1s\"\nthink = \"100ms\"",
            Builtin::DUMMY,
            "",
        );
        let s = spec(&j).unwrap();
        assert_eq!((s.cpus.clone(), s.threads, s.progress), (Some(vec![1]), 1, false));
        assert_eq!(s.duration(), Some(std::time::Duration::from_secs(2)));
        let file = s.requests.file().expect("a built-in is sent from its file");
        assert!(file.builtin && file.scenario.name == "dummy", "{file:?}");
        let e = EngineDriver.check(&job("conections = 5", Builtin::DUMMY, "")).unwrap_err();
        assert!(e.contains("conections") && e.contains("connections"), "{e}");
        let e = EngineDriver.check(&job("duration = \"soon\"", Builtin::DUMMY, "")).unwrap_err();
        assert!(e.contains("soon"), "{e}");
        assert!(EngineDriver.check(&job("", Builtin::DB_READ, "")).unwrap_err().contains("/db/"));
        assert!(EngineDriver.check(&job("", Builtin::DB_READ, "/db/sqlite")).is_ok());
        assert!(EngineDriver.check(&job("scenario = \"dummy\"", Builtin::EVENT_LOG, "")).is_err());
        assert!(
            EngineDriver.check(&job("cpus = \"1\"", Builtin::DUMMY, "")).unwrap_err().contains("load_cpus")
        );
        assert!(
            EngineDriver
                .check(&job("proto = \"x.proto\"", Builtin::BUBBLE_SORT, ""))
                .unwrap_err()
                .contains("`proto`")
        );
        let grpc = spec(&job("", Builtin::BUBBLE_SORT, "")).unwrap();
        assert_eq!(grpc.transport, stackbench_load::Transport::Grpc);
    }
}
