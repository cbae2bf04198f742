//! Verification of a scenario file (`crates/hurl`): its `[[verify]]` cases (or
//! each flow once) run against a live server through the [`Prober`] in the
//! file's protocol ([`Sender`]: HTTP/1.1, h2c, or gRPC calls encoded with the
//! file's `.proto` and their replies decoded to JSON for the checks), each
//! failed check kept with its `file:line:col`. `stackbench verify URL
//! --scenario-file F` prints the cases; the orchestrator keeps them in the
//! contestant's record ([`record`]) and leaves it out when a core case fails.
//! Also the readiness of a contestant that serves a scenario file (its
//! `probe = true` case, [`readiness`], or else [`any_answer`]), and its reset
//! step when the reset is requests ([`reset_requests`]).

use std::time::Duration;

use stackbench_hurl::{
    Aim, Aimed, Answer, Entry, MESSAGE_MAX, Protocol, Request, Routes, Scenario, StoreReset, Verification,
    VerifyCase, Wire, cut_message, run_flow_in, run_verification,
};
use stackbench_load::GrpcCalls;
use stackbench_record::{Verification as Record, VerifyFailure};

use crate::client::{Probe, ProbeError, Prober, Reply};

use super::CASE_TIMEOUT;

/// An answer of the prober, as a scenario file's checks see it: with the request's URL, the
/// HTTP version of the protocol it went over and how long it took.
struct Answered {
    reply: Reply,
    url: String,
    version: &'static str,
    took: Duration,
}

impl Answer for Answered {
    fn status(&self) -> u16 {
        self.reply.status
    }
    fn header(&self, name: &str, nth: usize) -> Option<&str> {
        let mut values = self.reply.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
        values.nth(nth).and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
    fn body(&self) -> &[u8] {
        &self.reply.body
    }
    fn version(&self) -> Option<&str> {
        Some(self.version)
    }
    fn url(&self) -> Option<&str> {
        Some(&self.url)
    }
    fn ip(&self) -> Option<std::net::IpAddr> {
        self.reply.peer.map(|p| p.ip())
    }
    fn duration(&self) -> Option<Duration> {
        Some(self.took)
    }
}

/// How a scenario file's requests are sent: by its protocol, a gRPC file's calls with its
/// methods ([`GrpcCalls`]).
pub struct Sender<'p> {
    prober: &'p dyn Prober,
    protocol: Protocol,
    calls: Option<GrpcCalls>,
    /// How long a request may wait for its answer.
    timeout: Duration,
}

impl<'p> Sender<'p> {
    /// Checks that `scenario` can be sent (a gRPC file's `.proto` compiles, every call is one
    /// of its methods); the error says what to fix, at `file:line:col`.
    pub fn new(
        prober: &'p dyn Prober,
        scenario: &Scenario,
        defined: &[(&str, &str)],
    ) -> Result<Sender<'p>, String> {
        Ok(Sender {
            prober,
            protocol: scenario.protocol,
            calls: calls(scenario, defined)?,
            timeout: CASE_TIMEOUT,
        })
    }

    /// Sends a rendered request of the scenario file.
    fn send(&self, e: &Entry, req: &Request) -> Result<Answered, String> {
        self.exchange(e, req).map_err(|u| u.to_string())
    }

    /// Sends a rendered request of the scenario file, telling no answer from a wrong one;
    /// the entry's own TLS and route options, if it has any, for this request alone.
    fn exchange(&self, e: &Entry, req: &Request) -> Result<Answered, Unread> {
        let Some(own) = &req.reach else { return self.exchange_as_reached(e, req) };
        let before = self.prober.reached();
        let mut reach = before.clone();
        reach.route = before
            .route
            .with_first(&own.resolve, &own.connect_to)
            .map_err(|why| Unread::Wrong(format!("{}: {why}", e.pos)))?;
        reach.tls = before.tls.with_reach(own);
        self.prober.reach(reach);
        let answered = self.exchange_as_reached(e, req);
        self.prober.reach(before);
        answered
    }

    /// [`Sender::exchange`], reaching the server as the prober is set to.
    fn exchange_as_reached(&self, e: &Entry, req: &Request) -> Result<Answered, Unread> {
        let wrong = |why: &str| Unread::Wrong(why.to_owned());
        let url = std::str::from_utf8(&req.url).map_err(|_| wrong("the URL is not UTF-8"))?;
        let text = std::str::from_utf8(&req.headers).map_err(|_| wrong("a header is not UTF-8"))?;
        let started = std::time::Instant::now();
        let answered = |reply: Reply, version: &'static str| Answered {
            reply,
            url: url.to_owned(),
            version,
            took: started.elapsed(),
        };
        let reply = match (self.protocol, &self.calls) {
            (Protocol::Http1, _) | (Protocol::Grpc, None) => {
                let headers: Vec<(&str, &str)> = text
                    .split("\r\n")
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k, v.trim()))
                    .collect();
                self.prober.send_http1(&Probe {
                    url,
                    method: req.method.unwrap_or(&e.method),
                    headers: &headers,
                    body: &req.body,
                    timeout: self.timeout,
                })
            }
            (Protocol::H2c, _) => {
                let headers = h2_headers(&req.headers, false);
                let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                let probe = Probe {
                    url,
                    method: req.method.unwrap_or(&e.method),
                    headers: &headers,
                    body: &req.body,
                    timeout: self.timeout,
                };
                self.prober.send_h2(&probe, false)
            }
            (Protocol::Grpc, Some(calls)) => return self.call(calls, e, req, url).map(|r| answered(r, "2")),
        };
        let version = if self.protocol == Protocol::Http1 { "1.1" } else { "2" };
        reply.map(|r| answered(r, version)).map_err(Unread::Unanswered)
    }

    /// A gRPC call: the body encoded as the method's input; a `grpc-status` other than 0 is
    /// the call's failure unless the request's checks read it; the reply decoded to JSON.
    fn call(&self, calls: &GrpcCalls, e: &Entry, req: &Request, url: &str) -> Result<Reply, Unread> {
        let m = calls
            .method_of(e)
            .ok_or_else(|| Unread::Wrong(format!("{}: not a call of the scenario's .proto", e.pos)))?;
        let message =
            calls.encode(m, &req.body).map_err(|why| Unread::Wrong(format!("the message is {why}")))?;
        let mut headers = h2_headers(&req.headers, true);
        headers.push(("content-type".into(), "application/grpc"));
        headers.push(("te".into(), "trailers"));
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let mut reply = self
            .prober
            .send_h2(
                &Probe { url, method: "POST", headers: &headers, body: &message, timeout: self.timeout },
                true,
            )
            .map_err(Unread::Unanswered)?;
        if !GrpcCalls::checks_grpc_status(e) {
            // The load engine's rule too: an answer of status 200 without a
            // grpc-status is malformed, however right its message looks.
            match reply.grpc_status {
                Some(0) => {}
                Some(code) => {
                    let why = reply.header("grpc-message").map(String::from_utf8_lossy).unwrap_or_default();
                    return Err(Unread::Wrong(format!("the call failed with grpc-status {code} {why:?}")));
                }
                None if reply.status == 200 => {
                    return Err(Unread::Wrong("the answer has no grpc-status: not a gRPC answer".to_owned()));
                }
                None => {}
            }
        }
        if reply.grpc_status == Some(0) && GrpcCalls::reads_body(e) {
            let mut json = Vec::new();
            calls.decode_json(m, &reply.body, &mut json).map_err(Unread::Wrong)?;
            reply.body = json;
        }
        Ok(reply)
    }
}

/// Why a request of a scenario file got no answer its checks could read.
enum Unread {
    /// None came (refused, timed out, cut short).
    Unanswered(ProbeError),
    /// One came, wrong in a way no check looks at (a failed gRPC call, a reply that is not
    /// the method's message), or the request could not be sent as written.
    Wrong(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Unanswered(e) => write!(f, "{e}"),
            Unread::Wrong(why) => f.write_str(why),
        }
    }
}

/// A rendered request's header lines as HTTP/2 fields: names in lower case, the forbidden
/// ones left out (the load engine's rule, [`stackbench_load::h2_fields`]).
fn h2_headers(lines: &[u8], grpc: bool) -> Vec<(String, &str)> {
    let mut fields = Vec::new();
    stackbench_load::h2_fields(lines, grpc, |name, value| {
        if let Ok(v) = std::str::from_utf8(value) {
            fields.push((name.to_ascii_lowercase(), v));
        }
    });
    fields
}

/// A gRPC file's calls, compiled from its `.proto`; `None` for the other protocols.
fn calls(scenario: &Scenario, defined: &[(&str, &str)]) -> Result<Option<GrpcCalls>, String> {
    if scenario.protocol != Protocol::Grpc {
        return Ok(None);
    }
    let defined: Vec<(String, String)> =
        defined.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    GrpcCalls::new(scenario, &defined).map(Some)
}

/// Checks that a scenario file can be verified and loaded: a gRPC file's `.proto` compiles
/// and every call is one of its unary methods. The error says what to fix, at `file:line:col`.
pub fn check(scenario: &Scenario, defined: &[(&str, &str)]) -> Result<(), String> {
    calls(scenario, defined).map(drop)
}

/// Where the requests of `scenario` go when they are sent to `target` (a contestant's URL),
/// without `--origin` maps: its base the target, any other origin refused.
pub fn routes(scenario: &Scenario, defined: &[(&str, &str)], target: &str) -> Result<Routes, String> {
    let defined: Vec<(String, String)> =
        defined.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Routes::new(scenario, &defined, Aim { target: Some(target.trim_end_matches('/')), ..Aim::default() })
}

/// Runs the scenario's cases once against `aim`, with `defined` variables.
/// `store_emptied`: the store was emptied before the first
/// case (a `[reset] by = "contestant"` file's `clean_values` are held only then).
/// `run_command` runs a `[reset] command`; `exited` says whether the server has
/// ended (and how), so a request it can no longer answer is reported as that.
pub fn verify(
    prober: &dyn Prober,
    scenario: &Scenario,
    aim: Aimed<'_>,
    defined: &[(&str, &str)],
    store_emptied: bool,
    run_command: &mut dyn FnMut(&[String]) -> Result<(), String>,
    exited: &mut dyn FnMut() -> Option<String>,
) -> Verification {
    let sender = Sender::new(prober, scenario, defined);
    // Once the server has exited, every later request says so without being sent.
    let mut died: Option<String> = None;
    let mut send = |e: &Entry, req: &Request| -> Result<Answered, String> {
        if let Some(how) = &died {
            return Err(format!("{EXITED}{how}"));
        }
        let sender = sender.as_ref().map_err(Clone::clone)?;
        sender.send(e, req).map_err(|why| match exited() {
            Some(how) => {
                let said = format!("{EXITED}{how}");
                died = Some(how);
                said
            }
            None => why,
        })
    };
    run_verification(scenario, aim, defined, 1, store_emptied, &mut send, run_command)
}

/// Runs the `[setup]` step of the scenario file a load sends (nothing when it has none),
/// once, through `prober`: its captures and cookies are what every user starts with. `Err`
/// says which request failed and why; the load must not start.
pub fn setup_load(prober: &dyn Prober, spec: &mut stackbench_load::LoadSpec) -> Result<(), String> {
    let stackbench_load::RequestSource::File(f) = &mut spec.requests else { return Ok(()) };
    if f.scenario.setup.is_none() {
        return Ok(());
    }
    let done = {
        let defined: Vec<(&str, &str)> = f.defined.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let sender = Sender::new(prober, &f.scenario, &defined)?;
        let mut send = |e: &Entry, req: &Request| sender.send(e, req);
        stackbench_hurl::run_setup(&f.scenario, f.aimed(), &defined, f.seed, &mut send)?
    };
    std::sync::Arc::make_mut(f).setup = done;
    Ok(())
}

/// A failed verification of a file that cannot be sent to its target: one core case
/// that says why (an origin the file names that does not go to the target).
pub fn unroutable(scenario: &Scenario, why: String) -> Verification {
    use stackbench_hurl::{CaseResult, StepOutcome};
    let file = stackbench_hurl::request_files(scenario).first().map(|f| f.file.clone()).unwrap_or_default();
    let steps = vec![StepOutcome { name: "origins".into(), failures: Vec::new(), error: Some(why) }];
    Verification {
        cases: vec![CaseResult {
            name: "the file's requests go to the contestant".into(),
            level: stackbench_hurl::VerifyLevel::Core,
            file,
            steps,
        }],
    }
}

/// What a request the server could not answer because it had exited fails with.
const EXITED: &str = "the server exited with ";

/// The verification as a contestant's record keeps it: a failure per failed
/// request of a case, its rule the case's name, its detail each failed check
/// at `file:line:col`, and what it shows the server does not enforce (the
/// case's `enforces`). A server that exited is one failure, at the case it
/// died at, rather than every case after it.
pub fn record(scenario: &Scenario, v: &Verification) -> Record {
    let mut failures = Vec::new();
    for (i, case) in v.cases.iter().enumerate().filter(|(_, c)| !c.passed()) {
        // The error follows the request's `file:line:col: `.
        let exit = case.steps.iter().find_map(|s| Some(s.error.as_deref()?.split_once(EXITED)?.1));
        if let Some(how) = exit {
            failures.push(VerifyFailure {
                rule: "the contestant keeps running while it is verified".to_owned(),
                detail: format!("it exited with {how} after case {} (\"{}\")", i + 1, case.name),
                level: "core".to_owned(),
                enforces: String::new(),
            });
            return Record { passed: false, cases: v.cases.len() as u32, failures };
        }
        // The cases are the scenario's `[[verify]]` cases in order (or its flows, without any).
        let enforces = scenario.verify.get(i).map_or("", |c| c.enforces.as_str());
        let level = super::level_name(case.level);
        for step in case.steps.iter().filter(|s| s.error.is_some() || !s.failures.is_empty()) {
            let checks = step.failures.iter().map(|f| format!("{}:{f}", case.file));
            // Each cut, as `verify` prints it: a hostile answer's value can be megabytes.
            let detail: Vec<String> =
                checks.chain(step.error.clone()).map(|d| cut_message(&d, MESSAGE_MAX).into_owned()).collect();
            failures.push(VerifyFailure {
                rule: case.name.clone(),
                detail: format!("{}: {}", step.name, detail.join("; ")),
                level: level.to_owned(),
                enforces: enforces.to_owned(),
            });
        }
    }
    Record { passed: v.passed(), cases: v.cases.len() as u32, failures }
}

/// Readiness of a server that serves a scenario file: any HTTP answer to
/// `GET url`, in the file's protocol (HTTP/1.1, or HTTP/2 prior knowledge for
/// h2c and gRPC: a gRPC server answers a GET too, if only with an error). A
/// scenario file has no side-effect-free request stackbench could call
/// verified; its checks run in verification.
pub fn any_answer(
    prober: &dyn Prober,
    protocol: Protocol,
    url: &str,
    timeout: Duration,
) -> Result<(), ProbeError> {
    match protocol {
        Protocol::Http1 => prober.send_http1(&Probe::get(url, timeout)).map(drop),
        Protocol::H2c | Protocol::Grpc => prober.send_h2(&Probe::get(url, timeout), false).map(drop),
    }
}

/// The readiness probe of a scenario file whose `[[verify]]` case says `probe = true`,
/// made once per wait: a gRPC file's `.proto` is compiled and its messages checked here,
/// not at every probe, which a cold start repeats every 50 µs at first. `None`: the file
/// has no probe case (then any answer is readiness, [`any_answer`]).
pub fn readiness<'a>(
    prober: &'a dyn Prober,
    scenario: &'a Scenario,
    defined: &'a [(&'a str, &'a str)],
) -> Option<Readiness<'a>> {
    let case = scenario.verify.iter().find(|c| c.probe)?;
    Some(Readiness { scenario, case, defined, sender: Sender::new(prober, scenario, defined), routes: None })
}

/// A scenario file's readiness probe, ready to send ([`readiness`]).
pub struct Readiness<'a> {
    scenario: &'a Scenario,
    case: &'a VerifyCase,
    defined: &'a [(&'a str, &'a str)],
    /// Why the file cannot be sent, if it cannot (every probe says so).
    sender: Result<Sender<'a>, String>,
    /// The file's routes to the last `base_url` probed, worked out once.
    routes: Option<(String, Result<Routes, String>)>,
}

impl Readiness<'_> {
    /// One probe: the case's request sent to `base_url`, waiting at most `wait`.
    /// `Ok(Ok(()))` when every check holds, `Ok(Err(why))` for a wrong answer, `Err` for none.
    pub fn probe(&mut self, base_url: &str, wait: Duration) -> Result<Result<(), String>, ProbeError> {
        let (case, scenario) = (self.case, self.scenario);
        let sender = match &mut self.sender {
            Ok(s) => s,
            Err(why) => return Ok(Err(why.clone())),
        };
        sender.timeout = wait;
        if self.routes.as_ref().is_none_or(|(b, _)| b != base_url) {
            self.routes = Some((base_url.to_owned(), routes(scenario, self.defined, base_url)));
        }
        let routes = match self.routes.as_ref().map(|(_, r)| r) {
            Some(Ok(r)) => r,
            Some(Err(why)) => return Ok(Err(why.clone())),
            None => unreachable!("set above"),
        };
        let aim = Aimed { target: Some(base_url.trim_end_matches('/')), routes };
        let mut vars = aim.vars(1, self.defined);
        vars.max_capture = scenario.limits.max_capture;
        scenario.draw(0, &mut vars);
        let mut unanswered = None;
        let mut wire = Wire { routes: Some(routes), ..Wire::default() };
        let steps = run_flow_in(
            &case.hurl,
            &case.request_names,
            &mut vars,
            &mut wire,
            &mut |e: &Entry, req: &Request| {
                sender.exchange(e, req).map_err(|u| match u {
                    Unread::Unanswered(no) => {
                        let why = no.to_string();
                        unanswered = Some(no);
                        why
                    }
                    wrong @ Unread::Wrong(_) => wrong.to_string(),
                })
            },
        );
        if let Some(no) = unanswered {
            return Err(no);
        }
        Ok(match steps.iter().find(|s| s.error.is_some() || !s.failures.is_empty()) {
            None => Ok(()),
            Some(s) => {
                let why = s.error.clone().unwrap_or_else(|| format!("{}:{}", case.hurl.file, s.failures[0]));
                Err(format!("{}: {}", case.name, cut_message(&why, MESSAGE_MAX)))
            }
        })
    }
}

/// Sends the scenario's `[reset]` requests to `base_url`; the first failed
/// check or unanswered request is the error.
pub fn reset_requests(
    prober: &dyn Prober,
    scenario: &Scenario,
    base_url: &str,
    defined: &[(&str, &str)],
) -> Result<(), String> {
    let Some(StoreReset::Hurl(hurl)) = &scenario.reset else { return Ok(()) };
    let routes = routes(scenario, defined, base_url)?;
    let aim = Aimed { target: Some(base_url.trim_end_matches('/')), routes: &routes };
    let mut vars = aim.vars(1, defined);
    vars.max_capture = scenario.limits.max_capture;
    scenario.draw(0, &mut vars);
    let sender = Sender::new(prober, scenario, defined)?;
    let mut wire = Wire { routes: Some(&routes), ..Wire::default() };
    let steps =
        run_flow_in(hurl, &[], &mut vars, &mut wire, &mut |e: &Entry, req: &Request| sender.send(e, req));
    match steps.iter().find(|s| s.error.is_some() || !s.failures.is_empty()) {
        Some(s) => {
            let why = s.error.clone().unwrap_or_else(|| format!("{}:{}", hurl.file, s.failures[0]));
            Err(cut_message(&why, MESSAGE_MAX).into_owned())
        }
        None => Ok(()),
    }
}
