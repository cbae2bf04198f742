//! The real [`LoadDriver`]: stackbench's own load engine (`stackbench-load`).
//! The plan turns a load profile into [`stackbench_load::LoadOptions`]
//! ([`crate::plan::profile::options`]); this driver adds the target URL, the
//! generator's cores (those the contestant does not use) and the CA to trust,
//! and runs the engine.

use crate::load::{Cancel, LoadDriver, LoadJob};
use crate::plan::profile::options;
use stackbench_load::{LoadOptions, LoadSpec, Stop};
use stackbench_record::RunRecord;

/// Drives runs with the built-in engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineDriver;

fn spec(job: &LoadJob) -> Result<(LoadOptions, LoadSpec), String> {
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
    Ok((options, spec))
}

/// Runs the `[setup]` step of the scenario file `spec` sends, once, before its load (see
/// [`crate::verify::file::setup_load`]), reaching the server as `options` say (TLS, routes).
pub fn setup(options: &LoadOptions, spec: &mut LoadSpec) -> Result<(), String> {
    let has_setup =
        matches!(&spec.requests, stackbench_load::RequestSource::File(f) if f.scenario.setup.is_some());
    if !has_setup {
        return Ok(());
    }
    let route =
        stackbench_load::Route::new(&options.resolve, &options.connect_to).map_err(|e| e.to_string())?;
    let reach = crate::client::Reach { tls: options.tls_flags(), route };
    let prober = crate::client::HyperProber::with_reach(reach)
        .map_err(|e| format!("cannot start the [setup] step: {e}"))?;
    crate::verify::file::setup_load(&prober, spec)
}

impl LoadDriver for EngineDriver {
    fn check(&self, job: &LoadJob) -> Result<(), String> {
        spec(job).map(|_| ())
    }

    fn run(&self, job: &LoadJob, cancel: &Cancel) -> Result<RunRecord, String> {
        let (options, mut spec) = spec(job)?;
        setup(&options, &mut spec)?;
        let stop = Stop::new();
        let forward = stop.clone();
        cancel.on_cancel(move || forward.stop());
        stackbench_load::run(&spec, &stop).map_err(|e| e.to_string())
    }

    fn stuck(&self) -> Option<String> {
        // A run joins every worker that ends; those past its bound are stuck, but give a
        // thread that was ending as the run gave up on it a moment to go.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while stackbench_load::live_workers() > 0 && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let n = stackbench_load::live_workers();
        (n > 0).then(|| {
            format!(
                "{n} load worker thread(s) of this run are still running after it ended (a bug in \
                 stackbench; please report it); no run may start beside them, so the plan stops here"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackbench_hurl::Builtin;

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
        let (_, s) = spec(&j).unwrap();
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
        let (_, grpc) = spec(&job("", Builtin::BUBBLE_SORT, "")).unwrap();
        assert_eq!(grpc.transport, stackbench_load::Transport::Grpc);
    }
}
