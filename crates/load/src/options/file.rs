//! `--scenario-file` and the flags that go with it (`--variable`, a
//! threshold naming a request), checked against the rest of the options
//! before the file is loaded ([`crate::flow::FileSource`]).

use std::sync::Arc;

use stackbench_hurl::scenario::Protocol;

use super::LoadOptions;
use crate::flow::FileSource;
use crate::spec::Transport;
use crate::spec_error::{SpecError, conflict, invalid};

/// The `--scenario-file` of `o` (and its `--variable`s), loaded and checked against the
/// other options; `None` without one.
pub fn from_options(o: &LoadOptions) -> Result<Option<Arc<FileSource>>, SpecError> {
    let Some(path) = &o.scenario_file else {
        if let Some(t) = o.threshold.iter().chain(&o.slo).find(|t| t.request.is_some()) {
            return Err(invalid(
                "--threshold",
                format!("{} names a request, which needs --scenario-file", t.expression),
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
    let f = FileSource::load(path, &o.variable, o.seed.unwrap_or(1)).map_err(SpecError::ScenarioFile)?;
    for t in &o.threshold {
        if let Some(name) = t.request.as_ref().filter(|n| *n != "iteration" && !f.names.contains(n)) {
            let names: Vec<String> = f.names.iter().map(|n| format!("{n:?}")).collect();
            return Err(invalid(
                "--threshold",
                format!(
                    "{}: the scenario file has no request named {name:?}; its names are {} and \"iteration\"",
                    t.expression,
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(Some(Arc::new(f)))
}

/// How a scenario file's requests travel: its `protocol`.
pub fn transport(f: &FileSource) -> Transport {
    match f.scenario.protocol {
        Protocol::Http1 => Transport::Http1,
        Protocol::H2c => Transport::H2c,
        Protocol::Grpc => Transport::Grpc,
    }
}
