//! Verification of a scenario file (`crates/hurl`): its `[[verify]]` cases (or
//! each flow once) run against a live server through the [`Prober`], each
//! failed check kept with its `file:line:col`. `stackbench verify URL
//! --scenario-file F` prints the cases; the orchestrator keeps them in the
//! contestant's record ([`record`]) and leaves it out when a core case fails.
//! Also the readiness of a contestant that serves a scenario file
//! ([`any_answer`]), and its reset step when the reset is requests
//! ([`reset_requests`]).

use std::time::Duration;

use stackbench_hurl::model::Entry;
use stackbench_hurl::run::{Verification, run_flow, verify as run_cases};
use stackbench_hurl::scenario::{Level, Protocol, Reset, Scenario};
use stackbench_hurl::{Answer, Kind, Request, Vars};
use stackbench_record::store::{Verification as Record, VerifyFailure};

use crate::client::{ProbeError, Prober, Reply};

use super::CASE_TIMEOUT;

/// An answer of the prober, as a scenario file's checks see it.
struct Answered(Reply);

impl Answer for Answered {
    fn status(&self) -> u16 {
        self.0.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        let mut values = self.0.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
        values.nth(nth).and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
    fn body(&self) -> &[u8] {
        &self.0.body
    }
}

/// Sends a rendered request of a scenario file through `prober`.
fn send(prober: &dyn Prober, e: &Entry, req: &Request) -> Result<Answered, String> {
    let url = std::str::from_utf8(&req.url).map_err(|_| "the URL is not UTF-8".to_owned())?;
    let headers = std::str::from_utf8(&req.headers).map_err(|_| "a header is not UTF-8".to_owned())?;
    let headers: Vec<(&str, &str)> =
        headers.split("\r\n").filter_map(|l| l.split_once(':')).map(|(k, v)| (k, v.trim())).collect();
    prober
        .send_http1(url, &e.method, &headers, &req.body, CASE_TIMEOUT)
        .map(Answered)
        .map_err(|e| e.to_string())
}

/// Why a scenario file cannot be verified here.
pub fn unsupported(scenario: &Scenario) -> Option<String> {
    (scenario.protocol != Protocol::Http1).then(|| {
        format!(
            "scenario {:?}: verification runs HTTP/1.1 scenario files for now (this one is {})",
            scenario.name,
            if scenario.protocol == Protocol::H2c { "h2c" } else { "gRPC" }
        )
    })
}

/// Runs the scenario's cases once against `base_url` (`{{base_url}}`), with
/// `defined` variables. `run_command` runs a `[reset] command`; `exited` says
/// whether the server has ended (and how), so a request it can no longer
/// answer is reported as that.
pub fn verify(
    prober: &dyn Prober,
    scenario: &Scenario,
    base_url: &str,
    defined: &[(&str, &str)],
    run_command: &mut dyn FnMut(&[String]) -> Result<(), String>,
    exited: &mut dyn FnMut() -> Option<String>,
) -> Verification {
    let mut send = |e: &Entry, req: &Request| -> Result<Answered, String> {
        send(prober, e, req).map_err(|why| match exited() {
            Some(how) => format!("the server exited with {how} ({why})"),
            None => why,
        })
    };
    run_cases(scenario, base_url.trim_end_matches('/'), defined, 1, &mut send, run_command)
}

/// The verification as a contestant's record keeps it: a failure per failed
/// request of a case, its rule the case's name and its detail each failed
/// check at `file:line:col`.
pub fn record(v: &Verification) -> Record {
    let mut failures = Vec::new();
    for case in v.cases.iter().filter(|c| !c.passed()) {
        let level = match case.level {
            Level::Core => "core",
            Level::Hardening => "hardening",
        };
        for step in case.steps.iter().filter(|s| s.error.is_some() || !s.failures.is_empty()) {
            let checks = step.failures.iter().map(|f| format!("{}:{f}", case.file));
            let detail: Vec<String> = checks.chain(step.error.clone()).collect();
            failures.push(VerifyFailure {
                rule: case.name.clone(),
                detail: format!("{}: {}", step.name, detail.join("; ")),
                level: level.to_owned(),
                enforces: String::new(),
            });
        }
    }
    Record { passed: v.passed(), cases: v.cases.len() as u32, failures }
}

/// Readiness of a server that serves a scenario file: any HTTP answer to
/// `GET url` (a scenario file has no side-effect-free request stackbench
/// could call verified; its checks run in verification).
pub fn any_answer(prober: &dyn Prober, url: &str, timeout: Duration) -> Result<(), ProbeError> {
    prober.send_http1(url, "GET", &[], &[], timeout).map(drop)
}

/// Sends the scenario's `[reset]` requests to `base_url`; the first failed
/// check or unanswered request is the error.
pub fn reset_requests(
    prober: &dyn Prober,
    scenario: &Scenario,
    base_url: &str,
    defined: &[(&str, &str)],
) -> Result<(), String> {
    let Some(Reset::Hurl(hurl)) = &scenario.reset else { return Ok(()) };
    let mut vars = Vars::new(1);
    vars.set("base_url", base_url.trim_end_matches('/'), Kind::String);
    for (k, v) in defined {
        vars.set(k, v, Kind::String);
    }
    scenario.draw(0, &mut vars);
    let steps = run_flow(hurl, &[], &mut vars, &mut |e: &Entry, req: &Request| send(prober, e, req));
    match steps.iter().find(|s| s.error.is_some() || !s.failures.is_empty()) {
        Some(s) => Err(s.error.clone().unwrap_or_else(|| format!("{}:{}", hurl.file, s.failures[0]))),
        None => Ok(()),
    }
}
