//! Running scenarios over any transport: one iteration of a flow (entries in
//! order, captures feeding the entries after), and `verify`'s cases with
//! their contract levels and the reset step. The transport is a callback
//! from a rendered request to an answer, so `stackbench verify`, the load
//! engine and the tests (an in-memory server) share this logic.

use std::fmt;

use crate::error::{MESSAGE_MAX, cut};
use crate::eval::{Answer, Failure, FailureKind, Request};
use crate::model::{Entry, HurlFile};
use crate::origin::Routes;
use crate::scenario::{CleanValue, Level, Reset, Scenario};
use crate::template::{Kind, RenderError, Unwritable, Value, Vars};

pub mod wire;

use wire::Wire;

/// Sends a rendered request and returns the answer, or why there is none.
pub type Send<'a, A> = &'a mut dyn FnMut(&Entry, &Request) -> Result<A, String>;

/// What happened to one request of an iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The request's name.
    pub name: String,
    /// The checks that did not hold.
    pub failures: Vec<Failure>,
    /// No answer to check: the request could not be rendered or sent (the iteration stops);
    /// or, beside its failures, why a variable a check names has no value.
    pub error: Option<String>,
}

/// Runs `hurl`'s entries in order with `vars` (whose captures from an
/// earlier iteration are forgotten first); stops at the first request
/// that cannot be sent.
pub fn run_flow<A: Answer>(
    hurl: &HurlFile,
    names: &[String],
    vars: &mut Vars,
    send: Send<'_, A>,
) -> Vec<Step> {
    run_flow_explained(hurl, names, vars, &mut Wire::default(), send, &|_, _| None)
}

/// As [`run_flow`], in the session `wire` (where the requests go, the user's cookies).
pub fn run_flow_in<A: Answer>(
    hurl: &HurlFile,
    names: &[String],
    vars: &mut Vars,
    wire: &mut Wire<'_>,
    send: Send<'_, A>,
) -> Vec<Step> {
    run_flow_explained(hurl, names, vars, wire, send, &|_, _| None)
}

/// As [`run_flow_in`]; `why(name, vars)` says why a variable has no value when it is not a
/// failed capture (an expression, [`Scenario::why_no_value`]).
fn run_flow_explained<A: Answer>(
    hurl: &HurlFile,
    names: &[String],
    vars: &mut Vars,
    wire: &mut Wire<'_>,
    send: Send<'_, A>,
    why: &dyn Fn(&str, &Vars) -> Option<String>,
) -> Vec<Step> {
    vars.unset(hurl.captures().map(|c| &*c.name));
    let (mut req, mut scratch) = (Request::default(), Vec::new());
    let mut steps = Vec::with_capacity(hurl.entries.len());
    'entries: for (i, e) in hurl.entries.iter().enumerate() {
        let name = names.get(i).cloned().unwrap_or_else(|| e.name());
        let no_value = |err: &RenderError, vars: &Vars| {
            unwritten(&hurl.file, err, || {
                why(&err.name, vars).unwrap_or_else(|| "the capture that sets it failed".into())
            })
        };
        let options = match e.run_options(vars) {
            Ok(o) => o,
            Err(err) => {
                steps.push(Step { name, failures: Vec::new(), error: Some(no_value(&err, vars)) });
                break;
            }
        };
        if options.skip {
            continue;
        }
        let (Some(repeat), Some(retry)) = (options.repeat, options.retry) else {
            let why = format!(
                "{}:{}: `repeat` and `retry` without end (-1) cannot be verified: give a count",
                hurl.file, e.pos
            );
            steps.push(Step { name, failures: Vec::new(), error: Some(why) });
            break;
        };
        for _ in 0..repeat {
            let mut tries = 0;
            let step = loop {
                std::thread::sleep(options.delay);
                if let Err(err) =
                    e.render(vars, &mut req).and_then(|()| e.read_body_file(hurl, vars, &mut req.body))
                {
                    steps.push(Step {
                        name: name.clone(),
                        failures: Vec::new(),
                        error: Some(no_value(&err, vars)),
                    });
                    break 'entries;
                }
                let answer = match wire.exchange(e, &mut req, &options, send) {
                    Ok(a) => a,
                    Err(why) => {
                        // No answer: the request's place says which one, as a failed check's does.
                        let error = Some(format!("{}:{}: {why}", hurl.file, e.pos));
                        steps.push(Step { name: name.clone(), failures: Vec::new(), error });
                        break 'entries;
                    }
                };
                let mut failures = Vec::new();
                e.check(&answer, vars, &mut scratch, &mut failures);
                if !failures.is_empty() && tries < retry {
                    tries += 1;
                    std::thread::sleep(options.retry_interval);
                    continue;
                }
                // A check that names an expression without value: say why it has none.
                let error = failures.iter().find_map(|f| match &f.kind {
                    FailureKind::Render(r) if r.why == crate::template::Unwritable::NoValue => {
                        why(&r.name, vars).map(|w| format!("variable `{}` has no value ({w})", r.name))
                    }
                    _ => None,
                });
                // As Hurl: an answer's body written where `output` says; a failure ends the run.
                if let Err(why) = e.write_output(hurl, vars, answer.body()) {
                    let error = Some(format!("{}:{why}", hurl.file));
                    steps.push(Step { name: name.clone(), failures, error });
                    break 'entries;
                }
                break Step { name: name.clone(), failures, error };
            };
            steps.push(step);
        }
    }
    steps
}

/// Why a request of `file` could not be written (`err`), as `verify` and the load engine
/// both say it: `file:line:col: variable `x` has no value (because)`, or why its value could
/// not be written (an expression's failure, a value that cannot go where it stands).
pub fn unwritten(file: &str, err: &RenderError, because: impl FnOnce() -> String) -> String {
    match err.why {
        Unwritable::NoValue => format!("{file}:{err} ({})", because()),
        _ => format!("{file}:{err}"),
    }
}

/// The outcome of one verification case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub level: Level,
    /// The file its checks are written in (for `file:line:col`).
    pub file: String,
    pub steps: Vec<Step>,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.steps.iter().all(|s| s.failures.is_empty() && s.error.is_none())
    }
}

impl fmt::Display for CaseResult {
    /// One line per failed check or error: `file:line:col: ...`, each cut at
    /// [`MESSAGE_MAX`] (a hostile answer's value can be megabytes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.steps {
            for fail in &s.failures {
                writeln!(f, "  {}: {}", s.name, cut(&format!("{}:{fail}", self.file), MESSAGE_MAX))?;
            }
            if let Some(e) = &s.error {
                writeln!(f, "  {}: {}", s.name, cut(e, MESSAGE_MAX))?;
            }
        }
        Ok(())
    }
}

/// Every case of a scenario, checked once.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    pub cases: Vec<CaseResult>,
}

impl Verification {
    /// No core case failed.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| c.level != Level::Core || c.passed())
    }
}

/// Where a run's requests go: the target (`None`: the file as written) and the file's
/// routes to it ([`Routes`]).
#[derive(Debug, Clone, Copy)]
pub struct Aimed<'a> {
    pub target: Option<&'a str>,
    pub routes: &'a Routes,
}

impl Aimed<'_> {
    /// Fresh variables for a run: `seed`'s random source, the `defined` ones, and the
    /// variable that stands for the target set to it.
    pub fn vars(&self, seed: u64, defined: &[(&str, &str)]) -> Vars {
        let mut vars = Vars::new(seed);
        for (k, v) in defined {
            let (v, kind) = crate::template::cli_value(v);
            vars.set(k, &v, kind);
        }
        if let (Some(name), Some(t)) = (&self.routes.base_variable, self.target) {
            vars.set(name, t.trim_end_matches('/'), Kind::String);
        }
        vars
    }
}

/// What the `[setup]` step left for the run: its captures and its cookies.
#[derive(Debug, Clone, Default)]
pub struct SetupDone {
    pub values: Vec<(String, Value)>,
    pub jar: crate::cookies::Jar,
}

impl SetupDone {
    /// Gives `vars` the setup's captures.
    pub fn apply(&self, vars: &mut Vars) {
        for (k, v) in &self.values {
            vars.set(k, &v.text, v.kind);
        }
    }
}

/// Runs the scenario's `[setup]` requests once (nothing without one). `Err` says which
/// request failed and why: the run must stop before its load.
pub fn setup<A: Answer>(
    s: &Scenario,
    aim: Aimed<'_>,
    defined: &[(&str, &str)],
    seed: u64,
    send: Send<'_, A>,
) -> Result<SetupDone, String> {
    let Some(hurl) = &s.setup else { return Ok(SetupDone::default()) };
    let mut vars = aim.vars(seed, defined);
    vars.max_capture = s.limits.max_capture;
    s.draw(0, &mut vars);
    let mut wire = Wire { routes: Some(aim.routes), jar: crate::cookies::Jar::default() };
    let why = |name: &str, vars: &Vars| s.why_no_value(name, vars);
    let steps = run_flow_explained(hurl, &[], &mut vars, &mut wire, send, &why);
    if let Some(st) = steps.iter().find(|st| st.error.is_some() || !st.failures.is_empty()) {
        let detail = st.error.clone().unwrap_or_else(|| format!("{}:{}", hurl.file, st.failures[0]));
        return Err(format!("the [setup] step failed at {}: {}", st.name, vars.redact(&detail)));
    }
    let values =
        hurl.captures().filter_map(|c| Some((c.name.to_string(), vars.get(&c.name)?.clone()))).collect();
    Ok(SetupDone { values, jar: wire.jar })
}

/// Runs the scenario's `[[verify]]` cases in order against `aim` (or, when
/// it has none, each flow once as a core case), after its `[setup]` (whose
/// failure is a failed core case, and the last). A case with `clean_store` runs
/// after the reset step; a failed reset fails the case. With `[reset] by =
/// "contestant"` there is no step: `store_emptied` says whether the store was
/// emptied before the first case (by the orchestrator), and only then are the
/// cases' `clean_values` held. What a case captures is kept for the cases
/// after it; each case has a cookie jar of its own, holding the setup's cookies
/// at first. `defined` gives the `--variable` values; `run_command` runs a
/// reset command.
pub fn verify<A: Answer>(
    s: &Scenario,
    aim: Aimed<'_>,
    defined: &[(&str, &str)],
    seed: u64,
    store_emptied: bool,
    send: Send<'_, A>,
    run_command: &mut dyn FnMut(&[String]) -> Result<(), String>,
) -> Verification {
    type Case<'a> = (&'a str, Level, bool, &'a HurlFile, &'a [String], &'a [CleanValue]);
    let cases: Vec<Case<'_>> = if s.verify.is_empty() {
        s.flows
            .iter()
            .map(|f| (f.name.as_str(), Level::Core, false, &f.hurl, f.request_names.as_slice(), &[][..]))
            .collect()
    } else {
        s.verify
            .iter()
            .map(|c| {
                let names = c.request_names.as_slice();
                (c.name.as_str(), c.level, c.clean_store, &c.hurl, names, c.clean_values.as_slice())
            })
            .collect()
    };
    let why = |name: &str, vars: &Vars| s.why_no_value(name, vars);
    let mut carried: Vec<(String, Value)> = Vec::new();
    // Clean values held where the answer said otherwise: (name, clean value, what was read).
    let mut pinned: Vec<(String, String, String)> = Vec::new();
    let mut results = Vec::new();
    let done = match setup(s, aim, defined, seed, send) {
        Ok(done) => done,
        Err(why) => {
            let file = s.setup.as_ref().map(|h| h.file.clone()).unwrap_or_default();
            let steps = vec![Step { name: "setup".into(), failures: Vec::new(), error: Some(why) }];
            results.push(CaseResult { name: "[setup]".into(), level: Level::Core, file, steps });
            return Verification { cases: results };
        }
    };
    for (n, (name, level, clean, hurl, names, clean_values)) in cases.into_iter().enumerate() {
        let mut vars = aim.vars(seed.wrapping_add(n as u64), defined);
        vars.max_capture = s.limits.max_capture;
        done.apply(&mut vars);
        let mut wire = Wire { routes: Some(aim.routes), jar: done.jar.clone() };
        for (k, v) in &carried {
            // What an earlier case captured: an answer's value still.
            let i = vars.index(k);
            vars.set_at(i, &v.text, v.kind);
            vars.mark_untrusted(i);
        }
        s.draw(n as u64, &mut vars);
        let mut steps = Vec::new();
        let mut on_clean = false;
        if clean {
            on_clean = !matches!(s.reset, Some(Reset::Contestant)) || store_emptied;
            let reset = match &s.reset {
                Some(Reset::Command(argv)) => run_command(argv).err(),
                Some(Reset::Hurl(h)) => {
                    let r = run_flow_in(
                        h,
                        &[],
                        &mut vars,
                        &mut Wire { routes: Some(aim.routes), ..Wire::default() },
                        send,
                    );
                    r.iter()
                        .find(|s| s.error.is_some() || !s.failures.is_empty())
                        .map(|s| s.error.clone().unwrap_or_else(|| format!("{}:{}", h.file, s.failures[0])))
                }
                Some(Reset::Contestant) | None => None,
            };
            if let Some(why) = reset {
                steps.push(Step {
                    name: "reset".into(),
                    failures: Vec::new(),
                    error: Some(format!("the reset step failed: {why}")),
                });
                results.push(CaseResult { name: name.to_owned(), level, file: hurl.file.clone(), steps });
                continue;
            }
        }
        steps = run_flow_explained(hurl, names, &mut vars, &mut wire, send, &why);
        explain_pinned(s, &pinned, &mut steps);
        if on_clean {
            steps.extend(hold_clean_values(clean_values, &mut vars, &mut pinned));
        }
        for c in hurl.captures() {
            carried.retain(|(k, _)| *k != *c.name);
            if let Some(v) = vars.get(&c.name) {
                carried.push((c.name.to_string(), v.clone()));
            }
        }
        results.push(CaseResult { name: name.to_owned(), level, file: hurl.file.clone(), steps });
    }
    Verification { cases: results }
}

/// On a store known to be empty: each capture named in `clean_values` must have taken its
/// value (a failed step says otherwise), and takes it for the cases after whatever the
/// answer said, so that one wrong read fails one case rather than every case after it.
fn hold_clean_values(
    clean_values: &[CleanValue],
    vars: &mut Vars,
    pinned: &mut Vec<(String, String, String)>,
) -> Option<Step> {
    let mut wrong = Vec::new();
    for cv in clean_values {
        let got = vars.get(&cv.name).map_or_else(|| "no value".to_owned(), |v| v.text.clone());
        pinned.retain(|(n, _, _)| *n != cv.name);
        if got != cv.text {
            wrong.push(format!(
                "{}:{}: on a store emptied before verification `{}` must be {}, got {got}",
                cv.file, cv.pos, cv.name, cv.text
            ));
            pinned.push((cv.name.clone(), cv.text.clone(), got));
        }
        vars.set(&cv.name, &cv.text, cv.kind);
    }
    (!wrong.is_empty()).then(|| Step {
        name: "clean store".into(),
        failures: Vec::new(),
        error: Some(format!(
            "{}: give the contestant a `reset` command, or make its start command empty the store (cases after this one are judged from the clean value)",
            wrong.join("; ")
        )),
    })
}

/// A failed check of a later case that names a held clean value (or an expression of one)
/// says so: it is judged from the contract's value, not from what the store said.
fn explain_pinned(s: &Scenario, pinned: &[(String, String, String)], steps: &mut [Step]) {
    fn uses(s: &Scenario, var: &str, name: &str) -> bool {
        var == name
            || s.variables.iter().any(|v| {
                v.name == var
                    && matches!(&v.draw, crate::scenario::Draw::Expr(e) if e.names().iter().any(|(m, _)| uses(s, m, name)))
            })
    }
    for step in steps.iter_mut().filter(|st| st.error.is_none()) {
        let named = |f: &Failure| {
            f.source
                .split("{{")
                .skip(1)
                .filter_map(|t| t.split_once("}}"))
                .map(|(v, _)| v.trim().to_owned())
                .collect::<Vec<_>>()
        };
        let why = step.failures.iter().flat_map(named).find_map(|v| {
            pinned.iter().find(|(n, _, _)| uses(s, &v, n)).map(|(n, clean, got)| {
                format!("judged from `{n}` = {clean}, its value on a store emptied before verification; the store said {got}")
            })
        });
        step.error = why;
    }
}

#[cfg(test)]
mod tests;
