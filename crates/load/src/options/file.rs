//! `--scenario-file` and `--scenario` (a built-in is a file too) and the flags
//! that go with them (`--variable`, a threshold naming a request), checked
//! against the rest of the options before the file is loaded
//! ([`crate::flow::FileSource`]).

use std::sync::Arc;

use stackbench_hurl::{Aim, Builtin, FileLimits, Protocol, UnknownBuiltin};

use super::LoadOptions;
use crate::flow::FileSource;
use crate::spec::Transport;
use crate::spec_error::{SpecError, conflict, invalid};
use crate::target::Target;

/// `--origin FROM=URL`s, as pairs.
fn origin_maps(o: &LoadOptions) -> Result<Vec<(String, String)>, SpecError> {
    stackbench_hurl::parse_origin_maps(&o.origin).map_err(|why| invalid("--origin", why))
}

/// The URL a scenario file run as written goes to (no target given): where its first
/// origin goes.
pub fn written_target(o: &LoadOptions) -> Result<String, SpecError> {
    let Some(path) = &o.scenario_file else {
        return Err(invalid(
            "URL",
            "give the target URL (only a --scenario-file runs without one, as written)",
        ));
    };
    let maps = origin_maps(o)?;
    let aim = Aim { target: None, base_variable: None, maps: &maps };
    let f = FileSource::load(path, &o.variable, o.seed.unwrap_or(1), &limits(o), aim)
        .map_err(SpecError::ScenarioFile)?;
    f.routes
        .first()
        .ok_or_else(|| SpecError::ScenarioFile(format!("{}: the file has no request", path.display())))
}

/// The scenario of `o` sent to `target`: its `--scenario-file` (with its `--variable`s; run as
/// written when `as_written`, the target then its first origin's server), or the built-in
/// file `--scenario` names, loaded and checked against the other options; `None` without either.
pub fn from_options(
    o: &LoadOptions,
    target: &Target,
    as_written: bool,
) -> Result<Option<Arc<FileSource>>, SpecError> {
    let seed = o.seed.unwrap_or(1);
    let f = if let Some(path) = &o.scenario_file {
        let why = "the scenario file writes its own requests";
        for (given, flag) in [
            (o.scenario.is_some(), "--scenario"),
            (o.method.is_some(), "-m/--method"),
            (o.body.is_some(), "-b/--body"),
            (!o.header.is_empty(), "-H/--header"),
            (o.proto.is_some(), "--proto"),
            (o.http2, "--http2"),
            (o.grpc, "--grpc"),
        ] {
            if given {
                return Err(conflict("--scenario-file", flag, why));
            }
        }
        let maps = origin_maps(o)?;
        let aim = Aim {
            target: (!as_written).then_some(target.url.as_str()),
            base_variable: o.base_variable.as_deref(),
            maps: &maps,
        };
        let mut f =
            FileSource::load(path, &o.variable, seed, &limits(o), aim).map_err(SpecError::ScenarioFile)?;
        f.scenario.keep_cookies |= o.keep_cookies;
        for note in &f.notes {
            eprintln!("note: {note}");
        }
        f
    } else if let Some(name) = &o.scenario {
        let builtin: Builtin =
            name.parse().map_err(|e: UnknownBuiltin| SpecError::Scenario(e.to_string()))?;
        let why = "the scenario builds its own requests";
        for (given, flag) in [
            (o.method.is_some(), "-m/--method"),
            (o.body.is_some(), "-b/--body"),
            (!o.header.is_empty(), "-H/--header"),
            (o.proto.is_some(), "--proto"),
        ] {
            if given {
                return Err(conflict("--scenario", flag, why));
            }
        }
        if !o.variable.is_empty() {
            return Err(invalid("--variable", "needs --scenario-file FILE, whose variable it sets"));
        }
        if as_written {
            return Err(invalid("URL", "a built-in scenario needs the server's URL"));
        }
        if o.grpc && builtin.file(false).protocol != Protocol::Grpc {
            return Err(conflict("--grpc", "--scenario", "only bubble-sort is a gRPC scenario"));
        }
        let mut f = FileSource::builtin(builtin, target, o.http2, seed).map_err(SpecError::Scenario)?;
        f.scenario.limits.max_capture = limits(o).max_capture;
        f
    } else {
        if let Some(t) = o.threshold.iter().chain(&o.slo).find(|t| t.request.is_some()) {
            return Err(invalid(
                "--threshold",
                format!("{} names a request, which needs --scenario or --scenario-file", t.expression),
            ));
        }
        if !o.variable.is_empty() {
            return Err(invalid("--variable", "needs --scenario-file FILE, whose variable it sets"));
        }
        return Ok(None);
    };
    if let Some(t) = o.slo.iter().find(|t| t.request.is_some()) {
        return Err(invalid(
            "--slo",
            format!("{}: a capacity search holds the totals; drop the request name", t.expression),
        ));
    }
    for t in &o.threshold {
        if let Some(name) = t.request.as_ref().filter(|n| *n != "iteration" && !f.names.contains(n)) {
            let names: Vec<String> = f.names.iter().map(|n| format!("{n:?}")).collect();
            return Err(invalid(
                "--threshold",
                format!(
                    "{}: the scenario has no request named {name:?}; its names are {} and \"iteration\"",
                    t.expression,
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(Some(Arc::new(f)))
}

/// What a scenario may read and keep: `--file-root`, `--max-file-size`, `--max-capture`.
fn limits(o: &LoadOptions) -> FileLimits {
    FileLimits::given(o.file_root.clone(), o.max_file_size.map(|s| s.0), o.max_capture.map(|s| s.0))
}

/// How a scenario file's requests travel: its `protocol`.
pub fn transport(f: &FileSource) -> Transport {
    match f.scenario.protocol {
        Protocol::Http1 => Transport::Http1,
        Protocol::H2c => Transport::H2c,
        Protocol::Grpc => Transport::Grpc,
    }
}
