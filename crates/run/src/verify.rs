//! Executes contract verification against a live contestant, and waits for a
//! freshly started one to give its first verified answer (the end of a cold
//! start). `stackbench verify URL --scenario S` is [`verify`] on its own. Every
//! built-in scenario is verified by its scenario file ([`stackbench_hurl::Builtin`]; `bubble-sort`
//! by its gRPC or its Connect JSON form), run as [`file`] runs any file.
//!
//! Every case has a level (TechEmpower's verifier, pass / warn / fail, is the
//! model): a **core** rule says the answer is right, a **hardening** rule says
//! bad input is refused. A contestant that breaks a core rule is not measured;
//! one that breaks only hardening rules is measured, and every report says what
//! it does not enforce, unless the plan asks for `verify = "strict"`.

use std::time::{Duration, Instant};

use stackbench_hurl::{Builtin, BuiltinPathError, VerifyLevel};
use stackbench_record::Verification;

use crate::client::{ProbeError, Prober};

/// Per-request timeout of a verification case.
pub const CASE_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of a verification of a built-in scenario.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// The path of the contestant's URL: `db-read`'s driver, e.g. `/db/sqlite` (required for
    /// db-read); the others' is their root (`/`, or `/events`).
    pub base_path: String,
    /// The store was emptied before the verification (the orchestrator resets
    /// it): event-log's count must then start at 0 (its file's `clean_values`).
    pub clean_store: bool,
    /// `bubble-sort`: verify the Connect JSON form over HTTP/1.1 instead of gRPC.
    pub connect_json: bool,
}

/// Runs every case of the scenario's file in order; the outcome lists each rule
/// broken, its level and how. `exited` says whether the contestant has ended
/// (and how): once it has, the verification stops there with that as its
/// failure, rather than counting every later case as a refused connection.
pub fn verify(
    prober: &dyn Prober,
    base: &str,
    builtin: Builtin,
    opts: &VerifyOptions,
    exited: &mut dyn FnMut() -> Option<String>,
) -> Result<Verification, BuiltinPathError> {
    let f = builtin.file(opts.connect_json);
    let variables = builtin.variables(&opts.base_path)?;
    let defined: Vec<(&str, &str)> = variables.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut no_command = |_: &[String]| Err("a built-in scenario has no reset command".to_owned());
    let v = match file::routes(f, &defined, base) {
        Ok(routes) => {
            let aim = stackbench_hurl::Aimed { target: Some(base.trim_end_matches('/')), routes: &routes };
            file::verify(prober, f, aim, &defined, opts.clean_store, &mut no_command, exited)
        }
        Err(why) => file::unroutable(f, why),
    };
    Ok(file::record(f, &v))
}

/// How waiting for readiness ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// The first verified answer came `after` the start. The contestant became
    /// ready within `resolution` before the probe that saw it (the time since
    /// the probe before, which did not): the cold start's quantization.
    Yes { after: Duration, resolution: Duration },
    /// It answered, but wrongly (the last answer's violation).
    Wrong(String),
    /// Nothing verified in time; the last thing seen.
    Timeout(String),
    /// The process ended while we waited.
    Exited,
}

/// The first pause between readiness probes; it doubles up to [`max_pause`].
pub const FIRST_PAUSE: Duration = Duration::from_micros(50);

/// The longest pause between probes this long into a start: 1 ms, or 1% of
/// the time waited, so the resolution stays within 1% however slow the start.
pub fn max_pause(waited: Duration) -> Duration {
    (waited / 100).max(Duration::from_millis(1))
}

/// Probes until `probe` passes, `timeout` passes (measured from `started`), or
/// `alive()` says the process ended: `probe(wait)` sends one request (waiting at
/// most `wait`) and judges its answer. Wrong answers keep being retried until the
/// deadline: some servers answer 503 while they warm up. Probes start
/// [`FIRST_PAUSE`] apart and back off to [`max_pause`].
pub fn wait_until(
    started: Instant,
    timeout: Duration,
    alive: &mut dyn FnMut() -> bool,
    probe: &mut dyn FnMut(Duration) -> Result<Result<(), String>, ProbeError>,
) -> Ready {
    let mut last = "no answer yet".to_owned();
    let mut wrong = None;
    let mut pause = FIRST_PAUSE;
    let mut previous_probe = Duration::ZERO;
    loop {
        if !alive() {
            return Ready::Exited;
        }
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return match wrong {
                Some(w) => Ready::Wrong(w),
                None => Ready::Timeout(last),
            };
        }
        let this_probe = started.elapsed();
        match probe(left.min(Duration::from_secs(2))) {
            Ok(Ok(())) => {
                return Ready::Yes {
                    after: started.elapsed(),
                    resolution: this_probe.saturating_sub(previous_probe),
                };
            }
            Ok(Err(why)) => wrong = Some(why),
            Err(ProbeError::Refused) => last = "connection refused".into(),
            Err(e) => last = e.to_string(),
        }
        previous_probe = this_probe;
        std::thread::sleep(pause);
        pause = (pause * 2).min(max_pause(started.elapsed()));
    }
}

pub mod file;

/// The rules `scenario` is verified by, in order, each with its level (what `verify`
/// prints a line for).
pub fn rules(builtin: Builtin, opts: &VerifyOptions) -> Vec<(String, &'static str)> {
    let f = builtin.file(opts.connect_json);
    f.verify.iter().map(|c| (c.name.clone(), level_name(c.level))).collect()
}

/// A level as the record and the output write it.
pub fn level_name(level: VerifyLevel) -> &'static str {
    match level {
        VerifyLevel::Core => "core",
        VerifyLevel::Hardening => "hardening",
    }
}

/// Waits for a freshly started contestant of a built-in scenario to answer its
/// readiness probe rightly: the `probe = true` case of its file.
pub fn wait_ready_builtin(
    prober: &dyn Prober,
    base: &str,
    builtin: Builtin,
    opts: &VerifyOptions,
    started: Instant,
    timeout: Duration,
    alive: &mut dyn FnMut() -> bool,
) -> Result<Ready, BuiltinPathError> {
    let f = builtin.file(opts.connect_json);
    let variables = builtin.variables(&opts.base_path)?;
    let defined: Vec<(&str, &str)> = variables.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut probe = file::readiness(prober, f, &defined).expect("a built-in file names its probe (tested)");
    Ok(wait_until(started, timeout, alive, &mut |wait| probe.probe(base, wait)))
}

#[cfg(test)]
mod tests;
